use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A TMA store takes the C tile in boxes of 128-byte lines: 64 bf16 along a row-major C.
#[gemm_kernel(
    block(m = 128, n = 96, k = 64, threads = 128),
    warp(m = 128, n = 96),
    atom = wgmma(m64n96k16),
    staging = tma(stages = 2),
    swizzle = b128,
    epilogue = tma,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
