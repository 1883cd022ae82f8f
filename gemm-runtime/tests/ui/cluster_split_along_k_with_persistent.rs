use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A cluster that splits each tile's K takes one tile a cluster: no persistent walk.
#[gemm_kernel(
    block(m = 64, n = 8, k = 256, threads = 256),
    warp(m = 64, n = 8),
    atom = wgmma(m64n8k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 1),
    swizzle = b128,
    persistent,
    cluster(m = 1, n = 1, k = 2),
    edges = guarded,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, ColMajor>);

fn main() {}
