use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// evict_first hints the loads of an operand one block reads alone; a multicast one feeds the cluster.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4, evict_first = b),
    specialize(producers = 1, consumers = 2, producer_regs = 40, consumer_regs = 232),
    swizzle = b128,
    cluster(m = 2, n = 1, multicast = b),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
