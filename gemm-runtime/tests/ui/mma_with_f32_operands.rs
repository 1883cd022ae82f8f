use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Tensor-core atoms multiply f16/bf16.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 4),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
