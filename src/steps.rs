//! One spec per ladder step. Each differs from the step before by that step's
//! change alone; read top to bottom, they teach the optimizations.

// ANCHOR: imports
use gemm_runtime::{bf16, gemm_kernel, ColMajor, Mat, MatMut, RowMajor, F8E4M3};
// ANCHOR_END: imports
use gemm_runtime::{f16, Kernel};

/// Step 1: one thread per element of C. Consecutive threads take consecutive
/// *rows* (`lanes = m`), so a warp's loads of B and stores of C hit 32
/// different rows: nothing coalesces. Bounds-guarded: any m, n, k.
// ANCHOR: naive
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1, lanes = m),
    atom = fma,
    staging = direct,
)]
pub fn naive(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);
// ANCHOR_END: naive

/// Step 2: the same work, but consecutive threads take consecutive *columns*
/// (`lanes = n`): a warp reads 32 neighbouring floats of B and writes 32 of C
/// in one transaction each, and all read the same A element (a broadcast).
/// Bounds-guarded: any m, n, k.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1, lanes = n),
    atom = fma,
    staging = direct,
)]
pub fn coalesced(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// Step 3: the block stages 32x32 tiles of A and B in shared memory (one
/// element per thread), synchronizes, computes from shared memory, and
/// synchronizes again before the next tiles. Each global element is read by
/// one thread instead of 32. Requires m, n, k multiples of 32.
// ANCHOR: smem_tiling
#[gemm_kernel(
    block(m = 32, n = 32, k = 32, threads = 1024),
    thread(m = 1, n = 1, lanes = n),
    atom = fma,
    staging = smem(vector = 1),
)]
pub fn smem_tiling(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);
// ANCHOR_END: smem_tiling

/// Step 4: each thread computes a column of 8 results (`thread(m = 8)`), so
/// one B value loaded from shared memory feeds 8 FMAs. 64x64 tiles, K in steps
/// of 8, 512 threads. Requires m, n multiples of 64 and k of 8.
#[gemm_kernel(
    block(m = 64, n = 64, k = 8, threads = 512),
    thread(m = 8, n = 1, lanes = n),
    atom = fma,
    staging = smem(vector = 1),
)]
pub fn blocktiling_1d(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// Step 5: an 8x8 tile of results per thread, from 8 A and 8 B values held
/// in registers per k (64 FMAs for 16 shared-memory loads); 128x128 tiles,
/// 256 threads. Requires m, n multiples of 128 and k of 8.
#[gemm_kernel(
    block(m = 128, n = 128, k = 8, threads = 256),
    thread(m = 8, n = 8, lanes = n),
    atom = fma,
    staging = smem(vector = 1),
)]
pub fn blocktiling_2d(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// Step 6: global memory moves 16 bytes at a time: float4 loads of A and B,
/// float4 stores of C; A is stored transposed (`[k][m]`) in shared memory so
/// that a thread's 8 A values are contiguous and load as two float4 too.
/// Requires 16-byte aligned matrices with leading dimensions multiples of 4.
#[gemm_kernel(
    block(m = 128, n = 128, k = 8, threads = 256),
    thread(m = 8, n = 8, lanes = n),
    atom = fma,
    staging = smem(vector = 4, transpose_a),
    epilogue = vector,
)]
pub fn vectorized(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// Step 7: each shared-memory row padded by 4 floats, so that the transposed
/// stores of A (a warp writing down a column) spread over the banks.
#[gemm_kernel(
    block(m = 128, n = 128, k = 8, threads = 256),
    thread(m = 8, n = 8, lanes = n),
    atom = fma,
    staging = smem(vector = 4, transpose_a),
    swizzle = pad(4),
    epilogue = vector,
)]
pub fn bank_conflicts(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// Step 8: a warp tier between block and thread. Each warp owns a 32x64
/// sub-tile, covered in 1x2 steps of 32x32: its 32 lanes read neighbouring
/// shared-memory words, and each thread holds 8x8 accumulators. The H100
/// favours other parameters than the seed's A6000 ones (128x128x16, 128
/// threads, warps of 64x64, thread tile 8x4: 78.7% of cuBLAS at 4096^3 in
/// BENCHMARKS.md). From `gemm-lab search --single-buffered` and
/// BENCHMARKS.md: 64x128 blocks with K steps of 16 and 128 threads, so that
/// several blocks share an SM and one's math covers another's loads; each
/// thread's FMAs issued a column at a time (`sweep = m`: 89% against 87% for
/// rows, from the compiler's different schedule); and tiles handed out in
/// groups of 8 rows (`raster = grouped(8)`), so that blocks on the GPU at
/// once share A and B in L2: single-buffered loads wait in full for memory,
/// and L2 hits shorten the wait (90.4% against 89%); and C stored element by
/// element: with float4 stores the compiler keeps each thread's accumulators
/// in aligned quads, and its loop ran 1.2% slower here (91.6% against 90.4%).
// ANCHOR: warptiling
#[gemm_kernel(
    block(m = 64, n = 128, k = 16, threads = 128),
    warp(m = 32, n = 64, m_iters = 1, n_iters = 2),
    thread(m = 8, n = 4, lanes = n, sweep = m),
    atom = fma,
    staging = smem(vector = 4, transpose_a),
    swizzle = pad(4),
    raster = grouped(8),
)]
pub fn warptiling(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);
// ANCHOR_END: warptiling

