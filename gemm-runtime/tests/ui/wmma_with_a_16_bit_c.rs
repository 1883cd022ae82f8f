use gemm_runtime::{gemm_kernel, bf16, f16, ColMajor, Mat, MatMut, RowMajor};

// wmma.store writes the f32 accumulators as they are.
#[gemm_kernel(
    block(m = 64, n = 64, threads = 128),
    warp(m = 32, n = 32),
    atom = wmma(m16n16k16),
    staging = direct,
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, ColMajor>, c: MatMut<f16, RowMajor>);

fn main() {}
