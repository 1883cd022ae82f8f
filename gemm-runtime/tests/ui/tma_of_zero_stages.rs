use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A TMA ring of no stages stages nothing.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 0),
    swizzle = b128,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
