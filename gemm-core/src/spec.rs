//! The kernel spec: a GEMM kernel described by its tiers, as plain data.
//!
//! The macro builds one from an attribute at `cargo build` time; tools (the ladder,
//! benches, a tuner) can build them at run time. Every field is honoured by the
//! generator or rejected by [`crate::check()`], never ignored.

use std::borrow::Cow;
use std::fmt;

/// Element type of an operand in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    F32,
    F16,
    Bf16,
    /// 8-bit float, 4 exponent bits and 3 mantissa bits (`float8::F8E4M3`): wgmma's `e4m3`.
    F8E4M3,
    /// 8-bit float, 5 exponent bits and 2 mantissa bits (`float8::F8E5M2`): wgmma's `e5m2`.
    F8E5M2,
}

impl Elem {
    pub const fn bytes(self) -> u32 {
        match self {
            Elem::F32 => 4,
            Elem::F16 | Elem::Bf16 => 2,
            Elem::F8E4M3 | Elem::F8E5M2 => 1,
        }
    }

    /// One of the 8-bit floats, which wgmma and (on sm_89 and sm_120) mma.sync multiply (K = 32 an atom).
    pub const fn is_fp8(self) -> bool {
        matches!(self, Elem::F8E4M3 | Elem::F8E5M2)
    }

    /// The Rust type name, as written in a signature.
    pub const fn rust_name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
            Elem::F8E4M3 => "F8E4M3",
            Elem::F8E5M2 => "F8E5M2",
        }
    }

    /// Widest vector load in elements: 16 bytes.
    pub const fn max_vector(self) -> u32 {
        16 / self.bytes()
    }
}

/// Storage order of a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    RowMajor,
    ColMajor,
}

impl Layout {
    pub const fn letter(self) -> char {
        match self {
            Layout::RowMajor => 'r',
            Layout::ColMajor => 'c',
        }
    }
}

/// One matrix operand: what it holds and how it is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Operand {
    pub elem: Elem,
    pub layout: Layout,
}

/// A dimension of the problem, for lane orders and requirements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    M,
    N,
}

/// The CTA tier: one block computes a `m x n` tile of C, consuming K `k` at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    pub m: u32,
    pub n: u32,
    /// K step of the staged tiles; `None` where nothing is staged (direct loads).
    pub k: Option<u32>,
    pub threads: u32,
    /// Blocks the compiler must fit on one SM at once (`__launch_bounds__`'s
    /// second argument): caps registers per thread at 64K / (threads x this).
    pub min_blocks: Option<u32>,
}

/// The warp tier: one warp owns a `m x n` sub-tile of the block tile, covered in
/// `m_iters x n_iters` steps of its lanes' thread tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Warp {
    pub m: u32,
    pub n: u32,
    pub m_iters: u32,
    pub n_iters: u32,
}

/// The thread tier (SIMT): each thread owns `m x n` accumulators per warp iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadTile {
    pub m: u32,
    pub n: u32,
    /// The dimension consecutive threads step along. Along C's contiguous
    /// dimension, a warp's accesses coalesce; along the other they do not.
    pub lanes: Dim,
    /// The dimension consecutive FMAs of the thread's outer product step
    /// along: `N` holds one A element while its row of FMAs issues, `M` one
    /// B element for its column. The math is the same; the register
    /// allocation and instruction schedule the compiler derives differ.
    pub sweep: Dim,
}

/// The instruction that does the math.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Atom {
    /// One fused multiply-add per thread (SIMT).
    Fma,
    /// `mma.sync` (sm_80): m16n8k16 for f16/bf16; m16n8k32 for 8-bit floats (sm_89, sm_120).
    Mma { m: u32, n: u32, k: u32 },
    /// `wmma` fragments: 16x16x16.
    Wmma { m: u32, n: u32, k: u32 },
    /// `wgmma.mma_async` (sm_90a): m64nNk16, issued by a warpgroup. A
    /// tile's first wgmma writes the accumulators (D = A * B) and the rest
    /// add to them; `zeroed`: the accumulators are zeroed before each tile
    /// and every wgmma adds (seed 002's kernels before its ninth, kept as
    /// the ladder's "before"). `promote`: each stage's wgmmas sum into
    /// registers of their own, which are then added into the accumulators
    /// in f32 (8-bit products' sums keep fewer bits in the tensor cores).
    Wgmma { m: u32, n: u32, k: u32, zeroed: bool, promote: bool },
}

impl Atom {
    pub const fn name(self) -> &'static str {
        match self {
            Atom::Fma => "fma",
            Atom::Mma { .. } => "mma",
            Atom::Wmma { .. } => "wmma",
            Atom::Wgmma { .. } => "wgmma",
        }
    }

    /// The atom's (m, n, k) tile; 1x1x1 for a scalar FMA.
    pub const fn shape(self) -> (u32, u32, u32) {
        match self {
            Atom::Fma => (1, 1, 1),
            Atom::Mma { m, n, k } | Atom::Wmma { m, n, k } | Atom::Wgmma { m, n, k, .. } => (m, n, k),
        }
    }
}

/// How A and B travel global -> shared -> registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Staging {
    /// Straight from global memory into registers; no shared memory.
    Direct,
    /// Synchronous copies into shared memory: `vector` elements per load,
    /// A stored transposed (`[k][m]`) if asked, `buffers` tiles in flight.
    Smem { vector: u32, transpose_a: bool, buffers: u32 },
    /// `cp.async` copies straight into shared memory, `stages` tiles deep: no
    /// registers hold a tile in flight. An operand whose shared layout
    /// transposes its global one (A with `transpose_a`) is copied an element
    /// (4 bytes) at a time; the others `vector` elements at a time.
    /// `fragments` sets of operand fragments in registers: 1 loads a K step's
    /// fragments right before its math; 2 (mma) loads them a step ahead, so
    /// shared-memory latency overlaps the previous step's math, at the cost
    /// of a second set of registers.
    CpAsync { stages: u32, vector: u32, transpose_a: bool, fragments: u32 },
    /// TMA bulk tensor copies completing on mbarriers, `stages` tiles deep.
    /// With `cp_async: Some(..)` the producer warpgroup fills the same
    /// swizzled stages, of both operands or of one, by `cp.async` copies
    /// ([`RingCopies`]), which arrive on the same mbarriers: the variant
    /// the launcher runs for A or B whose lines TMA cannot take (not
    /// 16-byte aligned), generated from the same spec (`gemm-runtime`'s
    /// `realign`).
    /// `prefetch`: K steps of the block's tile that a dependent launch
    /// prefetches into the L2 before it waits for the stream's previous
    /// kernel; with it, each block lets the stream's next dependent launch
    /// start once its last copy is issued (0: neither).
    /// `evict_first`: the operands whose TMA loads ask the L2 to evict
    /// their lines first ([`EvictFirst`]).
    /// `by_class`: A, B and C read and written where they lie, their lines
    /// 8 bytes aligned (2 for C), by tensor maps a class of lines at a time
    /// (the cuda module `by_class`): the launcher's variant of a
    /// specialized TMA kernel for such lines, generated from the same spec
    /// where [`KernelSpec::by_class_fits`].
    Tma { stages: u32, cp_async: Option<RingCopies>, prefetch: u32, evict_first: EvictFirst, by_class: bool },
}

/// Operands whose TMA loads ask the L2 to evict their lines before others
/// (`tma(evict_first = a)`, `b` or `ab`): an operand each block reads once
/// and no other block reads, as a decode step's weight, streams through
/// the L2 without pushing out what is read again (the few tokens, the
/// lines a dependent launch prefetches ahead of its wait). The one-token
/// step over a 4096 x 4096 weight, launched dependent, went from 78.6% of
/// the H100's HBM to 83.6% (BENCHMARKS.md). Loads that multicast or
/// cp.async fill take no hint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EvictFirst {
    pub a: bool,
    pub b: bool,
}

impl EvictFirst {
    /// Whether operand `which`'s loads ask to leave the L2 first.
    pub fn of(self, which: Which) -> bool {
        match which {
            Which::A => self.a,
            Which::B => self.b,
        }
    }

    /// The attribute's value: `a`, `b` or `ab` (empty for neither).
    pub fn name(self) -> &'static str {
        match (self.a, self.b) {
            (true, true) => "ab",
            (true, false) => "a",
            (false, true) => "b",
            (false, false) => "",
        }
    }
}

/// The producer warpgroup's `cp.async` copies that fill TMA's stages in
/// its variant for lines TMA cannot read: `vector` elements a copy, of
/// both operands, or `only` of one while TMA still loads the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RingCopies {
    pub vector: u32,
    pub only: Option<Which>,
}

impl RingCopies {
    /// Both operands copied, `vector` elements a copy.
    pub const fn both(vector: u32) -> Self {
        RingCopies { vector, only: None }
    }

    /// Whether the copies fill operand `which`'s stages (else TMA does).
    pub fn fills(self, which: Which) -> bool {
        self.only.is_none_or(|o| o == which)
    }
}

