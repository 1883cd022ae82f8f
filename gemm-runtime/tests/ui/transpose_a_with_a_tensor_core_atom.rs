use gemm_runtime::{gemm_kernel, bf16, f16, ColMajor, Mat, MatMut, RowMajor};

// Tensor-core atoms keep each operand's layout; ldmatrix transposes.
#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, transpose_a),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
