use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// A thread's accumulators must fit its registers.
#[gemm_kernel(
    block(m = 256, n = 256, k = 8, threads = 256),
    thread(m = 16, n = 16),
    atom = fma,
    staging = smem(vector = 1),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
