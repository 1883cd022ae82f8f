use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Every thread's arrivals are kept for whole tiles: stream-K's fix-up
// takes the elected arrivals alone.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, arrivals = thread),
    swizzle = b128,
    persistent = stream_k,
    epilogue = tma,
    edges = guarded,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
