use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E5M2};

// C stays 16 or 32 bits whatever A and B are: an 8-bit C of bf16 operands is refused as one of
// 8-bit operands is (it had reached the generator, which panicked reading it for beta).
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    epilogue = direct(alpha, beta),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<F8E5M2, RowMajor>);

fn main() {}
