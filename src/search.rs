//! A search over legal SIMT tilings: candidates are built as specs, the rules
//! of `gemm_core::check` reject what is illegal before anything is compiled,
//! and every compiled candidate is verified against cuBLAS before it is timed.

use std::collections::BTreeMap;

use gemm_runtime::spec::*;
use gemm_runtime::{Dims, Kernel};

use crate::measure::{time_on, verify_on, Bench, Failure, Problem, Reps};

/// The values tried for each knob.
#[derive(Clone, Debug)]
pub struct Space {
    pub block_m: Vec<u32>,
    pub block_n: Vec<u32>,
    pub block_k: Vec<u32>,
    pub warp_m: Vec<u32>,
    pub warp_n: Vec<u32>,
    pub thread_m: Vec<u32>,
    pub thread_n: Vec<u32>,
    /// How tiles reach shared memory: synchronous copies (one or two
    /// buffers) or cp.async pipelines of some depth.
    pub staging: Vec<Staging>,
    pub pad: Vec<u32>,
    /// Threads per block to keep (the tiling fixes the count; this bounds it).
    pub threads: Vec<u32>,
    /// Occupancy targets (`block(min_blocks = ..)`); `None` leaves registers uncapped.
    pub min_blocks: Vec<Option<u32>>,
    pub raster: Vec<Raster>,
    /// One block per C tile (`None`), or a persistent schedule.
    pub persistent: Vec<Option<Persistent>>,
    /// The dimension consecutive lanes step along inside a warp's sub-tile.
    pub lanes: Vec<Dim>,
    /// The dimension consecutive FMAs of a thread's outer product step along.
    pub sweep: Vec<Dim>,
    /// Fewest accumulators per thread to keep: small thread tiles cannot hide
    /// the latency of shared memory, so timing them is wasted.
    pub min_accumulators: u32,
}

impl Default for Space {
    /// Tiles around the seed's warptiling kernel: float4 loads, A transposed,
    /// float4 stores, warp tiles of 32 to 128 a side.
    fn default() -> Self {
        Space {
            block_m: vec![64, 128, 256],
            block_n: vec![64, 128, 256],
            block_k: vec![8, 16],
            warp_m: vec![32, 64, 128],
            warp_n: vec![32, 64, 128],
            thread_m: vec![4, 8],
            thread_n: vec![4, 8],
            staging: vec![smem(1), smem(2), cp_async(2), cp_async(3), cp_async(4)],
            pad: vec![4],
            threads: vec![128, 256],
            // Measured on the H100 (BENCHMARKS.md): capping registers for a
            // third block per SM never won, so it is left out by default.
            min_blocks: vec![None],
            raster: vec![Raster::Row, Raster::Grouped(8)],
            persistent: vec![None],
            lanes: vec![Dim::N],
            sweep: vec![Dim::N],
            min_accumulators: 64,
        }
    }
}

impl Space {
    /// Around the default search's winners on the H100: K steps of 8, double
    /// buffered or pipelined, with and without a register cap for a third
    /// block per SM.
    pub fn focused() -> Self {
        Space {
            block_m: vec![128, 256],
            block_n: vec![64, 128, 256],
            block_k: vec![8, 16],
            staging: vec![smem(2), cp_async(2), cp_async(3), cp_async(4)],
            min_blocks: vec![None, Some(3)],
            raster: vec![Raster::Row],
            ..Space::default()
        }
    }

    /// The focused space's pipelines under the stream-K schedule, which
    /// leaves no part-full last wave, with both FMA sweeps. Measured on the
    /// H100 (BENCHMARKS.md): K steps of 8 trailed 16 by 3% or more, and rows
    /// padded by 8 beat 4 on every cp.async tiling tried, so those are fixed.
    pub fn stream_k() -> Self {
        Space {
            block_k: vec![16],
            staging: vec![smem(2), cp_async(3), cp_async(4)],
            pad: vec![8],
            persistent: vec![Some(Persistent::StreamK)],
            sweep: vec![Dim::N, Dim::M],
            ..Space::focused()
        }
    }

    /// Single-buffered tiles only, as the `warptiling` step stages them: which
    /// tiling the H100 favours before any overlap of loads and math, with
    /// both FMA sweeps (K steps of 8 trailed by 5% or more when searched).
    pub fn single_buffered() -> Self {
        Space {
            block_k: vec![16, 32],
            sweep: vec![Dim::N, Dim::M],
            staging: vec![smem(1)],
            min_blocks: vec![None, Some(2), Some(3)],
            raster: vec![Raster::Row],
            ..Space::default()
        }
    }
}

