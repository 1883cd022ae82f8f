use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Every thread's arrivals are kept for consumers that share each tile:
// ping-pong consumers release their own stages in turn.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 384),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, pingpong, arrivals = thread),
    swizzle = b128,
    persistent = tiles,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
