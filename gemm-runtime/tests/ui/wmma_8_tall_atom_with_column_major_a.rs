use gemm_runtime::{gemm_kernel, f16, ColMajor, Mat, MatMut, RowMajor};

// wmma.load needs 32-byte aligned fragments: 8 rows of a column-major A are 16 bytes.
#[gemm_kernel(
    block(m = 64, n = 64, threads = 128),
    warp(m = 32, n = 32),
    atom = wmma(m8n32k16),
    staging = direct,
)]
fn kernel(a: Mat<f16, ColMajor>, b: Mat<f16, ColMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
