use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Vector loads run along A's rows (k): BK must be a multiple of the width.
#[gemm_kernel(
    block(m = 64, n = 64, k = 2, threads = 64),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
