use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// 128 x (24 + 4 x 120) = 64512 registers fit an SM's 65536, but 640 threads
// are launched with 96 each (61440): the consumers' setmaxnreg would wait
// forever for registers no warpgroup can give back (this spec hung on an H100).
#[gemm_kernel(
    block(m = 256, n = 128, k = 64, threads = 640),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 4, producer_regs = 24, consumer_regs = 120),
    swizzle = b128,
    persistent = tiles,
    epilogue = smem,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
