use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// Whole block tiles listed beside a warp tile they set, a tile without its n, a tile listed
// twice and a warp tile without its n.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(block = [block(m = 128, n = 128), block(m = 64, n = 128)], warp.n = [32, 64]),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(block = [block(m = 64)]),
)]
fn other(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(block = [block(m = 128, n = 128), block(m = 64, n = 128, warp(m = 32, n = 64)), block(n = 128, m = 128)]),
)]
fn twice(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    tune(block = [block(m = 64, n = 128, warp(m = 32))]),
)]
fn half_a_warp(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

fn main() {}
