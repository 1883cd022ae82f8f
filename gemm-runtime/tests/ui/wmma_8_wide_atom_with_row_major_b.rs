use gemm_runtime::{gemm_kernel, bf16, f16, ColMajor, Mat, MatMut, RowMajor};

// wmma.load needs 32-byte aligned fragments: 8 columns of a row-major B are 16 bytes.
#[gemm_kernel(
    block(m = 64, n = 64, threads = 128),
    warp(m = 32, n = 32),
    atom = wmma(m32n8k16),
    staging = direct,
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
