use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// Five stages of 256 x 64 tiles overflow sm_80's shared memory: the error is at `stages`.
#[gemm_kernel(
    block(m = 256, n = 128, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 5, vector = 8),
    swizzle = xor,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