impl Staging {
    /// TMA's stages alone: no cp.async fill, no L2 prefetch, no evict-first hint.
    pub const fn tma(stages: u32) -> Staging {
        Staging::Tma { stages, cp_async: None, prefetch: 0, evict_first: EvictFirst { a: false, b: false }, by_class: false }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Staging::Direct => "direct",
            Staging::Smem { .. } => "smem",
            Staging::CpAsync { .. } => "cp_async",
            Staging::Tma { .. } => "tma",
        }
    }

    /// Elements per global load of one thread.
    pub const fn vector(self) -> u32 {
        match self {
            Staging::Direct | Staging::Tma { .. } => 1,
            Staging::Smem { vector, .. } | Staging::CpAsync { vector, .. } => vector,
        }
    }

    /// Sets of operand fragments held in registers at once.
    pub const fn fragment_sets(self) -> u32 {
        match self {
            Staging::CpAsync { fragments, .. } => fragments,
            _ => 1,
        }
    }

    /// Whether A is stored transposed (`[k][m]`) in shared memory.
    pub const fn transpose_a(self) -> bool {
        matches!(self, Staging::Smem { transpose_a: true, .. } | Staging::CpAsync { transpose_a: true, .. })
    }

    /// Tiles of A and B resident in shared memory at once.
    pub const fn smem_tiles(self) -> u32 {
        match self {
            Staging::Direct => 0,
            Staging::Smem { buffers, .. } => buffers,
            Staging::CpAsync { stages, .. } | Staging::Tma { stages, .. } => stages,
        }
    }
}

/// Warp specialization: producer warpgroups feed consumer warpgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Specialize {
    pub producers: u32,
    pub consumers: u32,
    /// `setmaxnreg` registers per thread for producers and consumers.
    pub producer_regs: Option<u32>,
    pub consumer_regs: Option<u32>,
    /// Consumers take whole block tiles in turn (each tile one warpgroup's)
    /// instead of sharing each tile: one's epilogue runs while the next
    /// one's wgmmas do ("ping-pong").
    pub pingpong: bool,
    /// Who arrives on a stage's barriers.
    pub arrivals: Arrivals,
    /// Each consumer's two wgmma atoms along n commit as groups of their
    /// own, and each one's epilogue runs beside the other's wgmmas: the
    /// first half of C's tile while the second's last K step computes, the
    /// second while the first half of the next tile's first K steps do (as
    /// many as the ring holds but one).
    /// On the H100 it took the fused linear layer's epilogue from 3.9% to
    /// 1.3-2.6% with four stages; with three, the halves ran 7% slower than
    /// one atom (BENCHMARKS.md).
    /// On a promoted consumer (`wgmma(.., promote)`, `scale = block`),
    /// whose tile is one atom: the next tile's first stage's wgmmas run
    /// beside this tile's epilogue.
    pub overlap: bool,
}

/// Who arrives on a ring stage's mbarriers in a specialized kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Arrivals {
    /// The producer's one arrival (with the stage's bytes) on "full", one
    /// per consumer warpgroup on "empty"; waits on the phase's parity.
    #[default]
    Warpgroup,
    /// Every thread arrives on both barriers and waits on its own arrival's
    /// token: the CUDA barrier API's `wait(arrive())`, 257 arrivals a stage
    /// with two consumers, that seed 002's kernel 7 replaced (kept as the
    /// ladder's "before").
    Thread,
}

/// Shared-memory layout against bank conflicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Swizzle {
    None,
    /// Each shared-memory row padded by this many elements.
    Pad(u32),
    /// XOR of the 16-byte chunk index with the row (ldmatrix friendly).
    Xor,
    /// The TMA/wgmma swizzle modes, by width in bytes.
    B32,
    B64,
    B128,
}

impl Swizzle {
    /// Bytes of the TMA swizzle atom's row, for the TMA modes.
    pub const fn tma_bytes(self) -> Option<u32> {
        match self {
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            Swizzle::B128 => Some(128),
            _ => None,
        }
    }
}

/// Order in which CTAs walk the tiles of C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Raster {
    /// blockIdx.x along the N tiles, blockIdx.y along the M tiles.
    Row,
    /// Groups of this many M tiles walked column by column, for L2 reuse.
    Grouped(u32),
    /// Tiles along a Hilbert curve.
    Hilbert,
}

/// A persistent grid: as many blocks as the GPU holds at once, each walking
/// several units of work instead of one block per C tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Persistent {
    /// Each block takes whole C tiles in turn.
    Tiles,
    /// Each block takes whole C tiles from a queue (a count in global
    /// memory) as it is ready for the next one: a block that starts late,
    /// its SM held by another kernel's CTAs (a collective's beside it),
    /// takes fewer tiles, where under `Tiles` its fixed share would hold
    /// the launch's end back.
    Queue,
    /// Stream-K: the K steps of all tiles are split evenly over the blocks, so
    /// no last wave runs part-full; a tile split between blocks is summed by
    /// the block holding its first K step, in a fixed order.
    StreamK,
    /// The data-parallel + stream-K hybrid: whole waves of C tiles as in
    /// `Tiles`, a tile a block at a time, then the K steps of the tiles left
    /// (fewer than the grid) split evenly over the blocks as in `StreamK`,
    /// the blocks in step along K: only the last, part-full wave is shared.
    Hybrid,
    /// Whole waves as in `Hybrid`; then each tile left split along K into
    /// equal pieces (as many as the grid holds, at most 8), a block to a
    /// piece, all begun at once: the blocks that read the same slices of A
    /// and B read them in step, as a wave does.
    TailSplit,
}

impl Persistent {
    /// Whether blocks share C tiles along K (stream-K's shares, ticket,
    /// partial sums and flags).
    pub fn splits_k(self) -> bool {
        matches!(self, Persistent::StreamK | Persistent::Hybrid | Persistent::TailSplit)
    }

    /// Whether blocks walk whole C tiles (`Tiles` or `Queue`).
    pub fn whole_tiles(self) -> bool {
        matches!(self, Persistent::Tiles | Persistent::Queue)
    }
}

/// Which operand a cluster multicasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Which {
    A,
    B,
}

/// Thread block cluster (sm_90a), with optional TMA multicast of one operand.
/// `m` x `n` blocks take a cluster tile of as many block tiles; `k` > 1
/// blocks instead share one block tile along K, each streaming its part of
/// the K steps, the others' partial sums passed to rank 0 through its
/// shared memory (distributed shared memory), which adds them in rank
/// order and stores C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cluster {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub multicast: Option<Which>,
}

/// How accumulators reach C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Epilogue {
    /// Each thread stores its accumulators.
    Direct,
    /// Vectorized stores of contiguous accumulators.
    Vector,
    /// Staged through shared memory for coalesced stores.
    Smem,
    /// Staged through shared memory like `Smem`, the C tile then stored in
    /// 16-byte chunks aligned to C's own lines (16-bit C; f32 an element a
    /// thread), a warp's side by side: C at any alignment (an
    /// odd leading dimension, a view at an odd element), the variant a
    /// launch runs where `Smem`'s or `Tma`'s stores cannot take its C.
    SmemElements,
    /// TMA store from shared memory.
    Tma,
    /// `stmatrix` into shared memory, then stores.
    Stmatrix,
}

/// The block's C tile in shared memory under `epilogue = smem`
/// ([`KernelSpec::c_tile`]): `lines` lines of `line` elements of C's type,
/// `ld` elements apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CTile {
    pub lines: u32,
    pub line: u32,
    pub ld: u32,
    /// `epilogue = tma`: the tile goes out in this many parts along its
    /// lines, each through a buffer of `line / parts` elements a line, where
    /// the whole tile would leave the stages too little shared memory (see
    /// [`KernelSpec::c_tile_parts`]); 1 elsewhere.
    pub parts: u32,
    /// `epilogue = smem_elements` on the Hopper path: the tile goes out in
    /// this many bands of `lines / bands` lines (rows of a row-major C, whole
    /// wgmma atoms tall), each through a buffer that size, where the whole
    /// tile would leave the spec's stages too little shared memory (see
    /// [`KernelSpec::c_tile_bands`]); 1 elsewhere.
    pub bands: u32,
}

/// What the epilogue computes from the accumulators, in f32, before C is
/// rounded to its type: `C = act(alpha * acc + beta * C + bias)`, each part
/// present only where the spec asks for it (the default is `C = acc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fused {
    /// `alpha` is a run-time argument that scales the product.
    pub alpha: bool,
    /// `beta` is a run-time argument; C is read (and scaled by it) only
    /// where it is not 0, so a C of NaNs is fine with `beta = 0`, as in BLAS.
    pub beta: bool,
    pub bias: Option<Bias>,
    pub activation: Option<Activation>,
    /// Scales of A and B, run-time device arguments, multiplying the
    /// product in f32 before the rest (an 8-bit operand's dequantization).
    pub scale: Option<Scale>,
    /// A gated linear unit (`gated`, SwiGLU's with `activation = silu`):
    /// the product's columns come in interleaved pairs, column `2j` the
    /// gate and `2j + 1` the up-projection of output column `j`, and C
    /// (n / 2 columns) takes `act(gate) * up`, each side through the math
    /// above but for the activation, which only the gate takes.
    pub gated: bool,
}

/// How A and B are scaled: f32 device buffers read by the kernel, so that
/// a CUDA graph replays whatever they hold at launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scale {
    /// One f32 for A and one for B (`scale = tensor`), as cuBLASLt's scale
    /// pointers: `C = scale_a[0] * scale_b[0] * A * B`.
    Tensor,
    /// One f32 per row of A (length m) and one per column of B (length n)
    /// (`scale = channel`): `C[r][c] = scale_a[r] * scale_b[c] * (A * B)[r][c]`.
    Channel,
    /// DeepGEMM's blocks (`scale = block`): one f32 per row of A and 128-wide
    /// K block, stored K block after K block with rows contiguous
    /// ([`block_scales_a_len`]), and one per 128 x 128 block of B (n / 128
    /// rows of k / 128, [`block_scales_b_len`]); each K block's sums are
    /// multiplied by their two scales as they are added into the f32
    /// accumulators.
    Block,
}

/// The K (and N) extent of a scale block under `scale = block`.
pub const SCALE_BLOCK: u32 = 128;

