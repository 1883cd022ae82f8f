use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// Schedules are listed by name: a misspelt one, and a number.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(schedule = [persistant, 2]),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