/// Step 9: two buffers of each tile: the next tiles' global loads are issued
/// before the current tile's math and land in the other buffer after it, with
/// one barrier per step instead of two. The H100 favours K steps of 8 here
/// (the search measured BK = 16 slower with two buffers than with one: the
/// staged registers cost more than the overlap gains), so this step takes the
/// search's best double-buffered tiling: 128x128 blocks, K steps of 8.
// ANCHOR: double_buffering
#[gemm_kernel(
    block(m = 128, n = 128, k = 8, threads = 128),
    warp(m = 64, n = 64, m_iters = 1, n_iters = 4),
    thread(m = 8, n = 4, lanes = n),
    atom = fma,
    staging = smem(vector = 4, transpose_a, buffers = 2),
    swizzle = pad(4),
    epilogue = vector,
)]
pub fn double_buffering(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);
// ANCHOR_END: double_buffering

/// Step 10: one of the two specs `gemm-lab search --stream-k` ranked first
/// on the H200 at 4096^3, tied in its re-timing (the search timed every
/// legal point of its space; see the performance notes; the other splits
/// the same warps into 2x4 steps of 4x4): 128x256 blocks of 8 warps of
/// 64x64, each in 1x4 steps of 8x4 thread tiles whose outer products sweep
/// along m, K steps of 16 through a 4-stage cp.async pipeline, rows of
/// shared memory padded by 4, on the stream-K schedule: one block per SM,
/// the K steps of all tiles split evenly over them, so that no wave runs
/// part-full. (The search padded rows by 8: its 102416 bytes missed by
/// 1 KB the 99 KB a block gets on compute capability 8.6, 8.9 and 12.0,
/// seed 001's A6000 among them; on the H200 the two ran 52.23 and 52.17
/// TFLOP/s at 4096^3, 52.25 and 52.50 at 8192^3, commit 2ac9109.)
// ANCHOR: autotuned
#[gemm_kernel(
    block(m = 128, n = 256, k = 16, threads = 256),
    warp(m = 64, n = 64, m_iters = 1, n_iters = 4),
    thread(m = 8, n = 4, sweep = m),
    atom = fma,
    staging = cp_async(stages = 4, vector = 4, transpose_a),
    swizzle = pad(4),
    persistent = stream_k,
    epilogue = vector,
    edges = guarded,
)]
pub fn autotuned(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);
// ANCHOR_END: autotuned

// The tensor-core ladder (sm_80 instructions: wmma, then mma.sync with
// ldmatrix). Its first three steps are seed 004's kernels (f16 in, f32 out,
// B column-major as its fragments are); from `mma_ldmatrix` on, bf16 in and
// out with both operands row-major, as a PyTorch `x @ W` stores them.

/// Tensor step 1: seed 004's first kernel. One warp per block computes one
/// 16x16 tile of C, its fragments loaded by wmma straight from global memory.
/// Requires m, n, k multiples of 16, 32-byte aligned matrices.
#[gemm_kernel(
    block(m = 16, n = 16, threads = 32),
    warp(m = 16, n = 16),
    atom = wmma(m16n16k16),
    staging = direct,
)]
pub fn wmma_warp(a: Mat<f16, RowMajor>, b: Mat<f16, ColMajor>, c: MatMut<f32, RowMajor>);

