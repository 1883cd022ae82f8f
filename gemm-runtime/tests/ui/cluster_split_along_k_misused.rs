use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor};

// A cluster that splits K shares one tile among its blocks: no cluster tile
// along m, no multicast, and consumers fed by a producer warpgroup.
#[gemm_kernel(
    block(m = 64, n = 64, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = wgmma(m64n64k16),
    staging = tma(stages = 4),
    swizzle = b128,
    cluster(m = 2, n = 1, k = 2, multicast = b),
    edges = guarded,
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
