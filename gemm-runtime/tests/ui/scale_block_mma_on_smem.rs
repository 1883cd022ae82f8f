use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// Block scales on mma.sync are read beside a cp.async pipeline's K loop.
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 256),
    warp(m = 32, n = 64),
    atom = mma(m16n8k32),
    staging = smem(vector = 16, buffers = 2),
    swizzle = xor,
    epilogue = smem(scale = block),
    edges = guarded,
    arch = sm_89,
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