/// Tensor step 2: seed 004's second kernel. 64x64 tiles of 4 warps, each a
/// 16x64 strip in 4 atoms, so one A fragment feeds 4 products.
// ANCHOR: wmma_block
#[gemm_kernel(
    block(m = 64, n = 64, threads = 128),
    warp(m = 16, n = 64),
    atom = wmma(m16n16k16),
    staging = direct,
)]
pub fn wmma_block(a: Mat<f16, RowMajor>, b: Mat<f16, ColMajor>, c: MatMut<f32, RowMajor>);
// ANCHOR_END: wmma_block

/// Tensor step 3: seed 004's third kernel: the same strips in 128x128 tiles
/// of 8 warps (16x128 each, 8 atoms), fewer and larger blocks.
#[gemm_kernel(
    block(m = 128, n = 128, threads = 256),
    warp(m = 16, n = 128),
    atom = wmma(m16n16k16),
    staging = direct,
)]
pub fn wmma_wide(a: Mat<f16, RowMajor>, b: Mat<f16, ColMajor>, c: MatMut<f32, RowMajor>);

/// Tensor step 4: mma.sync m16n8k16 (seed 003's tensor-core section). 128x128
/// tiles staged in shared memory K 32 at a time, 16-byte copies, rows padded
/// by 8 elements; 8 warps of 64x32, each 4x4 atoms whose fragments ldmatrix
/// loads (`.trans` for the row-major B). bf16 in, bf16 out, C stored a pair
/// of neighbours at a time.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 256),
    warp(m = 64, n = 32),
    atom = mma(m16n8k16),
    staging = smem(vector = 8),
    swizzle = pad(8),
    epilogue = vector,
)]
pub fn mma_ldmatrix(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

/// Tensor step 5: the tiles travel by cp.async, 3 stages deep: two tiles are
/// on their way while the warps compute the third, with one barrier a tile.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 256),
    warp(m = 64, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = pad(8),
    epilogue = vector,
)]
pub fn mma_pipeline(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

/// Tensor step 6: an XOR swizzle of 16-byte chunks instead of padding: the 8
/// rows an ldmatrix reads, and the 8 chunks a copy phase writes, fall in 8
/// different bank groups with no shared memory spent on padding.
// ANCHOR: mma_swizzle
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 256),
    warp(m = 64, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    epilogue = vector,
)]
pub fn mma_swizzle(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: mma_swizzle

/// Tensor step 7: the best spec of `gemm-lab search --mma` on the H100 at
/// 4096^3 (see BENCHMARKS.md for the space and the runners-up): 128x256
/// blocks of 8 warps, each 64x64 in 4x8 atoms, so that each ldmatrix feeds
/// 4 to 8 mmas; K steps of 64 through a 3-stage cp.async pipeline, so a
/// barrier comes every 4 K steps of 16; fragments loaded a K step ahead of
/// their mmas (`fragments = 2`), the next tile's first ones while the last
/// step's mmas run; tiles rastered in groups of 8 rows of blocks; C
/// through a tile in shared memory, out in 16-byte chunks.
// ANCHOR: mma_autotuned
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    epilogue = smem,
    edges = guarded,
)]
pub fn mma_autotuned(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: mma_autotuned

/// `mma_autotuned` in two stages (96 KB), declared for Ada: it fits the 99
/// KB of shared memory a block gets on GPUs of compute capability 8.6, 8.9
/// and 12.0, where the step's three stages (144 KB) do not, and runs on any
/// GPU of compute capability 8.9 or newer. Not a ladder step.
// ANCHOR: mma_two_stages_sm89
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 2, vector = 8, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    epilogue = smem,
    edges = guarded,
    arch = sm_89,
)]
pub fn mma_two_stages_sm89(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: mma_two_stages_sm89

/// 8-bit floats on Ada's tensor cores (sm_89: the RTX 40 series, L4, L40S;
/// consumer Blackwell too): `mma_two_stages_sm89`'s tiling on e4m3
/// operands, `mma.sync.m16n8k32` in place of m16n8k16. A K tile of
/// 128 is the same 128 bytes of a line as the 16-bit kernel's 64, so the
/// copies, the swizzle and the ldmatrix loads are the 16-bit kernel's; A row-major and
/// B column-major (ldmatrix does not transpose 8-bit elements), the
/// per-tensor scales applied in the epilogue. Two stages, 96 KB. Not a
/// ladder step. An H100 or H200 runs it emulated (f16 mmas on converted
/// operands; 328 TFLOP/s on an H200, its bf16 twin 420): their 8-bit path
/// is wgmma (the fp8 ladder).
// ANCHOR: mma_fp8_sm89
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
)]
pub fn mma_fp8_sm89(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: mma_fp8_sm89

/// DeepGEMM's block scales on Ada's mma.sync: one f32 per row of A and
/// 128-wide K block, one per 128 x 128 block of B. A K tile is one K block,
/// whose mmas sum apart and are added into the accumulators times their
/// scales, so a thread holds two sets of sums: warps of 32 x 64 (64 floats
/// each) where `mma_fp8_sm89`'s 64 x 64 would need 256. Three stages of
/// 128 x 128 x 128, 96 KB. Not a ladder step; emulated on Hopper, as its
/// per-tensor twin is.
// ANCHOR: mma_fp8_block_sm89
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
)]
pub fn mma_fp8_block_sm89(a: Mat<F8E4M3, RowMajor>, b: Mat<F8E4M3, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: mma_fp8_block_sm89

/// Seed 003's skinny shape, 128 x 128 x 16384: a grid of one block per C
/// tile leaves most SMs idle. The tiled kernel: 64x64 tiles (4 blocks at
/// this shape), 4 warps of 32x32, K steps of 64 through 4 cp.async stages.
#[gemm_kernel(
    block(m = 64, n = 64, k = 64, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 4, vector = 8, fragments = 2),
    swizzle = xor,
    epilogue = vector,
)]
pub fn mma_skinny_tiles(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

/// The same kernel under stream-K: every resident block takes an even share
/// of the 1024 K steps, and each tile's owner adds the others' partial sums
/// in block order (deterministic).
#[gemm_kernel(
    block(m = 64, n = 64, k = 64, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 4, vector = 8, fragments = 2),
    swizzle = xor,
    persistent = stream_k,
    epilogue = vector,
)]
pub fn mma_skinny_stream_k(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

/// The Hopper ladder (sm_90a): seed 002's kernels 2 to 11, bf16 in and out,
/// A row-major and B column-major (both K-major, as the seed stores them).
/// Every step walks its tiles in `mma_autotuned`'s grouped raster (bands of
/// 8 block rows): with rows of tiles in order, `two_consumers` fell from
/// 742 to 529-478 TFLOP/s at 8192^3, its A and B tiles no longer shared in
/// the L2 by the blocks of a wave. As in the seed, the steps before
/// `fast_barriers` have every consumer thread arrive on the ring's barriers
/// (`arrivals = thread`), and those before `micro` zero the accumulators
/// before each tile (`wgmma(.., zeroed)`).
///
/// Kernel 2: one warpgroup computes a 64x64 tile with wgmma m64n64k16; K
/// tiles of 64 arrive by TMA in the 128-byte swizzle that wgmma's
/// descriptors read, completing on an mbarrier; one stage: load, wait,
/// compute. Guarded: any m, n, k (TMA fills zeros past the edges).
// ANCHOR: wgmma_tma
#[gemm_kernel(
    block(m = 64, n = 64, k = 64, threads = 128),
    warp(m = 64, n = 64),
    atom = wgmma(m64n64k16, zeroed),
    staging = tma(stages = 1),
    swizzle = b128,
    raster = grouped(8),
    epilogue = vector,
    edges = guarded,
)]
pub fn wgmma_tma(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: wgmma_tma

/// Kernel 3: 128x128 tiles, the warpgroup's wgmma m64n128k16 twice down M.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 128),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16, zeroed),
    staging = tma(stages = 1),
    swizzle = b128,
    raster = grouped(8),
    epilogue = vector,
    edges = guarded,
)]
pub fn wgmma_tile(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

/// Kernel 4: a producer warpgroup issues the copies into a ring of 5
/// stages while the consumer warpgroup computes; full and empty mbarriers
/// hand each stage back and forth.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 256),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16, zeroed),
    staging = tma(stages = 5),
    specialize(producers = 1, consumers = 1, arrivals = thread),
    swizzle = b128,
    raster = grouped(8),
    epilogue = vector,
    edges = guarded,
)]
pub fn warp_specialized(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

/// Kernel 5: 128x256 tiles split between two consumer warpgroups of 64x256
/// (wgmma m64n256k16, 128 accumulators a thread), 4 stages; `setmaxnreg`
/// leaves the producer 24 registers a thread and gives the consumers 240.
// ANCHOR: two_consumers
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16, zeroed),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, arrivals = thread),
    swizzle = b128,
    raster = grouped(8),
    epilogue = vector,
    edges = guarded,
)]
pub fn two_consumers(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: two_consumers

/// Kernel 6: `two_consumers` on a persistent grid, a block per SM walking
/// C tiles in the grouped order, the producer filling the next tile's
/// stages while the consumers store this one's C; C goes out through a
/// tile in shared memory past the stages (3 of them, to make room), in
/// 16-byte chunks side by side, as `mma_autotuned`'s does. Either change
/// alone gained less than half of what both do (BENCHMARKS.md).
// ANCHOR: persistent
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16, zeroed),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, arrivals = thread),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = smem,
    edges = guarded,
)]
pub fn persistent(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: persistent

/// Kernel 7: `persistent` with the ring's barriers in the form the PTX
/// guide alone describes: the producer's one arrival (with the stage's
/// bytes) completes "full", one elected thread per consumer warpgroup
/// arrives on "empty", and each waits on the phase's parity. The steps
/// before keep the CUDA barrier API's form (`arrivals = thread`): every
/// consumer thread arrives on both barriers and waits on its own token, 257
/// arrivals a stage where these take 1 and 2.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16, zeroed),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = smem,
    edges = guarded,
)]
pub fn fast_barriers(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

/// Kernel 9's micro-optimization that applies here: a tile's first wgmma
/// writes the accumulators (D = A * B) instead of adding to zeros, so no
/// tile starts by zeroing 128 registers a thread. (Its other two, the order
/// of a thread's stores to C and stores that bypass the caches, concern
/// stores from registers; C goes out through the C tile here, in 16-byte
/// chunks a warp writes side by side.)
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = smem,
    edges = guarded,
)]
pub fn micro(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

/// Kernel 10: `micro` with C sent out of its tile by TMA stores: one
/// thread issues them and the consumers go on to the next tile's K loop
/// while the copy engine writes C (its tile in the 128-byte swizzle, whose
/// boxes the stores read; the stores leave out what lies past C's edges).
// ANCHOR: tma_store
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
)]
pub fn tma_store(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: tma_store

/// Ping-pong consumers, on top of `tma_store`: each consumer warpgroup
/// takes whole 128x128 tiles (two 64-row wgmmas of m64n128k16) in turn
/// with the other, its K loop starting once the other's has left the ring,
/// so that one's epilogue (the fused math, the C tile, the TMA store) runs
/// while the other's wgmmas keep the tensor cores busy. Each has a C tile
/// of its own; five stages fit beside them.
// ANCHOR: pingpong
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 384),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 5),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, pingpong),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma,
    edges = guarded,
)]
pub fn pingpong(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: pingpong

/// Kernel 8 of seed 002, on top of `tma_store`: clusters of two blocks
/// stacked along m, which need the same B tile; each loads half of it and
/// TMA multicast writes that half into both blocks' stages, so B crosses
/// from the L2 once per cluster. A stage is free again only once the
/// consumers of both blocks are done with it.
// ANCHOR: clusters
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 40, consumer_regs = 232),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    cluster(m = 2, n = 1, multicast = b),
    epilogue = tma,
    edges = guarded,
)]
pub fn clusters(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: clusters

/// Kernel 11 of seed 002, on top of `clusters`: the cluster tiles in the
/// order of a Hilbert curve over their grid instead of bands, so that the
/// tiles a wave of the persistent grid holds at once stay close together
/// in both directions, and so do successive waves.
// ANCHOR: hilbert
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 40, consumer_regs = 232),
    swizzle = b128,
    raster = hilbert,
    persistent = tiles,
    cluster(m = 2, n = 1, multicast = b),
    epilogue = tma,
    edges = guarded,
)]
pub fn hilbert(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: hilbert

/// The Hopper path's best: `tma_store` as `hopper_tuned` (`src/tuned.rs`)
/// picks it at 4096^3 on the H100, four stages and raster bands of 16.
/// Four stages leave room for half the C tile beside them, so the TMA
/// store's tile goes out in two parts of 128 columns through one buffer;
/// a K step's loads then go out three steps ahead instead of two. Neither
/// clusters nor the Hilbert order paid beside TMA stores here
/// (BENCHMARKS.md).
// ANCHOR: hopper_autotuned
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(16),
    persistent = tiles,
    epilogue = tma,
    edges = guarded,
)]
pub fn hopper_autotuned(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);
// ANCHOR_END: hopper_autotuned

