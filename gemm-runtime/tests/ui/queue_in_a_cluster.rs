use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A queue of tiles hands each to one block; a cluster's blocks take their tiles together.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2),
    swizzle = b128,
    cluster(m = 2, n = 1, multicast = b),
    persistent = queue,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
