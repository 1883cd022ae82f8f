use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// All errors at once, each at its argument.
#[gemm_kernel(
    block(m = 30, n = 32, threads = 1000),
    thread(m = 4, n = 1, lanes = k),
    atom = fma,
    staging = smem(vector = 3),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
