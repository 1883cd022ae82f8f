use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// The hybrid schedule's shared tiles are stream-K's, which runs without clusters.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2),
    swizzle = b128,
    cluster(m = 2, n = 1, multicast = b),
    persistent = hybrid,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
