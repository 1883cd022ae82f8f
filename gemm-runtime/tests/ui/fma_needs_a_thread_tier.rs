use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// SIMT kernels say how many accumulators each thread owns.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    atom = fma,
    staging = direct,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
