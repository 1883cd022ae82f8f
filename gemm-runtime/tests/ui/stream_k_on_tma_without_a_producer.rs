use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Stream-K on TMA stages is generated with a producer warpgroup feeding them.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 256),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    swizzle = b128,
    persistent = stream_k,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