/// Synchronous staging with float4 loads and A transposed.
fn smem(buffers: u32) -> Staging {
    Staging::Smem { vector: 4, transpose_a: true, buffers }
}

/// A cp.async pipeline with float4 copies of B and A transposed.
fn cp_async(stages: u32) -> Staging {
    Staging::CpAsync { stages, vector: 4, transpose_a: true, fragments: 1 }
}

/// The legal candidates, and how many were pruned by which rule.
pub struct Candidates {
    pub specs: Vec<KernelSpec>,
    pub considered: usize,
    /// Rejections by the argument each rule points at (`block.threads`, `warp`, ...).
    pub pruned: BTreeMap<&'static str, usize>,
}

impl Candidates {
    /// A space's points: the legal ones kept, the others counted by rule.
    fn add(&mut self, points: Vec<gemm_runtime::gemm_core::tune::Point>) {
        self.considered += points.len();
        for ((_, at), n) in gemm_runtime::gemm_core::tune::pruned(&points) {
            *self.pruned.entry(at).or_insert(0) += n;
        }
        self.specs.extend(points.into_iter().filter(|p| p.refused.is_empty()).map(|p| p.spec));
    }
}

/// Every point of `space` as a spec, kept only if the rules accept it:
/// `tune(..)` spaces over the tiles (`gemm_core::tune::expand`, the
/// threads and the warp iterations following them: the split of `warp
/// tile / (32 x thread tile)` into `m_iters x n_iters` that keeps lane
/// sub-tiles squarest), one per choice of staging, padding, blocks per SM,
/// raster, schedule, lanes and sweep, with the space's own prunes after
/// the rules'.
pub fn candidates(space: &Space) -> Candidates {
    use gemm_runtime::gemm_core::tune::{expand, simt_iterations, Setting, Value};
    let mut out = Candidates { specs: Vec::new(), considered: 0, pruned: BTreeMap::new() };
    let op = Operand { elem: Elem::F32, layout: Layout::RowMajor };
    let values = |v: &[u32]| v.iter().map(|&v| Value::from(v)).collect::<Vec<_>>();
    let lists = [
        (Setting::BlockM, values(&space.block_m)),
        (Setting::BlockN, values(&space.block_n)),
        (Setting::BlockK, values(&space.block_k)),
        (Setting::WarpM, values(&space.warp_m)),
        (Setting::WarpN, values(&space.warp_n)),
        (Setting::ThreadM, values(&space.thread_m)),
        (Setting::ThreadN, values(&space.thread_n)),
    ];
    for &staging in &space.staging {
        let knobs = space.pad.iter().flat_map(|p| {
            space.min_blocks.iter().flat_map(move |o| {
                space.raster.iter().flat_map(move |r| {
                    space
                        .persistent
                        .iter()
                        .flat_map(move |ps| space.lanes.iter().flat_map(move |l| space.sweep.iter().map(move |sw| (*p, *o, *r, *ps, *l, *sw))))
                })
            })
        });
        for (pad, min_blocks, raster, persistent, lanes, sweep) in knobs {
            // a base whose threads and iterations follow its tiles, so that every point's do
            let (m_iters, n_iters) = simt_iterations(32, 64, 8, 4);
            let base = KernelSpec {
                name: "tuned".into(),
                a: op,
                b: op,
                c: op,
                block: Block { m: 128, n: 128, k: Some(8), threads: 256, min_blocks },
                warp: Some(Warp { m: 32, n: 64, m_iters, n_iters }),
                thread: Some(ThreadTile { m: 8, n: 4, lanes, sweep }),
                atom: Atom::Fma,
                staging,
                specialize: None,
                swizzle: if pad == 0 { Swizzle::None } else { Swizzle::Pad(pad) },
                raster,
                persistent,
                cluster: None,
                epilogue: Epilogue::Vector,
                fused: Fused::default(),
                edges: Edges::Whole,
                groups: None,
                arch: Arch::Sm80,
            };
            for p in expand(&base, &lists) {
                out.considered += 1;
                let spec = p.spec;
                if let Some(d) = p.refused.first() {
                    *out.pruned.entry(d.at).or_insert(0) += 1;
                } else if !space.threads.contains(&spec.block.threads) {
                    *out.pruned.entry("threads outside the space").or_insert(0) += 1;
                } else if min_blocks.is_some() && spec.register_cap() == 255 {
                    *out.pruned.entry("min_blocks that caps nothing").or_insert(0) += 1;
                } else if spec.accumulators_per_thread() < space.min_accumulators {
                    *out.pruned.entry("fewer accumulators than the space's minimum").or_insert(0) += 1;
                } else {
                    out.specs.push(spec);
                }
            }
        }
    }
    out
}

