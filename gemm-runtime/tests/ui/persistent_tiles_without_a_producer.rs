use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Legal, but the persistent walk is generated for a producer and its consumers only.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 2),
    swizzle = b128,
    persistent = tiles,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
