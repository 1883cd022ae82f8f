// The note a space with refused points leaves is a warning (deprecation,
// the one a stable proc macro can raise); denied here to show its text.
#![deny(deprecated)]

use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(block.n = [128, 256], stages = [3, 5]),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
