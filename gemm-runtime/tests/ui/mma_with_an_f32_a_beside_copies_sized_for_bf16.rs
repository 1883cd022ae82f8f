use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// An f32 A under mma is one error, at A: the 16-byte copies of 8 elements,
// too wide for f32, are what bf16 (the type the atom takes) needs.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