/// K blocks of B's scales a consumer by atom rows holds in shared memory at
/// once ([`KernelSpec::b_scale_window_bytes`]): 1 KB, a whole tile's K up
/// to 32768; a longer K loads the next window as its loop reaches it.
pub const B_SCALE_WINDOW: u32 = 256;

/// The rows between two K blocks' scales of A under `scale = block`: m
/// rounded up to 4 (16 bytes, DeepGEMM's layout, which TMA can load).
pub fn block_scales_a_ld(m: usize) -> usize {
    m.div_ceil(4) * 4
}

/// The f32s of A's scales under `scale = block`: `[ceil(k / 128)][ld]`
/// with `ld` = [`block_scales_a_ld`]`(m)`; A's row `r` in K block `kb` at
/// `kb * ld + r`.
pub fn block_scales_a_len(m: usize, k: usize) -> usize {
    k.div_ceil(SCALE_BLOCK as usize) * block_scales_a_ld(m)
}

/// The f32s of B's scales under `scale = block`: `[ceil(n / 128)][ceil(k / 128)]`,
/// B's 128 x 128 block `(nb, kb)` at `nb * ceil(k / 128) + kb`.
pub fn block_scales_b_len(n: usize, k: usize) -> usize {
    n.div_ceil(SCALE_BLOCK as usize) * k.div_ceil(SCALE_BLOCK as usize)
}

impl Scale {
    /// The word the attribute writes: `tensor`, `channel` or `block`.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Tensor => "tensor",
            Scale::Channel => "channel",
            Scale::Block => "block",
        }
    }

    /// The f32s the kernel reads of A's and of B's scale buffers for a batch
    /// of `count` problems of `m x n x k` whose A and B lie `strides` apart:
    /// under `scale = block` each problem's scales follow the one before's
    /// (packed, [`Self::lens`] apart), but an operand the batch shares
    /// (stride 0) shares its scales too; one problem's otherwise.
    pub fn batch_lens(self, m: usize, n: usize, k: usize, (count, stride_a, stride_b): (usize, usize, usize)) -> (usize, usize) {
        let (a, b) = self.lens(m, n, k);
        let of = |len: usize, stride: usize| if self == Scale::Block && count > 1 && stride != 0 { len.saturating_mul(count) } else { len };
        (of(a, stride_a), of(b, stride_b))
    }

    /// The f32s the kernel reads of A's and of B's scale buffers for one
    /// problem of `m x n x k`.
    pub fn lens(self, m: usize, n: usize, k: usize) -> (usize, usize) {
        match self {
            Scale::Tensor => (1, 1),
            Scale::Channel => (m, n),
            Scale::Block => (block_scales_a_len(m, k), block_scales_b_len(n, k)),
        }
    }
}

impl Fused {
    /// Whether the epilogue computes anything beyond `C = acc`.
    pub fn any(&self) -> bool {
        *self != Fused::default()
    }
}

/// A bias vector added before the activation: one value per column of C
/// (`along = N`, length n) or per row (`along = M`, length m).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bias {
    pub along: Dim,
    pub elem: Elem,
}

/// An activation applied elementwise after the bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    /// `max(x, 0)`.
    Relu,
    /// `x * Phi(x)` with the exact normal CDF (erf): PyTorch's `GELU()`.
    Gelu,
    /// The tanh approximation: PyTorch's `GELU(approximate = "tanh")`, cuBLASLt's GELU.
    GeluTanh,
    /// `x * sigmoid(x)`.
    Silu,
}

impl Epilogue {
    /// The name the attribute grammar gives it.
    pub const fn name(self) -> &'static str {
        match self {
            Epilogue::Direct => "direct",
            Epilogue::Vector => "vector",
            Epilogue::Smem => "smem",
            Epilogue::SmemElements => "smem_elements",
            Epilogue::Tma => "tma",
            Epilogue::Stmatrix => "stmatrix",
        }
    }
}

impl Activation {
    pub const fn name(self) -> &'static str {
        match self {
            Activation::Relu => "relu",
            Activation::Gelu => "gelu",
            Activation::GeluTanh => "gelu_tanh",
            Activation::Silu => "silu",
        }
    }

    /// The activation in f64, as the host references compute it.
    pub fn apply(self, x: f64) -> f64 {
        match self {
            Activation::Relu => x.max(0.0),
            Activation::Gelu => 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)),
            Activation::GeluTanh => 0.5 * x * (1.0 + (0.797_884_560_802_865_4 * (x + 0.044715 * x * x * x)).tanh()),
            Activation::Silu => x / (1.0 + (-x).exp()),
        }
    }
}

/// The error function to about 1e-14 (a Taylor series near 0, a continued
/// fraction of erfc beyond), for host references: Rust's std has none.
fn erf(x: f64) -> f64 {
    let a = x.abs();
    let r = if a < 2.5 {
        // erf(a) = 2/sqrt(pi) * sum (-1)^n a^(2n+1) / (n! (2n+1))
        let (mut term, mut sum, mut n) = (a, a, 0.0);
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -a * a / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else {
        // erfc(a) = exp(-a^2)/sqrt(pi) * 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...))))
        let mut f = a;
        for k in (1..60).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * f)
    };
    r.copysign(x)
}

/// Whether a kernel handles partial tiles at the edges of M, N and K.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Edges {
    /// m, n and k must be multiples of the block tile: nothing is guarded.
    Whole,
    /// Any m, n and k: copies past an edge fill zeros, stores past it are skipped.
    Guarded,
}

/// Target architecture: the oldest GPU the kernel runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Arch {
    /// Ampere's A100 (and A30), 163 KB of shared memory a block.
    Sm80,
    /// Ampere's consumer and workstation GPUs (RTX 30 series, A6000), 99 KB a block.
    Sm86,
    /// Ada (RTX 40 series, L4, L40S), 99 KB a block.
    Sm89,
    Sm90,
    /// Hopper with its arch-specific features (wgmma, setmaxnreg); runs on sm_90 only.
    Sm90a,
    /// Blackwell.
    Sm100,
    /// Blackwell's consumer GPUs (RTX 50 series), 99 KB a block.
    Sm120,
}

impl Arch {
    /// The NVRTC `--gpu-architecture` value.
    pub const fn nvrtc_name(self) -> &'static str {
        match self {
            Arch::Sm80 => "sm_80",
            Arch::Sm86 => "sm_86",
            Arch::Sm89 => "sm_89",
            Arch::Sm90 => "sm_90",
            Arch::Sm90a => "sm_90a",
            Arch::Sm100 => "sm_100",
            Arch::Sm120 => "sm_120",
        }
    }

    /// Whether a kernel built for this arch runs on a device of compute
    /// capability `device` (as the driver reports it): one at least as new,
    /// and for sm_90a (wgmma, TMA, setmaxnreg: features of Hopper alone)
    /// exactly 9.0.
    pub fn runs_on(self, device: (i32, i32)) -> bool {
        self.new_enough(device) && (self != Arch::Sm90a || device == (9, 0))
    }

    /// Whether a device of compute capability `device` is at least as new as this arch.
    pub fn new_enough(self, device: (i32, i32)) -> bool {
        let (major, minor) = self.capability();
        device >= (major as i32, minor as i32)
    }

    /// Compute capability (major, minor).
    pub const fn capability(self) -> (u32, u32) {
        match self {
            Arch::Sm80 => (8, 0),
            Arch::Sm86 => (8, 6),
            Arch::Sm89 => (8, 9),
            Arch::Sm90 | Arch::Sm90a => (9, 0),
            Arch::Sm100 => (10, 0),
            Arch::Sm120 => (12, 0),
        }
    }

    /// Whether GPUs of this arch give a block 99 KB of shared memory and an
    /// SM 1536 threads (compute capability 8.6, 8.9 and 12.0).
    const fn small_sm(self) -> bool {
        matches!(self, Arch::Sm86 | Arch::Sm89 | Arch::Sm120)
    }

    /// Shared memory of one SM, shared by its resident blocks.
    pub const fn smem_per_sm(self) -> u32 {
        match self {
            _ if self.small_sm() => 100 * 1024,
            Arch::Sm80 => 164 * 1024,
            _ => 228 * 1024,
        }
    }

    /// Most shared memory one block may use (opt-in dynamic limit).
    pub const fn smem_limit(self) -> u32 {
        match self {
            _ if self.small_sm() => 99 * 1024,
            Arch::Sm80 => 163 * 1024,
            _ => 227 * 1024,
        }
    }

    /// Most threads an SM holds at once.
    pub const fn threads_per_sm(self) -> u32 {
        if self.small_sm() {
            1536
        } else {
            2048
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.nvrtc_name())
    }
}

/// A complete kernel description.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    /// The Rust name the kernel was declared under; prefixes the CUDA name.
    pub name: Cow<'static, str>,
    pub a: Operand,
    pub b: Operand,
    pub c: Operand,
    pub block: Block,
    pub warp: Option<Warp>,
    pub thread: Option<ThreadTile>,
    pub atom: Atom,
    pub staging: Staging,
    pub specialize: Option<Specialize>,
    pub swizzle: Swizzle,
    pub raster: Raster,
    pub persistent: Option<Persistent>,
    pub cluster: Option<Cluster>,
    pub epilogue: Epilogue,
    /// What the epilogue computes on its way to C.
    pub fused: Fused,
    pub edges: Edges,
    /// Problems of a batch as groups of rows (mixture-of-experts layers).
    pub groups: Option<Groups>,
    pub arch: Arch,
}

