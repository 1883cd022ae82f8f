use gemm_runtime::{bf16, gemm_kernel, Bias, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// The bias is added in f32 to the accumulators: it is f32, f16 or bf16, not 8 bits.
#[gemm_kernel(
    block(m = 128, n = 256, k = 128, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k32),
    staging = tma(stages = 4),
    specialize(consumers = 2),
    swizzle = b128,
    epilogue = tma(bias = n),
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>, bias: Bias<F8E4M3>);

fn main() {}
