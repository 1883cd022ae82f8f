use gemm_runtime::{gemm_kernel, bf16, f16, ColMajor, Mat, MatMut, RowMajor};

// wmma.load reads strided rows; it cannot follow permuted chunks.
#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = wmma(m16n16k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
