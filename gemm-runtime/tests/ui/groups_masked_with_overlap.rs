use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Overlapped consumers start the next tile's K steps early, before knowing
// whether a masked batch skips it.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    persistent = tiles,
    epilogue = vector,
    edges = guarded,
    groups = masked,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
