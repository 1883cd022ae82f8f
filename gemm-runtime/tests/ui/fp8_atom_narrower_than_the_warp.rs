use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// On 8-bit floats the atom that tiles the warp keeps K = 32: one error, whose fix works.
#[gemm_kernel(
    block(m = 128, n = 256, k = 128, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n192k32),
    staging = tma(stages = 3),
    specialize(consumers = 2),
    swizzle = b128,
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
