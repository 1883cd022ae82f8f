use gemm_runtime::{f16, gemm_kernel, Mat, MatMut, RowMajor};

// A misspelt tier: "did you mean", and no second error about the missing
// thread tier that atom = fma needs.
#[gemm_kernel(
    block(m = 64, n = 64, k = 8, threads = 64),
    thraed(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4),
)]
fn tier(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

// A misspelt required argument: no "missing block" on top.
#[gemm_kernel(
    blokc(m = 64, n = 64, k = 8, threads = 64),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4),
)]
fn required(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

// A tier setting, an atom, a staging, a swizzle, a raster and an epilogue.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, thraeds = 128),
    warp(m = 64, n = 64),
    atom = mmma(m16n8k16),
    staging = cp_asnyc(stages = 3, vector = 8),
    swizzle = xro,
    raster = gruoped(8),
    epilogue = vectro,
)]
fn settings(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

// Type names.
#[gemm_kernel(
    block(m = 64, n = 64, k = 8, threads = 64),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4),
)]
fn types(a: Mat<f23, RowMajor>, b: Mat<f32, RowMajr>, c: MatMut<f32, RowMajor>);

fn main() {}
