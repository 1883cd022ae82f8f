use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Ping-pong takes turns between consumers: one has no one to take turns with.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 256),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 1, producer_regs = 24, consumer_regs = 240, pingpong),
    swizzle = b128,
    persistent = tiles,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
