use gemm_runtime::{gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3, F8E5M2};

// C holds the f32 accumulators rounded to a 16- or 32-bit type: not to 8 bits.
#[gemm_kernel(
    block(m = 128, n = 256, k = 128, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k32),
    staging = tma(stages = 4),
    specialize(consumers = 2),
    swizzle = b128,
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<F8E5M2, RowMajor>);

fn main() {}
