use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// A TMA store needs the tensor maps that TMA staging sets up.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    epilogue = tma,
    arch = sm_90a,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
