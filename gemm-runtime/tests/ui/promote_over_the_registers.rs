use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};

// Promoted sums take a second set of registers: 64 x 256 a consumer holds 256 floats a thread.
#[gemm_kernel(
    block(m = 128, n = 256, k = 128, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k32, promote),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
)]
fn kernel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
