use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Every thread's arrivals (the CUDA barrier API's form, the ladder's early
// steps) stay within a block: a cluster's blocks arrive on each other's.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 40, consumer_regs = 232, arrivals = thread),
    swizzle = b128,
    persistent = tiles,
    cluster(m = 2, n = 1, multicast = b),
    epilogue = tma,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
