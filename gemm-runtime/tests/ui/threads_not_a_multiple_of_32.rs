use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Threads come in whole warps.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 100),
    thread(m = 1, n = 1),
    atom = fma,
    staging = direct,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
