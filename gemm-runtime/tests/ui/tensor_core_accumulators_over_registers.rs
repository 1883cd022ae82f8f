use gemm_runtime::{gemm_kernel, bf16, f16, ColMajor, Mat, MatMut, RowMajor};

// A 128x128 warp tile holds 512 f32 accumulators a lane.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 32),
    warp(m = 128, n = 128),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