/// How a batch's problems hold their rows, where they differ from problem
/// to problem (`groups = ..`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Groups {
    /// DeepGEMM's masked layout: each problem (group) g of the batch has
    /// room for M rows but holds `group_rows[g]` of them, a count the
    /// launch reads from a device array of i32 (so that a CUDA graph
    /// replays whatever it holds then). Tiles past a group's rows are
    /// skipped, and C's rows past them are not written.
    Masked,
    /// The contiguous layout: the groups' rows lie one after another in A
    /// and C (`[m, k]` and `[m, n]`, the batch's A and C strides 0), group
    /// g's from `group_ends[g - 1]` (0 for the first) to `group_ends[g]`,
    /// end offsets the launch reads from a device array of i32; each group
    /// multiplies by its own B. A persistent walk takes each group's tiles
    /// in turn, none crossing into the next group, and C's rows past every
    /// group's end are not written.
    Contiguous,
    /// DeepGEMM's aligned contiguous form: the groups' rows one after
    /// another in A and C as under `Contiguous`, each group's padded by the
    /// caller to a multiple of the block's m, and a device array of i32
    /// `row_groups[m]` giving each row's group, -1 for a padding row. A
    /// tile takes its first row's group (a tile whose first row is padding,
    /// or names no group of the batch, is skipped), and only its rows of
    /// that group, from the first on, are written: padding rows are not.
    Indexed,
}

impl Groups {
    /// The device array's name, as the launcher takes it.
    pub fn array(self) -> &'static str {
        match self {
            Groups::Masked => "group_rows",
            Groups::Contiguous => "group_ends",
            Groups::Indexed => "row_groups",
        }
    }

    /// As the attribute writes it.
    pub fn name(self) -> &'static str {
        match self {
            Groups::Masked => "masked",
            Groups::Contiguous => "contiguous",
            Groups::Indexed => "indexed",
        }
    }

    /// Whether the groups' rows lie one after another in one A and one C
    /// (the batch's A and C strides 0).
    pub fn one_a_and_c(self) -> bool {
        self != Groups::Masked
    }
}

/// What a launch must satisfy for a kernel; checked by the runtime before launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Requirements {
    /// m, n, k must be multiples of these (1: any size).
    pub m_multiple: u32,
    pub n_multiple: u32,
    pub k_multiple: u32,
    /// A and B: leading dimensions multiples of this many elements (the
    /// stricter of the two operands' where they differ).
    pub vector: u32,
    /// A and B: base pointers aligned to this many bytes (the stricter).
    pub align: u32,
    /// A's and B's own (vector, align), which differ only where cp.async
    /// fills one operand's TMA stages ([`RingCopies`]).
    pub operands: [(u32, u32); 2],
    /// C: leading dimension a multiple of this many elements.
    pub c_vector: u32,
    /// C: base pointer aligned to this many bytes.
    pub c_align: u32,
}

/// Lines of the boxes a guarded TMA kernel loads a tile that crosses M's
/// or N's edge in ([`KernelSpec::edge_boxes`]): one period of the
/// swizzle, so that each box lands where and as the whole tile's would.
pub const EDGE_BOX_LINES: u32 = 8;

/// Shared memory the `by_class` variant keeps past its stages for C: each
/// consumer warpgroup's buffer of 64 x 64 16-bit elements.
pub const BY_CLASS_C_BYTES: u32 = 2 * 64 * 64 * 2;

/// One operand's tile under TMA staging: `boxes` boxes of `outer` lines of
/// `inner` elements, one swizzle row each (`swizzle` bytes), side by side
/// along the operand's contiguous dimension. A K-major operand (A row-major,
/// B column-major) is one box of `block m` (or `n`) lines of K; an M- or
/// N-major one is a box of K lines per `inner` elements of M or N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaTile {
    pub k_major: bool,
    pub inner: u32,
    pub outer: u32,
    pub boxes: u32,
    /// K-major: boxes side by side along K, each a swizzle row wide (a K
    /// tile of 128 elements under the 128-byte swizzle takes two); each
    /// holds `boxes` boxes of lines. 1 for an M/N-major tile, whose boxes
    /// run down all of K.
    pub k_boxes: u32,
    pub swizzle: u32,
}

impl TmaTile {
    /// Bytes of one box: `outer` lines of one swizzle row each (`inner`
    /// elements of the operand's type make `swizzle` bytes).
    pub const fn box_bytes(self) -> u32 {
        self.swizzle * self.outer
    }

    /// Bytes of the whole tile: every box along M or N and along K.
    pub const fn bytes(self) -> u32 {
        self.box_bytes() * self.boxes * self.k_boxes
    }
}

/// How one operand tile lies in shared memory: `lines` lines of `len`
/// elements (the operand's contiguous dimension), each `row` elements apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmemTile {
    pub lines: u32,
    pub len: u32,
    /// Elements from one line to the next: `len` plus any padding.
    pub row: u32,
}

impl SmemTile {
    pub const fn elems(self) -> u32 {
        self.lines * self.row
    }
}

impl KernelSpec {
    /// The oldest arch the spec's features need (mma: sm_80, on 8-bit
    /// floats sm_89; wgmma, TMA, clusters, setmaxnreg: sm_90a).
    pub fn min_arch(&self) -> Arch {
        let hopper = matches!(self.atom, Atom::Wgmma { .. })
            || matches!(self.staging, Staging::Tma { .. })
            || self.cluster.is_some()
            || self.specialize.is_some_and(|s| s.producer_regs.is_some() || s.consumer_regs.is_some())
            || matches!(self.epilogue, Epilogue::Tma);
        if hopper {
            Arch::Sm90a
        } else if matches!(self.atom, Atom::Mma { .. }) && self.a.elem.is_fp8() {
            // mma.sync's 8-bit floats came with Ada
            Arch::Sm89
        } else {
            Arch::Sm80
        }
    }

    /// Threads per block, as launched.
    pub fn threads(&self) -> u32 {
        self.block.threads
    }

    /// Whether staging A and B each copies into a shared layout that runs the
    /// other way from the global one (so one element per copy): A is held
    /// along k unless transposed, B always along n.
    /// Tensor-core kernels keep both operands' global layouts.
    pub fn copies_transpose(&self) -> (bool, bool) {
        if self.tensor_core() {
            return (false, false);
        }
        ((self.a.layout == Layout::RowMajor) == self.staging.transpose_a(), self.b.layout == Layout::ColMajor)
    }

    /// Whether the atom runs on tensor cores (mma, wmma, wgmma).
    pub fn tensor_core(&self) -> bool {
        !matches!(self.atom, Atom::Fma)
    }

    /// The A tile in shared memory. SIMT kernels hold it along k (`[m][k]`),
    /// or `[k][m]` with `transpose_a`; tensor-core kernels keep A's global
    /// layout (ldmatrix and wmma transpose as they load).
    pub fn smem_a(&self) -> SmemTile {
        let k = self.block.k.unwrap_or(0);
        let along_m = if self.tensor_core() { self.a.layout == Layout::ColMajor } else { self.staging.transpose_a() };
        let (lines, len) = if along_m { (k, self.block.m) } else { (self.block.m, k) };
        SmemTile { lines, len, row: len + self.pad() }
    }

    /// The B tile in shared memory: `[k][n]` for SIMT kernels; tensor-core
    /// kernels keep B's global layout.
    pub fn smem_b(&self) -> SmemTile {
        let k = self.block.k.unwrap_or(0);
        let along_k = self.tensor_core() && self.b.layout == Layout::ColMajor;
        let (lines, len) = if along_k { (self.block.n, k) } else { (k, self.block.n) };
        SmemTile { lines, len, row: len + self.pad() }
    }

    /// Shared-memory row length of the A tile in elements (padding included).
    pub fn smem_a_row(&self) -> u32 {
        self.smem_a().row
    }

    /// Shared-memory row length of the B tile in elements (padding included).
    pub fn smem_b_row(&self) -> u32 {
        self.smem_b().row
    }

    fn pad(&self) -> u32 {
        match self.swizzle {
            Swizzle::Pad(p) => p,
            _ => 0,
        }
    }

    /// Shared memory per block in bytes: every staged tile of A and B, and
    /// the epilogue's scratch (see [`Self::epilogue_scratch_bytes`]) past
    /// them or in their place.
    pub fn smem_bytes(&self) -> u32 {
        self.tiles_bytes() + self.tma_overhead() + self.ticket_bytes() + self.k_split_bytes()
    }

    /// The staged tiles and the epilogue's scratch, from the tiles' start.
    pub(crate) fn tiles_bytes(&self) -> u32 {
        if self.by_class() {
            // C's two buffers of 64 x 64 past the stages (the cuda module `by_class`)
            return self.staged_bytes() + BY_CLASS_C_BYTES;
        }
        match self.epilogue_scratch_bytes() {
            0 => self.staged_bytes(),
            scratch => self.staged_bytes().max(self.epilogue_scratch_offset() + scratch),
        }
    }

    /// Blocks of a cluster that share a block tile along K (`cluster(k =
    /// ..)`; 1 without).
    pub fn k_split(&self) -> u32 {
        self.cluster.map_or(1, |c| c.k)
    }

    /// Under a cluster split along K, rank 0's buffer for the other ranks'
    /// partial sums: a block tile of floats for each.
    pub fn k_split_bytes(&self) -> u32 {
        (self.k_split() - 1) * self.block.m * self.block.n * 4
    }

    /// Where that buffer starts, from the tiles' (1024-byte aligned) start:
    /// past the tiles, the ring's barriers and the stages' block scales
    /// (the other ranks' sums may land while rank 0 still reads its last
    /// stages' scales).
    pub fn k_split_offset(&self) -> u32 {
        (self.tiles_bytes() + self.ring_barrier_bytes() + self.block_scale_bytes()).next_multiple_of(16)
    }

