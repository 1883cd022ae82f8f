use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// Multicast is a TMA feature.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    cluster(m = 2, n = 1, multicast = b),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
