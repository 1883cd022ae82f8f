use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// An activation by another library's name (swish) gets ours as the hint (silu).
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    epilogue = vector(activation = swish),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
