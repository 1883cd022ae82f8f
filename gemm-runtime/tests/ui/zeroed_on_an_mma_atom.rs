use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// `zeroed` is wgmma's: mma.sync always adds to its accumulators.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 256),
    warp(m = 64, n = 32),
    atom = mma(m16n8k16, zeroed),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
