use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// Block scales come in with each stage, by TMA.
#[gemm_kernel(
    block(m = 64, n = 128, k = 128, threads = 128),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32),
    staging = cp_async(stages = 3, vector = 16),
    swizzle = b128,
    epilogue = vector(scale = block),
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
