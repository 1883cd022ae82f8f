use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Each argument once.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1),
    atom = fma,
    staging = direct,
    atom = fma,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
