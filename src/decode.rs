//! Small-M (decode) GEMMs: one token to a few dozen against a large weight,
//! `y = x * W` with W read once; bound by reading W, so they are judged by
//! the bandwidth they reach as well as against cuBLAS.
//!
//! Three ways to cut such a product, each a spec the rules check:
//! - `decode_mma` (sm_80 and later): C tiles 16 rows tall (mma's M; rows
//!   past M read as zeros), wide along N, the deep K split over every
//!   resident block by stream-K with its fixed-order sum, W streamed by
//!   16-byte cp.async copies;
//! - `decode_swapped` (sm_90a): the same product transposed,
//!   `C^T = W^T * x^T`, so that W's large side fills wgmma's 64-row atom
//!   and the few tokens its N (8 to 64); call it with the operands swapped
//!   (A = W^T, B = x^T, C^T), which costs nothing where W is stored
//!   `[N, K]` row-major and x `[M, K]` row-major, as in a linear layer;
//! - `decode_split` (sm_90a): `decode_swapped` with the deep K split over
//!   every resident block by stream-K, for weights of few rows.

// ANCHOR: imports
use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};
// ANCHOR_END: imports

/// `C (M x N) = x (M x K) * W (K x N)`, W stored column-major (`[N, K]`
/// row-major), M small. Tuned per shape over tiles of 16 or 64 tokens, 64
/// to 256 rows of W and K tiles of 64 to 256 (38 points): 64 tokens read
/// each tile of W once in tiles of 64, where tiles of 16 read it four
/// times; a few tokens take narrower, deeper tiles. Over 1, 16 and 64
/// tokens on four weights the space ran 83-84% of cuBLAS (geometric mean)
/// where stages alone ran 70-71% (H200, 2026-11-30).
#[gemm_kernel(
    block(m = 16, n = 128, k = 64, threads = 128),
    warp(m = 16, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 4, vector = 8),
    swizzle = xor,
    persistent = stream_k,
    edges = guarded,
    tune(block.m = [16, 64], block.n = [64, 128, 256], block.k = [64, 128, 256], stages = [2, 3, 4, 6], key = exact),
)]
// the deepest rings of the widest tiles pass the shared memory, and the
// widest tiles of few K take no whole rounds of copies: the macro prunes
// those points, and says so in a warning silenced here
#[allow(deprecated)]
pub fn decode_mma(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

/// `C^T (N x M) = W^T (N x K) * x^T (K x M)`: A is W as stored (`[N, K]`
/// row-major), B is x (`[M, K]` row-major, so x^T column-major), C^T
/// column-major is C row-major. The tile's N is the tokens'. Tiles of 128
/// rows of W left a 14336-row weight 112 blocks for 132 SMs (79% of HBM at
/// M = 1 on the H100); 64-row tiles, a warpgroup each, are in the space
/// too, and K tiles of 128 and 256 (two and four 128-byte swizzle rows: 256
/// and 512 bytes of each weight row a stage, which DRAM serves better than
/// 128), which the tuner picks at most shapes, and rings of three stages,
/// which it picked at 18 of the twenty decode shapes on the H100 (103.4%
/// of cuBLAS over them, BENCHMARKS.md). With `prefetch` (2 to 4 K steps;
/// 0: none) a dependent launch asks the L2 for the start of its share of
/// W before it waits for the kernel before, and lets the next launch
/// start once its own copies are all issued: one-token steps over the
/// 4096 x 4096 weight went from 73.8% of HBM to 79.1% (BENCHMARKS.md).
/// With `evict_first = a` the weight's loads ask the L2 to evict their
/// lines first (each is read once), which keeps the tokens and the next
/// launch's prefetched lines there: 78.6% to 83.6% (BENCHMARKS.md).
// ANCHOR: decode_swapped
#[gemm_kernel(
    block(m = 128, n = 16, k = 64, threads = 256),
    warp(m = 64, n = 16),
    atom = wgmma(m64n16k16),
    staging = tma(stages = 6, evict_first = a),
    swizzle = b128,
    edges = guarded,
    tune(block.m = [64, 128], block.n = [8, 16, 32, 64], block.k = [64, 128, 256], stages = [3, 4, 6, 8], prefetch = [0, 2, 3, 4], key = exact),
)]
// the deepest rings of 128-deep K tiles pass the shared memory: the macro
// prunes those points, and says so in a warning silenced here
#[allow(deprecated)]
pub fn decode_swapped(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, ColMajor>);
// ANCHOR_END: decode_swapped

