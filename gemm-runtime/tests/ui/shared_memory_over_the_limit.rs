use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Staged tiles must fit the arch's shared memory per block.
#[gemm_kernel(
    block(m = 256, n = 256, k = 128, threads = 1024),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
