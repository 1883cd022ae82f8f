use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// `promote` adds 8-bit products' sums into f32: the tensor cores sum bf16 products in f32 already.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k16, promote),
    staging = tma(stages = 4),
    specialize(consumers = 2),
    swizzle = b128,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
