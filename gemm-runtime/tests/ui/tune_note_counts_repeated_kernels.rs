// A block tile naming the warp tile its count would give makes the same kernel twice: the note
// says it is timed once (denied here to show its text).
#![deny(deprecated)]

use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(block = [block(m = 128, n = 128), block(m = 128, n = 128, warp(m = 64, n = 64)), block(m = 64, n = 128)]),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
