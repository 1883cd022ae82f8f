use gemm_runtime::{gemm_kernel, f16, Mat, MatMut, RowMajor};

// Fragments a K step ahead are generated for mma's ldmatrix loads only.
#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = wmma(m16n16k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
