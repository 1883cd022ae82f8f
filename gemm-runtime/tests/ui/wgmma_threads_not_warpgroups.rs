use gemm_runtime::{gemm_kernel, bf16, Mat, MatMut, RowMajor};

// wgmma is issued by warpgroups of 128 threads.
#[gemm_kernel(
    block(m = 64, n = 64, k = 64, threads = 96),
    warp(m = 64, n = 64),
    atom = wgmma(m64n64k16),
    staging = tma(stages = 4),
    swizzle = b128,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
