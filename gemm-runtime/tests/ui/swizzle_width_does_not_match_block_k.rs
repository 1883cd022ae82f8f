use gemm_runtime::{gemm_kernel, bf16, Mat, MatMut, RowMajor};

// A 128B swizzle needs BK x 2 bytes = 128: BK = 64 for bf16.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 256),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    swizzle = b128,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
