//! Any alignment. A kernel's spec states its fast path: vector copies of A
//! and B (16 bytes for the 16-bit tensor-core kernels, TMA's 16-byte rows on
//! Hopper) and of C in some epilogues. Where an operand's address, leading
//! dimension or batch stride does not allow them (a row-major A with K =
//! 4100, a B of GPT-2's 50257 columns, a view at an odd element of a larger
//! buffer), the launcher runs the same kernel on an aligned copy of that
//! operand instead of refusing. Where the rules allow, a variant of the
//! same spec takes the operand where it lies ([`variant_spec`]): A and B
//! by narrower copies into shared memory (cp.async of 8 or 4 bytes, or
//! single elements), C written at any alignment ([`scalar_c_spec`]). A TMA
//! kernel's variant fills the stages of one operand or both by the
//! producer warpgroup's cp.async in place of TMA. Narrower copies of a
//! 16-bit kernel run its K steps well below their pace, so the launcher
//! takes them only where copying the operands would cost more
//! ([`ring_choice`] for TMA's stages; shallow products).
//! What no variant takes is copied (by a small kernel of our own,
//! `copy.rs`) into scratch from the stream's pool, its lines a multiple of
//! the kernel's vector apart; for C, the kernel writes the scratch and the
//! copy writes it back (C is copied in first where the epilogue reads it,
//! `beta`). [`Kernel::plan`](crate::Kernel::plan) says which.
//!
//! TMA takes any line 16 bytes apart but reads slowly from lines 16
//! bytes apart modulo 32 (8208 bytes: a row-major A with K = 4100 padded
//! to 8 elements): on the H100 `tma_store` ran 4096 x 4096 x 4100 at 442
//! TFLOP/s with such lines, 717 at 32-byte multiples and 761 at 128-byte
//! ones (BENCHMARKS.md). Where the product is wide enough to pay for it
//! ([`REPITCH_MIN`]), such an A or B is copied too, its lines 128 bytes
//! apart, as every copy of A or B for TMA is; or, where the spec has a
//! by-class variant and it costs less, read where it lies by that variant,
//! whose maps start every box 128 bytes aligned (`slow_lines_by_class`).
//!
//! What it costs is the copies' traffic (each copied operand read and
//! written once more, C twice under `beta`, against a GEMM's 2mnk flops),
//! or a variant's narrower loads and stores. A kernel that waits for the
//! one before in its code (TMA staging) starts beside the copy kernel's
//! end, launched dependent.

use cudarc::driver::{CudaContext, CudaStream};
use gemm_core::check::RING_PRODUCER_REGS;
use gemm_core::spec::{Epilogue, KernelSpec, Layout, RingCopies, Specialize, Staging, Which};

use crate::args::{Dims, Shape};
use crate::copy::Copy2d;
use crate::scratch::Scratch;
use crate::GemmError;

/// How a launch reaches the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// The kernel reads and writes the caller's buffers where they are.
    Direct,
    /// These operands (A, B, C) go through aligned copies first: those the
    /// kernel cannot take where they lie, and A or B whose lines TMA reads
    /// slowly (see the module's page).
    Copied { a: bool, b: bool, c: bool },
    /// A variant of the spec, generated for these arguments (see
    /// [`variant_spec`]), takes the operands it can where they lie: A and
    /// B by narrower copies into shared memory (`vector` elements each,
    /// where `Some`; of the one operand `only` names, where TMA still
    /// loads the other), C written at any alignment (`scalar_c`); the
    /// operands marked `a`, `b`, `c` still go through aligned copies.
    Variant { vector: Option<u32>, only: Option<Which>, scalar_c: bool, a: bool, b: bool, c: bool },
    /// The spec's by-class variant ([`by_class_spec`]) reads A and B and
    /// writes C where they lie, by tensor maps a class of lines at a time:
    /// for A's and B's lines 8 bytes aligned, C's any.
    ByClass,
    /// An empty product ([`crate::Kernel::launch_with`]): no rows, columns
    /// or problems, so nothing is written; or K = 0, and the kernel runs
    /// over a K tile of zeros, its own, so that C gets the epilogue of a
    /// zero product (C where it lies, or copied, as any launch's C).
    Empty,
}

/// How a launch of `spec` with buffers of `lens` elements at `addrs` (A, B,
/// C) reaches the kernel; an `Err` for what no copy mends.
pub fn plan(spec: &KernelSpec, dims: Dims, lens: [usize; 3], addrs: [u64; 3], machine: Machine) -> Result<Plan, GemmError> {
    if crate::empty::of(spec, dims, lens)? != crate::empty::Empty::No {
        return Ok(Plan::Empty);
    }
    match crate::args::check(spec, dims, lens, addrs) {
        // grouped problems are read and written where they lie, C by a variant where the
        // kernel cannot write it, or refused (`Kernel::launch_with`)
        Ok(_) if spec.groups.is_some() => Ok(Plan::Direct),
        Err(e @ GemmError::Misaligned { .. }) if spec.groups.is_some() => match grouped_c_spec(spec, dims, addrs) {
            Some(_) => Ok(Plan::Variant { vector: None, only: None, scalar_c: true, a: false, b: false, c: false }),
            None => Err(e),
        },
        Ok(shapes) => Ok(match repitched(spec, &shapes, dims) {
            [false, false, _] => Plan::Direct,
            slow if slow_lines_by_class(spec, dims, addrs, slow, machine).is_some() => Plan::ByClass,
            [a, b, c] => Plan::Copied { a, b, c },
        }),
        Err(GemmError::Misaligned { .. }) => Ok(route(spec, dims, addrs, machine).0),
        Err(e) => Err(e),
    }
}

/// `GEMM_TILES_VARIANTS=off` copies every misaligned operand instead of
/// running variants, `GEMM_TILES_VARIANTS=c_only` copies A and B but
/// writes C by its variant: what each costs, side by side in one build.
pub const VARIANTS_ENV: &str = "GEMM_TILES_VARIANTS";

/// Which operands variants may take where they lie (`GEMM_TILES_VARIANTS`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Variants {
    On,
    COnly,
    Off,
}

fn variants() -> Variants {
    static MODE: std::sync::OnceLock<Variants> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| match std::env::var(VARIANTS_ENV).as_deref() {
        Ok("off") => Variants::Off,
        Ok("c_only") => Variants::COnly,
        _ => Variants::On,
    })
}

/// For a launch some of whose operands `spec` cannot take where they lie
/// (at `addrs`): the plan, and the variant's spec where the plan runs one
/// (none under `GEMM_TILES_VARIANTS=off`; A and B copied under `c_only`).
pub(crate) fn route(spec: &KernelSpec, dims: Dims, addrs: [u64; 3], machine: Machine) -> (Plan, Option<KernelSpec>) {
    let [a, b, c] = copied(spec, dims, addrs);
    if variants() == Variants::Off {
        return (Plan::Copied { a, b, c }, None);
    }
    let shapes = crate::args::spec_shapes(spec, dims);
    let strides = [dims.batch.stride_a, dims.batch.stride_b, dims.batch.stride_c];
    let elems = [spec.a.elem, spec.b.elem, spec.c.elem];
    // the widest vector (elements) each operand's address, lines and batch allow
    let widest: [u32; 3] = std::array::from_fn(|i| {
        let bytes = elems[i].bytes() as u64;
        // (only the low bits count: wrapped products keep them)
        let stride = if dims.batch.count > 1 { (strides[i] as u64).wrapping_mul(bytes) } else { 0 };
        let aligned = [addrs[i], (shapes[i].ld as u64).wrapping_mul(bytes), stride]
            .into_iter()
            .filter(|&v| v > 0)
            .fold(16u64, |al, v| al.min(1 << v.trailing_zeros()));
        (aligned / bytes).max(1) as u32
    });
    let narrow = narrowest_vector(spec).filter(|_| variants() == Variants::On);
    // A and B by narrower copies where the staging has them and each misaligned one allows one
    let (mut copy_a, mut copy_b) = (a, b);
    let (mut vector, mut only) = (None, None);
    if let (Some(min), Staging::Tma { .. }) = (narrow, spec.staging) {
        // TMA's stages of one operand or both filled by cp.async, where that costs less than the copies
        let full = full_vector(spec);
        let can = [a && (min..full).contains(&widest[0]), b && (min..full).contains(&widest[1])];
        if let Some(ring) = ring_choice(spec, dims, [a, b], can, [widest[0], widest[1]], machine) {
            (vector, only) = (Some(ring.vector), ring.only);
            copy_a = a && !ring.fills(Which::A);
            copy_b = b && !ring.fills(Which::B);
        } else if let Some(v) = by_class_spec(spec).filter(|v| (a || b || c) && by_class_pays(spec, v, dims, addrs, [a, b], machine)) {
            // where A and B would be copied, or C alone written by the scalar variant: all three
            // where they lie, a class of lines at a time
            return (Plan::ByClass, Some(v));
        }
    } else if let Some(min) = narrow {
        let fits: Vec<u32> = [(a, widest[0]), (b, widest[1])].into_iter().filter(|&(m, _)| m).map(|(_, w)| w).filter(|&w| w >= min).collect();
        copy_a = a && widest[0] < min;
        copy_b = b && widest[1] < min;
        vector = fits.into_iter().min().filter(|&v| v < full_vector(spec));
        // a 16-bit tensor-core kernel's narrower cp.async runs at less than half its pace: copies where they cost less
        if vector.is_some() && matches!(spec.staging, Staging::CpAsync { .. }) && spec.a.elem.bytes() == 2 {
            let slower = slow_steps_seconds(spec, dims, [a && !copy_a, b && !copy_b], NARROW_S_PER_BYTE, machine);
            if copy_seconds(spec, dims, [a, b], machine) - copy_seconds(spec, dims, [copy_a, copy_b], machine) < slower {
                (vector, copy_a, copy_b) = (None, a, b);
            }
        }
    }
    let only_c = if c { scalar_c_spec_for(spec, dims.k) } else { None };
    let scalar_c = only_c.is_some();
    let Some(v) = vector else {
        // C alone (or nothing) by a variant; A and B as they are, or copied
        return match only_c {
            // (no narrower copy: A and B as they were planned, copies of TMA's slow lines too)
            Some(only_c) => (Plan::Variant { vector: None, only: None, scalar_c, a, b, c: false }, Some(only_c)),
            None => (Plan::Copied { a, b, c }, None),
        };
    };
    let base = only_c.as_ref().unwrap_or(spec);
    let narrowed = match only {
        None => narrowed_spec(base, v),
        Some(which) => narrowed_one_spec(base, v, which),
    };
    let Some(variant) = narrowed else {
        // the narrower copies break a rule of this tiling: A and B go through copies
        return match only_c {
            Some(only_c) => (Plan::Variant { vector: None, only: None, scalar_c, a, b, c: false }, Some(only_c)),
            None => (Plan::Copied { a, b, c }, None),
        };
    };
    (Plan::Variant { vector, only, scalar_c, a: copy_a, b: copy_b, c: c && !scalar_c }, Some(variant))
}

