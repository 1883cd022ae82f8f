use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Misspelt arguments are named.
#[gemm_kernel(
    blok(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1),
    atom = fma,
    staging = direct,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
