use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// Block scales promote whole tiles a consumer, not the overlap's halves.
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n64k32),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    persistent = tiles,
    epilogue = tma(scale = block),
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