/// A ladder step: its kernel and what the source documents measured for it.
pub struct Step {
    /// The kernel's name; its example is `LADDER_NN_NAME` ([`example_name`]).
    pub name: &'static str,
    /// What the step changes, in a few words.
    pub change: &'static str,
    /// The seed's figure for this step, on the seed's hardware.
    pub seed: &'static str,
    pub kernel: &'static Kernel,
}

pub static STEPS: [Step; 10] = [
    Step { name: "naive", change: "one thread per C element, lanes along m", seed: "309 GFLOP/s, 1.3% of cuBLAS (A6000)", kernel: &naive::KERNEL },
    Step {
        name: "coalesced",
        change: "lanes along n: coalesced B loads and C stores",
        seed: "1987 GFLOP/s, 8.5% (A6000)",
        kernel: &coalesced::KERNEL,
    },
    Step { name: "smem_tiling", change: "32x32 tiles staged in shared memory", seed: "2980 GFLOP/s, 12.8% (A6000)", kernel: &smem_tiling::KERNEL },
    Step { name: "blocktiling_1d", change: "8 results per thread along m", seed: "8475 GFLOP/s, 36.5% (A6000)", kernel: &blocktiling_1d::KERNEL },
    Step {
        name: "blocktiling_2d",
        change: "8x8 results per thread, 128x128 tiles",
        seed: "15972 GFLOP/s, 68.7% (A6000)",
        kernel: &blocktiling_2d::KERNEL,
    },
    Step {
        name: "vectorized",
        change: "float4 global loads and stores, A transposed in smem",
        seed: "18237 GFLOP/s, 78.4% (A6000)",
        kernel: &vectorized::KERNEL,
    },
    Step {
        name: "bank_conflicts",
        change: "shared-memory rows padded by 4 floats",
        seed: "(kernels 7-8: padding / linearized smem)",
        kernel: &bank_conflicts::KERNEL,
    },
    Step {
        name: "warptiling",
        change: "block -> warp -> thread tiers (the search's tiles, sweep, raster, scalar C)",
        seed: "21779 GFLOP/s, 93.7% (A6000)",
        kernel: &warptiling::KERNEL,
    },
    Step {
        name: "double_buffering",
        change: "two smem buffers, 128x128x8: next tile loads during math",
        seed: "(a later step of the seed's kernel 10 family)",
        kernel: &double_buffering::KERNEL,
    },
    Step {
        name: "autotuned",
        change: "the search's best: cp.async, stream-K schedule",
        seed: "19721 GFLOP/s, 84.8% (A6000, before warptiling)",
        kernel: &autotuned::KERNEL,
    },
];

