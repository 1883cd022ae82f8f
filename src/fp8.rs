//! Hopper kernels on 8-bit floats (`F8E4M3`, `F8E5M2`): wgmma `m64nNk32`,
//! A row-major and B column-major (wgmma reads 8-bit operands K-major only),
//! f32 accumulators, C in bf16. A K tile of 128 is one 128-byte swizzle row.

// ANCHOR: imports
use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};
// ANCHOR_END: imports

/// The fp8 ladder's first step: the Hopper ladder's `wgmma_tile` on e4m3
/// operands, per-tensor scales applied in the epilogue: one warpgroup, a
/// 128 x 128 tile of two m64n128k32 atoms down M, a K tile of 128 (one
/// swizzle row of 8-bit elements) a stage, one stage.
// ANCHOR: fp8_wgmma
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 128),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k32, zeroed),
    staging = tma(stages = 1),
    swizzle = b128,
    raster = grouped(8),
    epilogue = vector(scale = tensor),
    edges = guarded,
)]
pub fn fp8_wgmma(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: fp8_wgmma

/// `hopper_autotuned`'s tiling on e4m3 operands with per-tensor scales (one
/// f32 for A and one for B, in device buffers, as cuBLASLt's scale
/// pointers): 128 x 256 tiles, K 128 a stage (one swizzle row of 8-bit
/// elements), four stages, two consumer warpgroups, a persistent walk, C
/// out by TMA stores.
// ANCHOR: fp8_tma_store
#[gemm_kernel(
    block(m = 128, n = 256, k = 128, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k32),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = tma(scale = tensor),
    edges = guarded,
)]
pub fn fp8_tma_store(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: fp8_tma_store

/// The same operands with each stage's sums promoted into f32 (the
/// accuracy of cuBLASLt's default mode, DeepGEMM's scheme): the promoted
/// sums take a second set of registers, so each of the two consumers holds
/// a 64 x 128 tile of 128 x 128 block tiles, six stages deep.
// ANCHOR: fp8_promoted
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32, promote),
    staging = tma(stages = 6),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = tma(scale = tensor),
    edges = guarded,
)]
pub fn fp8_promoted(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: fp8_promoted

/// DeepGEMM's fine-grained scaling: A scaled per row and 128-wide K block,
/// B per 128 x 128 block (`scale = block`, the layouts of
/// `gemm_runtime::quantize::{rows_by_k_block, blocks}`). A stage is one K
/// block: each consumer issues its wgmmas into one set of sums while it
/// multiplies the set of the block before by its scales and adds it into
/// the f32 accumulators. Five stages, not `fp8_promoted`'s six: with the
/// stages' scales, six leave room for half the C tile only, which then
/// goes out in two turns (1-2% slower on the H200, 2026-11-29).
// ANCHOR: fp8_block_scaled
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32),
    staging = tma(stages = 5),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = tma(scale = block),
    edges = guarded,
)]
pub fn fp8_block_scaled(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: fp8_block_scaled

/// Per-channel scales (`scale = channel`: one f32 per row of A, one per
/// column of B, applied in the epilogue) on `fp8_promoted`'s tiling.
// ANCHOR: fp8_channel
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32, promote),
    staging = tma(stages = 6),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = tma(scale = channel),
    edges = guarded,
)]
pub fn fp8_channel(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: fp8_channel

/// The fp8 ladder's tuned step: `fp8_promoted` as `tuned::fp8_tuned` picks
/// it at 4096^3 on the H200: the same tiles and six stages, raster bands of
/// 32 tiles.
// ANCHOR: fp8_autotuned
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32, promote),
    staging = tma(stages = 6),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(32),
    persistent = tiles,
    epilogue = tma(scale = tensor),
    edges = guarded,
)]
pub fn fp8_autotuned(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: fp8_autotuned
