use gemm_runtime::{bf16, gemm_kernel, Bias, ColMajor, Mat, MatMut, RowMajor};

// A bias vector in the signature of a TMA-store kernel that adds none: the advice names tma(bias = n) too.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    specialize(consumers = 2),
    swizzle = b128,
    epilogue = tma,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>, bias: Bias<f32>);

fn main() {}
