use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// block.m = 128 needs 128 threads, not 256, and 4 or 6 stages of 256 x 64 tiles overflow
// shared memory: the note says which rule pruned which points and which values no legal point takes.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(block.m = [128, 256], stages = [2, 4, 6]),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() { let _ = kernel; compile_error!("the warnings above"); }
