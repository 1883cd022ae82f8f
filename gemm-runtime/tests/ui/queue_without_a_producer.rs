use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A queue's tiles are taken by the producer thread and handed to the consumers.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    swizzle = b128,
    persistent = queue,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
