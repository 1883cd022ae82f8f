use gemm_runtime::{f16, gemm_kernel, Mat, MatMut, RowMajor};

// wmma for f16 is 16x16x16, 32x8x16 or 8x32x16.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = wmma(m16n16k8),
    staging = cp_async(stages = 3, vector = 8),
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
