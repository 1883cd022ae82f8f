use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// Every block tile listed outgrows shared memory at four stages.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 4, vector = 8),
    swizzle = xor,
    tune(block.m = [256, 512], block.n = [256]),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
