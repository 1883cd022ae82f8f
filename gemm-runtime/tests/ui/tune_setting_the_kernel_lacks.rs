use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// Lists for settings this kernel does not have: every point would be the same kernel.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(stages = [3, 4], prefetch = [0, 2], consumers = [1, 2]),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
