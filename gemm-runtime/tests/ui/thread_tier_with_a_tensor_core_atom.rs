use gemm_runtime::{f16, gemm_kernel, Mat, MatMut, RowMajor};

// Tensor-core atoms own their fragments: no thread tier.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    thread(m = 8, n = 8),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
