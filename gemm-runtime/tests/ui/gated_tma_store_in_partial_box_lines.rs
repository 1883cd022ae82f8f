use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A gated C holds a column for each pair of the product's: a TMA store's 128-byte lines (64 bf16)
// take a block n of 128 or a multiple of it.
#[gemm_kernel(
    block(m = 128, n = 64, k = 64, threads = 128),
    warp(m = 128, n = 64),
    atom = wgmma(m64n64k16),
    staging = tma(stages = 2),
    swizzle = b128,
    epilogue = tma(activation = silu, gated),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