/// The tensor-core ladder.
pub static TENSOR_STEPS: [Step; 7] = [
    Step {
        name: "wmma_warp",
        change: "wmma 16x16x16, one warp per block, fragments from global memory (f16 -> f32)",
        seed: "(004's first kernel on an RTX 4080)",
        kernel: &wmma_warp::KERNEL,
    },
    Step {
        name: "wmma_block",
        change: "64x64 tiles of 4 warps, 16x64 strips of 4 atoms",
        seed: "(004's second kernel)",
        kernel: &wmma_block::KERNEL,
    },
    Step { name: "wmma_wide", change: "128x128 tiles of 8 warps", seed: "13 TFLOP/s (004, RTX 4080)", kernel: &wmma_wide::KERNEL },
    Step {
        name: "mma_ldmatrix",
        change: "mma.sync m16n8k16 from smem tiles by ldmatrix, bf16 in and out",
        seed: "(003's tensor-core section)",
        kernel: &mma_ldmatrix::KERNEL,
    },
    Step { name: "mma_pipeline", change: "3-stage cp.async pipeline", seed: "(003: cp.async, software pipelining)", kernel: &mma_pipeline::KERNEL },
    Step {
        name: "mma_swizzle",
        change: "xor swizzle of 16-byte chunks instead of padding",
        seed: "(003: swizzle vs padding)",
        kernel: &mma_swizzle::KERNEL,
    },
    Step { name: "mma_autotuned", change: "the search's best mma spec", seed: "", kernel: &mma_autotuned::KERNEL },
];