/// The mma search's space: bf16 in and out, both operands row-major (the
/// tensor ladder's types), 16-byte cp.async copies into XOR-swizzled tiles,
/// every block and warp tile of 32 to 256 a side, K steps of 32 and 64, 3
/// to 5 stages, both rasters, with and without a cap for 2 blocks per SM,
/// fragments loaded right before their step's math or a step ahead, C
/// stored from the registers in pairs or through a C tile in shared memory:
/// `tune(..)` spaces over the tiles and stages (`gemm_core::tune::expand`,
/// the threads following the tiles), one per raster, cap, fragment and
/// epilogue choice, with the search's own prunes after the rules'.
pub fn mma_candidates() -> Candidates {
    use gemm_runtime::gemm_core::tune::{expand, Setting};
    let mut out = Candidates { specs: Vec::new(), considered: 0, pruned: BTreeMap::new() };
    let op = Operand { elem: Elem::Bf16, layout: Layout::RowMajor };
    let lists = [
        (Setting::BlockM, vec![64, 128, 256]),
        (Setting::BlockN, vec![64, 128, 256]),
        (Setting::BlockK, vec![32, 64]),
        (Setting::WarpM, vec![32, 64, 128]),
        (Setting::WarpN, vec![32, 64, 128]),
        (Setting::Stages, vec![3, 4, 5]),
    ];
    let settings = [(None, 1u32), (Some(2), 1), (None, 2), (Some(2), 2)].into_iter().flat_map(|f| [(f, Epilogue::Vector), (f, Epilogue::Smem)]);
    for raster in [Raster::Row, Raster::Grouped(8)] {
        for ((min_blocks, fragments), epilogue) in settings.clone() {
            // the threads follow each point's tiles (gemm_core::tune)
            let base = KernelSpec {
                name: "mma_tuned".into(),
                a: op,
                b: op,
                c: op,
                block: Block { m: 128, n: 128, k: Some(32), threads: 128, min_blocks },
                warp: Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 }),
                thread: None,
                atom: Atom::Mma { m: 16, n: 8, k: 16 },
                staging: Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments },
                specialize: None,
                swizzle: Swizzle::Xor,
                raster,
                persistent: None,
                cluster: None,
                epilogue,
                fused: Fused::default(),
                edges: Edges::Whole,
                groups: None,
                arch: Arch::Sm80,
            };
            for p in expand(&base, &lists) {
                out.considered += 1;
                let threads = p.spec.block.threads;
                let spec = p.spec;
                if let Some(d) = p.refused.first() {
                    *out.pruned.entry(d.at).or_insert(0) += 1;
                } else if ![128, 256].contains(&threads) {
                    *out.pruned.entry("threads other than 128 and 256").or_insert(0) += 1;
                } else if min_blocks.is_some() && spec.register_cap() == 255 {
                    *out.pruned.entry("min_blocks that caps nothing").or_insert(0) += 1;
                } else if min_blocks.is_some() && 2 * spec.smem_bytes() > Arch::Sm90.smem_per_sm() {
                    *out.pruned.entry("min_blocks = 2 over an SM's shared memory").or_insert(0) += 1;
                } else {
                    out.specs.push(spec);
                }
            }
        }
    }
    out
}

