use gemm_runtime::{gemm_kernel, bf16, f16, ColMajor, Mat, MatMut, RowMajor};

// B's lines are 48 elements: 6 chunks, which no XOR pattern permutes within a line.
#[gemm_kernel(
    block(m = 128, n = 48, k = 32, threads = 128),
    warp(m = 64, n = 24),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 4),
    swizzle = xor,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
