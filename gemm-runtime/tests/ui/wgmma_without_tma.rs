use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Legal, but the generator feeds wgmma from TMA stages only.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = cp_async(stages = 3, vector = 8),
    arch = sm_90a,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
