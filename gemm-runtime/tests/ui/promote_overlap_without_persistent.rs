use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// A promoted consumer's overlap issues the next tile's first stage early:
// a block of one tile has none.
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32, promote),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    epilogue = tma(scale = tensor),
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
