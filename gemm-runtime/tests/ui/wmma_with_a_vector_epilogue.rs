use gemm_runtime::{gemm_kernel, f16, ColMajor, Mat, MatMut, RowMajor};

// wmma.store writes whole fragments: there is no other epilogue to choose.
#[gemm_kernel(
    block(m = 64, n = 64, threads = 128),
    warp(m = 32, n = 32),
    atom = wmma(m16n16k16),
    staging = direct,
    epilogue = vector,
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, ColMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
