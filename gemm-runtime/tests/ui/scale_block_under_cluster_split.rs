use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// Block scales are generated for whole tiles a block, not a cluster's split of K.
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32),
    staging = tma(stages = 2),
    specialize(consumers = 2, consumer_regs = 240),
    swizzle = b128,
    cluster(m = 1, n = 1, k = 2),
    epilogue = smem(scale = block),
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
