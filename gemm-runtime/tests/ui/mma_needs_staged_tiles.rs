use gemm_runtime::{gemm_kernel, bf16, f16, ColMajor, Mat, MatMut, RowMajor};

// mma's fragments come from shared memory through ldmatrix.
#[gemm_kernel(
    block(m = 64, n = 64, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = direct,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
