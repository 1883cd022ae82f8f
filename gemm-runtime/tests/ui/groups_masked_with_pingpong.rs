use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Ping-pong consumers take tiles in turns, which a masked batch skips.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 384),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(consumers = 2, consumer_regs = 240, pingpong),
    swizzle = b128,
    persistent = tiles,
    epilogue = vector,
    edges = guarded,
    groups = masked,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