/// The fewest elements a copy of A or B into shared memory may move for
/// `spec`'s staging: cp.async moves 4 bytes or more (also where it fills
/// TMA's stages, given a producer warpgroup), a register-staged load one
/// element; `None` where the staging has no vector to narrow (TMA without
/// a producer warpgroup, wmma's direct fragment loads).
fn narrowest_vector(spec: &KernelSpec) -> Option<u32> {
    match spec.staging {
        Staging::CpAsync { .. } => Some((4 / spec.a.elem.bytes()).max(1)),
        Staging::Tma { .. } if spec.specialize.is_some() => Some((4 / spec.a.elem.bytes()).max(1)),
        Staging::Smem { .. } => Some(1),
        _ => None,
    }
}

/// What copying misaligned operands costs, as measured on the H200
/// (BENCHMARKS.md, 2026-11-27): the copies' traffic at about half the
/// memory's peak (2.4 of its 4.8 TB/s), and a launch's fixed cost besides
/// (scratch from the pool, the copy kernel's launch and its drain before
/// the product), put at 8 us where the choice falls between the sizes
/// measured: the ring of 8-byte copies level with the copies at 255 x 257
/// x 260 (5 K steps), behind from 383 x 385 x 388 (7), the ring of 4-byte
/// copies behind at 254 x 258 x 258.
const COPY_SHARE_OF_PEAK: f64 = 0.5;
const COPY_FIXED_S: f64 = 8e-6;

/// What a byte of a stage filled by cp.async from misaligned lines adds to
/// a K step against TMA's loads, by the copies' bytes (same figures):
/// 25-55 ps with 8-byte copies (the more the tiles per SM, the less) and
/// 40-80 with 4-byte ones; the middle of each.
const RING_S_PER_BYTE: [(u32, f64); 2] = [(8, 40e-12), (4, 60e-12)];

/// What the plans' costs read from the device: its SMs, which a launch's
/// tiles share in waves, and its memory's peak, a share of which the
/// copies move at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine {
    pub sms: u32,
    pub memory_bytes_per_s: f64,
}

impl Machine {
    /// The device behind `ctx`, read from its driver once a device.
    pub fn of(ctx: &CudaContext) -> Result<Machine, GemmError> {
        static READ: std::sync::Mutex<Vec<(usize, Machine)>> = std::sync::Mutex::new(Vec::new());
        let mut read = READ.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(_, m)) = read.iter().find(|(device, _)| *device == ctx.ordinal()) {
            return Ok(m);
        }
        let facts = crate::device::Facts::read(ctx)?;
        let m = Machine { sms: facts.sms, memory_bytes_per_s: facts.memory_bytes_per_s() };
        read.push((ctx.ordinal(), m));
        Ok(m)
    }

    /// Rounds of `tiles` over the SMs.
    fn waves(self, tiles: f64) -> f64 {
        (tiles / f64::from(self.sms.max(1))).ceil()
    }
}

/// The seconds a launch of `spec` at `dims` spends on copying the
/// operands `copied` (A, B): each read and written once more.
fn copy_seconds(spec: &KernelSpec, dims: Dims, copied: [bool; 2], machine: Machine) -> f64 {
    if copied == [false, false] {
        return 0.0;
    }
    let (m, n, k, count) = (dims.m as f64, dims.n as f64, dims.k as f64, dims.batch.count as f64);
    let elems = [m * k, k * n];
    let traffic = (0..2).filter(|&i| copied[i]).map(|i| 2.0 * elems[i] * count * spec.a.elem.bytes() as f64).sum::<f64>();
    COPY_FIXED_S + traffic / (COPY_SHARE_OF_PEAK * machine.memory_bytes_per_s)
}

/// What a byte of a stage that a 16-bit tensor-core kernel's cp.async
/// copies from misaligned lines adds to a K step, where the copies are
/// 8 bytes (`mma_autotuned`, same figures): 143 ps at 4095 x 4097 x
/// 4100, 330-370 at a thousand or two on each side; the least of them.
/// The copies its warps wait on are its own, where TMA's ring has a
/// producer of its own.
const NARROW_S_PER_BYTE: f64 = 143e-12;

/// The seconds TMA's stages filled by `ring`'s cp.async add to a launch of
/// `spec` at `dims`.
fn ring_seconds(spec: &KernelSpec, dims: Dims, ring: RingCopies, machine: Machine) -> f64 {
    let bytes = ring.vector * spec.a.elem.bytes();
    let per_byte = RING_S_PER_BYTE.iter().find(|&&(b, _)| b <= bytes).map_or(RING_S_PER_BYTE[1].1, |&(_, s)| s);
    slow_steps_seconds(spec, dims, [ring.fills(Which::A), ring.fills(Which::B)], per_byte, machine)
}

/// The seconds a launch of `spec` at `dims` spends past its own pace
/// where the stages of operands `slow` (A, B) fill at `per_byte` more a
/// byte: each SM's K steps (its share of the tiles, whole tiles each)
/// times those operands' bytes in a stage times what a byte costs.
fn slow_steps_seconds(spec: &KernelSpec, dims: Dims, slow: [bool; 2], per_byte: f64, machine: Machine) -> f64 {
    let (bm, bn, bk) = (spec.block.m as usize, spec.block.n as usize, spec.block.k.unwrap_or(64) as usize);
    let tiles = (dims.m.div_ceil(bm) * dims.n.div_ceil(bn) * dims.batch.count) as f64;
    let steps = machine.waves(tiles) * dims.k.div_ceil(bk) as f64;
    let bytes: usize = [bm, bn].into_iter().zip(slow).filter(|&(_, s)| s).map(|(lines, _)| lines * bk * spec.a.elem.bytes() as usize).sum();
    steps * bytes as f64 * per_byte
}

/// How a TMA launch best reads A and B that it would otherwise copy
/// (`copied`): the cp.async copies (of both, or of one while TMA loads the
/// other, where it lies or from its copy) that cost the least, among those
/// the operands' lines allow (`can`, each at its `widest` vector); `None`
/// where copying them costs less. The copies win but in shallow products:
/// with A and B both copied, past 4 K steps (8-byte copies) or 2 (4-byte).
pub fn ring_choice(spec: &KernelSpec, dims: Dims, copied: [bool; 2], can: [bool; 2], widest: [u32; 2], machine: Machine) -> Option<RingCopies> {
    let mut best = (copy_seconds(spec, dims, copied, machine), None);
    for fills in [[true, true], [true, false], [false, true]] {
        if (0..2).any(|i| fills[i] && !can[i]) {
            continue;
        }
        let vector = (0..2).filter(|&i| fills[i]).map(|i| widest[i]).min().unwrap_or(1);
        let only = match fills {
            [true, true] => None,
            [true, false] => Some(Which::A),
            _ => Some(Which::B),
        };
        let ring = RingCopies { vector, only };
        let cost = ring_seconds(spec, dims, ring, machine) + copy_seconds(spec, dims, [copied[0] && !fills[0], copied[1] && !fills[1]], machine);
        if cost < best.0 {
            best = (cost, Some(ring));
        }
    }
    best.1
}

