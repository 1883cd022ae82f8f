use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Resident blocks share the SM's shared memory.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128, min_blocks = 3),
    thread(m = 8, n = 16),
    atom = fma,
    staging = smem(vector = 4, buffers = 2),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
