use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Block scales multiply each 128-wide K block's tensor-core sums of 8-bit operands.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(consumers = 2),
    swizzle = b128,
    epilogue = tma(scale = block),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
