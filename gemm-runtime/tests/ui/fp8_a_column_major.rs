use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// An 8-bit A is read K-major: wgmma does not transpose 8-bit operands.
#[gemm_kernel(
    block(m = 128, n = 256, k = 128, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k32),
    staging = tma(stages = 4),
    specialize(consumers = 2),
    swizzle = b128,
)]
fn kernel(a: Mat<F8E4M3, ColMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
