use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// Four blocks stacked along m would each load 48 / 4 = 12 lines of B's
// tile: not whole periods of the 128-byte swizzle (8 lines).
#[gemm_kernel(
    block(m = 128, n = 48, k = 64, threads = 384),
    warp(m = 64, n = 48),
    atom = wgmma(m64n48k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2),
    swizzle = b128,
    cluster(m = 4, n = 1, multicast = b),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
