//! Tuned kernels, one per path: each a ladder step's spec with a `tune(..)`
//! space over its tiles and stages. The launcher times the space's legal
//! points on the first launch for each group of shapes and keeps the
//! fastest (`gemm_runtime::Tuned`).

// ANCHOR: imports
use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};
// ANCHOR_END: imports

/// The fp32 SIMT path: `autotuned`'s warp and thread tiles, its block tile
/// and pipeline depth tuned (8 points).
#[gemm_kernel(
    block(m = 128, n = 256, k = 16, threads = 256),
    warp(m = 64, n = 64, m_iters = 1, n_iters = 4),
    thread(m = 8, n = 4, sweep = m),
    atom = fma,
    staging = cp_async(stages = 4, vector = 4, transpose_a),
    swizzle = pad(8),
    persistent = stream_k,
    epilogue = vector,
    edges = guarded,
    tune(block.m = [64, 128], block.n = [128, 256], stages = [3, 4]),
)]
pub fn simt_tuned(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// The sm_80 tensor-core path: `mma_autotuned` with its block tile, stages
/// and schedule tuned (16 points less those past the shared memory): a block
/// a tile, or the tail split, where a last wave left nearly empty (3072 x
/// 3072 x 12288: 288 tiles of 128 x 256 on 132 SMs) goes in pieces along K
/// over every SM (+23-25% there on the H200; +23-28% at 2047 x 2300 x 4100,
/// one wave and 12 tiles). Where the waves are whole or many it ran 3.5-9.5%
/// slower than a block a tile (at 4095 x 4096 x 4096, 12%): the tuner times
/// both.
// ANCHOR: mma_tuned
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    epilogue = smem,
    edges = guarded,
    tune(block.m = [64, 128], block.n = [128, 256], stages = [2, 3], schedule = [tiles, tail_split]),
)]
// the tail split's C tile has shared memory of its own (its next copies are in flight
// through the epilogue): three stages of 128 x 256 leave no room for it, a pruned
// point the macro notes in a warning silenced here
#[allow(deprecated)]
pub fn mma_tuned(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: mma_tuned

/// The Hopper path: `tma_store` with its block tile, stages, raster bands
/// and schedule tuned (48 points). Four stages of its 128 x 256 tiles leave
/// room for half the C tile only, which then goes out in two parts. Tiles
/// of 256 x 128 (two warpgroups of 128 x 128) run 4096^3 4.5% slower on
/// the H100 but make whole rounds where N is one past a multiple of 256
/// (4096 x 4097 x 4096: 528 tiles, four rounds on 132 SMs, where 128 x 256
/// tiles make 544) and take odd C's lines in bands best: 728 against 645
/// TFLOP/s at 4096 x 4097 x 4096, 537 against 503 at 4095 x 4097 x 4100
/// packed (BENCHMARKS.md). 128 x 128 tiles are not listed: on the H100 their first launches' timings put them
/// ahead at 4096 x 11008 x 4096 and 4096 x 14336 x 4096, where they ran
/// 5-8% behind (BENCHMARKS.md). The schedules: the persistent walk of whole tiles, and where that walk
/// leaves SMs idle in its last wave (3072x3072x12288: 288 tiles on 132
/// SMs) the two schedules that share that wave's tiles along K, the
/// hybrid (their K steps split evenly, the blocks in step) and the tail
/// split (each tile in equal pieces). On the H100 each of the three was
/// the fastest at some size (BENCHMARKS.md); stream-K lost to them all.
// ANCHOR: hopper_tuned
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma,
    edges = guarded,
    tune(
        block = [block(m = 128, n = 256), block(m = 256, n = 128)],
        stages = [3, 4],
        grouped = [4, 8, 16, 32],
        schedule = [persistent, hybrid, tail_split],
    ),
)]
pub fn hopper_tuned(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: hopper_tuned

/// The fp8 path: `fp8_promoted` (e4m3, per-tensor scales, sums promoted
/// into f32 every stage) with its block tile, stages, raster bands and
/// schedule tuned. Promoted sums take two more sets of registers, so a
/// consumer holds at most 64 x 192 of C: 128 x 128 and 128 x 192 tiles of
/// two consumers, and 192 x 128 of three.
// ANCHOR: fp8_tuned
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
    tune(
        block = [block(m = 128, n = 128), block(m = 128, n = 192)],
        stages = [4, 5, 6, 7],
        grouped = [8, 16, 32],
        schedule = [persistent, hybrid, tail_split],
    ),
)]
// the deepest rings of the wider tiles pass the shared memory: the macro
// prunes those points, and says so in a warning silenced here
#[allow(deprecated)]
pub fn fp8_tuned(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: fp8_tuned

/// `fp8_block_scaled` (DeepGEMM's 1 x 128 and 128 x 128 scales) with its
/// block tile, its consumers' tiles, stages and raster bands tuned: tiles
/// from 256 x 128 (DeepGEMM's: two consumers of 128 x 128, each taking its
/// sums an atom row of 64 at a time, three stages; the tuner of 08cc834
/// picked it at 4096^3, 8192^3 and 4096 x 7168 x 16384 on the H200) through 128 x 128
/// (`fp8_block_scaled`'s two consumers of 64 x 128) down to
/// 64 x 64 (one consumer, its sums by atom rows as DeepGEMM's are, or two
/// of 64 x 32) and 64 x 32, so that products of few rows
/// spread over more SMs (64 x 2112 x 7168 makes 17 tiles of 128 x 128 for
/// 132 SMs, 33 of 64 x 64, 66 of 64 x 32), and each of those points with its tiles' K
/// split over a cluster of two blocks (66 blocks of 64 x 64 there: 39%
/// faster than 33 on the H200; 132 of 64 x 32 split ran 6-8% ahead of
/// that on an H100 in one run, and the H200's tuner takes them). Each block
/// tile is listed with its warp tiles: the sixteen legal pairs of 256, 128
/// or 64 rows by 128 or 64 columns, and 64 x 32.
/// Five stages are among the points: the largest tiles' whole C
/// tile fits beside five stages and their scales, not six
/// (`fp8_block_scaled`).
// ANCHOR: fp8_block_tuned
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32),
    staging = tma(stages = 6),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = tma(scale = block),
    edges = guarded,
    tune(
        block = [
            block(m = 256, n = 128, warp(m = 128, n = 128)),
            block(m = 256, n = 64, warp(m = 128, n = 64)),
            block(m = 256, n = 64, warp(m = 128, n = 32)),
            block(m = 128, n = 128, warp(m = 128, n = 128)),
            block(m = 128, n = 128, warp(m = 128, n = 64)),
            block(m = 128, n = 128, warp(m = 128, n = 32)),
            block(m = 128, n = 128, warp(m = 64, n = 128)),
            block(m = 128, n = 64, warp(m = 128, n = 64)),
            block(m = 128, n = 64, warp(m = 128, n = 32)),
            block(m = 128, n = 64, warp(m = 64, n = 64)),
            block(m = 128, n = 64, warp(m = 64, n = 32)),
            block(m = 64, n = 128, warp(m = 64, n = 128)),
            block(m = 64, n = 128, warp(m = 64, n = 64)),
            block(m = 64, n = 128, warp(m = 64, n = 32)),
            block(m = 64, n = 64, warp(m = 64, n = 64)),
            block(m = 64, n = 64, warp(m = 64, n = 32)),
            block(m = 64, n = 32, warp(m = 64, n = 32)),
        ],
        stages = [3, 4, 5, 6, 8],
        grouped = [8, 16],
        cluster.k = [1, 2],
    ),
)]
// the deepest rings of the largest tiles pass the shared memory: the macro
// prunes those points, and says so in a warning silenced here
#[allow(deprecated)]
pub fn fp8_block_tuned(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: fp8_block_tuned

/// Ada's 8-bit path (sm_89; consumer Blackwell too): `mma_fp8_sm89` (e4m3
/// by mma.sync, per-tensor scales) with its block tile and stages tuned
/// within the 99 KB a block gets there, its 8 warps keeping their 2 x 4
/// arrangement: 128 x 256 in two stages, 128 x 128 and 64 x 256 down to 64
/// x 128 in up to four (7 points). An L4's 58 SMs and an RTX 4090's 128
/// take a shape's tiles in different waves, which the tuning times.
// ANCHOR: mma_fp8_tuned_sm89
#[gemm_kernel(
    block(m = 128, n = 256, k = 128, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k32),
    staging = cp_async(stages = 2, vector = 16, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    epilogue = smem(scale = tensor),
    edges = guarded,
    arch = sm_89,
    tune(
        block = [block(m = 128, n = 256), block(m = 128, n = 128), block(m = 64, n = 256), block(m = 64, n = 128)],
        stages = [2, 3, 4],
    ),
)]
// the deeper rings of the larger tiles pass the shared memory: the macro
// prunes those points, and says so in a warning silenced here
#[allow(deprecated)]
pub fn mma_fp8_tuned_sm89(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: mma_fp8_tuned_sm89

/// `mma_fp8_block_sm89` (DeepGEMM's block scales on mma.sync) with its
/// block tile and stages tuned, its 8 warps keeping their 4 x 2
/// arrangement: 128 x 128 down to 64 x 64 (warps of 16 x 32), in two to
/// four stages (11 points). Wider tiles are not listed: their warps' two
/// sets of sums would take 256 registers (128 x 256), or their B fragments
/// a step ahead spill beside them (64 x 256, warps of 16 x 128).
// ANCHOR: mma_fp8_block_tuned_sm89
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 256),
    warp(m = 32, n = 64),
    atom = mma(m16n8k32),
    staging = cp_async(stages = 3, vector = 16, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    epilogue = smem(scale = block),
    edges = guarded,
    arch = sm_89,
    tune(
        block = [block(m = 128, n = 128), block(m = 64, n = 128), block(m = 128, n = 64), block(m = 64, n = 64)],
        stages = [2, 3, 4],
    ),
)]
// the deepest ring of the largest tiles passes the shared memory: the macro
// prunes that point, and says so in a warning silenced here
#[allow(deprecated)]
pub fn mma_fp8_block_tuned_sm89(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: mma_fp8_block_tuned_sm89

/// Every tuned kernel above, for the tools that take one by name.
pub static ALL: [&gemm_runtime::Tuned; 7] = [
    &simt_tuned::KERNEL,
    &mma_tuned::KERNEL,
    &hopper_tuned::KERNEL,
    &fp8_tuned::KERNEL,
    &fp8_block_tuned::KERNEL,
    &mma_fp8_tuned_sm89::KERNEL,
    &mma_fp8_block_tuned_sm89::KERNEL,
];

/// The tuned kernel of `ALL` called `name`.
pub fn named(name: &str) -> Option<&'static gemm_runtime::Tuned> {
    ALL.iter().copied().find(|t| t.name() == name)
}
