use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// On mma.sync, the tail split's producer streams cp.async copies from one tile into the next.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = smem(buffers = 2, vector = 8),
    swizzle = xor,
    persistent = tail_split,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
