use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Ping-pong consumers take every other tile of a walk they work out alike; the queue's tiles are handed out one at a time.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 384),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, pingpong),
    swizzle = b128,
    persistent = queue,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