/// The Hopper ladder (sm_90a: TMA, wgmma, warp specialization).
pub static HOPPER_STEPS: [Step; 12] = [
    Step {
        name: "wgmma_tma",
        change: "wgmma m64n64k16 on 64x64 tiles, TMA loads on an mbarrier, 128B swizzle",
        seed: "317 TFLOP/s (002, H100)",
        kernel: &wgmma_tma::KERNEL,
    },
    Step { name: "wgmma_tile", change: "128x128 tiles, wgmma m64n128k16", seed: "423 TFLOP/s (002)", kernel: &wgmma_tile::KERNEL },
    Step {
        name: "warp_specialized",
        change: "a producer warpgroup, a consumer, a ring of 5 stages",
        seed: "498 TFLOP/s (002)",
        kernel: &warp_specialized::KERNEL,
    },
    Step {
        name: "two_consumers",
        change: "128x256 tiles, two consumer warpgroups, setmaxnreg 24/240",
        seed: "610, then 631 TFLOP/s with setmaxnreg (002)",
        kernel: &two_consumers::KERNEL,
    },
    Step {
        name: "persistent",
        change: "a persistent grid, C through a tile in shared memory: the producer fills the next tile's stages while C goes out",
        seed: "660 TFLOP/s (002)",
        kernel: &persistent::KERNEL,
    },
    Step {
        name: "fast_barriers",
        change: "the ring's barriers in PTX's form: 1 arrival on full and 2 on empty a stage, not every thread's 257, parity waits",
        seed: "704 TFLOP/s (002, kernel 7)",
        kernel: &fast_barriers::KERNEL,
    },
    Step {
        name: "micro",
        change: "a tile's first wgmma writes the accumulators: none zeroed",
        seed: "747 TFLOP/s (002, kernel 9, with its store order and cache hints)",
        kernel: &micro::KERNEL,
    },
    Step {
        name: "tma_store",
        change: "C out of its tile by TMA stores, the consumers on to the next tile at once",
        seed: "758 TFLOP/s (002, kernel 10)",
        kernel: &tma_store::KERNEL,
    },
    Step {
        name: "pingpong",
        change: "consumers take 128x128 tiles in turn: one's epilogue beside the other's wgmmas",
        seed: "(CUTLASS's ping-pong schedule; not in seed 002)",
        kernel: &pingpong::KERNEL,
    },
    Step {
        name: "clusters",
        change: "clusters of 2 blocks along m, B multicast into both by TMA",
        seed: "734 TFLOP/s (002, kernel 8)",
        kernel: &clusters::KERNEL,
    },
    Step {
        name: "hilbert",
        change: "cluster tiles along a Hilbert curve",
        seed: "764 TFLOP/s, 107% of cuBLAS (002, kernel 11)",
        kernel: &hilbert::KERNEL,
    },
    Step {
        name: "hopper_autotuned",
        change: "tma_store as hopper_tuned picks it at 4096^3: 4 stages, the C tile out in two parts, bands of 16",
        seed: "(hopper_tuned's choice at 4096^3; seed 002's best: 764, 107% of cuBLAS on its H100)",
        kernel: &hopper_autotuned::KERNEL,
    },
];

