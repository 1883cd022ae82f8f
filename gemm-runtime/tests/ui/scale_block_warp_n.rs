use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// A warpgroup's columns lie in one 128-column block of B's scales.
#[gemm_kernel(
    block(m = 64, n = 192, k = 128, threads = 384),
    warp(m = 64, n = 96),
    atom = wgmma(m64n96k32),
    staging = tma(stages = 4),
    specialize(consumers = 2, consumer_regs = 240),
    swizzle = b128,
    epilogue = tma(scale = block),
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
