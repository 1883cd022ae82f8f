use gemm_runtime::{bf16, f16, gemm_kernel, Mat, MatMut, RowMajor};

// A and B share one element type for a tensor-core atom.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
