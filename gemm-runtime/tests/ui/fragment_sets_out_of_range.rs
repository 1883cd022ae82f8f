use gemm_runtime::{gemm_kernel, bf16, Mat, MatMut, RowMajor};

// Registers hold one set of fragments or two.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 256),
    warp(m = 64, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 3),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

// A second set of 64x80 warps' fragments does not fit beside their accumulators.
#[gemm_kernel(
    block(m = 128, n = 160, k = 32, threads = 128),
    warp(m = 64, n = 80),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
)]
fn wide(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
