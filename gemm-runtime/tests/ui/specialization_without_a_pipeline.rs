use gemm_runtime::{f16, gemm_kernel, Mat, MatMut, RowMajor};

// Producers need an asynchronous pipeline to feed.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = smem(vector = 8),
    specialize(consumers = 4),
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
