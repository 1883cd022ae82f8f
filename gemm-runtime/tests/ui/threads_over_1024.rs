use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// A block holds at most 1024 threads.
#[gemm_kernel(
    block(m = 64, n = 64, threads = 2048),
    thread(m = 1, n = 2),
    atom = fma,
    staging = direct,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
