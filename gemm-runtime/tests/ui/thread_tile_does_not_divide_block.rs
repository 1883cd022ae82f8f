use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// The thread tile tiles the block exactly.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 352),
    thread(m = 3, n = 1),
    atom = fma,
    staging = direct,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
