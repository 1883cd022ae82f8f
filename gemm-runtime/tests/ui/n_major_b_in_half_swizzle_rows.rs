use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// A row-major B is N-major: wgmma takes it in 64-column chunks under the 128-byte swizzle.
#[gemm_kernel(
    block(m = 64, n = 64, k = 64, threads = 256),
    warp(m = 64, n = 32),
    atom = wgmma(m64n32k16),
    staging = tma(stages = 2),
    swizzle = b128,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
