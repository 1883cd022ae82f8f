use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// A cluster that splits K is built on the Hopper path: TMA stages read by wgmma.
#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    cluster(m = 1, n = 1, k = 2),
    edges = guarded,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
