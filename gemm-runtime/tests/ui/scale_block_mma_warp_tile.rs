use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// Block scales on mma.sync sum each K block apart: a thread holds its
// accumulators twice, which a 64 x 64 warp tile's 128 do not fit.
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k32),
    staging = cp_async(stages = 3, vector = 16, fragments = 2),
    swizzle = xor,
    epilogue = smem(scale = block),
    edges = guarded,
    arch = sm_89,
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
