use gemm_runtime::{gemm_kernel, bf16, Mat, MatMut, RowMajor};

// Blocks side by side along n share A, not B.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 256),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    swizzle = b128,
    cluster(m = 1, n = 2, multicast = b),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
