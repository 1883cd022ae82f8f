use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Three consumers of 64x256 and a producer: 512 threads, compiled for one
// block per SM, leave 128 registers a thread, under the 128 accumulators
// of a 64x256 wgmma tile and what its addresses need (setmaxnreg moves
// registers only at run time).
#[gemm_kernel(
    block(m = 192, n = 256, k = 64, threads = 512),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 3, producer_regs = 24, consumer_regs = 160),
    swizzle = b128,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