/// The elements a copy of A or B moves in `spec` itself: TMA's lines are 16
/// bytes aligned.
fn full_vector(spec: &KernelSpec) -> u32 {
    match spec.staging {
        Staging::Tma { cp_async: None, .. } => 16 / spec.a.elem.bytes(),
        s => s.vector(),
    }
}

/// `spec` with its copies of A and B into shared memory narrowed to `v`
/// elements (for a TMA spec, its stages filled by cp.async of `v`
/// elements, the producer given the registers that takes); `None` where
/// that breaks a rule of the tiling.
pub fn narrowed_spec(spec: &KernelSpec, v: u32) -> Option<KernelSpec> {
    narrowed(spec, v, None)
}

/// A TMA `spec` with the stages of operand `which` alone filled by
/// cp.async of `v` elements, TMA loading the other's; `None` where that
/// breaks a rule of the tiling.
pub fn narrowed_one_spec(spec: &KernelSpec, v: u32, which: Which) -> Option<KernelSpec> {
    narrowed(spec, v, Some(which))
}

fn narrowed(spec: &KernelSpec, v: u32, only: Option<Which>) -> Option<KernelSpec> {
    let mut variant = spec.clone();
    match &mut variant.staging {
        Staging::CpAsync { vector, .. } | Staging::Smem { vector, .. } if only.is_none() => *vector = v,
        Staging::Tma { cp_async, prefetch, .. } => {
            *cp_async = Some(RingCopies { vector: v, only });
            // (the rules take the L2 prefetch where TMA fills the stages alone)
            *prefetch = 0;
            // the producer warpgroup's copies need registers the TMA producer gave away
            if let Some(sp) = variant.specialize.as_mut().filter(|sp| sp.producer_regs.is_some_and(|r| r < RING_PRODUCER_REGS)) {
                sp.producer_regs = Some(RING_PRODUCER_REGS);
                // an SM's 65,536 registers are 512 a thread of a warpgroup: what the producer leaves, the consumers share
                let left = (512 - RING_PRODUCER_REGS * sp.producers) / sp.consumers.max(1) / 8 * 8;
                sp.consumer_regs = sp.consumer_regs.map(|c| c.min(left));
            }
        }
        _ => return None,
    }
    gemm_core::check(&variant).is_empty().then_some(variant)
}

/// What a K step of a block's tile costs `hopper_autotuned`'s tiling on the
/// H100, by either tile (128 x 256, or 256 x 128 turned over in the
/// by-class variant): it ran 4095 x 4097 x 4100 at 680-687 TFLOP/s, 200-202
/// us for four tiles of 65 or 66 steps a block (BENCHMARKS.md, commits
/// 7c83225 and 58b25f5).
const TILE_STEP_S: f64 = 0.77e-6;

/// Whether the by-class variant takes a launch of `dims` at all: one
/// problem, M at least 16 and N at least 8, so that every class of lines
/// holds some.
pub fn by_class_takes(dims: Dims) -> bool {
    dims.m >= 16 && dims.n >= 8 && dims.batch.count == 1
}

/// The by-class variant's tiles for `dims`: 16 classes of C's lines, each
/// in tiles of 256 of them, by columns of 128 (one more where the tiles'
/// shift needs it).
pub fn by_class_tiles(dims: Dims) -> usize {
    16usize.saturating_mul(dims.m.div_ceil(16).div_ceil(256)).saturating_mul(dims.n.saturating_add(7).div_ceil(128))
}

/// Whether the by-class `variant` of `spec` takes a launch at `addrs` (A's
/// and B's lines 8 bytes aligned, every class of lines holding some: M at
/// least 16, N at least 8; one problem) and costs less than `spec` with
/// the operands `copied` (A, B) copied first: its tiles' K steps, a class
/// of lines a tile, against the copies' traffic and the spec's own tiles'
/// steps. Its tiles hold 256 lines of one class of 16, so a small M leaves
/// most of each empty and the copies win there. Where C alone is
/// misaligned (nothing copied) it stands against the spec's variant that
/// writes C element by element, whose stores the sum leaves out: the
/// by-class variant is taken where its rounds of tiles beat the spec's
/// (N = 4097: 4 rounds against 5), and the scalar variant kept where they
/// tie, though it ran slower at some of those too (BENCHMARKS.md).
fn by_class_pays(spec: &KernelSpec, variant: &KernelSpec, dims: Dims, addrs: [u64; 3], copied: [bool; 2], machine: Machine) -> bool {
    let shapes = crate::args::spec_shapes(spec, dims);
    if !by_class_takes(dims) || crate::args::misaligned(variant, &shapes, dims, addrs) != [false; 3] {
        return false;
    }
    let waves = |tiles: usize| machine.waves(tiles as f64);
    // the window starts up to 60 elements early and B's runs up to 12 past it
    let by_class = waves(by_class_tiles(dims)) * dims.k.saturating_add(72).div_ceil(64) as f64 * TILE_STEP_S;
    let tiles = dims.m.div_ceil(spec.block.m as usize).saturating_mul(dims.n.div_ceil(spec.block.n as usize));
    let copies = copy_seconds(spec, dims, copied, machine) + waves(tiles) * dims.k.div_ceil(64) as f64 * TILE_STEP_S;
    by_class < copies
}

/// The by-class variant of `spec` for a launch whose A or B (`slow`, as
/// [`repitched`] finds them) lie where TMA reads them slowly, where it costs
/// less than copying them: each class map starts at a 128-byte boundary
/// and holds lines 32 x ld bytes apart (a multiple of 128 for lines 16
/// bytes apart modulo 32), so every box starts 128 bytes aligned. At 4095
/// x 4097 x 4100 with lines padded to 8 elements, `hopper_tuned` ran 705.3
/// TFLOP/s so, and 542.5 with A and B copied (H200; the guide's Hopper
/// performance notes).
pub(crate) fn slow_lines_by_class(spec: &KernelSpec, dims: Dims, addrs: [u64; 3], slow: [bool; 3], machine: Machine) -> Option<KernelSpec> {
    if variants() != Variants::On || !(slow[0] || slow[1]) {
        return None;
    }
    by_class_spec(spec).filter(|v| by_class_pays(spec, v, dims, addrs, [slow[0], slow[1]], machine))
}

/// `spec`'s variant that reads A and B and writes C where they lie, a class
/// of lines at a time (`tma(by_class)`, the cuda module `by_class`), where
/// the spec's tiling is the one it is written for.
pub fn by_class_spec(spec: &KernelSpec) -> Option<KernelSpec> {
    let mut variant = spec.clone();
    match &mut variant.staging {
        Staging::Tma { by_class, .. } if spec.by_class_fits() => *by_class = true,
        _ => return None,
    }
    gemm_core::check(&variant).is_empty().then_some(variant)
}

/// The variant of `spec` that takes A, B and C at `addrs` where it can (see
/// [`Plan::Variant`]); `None` where the plan runs `spec` itself.
pub fn variant_spec(spec: &KernelSpec, dims: Dims, addrs: [u64; 3], machine: Machine) -> Option<KernelSpec> {
    route(spec, dims, addrs, machine).1
}

/// The variant of `spec` a C that its vector stores cannot take is written
/// by, in the caller's buffer at any alignment: where `spec` stores C
/// through a C tile (`smem`, `tma`), the same tiling with `epilogue =
/// smem_elements` (the tile stored in 16-byte chunks aligned to C's own
/// lines, or f32 elements, a warp's stores side by side); where it stores
/// from registers in vectors (`vector`), with `epilogue = direct`. C is then written once, instead of computed into
/// scratch and copied back. A C tile is never traded for a thread's
/// scattered element stores: on the H100 `tma_store` at 4096x11007x4096
/// ran at 70.4% of its aligned neighbour that way, against 77.4% with C
/// copied (BENCHMARKS.md). `None` where the spec stores elements already,
/// where its path has no such variant (wmma fragments stored straight from
/// registers), or where the variant breaks a rule: C then goes through a
/// copy. A C tile past shared memory beside the spec's stages (the whole
/// tile, where the TMA store's went out in parts) goes out in bands of
/// whole wgmma atoms on the Hopper path where the whole tile would cost a
/// stage ([`KernelSpec::c_tile_bands`]: on the H100 `hopper_autotuned` ran
/// 4096 x 4095 x 4096 at 728-735 TFLOP/s so, against 705-709 with the
/// whole tile and a stage fewer; with 256 x 128 tiles 688-692 against
/// 577-580), and elsewhere takes the deepest pipeline that leaves it room:
/// `hopper_tuned`'s four-stage point at 4096 x 11007 x 4096 ran 84.4% of
/// its aligned neighbour with C copied, where three stages and elements
/// ran 94% (BENCHMARKS.md). Bands pay in deep products only: a launch
/// takes [`scalar_c_spec_for`] its K.
pub fn scalar_c_spec(spec: &KernelSpec) -> Option<KernelSpec> {
    scalar_c_choice(spec, true)
}

