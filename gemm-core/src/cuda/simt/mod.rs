//! SIMT kernels (atom = fma): block, warp and thread tiers; operands loaded
//! directly from global memory or staged through shared memory, single or
//! double buffered.
//!
//! Every thread owns `MI x TM` rows and `NI x TN` columns of C: rows
//! `thread_m + im * SUBM + i` and columns `thread_n + jn * SUBN + j`, where
//! `MI x NI` are the warp iterations and `SUBM x SUBN` the warp sub-tile one
//! iteration covers (without a warp tier, MI = NI = 1).

mod cp_async;
mod stream_k;

use super::copy::{load_edge, load_type, Edge};
use super::epilogue::{Output, Value};
use super::layout::{offset, scaled, sum, term};
use super::schedule;
use super::writer::Writer;
use crate::spec::*;

/// Everything the emitters share: the spec and the sizes derived from it.
struct Kernel<'a> {
    spec: &'a KernelSpec,
    bm: u32,
    bn: u32,
    tm: u32,
    tn: u32,
    /// Warp iterations and the sub-tile each covers.
    mi: u32,
    ni: u32,
    subm: u32,
    subn: u32,
    threads: u32,
    /// A persistent stream-K grid: each block walks units of K steps. With
    /// shared-memory staging K runs from `k_begin` to `k_end` in each unit;
    /// a cp.async pipeline follows a producer cursor through the whole share.
    stream_k: bool,
    /// Fragment loads as `lds128` (`ptx::lds128`): where a cp.async pipeline
    /// loads them a k step ahead, they must stay among the FMAs of the step
    /// before, where ptxas otherwise gathers them. (The synchronous steps
    /// keep plain loads: there the volatile form ran warptiling 2.9% slower
    /// and the vectorized ones 4-5% faster, and the ladder keeps the seeds'
    /// steps as they were measured.)
    lds_in_place: bool,
}

impl<'a> Kernel<'a> {
    fn new(spec: &'a KernelSpec) -> Self {
        let t = spec.thread.expect("checked: fma has a thread tier");
        let (mi, ni, subm, subn) = match spec.warp {
            Some(w) => (w.m_iters, w.n_iters, w.m / w.m_iters, w.n / w.n_iters),
            None => (1, 1, spec.block.m, spec.block.n),
        };
        Kernel {
            spec,
            bm: spec.block.m,
            bn: spec.block.n,
            tm: t.m,
            tn: t.n,
            mi,
            ni,
            subm,
            subn,
            threads: spec.block.threads,
            stream_k: spec.persistent == Some(Persistent::StreamK),
            lds_in_place: matches!(spec.staging, Staging::CpAsync { .. }),
        }
    }
}

pub fn emit(spec: &KernelSpec) -> String {
    let t = spec.thread.expect("checked: fma has a thread tier");
    let k = Kernel::new(spec);
    let mut w = Writer::default();
    k.header(&mut w);
    match spec.staging {
        Staging::CpAsync { vector, .. } => k.cp_async_helpers(&mut w, vector),
        Staging::Smem { vector, .. } if spec.edges == Edges::Guarded => super::copy::load_edge_helper(&mut w, 4, vector, true),
        _ => {}
    }
    if k.lds_in_place {
        let (a, b, _) = k.staged_tiles();
        if a.vector_frags(k.tm) || b.vector_frags(k.tn) {
            super::ptx::lds128(&mut w);
        }
    }
    if k.stream_k {
        super::stream_k::helpers(&mut w);
    }
    schedule::helpers(&mut w, spec.raster);
    super::epilogue::helpers(&mut w, spec);
    w.line("extern \"C\" __global__ void");
    match spec.block.min_blocks {
        Some(o) => w.line(format!("__launch_bounds__({}, {o})  // {o} blocks per SM: at most {} registers a thread", k.threads, spec.register_cap())),
        None => w.line(format!("__launch_bounds__({})", k.threads)),
    }
    super::params::signature(&mut w, spec);
    let staged = |w: &mut Writer| match spec.staging {
        Staging::Smem { vector, buffers, .. } => k.smem_body(w, vector, buffers),
        Staging::CpAsync { stages, vector, .. } => k.cp_async_body(w, stages, vector),
        _ => unreachable!("checked by support::unsupported"),
    };
    w.block("", |w| {
        if k.stream_k {
            k.thread_origin(w, t.lanes);
            k.stream_k_units(w);
            return;
        }
        super::params::per_problem(w, spec, |w| {
            let out = Output::new(spec);
            k.raster(w);
            k.thread_origin(w, t.lanes);
            k.accumulators(w);
            if spec.staging == Staging::Direct {
                k.direct_body(w, &out);
            } else {
                staged(w);
                w.line("");
                k.staged_epilogue(w, &out);
            }
        });
    });
    w.finish()
}

