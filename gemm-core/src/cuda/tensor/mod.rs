//! Tensor-core kernels (atom = mma or wmma) on 16-bit operands, or 8-bit
//! ones for mma (sm_89), with f32 accumulators. One skeleton for both atoms:
//!
//! - raster: the block's C tile (`schedule`);
//! - warp tier: each warp owns a `wm x wn` sub-tile, covered by atoms;
//! - staging (`staging`): straight from global memory (wmma only), or
//!   through shared memory kept in each operand's global layout, by
//!   synchronous 16-byte copies (1 or 2 buffers) or a cp.async pipeline;
//! - K loop: per K step of the atom's (16 wide, 32 on 8-bit operands: 32
//!   bytes of each line either way), the atom loads its fragments (from global
//!   memory, or shared memory through the tile's `swizzle` function) and
//!   does its math;
//! - epilogue: the atom's accumulators to C (`epilogue` for mma's register
//!   map, wmma.store for wmma).
//!
//! Under `persistent = stream_k` (cp.async staging) the shared schedule of
//! `crate::cuda::stream_k` walks units of K steps around the same K loop and
//! epilogue.
//!
//! The atoms (`mma`, `wmma`) fill the fragment, math and store slots.

mod by_class;
mod mma;
mod pairs;
mod ring_copies;
mod staging;
mod tma;
mod wgmma;
mod wmma;

use super::copy::Checks;
use super::epilogue::Output;
use super::layout::scaled;
use super::ptx;
use super::schedule;
use super::stream_k;
use super::writer::Writer;
use crate::spec::*;

/// The spec and the sizes every part of a tensor-core kernel derives from it.
pub(super) struct Tc<'a> {
    spec: &'a KernelSpec,
    bm: u32,
    bn: u32,
    /// K step of a block: the staged tile's, or the atom's K without staging.
    bk: u32,
    wm: u32,
    wn: u32,
    /// Warps side by side along n.
    warps_n: u32,
    /// The atom's shape and how many of them tile a warp.
    am: u32,
    an: u32,
    ak: u32,
    ami: u32,
    ani: u32,
    threads: u32,
    /// A persistent stream-K grid (`crate::cuda::stream_k`): each block walks
    /// units of K steps, its cp.async copies aimed by a producer cursor.
    stream_k: bool,
}