/// For a grouped launch at `addrs` whose C lies where `spec`'s own stores
/// cannot write it, and whose A and B lie where `spec` reads them: the
/// variant that writes C. C cannot go through a copy (the rows past each
/// group's are not the kernel's to write back). The first of these that
/// the rules and C's placement allow: the C tile out in chunks aligned to C's lines
/// ([`scalar_c_spec_for`]; not under `gated`, whose products that tile
/// would not hold), then the threads' stores from their registers, in
/// pairs (`vector`; a gated C's products one element each) or elements
/// (`direct`). `None` where A or B lies where `spec` cannot read it, or
/// C where no variant writes it.
pub fn grouped_c_spec(spec: &KernelSpec, dims: Dims, addrs: [u64; 3]) -> Option<KernelSpec> {
    if misaligned(spec, dims, addrs) != [false, false, true] {
        return None;
    }
    let shapes = crate::args::spec_shapes(spec, dims);
    let writes_c = |v: &KernelSpec| gemm_core::check(v).is_empty() && !crate::args::misaligned(v, &shapes, dims, addrs)[2];
    // (overlapped halves go out by TMA alone)
    let specialize = spec.specialize.map(|sp| Specialize { overlap: false, ..sp });
    let from_registers = [Epilogue::Vector, Epilogue::Direct].map(|epilogue| KernelSpec { epilogue, specialize, ..spec.clone() });
    scalar_c_spec_for(spec, dims.k).into_iter().chain(from_registers).filter(|v| v != spec).find(writes_c)
}

/// K steps from which a C tile in bands (and a stage more) pays against the
/// whole tile: on the H100 `hopper_autotuned`'s variant at 4096 x 4095 x K
/// ran 3% and 1.4% slower in bands at K = 768 and 1024 (12 and 16 K steps),
/// GPT-2's LM head (K = 768) 4% slower, and 2-3% faster from K = 1536 (24),
/// 3.5% at 4096 (BENCHMARKS.md).
pub const BANDS_MIN_K_STEPS: usize = 20;

/// [`scalar_c_spec`] for a launch of depth `k`: under
/// [`BANDS_MIN_K_STEPS`] K steps, the whole C tile with the deepest
/// pipeline that leaves it room rather than bands, where one does.
pub fn scalar_c_spec_for(spec: &KernelSpec, k: usize) -> Option<KernelSpec> {
    let steps = k.div_ceil(spec.block.k.unwrap_or(1).max(1) as usize);
    scalar_c_choice(spec, steps >= BANDS_MIN_K_STEPS)
}

fn scalar_c_choice(spec: &KernelSpec, bands: bool) -> Option<KernelSpec> {
    let scalar = |s: &KernelSpec| {
        let r = s.requirements();
        r.c_vector == 1 && r.c_align <= s.c.elem.bytes()
    };
    let epilogue = match spec.epilogue {
        _ if scalar(spec) => return None,
        Epilogue::Smem | Epilogue::Tma => Epilogue::SmemElements,
        Epilogue::Vector => Epilogue::Direct,
        _ => return None,
    };
    // (overlapped halves go out by TMA alone: the variant's consumers take the whole tile at once)
    let specialize = spec.specialize.map(|sp| Specialize { overlap: false, ..sp });
    let variant = KernelSpec { epilogue, specialize, ..spec.clone() };
    if !scalar(&variant) {
        return None;
    }
    let stages = match variant.staging {
        Staging::Tma { stages, .. } | Staging::CpAsync { stages, .. } => stages,
        _ => 1,
    };
    // the spec's own stages first, then fewer, as a tuning space's points (a
    // spec without a pipeline: its own alone); the first the rules and the generator take
    let counts: Vec<gemm_core::tune::Value> = if stages >= 2 { (2..=stages as u64).rev().collect() } else { vec![stages.into()] };
    let points: Vec<_> = gemm_core::tune::expand(&variant, &[(gemm_core::tune::Setting::Stages, counts)])
        .into_iter()
        .filter(|p| p.refused.is_empty())
        .map(|p| p.spec)
        .collect();
    let whole = |s: &KernelSpec| s.c_tile().is_none_or(|t| t.bands == 1);
    // (without bands where they do not pay, unless no pipeline leaves the whole tile room)
    let pick = if bands { None } else { points.iter().find(|s| whole(s)) };
    pick.or(points.first()).cloned()
}

/// The fewest columns of C (for A) or rows (for B) a product must have
/// for a copy of an operand whose lines TMA reads slowly to pay. The copy
/// moves 4 bytes an element of A; the product spends 2 n flops on each,
/// and slow lines of both A and B made it 72% slower on the H100 (36% each,
/// taken here): at 2.5 TB/s for copies and 760 TFLOP/s the copy pays from
/// n near 1700 (BENCHMARKS.md).
pub const REPITCH_MIN: usize = 2048;

/// A and B (never C) whose lines a TMA kernel reads slowly (16 bytes apart
/// modulo 32) in a product wide enough to pay for a copy at a 128-byte
/// pitch ([`REPITCH_MIN`]).
pub(crate) fn repitched(spec: &KernelSpec, shapes: &[Shape; 3], dims: Dims) -> [bool; 3] {
    // (an operand whose stages cp.async fills is read at any pitch alike)
    let slow = |which: Which, i: usize, elem: gemm_core::spec::Elem, across: usize| {
        let pitch = shapes[i].ld.saturating_mul(elem.bytes() as usize);
        spec.tma_loads(which) && !spec.by_class() && !pitch.is_multiple_of(32) && across >= REPITCH_MIN
    };
    [slow(Which::A, 0, spec.a.elem, dims.n), slow(Which::B, 1, spec.b.elem, dims.m), false]
}

/// The operands (A, B, C) a launch at `addrs` copies: those the kernel
/// cannot take where they lie and those whose lines it reads slowly.
pub(crate) fn copied(spec: &KernelSpec, dims: Dims, addrs: [u64; 3]) -> [bool; 3] {
    let [a, b, c] = misaligned(spec, dims, addrs);
    let [ra, rb, _] = repitched(spec, &crate::args::spec_shapes(spec, dims), dims);
    [a || ra, b || rb, c]
}

/// Which operands (A, B, C) at `addrs` the kernel cannot take where they lie.
pub(crate) fn misaligned(spec: &KernelSpec, dims: Dims, addrs: [u64; 3]) -> [bool; 3] {
    let shapes = crate::args::spec_shapes(spec, dims);
    crate::args::misaligned(spec, &shapes, dims, addrs)
}

/// The operands of a launch as the kernel sees them after copying: their
/// dims (leading dimensions and batch strides of the copies), pointers and
/// buffer lengths, with the scratch that holds the copies.
pub(crate) struct Staged {
    pub dims: Dims,
    pub ptrs: [u64; 3],
    pub lens: [usize; 3],
    /// C's copy back into the caller's buffer, after the kernel.
    c_back: Option<Copy2d>,
    /// Whether copies run on the stream before the kernel.
    pub before: bool,
    _scratch: Vec<Scratch>,
}

/// The leading dimension an aligned copy of `shape` takes for `spec`: its
/// line length rounded up to the kernel's vector and pointer alignment.
pub(crate) fn aligned_ld(spec: &KernelSpec, shape: &Shape) -> usize {
    let req = spec.requirements();
    let (vector, align, elem) = match shape.name {
        'C' => (req.c_vector, req.c_align, spec.c.elem),
        'A' => (req.vector, req.align, spec.a.elem),
        _ => (req.vector, req.align, spec.b.elem),
    };
    let mut multiple = (vector as usize).max((align / elem.bytes()).max(1) as usize);
    if shape.name != 'C' && matches!(spec.staging, Staging::Tma { .. }) {
        // TMA reads lines 128 bytes apart fastest (see the module's page)
        multiple = multiple.max(128 / elem.bytes() as usize);
    }
    shape.min_ld().next_multiple_of(multiple)
}

/// Copies the operands marked in `copied` into aligned scratch on `stream`
/// (C only where `read_c`), and gives what the kernel is launched on.
pub(crate) fn stage(
    stream: &CudaStream,
    spec: &KernelSpec,
    dims: Dims,
    ptrs: [u64; 3],
    lens: [usize; 3],
    copied: [bool; 3],
    read_c: bool,
) -> Result<Staged, GemmError> {
    let shapes = crate::args::spec_shapes(spec, dims);
    let mut out = Staged { dims, ptrs, lens, c_back: None, before: false, _scratch: Vec::new() };
    let elems = [spec.a.elem, spec.b.elem, spec.c.elem];
    let strides = [dims.batch.stride_a, dims.batch.stride_b, dims.batch.stride_c];
    // the copies the kernel reads, made in one launch for each element size
    let mut before = Vec::new();
    for i in (0..3).filter(|&i| copied[i]) {
        let (shape, bytes) = (&shapes[i], elems[i].bytes() as usize);
        let (lines, len) = match shape.layout {
            Layout::RowMajor => (shape.rows, shape.cols),
            Layout::ColMajor => (shape.cols, shape.rows),
        };
        let ld = aligned_ld(spec, shape);
        // a batch that shares the operand (stride 0) shares one copy
        let count = if dims.batch.count > 1 && strides[i] > 0 { dims.batch.count } else { 1 };
        // each problem's copy starts 256 bytes aligned, as the scratch does
        let stride = (lines * ld * bytes).next_multiple_of(256);
        let scratch = Scratch::new(stream, count * stride)?;
        let copy = Copy2d {
            bytes,
            src: ptrs[i],
            src_pitch: shape.ld * bytes,
            src_stride: if count > 1 { strides[i] * bytes } else { 0 },
            dst: scratch.ptr(),
            dst_pitch: ld * bytes,
            dst_stride: stride,
            width: len * bytes,
            height: lines,
            count,
        };
        if i < 2 || read_c {
            before.push(copy);
        }
        if i == 2 {
            out.c_back = Some(copy.reversed());
        }
        out.ptrs[i] = scratch.ptr();
        out.lens[i] = count * stride / bytes;
        let elem_stride = if count > 1 { stride / bytes } else { 0 };
        match i {
            0 => (out.dims.lda, out.dims.batch.stride_a) = (Some(ld), elem_stride),
            1 => (out.dims.ldb, out.dims.batch.stride_b) = (Some(ld), elem_stride),
            _ => (out.dims.ldc, out.dims.batch.stride_c) = (Some(ld), elem_stride),
        }
        out._scratch.push(scratch);
    }
    out.before = !before.is_empty();
    while let Some(bytes) = before.first().map(|c| c.bytes) {
        let (same, rest): (Vec<Copy2d>, Vec<Copy2d>) = before.into_iter().partition(|c| c.bytes == bytes);
        crate::copy::run_all(stream, &same)?;
        before = rest;
    }
    Ok(out)
}