/// The term `var * stride` of a loop of `extent` iterations; none if it runs once.
fn step(var: &str, extent: u32, stride: u32) -> Option<String> {
    match (extent, stride) {
        (1, _) => None,
        (_, 1) => Some(var.to_string()),
        _ => Some(format!("{var} * {stride}")),
    }
}

const LANES: [&str; 4] = ["x", "y", "z", "w"];

impl Kernel<'_> {
    fn header(&self, w: &mut Writer) {
        let s = self.spec;
        let k = s.block.k.map_or(String::new(), |k| format!("x{k}"));
        let warp = s.warp.map_or(String::new(), |wt| format!("warp {}x{} in {}x{} steps; ", wt.m, wt.n, wt.m_iters, wt.n_iters));
        let buffers = match s.staging {
            Staging::Smem { buffers: 2, .. } => " (double buffered)".to_string(),
            Staging::CpAsync { stages, .. } => format!(" ({stages} stages)"),
            _ => String::new(),
        };
        let tiers = format!(
            "block {}x{}{k} with {} threads; {warp}thread {}x{}; atom fma; staging {}{buffers}; target {}.",
            self.bm,
            self.bn,
            self.threads,
            self.tm,
            self.tn,
            s.staging.name(),
            s.arch
        );
        super::header::header(w, s, &tiers);
    }

    /// Raster tier: the C tile this block computes, from its block index.
    fn raster(&self, w: &mut Writer) {
        schedule::raster(w, self.spec.raster, self.bm, self.bn);
    }

    /// This thread's accumulators, zeroed.
    fn accumulators(&self, w: &mut Writer) {
        w.line(format!("float acc[{}][{}] = {{}};", self.mi * self.tm, self.ni * self.tn));
        w.line("");
    }

    /// Warp and thread tiers: where this thread's rows and columns start in the block tile.
    fn thread_origin(&self, w: &mut Writer, lanes: Dim) {
        // The threads of one group (the block, or a warp) tile its sub-tile.
        let (group, index, origin) = match self.spec.warp {
            Some(wt) => {
                let per_n = self.bn / wt.n;
                w.line(format!(
                    "// warp tier: {}x{} warps of {}x{}, each in {}x{} steps of {}x{}",
                    self.bm / wt.m,
                    per_n,
                    wt.m,
                    wt.n,
                    self.mi,
                    self.ni,
                    self.subm,
                    self.subn
                ));
                w.line("const int warp = threadIdx.x / 32;");
                w.line("const int lane = threadIdx.x % 32;");
                w.line(format!("const int warp_m = {};", scaled(&format!("warp / {per_n}"), wt.m)));
                w.line(format!("const int warp_n = {};", scaled(&format!("warp % {per_n}"), wt.n)));
                ("lane", "lane", ("warp_m + ", "warp_n + "))
            }
            None => ("thread", "threadIdx.x", ("", "")),
        };
        let (per_m, per_n) = (self.subm / self.tm, self.subn / self.tn);
        let along = match lanes {
            Dim::N => "n",
            Dim::M => "m",
        };
        w.line(format!(
            "// thread tier: a {}x{} tile per {group}{}; consecutive {group}s step along {along}",
            self.tm,
            self.tn,
            if self.mi * self.ni > 1 { " and step" } else { "" }
        ));
        let (m_of, n_of) = match lanes {
            Dim::N => (format!("{index} / {per_n}"), format!("{index} % {per_n}")),
            Dim::M => (format!("{index} % {per_m}"), format!("{index} / {per_m}")),
        };
        w.line(format!("const int thread_m = {}{};", origin.0, scaled(&m_of, self.tm)));
        w.line(format!("const int thread_n = {}{};", origin.1, scaled(&n_of, self.tn)));
    }

    /// Where K starts and ends for a shared-memory staged block: a unit's
    /// range under stream-K.
    fn k_range(&self) -> (&'static str, &'static str) {
        if self.stream_k {
            ("k_begin", "k_end")
        } else {
            ("0", "K")
        }
    }

    /// Stores the accumulators of a staged kernel to C.
    fn staged_epilogue(&self, w: &mut Writer, out: &Output) {
        self.epilogue(w, "block_m + thread_m", "block_n + thread_n", out);
    }

    fn a_global(&self, row: &str, col: &str) -> String {
        format!("A[{}]", offset(self.spec.a.layout, "lda", row, col))
    }

    fn b_global(&self, row: &str, col: &str) -> String {
        format!("B[{}]", offset(self.spec.b.layout, "ldb", row, col))
    }

    /// Row `im, i` of this thread, relative to the block tile.
    fn row(&self, base: &str) -> String {
        sum(base, &[step("im", self.mi, self.subm), step("i", self.tm, 1)])
    }

    /// Column `jn, j` of this thread, relative to the block tile.
    fn col(&self, base: &str) -> String {
        sum(base, &[step("jn", self.ni, self.subn), step("j", self.tn, 1)])
    }

    /// Loops over this thread's rows (`im`, `i`) around `body`.
    fn each_row(&self, w: &mut Writer, body: impl FnOnce(&mut Writer)) {
        w.unrolled("im", self.mi, |w| w.unrolled("i", self.tm, body));
    }

    /// Loops over this thread's columns (`jn`, `j`) around `body`.
    fn each_col(&self, w: &mut Writer, body: impl FnOnce(&mut Writer)) {
        w.unrolled("jn", self.ni, |w| w.unrolled("j", self.tn, body));
    }

    /// Index into a fragment of `iters x tile` values.
    fn frag(outer: &str, iters: u32, inner: &str, tile: u32) -> String {
        sum("", &[step(outer, iters, tile), step(inner, tile, 1)])
    }

    /// The rank-1 update of the thread's tile for one k: fragments, then FMAs.
    fn outer_product(&self, w: &mut Writer, a_frags: impl FnOnce(&mut Writer), b_frags: impl FnOnce(&mut Writer)) {
        let (rows, cols) = (self.mi * self.tm, self.ni * self.tn);
        w.line(format!("float a_frag[{rows}], b_frag[{cols}];"));
        a_frags(w);
        b_frags(w);
        self.fmas(w, "a_frag", "b_frag");
    }

    /// The thread tile's rank-1 update from fragments `a` and `b`, in the
    /// order the thread tier's `sweep` names.
    fn fmas(&self, w: &mut Writer, a: &str, b: &str) {
        let (rows, cols) = (("ii", self.mi * self.tm), ("jj", self.ni * self.tn));
        let ((outer, o_n), (inner, i_n), comment) = match self.spec.thread.map_or(Dim::N, |t| t.sweep) {
            Dim::N => (rows, cols, "// atom (fma)"),
            Dim::M => (cols, rows, "// atom (fma), one column of the thread tile at a time (sweep = m)"),
        };
        w.line(comment);
        w.unrolled(outer, o_n, |w| {
            w.unrolled(inner, i_n, |w| w.line(format!("acc[ii][jj] = fmaf({a}[ii], {b}[jj], acc[ii][jj]);")));
        });
    }

    fn direct_body(&self, w: &mut Writer, out: &Output) {
        let guarded = self.tm > 1 || self.tn > 1;
        w.line("const int row0 = block_m + thread_m;");
        w.line("const int col0 = block_n + thread_n;");
        w.line("if (row0 >= M || col0 >= N) return;  // past C's edge: no barrier follows");
        w.line("");
        w.line("// K loop: operands straight from global memory");
        w.block("for (int p = 0; p < K; ++p)", |w| {
            let a_frags = |w: &mut Writer| {
                self.each_row(w, |w| {
                    let row = self.row("row0");
                    let e = self.a_global(&row, "p");
                    let e = if guarded { format!("{row} < M ? {e} : 0.0f") } else { e };
                    w.line(format!("a_frag[{}] = {e};", Self::frag("im", self.mi, "i", self.tm)));
                })
            };
            let b_frags = |w: &mut Writer| {
                self.each_col(w, |w| {
                    let col = self.col("col0");
                    let e = self.b_global("p", &col);
                    let e = if guarded { format!("{col} < N ? {e} : 0.0f") } else { e };
                    w.line(format!("b_frag[{}] = {e};", Self::frag("jn", self.ni, "j", self.tn)));
                })
            };
            self.outer_product(w, a_frags, b_frags);
        });
        w.line("");
        self.epilogue(w, "row0", "col0", out);
    }

    /// The two operand tiles as shared memory holds them, and their shapes
    /// for a comment.
    fn staged_tiles(&self) -> (Tile, Tile, String) {
        let s = self.spec;
        let bk = s.block.k.expect("checked: staged tiles have a K step");
        let transpose_a = s.staging.transpose_a();
        let a_shape = if transpose_a { format!("[{bk}][{}]", self.bm) } else { format!("[{}][{bk}]", self.bm) };
        let pad = match s.swizzle {
            Swizzle::Pad(p) => format!(", each row padded by {p}"),
            _ => String::new(),
        };
        let a = Tile {
            name: "A",
            layout: s.a.layout,
            rows: self.bm,
            cols: bk,
            origin: ("block_m", "k0"),
            smem_row: s.smem_a_row(),
            smem_transposed: transpose_a,
        };
        let b = Tile {
            name: "B",
            layout: s.b.layout,
            rows: bk,
            cols: self.bn,
            origin: ("k0", "block_n"),
            smem_row: s.smem_b_row(),
            smem_transposed: false,
        };
        (a, b, format!("A {a_shape}{pad}, then B [{bk}][{}]", self.bn))
    }

    /// This thread's first fragment element in the shared tiles at `as_`/`bs`:
    /// fragments are then read at constant offsets, which the compiler folds
    /// into the load instructions.
    fn fragment_bases(&self, w: &mut Writer, a: &Tile, b: &Tile, suffix: &str, as_: &str, bs: &str) {
        w.line("// this thread's fragments start here; they are read at constant offsets from it");
        w.line(format!("const float* const a_rd{suffix} = &{};", a.smem(as_, "thread_m", "0")));
        w.line(format!("const float* const b_rd{suffix} = &{};", b.smem(bs, "0", "thread_n")));
    }

    fn smem_body(&self, w: &mut Writer, vector: u32, buffers: u32) {
        let bk = self.spec.block.k.expect("checked: staged tiles have a K step");
        let (a_tile, b_tile, shapes) = self.staged_tiles();
        let (a_elems, b_elems) = (a_tile.smem_elems(), b_tile.smem_elems());
        w.line("// staging: shared-memory tiles (dynamic shared memory, 16-byte aligned)");
        w.line("extern __shared__ float4 smem_raw[];");
        if buffers == 1 {
            w.line(format!("// tiles: {shapes}"));
            w.line("float* As = reinterpret_cast<float*>(smem_raw);");
            w.line(format!("float* Bs = As + {a_elems};"));
            self.fragment_bases(w, &a_tile, &b_tile, "", "As", "Bs");
        } else {
            w.line(format!("// two buffers of each tile: {shapes}"));
            w.line("float* const As0 = reinterpret_cast<float*>(smem_raw);");
            w.line(format!("float* const Bs0 = As0 + {};", 2 * a_elems));
            self.fragment_bases(w, &a_tile, &b_tile, "0", "As0", "Bs0");
        }
        w.line("");
        let (from, to) = self.k_range();
        if buffers == 1 {
            w.line(format!("// block tier: walk K one {bk}-wide tile at a time"));
            w.block(format!("for (int k0 = {from}; k0 < {to}; k0 += {bk})"), |w| {
                self.copy_tile(w, &a_tile, vector, "As");
                self.copy_tile(w, &b_tile, vector, "Bs");
                w.line("__syncthreads();  // the tiles are complete before anyone reads them");
                w.line("");
                self.compute_tile(w, bk, &a_tile, &b_tile);
                w.line("__syncthreads();  // everyone is done reading before the next tiles land");
            });
        } else {
            w.line("// staging (double buffered): tile 0 lands first; then each step computes");
            w.line("// one buffer while the next tile travels through registers into the other");
            w.block("", |w| {
                w.line("float* As = As0;");
                w.line("float* Bs = Bs0;");
                w.line(format!("const int k0 = {from};"));
                self.copy_tile(w, &a_tile, vector, "As");
                self.copy_tile(w, &b_tile, vector, "Bs");
            });
            w.line("__syncthreads();");
            w.line("");
            w.line(format!("// block tier: walk K one {bk}-wide tile at a time"));
            w.block(format!("for (int k0 = {from}, buf = 0; k0 < {to}; k0 += {bk}, buf ^= 1)"), |w| {
                w.line(format!("const float* const a_rd = a_rd0 + buf * {a_elems};"));
                w.line(format!("const float* const b_rd = b_rd0 + buf * {b_elems};"));
                w.line(format!("const bool more = k0 + {bk} < {to};"));
                w.line("// staging: the next tiles' global loads are issued before this tile's math");
                self.load_tile(w, &a_tile, vector, &format!("k0 + {bk}"), "more");
                self.load_tile(w, &b_tile, vector, &format!("k0 + {bk}"), "more");
                w.line("");
                self.compute_tile(w, bk, &a_tile, &b_tile);
                w.line("");
                w.block("if (more)", |w| {
                    w.line(format!("float* As = As0 + (buf ^ 1) * {a_elems};"));
                    w.line(format!("float* Bs = Bs0 + (buf ^ 1) * {b_elems};"));
                    self.store_tile(w, &a_tile, vector, "As");
                    self.store_tile(w, &b_tile, vector, "Bs");
                });
                w.line("// one barrier a step: the next tiles are complete, and nobody still");
                w.line("// reads the buffer the step after next overwrites");
                w.line("__syncthreads();");
            });
        }
    }

    /// One outer product per k of the staged tiles, from shared memory.
    fn compute_tile(&self, w: &mut Writer, bk: u32, a: &Tile, b: &Tile) {
        w.line("// thread tier: one outer product per k of the staged tile");
        w.unrolled("p", bk, |w| {
            let a_frags = |w: &mut Writer| self.a_frags(w, a, "a_frag", "p");
            let b_frags = |w: &mut Writer| self.b_frags(w, b, "b_frag", "p");
            self.outer_product(w, a_frags, b_frags);
        });
    }

    /// This thread's rows of A at k = `k` of the staged tile, into `dst`.
    fn a_frags(&self, w: &mut Writer, a: &Tile, dst: &str, k: &str) {
        self.frags(w, a, dst, k, ("im", self.mi, self.subm), ("i", self.tm));
    }

    /// This thread's columns of B at k = `k` of the staged tile, into `dst`.
    fn b_frags(&self, w: &mut Writer, b: &Tile, dst: &str, k: &str) {
        self.frags(w, b, dst, k, ("jn", self.ni, self.subn), ("j", self.tn));
    }

    /// Loads a fragment (this thread's rows of A, or columns of B, at k =
    /// `k`) from shared memory into `dst`: 16 bytes at a time where the tile
    /// is contiguous along the fragment and aligned, one float at a time
    /// otherwise. `outer` is the warp iterations (variable, count, stride),
    /// `inner` the thread tile (variable, size).
    fn frags(&self, w: &mut Writer, t: &Tile, dst: &str, k: &str, outer: (&str, u32, u32), inner: (&str, u32)) {
        let ((o, iters, sub), (i, tile)) = (outer, inner);
        // Offsets from this thread's first element (`a_rd`, `b_rd`).
        let at = |idx: &str| match t.name {
            "A" => t.smem("a_rd", idx, k),
            _ => t.smem("b_rd", k, idx),
        };
        if t.vector_frags(tile) {
            // Named per operand: loops that run once are written flat.
            let tmp = format!("{}_frag4", t.name.to_lowercase());
            w.unrolled(o, iters, |w| {
                w.unrolled("q", tile / 4, |w| {
                    let idx = sum("", &[step(o, iters, sub), step("q", tile / 4, 4)]);
                    let f = sum("", &[step(o, iters, tile), step("q", tile / 4, 4)]);
                    let load =
                        if self.lds_in_place { format!("lds128(&{})", at(&idx)) } else { format!("*reinterpret_cast<const float4*>(&{})", at(&idx)) };
                    w.line(format!("const float4 {tmp} = {load};"));
                    for (c, lane) in LANES.iter().enumerate() {
                        w.line(format!("{dst}[{}] = {tmp}.{lane};", sum(&f, &[Some(c.to_string()).filter(|_| c > 0)])));
                    }
                });
            });
        } else {
            w.unrolled(o, iters, |w| {
                w.unrolled(i, tile, |w| {
                    let idx = sum("", &[step(o, iters, sub), step(i, tile, 1)]);
                    w.line(format!("{dst}[{}] = {};", Self::frag(o, iters, i, tile), at(&idx)));
                });
            });
        }
    }

    /// A synchronous copy's value from global element `src`, at (`row`,
    /// `col`) of tile `t`: one vector load, or under guarded edges one that
    /// reads only the elements inside A or B and fills zeros past them
    /// (every copy checks: synchronous staging is the ladder's teaching path;
    /// a guarded kernel built for speed stages through cp_async).
    #[allow(clippy::too_many_arguments)]
    fn global_value(&self, w: &mut Writer, t: &Tile, vector: u32, p: &str, vec_ty: &str, src: &str, row: &str, col: &str) -> String {
        if self.spec.edges != Edges::Guarded {
            return if vector == 1 { src.to_string() } else { format!("*reinterpret_cast<const {vec_ty}*>(&{src})") };
        }
        let limits = if t.name == "A" { ("M", "K") } else { ("K", "N") };
        let edge = Edge { layout: t.layout, vector, origin: (t.origin.0.to_string(), t.origin.1.to_string()), limits };
        let n = format!("{p}_n");
        edge.inside(w, &n, row, col);
        load_edge(4, vector, src, &n)
    }

    /// Copies one operand tile global -> shared in place (single buffering).
    fn copy_tile(&self, w: &mut Writer, t: &Tile, vector: u32, smem: &str) {
        self.tile_rounds(w, t, vector, "copy", |w, p, vec_ty, src, row, col| {
            let value = self.global_value(w, t, vector, p, vec_ty, src, row, col);
            if vector == 1 {
                w.line(format!("{} = {value};", t.smem(smem, row, col)));
            } else {
                w.line(format!("const {vec_ty} {p}_x = {value};"));
                self.store_vector(w, t, vector, smem, &format!("{p}_x"), row, col);
            }
        });
    }

    /// Issues one operand tile's global loads into registers (`{p}_ld[r]`),
    /// for the tile at K offset `k_next`, if `cond`.
    fn load_tile(&self, w: &mut Writer, t: &Tile, vector: u32, k_next: &str, cond: &str) {
        let p = t.name.to_lowercase();
        let rounds = t.rounds(vector, self.threads);
        let vec_ty = load_type(4, vector);
        w.line(format!("{vec_ty} {p}_ld[{rounds}];"));
        w.block(format!("if ({cond})"), |w| {
            let origin = match t.name {
                "A" => Tile { origin: ("block_m", "k_next"), ..*t },
                _ => Tile { origin: ("k_next", "block_n"), ..*t },
            };
            w.line(format!("const int k_next = {k_next};"));
            self.tile_rounds(w, &origin, vector, "load", |w, p, vec_ty, src, row, col| {
                let value = self.global_value(w, &origin, vector, p, vec_ty, src, row, col);
                w.line(format!("{p}_ld[{}] = {value};", if rounds == 1 { "0" } else { "r" }));
            });
        });
    }

    /// Stores the registers of [`Self::load_tile`] into the shared tile `smem`.
    fn store_tile(&self, w: &mut Writer, t: &Tile, vector: u32, smem: &str) {
        let rounds = t.rounds(vector, self.threads);
        self.tile_rounds(w, t, vector, "store", |w, p, _, _, row, col| {
            let reg = format!("{p}_ld[{}]", if rounds == 1 { "0" } else { "r" });
            if vector == 1 {
                w.line(format!("{} = {reg};", t.smem(smem, row, col)));
            } else {
                self.store_vector(w, t, vector, smem, &reg, row, col);
            }
        });
    }

    /// Writes the `vector` elements of register `reg`, which run along the
    /// tile's global contiguous dimension, at (row, col) of the shared tile:
    /// one vector store where shared memory runs the same way, else one per element.
    #[allow(clippy::too_many_arguments)]
    fn store_vector(&self, w: &mut Writer, t: &Tile, vector: u32, smem: &str, reg: &str, row: &str, col: &str) {
        let along_cols = t.layout == Layout::RowMajor;
        if along_cols != t.smem_transposed && t.smem_row.is_multiple_of(vector) {
            let ty = load_type(4, vector);
            w.line(format!("*reinterpret_cast<{ty}*>(&{}) = {reg};", t.smem(smem, row, col)));
            return;
        }
        for (q, lane) in LANES.iter().take(vector as usize).enumerate() {
            let q = (q > 0).then(|| q.to_string());
            let (r, c) = if along_cols { (row.to_string(), sum(col, &[q])) } else { (sum(row, &[q]), col.to_string()) };
            w.line(format!("{} = {reg}.{lane};", t.smem(smem, &r, &c)));
        }
    }

    /// The rounds in which the threads move one tile, `vector` elements per
    /// thread per round along the global layout's contiguous dimension; `body`
    /// gets the operand's letter, the vector type, the global element and the
    /// (row, col) in the tile.
    fn tile_rounds(&self, w: &mut Writer, t: &Tile, vector: u32, what: &str, body: impl Fn(&mut Writer, &str, &str, &str, &str, &str)) {
        let inner = match t.layout {
            Layout::RowMajor => t.cols,
            Layout::ColMajor => t.rows,
        };
        let per_line = inner / vector;
        let rounds = t.rounds(vector, self.threads);
        let vec_ty = load_type(4, vector);
        w.line(format!("// staging ({what}): {} tile {}x{}, {rounds} round(s) of one {vec_ty} per thread", t.name, t.rows, t.cols));
        // Names carry the operand's letter: with one round the loop is written
        // flat, and A's and B's copies share a scope.
        let p = t.name.to_lowercase();
        let (v, row, col) = (format!("{p}_v"), format!("{p}_row"), format!("{p}_col"));
        w.unrolled("r", rounds, |w| {
            let round = if rounds == 1 { String::new() } else { format!(" + r * {}", self.threads) };
            w.line(format!("const int {v} = threadIdx.x{round};  // which vector of the tile"));
            let (r, c) = match t.layout {
                Layout::RowMajor => (format!("{v} / {per_line}"), scaled(&format!("{v} % {per_line}"), vector)),
                Layout::ColMajor => (scaled(&format!("{v} % {per_line}"), vector), format!("{v} / {per_line}")),
            };
            w.line(format!("const int {row} = {r};"));
            w.line(format!("const int {col} = {c};"));
            let (grow, gcol) = (format!("{} + {row}", t.origin.0), format!("{} + {col}", t.origin.1));
            let src = match t.name {
                "A" => self.a_global(&grow, &gcol),
                _ => self.b_global(&grow, &gcol),
            };
            body(w, &p, vec_ty, &src, &row, &col);
        });
    }

    fn epilogue(&self, w: &mut Writer, row0: &str, col0: &str, out: &Output) {
        let vector = self.spec.epilogue == Epilogue::Vector;
        out.describe(w, if vector { "vector: float4 stores" } else { "direct" });
        // acc[im * TM + i][jn * TN + j]; `i` and `j` may be expressions.
        let acc = |i: &str, j: &str| {
            let part =
                |iter: &str, iters: u32, tile: u32, e: &str| sum("", &[step(iter, iters, tile), (tile > 1 && e != "0").then(|| e.to_string())]);
            format!("acc[{}][{}]", part("im", self.mi, self.tm, i), part("jn", self.ni, self.tn, j))
        };
        if vector {
            // Four accumulators that are neighbours along C's contiguous
            // dimension go out as one float4: j in steps of 4 for a row-major
            // C, i for a column-major one.
            let row_major = self.spec.c.layout == Layout::RowMajor;
            let (outer, outer_n, inner_n) = if row_major { ("i", self.tm, self.tn) } else { ("j", self.tn, self.tm) };
            w.unrolled("im", self.mi, |w| {
                w.unrolled("jn", self.ni, |w| {
                    w.unrolled(outer, outer_n, |w| {
                        w.unrolled("q", inner_n / 4, |w| {
                            let q = step("q", inner_n / 4, 4);
                            let (row, col, along) = if row_major {
                                (self.row(row0), sum(col0, &[step("jn", self.ni, self.subn), q.clone()]), Dim::N)
                            } else {
                                (sum(row0, &[step("im", self.mi, self.subm), q.clone()]), self.col(col0), Dim::M)
                            };
                            let parts: Vec<Value> = (0..4)
                                .map(|e| {
                                    let idx = sum("", &[q.clone(), (e > 0).then(|| e.to_string())]);
                                    Value::acc(if row_major { acc(outer, &idx) } else { acc(&idx, outer) })
                                })
                                .collect();
                            out.store(w, &row, &col, along, &parts);
                        });
                    });
                });
            });
            return;
        }
        self.each_row(w, |w| {
            self.each_col(w, |w| {
                out.store(w, &self.row(row0), &self.col(col0), Dim::N, &[Value::acc(acc("i", "j"))]);
            });
        });
    }
}

