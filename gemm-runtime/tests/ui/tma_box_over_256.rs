use gemm_runtime::{gemm_kernel, bf16, Mat, MatMut, RowMajor};

// A TMA box side is at most 256 elements.
#[gemm_kernel(
    block(m = 512, n = 128, k = 64, threads = 1024),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 2),
    swizzle = b128,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
