use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// On mma.sync under block scales a warp's columns lie in one 128-column block of B's scales.
#[gemm_kernel(
    block(m = 64, n = 192, k = 128, threads = 256),
    warp(m = 32, n = 48),
    atom = mma(m16n8k32),
    staging = cp_async(stages = 2, vector = 16),
    swizzle = xor,
    epilogue = smem(scale = block),
    edges = guarded,
    arch = sm_89,
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
