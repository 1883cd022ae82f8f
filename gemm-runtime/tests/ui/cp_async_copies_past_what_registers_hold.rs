use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// A thread holds each copy's offset and address across the K loop: at most 64 copies a stage.
#[gemm_kernel(
    block(m = 64, n = 128, k = 64, threads = 64),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 2, fragments = 2),
    swizzle = xor,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
