use gemm_runtime::{gemm_kernel, f16, Mat, MatMut, RowMajor};

// Legal, but the generator emits the stream-K schedule for tensor-core atoms only over cp.async.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = smem(vector = 8, buffers = 2),
    persistent = stream_k,
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
