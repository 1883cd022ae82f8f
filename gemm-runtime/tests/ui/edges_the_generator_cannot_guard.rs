use gemm_runtime::{f16, gemm_kernel, Mat, MatMut, RowMajor, ColMajor};

// A direct fma kernel guards its edges always: `whole` would be a lie.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1),
    atom = fma,
    staging = direct,
    edges = whole,
)]
fn direct_whole(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

// wmma straight from global memory: its fragment loads cannot check the edges.
#[gemm_kernel(
    block(m = 64, n = 64, threads = 128),
    warp(m = 32, n = 32),
    atom = wmma(m16n16k16),
    staging = direct,
    epilogue = direct(alpha),
    edges = guarded,
)]
fn wmma_direct_guarded(a: Mat<f16, RowMajor>, b: Mat<f16, ColMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
