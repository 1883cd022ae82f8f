//! Grouped GEMMs for mixture-of-experts layers: a batch of problems (one per
//! expert) whose rows differ from problem to problem and are known only on
//! the GPU, in DeepGEMM's two layouts.
//!
//! DeepGEMM's masked layout (`groups = masked`): A is `[G, m_max, k]`, each
//! expert's weight `[n, k]` (B column-major, `C = A * W_g^T`), C `[G, m_max,
//! n]`, and a device array `group_rows[G]` says how many of each expert's
//! m_max rows hold tokens. A decode step captured in a CUDA graph launches
//! the same shape every step while the counts change on the device. The
//! launch is a batch (`Dims::batched`) with the counts beside it; tiles past
//! an expert's rows cost nothing but their skip, and C's rows past them are
//! not written.
//!
//! The contiguous layout (`groups = contiguous`): every expert's tokens one
//! after another in A `[m, k]` and C `[m, n]`, where each expert's rows end
//! given on the device (`group_ends[G]`, the prefix sums of its tokens).
//! The launch is a batch whose A and C strides are 0, B's each expert's.

// ANCHOR: imports
use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};
// ANCHOR_END: imports

/// `tma_store`'s tiling (128 x 256 tiles, two consumers of 64 x 256, a
/// persistent walk over every expert's tiles) on the masked layout: C goes
/// out through a tile in shared memory with guarded stores, which stop at
/// each expert's rows where a TMA store would write whole tiles.
// ANCHOR: grouped_masked
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = vector,
    edges = guarded,
    groups = masked,
)]
pub fn grouped_masked(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: grouped_masked

/// The same tiling on the contiguous layout (`groups = contiguous`): the
/// experts' rows one after another in A `[m, k]` and C `[m, n]`, group g's
/// from `group_ends[g - 1]` (0 for the first) to `group_ends[g]`, end
/// offsets on the device (the prefix sums of the routed tokens), each
/// multiplied by its own W of `[G, n, k]`. A group may start at any row;
/// no tile reaches into the next group (a group's last tile is guarded), so
/// a group of few rows costs one partial tile along M, an empty one nothing.
/// C goes out through a tile in shared memory by TMA stores (a tile across
/// its group's end by the threads, its group's rows only), three stages
/// beside it; a C whose lines are not 16-byte aligned is written by a
/// variant of the same tiling that takes it where it lies. The producer
/// keeps its cursor over the groups and the edge loads' state in 56
/// registers (ptxas spilled 28 bytes at 24, 12 at 40); the consumers' 224
/// hold their 64 x 256 tiles.
// ANCHOR: grouped_contiguous
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 56, consumer_regs = 224),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = tma,
    edges = guarded,
    groups = contiguous,
)]
pub fn grouped_contiguous(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: grouped_contiguous

/// DeepGEMM's aligned form (`groups = indexed`): the groups' rows one
/// after another in A `[m, k]` and C `[m, n]` as in `grouped_contiguous`,
/// each group's padded to a multiple of 128 rows (the block's m), and
/// `row_groups[m]` on the device giving each row's group, -1 for padding.
/// A tile takes its first row's group; padding rows are not written.
// ANCHOR: grouped_indexed
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = vector,
    edges = guarded,
    groups = indexed,
)]
pub fn grouped_indexed(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: grouped_indexed

/// `grouped_contiguous` with SwiGLU in its epilogue (`gated`): each
/// expert's W holds its gate and up rows interleaved (row 2j the gate of
/// output column j, row 2j + 1 its up-projection), and C `[m, n / 2]`
/// takes `silu(gate) * up`, half what the next GEMM then reads. The
/// products go out through a C tile in shared memory by TMA stores
/// (`epilogue = tma`; a tile across its group's end by the threads, in
/// 16-byte chunks of the group's rows), four stages beside it: 96.9% of
/// one dense GEMM of the rows over the `moe` example's layers, where the
/// C tile's 16-byte copies by the threads ran 92.0% and each thread's
/// 2-byte products stored straight to C less again (H200, 2026-11-29).
// ANCHOR: grouped_swiglu
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 56, consumer_regs = 224),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = tma(activation = silu, gated),
    edges = guarded,
    groups = contiguous,
)]
pub fn grouped_swiglu(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: grouped_swiglu

/// `grouped_masked` with SwiGLU in its epilogue, as `grouped_swiglu`.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = vector(activation = silu, gated),
    edges = guarded,
    groups = masked,
)]
pub fn grouped_masked_swiglu(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

/// The contiguous layout on e4m3 operands with DeepGEMM's block scales
/// (`scale = block`), SwiGLU in the epilogue: `fp8::fp8_block_scaled`'s
/// tiling (128 x 128 tiles, a stage one 128-wide K block) on the grouped
/// walk. The scales follow their operands: A's (one per row and K block)
/// over all `m` rows, as one problem's, since the groups share A; each
/// expert's B scales (one per 128 x 128 block of its W) after the one
/// before's. The products go out through a C tile by TMA stores, as
/// `grouped_swiglu`'s (through a C tile 6-16% faster than stored straight
/// to C: a tile's K loop is a quarter of bf16's, so its epilogue weighs
/// four times as much; by TMA stores 1-4% faster again, against the bf16
/// kernel timed in rotation with it), and the next tile's first stage
/// runs on the tensor cores beside that epilogue (`overlap`: 6-7% faster
/// on the Mixtral-like layer, H200, 2026-11-29).
// ANCHOR: grouped_fp8_swiglu
#[gemm_kernel(
    block(m = 128, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 128),
    atom = wgmma(m64n128k32),
    staging = tma(stages = 6),
    specialize(producers = 1, consumers = 2, producer_regs = 56, consumer_regs = 224, overlap),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = tma(scale = block, activation = silu, gated),
    edges = guarded,
    groups = contiguous,
)]
pub fn grouped_fp8_swiglu(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: grouped_fp8_swiglu

/// `grouped_fp8_swiglu`'s block scales on the masked layout, for decode
/// steps of up to 64 tokens an expert: each expert's A scales
/// (`[ceil(k / 128)][m_max rounded up to 4]`) and B scales after the one
/// before's. Tiles of 64 rows, two consumers of 64 x 64, load A in whole
/// boxes up to m_max = 64 where 128-row tiles loaded a few boxes of 8
/// rows each K step: the weights read at 82-83% of HBM's peak against
/// 57-64% at m_max = 64, 76-81% against 67-71% at 32 (H200, 2026-11-29,
/// the `moe` example's experts, results bit for bit the same). Past 64
/// tokens an expert takes two tile rows, each reading its weights (45-51%
/// at m_max = 128, where 128-row tiles read them once at 76-77%).
#[gemm_kernel(
    block(m = 64, n = 128, k = 128, threads = 384),
    warp(m = 64, n = 64),
    atom = wgmma(m64n64k32),
    staging = tma(stages = 8),
    specialize(producers = 1, consumers = 2, producer_regs = 40, consumer_regs = 232),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = vector(scale = block, activation = silu, gated),
    edges = guarded,
    groups = masked,
)]
pub fn grouped_masked_fp8_swiglu(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);

/// The masked layout on the sm_80 path (what Ampere and Ada GPUs run):
/// `mma_autotuned`'s tiling (128 x 256 tiles of 8 warps, mma.sync through
/// three cp.async stages) on a grid of a block per tile, each problem of
/// the batch along the grid's z; a block whose tile lies past its
/// problem's rows ends at once.
// ANCHOR: grouped_masked_sm80
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    epilogue = smem,
    edges = guarded,
    groups = masked,
)]
pub fn grouped_masked_sm80(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: grouped_masked_sm80

/// The aligned form (`groups = indexed`) on the sm_80 path, the same
/// tiling: a block per tile of A's and C's rows, each taking its first
/// row's group's W.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    epilogue = smem,
    edges = guarded,
    groups = indexed,
)]
pub fn grouped_indexed_sm80(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

/// Groups starting at any row (`groups = contiguous`) on the sm_80 path,
/// the same tiling: the grid's rows of tiles are the groups' row tiles one
/// after another, and a block finds its own group by a warp's scan over
/// the groups' ends.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    epilogue = smem,
    edges = guarded,
    groups = contiguous,
)]
pub fn grouped_contiguous_sm80(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