/// The fp8 ladder (sm_90a: e4m3 operands, f32 accumulators, bf16 C), timed
/// beside cuBLASLt's fp8 GEMM in its default mode.
pub static FP8_STEPS: [Step; 5] = [
    Step {
        name: "fp8_wgmma",
        change: "wgmma_tile on e4m3: m64n128k32, K tiles of 128 (one swizzle row), per-tensor scales",
        seed: "(DeepGEMM, CUTLASS 54: the same instructions)",
        kernel: &crate::fp8::fp8_wgmma::KERNEL,
    },
    Step {
        name: "fp8_tma_store",
        change: "hopper_autotuned's form: a producer, two consumers of 64 x 256, a persistent walk, TMA stores",
        seed: "",
        kernel: &crate::fp8::fp8_tma_store::KERNEL,
    },
    Step {
        name: "fp8_promoted",
        change: "each stage's sums added into f32 (cuBLASLt's default accuracy) while the next stage's wgmmas run, 64 x 128 consumers",
        seed: "(DeepGEMM's promotion every 128 of K)",
        kernel: &crate::fp8::fp8_promoted::KERNEL,
    },
    Step {
        name: "fp8_block_scaled",
        change: "DeepGEMM's 1 x 128 and 128 x 128 scales, staged with each stage's tiles; five stages",
        seed: "DeepGEMM: up to 1550 TFLOP/s on an H800 (its own shapes)",
        kernel: &crate::fp8::fp8_block_scaled::KERNEL,
    },
    Step {
        name: "fp8_autotuned",
        change: "fp8_promoted as fp8_tuned picks it at 4096^3: bands of 32 tiles",
        seed: "(fp8_tuned's choice at 4096^3)",
        kernel: &crate::fp8::fp8_autotuned::KERNEL,
    },
];

