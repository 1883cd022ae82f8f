use gemm_runtime::{f16, gemm_kernel, Mat, MatMut, RowMajor};

// The warp tile holds whole atoms.
#[gemm_kernel(
    block(m = 128, n = 120, k = 32, threads = 128),
    warp(m = 64, n = 60),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