/// Where a K step's fragments come from.
#[derive(Clone, Copy)]
pub(super) enum Source<'s> {
    /// Global memory at K offset `k0` (a variable in scope).
    Global { k0: &'s str },
    /// Shared memory, stage `stage` (an expression) of the staged tiles.
    Smem { stage: &'s str },
}

/// `groups = indexed`: `run_end`, where the run of group `group`'s rows
/// from `block_m` ends (the first row of padding or of another group; at
/// most a tile of `bm` rows on, and M), every thread of each full warp
/// reading the tile's row indices 32 at a time, all loads in flight
/// together, and finding the run's end by a ballot.
fn group_run_end(w: &mut Writer, bm: u32, group: &str) {
    w.line("// C's rows stop where the tile's run of the group's rows ends (padding or another group)");
    w.line(format!("int run_end = min(M, block_m + {bm});"));
    w.block("", |w| {
        w.line(format!("bool other[{}];", bm.div_ceil(32)));
        w.unrolled("q", bm.div_ceil(32), |w| {
            w.line("const int r = block_m + q * 32 + (int)(threadIdx.x % 32);");
            w.line(format!("other[q] = r < run_end && __ldg(row_groups + r) != {group};"));
        });
        w.unrolled("q", bm.div_ceil(32), |w| {
            w.line("const unsigned found = __ballot_sync(0xffffffffu, other[q]);");
            w.line("if (found != 0) { run_end = min(run_end, block_m + q * 32 + __ffs(found) - 1); }");
        });
    });
}

pub fn emit(spec: &KernelSpec) -> String {
    let mut out = Writer::default();
    Tc::new(spec).emit(&mut out);
    out.finish()
}

impl<'a> Tc<'a> {
    fn new(spec: &'a KernelSpec) -> Self {
        let w = spec.warp.expect("checked: tensor-core atoms have a warp tier");
        let (am, an, ak) = spec.atom.shape();
        Tc {
            spec,
            bm: spec.block.m,
            bn: spec.block.n,
            bk: spec.block.k.unwrap_or(ak),
            wm: w.m,
            wn: w.n,
            warps_n: spec.block.n / w.n,
            am,
            an,
            ak,
            ami: w.m / am,
            ani: w.n / an,
            threads: spec.block.threads,
            stream_k: spec.persistent.is_some_and(Persistent::splits_k),
        }
    }
}

impl Tc<'_> {
    fn emit(&self, w: &mut Writer) {
        let s = self.spec;
        super::header::header(w, s, &self.tiers());
        self.helpers(w);
        w.line("extern \"C\" __global__ void");
        match s.block.min_blocks {
            // setmaxnreg needs a register cap at entry: one block per SM
            _ if s.specialize.is_some() => w.line(format!("__launch_bounds__({}, 1)", self.threads)),
            Some(o) => {
                w.line(format!("__launch_bounds__({}, {o})  // {o} blocks per SM: at most {} registers a thread", self.threads, s.register_cap()))
            }
            None => w.line(format!("__launch_bounds__({})", self.threads)),
        }
        if let Some(c) = s.cluster {
            // fixed at compile time, so that an ordinary launch makes the clusters
            if c.k > 1 {
                w.line(format!(
                    "__cluster_dims__({}, 1, 1)  // a cluster of {} blocks that share a tile along K, along the grid's x",
                    s.cluster_size(),
                    c.k
                ));
            } else {
                w.line(format!("__cluster_dims__({}, 1, 1)  // a cluster of {}x{} blocks, along the grid's x", c.m * c.n, c.m, c.n));
            }
        }
        super::params::signature(w, s);
        w.block("", |w| {
            if let (true, Staging::CpAsync { stages, vector, .. }) = (self.stream_k, s.staging) {
                self.warp_tier(w);
                self.fragment_lanes(w);
                self.stream_k_loop(w, stages, vector);
                return;
            }
            if let Staging::Tma { stages, by_class, .. } = s.staging {
                if by_class {
                    return self.by_class_body(w, stages);
                }
                return self.tma_body(w, stages);
            }
            // (the tile's group, whose B the body takes, is known before it)
            match s.groups {
                Some(Groups::Indexed) => {
                    schedule::raster(w, s.raster, self.bm, self.bn);
                    self.indexed_tile(w);
                }
                Some(Groups::Contiguous) => {
                    schedule::raster_as(w, s.raster, self.bm, self.bn, ["grid_m", "block_n"]);
                    self.contiguous_tile(w);
                }
                _ => {}
            }
            super::params::per_problem(w, s, |w| {
                if s.groups == Some(Groups::Indexed) {
                    w.line("const int M = run_end;  // the group's rows of this tile: every guard below stops there");
                } else if s.groups == Some(Groups::Contiguous) {
                    w.line("const int M = group_end;  // the group's end: every guard and edge load below stops there");
                } else {
                    schedule::raster(w, s.raster, self.bm, self.bn);
                    self.masked_tile(w);
                }
                self.warp_tier(w);
                self.declare_accumulators(w);
                self.fragment_lanes(w);
                match s.staging {
                    Staging::Direct => self.direct_loop(w),
                    Staging::Smem { vector, buffers, .. } => self.smem_loop(w, vector, buffers),
                    Staging::CpAsync { stages, vector, .. } => self.cp_async_loop(w, stages, vector),
                    Staging::Tma { .. } => unreachable!("emitted by tma_body"),
                }
                w.line("");
                self.epilogue(w, &Output::new(s));
            });
        });
    }

    /// `groups = masked` on a grid of a block per tile (the sm_80 path):
    /// blockIdx.z's problem holds `group_rows[blockIdx.z]` of its M rows; a
    /// tile past them ends at once, and `M` is the problem's own from here on.
    fn masked_tile(&self, w: &mut Writer) {
        if self.spec.groups != Some(Groups::Masked) {
            return;
        }
        w.line("// groups = masked: this problem holds group_rows[blockIdx.z] of its M rows; a tile past them");
        w.line("// ends here, and M below is the problem's own (every guard reads it)");
        w.line("const int rows = min(M, max(__ldg(group_rows + blockIdx.z), 0));");
        w.line("if (block_m >= rows) return;");
        w.line("const int M = rows;");
    }

    /// `groups = indexed` on a grid of a block per tile: the tile takes its
    /// first row's group (`group`, whose B the body then reads); a tile
    /// whose first row is padding (-1), or names no group of the batch,
    /// ends at once. `run_end`: where the tile's run of the group's rows
    /// ends (padding or another group), each warp reading the tile's row
    /// indices 32 at a time, all loads in flight together, and finding the
    /// run's end by a ballot (every warp alike).
    fn indexed_tile(&self, w: &mut Writer) {
        let bm = self.bm;
        w.line("// groups = indexed: the tile's group is its first row's; a padding row's (-1) or one past the groups ends it");
        w.line("const int group = __ldg(row_groups + block_m);");
        w.line("if (group < 0 || group >= batches) return;");
        group_run_end(w, bm, "group");
    }

    /// `groups = contiguous` on a grid of a block per tile (the sm_80
    /// path): the grid's rows of tiles are the groups' row tiles one after
    /// another (each group's from its first row, the last partial, none
    /// reaching into the next group), and as many rows more as there are
    /// groups, whose blocks end at once. A block finds its tile's group
    /// (`group`, whose B the body reads) by scanning the ends 32 groups at a
    /// time across each warp (every warp alike): their prefix maximum keeps
    /// them within M and after the start, as the persistent walk's does,
    /// and a prefix sum counts the groups' row tiles.
    fn contiguous_tile(&self, w: &mut Writer) {
        let bm = self.bm;
        w.line("// groups = contiguous: group g's rows of A and C run from group_ends[g - 1] (0 for the first) to");
        w.line("// group_ends[g] (kept within M and after the start), in row tiles of its own; this block's row");
        w.line(format!("// of tiles is the (grid_m / {bm})-th of them all, found by each warp scanning the ends 32 groups at a time"));
        w.line(format!("const int t_m = grid_m / {bm};"));
        w.line("int group = -1, group_start = 0, group_end = 0, group_first = 0;");
        w.block("", |w| {
            w.line("const int lane = threadIdx.x % 32;");
            w.line("int before_end = 0, before_tiles = 0;  // where the groups scanned so far end, and their row tiles");
            w.block("for (int g0 = 0; g0 < batches && group < 0; g0 += 32)", |w| {
                w.line("int end = max(g0 + lane < batches ? min(M, __ldg(group_ends + g0 + lane)) : 0, before_end);");
                w.line("for (int d = 1; d < 32; d *= 2) { const int e = __shfl_up_sync(0xffffffffu, end, d); if (lane >= d) end = max(end, e); }");
                w.line("int start = __shfl_up_sync(0xffffffffu, end, 1);");
                w.line("if (lane == 0) start = before_end;");
                w.line(format!("const int tiles = (end - start + {bm} - 1) / {bm};"));
                w.line("int through = tiles;  // the row tiles of this lane's group and of every group before it");
                w.line("for (int d = 1; d < 32; d *= 2) { const int t = __shfl_up_sync(0xffffffffu, through, d); if (lane >= d) through += t; }");
                w.line("through += before_tiles;");
                w.line("const unsigned hit = __ballot_sync(0xffffffffu, through > t_m);");
                w.block("if (hit != 0)", |w| {
                    w.line("const int l = __ffs(hit) - 1;");
                    w.line("group = g0 + l;");
                    w.line("group_start = __shfl_sync(0xffffffffu, start, l);");
                    w.line("group_end = __shfl_sync(0xffffffffu, end, l);");
                    w.line("group_first = __shfl_sync(0xffffffffu, through - tiles, l);");
                });
                w.line("before_end = __shfl_sync(0xffffffffu, end, 31);");
                w.line("before_tiles = __shfl_sync(0xffffffffu, through, 31);");
            });
        });
        w.line("if (group < 0) return;  // past the groups' row tiles");
        w.line(format!("const int block_m = group_start + (t_m - group_first) * {bm};"));
    }

    /// The accumulators to C.
    fn epilogue(&self, w: &mut Writer, out: &Output) {
        match self.spec.atom {
            Atom::Mma { .. } => self.pairs_epilogue(w, out, &self.mma_pairs()),
            Atom::Wgmma { .. } => self.pairs_epilogue(w, out, &self.wgmma_pairs()),
            _ => self.wmma_epilogue(w, out),
        }
    }

    /// The stream-K schedule's view of this kernel: tiles and accumulators.
    fn tiling(&self) -> stream_k::Tiling {
        let loops = match self.spec.atom {
            Atom::Mma { .. } => vec![("im", self.ami), ("jn", self.ani), ("r", 4)],
            // wgmma: an8 / 8 atoms of 16x8, 4 floats each
            Atom::Wgmma { .. } => vec![("im", self.ami), ("jn", self.ani), ("q", self.an / 8), ("r", 4)],
            _ => vec![("im", self.ami), ("jn", self.ani), ("r", 8)],
        };
        stream_k::Tiling {
            raster: self.spec.raster,
            bm: self.bm,
            bn: self.bn,
            bk: self.bk,
            team: self.team(),
            acc: "acc",
            loops,
            guarded: self.spec.edges == Edges::Guarded,
            shares: match self.spec.persistent {
                Some(Persistent::Hybrid) => stream_k::Shares::Hybrid,
                Some(Persistent::TailSplit) => stream_k::Shares::TailSplit,
                _ => stream_k::Shares::StreamK,
            },
        }
    }

    /// Stream-K over a cp.async pipeline: shared memory and the copies' producer
    /// are set up once, and the pipeline flows through every unit of the share.
    fn stream_k_loop(&self, w: &mut Writer, stages: u32, vector: u32) {
        let (s, sk) = (self.spec, self.tiling());
        sk.share(w, self.spec.smem_bytes() - self.spec.ticket_bytes());
        w.line("");
        let (a, b) = self.cp_async_setup(w, stages, vector, Some(&sk));
        let checks = Checks::per_tile_if_guarded(s);
        self.cp_async_fill(w, stages, &a, &b, checks);
        w.line("");
        let body = |w: &mut Writer, checks: Checks| {
            self.declare_accumulators(w);
            self.cp_async_k_loop(w, stages, &a, &b, &[("0", "tiles", checks)]);
        };
        sk.units(w, body, |w| {
            let out = Output::for_batch(self.spec, w, "unit");
            self.epilogue(w, &out)
        });
    }

    /// The header's line of tiers.
    fn tiers(&self) -> String {
        let s = self.spec;
        let k = s.block.k.map_or(String::new(), |k| format!("x{k}"));
        let staging = match s.staging {
            Staging::Direct => "direct (fragments from global memory)".to_string(),
            Staging::Smem { buffers: 2, .. } => "smem (double buffered)".to_string(),
            Staging::Smem { .. } => "smem".to_string(),
            Staging::CpAsync { stages, fragments: 2, .. } => format!("cp_async ({stages} stages, fragments a K step ahead)"),
            Staging::CpAsync { stages, .. } => format!("cp_async ({stages} stages)"),
            Staging::Tma { stages, cp_async, prefetch, evict_first, by_class } => match s.specialize {
                Some(sp) => format!(
                    "tma ({stages} stages{}{}) fed by {} producer warpgroup(s) to {} consumer warpgroup(s){}",
                    match (cp_async, by_class) {
                        (_, true) => ", by class of lines: A, B and C where they lie, C^T = B^T A^T on tiles of 256 x 128".to_string(),
                        (None, _) => String::new(),
                        (Some(r), _) => match r.only {
                            None => format!(", filled by cp.async of {} elements", r.vector),
                            Some(which) => format!(", {which:?}'s filled by cp.async of {} elements", r.vector),
                        },
                    },
                    prefetched(prefetch, evict_first),
                    sp.producers,
                    sp.consumers,
                    match (sp.producer_regs, sp.consumer_regs) {
                        (Some(p), Some(c)) => format!(", registers {p} / {c}"),
                        _ => String::new(),
                    }
                ),
                None => format!("tma ({stages} stages{})", prefetched(prefetch, evict_first)),
            },
        };
        let swizzle = match s.swizzle {
            Swizzle::Pad(p) => format!("; rows padded by {p}"),
            Swizzle::Xor => "; xor swizzle".to_string(),
            sw => sw.tma_bytes().map_or(String::new(), |b| format!("; {b}-byte swizzle")),
        };
        let unit = if matches!(s.atom, Atom::Wgmma { .. }) { "warpgroup" } else { "warp" };
        format!(
            "block {}x{}{k} with {} threads; {unit} {}x{} in {}x{} atoms; atom {} m{}n{}k{}; staging {staging}{swizzle}; target {}.",
            self.bm,
            self.bn,
            self.threads,
            self.wm,
            self.wn,
            self.ami,
            self.ani,
            s.atom.name(),
            self.am,
            self.an,
            self.ak,
            s.arch
        )
    }

    /// The device functions the kernel calls: PTX helpers, then the shared
    /// tiles' layout functions.
    fn helpers(&self, w: &mut Writer) {
        let s = self.spec;
        match s.staging {
            Staging::CpAsync { vector, .. } => {
                let bytes = vector * s.a.elem.bytes();
                let guarded = s.edges == Edges::Guarded;
                // (guarded: copies across an edge read their elements inside, zeros past them)
                let zfill: &[u32] = if guarded && vector > 1 { &[bytes] } else { &[] };
                ptx::cp_async(w, &[bytes], zfill);
                if guarded {
                    super::copy::copy_edge_helpers(w, s.a.elem.bytes(), vector);
                }
            }
            Staging::Smem { vector, .. } if s.edges == Edges::Guarded => super::copy::load_edge_helper(w, s.a.elem.bytes(), vector, true),
            Staging::Tma { .. } => self.tma_helpers(w),
            _ => {}
        }
        if s.by_class() {
            self.by_class_helpers(w);
        }
        match s.atom {
            Atom::Mma { .. } => self.mma_helpers(w),
            Atom::Wgmma { .. } => self.wgmma_helpers(w),
            _ => self.wmma_helpers(w),
        }
        if s.c.elem != Elem::F32 {
            ptx::cvt(w, s.c.elem);
        }
        if self.stream_k {
            stream_k::helpers(w);
        }
        schedule::helpers(w, s.raster);
        super::epilogue::helpers(w, s);
        if !matches!(s.staging, Staging::Direct | Staging::Tma { .. }) {
            let (a, b) = (s.smem_a(), s.smem_b());
            let side = |l: Layout, along: &str, other: &str| if l == Layout::RowMajor { along.to_string() } else { other.to_string() };
            let a_what = format!("the A tile in shared memory, lines along {}", side(s.a.layout, "m (each a row of k)", "k (each a column of m)"));
            let b_what = format!("the B tile in shared memory, lines along {}", side(s.b.layout, "k (each a row of n)", "n (each a column of k)"));
            super::swizzle::offset_fn(w, "a_at", &a_what, a, s.swizzle, s.a.elem.bytes());
            super::swizzle::offset_fn(w, "b_at", &b_what, b, s.swizzle, s.b.elem.bytes());
            w.line("");
        }
    }

    /// Warp tier: where this warp's sub-tile starts in the block tile.
    fn warp_tier(&self, w: &mut Writer) {
        w.line(format!(
            "// warp tier: {}x{} warps, each a {}x{} sub-tile of {}x{} atoms of {}x{}",
            self.bm / self.wm,
            self.warps_n,
            self.wm,
            self.wn,
            self.ami,
            self.ani,
            self.am,
            self.an
        ));
        w.declare("warp", "const int warp = threadIdx.x / 32;");
        w.declare("lane", "const int lane = threadIdx.x % 32;");
        let (warps_m, warps_n) = (self.bm / self.wm, self.warps_n);
        let warp_m = match (warps_m, warps_n) {
            (1, _) => "0".to_string(),
            (_, 1) => format!("warp * {}", self.wm),
            _ => scaled(&format!("warp / {warps_n}"), self.wm),
        };
        let warp_n = match warps_n {
            1 => "0".to_string(),
            _ if warps_m == 1 => format!("warp * {}", self.wn),
            _ => scaled(&format!("warp % {warps_n}"), self.wn),
        };
        w.line(format!("const int warp_m = {warp_m};"));
        w.line(format!("const int warp_n = {warp_n};"));
        w.line("");
    }

    fn declare_accumulators(&self, w: &mut Writer) {
        match self.spec.atom {
            Atom::Mma { .. } => self.mma_accumulators(w),
            _ => self.wmma_accumulators(w),
        }
    }

    /// Where each lane's fragment loads start (mma's ldmatrix lanes).
    fn fragment_lanes(&self, w: &mut Writer) {
        if let Atom::Mma { .. } = self.spec.atom {
            self.ldmatrix_lanes(w);
        }
    }

    /// One K tile's math: the atom's fragment loads and products for each
    /// of its K steps.
    fn k_tile(&self, w: &mut Writer, src: Source) {
        let steps = self.bk / self.ak;
        w.line(format!("// atom ({}): {steps} K step(s) of {} per tile", self.spec.atom.name(), self.ak));
        w.unrolled("ks", steps, |w| match self.spec.atom {
            Atom::Mma { .. } => self.mma_k_step(w, src),
            _ => self.wmma_k_step(w, src),
        });
    }

    /// No staging (wmma): each K step's fragments straight from global memory.
    fn direct_loop(&self, w: &mut Writer) {
        w.line(format!("// block tier: walk K {} at a time; fragments straight from global memory", self.ak));
        w.block(format!("for (int k0 = 0; k0 < K; k0 += {})", self.ak), |w| {
            self.k_tile(w, Source::Global { k0: "k0" });
        });
    }
}

