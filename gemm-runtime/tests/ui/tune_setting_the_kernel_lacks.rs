use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// Lists for settings a kernel does not have (TMA's prefetch, specialized consumers, a warp tier):
// every point would be the same kernel.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(stages = [3, 4], prefetch = [0, 2], consumers = [1, 2]),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1, lanes = m),
    atom = fma,
    staging = direct,
    tune(block.m = [32, 64], warp.n = [32, 64]),
)]
fn simt(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