/// The Hopper search's space (sm_90a), as `tune(..)` spaces over the
/// Hopper ladder's `tma_store` (bf16, A row-major, B column-major, TMA
/// stages of K 64 in the 128-byte swizzle, grouped(8), which beat
/// grouped(4) and the Hilbert order on the H100): block tiles of 128 to
/// 256 a side, warpgroup tiles of 64 or 128 rows (the consumers, threads,
/// wgmma width and `setmaxnreg` follow, as `gemm_core::tune` derives
/// them), 2 to 5 stages; each over no cluster or clusters of two sharing
/// B (along m) or A (along n) by multicast, a block per tile, a
/// persistent grid or the hybrid, and C from the registers, through a C tile, or by TMA
/// stores; and ping-pong consumers over the `pingpong` step (tiles of 64 or
/// 128 by 128 or 256, 2 to 5 stages, each epilogue, alone or in clusters of
/// two sharing B). Edges guarded, as the ladder's are (TMA fills past
/// them), so that every tiling runs every size: 192-row tiles at 4096 too.
/// The rules prune what does not fit shared memory or the register file.
///
/// `focused`: the part of that space around the H100's winners, small
/// enough to compile and time in a few minutes (NVRTC takes seconds for
/// each wgmma kernel): persistent grids alone, C through a C tile or by TMA
/// stores, no cluster or 2x1 with B multicast, 3 to 5 stages.
pub fn hopper_candidates(focused: bool) -> Candidates {
    use gemm_runtime::gemm_core::tune::{expand, Setting};
    let mut out = Candidates { specs: Vec::new(), considered: 0, pruned: BTreeMap::new() };
    let stages = if focused { vec![3, 4, 5] } else { vec![2, 3, 4, 5] };
    let lists = [
        (Setting::BlockM, vec![128, 192, 256]),
        (Setting::BlockN, vec![128, 256]),
        (Setting::WarpM, vec![64, 128]),
        (Setting::Stages, stages.clone()),
    ];
    let b_multicast = Some(Cluster { m: 2, n: 1, multicast: Some(Which::B), k: 1 });
    let clusters =
        if focused { vec![None, b_multicast] } else { vec![None, b_multicast, Some(Cluster { m: 1, n: 2, multicast: Some(Which::A), k: 1 })] };
    // the hybrid, for shapes whose last wave is part-full (no cluster: the rules prune it there)
    let persistents = if focused { vec![Some(Persistent::Tiles)] } else { vec![None, Some(Persistent::Tiles), Some(Persistent::Hybrid)] };
    let epilogues = if focused { vec![Epilogue::Smem, Epilogue::Tma] } else { vec![Epilogue::Vector, Epilogue::Smem, Epilogue::Tma] };
    for &cluster in &clusters {
        for &persistent in &persistents {
            for &epilogue in &epilogues {
                let base = KernelSpec {
                    name: "hopper_tuned".into(),
                    cluster,
                    persistent,
                    epilogue,
                    edges: Edges::Guarded,
                    ..crate::steps::tma_store::KERNEL.spec.clone()
                };
                out.add(expand(&base, &lists));
            }
        }
    }
    // ping-pong consumers (persistent): each warpgroup's tile the block tile, alone or in clusters of two sharing B
    let pingpong = [(Setting::BlockM, vec![64, 128]), (Setting::BlockN, vec![128, 256]), (Setting::Stages, stages)];
    for cluster in [None, b_multicast] {
        for &epilogue in &epilogues {
            let base = KernelSpec { name: "hopper_tuned".into(), epilogue, cluster, ..crate::steps::pingpong::KERNEL.spec.clone() };
            out.add(expand(&base, &pingpong));
        }
    }
    out
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One timed candidate.
pub struct Tuned {
    pub spec: KernelSpec,
    pub tflops: f64,
    pub rel_err: f64,
}

/// Compiles (in parallel), verifies and times every candidate at `dims`;
/// returns them best first. A candidate that fails to compile, launch or
/// verify is reported on stderr and dropped: a wrong kernel is never timed.
pub fn run(bench: &Bench, specs: &[KernelSpec], dims: Dims, reps: Reps, progress: impl FnMut(usize, &KernelSpec)) -> Result<Vec<Tuned>, Failure> {
    let kernels: Vec<Kernel> =
        specs.iter().filter_map(|s| Kernel::from_spec(s.clone()).map_err(|e| eprintln!("{}: {e}", s.kernel_name())).ok()).collect();
    let mut results: Vec<Tuned> = time_all(bench, &kernels, dims, reps, progress)?.into_iter().flatten().collect();
    results.sort_by(|a, b| b.tflops.total_cmp(&a.tflops));
    Ok(results)
}

/// Verifies and times `kernels` (which share types and layouts) in their
/// order: `None` for one that failed, with the reason printed.
pub fn time_all(
    bench: &Bench,
    kernels: &[Kernel],
    dims: Dims,
    reps: Reps,
    mut progress: impl FnMut(usize, &KernelSpec),
) -> Result<Vec<Option<Tuned>>, Failure> {
    // NVRTC is the slow part: compile on every core first, as a tuned kernel does
    gemm_runtime::compile_all(kernels, &bench.gpu.ctx);
    // One set of inputs for all (the candidates share types and layouts):
    // verified at a size up to 1024, timed at `dims`.
    let Some(first) = kernels.first() else { return Ok(Vec::new()) };
    let layouts = [first.spec.a.layout, first.spec.b.layout, first.spec.c.layout];
    // a size every candidate tiles (whole-edge kernels of 192-row tiles, clusters of two)
    let multiple = |of: fn(&gemm_runtime::spec::Requirements) -> u32| {
        kernels.iter().map(|k| of(&k.spec.requirements()) as usize).fold(1, |l, x| l / gcd(l, x) * x)
    };
    let fit = |size: usize, cap: usize, to: usize| size.min(cap).next_multiple_of(to).min(size);
    let (m, n, k) =
        (fit(dims.m, 1024, multiple(|r| r.m_multiple)), fit(dims.n, 1024, multiple(|r| r.n_multiple)), fit(dims.k, 512, multiple(|r| r.k_multiple)));
    let check_dims = crate::measure::padded_dims(m, n, k, layouts);
    // (in the first's types, with the scales it declares, which its variants share)
    let check = Problem::for_kernel(bench, first, check_dims, 7)?;
    let reference = check.reference(bench)?;
    let timed = Problem::for_kernel(bench, first, dims, 11)?;
    let mut results = Vec::new();
    for (i, kernel) in kernels.iter().enumerate() {
        progress(i, &kernel.spec);
        let measured = verify_on(bench, kernel, &check, &reference).and_then(|err| Ok((err, time_on(bench, kernel, &timed, reps)?)));
        results.push(match measured {
            Ok((rel_err, t)) => Some(Tuned { spec: kernel.spec.clone(), tflops: t.tflops(dims.flops()), rel_err }),
            Err(Failure::Gpu(e)) => {
                eprintln!("{}: {e}", kernel.name);
                None
            }
            Err(e) => {
                eprintln!("{e}");
                None
            }
        });
    }
    Ok(results)
}

/// Times `specs` again in `rounds` rounds of `reps` (each round times every
/// candidate once, so drifts of clock or temperature fall on all alike) and
/// ranks them by the mean of their rounds: the one-pass search's best few can
/// sit within its noise of each other.
pub fn confirm(bench: &Bench, specs: &[KernelSpec], dims: Dims, rounds: usize, reps: Reps) -> Result<Vec<Tuned>, Failure> {
    let timed = (0..rounds).map(|_| run(bench, specs, dims, reps, |_, _| {})).collect::<Result<Vec<_>, _>>()?;
    Ok(mean_of_rounds(timed))
}

/// Each spec timed in every round, at its mean TFLOP/s and worst error, best
/// first; a spec missing from a round (it failed there) is left out.
fn mean_of_rounds(rounds: Vec<Vec<Tuned>>) -> Vec<Tuned> {
    let Some((first, rest)) = rounds.split_first() else { return Vec::new() };
    let mut out: Vec<Tuned> = first
        .iter()
        .filter_map(|t| {
            let others: Option<Vec<&Tuned>> = rest.iter().map(|r| r.iter().find(|o| o.spec == t.spec)).collect();
            let others = others?;
            let tflops = (t.tflops + others.iter().map(|o| o.tflops).sum::<f64>()) / rounds.len() as f64;
            let rel_err = others.iter().map(|o| o.rel_err).fold(t.rel_err, f64::max);
            Some(Tuned { spec: t.spec.clone(), tflops, rel_err })
        })
        .collect();
    out.sort_by(|a, b| b.tflops.total_cmp(&a.tflops));
    out
}

/// The attribute that declares `spec`, for pasting into a `#[gemm_kernel]`.
pub fn attribute(spec: &KernelSpec) -> String {
    let b = spec.block;
    let min_blocks = b.min_blocks.map_or(String::new(), |o| format!(", min_blocks = {o}"));
    let mut parts = vec![format!("block(m = {}, n = {}, k = {}, threads = {}{min_blocks})", b.m, b.n, b.k.unwrap_or(0), b.threads)];
    if let Some(w) = spec.warp {
        parts.push(format!("warp(m = {}, n = {}, m_iters = {}, n_iters = {})", w.m, w.n, w.m_iters, w.n_iters));
    }
    if let Some(t) = spec.thread {
        let lanes = if t.lanes == Dim::M { ", lanes = m" } else { "" };
        let sweep = if t.sweep == Dim::M { ", sweep = m" } else { "" };
        parts.push(format!("thread(m = {}, n = {}{lanes}{sweep})", t.m, t.n));
    }
    parts.push(match spec.atom {
        Atom::Fma => "atom = fma".into(),
        atom => {
            let (m, n, k) = atom.shape();
            format!("atom = {}(m{m}n{n}k{k})", atom.name())
        }
    });
    let t = |transpose_a: bool| if transpose_a { ", transpose_a" } else { "" };
    match spec.staging {
        Staging::Smem { vector, transpose_a, buffers } => {
            parts.push(format!("staging = smem(vector = {vector}{}, buffers = {buffers})", t(transpose_a)))
        }
        Staging::CpAsync { stages, vector, transpose_a, fragments } => {
            let f = if fragments > 1 { format!(", fragments = {fragments}") } else { String::new() };
            parts.push(format!("staging = cp_async(stages = {stages}, vector = {vector}{}{f})", t(transpose_a)))
        }
        Staging::Tma { stages, .. } => parts.push(format!("staging = tma(stages = {stages})")),
        Staging::Direct => {}
    }
    if let Some(sp) = spec.specialize {
        let regs = match (sp.producer_regs, sp.consumer_regs) {
            (Some(p), Some(c)) => format!(", producer_regs = {p}, consumer_regs = {c}"),
            _ => String::new(),
        };
        parts.push(format!("specialize(producers = {}, consumers = {}{regs})", sp.producers, sp.consumers));
    }
    match spec.swizzle {
        Swizzle::Pad(p) => parts.push(format!("swizzle = pad({p})")),
        Swizzle::Xor => parts.push("swizzle = xor".into()),
        Swizzle::B32 | Swizzle::B64 | Swizzle::B128 => parts.push(format!("swizzle = b{}", spec.swizzle.tma_bytes().unwrap_or(0))),
        Swizzle::None => {}
    }
    if let Raster::Grouped(g) = spec.raster {
        parts.push(format!("raster = grouped({g})"));
    }
    match spec.persistent {
        Some(Persistent::StreamK) => parts.push("persistent = stream_k".into()),
        Some(Persistent::Hybrid) => parts.push("persistent = hybrid".into()),
        Some(Persistent::TailSplit) => parts.push("persistent = tail_split".into()),
        Some(Persistent::Tiles) => parts.push("persistent = tiles".into()),
        Some(Persistent::Queue) => parts.push("persistent = queue".into()),
        None => {}
    }
    match spec.epilogue {
        Epilogue::Vector => parts.push("epilogue = vector".into()),
        Epilogue::Smem => parts.push("epilogue = smem".into()),
        Epilogue::SmemElements => parts.push("epilogue = smem_elements".into()),
        Epilogue::Tma => parts.push("epilogue = tma".into()),
        _ => {}
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_legal_candidates_are_kept_and_every_pruning_is_counted() {
        let c = candidates(&Space::default());
        assert!(!c.specs.is_empty());
        assert!(c.specs.iter().all(|s| gemm_runtime::gemm_core::check(s).is_empty()));
        let pruned: usize = c.pruned.values().sum();
        assert_eq!(pruned + c.specs.len(), c.considered);
    }

    #[test]
    fn the_seed_warptiling_kernel_is_in_the_space() {
        let c = candidates(&Space::default());
        let seed = c.specs.iter().find(|s| {
            s.block == Block { m: 128, n: 128, k: Some(16), threads: 128, min_blocks: None }
                && s.warp.is_some_and(|w| (w.m, w.n) == (64, 64))
                && s.thread.is_some_and(|t| (t.m, t.n) == (8, 4))
                && s.staging == Staging::Smem { vector: 4, transpose_a: true, buffers: 1 }
                && s.swizzle == Swizzle::Pad(4)
        });
        let seed = seed.expect("the seed's parameters are legal and searched");
        let w = seed.warp.unwrap();
        assert_eq!(w.m_iters * w.n_iters, 4);
    }

    #[test]
    fn confirmed_ranks_are_means_over_rounds_and_drop_what_failed_in_any() {
        let specs = candidates(&Space::stream_k()).specs;
        let t = |i: usize, tflops: f64| Tuned { spec: specs[i].clone(), tflops, rel_err: i as f64 * 1e-7 };
        // 0 leads round 1 by noise, 1 is faster on average, 2 failed in round 2.
        let merged = mean_of_rounds(vec![vec![t(0, 52.0), t(1, 51.9), t(2, 53.0)], vec![t(1, 52.3), t(0, 51.8)]]);
        let order: Vec<_> = merged.iter().map(|m| (&m.spec, m.tflops)).collect();
        assert_eq!(order, vec![(&specs[1], (51.9 + 52.3) / 2.0), (&specs[0], (52.0 + 51.8) / 2.0)]);
        assert_eq!(merged[0].rel_err, 1e-7);
        assert!(mean_of_rounds(Vec::new()).is_empty());
    }

    #[test]
    fn attribute_text_round_trips_the_spec_settings() {
        let c = candidates(&Space::default());
        let a = attribute(&c.specs[0]);
        assert!(a.starts_with("block(m = ") && a.contains("atom = fma") && a.contains("epilogue = vector"), "{a}");
        let sk = candidates(&Space::stream_k());
        assert!(sk.specs.iter().all(|s| s.persistent == Some(Persistent::StreamK)));
        assert!(attribute(&sk.specs[0]).contains("persistent = stream_k"));
        let swept = sk.specs.iter().filter(|s| s.thread.is_some_and(|t| t.sweep == Dim::M)).count();
        assert_eq!(2 * swept, sk.specs.len(), "each tiling is searched with both FMA sweeps");
        let column_first = sk.specs.iter().find(|s| s.thread.is_some_and(|t| t.sweep == Dim::M)).unwrap();
        assert!(attribute(column_first).contains("sweep = m"));
    }

    /// Every Hopper candidate passes the rules and what the generator
    /// emits; the `tma_store` step's tiling is among them; what does not fit
    /// (5 stages with a C tile, four 64-row consumers of 256 columns) is
    /// pruned and counted; attributes name every Hopper setting.
    #[test]
    fn hopper_candidates_are_legal_and_hold_the_ladders_best() {
        let c = hopper_candidates(false);
        assert!(!c.specs.is_empty() && c.specs.len() < c.considered, "{} of {}", c.specs.len(), c.considered);
        assert!(c.specs.iter().any(|s| s.cluster.is_some_and(|c| c.multicast == Some(Which::A))), "clusters sharing A");
        assert!(c.specs.iter().any(|s| s.specialize.is_some_and(|sp| sp.pingpong)), "ping-pong consumers");
        assert!(c.specs.iter().any(|s| s.cluster.is_some() && s.specialize.is_some_and(|sp| sp.pingpong)), "ping-pong in clusters");
        assert!(c.specs.iter().any(|s| s.persistent == Some(Persistent::Hybrid)), "the hybrid");
        println!("{} legal of {} considered; pruned {:?}", c.specs.len(), c.considered, c.pruned);
        assert_eq!(c.specs.len() + c.pruned.values().sum::<usize>(), c.considered);
        for s in &c.specs {
            assert!(gemm_runtime::gemm_core::generate(s).is_ok(), "{}", s.kernel_name());
        }
        let best = &crate::steps::tma_store::KERNEL.spec;
        let same = |s: &KernelSpec| KernelSpec { name: best.name.clone(), edges: best.edges, ..s.clone() } == *best;
        assert!(c.specs.iter().any(same), "the tma_store step is in the space");
        let focused = hopper_candidates(true);
        assert!(focused.specs.iter().any(same), "the tma_store step is in the focused space");
        assert!(focused.specs.iter().all(|s| c.specs.contains(s)), "the focused space is part of the whole");
        println!("focused: {} legal of {} considered", focused.specs.len(), focused.considered);
        assert!(focused.specs.len() <= 120, "{} focused candidates", focused.specs.len());
        let a = attribute(best);
        for part in [
            "atom = wgmma(m64n256k16)",
            "staging = tma(stages = 3)",
            "specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240)",
            "swizzle = b128",
            "persistent = tiles",
            "epilogue = tma",
        ] {
            assert!(a.contains(part), "{part} in {a}");
        }
    }
}