    /// Stream-K's ticket (the order in which blocks start: the schedule's
    /// module says why), in a word past everything else the kernel keeps
    /// in shared memory, padded to 16 bytes.
    pub fn ticket_bytes(&self) -> u32 {
        if self.persistent.is_some_and(Persistent::splits_k) {
            16
        } else {
            0
        }
    }

    /// TMA staging's shared memory beside the tiles: slack to start them on
    /// a 1024-byte boundary (the swizzle's period, which the copy engine and
    /// wgmma's descriptors count from) and a "full" and an "empty" mbarrier
    /// of 8 bytes per stage.
    pub fn tma_overhead(&self) -> u32 {
        match self.staging {
            Staging::Tma { .. } => 1024 + self.ring_barrier_bytes() + self.block_scale_bytes(),
            _ => 0,
        }
    }

    /// `scale = block` under TMA staging: each stage's scales past the
    /// ring's barriers, from a 128-byte boundary: A's (a block tile's rows
    /// of one K block, by TMA) and B's (one per 128-column block of the
    /// tile, at most 4, by cp.async), which the stage's full barrier waits
    /// for with its tiles. B's 16 bytes a stage stay unused where the
    /// consumers load B's scales themselves, into windows of their own past
    /// the stages' ([`Self::b_scale_window_bytes`]).
    pub fn block_scale_bytes(&self) -> u32 {
        match (self.fused.scale, self.staging) {
            (Some(Scale::Block), Staging::Tma { .. }) => 128 + self.b_scale_window_offset() + self.b_scale_window_bytes(),
            _ => 0,
        }
    }

    /// Where the consumers' windows of B's scales start, from A's first
    /// stage of scales: past every stage's A and B slots.
    pub fn b_scale_window_offset(&self) -> u32 {
        match self.staging {
            Staging::Tma { stages, .. } => stages * (self.block_scale_slot() + 16),
            _ => 0,
        }
    }

    /// Where B's scales are not copied into the stages
    /// ([`Self::b_scales_copied`]): a window of [`B_SCALE_WINDOW`] of them
    /// (f32) for each consumer warpgroup, which its threads load from
    /// global memory for K blocks of its tile at a time and its stages
    /// read from there.
    pub fn b_scale_window_bytes(&self) -> u32 {
        match (self.fused.scale, self.staging, self.specialize) {
            (Some(Scale::Block), Staging::Tma { .. }, Some(sp)) if self.sums_by_atom_row() => sp.consumers * B_SCALE_WINDOW * 4,
            _ => 0,
        }
    }

    /// `scale = block`: the rows of A's scales a stage holds, a box of
    /// A's scale map. TMA starts a box only at a 16-byte aligned place of
    /// its contiguous side (an unaligned one was an illegal instruction on
    /// the H200), so where a tile may start at any row (a contiguous
    /// group's) the box starts at the row below on a multiple of 4, 4 rows
    /// longer than the tile.
    pub fn block_scale_rows(&self) -> u32 {
        self.block.m + if self.groups == Some(Groups::Contiguous) { 4 } else { 0 }
    }

    /// The bytes between two stages' slots of A's scales: a box of
    /// [`Self::block_scale_rows`] f32s, from a 128-byte boundary (TMA's
    /// destination; at 528 bytes a slot, one was a misaligned address).
    pub fn block_scale_slot(&self) -> u32 {
        (self.block_scale_rows() * 4).next_multiple_of(128)
    }

    /// TMA staging's mbarriers, past the tiles: a "full" and an "empty" one
    /// per stage, and under ping-pong one per consumer for its turn with
    /// the ring.
    fn ring_barrier_bytes(&self) -> u32 {
        let turns = self.specialize.filter(|sp| sp.pingpong).map_or(0, |sp| 8 * sp.consumers);
        match self.staging {
            Staging::Tma { stages, .. } => 16 * stages + turns + self.queue_bytes(),
            _ => 0,
        }
    }

    /// `persistent = queue`: the ring of two tile numbers the producer
    /// hands the consumers, past the stages' barriers (a full and an empty
    /// barrier a slot, then the slots).
    pub fn queue_bytes(&self) -> u32 {
        if self.persistent == Some(Persistent::Queue) {
            40
        } else {
            0
        }
    }

    /// How TMA brings operand `which`'s tile into shared memory, and how
    /// wgmma reads it there (`staging = tma`, a TMA swizzle).
    pub fn tma_tile(&self, which: Which) -> TmaTile {
        let swizzle = self.swizzle.tma_bytes().unwrap_or(128);
        let (op, mn) = match which {
            Which::A => (self.a, self.block.m),
            Which::B => (self.b, self.block.n),
        };
        let k_major = (which == Which::A) == (op.layout == Layout::RowMajor);
        let inner = swizzle / op.elem.bytes();
        let k = self.block.k.unwrap_or(0);
        // a multicast operand's K-major tile loads as one box of lines per block of the cluster
        let share = self.multicast_share(which);
        let (outer, boxes) = if k_major { (mn / share, share) } else { (k, mn / inner.max(1)) };
        let k_boxes = if k_major { (k / inner.max(1)).max(1) } else { 1 };
        TmaTile { k_major, inner, outer, boxes, k_boxes, swizzle }
    }

    /// Whether TMA loads operand `which`'s tile, where it crosses M's or N's
    /// edge, in boxes of [`EDGE_BOX_LINES`] lines, only those that hold some
    /// of the matrix's lines (a second tensor map, `tmap_a_edge` or
    /// `tmap_b_edge`). A box's lines past a matrix's end read as zeros but
    /// cost the H100 more than lines read: at 4096 x 4097 x 4096 a last
    /// column of tiles with one line of B in 128 held the whole kernel 8%
    /// (BENCHMARKS.md). Lines past M or N feed only rows or columns of the
    /// accumulators that are never stored, so they may hold anything. For
    /// K-major tiles (lines along M or N) of guarded kernels whose boxes
    /// are taller than that, in kernels that multicast neither operand.
    pub fn edge_boxes(&self, which: Which) -> bool {
        let t = self.tma_tile(which);
        matches!(self.staging, Staging::Tma { cp_async: None, .. })
            && self.edges == Edges::Guarded
            && t.k_major
            && t.outer > EDGE_BOX_LINES
            && self.cluster.is_none_or(|c| c.multicast.is_none())
    }

    /// Under [`Self::edge_boxes`], the most lines of operand `which` a tile
    /// may hold inside the matrix and still load in boxes of
    /// [`EDGE_BOX_LINES`]: three quarters of its box. A tile with more loads
    /// its whole box (past the edge TMA then fills at most a quarter of it,
    /// which costs less than issuing the small boxes).
    pub fn edge_lines_most(&self, which: Which) -> u32 {
        self.tma_tile(which).outer / 4 * 3
    }

    /// Whether a launch whose `lines` of operand `which` (M for A, N for
    /// B) leave a last tile of them reads that operand's edge-box map: its
    /// last tile holds some lines, and no more than
    /// [`Self::edge_lines_most`]. Elsewhere the launcher passes the whole
    /// tile's map in its place rather than encode one never read.
    pub fn edge_map_read(&self, which: Which, lines: usize) -> bool {
        let rest = lines % self.tma_tile(which).outer as usize;
        self.edge_boxes(which) && rest != 0 && rest <= self.edge_lines_most(which) as usize
    }

    /// Whether TMA loads operand `which`'s stages: under TMA staging,
    /// unless the producer's cp.async copies fill them ([`RingCopies`]).
    pub fn tma_loads(&self, which: Which) -> bool {
        match self.staging {
            Staging::Tma { cp_async, .. } => cp_async.is_none_or(|r| !r.fills(which)),
            _ => false,
        }
    }

