use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// Scales are per tensor today (`scale = tensor`): per channel and by block are not generated.
#[gemm_kernel(
    block(m = 128, n = 256, k = 128, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k32),
    staging = tma(stages = 4),
    specialize(consumers = 2),
    swizzle = b128,
    epilogue = tma(scale = channel),
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
