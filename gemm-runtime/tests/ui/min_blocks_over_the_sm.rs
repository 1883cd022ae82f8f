use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// An SM holds at most 2048 threads.
#[gemm_kernel(
    block(m = 128, n = 128, k = 8, threads = 256, min_blocks = 9),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