/// The term `expr * factor`; none where `expr` or `factor` is 0.
fn times(expr: &str, factor: u32) -> Option<String> {
    match factor {
        _ if expr == "0" => None,
        0 => None,
        1 => Some(expr.to_string()),
        f => Some(format!("{expr} * {f}")),
    }
}

/// `a + b + ...` of the present terms, `0` if none.
fn plus(terms: &[Option<String>]) -> String {
    super::layout::sum("", terms)
}

/// A loop variable as an expression: `var`, or `0` where the loop runs once
/// (and the writer emits its body flat).
fn index(var: &'static str, n: u32) -> &'static str {
    if n > 1 {
        var
    } else {
        "0"
    }
}

/// The header's words for a TMA ring's L2 prefetch and its loads' evict-first hint, where it has them.
fn prefetched(prefetch: u32, evict_first: EvictFirst) -> String {
    let mut s = match prefetch {
        0 => String::new(),
        p => format!(", {p} K steps prefetched into the L2 ahead of a dependent launch's wait"),
    };
    let first: Vec<&str> = [(Which::A, "A"), (Which::B, "B")].into_iter().filter(|(w, _)| evict_first.of(*w)).map(|(_, n)| n).collect();
    if !first.is_empty() {
        s += &format!(", {}'s loads leaving the L2 first", first.join(" and "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `grouped_contiguous_sm80`'s tiling: 128 x 256 tiles on the sm_80
    /// path (a block per tile), in the grouped raster, groups contiguous.
    pub(in crate::cuda::tensor) fn sm80_contiguous() -> KernelSpec {
        let bf16 = |layout| Operand { elem: Elem::Bf16, layout };
        let s = KernelSpec {
            name: "place".into(),
            a: bf16(Layout::RowMajor),
            b: bf16(Layout::ColMajor),
            c: bf16(Layout::RowMajor),
            block: Block { m: 128, n: 256, k: Some(64), threads: 256, min_blocks: None },
            warp: Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 }),
            thread: None,
            atom: Atom::Mma { m: 16, n: 8, k: 16 },
            staging: Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 2 },
            specialize: None,
            swizzle: Swizzle::Xor,
            raster: Raster::Grouped(8),
            persistent: None,
            cluster: None,
            epilogue: Epilogue::Smem,
            fused: Fused::default(),
            edges: Edges::Guarded,
            groups: Some(Groups::Contiguous),
            arch: Arch::Sm80,
        };
        assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
        s
    }

    /// A group's tiles start at any row on this path, where copies and
    /// stores along M would be misaligned: A and C are row-major there (a
    /// rule, at the operand).
    #[test]
    fn contiguous_groups_on_the_sm80_path_take_row_major_a_and_c() {
        let base = sm80_contiguous();
        let col = |o: Operand| Operand { layout: Layout::ColMajor, ..o };
        let col_a = KernelSpec { a: col(base.a), ..base.clone() };
        assert!(crate::check(&col_a).iter().any(|d| d.at == "a" && d.msg.contains("Mat<bf16, RowMajor>")), "{:?}", crate::check(&col_a));
        let col_c = KernelSpec { c: col(base.c), ..base };
        assert!(crate::check(&col_c).iter().any(|d| d.at == "c" && d.msg.contains("MatMut<bf16, RowMajor>")), "{:?}", crate::check(&col_c));
    }

    /// The tiles (group, block_m, block_n, the M its guards stop at) that
    /// the blocks of the launch grid of an `m x n` problem of `ends.len()`
    /// contiguous groups place themselves at: the raster and the warp's
    /// scan over the ends as generated, compiled as host C++ with a warp
    /// of 32 host threads, run block after block.
    fn placed(m: usize, n: usize, ends: &[i32]) -> Vec<(i32, i32, i32, i32)> {
        let s = sm80_contiguous();
        let tc = Tc::new(&s);
        let mut w = Writer::default();
        w.block("static void place(int M, int N, int batches, const int* group_ends)", |w| {
            schedule::raster_as(w, s.raster, tc.bm, tc.bn, ["grid_m", "block_n"]);
            tc.contiguous_tile(w);
            w.line("if (threadIdx.x == 0) std::printf(\"%d %d %d %d\\n\", group, block_m, block_n, group_end);");
        });
        let values: Vec<String> = ends.iter().map(i32::to_string).collect();
        let (gx, _, _) = crate::cuda::grid(&s, m as u32, n as u32);
        let gy = m.div_ceil(128) + ends.len();
        let program = format!(
            "{}{}\nint main() {{\n  static const int ends[] = {{{}}};\n  gridDim = Dim3{{{gx}, {gy}, 1}};\n  \
             for (unsigned y = 0; y < {gy}; ++y) for (unsigned x = 0; x < {gx}; ++x) {{\n    \
             blockIdx = Dim3{{x, y, 0}};\n    run_warp([] {{ place({m}, {n}, {}, ends); }});\n  }}\n}}\n",
            crate::cuda::host::WARP_SHIM,
            w.finish(),
            values.join(", "),
            ends.len()
        );
        let out = crate::cuda::host::run_cpp(&format!("place-contiguous-{}", ends.len()), &program);
        crate::cuda::host::printed_tiles(&out)
    }

    /// The tiles each group's rows `[start, end)` should take in 128 x 256 tiles.
    fn expected(groups: &[(i32, usize, usize)], n: usize) -> Vec<(i32, i32, i32, i32)> {
        crate::cuda::host::group_tiles(groups, n, (128, 256))
    }

    /// `groups = contiguous` on a grid of a block per tile: every group's
    /// rows in tiles of its own (the last partial, none reaching into the
    /// next group), each tile placed by exactly one block; empty groups
    /// (first, middle, last) take none; ends that go back make a group
    /// empty and ends past m stop at m, as the persistent walk clamps them;
    /// and more groups than a warp scans at once (70: three rounds, a
    /// group's tiles found in each).
    #[test]
    fn contiguous_groups_on_a_block_per_tile_place_each_tile_once() {
        let (m, n) = (333, 600);
        type Case<'a> = (&'a [i32], &'a [(i32, usize, usize)]);
        let cases: [Case; 5] = [
            (&[100, 100, 333], &[(0, 0, 100), (2, 100, 333)]),
            (&[0, 0, 333], &[(2, 0, 333)]),
            (&[1, 2, 3, 333, 333], &[(0, 0, 1), (1, 1, 2), (2, 2, 3), (3, 3, 333)]),
            (&[200, 100, 333, 1000], &[(0, 0, 200), (2, 200, 333)]),
            (&[-5, 129, 1000], &[(1, 0, 129), (2, 129, 333)]),
        ];
        for (ends, groups) in cases {
            assert_eq!(placed(m, n, ends), expected(groups, n), "ends {ends:?}");
        }
        // 70 groups: ten of a row each, then the rows in groups 31, 40 and 69
        let mut ends: Vec<i32> = (1..=70).map(|g: i32| g.min(10)).collect();
        ends[31] = 150;
        ends[40..69].fill(290);
        ends[69] = m as i32;
        let mut groups: Vec<(i32, usize, usize)> = (0..10).map(|g| (g, g as usize, g as usize + 1)).collect();
        groups.extend([(31, 10, 150), (40, 150, 290), (69, 290, m)]);
        assert_eq!(placed(m, n, &ends), expected(&groups, n));
    }
}
