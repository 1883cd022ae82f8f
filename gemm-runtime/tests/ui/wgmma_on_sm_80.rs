use gemm_runtime::{gemm_kernel, bf16, Mat, MatMut, RowMajor};

// wgmma is Hopper's (sm_90a).
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    swizzle = b128,
    arch = sm_80,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