    /// The kernel's tensor-map parameters in their order (`tmap_` and the
    /// name): A's and B's where TMA loads their stages, their edge boxes'
    /// ([`Self::edge_boxes`]), C's under `epilogue = tma`; none under
    /// `by_class`, whose maps come in one parameter of their own.
    pub fn tma_maps(&self) -> Vec<&'static str> {
        let mut maps = Vec::new();
        if self.by_class() {
            return maps;
        }
        maps.extend([(Which::A, "a"), (Which::B, "b")].into_iter().filter(|(w, _)| self.tma_loads(*w)).map(|(_, m)| m));
        if let Staging::Tma { cp_async: None, .. } = self.staging {
            maps.extend([(Which::A, "a_edge"), (Which::B, "b_edge")].into_iter().filter(|(w, _)| self.edge_boxes(*w)).map(|(_, m)| m));
        }
        if let (Staging::Tma { .. }, Epilogue::Tma) = (self.staging, self.epilogue) {
            maps.push("c");
        }
        if self.block_scale_bytes() > 0 {
            maps.push("sfa");
        }
        maps
    }

    /// Whether this is the variant that reads A and B and writes C where
    /// they lie, a class of lines at a time (`tma(by_class)`).
    pub fn by_class(&self) -> bool {
        matches!(self.staging, Staging::Tma { by_class: true, .. })
    }

    /// Whether the launcher may run this spec's `by_class` variant: the
    /// tiling that variant is written for, `hopper_autotuned`'s (a
    /// specialized, persistent 128 x 256 x 64 block of one producer and two
    /// consumer warpgroups, each a wgmma atom of 64 x 256 over a 128-byte
    /// swizzle; 4 stages), on a row-major A, column-major B and
    /// row-major C of one 16-bit type, storing `C = A B` and nothing else;
    /// no L2 prefetch ahead of a dependent launch's wait.
    /// The variant computes `C^T = B^T A^T` on the same tiles turned over
    /// (256 rows of C by 128 columns).
    pub fn by_class_fits(&self) -> bool {
        let one_type = self.a.elem == self.b.elem && self.b.elem == self.c.elem && self.a.elem.bytes() == 2;
        let layouts = (self.a.layout, self.b.layout, self.c.layout) == (Layout::RowMajor, Layout::ColMajor, Layout::RowMajor);
        let tiles = (self.block.m, self.block.n, self.block.k) == (128, 256, Some(64))
            && self.warp.is_some_and(|w| (w.m, w.n) == (64, 256))
            && matches!(self.atom, Atom::Wgmma { m: 64, n: 256, k: 16, .. });
        // (its consumers hold some 200 registers a thread: the producer gives its own up)
        let roles = self.specialize.is_some_and(|sp| {
            sp.producers == 1
                && sp.consumers == 2
                && !sp.pingpong
                && !sp.overlap
                && sp.arrivals == Arrivals::Warpgroup
                && sp.producer_regs.is_some()
                && sp.consumer_regs.is_some_and(|r| r >= 232)
        });
        // four stages, as run on the H100 (its crossing loads wait for the next stage while holding
        // this one: one stage would never fill it; two and three are untested there); no L2
        // prefetch before a dependent launch's wait (its body has none)
        let staging = matches!(self.staging, Staging::Tma { stages: 4, cp_async: None, prefetch: 0, .. });
        one_type
            && layouts
            && tiles
            && roles
            && staging
            && self.swizzle.tma_bytes() == Some(128)
            && self.persistent == Some(Persistent::Tiles)
            && self.cluster.is_none()
            && !self.fused.any()
            && self.arch == Arch::Sm90a
    }

    /// Blocks in a thread block cluster (1 without one).
    pub fn cluster_size(&self) -> u32 {
        self.cluster.map_or(1, |c| c.m * c.n * c.k)
    }

    /// How many blocks of a cluster share operand `which`'s tile by TMA
    /// multicast, each loading its part for all of them: the blocks stacked
    /// along m for B, side by side along n for A; 1 where none do.
    pub fn multicast_share(&self, which: Which) -> u32 {
        match self.cluster {
            Some(Cluster { m, multicast: Some(Which::B), .. }) if which == Which::B => m,
            Some(Cluster { n, multicast: Some(Which::A), .. }) if which == Which::A => n,
            _ => 1,
        }
    }

    /// Where the epilogue's scratch starts. The C tile of `epilogue = smem`
    /// takes the staged tiles' place once the K loop is done; otherwise
    /// past them, 128-byte aligned (wmma.store takes 32-byte aligned
    /// tiles), since under stream-K the next unit's copies are in flight in
    /// the stages while a unit's epilogue runs. TMA kernels keep their C
    /// tile past the stages always (counted from the stages' aligned start).
    pub fn epilogue_scratch_offset(&self) -> u32 {
        // a producer may be filling the next tile's stages while the
        // consumers store this one's C
        if let Staging::Tma { .. } = self.staging {
            return self.staged_bytes();
        }
        if self.c_tile().is_some() && !self.persistent.is_some_and(Persistent::splits_k) {
            return 0;
        }
        self.staged_bytes().next_multiple_of(128)
    }

    /// `epilogue = smem`: the block's C tile in shared memory, laid out as
    /// C is, its lines along C's contiguous side. The lines lie apart by
    /// `at` elements past a multiple of `period`, so that a warp's stores
    /// of the values mma lanes hold (pairs along n: 8 rows of 4 lanes, or
    /// for a column-major C the 8 rows side by side in 4 columns) hit each
    /// bank once, and lines stay 16-byte aligned for the chunks that go
    /// out to C.
    pub fn c_tile(&self) -> Option<CTile> {
        let (lines, line) = self.c_tile_shape();
        match self.epilogue {
            Epilogue::Smem | Epilogue::SmemElements => {}
            // `epilogue = tma`: boxes of lines of up to 128 bytes in the
            // swizzle of their width, which the TMA store reads (see `c_tile_box`)
            Epilogue::Tma => return Some(CTile { lines, line, ld: line, parts: self.c_tile_parts(lines * line), bands: 1 }),
            _ => return None,
        }
        let (period, at) = match (self.c.layout, self.c.elem.bytes()) {
            (Layout::RowMajor, 4) => (32, 8),
            (Layout::RowMajor, _) => (64, 8),
            (Layout::ColMajor, 4) => (16, 4),
            (Layout::ColMajor, _) => (32, 8),
        };
        let mut ld = line + (period + at - line % period) % period;
        if self.epilogue == Epilogue::SmemElements && self.c.elem.bytes() == 2 && ld < line + 8 {
            // room for a line shifted up to 6 elements along (C at any alignment: see the epilogue's tile_shift)
            ld += period;
        }
        Some(CTile { lines, line, ld, parts: 1, bands: self.c_tile_bands(lines, ld) })
    }

    /// In how many bands the C tile of `epilogue = smem_elements` (C at any
    /// alignment, the launcher's variant of a TMA store) of `lines` lines
    /// `ld` apart goes out on the Hopper path: the fewest of 1, 2 and 4
    /// whose buffer leaves the spec's stages room in shared memory, each
    /// band whole wgmma atoms (64 rows) of a row-major C; 1 elsewhere (the
    /// rules then ask for fewer stages).
    pub fn c_tile_bands(&self, lines: u32, ld: u32) -> u32 {
        let hopper = matches!(self.staging, Staging::Tma { .. }) && matches!(self.atom, Atom::Wgmma { .. });
        let shared = self.specialize.is_some_and(|sp| !sp.pingpong && !sp.overlap);
        if self.epilogue != Epilogue::SmemElements || !hopper || !shared || self.c.layout != Layout::RowMajor {
            return 1;
        }
        let room = self.c_tile_room();
        let fits = |b: u32| lines.is_multiple_of(64 * b) && lines / b * ld * self.c.elem.bytes() <= room;
        [1, 2, 4].into_iter().find(|&b| fits(b)).unwrap_or(1)
    }

    /// Shared memory a TMA kernel's C tile may take beside its stages, their
    /// barriers and a stream-K ticket.
    fn c_tile_room(&self) -> u32 {
        self.arch.smem_limit().saturating_sub(self.staged_bytes() + self.tma_overhead() + self.ticket_bytes())
    }

    /// In how many parts the C tile of `epilogue = tma` (`elems` elements)
    /// goes out: the fewest of 1, 2 and 4 whose buffer leaves the staged
    /// tiles room in shared memory (a fourth stage of 128 x 256 tiles: on
    /// the H100 `tma_store` ran 4096^3 at 783 TFLOP/s with four stages and
    /// half the tile a part, 768 with three and the whole tile, 763 with
    /// three and half the tile). Parts run along a row-major C's lines, so
    /// only where each consumer's accumulators span the block's width in
    /// one wgmma (its columns in one loop) and no ping-pong consumer has a
    /// tile of its own; elsewhere 1. Under `specialize(.., overlap)` always
    /// 2: each half of a consumer's columns (one wgmma atom) is a part.
    pub fn c_tile_parts(&self, elems: u32) -> u32 {
        if self.overlaps_halves() {
            return 2;
        }
        let spans = match (self.atom, self.warp, self.specialize) {
            (Atom::Wgmma { n, .. }, Some(w), Some(sp)) => w.n == n && w.n == self.block.n && !sp.pingpong,
            _ => false,
        };
        if !spans || self.c.layout != Layout::RowMajor {
            return 1;
        }
        let room = self.c_tile_room();
        // (the boxes along C's lines, a gated C's half the product's; no box fits a line that is
        // no whole number of 16-byte chunks: the rules refuse it)
        let boxes = self.c_tile_shape().1 / self.c_tile_box().max(1);
        [1, 2, 4].into_iter().find(|&p| boxes.is_multiple_of(p) && elems * self.c.elem.bytes() / p <= room).unwrap_or(1)
    }

    /// `epilogue = tma`: elements of C in one line of a TMA store's box;
    /// the C tile is `line / c_tile_box()` such boxes side by side. A box's
    /// line is 128 bytes, or the tile's line where that is narrower (64, 32
    /// or 16 bytes: tiles of 32, 16 or 8 columns of a 16-bit C), each in the
    /// swizzle of its width ([`Self::c_tile_swizzle`]). Under
    /// `specialize(.., overlap)` each half of the line goes out on its own,
    /// so the box fits the half. 0 where the line is no whole number of
    /// 16-byte chunks (the rules refuse it).
    pub fn c_tile_box(&self) -> u32 {
        let line = self.c_tile_shape().1;
        let unit = if self.overlaps_halves() { line / 2 } else { line } * self.c.elem.bytes();
        [128, 64, 32, 16].into_iter().find(|b| unit.is_multiple_of(*b)).map_or(0, |b| b / self.c.elem.bytes())
    }

    /// A C tile's lines and their length in C's elements, along C's layout
    /// (a gated C holds a column for each pair of the product's).
    fn c_tile_shape(&self) -> (u32, u32) {
        let n = if self.fused.gated { self.block.n / 2 } else { self.block.n };
        match self.c.layout {
            Layout::RowMajor => (self.block.m, n),
            Layout::ColMajor => (n, self.block.m),
        }
    }

    /// `specialize(.., overlap)` on consumers of two wgmma atoms along n:
    /// each half of C's tile goes out on its own. (A promoted consumer's
    /// overlap is the next tile's first stage beside its epilogue instead.)
    pub fn overlaps_halves(&self) -> bool {
        self.specialize.is_some_and(|sp| sp.overlap) && !self.promoted()
    }

    /// `epilogue = tma`: the swizzle, in bytes, of the C tile's boxes and of
    /// C's tensor map: the box's line width (128, 64 or 32 bytes), none (0)
    /// for lines of 16 bytes. Either way a warp's stores of pairs along 8
    /// lines land in 8 different 16-byte chunks of the banks.
    pub fn c_tile_swizzle(&self) -> u32 {
        match self.c_tile_box() * self.c.elem.bytes() {
            b @ 32..=128 => b,
            _ => 0,
        }
    }

    /// Shared memory of the staged tiles of A and B.
    pub fn staged_bytes(&self) -> u32 {
        let tiles = self.staging.smem_tiles();
        if tiles == 0 {
            return 0;
        }
        tiles * (self.smem_a().elems() * self.a.elem.bytes() + self.smem_b().elems() * self.b.elem.bytes())
    }

    /// A wmma accumulator's register layout is the hardware's own: a fused
    /// or guarded epilogue, which must know each value's place in C, sends
    /// each atom through a scratch tile of its warp's (f32, one atom) in
    /// shared memory after the staged tiles. Its own space, not the staged
    /// tiles': under stream-K the next unit's copies are in flight there.
    pub fn epilogue_scratch_bytes(&self) -> u32 {
        if let Some(t) = self.c_tile() {
            // ping-pong consumers each store a tile of their own
            let tiles = self.specialize.filter(|sp| sp.pingpong).map_or(1, |sp| sp.consumers);
            return tiles * t.lines / t.bands * t.ld * self.c.elem.bytes() / t.parts;
        }
        match (self.atom, self.warp) {
            (Atom::Wmma { m, n, .. }, Some(w)) if self.fused.any() || self.edges == Edges::Guarded => {
                let warps = (self.block.m / w.m.max(1)) * (self.block.n / w.n.max(1));
                warps * m * n * 4
            }
            _ => 0,
        }
    }

    /// Registers per thread the compiler may use: 255, or less where
    /// `min_blocks` blocks must share an SM's 64K registers (rounded down to 8).
    pub fn register_cap(&self) -> u32 {
        let per_block = |blocks: u32| (65536 / (self.block.threads.max(1) * blocks) / 8 * 8).min(255);
        match self.block.min_blocks {
            // a specialized kernel is compiled for one block per SM (setmaxnreg
            // moves registers between its warpgroups only once it runs)
            _ if self.specialize.is_some() => per_block(1),
            Some(o) if o > 0 => per_block(o),
            _ => 255,
        }
    }

    /// Whether each stage's wgmma sums of 8-bit operands are added into the
    /// f32 accumulators apart (promoted): `wgmma(.., promote)`, or
    /// `scale = block`, which scales each K block's sums as it adds them
    /// (on mma.sync too, each K tile's).
    pub fn promoted(&self) -> bool {
        // (`promote` on 16-bit operands is refused, and generates nothing)
        let eight_bit = self.a.elem.is_fp8() && self.b.elem.is_fp8();
        eight_bit && (matches!(self.atom, Atom::Wgmma { promote: true, .. }) || self.fused.scale == Some(Scale::Block))
    }

    /// Whether promoted sums come in two sets: a producer's ring feeds the
    /// consumers (all but the stream-K schedules) two stages at a time, the
    /// second's wgmmas running while the first's sums are promoted.
    pub fn paired_sums(&self) -> bool {
        self.promoted() && self.specialize.is_some() && !self.persistent.is_some_and(Persistent::splits_k) && !self.sums_by_atom_row()
    }

    /// Whether a promoted consumer in a producer's ring takes its sums one
    /// atom row at a time into one set, each row's wgmmas waited on and
    /// promoted in turn, each stage released once its last row's wgmmas are
    /// done:
    /// - a warpgroup tile taller than its wgmma atom (128 rows or more), where
    ///   two sets of the whole tile would not fit the registers, the other
    ///   consumers' wgmmas keeping the tensor cores busy meanwhile
    ///   (DeepGEMM's 256 x 128 tiles take their consumers' 128 rows so);
    /// - a lone consumer (64-row tiles, for products of few rows), whose
    ///   paired loop would hold each stage until the next one has landed
    ///   where the copies, not the tensor cores, set the pace: 7% slower
    ///   at 128 x 4096 x 7168 on 64 x 64 tiles (H200, 2026-11-30).
    pub fn sums_by_atom_row(&self) -> bool {
        let tall = matches!(self.atom, Atom::Wgmma { .. }) && self.warp.is_some_and(|w| w.m > 64);
        let alone = self.specialize.is_some_and(|sp| sp.consumers == 1);
        let ring = self.specialize.is_some_and(|sp| !sp.overlap) && !self.persistent.is_some_and(Persistent::splits_k);
        self.promoted() && (tall || alone) && ring
    }

    /// Whether a producer copies B's block scales into each stage beside
    /// the tiles (`scale = block`). A consumer whose sums come by atom rows
    /// loads its tile's scales of B into a window of shared memory of its
    /// own instead, up to [`B_SCALE_WINDOW`] K blocks at once
    /// ([`Self::b_scale_window_bytes`]): at 128 x 4096 x 7168 on 64 x 64
    /// tiles the copies' landing, one of the full barrier's two arrivals,
    /// cost 15% (518 against 598 TFLOP/s, H200, 2026-11-30), and each
    /// stage's own load from global memory, which the stage's promotion
    /// waited on, 6% (the guide's fp8 notes).
    pub fn b_scales_copied(&self) -> bool {
        self.block_scale_bytes() > 0 && !self.sums_by_atom_row()
    }

    /// Accumulators each thread holds (SIMT: thread tile times warp
    /// iterations; tensor cores: the warp tile's f32 values over 32 lanes).
    pub fn accumulators_per_thread(&self) -> u32 {
        match (self.atom, self.warp) {
            (Atom::Fma, _) => {
                let thread = self.thread.map_or(1, |t| t.m * t.n);
                let iters = self.warp.map_or(1, |w| w.m_iters * w.n_iters);
                thread * iters
            }
            // promoted: a set more for each stage's sums, two in a producer's ring; one atom row's
            // (64 x n over 128 threads) by atom rows
            (Atom::Wgmma { .. }, Some(w)) if self.sums_by_atom_row() => w.m * w.n / 128 + w.n / 2,
            (Atom::Wgmma { .. }, Some(w)) => w.m * w.n / 128 * (1 + self.promoted() as u32 + self.paired_sums() as u32),
            // (mma: promoted, a set more for each K block's sums)
            (_, Some(w)) => w.m * w.n / 32 * (1 + self.promoted() as u32),
            (_, None) => 0,
        }
    }

    /// Registers per thread that hold one K step's operand fragments of a
    /// tensor-core warp tile (A: 16 x 16 per m atom, B: 16 x 8 per n atom, two
    /// 16-bit values a register); 0 for SIMT, whose fragments the thread tile covers.
    pub fn fragment_registers(&self) -> u32 {
        match (self.atom, self.warp) {
            // a K step's A and B fragments of the warp tile, in 4-byte registers over 32 lanes
            (Atom::Mma { k, .. } | Atom::Wmma { k, .. }, Some(w)) => (w.m * k + k * w.n) * self.a.elem.bytes() / 128 * self.staging.fragment_sets(),
            _ => 0,
        }
    }

    /// What sizes and pointers a launch of this kernel needs.
    pub fn requirements(&self) -> Requirements {
        let (ab, c) = (self.a.elem.bytes(), self.c.elem.bytes());
        let aligned = |vector: u32, bytes: u32| (vector, vector * bytes);
        let (operands, (c_vector, c_align)) = match (self.atom, self.staging) {
            // Direct SIMT loads are bounds-guarded: any size.
            (Atom::Fma, Staging::Direct) => {
                let operands = [(1, ab); 2];
                return Requirements { m_multiple: 1, n_multiple: 1, k_multiple: 1, vector: 1, align: ab, operands, c_vector: 1, c_align: c };
            }
            // wmma.load and wmma.store take 32-byte aligned pointers and rows
            // a multiple of 16 bytes apart; an epilogue through the scratch
            // tile stores C an element at a time.
            (Atom::Wmma { .. }, staging) => {
                let operands = if staging == Staging::Direct { [(16 / ab, 32); 2] } else { [aligned(staging.vector(), ab); 2] };
                let c_side = if self.epilogue_scratch_bytes() > 0 { (1, c) } else { (16 / c, 32) };
                (operands, c_side)
            }
            // the by-class variant: A's and B's lines 8 bytes aligned (its maps' classes shift by
            // whole 32-bit words), C's at any alignment
            (_, Staging::Tma { by_class: true, .. }) => ([aligned(8 / ab, ab); 2], (1, c)),
            (_, staging) => {
                let c_vector = match (self.epilogue, self.atom) {
                    // the C tile goes out in 16-byte chunks, or by a TMA store
                    (Epilogue::Smem | Epilogue::Tma, _) => 16 / c,
                    (Epilogue::SmemElements, _) => 1,
                    // a gated pair of accumulators makes one element of C
                    _ if self.fused.gated => 1,
                    (Epilogue::Vector, Atom::Fma) => 4,
                    // an mma or wgmma accumulator holds pairs of neighbours along n
                    (Epilogue::Vector, _) => 2,
                    _ => 1,
                };
                // TMA reads 16-byte aligned rows (global strides a multiple of 16 bytes); its
                // cp.async variant, lines aligned to its copies
                let operands = match staging {
                    Staging::Tma { cp_async: Some(r), .. } => {
                        let of = |which| if r.fills(which) { aligned(r.vector, ab) } else { (16 / ab, 16) };
                        [of(Which::A), of(Which::B)]
                    }
                    Staging::Tma { cp_async: None, .. } => [(16 / ab, 16); 2],
                    _ => [aligned(staging.vector(), ab); 2],
                };
                (operands, aligned(c_vector, c))
            }
        };
        let (vector, align) = (operands[0].0.max(operands[1].0), operands[0].1.max(operands[1].1));
        if self.edges == Edges::Guarded {
            return Requirements { m_multiple: 1, n_multiple: 1, k_multiple: 1, vector, align, operands, c_vector, c_align };
        }
        let k_multiple = self.block.k.unwrap_or(self.atom.shape().2);
        // a cluster's blocks all take tiles inside C
        let (cm, cn) = self.cluster.map_or((1, 1), |c| (c.m, c.n));
        Requirements { m_multiple: self.block.m * cm, n_multiple: self.block.n * cn, k_multiple, vector, align, operands, c_vector, c_align }
    }

    /// What the kernel computes: `C = A * B`, or with its fused epilogue,
    /// e.g. `C = gelu(alpha * A * B + bias[col])`.
    pub fn formula(&self) -> String {
        let f = self.fused;
        let product = match f.scale {
            Some(Scale::Tensor) => "scale_a * scale_b * A * B",
            Some(Scale::Channel) => "scale_a[row] * scale_b[col] * A * B",
            Some(Scale::Block) => "sum over K blocks kb of scale_a[kb][row] * scale_b[col / 128][kb] * A * B",
            None => "A * B",
        };
        let mut e = if f.alpha { format!("alpha * {product}") } else { product.to_string() };
        if f.beta {
            e += " + beta * C";
        }
        if let Some(b) = f.bias {
            e += if b.along == Dim::N { " + bias[col]" } else { " + bias[row]" };
        }
        if f.gated {
            let gate = f.activation.map_or("gate".to_string(), |a| format!("{}(gate)", a.name()));
            return format!("C[row][j] = {gate} * up, gate and up = {e} at col = 2j and 2j + 1");
        }
        if let Some(a) = f.activation {
            e = format!("{}({e})", a.name());
        }
        format!("C = {e}")
    }

    /// The CUDA kernel name: the Rust name, then the tiling, so that two specs
    /// that differ anywhere get different names.
    pub fn kernel_name(&self) -> String {
        let mut s = format!(
            "{}__{}{}{}_{}{}{}__b{}x{}",
            self.name,
            self.a.elem.rust_name(),
            self.b.elem.rust_name(),
            self.c.elem.rust_name(),
            self.a.layout.letter(),
            self.b.layout.letter(),
            self.c.layout.letter(),
            self.block.m,
            self.block.n,
        );
        if let Some(k) = self.block.k {
            s += &format!("x{k}");
        }
        s += &format!("_t{}", self.block.threads);
        if let Some(o) = self.block.min_blocks {
            s += &format!("_o{o}");
        }
        if let Some(w) = self.warp {
            s += &format!("__w{}x{}_i{}x{}", w.m, w.n, w.m_iters, w.n_iters);
        }
        if let Some(t) = self.thread {
            let lanes = match t.lanes {
                Dim::M => 'm',
                Dim::N => 'n',
            };
            s += &format!("__r{}x{}{lanes}", t.m, t.n);
            if t.sweep == Dim::M {
                s += "_sm";
            }
        }
        let (am, an, ak) = self.atom.shape();
        s += &format!("__{}", self.atom.name());
        if !matches!(self.atom, Atom::Fma) {
            s += &format!("{am}x{an}x{ak}");
        }
        if let Atom::Wgmma { zeroed: true, .. } = self.atom {
            s += "z";
        }
        if let Atom::Wgmma { promote: true, .. } = self.atom {
            s += "p";
        }
        s += &format!("__{}", self.staging.name());
        match self.staging {
            Staging::Direct => {}
            Staging::Smem { vector, transpose_a, buffers } => {
                s += &format!("_v{vector}_x{buffers}");
                if transpose_a {
                    s += "_at";
                }
            }
            Staging::CpAsync { stages, vector, transpose_a, fragments } => {
                s += &format!("_v{vector}_s{stages}");
                if transpose_a {
                    s += "_at";
                }
                if fragments > 1 {
                    s += &format!("_f{fragments}");
                }
            }
            Staging::Tma { stages, cp_async, prefetch, evict_first, by_class } => {
                s += &format!("_s{stages}");
                if by_class {
                    s += "_byclass";
                }
                if let Some(r) = cp_async {
                    s += &format!("_cp{}", r.vector);
                    if let Some(only) = r.only {
                        s += if only == Which::A { "a" } else { "b" };
                    }
                }
                if prefetch > 0 {
                    s += &format!("_pf{prefetch}");
                }
                if evict_first != EvictFirst::default() {
                    s += &format!("_ef{}", evict_first.name());
                }
            }
        }
        if let Some(sp) = self.specialize {
            s += &format!("__ws{}p{}c", sp.producers, sp.consumers);
            if sp.pingpong {
                s += "_pp";
            }
            if let (Some(p), Some(c)) = (sp.producer_regs, sp.consumer_regs) {
                s += &format!("_r{p}_{c}");
            }
            if sp.arrivals == Arrivals::Thread {
                s += "_arrt";
            }
            if sp.overlap {
                s += "_ov";
            }
        }
        match self.swizzle {
            Swizzle::None => {}
            Swizzle::Pad(p) => s += &format!("__pad{p}"),
            Swizzle::Xor => s += "__xor",
            Swizzle::B32 => s += "__sw32",
            Swizzle::B64 => s += "__sw64",
            Swizzle::B128 => s += "__sw128",
        }
        match self.raster {
            Raster::Row => {}
            Raster::Grouped(g) => s += &format!("__g{g}"),
            Raster::Hilbert => s += "__hilbert",
        }
        match self.persistent {
            None => {}
            Some(Persistent::Tiles) => s += "__persistent",
            Some(Persistent::Queue) => s += "__queue",
            Some(Persistent::StreamK) => s += "__stream_k",
            Some(Persistent::Hybrid) => s += "__hybrid",
            Some(Persistent::TailSplit) => s += "__tail_split",
        }
        if let Some(c) = self.cluster {
            s += &format!("__cl{}x{}", c.m, c.n);
            if c.k > 1 {
                s += &format!("k{}", c.k);
            }
            match c.multicast {
                Some(Which::A) => s += "_mca",
                Some(Which::B) => s += "_mcb",
                None => {}
            }
        }
        match self.epilogue {
            Epilogue::Direct => {}
            Epilogue::Vector => s += "__ev",
            Epilogue::Smem => s += "__es",
            Epilogue::SmemElements => s += "__ese",
            Epilogue::Tma => s += "__etma",
            Epilogue::Stmatrix => s += "__estm",
        }
        let f = self.fused;
        match f.scale {
            Some(Scale::Tensor) => s += "__scale_t",
            Some(Scale::Channel) => s += "__scale_c",
            Some(Scale::Block) => s += "__scale_b",
            None => {}
        }
        if f.alpha {
            s += "__alpha";
        }
        if f.beta {
            s += "__beta";
        }
        if let Some(b) = f.bias {
            s += &format!("__bias{}_{}", if b.along == Dim::N { 'n' } else { 'm' }, b.elem.rust_name());
        }
        if let Some(a) = f.activation {
            s += &format!("__{}", a.name());
        }
        if f.gated {
            s += "__gated";
        }
        if self.edges == Edges::Guarded {
            s += "__guarded";
        }
        if let Some(g) = self.groups {
            s += &format!("__{}", g.name());
        }
        s += &format!("__{}", self.arch.nvrtc_name());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DeepGEMM's layouts: A's scales K block after K block with m rounded
    /// up to 4 rows (16 bytes), B's 128 x 128 blocks row after row; a K or
    /// N past a multiple of 128 takes one block more.
    #[test]
    fn block_scale_layouts_count_k_blocks_and_round_a_to_four_rows() {
        assert_eq!((block_scales_a_ld(1), block_scales_a_ld(4), block_scales_a_ld(199)), (4, 4, 200));
        assert_eq!(block_scales_a_len(199, 336), 3 * 200);
        assert_eq!(block_scales_a_len(4096, 4096), 32 * 4096);
        assert_eq!(block_scales_b_len(136, 336), 2 * 3);
        assert_eq!(block_scales_b_len(128, 128), 1);
        assert_eq!(Scale::Block.lens(199, 136, 336), (600, 6));
        assert_eq!(Scale::Channel.lens(199, 136, 336), (199, 136));
        assert_eq!(Scale::Tensor.lens(199, 136, 336), (1, 1));
    }

    /// A batch's block scales follow their operands: packed one problem
    /// after another, but shared where the operand is (a stride of 0, as
    /// contiguous groups share A); per-tensor scales are one pair for all.
    #[test]
    fn a_batchs_block_scales_follow_their_operands() {
        let one = Scale::Block.lens(199, 136, 336);
        assert_eq!(Scale::Block.batch_lens(199, 136, 336, (3, 199 * 336, 136 * 336)), (3 * one.0, 3 * one.1));
        assert_eq!(Scale::Block.batch_lens(199, 136, 336, (3, 0, 136 * 336)), (one.0, 3 * one.1));
        assert_eq!(Scale::Block.batch_lens(199, 136, 336, (1, 5, 5)), one);
        assert_eq!(Scale::Tensor.batch_lens(199, 136, 336, (3, 5, 5)), (1, 1));
    }
}
