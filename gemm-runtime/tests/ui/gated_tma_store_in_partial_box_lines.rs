use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A gated C holds a column for each pair of the product's, and a TMA store's box lines are whole
// 16-byte chunks: 8 columns of the product make C lines of 4 bf16, 8 bytes.
#[gemm_kernel(
    block(m = 128, n = 8, k = 64, threads = 128),
    warp(m = 128, n = 8),
    atom = wgmma(m64n8k16),
    staging = tma(stages = 2),
    swizzle = b128,
    epilogue = tma(activation = silu, gated),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
