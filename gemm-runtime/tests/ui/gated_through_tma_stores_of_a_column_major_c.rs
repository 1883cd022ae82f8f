use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A gated pair's product goes to C or to a C tile of n / 2 columns: TMA stores take a row-major C's
// half-width lines, not a column-major C's boxes.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    specialize(consumers = 2, consumer_regs = 240),
    swizzle = b128,
    epilogue = tma(activation = silu, gated),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, ColMajor>);

fn main() {}
