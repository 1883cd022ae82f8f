use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// The warp tile tiles the block exactly.
#[gemm_kernel(
    block(m = 100, n = 128, k = 8, threads = 256),
    thread(m = 8, n = 4),
    atom = fma,
    staging = smem(vector = 1),
    warp(m = 64, n = 32, n_iters = 2),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