/// `decode_swapped` with the deep K split by stream-K: where W has few rows
/// (4096 make 32 tiles of 128 for 132 SMs, which left the H100's HBM half
/// idle), every resident block streams its share of K steps, a producer
/// warpgroup feeding the consumers by TMA and the consumers summing the
/// tile's shares in a fixed order.
#[gemm_kernel(
    block(m = 128, n = 16, k = 64, threads = 384),
    warp(m = 64, n = 16),
    atom = wgmma(m64n16k16),
    staging = tma(stages = 6, evict_first = a),
    specialize(producers = 1, consumers = 2),
    swizzle = b128,
    persistent = stream_k,
    edges = guarded,
    tune(block.m = [64, 128], block.n = [8, 16, 32, 64], block.k = [64, 128, 256], stages = [4, 6, 8], key = exact),
)]
// the deepest rings of 128-deep K tiles pass the shared memory: the macro
// prunes those points, and says so in a warning silenced here
#[allow(deprecated)]
pub fn decode_split(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, ColMajor>);

/// `decode_swapped` with each tile's K split over a cluster of two blocks:
/// every block streams half of its tile's K steps, and the second's
/// partial sum goes to the first through its shared memory (distributed
/// shared memory), which adds it and stores C. Where W has few rows (4096
/// make 32 or 64 tiles for 132 SMs) that keeps twice the SMs reading, and
/// the fix-up stays on the SM pair: as a hand edit of `decode_split`'s
/// point it read the 4096 x 11008 weight at M = 1 at 75.8% of HBM where
/// stream-K's fix-up held the point to 69.7% (BENCHMARKS.md). Its
/// dependent launches prefetch as `decode_swapped`'s do.
// ANCHOR: decode_cluster
#[gemm_kernel(
    block(m = 64, n = 8, k = 256, threads = 256),
    warp(m = 64, n = 8),
    atom = wgmma(m64n8k16),
    staging = tma(stages = 4, evict_first = a),
    specialize(producers = 1, consumers = 1),
    swizzle = b128,
    cluster(m = 1, n = 1, k = 2),
    edges = guarded,
    tune(block.m = [64, 128], block.n = [8, 16, 32, 64], block.k = [128, 256], stages = [3, 4, 6], prefetch = [0, 2, 3, 4], key = exact),
)]
// the deepest rings of 256-deep K tiles pass the shared memory: the macro
// prunes those points, and says so in a warning silenced here
#[allow(deprecated)]
pub fn decode_cluster(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, ColMajor>);
// ANCHOR_END: decode_cluster

/// `decode_swapped` on 8-bit floats: W in e4m3 with one scale per output
/// channel (a row of A), the tokens in e4m3 with one scale per token (a
/// column of B), `scale = channel`, f32 sums promoted every stage and C in
/// bf16. The weight is read at one byte an element, half of bf16's, so a
/// one-token step bound by that read takes half the time. A K tile of 128
/// is one 128-byte swizzle row of 8-bit elements; 256 and 512 take two and
/// four, which DRAM serves better. Quantize W per row and x per token with
/// `gemm_runtime::quantize::per_row`.
// ANCHOR: decode_fp8
#[gemm_kernel(
    block(m = 128, n = 16, k = 256, threads = 256),
    warp(m = 64, n = 16),
    atom = wgmma(m64n16k32, promote),
    staging = tma(stages = 4, evict_first = a),
    swizzle = b128,
    epilogue = vector(scale = channel),
    edges = guarded,
    tune(block.m = [64, 128], block.n = [8, 16, 32, 64], block.k = [128, 256, 512], stages = [3, 4, 6, 8], prefetch = [0, 2, 3, 4], key = exact),
)]
// the deepest rings of 512-deep K tiles pass the shared memory: the macro
// prunes those points, and says so in a warning silenced here
#[allow(deprecated)]
pub fn decode_fp8(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, ColMajor>);
// ANCHOR_END: decode_fp8

/// `decode_mma` on 8-bit floats, for Ada and consumer Blackwell (mma.sync
/// m16n8k32, sm_89): the tokens in e4m3 with one scale each (a row of A),
/// W in e4m3 `[N, K]` with one scale per output channel (a column of B),
/// `scale = channel`, C in bf16. The weight is read at one byte an element,
/// half of bf16's. K tiles of 128 are the 128 bytes of each line that
/// `decode_mma`'s 64 are; tiles of 16 or 32 tokens, K tiles of 128 or 256
/// and the stages are tuned within the 99 KB a block gets there (9 points).
/// Quantize W per row and x per token with `gemm_runtime::quantize::per_row`.
// ANCHOR: decode_fp8_sm89
#[gemm_kernel(
    block(m = 16, n = 128, k = 128, threads = 128),
    warp(m = 16, n = 32),
    atom = mma(m16n8k32),
    staging = cp_async(stages = 4, vector = 16),
    swizzle = xor,
    persistent = stream_k,
    epilogue = vector(scale = channel),
    edges = guarded,
    arch = sm_89,
    tune(block.m = [16, 32], block.k = [128, 256], stages = [2, 3, 4, 5], key = exact),
)]
// the deeper rings of the larger tiles pass the shared memory: the macro
// prunes those points, and says so in a warning silenced here
#[allow(deprecated)]
pub fn decode_fp8_sm89(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: decode_fp8_sm89