/// Every step: the four ladders, then the split-K row and the kernels for
/// GPUs of 99 KB a block.
pub fn all() -> impl Iterator<Item = &'static Step> {
    STEPS.iter().chain(&TENSOR_STEPS).chain(&HOPPER_STEPS).chain(&FP8_STEPS).chain(&SPLIT_K_STEPS).chain(&SMALL_SM_STEPS)
}

/// Beside the sm_80 ladder, for GPUs that give a block 99 KB of shared
/// memory (compute capability 8.6, 8.9, 12.0): its tuned step in two
/// stages, the same tiling on 8-bit floats (Ada, consumer Blackwell), and
/// 8-bit floats with DeepGEMM's block scales.
pub static SMALL_SM_STEPS: [Step; 3] = [
    Step {
        name: "mma_two_stages_sm89",
        change: "mma_autotuned in two stages: 96 KB, within the 99 KB a block gets on Ampere's and Ada's consumer GPUs",
        seed: "",
        kernel: &mma_two_stages_sm89::KERNEL,
    },
    Step {
        name: "mma_fp8_sm89",
        change: "e4m3 operands by mma.sync m16n8k32 (sm_89): K tiles of 128, the same bytes a line",
        seed: "",
        kernel: &mma_fp8_sm89::KERNEL,
    },
    Step {
        name: "mma_fp8_block_sm89",
        change: "DeepGEMM's 1 x 128 and 128 x 128 scales: each K tile's sums scaled into the accumulators, warps of 32 x 64",
        seed: "",
        kernel: &mma_fp8_block_sm89::KERNEL,
    },
];

/// The example that runs step `name` alone: its ladder (`simt`, `tensor`,
/// `hopper`, `fp8`), its place on it and its name, as
/// `hopper_12_hopper_autotuned`, so that `cargo run --example` lists each
/// ladder in order.
pub fn example_name(name: &str) -> Option<String> {
    [("simt", &STEPS[..]), ("tensor", &TENSOR_STEPS[..]), ("hopper", &HOPPER_STEPS[..]), ("fp8", &FP8_STEPS[..])]
        .iter()
        .find_map(|(ladder, steps)| steps.iter().position(|s| s.name == name).map(|i| format!("{ladder}_{:02}_{name}", i + 1)))
}

/// The step named `name`, on any ladder or the split-K row.
pub fn step(name: &str) -> Option<&'static Step> {
    all().find(|s| s.name == name)
}

/// Seed 003's split-K row: its skinny shape with one block per tile, then
/// split along K by stream-K (`examples/split_k.rs`, at 128 x 128 x 16384).
pub static SPLIT_K_STEPS: [Step; 2] = [
    Step { name: "mma_skinny_tiles", change: "one block per 64x64 C tile: 4 blocks", seed: "", kernel: &mma_skinny_tiles::KERNEL },
    Step {
        name: "mma_skinny_stream_k",
        change: "stream-K: K steps split over every resident block",
        seed: "SPLITK=32: 25 us, 11x SPLITK=1 (003, f32, a 170-SM GPU)",
        kernel: &mma_skinny_stream_k::KERNEL,
    },
];
