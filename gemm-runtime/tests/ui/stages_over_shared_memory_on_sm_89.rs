use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// Three stages of 128 x 256 x 64 tiles (144 KB) fit an A100 but not the 99 KB a block gets on sm_89: two do.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
    swizzle = xor,
    epilogue = smem,
    edges = guarded,
    arch = sm_89,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
