use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A prefetch fetches the start of the one tile a block begins with: a persistent block walks many.
#[gemm_kernel(
    block(m = 128, n = 16, k = 64, threads = 384),
    warp(m = 64, n = 16),
    atom = wgmma(m64n16k16),
    staging = tma(stages = 4, prefetch = 2),
    specialize(producers = 1, consumers = 2),
    swizzle = b128,
    persistent,
    edges = guarded,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, ColMajor>);

fn main() {}