impl Staged {
    /// After the kernel: C's copy back into the caller's buffer.
    pub(crate) fn finish(&self, stream: &CudaStream) -> Result<(), GemmError> {
        match &self.c_back {
            Some(copy) => copy.run(stream),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::spec::*;

    /// A device of the H200's SMs and memory peak (as its driver's clock
    /// and bus width give it), on which the costs were measured: the plans
    /// below are its.
    const MEASURED_ON: Machine = Machine { sms: 132, memory_bytes_per_s: 4.815e12 };

    fn plan(spec: &KernelSpec, dims: Dims, lens: [usize; 3], addrs: [u64; 3]) -> Result<Plan, GemmError> {
        super::plan(spec, dims, lens, addrs, MEASURED_ON)
    }

    fn route(spec: &KernelSpec, dims: Dims, addrs: [u64; 3]) -> (Plan, Option<KernelSpec>) {
        super::route(spec, dims, addrs, MEASURED_ON)
    }

    fn variant_spec(spec: &KernelSpec, dims: Dims, addrs: [u64; 3]) -> Option<KernelSpec> {
        super::variant_spec(spec, dims, addrs, MEASURED_ON)
    }

    /// The costs read the device they plan for: a ring's slower K steps
    /// come in rounds of the device's SMs (half the SMs, twice the rounds
    /// of 132 tiles), and the copies move at a share of its memory's peak
    /// (twice the peak, half the traffic's time).
    #[test]
    fn the_plans_costs_follow_the_devices_sms_and_memory() {
        let tma = crate::test_specs::tma_store();
        let dims = Dims::new(128 * 12, 256 * 11, 4096);
        let half = Machine { sms: 66, ..MEASURED_ON };
        let one = slow_steps_seconds(&tma, dims, [true, true], 1e-12, MEASURED_ON);
        assert!(one > 0.0 && (slow_steps_seconds(&tma, dims, [true, true], 1e-12, half) - 2.0 * one).abs() < 1e-15 * one.max(1.0));
        let fast = Machine { memory_bytes_per_s: 2.0 * MEASURED_ON.memory_bytes_per_s, ..MEASURED_ON };
        let traffic = |m| copy_seconds(&tma, dims, [true, true], m) - COPY_FIXED_S;
        assert!((traffic(MEASURED_ON) - 2.0 * traffic(fast)).abs() < 1e-9 * traffic(MEASURED_ON));
    }

    use crate::test_specs::mma;

    const BASE: u64 = 1 << 20;

    /// Odd leading dimensions, odd offsets and odd batch strides each send
    /// their operand (and only it) through a copy; what no copy mends
    /// stays an error.
    #[test]
    fn misaligned_operands_and_only_they_are_copied() {
        let s = mma();
        let (m, n, k) = (129, 257, 65);
        let lens = [m * k, k * n, m * n];
        let addrs = [BASE, BASE << 1, BASE << 2];
        let aligned = Dims::new(m, n, k).with_ld(72, 264, 264);
        let big = [m * 72, k * 264, m * 264];
        assert_eq!(plan(&s, aligned, big, addrs).unwrap(), Plan::Direct);
        // K = 65: A's rows 130 bytes apart, under cp.async's 4; N = 257: B's
        // and C's too (C written where it lies by the variant that stores elements)
        let scalar_c = |a, b| Plan::Variant { vector: None, only: None, scalar_c: true, a, b, c: false };
        assert_eq!(plan(&s, Dims::new(m, n, k), lens, addrs).unwrap(), scalar_c(true, true));
        // C alone, a view one element into its buffer
        assert_eq!(plan(&s, aligned, big, [BASE, BASE << 1, (BASE << 2) + 2]).unwrap(), scalar_c(false, false));
        // B a view 2 bytes into its buffer
        assert_eq!(plan(&s, aligned, big, [BASE, (BASE << 1) + 2, BASE << 2]).unwrap(), Plan::Copied { a: false, b: true, c: false });
        // a batch whose A problems lie 3 elements past a multiple of 8 apart
        let batched = aligned.batched(2, m * 72 + 3, 0, m * 264);
        let lens2 = [2 * m * 72 + 3, k * 264, 2 * m * 264];
        assert_eq!(plan(&s, batched, lens2, addrs).unwrap(), Plan::Copied { a: true, b: false, c: false });
        // a short buffer is no alignment problem
        assert!(matches!(plan(&s, aligned, [100, big[1], big[2]], addrs), Err(GemmError::BufferTooSmall { .. })));
    }

    /// An empty product takes no copy or variant, at any alignment: nothing
    /// is written, or over K = 0 the kernel runs on zeros of its own.
    #[test]
    fn an_empty_product_plans_as_empty_whatever_the_alignment() {
        let s = mma();
        let odd = [BASE + 2, BASE + 2, (BASE << 2) + 2];
        assert_eq!(plan(&s, Dims::new(0, 257, 65), [0, 65 * 257, 0], odd).unwrap(), Plan::Empty);
        assert_eq!(plan(&s, Dims::new(129, 257, 0), [0, 0, 129 * 257], odd).unwrap(), Plan::Empty);
        assert!(matches!(plan(&s, Dims::new(129, 257, 0), [0, 0, 100], odd), Err(GemmError::BufferTooSmall { operand: 'C', .. })));
    }

    /// A grouped kernel reads and writes its operands where they lie: a
    /// launch it can take so is direct (lines TMA reads slowly included,
    /// which other kernels copy), one whose A or B it cannot is refused,
    /// never copied (a copy of C would write the rows past each group's),
    /// and a C it cannot write is written by a variant that can.
    #[test]
    fn grouped_operands_are_taken_where_they_lie_or_refused() {
        let s = KernelSpec { epilogue: Epilogue::Vector, groups: Some(Groups::Masked), ..crate::test_specs::tma_store() };
        assert!(gemm_core::check(&s).is_empty(), "{:?}", gemm_core::check(&s));
        let (m, n, k) = (300, 264, 200);
        let dims = Dims::new(m, n, k).batched(4, m * k, n * k, m * n);
        let lens = [4 * m * k, 4 * n * k, 4 * m * n];
        let addrs = [BASE, BASE << 1, BASE << 2];
        assert_eq!(plan(&s, dims, lens, addrs).unwrap(), Plan::Direct);
        // B a view 2 bytes into its buffer: a plain kernel would copy it
        assert!(matches!(plan(&s, dims, lens, [BASE, (BASE << 1) + 2, BASE << 2]), Err(GemmError::Misaligned { .. })));
        // C a view 2 bytes into its buffer: the pairs' variant stores elements
        let c_at = [BASE, BASE << 1, (BASE << 2) + 2];
        let by_variant = Plan::Variant { vector: None, only: None, scalar_c: true, a: false, b: false, c: false };
        assert_eq!(plan(&s, dims, lens, c_at).unwrap(), by_variant);
        assert_eq!(grouped_c_spec(&s, dims, c_at).map(|v| v.epilogue), Some(Epilogue::Direct));
        // and with B's view too, refused
        assert!(matches!(plan(&s, dims, lens, [BASE, (BASE << 1) + 2, (BASE << 2) + 2]), Err(GemmError::Misaligned { .. })));
    }

    /// Contiguous groups' C out by TMA stores needs 16-byte aligned lines;
    /// lines that are not go out through the C tile in chunks aligned to
    /// C's own lines, and a gated C (whose C tile holds the product's
    /// width) by each thread's products from its registers (one element
    /// of C a pair of accumulators). The variant writes C where it lies:
    /// its alignment rules take it.
    #[test]
    fn contiguous_groups_write_a_misaligned_c_by_a_variant_of_their_tiling() {
        let s = KernelSpec { edges: Edges::Guarded, groups: Some(Groups::Contiguous), ..crate::test_specs::tma_store() };
        assert!(gemm_core::check(&s).is_empty(), "{:?}", gemm_core::check(&s));
        let (m, n, k, g) = (700, 264, 200, 4);
        let addrs = [BASE, BASE << 1, BASE << 2];
        let lens = [m * k, g * n * k, m * (n + 8)];
        let dims = |ldc: usize| Dims::new(m, n, k).with_ld(k, k, ldc).batched(g, 0, n * k, 0);
        let by_variant = Plan::Variant { vector: None, only: None, scalar_c: true, a: false, b: false, c: false };
        assert_eq!(plan(&s, dims(n + 8), lens, addrs).unwrap(), Plan::Direct);
        for ldc in [n + 1, n + 2, n + 4] {
            assert_eq!(plan(&s, dims(ldc), lens, addrs).unwrap(), by_variant, "C's lines {ldc} apart");
            let v = grouped_c_spec(&s, dims(ldc), addrs).expect("a variant");
            assert_eq!(v.epilogue, Epilogue::SmemElements, "C's lines {ldc} apart");
            assert_eq!(crate::args::misaligned(&v, &crate::args::spec_shapes(&v, dims(ldc)), dims(ldc), addrs), [false; 3]);
        }
        let mut gated = s.clone();
        gated.fused = gemm_core::spec::Fused { activation: Some(gemm_core::spec::Activation::Silu), gated: true, ..Default::default() };
        assert!(gemm_core::check(&gated).is_empty(), "{:?}", gemm_core::check(&gated));
        let half = n / 2;
        let gated_dims = |ldc: usize| Dims::new(m, n, k).with_ld(k, k, ldc).batched(g, 0, n * k, 0);
        assert_eq!(plan(&gated, gated_dims(half + 4), lens, addrs).unwrap(), Plan::Direct);
        for ldc in [half + 2, half + 1] {
            assert_eq!(plan(&gated, gated_dims(ldc), lens, addrs).unwrap(), by_variant, "C's lines {ldc} apart");
            assert_eq!(grouped_c_spec(&gated, gated_dims(ldc), addrs).map(|v| v.epilogue), Some(Epilogue::Vector), "C's lines {ldc} apart");
        }
    }

    /// An A or B whose lines or address allow narrower cp.async copies (8
    /// or 4 bytes) is read where it lies by the variant with that vector,
    /// the narrowest either needs, where that costs a 16-bit kernel less
    /// than copying it; one that allows none (2-byte aligned bf16) is
    /// copied. f32 under cp.async never needs a copy: 4 bytes is one
    /// element.
    #[test]
    fn operands_that_allow_narrower_copies_are_read_where_they_lie() {
        let s = mma();
        let (m, n, k) = (128, 256, 64);
        let addrs = [BASE, BASE << 1, BASE << 2];
        let big = [1 << 16; 3];
        let narrow = |v: u32, a, b| Plan::Variant { vector: Some(v), only: None, scalar_c: false, a, b, c: false };
        // A's lines 68 elements apart: 136 bytes, 8-byte aligned
        assert_eq!(plan(&s, Dims::new(m, n, k).with_ld(68, 256, 256), big, addrs).unwrap(), narrow(4, false, false));
        // and B 4 bytes into its buffer: 4-byte copies for both
        assert_eq!(plan(&s, Dims::new(m, n, k).with_ld(68, 256, 256), big, [BASE, (BASE << 1) + 4, BASE << 2]).unwrap(), narrow(2, false, false));
        // with B's lines 257 elements apart B is copied, and A with it: a launch that copies pays
        // the copy's fixed cost once, and A's traffic costs less than its slower K step
        assert_eq!(plan(&s, Dims::new(m, n, k).with_ld(68, 257, 256), big, addrs).unwrap(), Plan::Copied { a: true, b: true, c: false });
        // A alone in a deeper product: its copy costs less than 8-byte copies at each of 16 K steps
        assert_eq!(
            plan(&s, Dims::new(m, n, 1024).with_ld(1028, 256, 256), [1 << 20; 3], addrs).unwrap(),
            Plan::Copied { a: true, b: false, c: false }
        );
        let v = variant_spec(&s, Dims::new(m, n, k).with_ld(68, 256, 256), addrs).expect("a variant");
        assert_eq!(v.staging, Staging::CpAsync { stages: 3, vector: 4, transpose_a: false, fragments: 1 });
        assert_eq!(KernelSpec { staging: s.staging, ..v }, s, "only the vector changes");
        // f32 under cp.async: any line takes 4-byte copies
        let simt = KernelSpec {
            a: Operand { elem: Elem::F32, layout: Layout::RowMajor },
            b: Operand { elem: Elem::F32, layout: Layout::RowMajor },
            c: Operand { elem: Elem::F32, layout: Layout::RowMajor },
            block: Block { m: 128, n: 128, k: Some(16), threads: 256, min_blocks: None },
            warp: Some(Warp { m: 64, n: 32, m_iters: 1, n_iters: 2 }),
            thread: Some(ThreadTile { m: 8, n: 4, lanes: Dim::N, sweep: Dim::N }),
            atom: Atom::Fma,
            staging: Staging::CpAsync { stages: 3, vector: 4, transpose_a: false, fragments: 1 },
            swizzle: Swizzle::None,
            epilogue: Epilogue::Direct,
            ..s.clone()
        };
        let checked = gemm_core::check(&simt);
        assert!(checked.is_empty(), "{checked:?}");
        assert_eq!(plan(&simt, Dims::new(m, n, k).with_ld(67, 259, 256), big, addrs).unwrap(), narrow(1, false, false));
    }

    /// A narrower copy multiplies the copies a thread issues: where that
    /// passes what a thread holds (`MAX_COPIES_A_THREAD`: a tile of 64 x
    /// 128 x 64 on 64 threads is 96 copies of 4 bytes), the operands are
    /// copied; 8-byte copies (48) are read where they lie.
    #[test]
    fn narrower_copies_past_what_a_thread_holds_give_way_to_copies() {
        let s = KernelSpec {
            block: Block { m: 64, n: 128, k: Some(64), threads: 64, min_blocks: None },
            warp: Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 }),
            staging: Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 2 },
            ..mma()
        };
        assert!(gemm_core::check(&s).is_empty(), "{:?}", gemm_core::check(&s));
        assert!(narrowed_spec(&s, 2).is_none() && narrowed_spec(&s, 4).is_some());
        let (addrs, big) = ([BASE, BASE << 1, BASE << 2], [1 << 20; 3]);
        // lines 4 bytes aligned (134 and 130 elements apart), then 8 (132 and 132)
        assert_eq!(plan(&s, Dims::new(257, 128, 128).with_ld(134, 130, 128), big, addrs).unwrap(), Plan::Copied { a: true, b: true, c: false });
        let narrow = Plan::Variant { vector: Some(4), only: None, scalar_c: false, a: false, b: false, c: false };
        assert_eq!(plan(&s, Dims::new(257, 128, 128).with_ld(132, 132, 128), big, addrs).unwrap(), narrow);
    }

    /// Over many leading dimensions and offsets, the plan is what its
    /// variant then finds: the operands it marks copied are the only ones
    /// the variant cannot take where they lie.
    #[test]
    fn a_variant_takes_every_operand_its_plan_does_not_copy() {
        let mma = mma();
        let vector = KernelSpec { epilogue: Epilogue::Vector, ..mma.clone() };
        let (m, n, k) = (128, 256, 64);
        let mut variants = 0;
        for spec in [&mma, &vector] {
            for extra in 0..8 {
                for offset in 0..8u64 {
                    let dims = Dims::new(m, n, k).with_ld(64 + extra, 256 + (extra * 3) % 8, 256 + (extra * 5) % 8);
                    let addrs = [BASE + 2 * offset, (BASE << 1) + 2 * ((offset * 3) % 8), (BASE << 2) + 2 * ((offset * 7) % 8)];
                    let (plan, variant) = route(spec, dims, addrs);
                    let Plan::Variant { a, b, c, .. } = plan else { continue };
                    let v = variant.expect("a variant with a variant plan");
                    assert_eq!(misaligned(&v, dims, addrs), [a, b, c], "{plan:?} at {dims:?} {addrs:?}");
                    variants += 1;
                }
            }
        }
        assert!(variants > 50, "{variants} variant plans");
    }

    /// The scalar-C variant is the same tiling with its C tile stored an
    /// element at a time (`smem_elements`), or without a C tile `direct`,
    /// and takes C at any element; wmma fragments stored straight from
    /// registers (no scratch tile to store elements from) have none, and
    /// their C goes through a copy. A whole C tile that leaves the spec's
    /// stages too little room takes fewer stages.
    #[test]
    fn a_misaligned_c_is_written_by_the_scalar_variant_where_the_path_has_one() {
        let tile = scalar_c_spec(&mma()).expect("a C tile stores elements");
        assert_eq!(tile.epilogue, Epilogue::SmemElements, "a C tile's coalesced stores are kept");
        assert_eq!((tile.requirements().c_vector, tile.requirements().c_align), (1, 2));
        let s = KernelSpec { epilogue: Epilogue::Vector, ..mma() };
        let v = scalar_c_spec(&s).expect("an mma kernel stores elements");
        assert_eq!(KernelSpec { epilogue: Epilogue::Vector, ..v.clone() }, s);
        assert_ne!(v.kernel_name(), s.kernel_name(), "the variant is a kernel of its own");
        assert_eq!((v.requirements().c_vector, v.requirements().c_align), (1, 2));
        assert!(scalar_c_spec(&v).is_none(), "a scalar C needs no variant");
        let wmma = KernelSpec {
            atom: Atom::Wmma { m: 16, n: 16, k: 16 },
            warp: Some(Warp { m: 32, n: 32, m_iters: 1, n_iters: 1 }),
            staging: Staging::Direct,
            swizzle: Swizzle::None,
            epilogue: Epilogue::Direct,
            edges: Edges::Whole,
            c: Operand { elem: Elem::F32, layout: Layout::RowMajor },
            a: Operand { elem: Elem::F16, layout: Layout::RowMajor },
            b: Operand { elem: Elem::F16, layout: Layout::RowMajor },
            block: Block { m: 64, n: 64, k: None, threads: 128, min_blocks: None },
            ..s
        };
        assert!(gemm_core::check(&wmma).is_empty(), "{:?}", gemm_core::check(&wmma));
        assert!(scalar_c_spec(&wmma).is_none());
        let dims = Dims::new(128, 64, 64).with_ld(64, 64, 65);
        assert_eq!(plan(&wmma, dims, [1 << 16; 3], [BASE, BASE << 1, BASE << 2]).unwrap(), Plan::Copied { a: false, b: false, c: true });
        // four stages of 128 x 256 tiles, whose TMA store's C tile goes out in
        // two parts: the tile of elements beside four in two bands of 64 rows
        let deep = KernelSpec { staging: Staging::tma(4), ..crate::test_specs::tma_store() };
        assert!(gemm_core::check(&deep).is_empty());
        let v = scalar_c_spec(&deep).expect("a variant in bands");
        assert_eq!((v.epilogue, v.staging), (Epilogue::SmemElements, deep.staging));
        assert_eq!(v.c_tile().map(|t| (t.bands, t.lines)), Some((2, 128)));
        assert_eq!(scalar_c_spec_for(&deep, 20 * 64), Some(v));
        // in a shallow product the whole tile and a stage fewer
        let shallow = scalar_c_spec_for(&deep, 19 * 64).expect("a variant");
        assert_eq!((shallow.staging, shallow.c_tile().map(|t| t.bands)), (Staging::tma(3), Some(1)));
        // overlapped halves (TMA stores alone): the variant's consumers store the whole tile at once
        let mut overlap = KernelSpec { atom: gemm_core::spec::Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false }, ..deep };
        overlap.specialize = overlap.specialize.map(|sp| Specialize { overlap: true, ..sp });
        assert!(gemm_core::check(&overlap).is_empty(), "{:?}", gemm_core::check(&overlap));
        let v = scalar_c_spec(&overlap).expect("a variant without overlap");
        assert_eq!((v.epilogue, v.specialize.map(|sp| sp.overlap)), (Epilogue::SmemElements, Some(false)));
    }

    /// TMA reads lines 16 bytes apart modulo 32 at 58% of its speed: such
    /// an A or B is copied at a 128-byte pitch where the product is wide
    /// enough to pay for the copy, or read by class of lines where the
    /// spec's by-class variant costs less, and read where it lies
    /// otherwise; lines 32 bytes apart, and cp.async kernels, read them
    /// where they lie.
    #[test]
    fn tma_lines_16_bytes_apart_modulo_32_are_copied_or_read_by_class_where_the_product_pays() {
        let tma = crate::test_specs::tma_store();
        let addrs = [BASE, BASE << 1, BASE << 2];
        let big = [1 << 26; 3];
        // K = 4100 padded to 8 elements: A's and B's lines 8208 bytes apart
        let padded8 = Dims::new(4096, 4096, 4100).with_ld(4104, 4104, 4096);
        assert_eq!(plan(&tma, padded8, big, addrs).unwrap(), Plan::Copied { a: true, b: true, c: false });
        // padded to 16 elements: 8224 bytes, a multiple of 32
        assert_eq!(plan(&tma, Dims::new(4096, 4096, 4100).with_ld(4112, 4112, 4096), big, addrs).unwrap(), Plan::Direct);
        // 1024 columns of C do not pay for A's copy; 4096 rows pay for B's
        let narrow = Dims::new(4096, 1024, 4100).with_ld(4104, 4104, 1024);
        assert_eq!(plan(&tma, narrow, big, addrs).unwrap(), Plan::Copied { a: false, b: true, c: false });
        // cp.async: the same lines where they lie
        let rows = Dims::new(4096, 4096, 4100).with_ld(4104, 4096, 4096);
        assert_eq!(plan(&mma(), rows, big, addrs).unwrap(), Plan::Direct);
        // a misaligned C beside them: C by the variant, A and B copied (three stages: no by-class
        // variant); with four, A and B where they lie by class of lines, C too
        let odd_c = Dims::new(4096, 4096, 4100).with_ld(4104, 4104, 4097);
        assert_eq!(plan(&tma, odd_c, big, addrs).unwrap(), Plan::Variant { vector: None, only: None, scalar_c: true, a: true, b: true, c: false });
        let four = KernelSpec { staging: Staging::tma(4), ..tma.clone() };
        assert_eq!(plan(&four, odd_c, big, addrs).unwrap(), Plan::ByClass);
        // C aligned: the same, the by-class variant in place of A's and B's copies
        assert_eq!(plan(&four, padded8, big, addrs).unwrap(), Plan::ByClass);
        assert_eq!(plan(&four, Dims::new(4095, 4097, 4100).with_ld(4104, 4104, 4104), big, addrs).unwrap(), Plan::ByClass);
        assert!(variant_spec(&four, padded8, addrs).is_some_and(|v| v.by_class()), "the variant the launch runs");
        assert_eq!(plan(&four, narrow, big, addrs).unwrap(), Plan::Copied { a: false, b: true, c: false }, "by class loses to B's copy");
        // copies of A and B for TMA: lines 128 bytes apart; C's the vector's
        let shapes = crate::args::shapes(tma.a, tma.b, tma.c, Dims::new(4095, 4097, 4100));
        assert_eq!(shapes.each_ref().map(|s| aligned_ld(&tma, s)), [4160, 4160, 4104]);
    }

    /// A TMA kernel whose A or B lines are 8 or 4 bytes aligned runs with
    /// the stages of those operands filled by cp.async of that many bytes
    /// (its producer given the registers the copies take) where that costs
    /// less than copying them, in shallow products; lines 2 bytes aligned,
    /// or a kernel whose cluster multicasts, go through copies.
    #[test]
    fn tma_kernels_read_lines_of_8_and_4_bytes_by_cp_async() {
        let tma = crate::test_specs::tma_store();
        let addrs = [BASE, BASE << 1, BASE << 2];
        let big = [1 << 26; 3];
        // every side odd, packed, shallow: A's lines (132) 8 bytes aligned, B's (132, column-major) too, C's 2
        let packed = Dims::new(255, 257, 132);
        assert_eq!(
            plan(&tma, packed, big, addrs).unwrap(),
            Plan::Variant { vector: Some(4), only: None, scalar_c: true, a: false, b: false, c: false }
        );
        let v = variant_spec(&tma, packed, addrs).unwrap();
        assert_eq!(
            v.staging,
            Staging::Tma { stages: 3, cp_async: Some(RingCopies::both(4)), prefetch: 0, evict_first: Default::default(), by_class: false }
        );
        let sp = v.specialize.unwrap();
        assert_eq!((sp.producer_regs, sp.consumer_regs), (Some(RING_PRODUCER_REGS), Some(232)));
        assert_eq!(v.epilogue, Epilogue::SmemElements);
        // B's lines 4 bytes aligned, A's 16, a shallow product: B's stages alone by 4-byte copies, C by TMA stores
        let b4 = Dims::new(128, 256, 128).with_ld(128, 130, 256);
        let b_only = Plan::Variant { vector: Some(2), only: Some(Which::B), scalar_c: false, a: false, b: false, c: false };
        assert_eq!(plan(&tma, b4, big, addrs).unwrap(), b_only);
        let v = variant_spec(&tma, b4, addrs).unwrap();
        assert_eq!(
            (v.staging, v.epilogue),
            (
                Staging::Tma {
                    stages: 3,
                    cp_async: Some(RingCopies { vector: 2, only: Some(Which::B) }),
                    prefetch: 0,
                    evict_first: Default::default(),
                    by_class: false
                },
                Epilogue::Tma
            )
        );
        // the variant takes B where it lies (A's 16-byte rule is A's alone)
        assert!(crate::args::check(&v, b4, big, addrs).is_ok(), "{:?}", crate::args::check(&v, b4, big, addrs).err());
        // partial tiles on every side, K's end inside a tile
        let edges = Dims::new(200, 300, 120).with_ld(120, 122, 304);
        assert_eq!(plan(&tma, edges, big, addrs).unwrap(), b_only);
        // a deeper one: 8 slower K steps cost more than B's copy
        assert_eq!(plan(&tma, Dims::new(200, 300, 500).with_ld(504, 506, 304), big, addrs).unwrap(), Plan::Copied { a: false, b: true, c: false });
        let b4_deep = Dims::new(128, 256, 4096).with_ld(4096, 4098, 256);
        assert_eq!(plan(&tma, b4_deep, big, addrs).unwrap(), Plan::Copied { a: false, b: true, c: false });
        assert_eq!(plan(&tma, Dims::new(200, 300, 4000).with_ld(4000, 4002, 304), big, addrs).unwrap(), Plan::Copied { a: false, b: true, c: false });
        // A's lines 2 bytes aligned: A copied, B where it lies
        let a2 = Dims::new(256, 256, 4096).with_ld(4097, 4096, 256);
        assert_eq!(plan(&tma, a2, big, addrs).unwrap(), Plan::Copied { a: true, b: false, c: false });
        // every line odd: the ring in shallow products, copies past 4 K steps (8-byte) or 2 (4-byte)
        // (by class of lines on a tiling of four stages: `lines_8_bytes_aligned_go_by_class_of_lines_where_that_pays`)
        let copied = Plan::Variant { vector: None, only: None, scalar_c: true, a: true, b: true, c: false };
        let both = |v| Plan::Variant { vector: Some(v), only: None, scalar_c: true, a: false, b: false, c: false };
        assert_eq!(plan(&tma, Dims::new(511, 513, 196), big, addrs).unwrap(), both(4));
        for packed in [Dims::new(255, 257, 324), Dims::new(511, 513, 516), Dims::new(1023, 1025, 1028), Dims::new(4095, 4097, 4100)] {
            assert_eq!(plan(&tma, packed, big, addrs).unwrap(), copied, "{packed:?}");
        }
        assert_eq!(plan(&tma, Dims::new(254, 258, 66), big, addrs).unwrap(), both(2));
        assert_eq!(plan(&tma, Dims::new(254, 258, 258), big, addrs).unwrap(), copied);
        // a cluster that multicasts B shares TMA's copies: cp.async has none to share
        let clustered = KernelSpec { cluster: Some(Cluster { m: 2, n: 1, multicast: Some(Which::B), k: 1 }), ..tma.clone() };
        assert!(gemm_core::check(&clustered).is_empty(), "{:?}", gemm_core::check(&clustered));
        assert_eq!(plan(&clustered, b4, big, addrs).unwrap(), Plan::Copied { a: false, b: true, c: false });
    }

    /// A copy's lines lie the kernel's vector apart (and its pointer
    /// alignment, for wmma's 32 bytes).
    #[test]
    fn copies_take_the_kernels_vector_as_their_line_multiple() {
        let s = mma();
        let shapes = crate::args::shapes(s.a, s.b, s.c, Dims::new(129, 257, 65));
        assert_eq!([aligned_ld(&s, &shapes[0]), aligned_ld(&s, &shapes[1]), aligned_ld(&s, &shapes[2])], [72, 264, 264]);
        let simt = KernelSpec {
            a: Operand { elem: Elem::F32, layout: Layout::ColMajor },
            b: Operand { elem: Elem::F32, layout: Layout::RowMajor },
            c: Operand { elem: Elem::F32, layout: Layout::RowMajor },
            staging: Staging::CpAsync { stages: 3, vector: 4, transpose_a: false, fragments: 1 },
            ..s.clone()
        };
        let shapes = crate::args::shapes(simt.a, simt.b, simt.c, Dims::new(129, 257, 65));
        // a column-major A: lines of m = 129 floats, 4 at a time
        assert_eq!(aligned_ld(&simt, &shapes[0]), 132);
    }

    /// The stages cp.async fills read their lines at any pitch: a ring's
    /// operand is never copied for TMA's slow lines (16 bytes modulo 32),
    /// only the operand TMA still loads, in a product wide enough.
    #[test]
    fn operands_a_ring_fills_are_not_copied_for_tmas_slow_lines() {
        let tma = crate::test_specs::tma_store();
        let addrs = [BASE, BASE << 1, BASE << 2];
        let big = [1 << 26; 3];
        // every line 8 bytes aligned, 4100 and 4104 elements apart: under 32
        let wide = Dims::new(4095, 4097, 4100);
        let padded = Dims::new(4096, 4096, 4100).with_ld(4104, 4104, 4096);
        let expect = |a, b| Plan::Variant { vector: None, only: None, scalar_c: true, a, b, c: false };
        let both = narrowed_spec(&tma, 4).unwrap();
        assert_eq!(plan(&both, wide, big, addrs).unwrap(), expect(false, false));
        assert_eq!(plan(&both, padded, big, addrs).unwrap(), Plan::Direct);
        let a_ring = narrowed_one_spec(&tma, 4, Which::A).unwrap();
        assert_eq!(plan(&a_ring, wide, big, addrs).unwrap(), expect(false, true));
        assert_eq!(plan(&a_ring, padded, big, addrs).unwrap(), Plan::Copied { a: false, b: true, c: false });
        let b_ring = narrowed_one_spec(&tma, 4, Which::B).unwrap();
        assert_eq!(plan(&b_ring, padded, big, addrs).unwrap(), Plan::Copied { a: true, b: false, c: false });
    }

    /// Lines 8 bytes aligned on the tiling the by-class variant is written
    /// for go by class of lines where its tiles pay (any 8-byte offset, C's
    /// lines at any), past the ring's shallow products; lines 4 bytes
    /// aligned, fewer than 16 lines of C, a batch, or another tiling go by
    /// the other plans.
    #[test]
    fn lines_8_bytes_aligned_go_by_class_of_lines_where_that_pays() {
        let three = crate::test_specs::tma_store();
        let tma = KernelSpec { staging: Staging::tma(4), ..three.clone() };
        let big = [1 << 26; 3];
        let at = |o: [u64; 3]| [BASE + 2 * o[0], (BASE << 1) + 2 * o[1], (BASE << 2) + 2 * o[2]];
        let target = Dims::new(4095, 4097, 4100);
        assert_eq!(plan(&tma, target, big, at([0, 0, 0])).unwrap(), Plan::ByClass);
        assert_eq!(plan(&tma, target.with_ld(4108, 4100, 4097), big, at([4, 12, 5])).unwrap(), Plan::ByClass);
        let v = variant_spec(&tma, target, at([0, 0, 0])).expect("the by-class variant");
        assert!(v.by_class() && v.kernel_name().contains("_byclass"), "{}", v.kernel_name());
        // A at an offset of 2 elements (4 bytes): A copied
        assert!(matches!(plan(&tma, target, big, at([2, 0, 0])).unwrap(), Plan::Variant { a: true, .. }));
        assert!(matches!(plan(&tma, Dims::new(15, 4097, 4100), big, at([0, 0, 0])).unwrap(), Plan::Variant { a: true, b: true, .. }));
        let batch = target.batched(2, 4095 * 4100, 4097 * 4100, 4095 * 4097);
        assert!(matches!(plan(&tma, batch, [1 << 27; 3], at([0, 0, 0])).unwrap(), Plan::Variant { a: true, b: true, .. }));
        // the packed odd shapes: the ring where shallow; by class, but where two waves of its
        // tiles stand against one of the spec's (and copies)
        assert!(matches!(plan(&tma, Dims::new(511, 513, 196), big, at([0; 3])).unwrap(), Plan::Variant { vector: Some(4), .. }));
        for packed in [Dims::new(255, 257, 324), Dims::new(511, 513, 516)] {
            assert_eq!(plan(&tma, packed, big, at([0; 3])).unwrap(), Plan::ByClass, "{packed:?}");
        }
        assert!(matches!(plan(&tma, Dims::new(1023, 1025, 1028), big, at([0; 3])).unwrap(), Plan::Variant { a: true, b: true, .. }));
        // C alone misaligned: by class where its rounds of tiles beat the spec's (N = 4097: 4
        // against 5; and M = 8192: 8 against 9), C by the scalar variant where they tie or lose
        // (M = 2048: 4 against 3; M = 1024: 4 against 2; N = 4001: 4 and 4); with three stages (no
        // by-class variant), the scalar variant
        let c_alone = |m, n, k| Dims::new(m, n, k).with_ld(k, k, n);
        let scalar_c = Plan::Variant { vector: None, only: None, scalar_c: true, a: false, b: false, c: false };
        for (m, n, k, by_class) in [
            (4096, 4097, 4096, true),
            (8192, 4097, 4096, true),
            (4096, 4097, 1024, true),
            (2048, 4097, 4096, false),
            (4096, 4001, 4096, false),
            (1024, 4097, 8192, false),
        ] {
            let expected = if by_class { Plan::ByClass } else { scalar_c };
            assert_eq!(plan(&tma, c_alone(m, n, k), big, at([0; 3])).unwrap(), expected, "{m} x {n} x {k}");
        }
        assert_eq!(plan(&three, c_alone(4096, 4097, 4096), big, at([0; 3])).unwrap(), scalar_c);
        // three stages, or a tiling it is not written for: none
        assert_eq!(by_class_spec(&three), None);
        assert_eq!(by_class_spec(&mma()), None);
    }
}
