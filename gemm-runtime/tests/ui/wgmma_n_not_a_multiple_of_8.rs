use gemm_runtime::{gemm_kernel, bf16, Mat, MatMut, RowMajor};

// wgmma N is a multiple of 8 in 8..=256.
#[gemm_kernel(
    block(m = 64, n = 250, k = 64, threads = 128),
    warp(m = 64, n = 250),
    atom = wgmma(m64n250k16),
    staging = tma(stages = 4),
    swizzle = b128,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
