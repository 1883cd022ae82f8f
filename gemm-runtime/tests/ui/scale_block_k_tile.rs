use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// Under block scales a stage is one 128-wide K block.
#[gemm_kernel(
    block(m = 128, n = 128, k = 256, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32),
    staging = tma(stages = 3),
    specialize(consumers = 2, consumer_regs = 240),
    swizzle = b128,
    epilogue = tma(scale = block),
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
