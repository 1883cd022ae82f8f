use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A tile that a cluster multicasts loads as one swizzle row of K: block k = 128
// (two rows of the 128-byte swizzle) is for tiles each block loads alone.
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 2),
    specialize(producers = 1, consumers = 2, producer_regs = 40, consumer_regs = 232),
    swizzle = b128,
    persistent = tiles,
    cluster(m = 2, n = 1, multicast = b),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
