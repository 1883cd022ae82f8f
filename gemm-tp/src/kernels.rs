//! The layers' GEMMs: bf16, each weight stored as `torch.nn.Linear` keeps
//! it (`[out, in]`: B column-major, `y = x W^T`), on `linear_overlap`'s
//! Hopper tiling (examples/linear.rs), any size.

use gemm_runtime::{bf16, gemm_kernel, Bias, ColMajor, Mat, MatMut, RowMajor};

/// The column-parallel layer: `gelu(x W^T + b)`, the exact GELU as
/// PyTorch's `GELU()`.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma(bias = n, activation = gelu),
    edges = guarded,
)]
pub fn up_gelu(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

/// The row-parallel layer's partial sum on every rank but the first: `x W^T`.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma,
    edges = guarded,
)]
pub fn down(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor>);

/// The first rank's partial sum, with the bias the sum takes once: `x W^T + b`.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma(bias = n),
    edges = guarded,
)]
pub fn down_bias(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

/// The tile height of the kernels above: chunks of tokens are cut at
/// multiples of it.
pub const TILE_M: usize = 128;
