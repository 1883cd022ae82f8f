use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// The producer's setmaxnreg.dec may not give back to more registers than the
// consumers run with: ptxas stops at it (C7406), so no kernel could be built.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 256),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 1, producer_regs = 248, consumer_regs = 240),
    swizzle = b128,
    epilogue = smem,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
