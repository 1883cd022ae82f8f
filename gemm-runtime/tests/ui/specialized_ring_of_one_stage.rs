use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A producer runs ahead of its consumers only through a ring of two or more stages.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 256),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 1),
    specialize(producers = 1, consumers = 1),
    swizzle = b128,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
