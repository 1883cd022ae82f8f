use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// A TMA box's inner side is a multiple of 16 bytes.
#[gemm_kernel(
    block(m = 128, n = 128, k = 4, threads = 256),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    swizzle = none,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