/// An operand tile: `rows x cols` of the logical matrix at `origin` in global
/// memory, and its layout in shared memory.
#[derive(Clone, Copy)]
struct Tile {
    name: &'static str,
    layout: Layout,
    rows: u32,
    cols: u32,
    origin: (&'static str, &'static str),
    /// Elements per shared-memory row, padding included.
    smem_row: u32,
    /// Stored `[col][row]` in shared memory (A transposed to `[k][m]`).
    smem_transposed: bool,
}

impl Tile {
    /// Element (row, col) of the tile in the shared array `smem`.
    fn smem(&self, smem: &str, row: &str, col: &str) -> String {
        let (strided, contiguous) = if self.smem_transposed { (col, row) } else { (row, col) };
        let strided = (strided != "0").then(|| format!("{} * {}", term(strided), self.smem_row));
        let contiguous = (contiguous != "0").then(|| contiguous.to_string());
        format!("{smem}[{}]", sum("", &[strided, contiguous]))
    }

    /// Elements of one shared tile, padding included.
    fn smem_elems(&self) -> u32 {
        if self.smem_transposed {
            self.cols * self.smem_row
        } else {
            self.rows * self.smem_row
        }
    }

    /// Whether a thread's fragment of `len` elements loads 16 bytes at a
    /// time: shared memory runs along it (A stored [k][m], B always [k][n])
    /// and its vectors stay 16-byte aligned.
    fn vector_frags(&self, len: u32) -> bool {
        let contiguous = self.name == "B" || self.smem_transposed;
        contiguous && len.is_multiple_of(4) && self.smem_row.is_multiple_of(4)
    }

    /// Whether shared memory runs along the other dimension than global
    /// memory, so a copy can move only one element at a time.
    fn copy_transposes(&self) -> bool {
        (self.layout == Layout::RowMajor) == self.smem_transposed
    }

    fn rounds(&self, vector: u32, threads: u32) -> u32 {
        self.rows * self.cols / (vector * threads)
    }
}
