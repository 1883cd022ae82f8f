use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// 32 lanes x thread tile x iterations must cover the warp tile.
#[gemm_kernel(
    block(m = 128, n = 128, k = 8, threads = 128),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 1),
    warp(m = 64, n = 64),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
