use gemm_runtime::{gemm_kernel, bf16, Mat, MatMut, RowMajor};

// setmaxnreg takes 24..=256 in steps of 8, within the SM's 64K registers.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    swizzle = b128,
    specialize(consumers = 2, producer_regs = 40, consumer_regs = 300),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
