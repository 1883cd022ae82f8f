use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// An element type the generator has no arithmetic for: the error is at the type.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
)]
fn kernel(a: Mat<f64, RowMajor>, b: Mat<f64, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
