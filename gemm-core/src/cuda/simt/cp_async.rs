//! The cp.async pipeline of SIMT kernels: tiles travel global -> shared
//! without passing through registers, `stages` K tiles deep, with one barrier
//! per K step. Each thread keeps one source pointer and one shared address per
//! operand; every copy sits a constant offset from them.

use super::{Kernel, Tile};
use crate::cuda::copy::{self, copy_edge_helpers, whole_tiles, Checks, CopyAt, CopyPlan, Edge, TileCopies};
use crate::cuda::writer::Writer;
use crate::spec::{Edges, Layout};

/// One operand's copies: the tile, how threads split it, and its names.
struct Copies<'t> {
    tile: &'t Tile,
    plan: CopyPlan,
    /// `a` or `b`.
    p: String,
    /// Elements per stage, padding included.
    stage_elems: u32,
    ld: &'static str,
}

impl Copies<'_> {
    fn bytes(&self) -> u32 {
        self.plan.vector * 4
    }

    /// Bytes from stage 0 to stage `stage` (an expression); empty for stage 0.
    fn stage_offset(&self, stage: &str) -> String {
        if stage == "0" {
            String::new()
        } else {
            format!("{stage} * {}", self.stage_elems * 4)
        }
    }

    /// Round `r`'s offset from round 0: in the global source (as a row and a
    /// column, scaled by `r_expr`) and in shared memory (bytes, likewise).
    fn round(&self, r: u32, r_expr: Option<&str>) -> (String, String) {
        let (row, col) = self.plan.round_offset(r);
        let scale = |x: u32| match (r_expr, x) {
            (_, 0) => None,
            (None, x) => Some(x.to_string()),
            (Some(e), 1) => Some(e.to_string()),
            (Some(e), x) => Some(format!("{e} * {x}")),
        };
        let (strided, contiguous) = match self.tile.layout {
            Layout::RowMajor => (row, col),
            Layout::ColMajor => (col, row),
        };
        let src = [scale(strided).map(|s| format!("{s} * {}", self.ld)), scale(contiguous)];
        let (srow, scol) = if self.tile.smem_transposed { (col, row) } else { (row, col) };
        let dst = scale((srow * self.tile.smem_row + scol) * 4);
        let join = |v: &[Option<String>]| v.iter().flatten().cloned().collect::<Vec<_>>().join(" + ");
        (join(&src), join(&[dst]))
    }
}

/// `x` as a term, empty for 0.
fn nonzero(x: u32) -> String {
    if x == 0 {
        String::new()
    } else {
        x.to_string()
    }
}

/// `base + a + b`, leaving out empty terms.
fn plus(base: &str, terms: &[&str]) -> String {
    terms.iter().filter(|t| !t.is_empty()).fold(base.to_string(), |acc, t| format!("{acc} + {t}"))
}

impl Kernel<'_> {
    fn copies<'t>(&self, t: &'t Tile, vector: u32) -> Copies<'t> {
        let vector = if t.copy_transposes() { 1 } else { vector };
        let p = t.name.to_lowercase();
        Copies {
            tile: t,
            plan: CopyPlan::new(t.rows, t.cols, t.layout, vector, self.threads),
            ld: if p == "a" { "lda" } else { "ldb" },
            p,
            stage_elems: t.smem_elems(),
        }
    }

    /// Device functions for the copies this kernel issues.
    pub(super) fn cp_async_helpers(&self, w: &mut Writer, vector: u32) {
        let (a, b, _) = self.staged_tiles();
        let copies = [self.copies(&a, vector), self.copies(&b, vector)];
        let guarded = self.spec.edges == Edges::Guarded;
        // at the edges every copy reads its elements inside and fills zeros past them (a source
        // size); wider ones go by copy_edge, which takes that form where another line of the
        // operand follows (see copy_edge_helpers)
        let mut zfill: Vec<u32> = if guarded { copies.iter().map(|c| c.bytes()).collect() } else { Vec::new() };
        zfill.sort();
        zfill.dedup();
        crate::cuda::ptx::cp_async(w, &[copies[0].bytes(), copies[1].bytes()], &zfill);
        let mut wide: Vec<u32> = copies.iter().filter(|c| guarded && c.plan.vector > 1).map(|c| c.plan.vector).collect();
        wide.dedup();
        for v in wide {
            copy_edge_helpers(w, 4, v);
        }
    }

    /// The whole pipeline: [`Self::cp_async_prologue`], then [`Self::cp_async_main_loop`].
    pub(super) fn cp_async_body(&self, w: &mut Writer, stages: u32, vector: u32) {
        self.cp_async_prologue(w, stages, vector);
        w.line("");
        self.cp_async_main_loop(w, stages, vector, Checks::per_tile_if_guarded(self.spec));
    }

    /// Shared-memory tiles, where this thread's copies come from and go to, the
    /// first `stages - 1` tiles on their way and k = 0's fragments loaded.
    /// Under stream-K it runs once per block: the pipeline then flows through
    /// the block's whole share, so it never drains and refills between units.
    pub(super) fn cp_async_prologue(&self, w: &mut Writer, stages: u32, vector: u32) {
        let bk = self.spec.block.k.expect("checked: staged tiles have a K step");
        let (a_tile, b_tile, shapes) = self.staged_tiles();
        let (a, b) = (self.copies(&a_tile, vector), self.copies(&b_tile, vector));
        w.line("// staging (cp.async): shared-memory tiles (dynamic shared memory, 16-byte aligned)");
        w.line("extern __shared__ float4 smem_raw[];");
        w.line(format!("// {stages} stages of each tile: {shapes}"));
        w.line("float* const As = reinterpret_cast<float*>(smem_raw);");
        w.line(format!("float* const Bs = As + {};", stages * a.stage_elems));
        self.fragment_bases(w, &a_tile, &b_tile, "0", "As", "Bs");
        w.line("");
        for c in [&a, &b] {
            self.copy_origin(w, c);
        }
        if self.stream_k {
            w.line("");
            self.stream_k().producer(w, &[self.copy_source(&a), self.copy_source(&b)], self.skips_copies());
        } else {
            if self.spec.edges == Edges::Guarded {
                w.line(format!("const int tiles = (K + {}) / {bk};  // the last may be partial", bk - 1));
                w.line("// the K tiles whose copies need no edge checks");
                w.line(whole_tiles("const int whole_tiles", "block_m", "block_n", (self.bm, self.bn, bk), false));
            } else {
                w.line(format!("const int tiles = K / {bk};"));
            }
        }
        w.line("");
        let fill = stages - 1;
        w.line(format!("// pipeline fill: the first {fill} tile(s) start to travel, one commit group each"));
        if fill == 1 {
            w.block(format!("if ({})", copy::copy_ahead(self.stream_k, "0")), |w| {
                self.issue_next(w, &a, &b, "0", "0", Checks::per_tile_if_guarded(self.spec))
            });
            w.line("cp_async_commit();");
        } else {
            w.line("#pragma unroll");
            w.block(format!("for (int s = 0; s < {fill}; ++s)"), |w| {
                w.block(format!("if ({})", copy::copy_ahead(self.stream_k, "s")), |w| {
                    self.issue_next(w, &a, &b, "s", "s", Checks::per_tile_if_guarded(self.spec))
                });
                w.line("cp_async_commit();  // empty past the last tile: keeps one group per tile");
            });
        }
        w.line("");
        let (rows, cols) = (self.mi * self.tm, self.ni * self.tn);
        w.line("// fragments are double buffered: k + 1's load while k's FMAs issue, across");
        w.line("// tile boundaries too, so neither the barrier nor shared-memory latency stalls the math");
        w.line(format!("float a_frag[2][{rows}], b_frag[2][{cols}];"));
        w.line("int rd = 0;  // the stage being read");
        w.line(format!("int wr = {fill};  // the stage being refilled"));
        w.line("const float* a_rd = a_rd0;");
        w.line("const float* b_rd = b_rd0;");
        w.line(format!("cp_async_wait<{}>();  // tile 0 has landed", stages - 2));
        w.line("__syncthreads();");
        self.a_frags(w, &a_tile, "a_frag[0]", "0");
        self.b_frags(w, &b_tile, "b_frag[0]", "0");
    }

    /// The block tier's loop over `tiles` K steps: each refills the stage the
    /// step before it read, then computes from fragments loaded a k ahead.
    pub(super) fn cp_async_main_loop(&self, w: &mut Writer, stages: u32, vector: u32, checks: Checks) {
        let bk = self.spec.block.k.expect("checked: staged tiles have a K step");
        let (a_tile, b_tile, _) = self.staged_tiles();
        let (a, b) = (self.copies(&a_tile, vector), self.copies(&b_tile, vector));
        let fill = stages - 1;
        let next = |v: &str| format!("{v} = {v} == {} ? 0 : {v} + 1;", stages - 1);
        w.line(format!("// block tier: walk K one {bk}-wide tile at a time"));
        w.block("for (int kt = 0; kt < tiles; ++kt)", |w| {
            w.line("// thread tier: one outer product per k of the staged tile");
            w.line("#pragma unroll");
            w.block(format!("for (int p = 0; p < {bk}; ++p)"), |w| {
                w.block("if (p == 0)", |w| {
                    if self.stream_k {
                        w.line("// refill the stage the previous K step used (everyone is past reading it) with");
                        w.line(format!("// the share's K step {fill} ahead, of this C tile or the next"));
                    } else {
                        w.line(format!("// refill the stage tile kt - 1 used (everyone is past reading it) with tile kt + {fill}"));
                    }
                    let ahead = format!("kt + {fill}");
                    w.block(format!("if ({})", copy::copy_ahead(self.stream_k, &ahead)), |w| self.issue_next(w, &a, &b, "wr", &ahead, checks));
                    w.line("cp_async_commit();  // empty past the last tile: keeps one group per tile");
                    w.line(next("wr"));
                });
                w.block(format!("if (p == {})", bk - 1), |w| {
                    w.line("// the next tile's fragments come next: wait until it has landed; past");
                    w.line("// this barrier nobody reads the stage the next refill overwrites");
                    w.line(format!("cp_async_wait<{}>();", stages - 2));
                    w.line("__syncthreads();");
                    w.line(next("rd"));
                    w.line(format!("a_rd = a_rd0 + rd * {};", a.stage_elems));
                    w.line(format!("b_rd = b_rd0 + rd * {};", b.stage_elems));
                });
                w.line("// fragments of k + 1 (after the last tile: from a stage no copy fills, never used)");
                let k_next = format!("(p + 1) % {bk}");
                self.a_frags(w, &a_tile, "a_frag[(p + 1) % 2]", &k_next);
                self.b_frags(w, &b_tile, "b_frag[(p + 1) % 2]", &k_next);
                self.fmas(w, "a_frag[p % 2]", "b_frag[p % 2]");
            });
        });
    }

    /// Both operands' copies of the next tile, K tile `ahead` of this
    /// block's (under stream-K: the producer's), into stage `stage`.
    fn issue_next(&self, w: &mut Writer, a: &Copies, b: &Copies, stage: &str, ahead: &str, checks: Checks) {
        copy::issue_both_tiles(self, w, [a, b], stage, ahead, checks, self.stream_k);
    }

    /// Where this thread's first copy of an operand comes from and goes to.
    fn copy_origin(&self, w: &mut Writer, c: &Copies) {
        let (t, plan, p) = (c.tile, c.plan, &c.p);
        let how = if t.copy_transposes() { ", transposed" } else { "" };
        w.line(format!("// {} tile {}x{}: {} round(s) of one {}-byte copy per thread{how}", t.name, t.rows, t.cols, plan.rounds, c.bytes()));
        let line = if plan.per_line == 1 { "threadIdx.x".to_string() } else { format!("threadIdx.x / {}", plan.per_line) };
        let along = match (plan.per_line, plan.vector) {
            (1, _) => "0".to_string(),
            (n, 1) => format!("threadIdx.x % {n}"),
            (n, v) => format!("(threadIdx.x % {n}) * {v}"),
        };
        let (row, col) = match t.layout {
            Layout::RowMajor => (line, along),
            Layout::ColMajor => (along, line),
        };
        w.line(format!("const int {p}_row = {row};"));
        w.line(format!("const int {p}_col = {col};"));
        let smem = if t.name == "A" { "As" } else { "Bs" };
        if self.stream_k {
            w.line(format!("const float* {p}_src;  // aimed by the producer below; each issue moves it one tile along K"));
        } else {
            w.line(format!("const float* {p}_src = &{};  // tile 0; each issue moves it one tile along K", self.copy_source(c)));
        }
        w.line(format!(
            "const unsigned {p}_dst = (unsigned)__cvta_generic_to_shared(&{});  // in stage 0",
            t.smem(smem, &format!("{p}_row"), &format!("{p}_col"))
        ));
    }

    /// Where this thread's first copy of the operand's tile comes from: at
    /// K = 0 or, under stream-K, at the producer's K step `copy_k`.
    fn copy_source(&self, c: &Copies) -> String {
        let p = &c.p;
        let k0 = if self.stream_k { format!("copy_k * {}", self.spec.block.k.unwrap_or(1)) } else { "0".to_string() };
        let (row, col) = match c.tile.name {
            "A" => (format!("block_m + {p}_row"), crate::cuda::layout::sum(&k0, &[Some(format!("{p}_col"))])),
            _ => (crate::cuda::layout::sum(&k0, &[Some(format!("{p}_row"))]), format!("block_n + {p}_col")),
        };
        match c.tile.name {
            "A" => self.a_global(&row, &col),
            _ => self.b_global(&row, &col),
        }
    }
}

impl TileCopies<Copies<'_>> for Kernel<'_> {
    /// Issues one operand's copies of the next tile into stage `stage`.
    fn issue(&self, w: &mut Writer, c: &Copies, stage: &str) {
        let p = &c.p;
        let bytes = c.bytes();
        let stage_off = c.stage_offset(stage);
        let copy = |w: &mut Writer, (src, dst): (String, String)| {
            w.line(format!("cp_async_{bytes}({}, {});", plus(&format!("{p}_dst"), &[&stage_off, &dst]), plus(&format!("{p}_src"), &[&src])));
        };
        let rounds = c.plan.rounds;
        if rounds > 1 && c.plan.linear() {
            w.line("#pragma unroll");
            w.block(format!("for (int r = 0; r < {rounds}; ++r)"), |w| copy(w, c.round(1, Some("r"))));
        } else {
            for r in 0..rounds {
                copy(w, c.round(r, None));
            }
        }
    }

    /// [`Self::issue`] for a tile at an edge (`at`) of a guarded kernel: each
    /// copy reads only the elements inside the matrix and fills the rest with zeros.
    fn issue_guarded(&self, w: &mut Writer, c: &Copies, stage: &str, at: CopyAt) {
        let p = &c.p;
        let bk = self.spec.block.k.unwrap_or(1);
        let edge = Edge::new(c.tile.name.chars().next().unwrap_or('A'), c.tile.layout, c.plan.vector, at, bk);
        let stage_off = c.stage_offset(stage);
        let base = c.tile.name;
        for r in 0..c.plan.rounds {
            let (dr, dc) = c.plan.round_offset(r);
            let (src, dst) = c.round(r, None);
            w.block("", |w| {
                let (row, col) = (plus(&format!("{p}_row"), &[&nonzero(dr)]), plus(&format!("{p}_col"), &[&nonzero(dc)]));
                edge.inside(w, "n", &row, &col);
                let (to, from) = (plus(&format!("{p}_dst"), &[&stage_off, &dst]), plus(&format!("{p}_src"), &[&src]));
                if c.plan.vector == 1 {
                    w.line(format!("cp_async_{}_zfill({to}, n > 0 ? {from} : {base}, n * 4);", c.bytes()));
                } else {
                    let follows = edge.line_follows(&row, &col);
                    w.line(format!("copy_edge_{}({to}, {from}, n, {follows});", c.bytes()));
                }
            });
        }
    }

    /// [`Self::issue`] for the stream-K producer's tile at an edge of M or N
    /// ([`Self::skips_copies`]), K tiles before the last: a copy whose first
    /// element lies past the tile's rows inside M (A) or columns inside N
    /// (B) is skipped. The stale tile left in its place feeds only rows or
    /// columns of the product past C's edges, never stored; a vector across
    /// N's edge reads on into the line's pitch, a multiple of the vector,
    /// inside the operand where another line follows (the last K tile,
    /// which holds the operand's last line, is checked). Tested at every
    /// tile: a branch around the tests for tiles inside M and N, or a bit
    /// mask of the copies inside tested a copy, made ptxas schedule
    /// `autotuned` 20% slower (H200).
    fn issue_skipping(&self, w: &mut Writer, c: &Copies, stage: &str) {
        let p = &c.p;
        let bytes = c.bytes();
        let stage_off = c.stage_offset(stage);
        let (coord, limit) = if c.tile.name == "A" { (format!("{p}_row"), "copy_rows") } else { (format!("{p}_col"), "copy_cols") };
        // (rounds that move along K alone share their test: one branch for them)
        let mut rounds: Vec<(String, Vec<String>)> = Vec::new();
        for r in 0..c.plan.rounds {
            let (dr, dc) = c.plan.round_offset(r);
            let test = format!("{} < {limit}", plus(&coord, &[&nonzero(if c.tile.name == "A" { dr } else { dc })]));
            let (src, dst) = c.round(r, None);
            let copy = format!("cp_async_{bytes}({}, {});", plus(&format!("{p}_dst"), &[&stage_off, &dst]), plus(&format!("{p}_src"), &[&src]));
            match rounds.last_mut() {
                Some((t, copies)) if *t == test => copies.push(copy),
                _ => rounds.push((test, vec![copy])),
            }
        }
        for (test, copies) in rounds {
            match copies.as_slice() {
                [copy] => w.line(format!("if ({test}) {copy}")),
                _ => w.block(format!("if ({test})"), |w| copies.iter().for_each(|c| w.line(c))),
            }
        }
    }

    /// Moves one operand's source on by one tile along K.
    fn advance(&self, w: &mut Writer, c: &Copies) {
        let p = &c.p;
        let bk = self.spec.block.k.unwrap_or(1);
        // A moves along its columns, B along its rows.
        let along_k_strided = (c.tile.name == "A") == (c.tile.layout == Layout::ColMajor);
        let step = if along_k_strided { format!("{bk} * {}", c.ld) } else { bk.to_string() };
        w.line(format!("{p}_src += {step};"));
    }

    /// Whether the stream-K producer skips the copies of a tile at an edge of
    /// M or N that lie past it, rather than checking every copy of every K
    /// tile of that tile (the tensor-core producer's way, `tensor::staging`).
    fn skips_copies(&self) -> bool {
        self.spec.edges == Edges::Guarded && self.stream_k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::*;

    /// `simt_tuned`'s tiling (the `autotuned` step's): guarded stream-K on a
    /// cp.async pipeline, A copied transposed.
    fn stream_k(a: Layout, b: Layout) -> KernelSpec {
        let f32 = |layout| Operand { elem: Elem::F32, layout };
        let s = KernelSpec {
            name: "skips".into(),
            a: f32(a),
            b: f32(b),
            c: f32(Layout::RowMajor),
            block: Block { m: 128, n: 256, k: Some(16), threads: 256, min_blocks: None },
            warp: Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 4 }),
            thread: Some(ThreadTile { m: 8, n: 4, lanes: Dim::N, sweep: Dim::M }),
            atom: Atom::Fma,
            staging: Staging::CpAsync { stages: 4, vector: 4, transpose_a: true, fragments: 1 },
            specialize: None,
            swizzle: Swizzle::Pad(4),
            raster: Raster::Row,
            persistent: Some(Persistent::StreamK),
            cluster: None,
            epilogue: Epilogue::Vector,
            fused: Fused::default(),
            edges: Edges::Guarded,
            groups: None,
            arch: Arch::Sm80,
        };
        assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
        s
    }

    /// The stream-K producer's copies of a tile at an edge of M or N, in
    /// each layout of A and B (compiled as host C++ and run for every
    /// thread of the block): they are the unchecked copies, the same
    /// sources into the same places, less exactly those whose first element
    /// lies past the tile's rows inside M (A) or columns inside N (B).
    #[test]
    fn copies_past_m_and_n_are_skipped_and_every_copy_inside_is_issued() {
        for (la, lb) in [(Layout::RowMajor, Layout::RowMajor), (Layout::ColMajor, Layout::ColMajor), (Layout::ColMajor, Layout::RowMajor)] {
            let s = stream_k(la, lb);
            let k = Kernel::new(&s);
            assert!(k.skips_copies(), "a guarded stream-K pipeline skips");
            let Staging::CpAsync { vector, .. } = s.staging else { unreachable!() };
            let (a_tile, b_tile, _) = k.staged_tiles();
            for t in [&a_tile, &b_tile] {
                let c = k.copies(t, vector);
                let (p, plan) = (&c.p, c.plan);
                // lines 1000 elements apart: a source reads (line, element) as line * 1000 + element
                let origin = |i: u32| {
                    let (line, e) = plan.position(i);
                    line * 1000 + e
                };
                let full = if t.name == "A" { 128 } else { 256 };
                for inside in [1, 3, 4, 5, 17, 100, full - 1, full] {
                    let (mut all, mut skipping) = (Writer::default(), Writer::default());
                    k.issue(&mut all, &c, "0");
                    k.issue_skipping(&mut skipping, &c, "0");
                    let program = format!(
                        "#include <cstdio>\nstruct Src {{ long at; }};\nstatic Src operator+(Src s, long o) {{ return Src{{s.at + o}}; }}\n\
                         static int pass, thread;\n\
                         static void copy(unsigned dst, Src src) {{ std::printf(\"%d %d %u %ld\\n\", pass, thread, dst, src.at); }}\n\
                         #define cp_async_4 copy\n#define cp_async_16 copy\n\
                         int main() {{\n  const long lda = 1000, ldb = 1000; (void)lda; (void)ldb;\n  \
                         const int copy_rows = {inside}, copy_cols = {inside};\n  \
                         for (thread = 0; thread < {threads}; ++thread) {{\n    \
                         const int origins[] = {{{origins}}}, rows[] = {{{rows}}}, cols[] = {{{cols}}};\n    \
                         const Src {p}_src{{origins[thread]}};\n    const unsigned {p}_dst = 0;\n    \
                         const int {p}_row = rows[thread], {p}_col = cols[thread];\n    (void){p}_row; (void){p}_col;\n    \
                         pass = 0;\n{}\n    pass = 1;\n{}\n  }}\n}}\n",
                        all.finish(),
                        skipping.finish(),
                        threads = plan.threads,
                        origins = (0..plan.threads).map(|i| origin(i).to_string()).collect::<Vec<_>>().join(", "),
                        rows = (0..plan.threads).map(|i| plan.row_col(i).0.to_string()).collect::<Vec<_>>().join(", "),
                        cols = (0..plan.threads).map(|i| plan.row_col(i).1.to_string()).collect::<Vec<_>>().join(", "),
                    );
                    let out = crate::cuda::host::run_cpp("simt-skips", &program);
                    let copies: Vec<Vec<i64>> = out.lines().map(|l| l.split(' ').map(|v| v.parse().unwrap()).collect()).collect();
                    assert_eq!(copies.iter().filter(|c| c[0] == 0).count() as u32, plan.threads * plan.rounds);
                    // a source's coordinate along M (A) or N (B)
                    let along_mn = |src: i64| {
                        let (line, e) = (src / 1000, src % 1000);
                        let lines_along_mn = (t.name == "A") == (t.layout == Layout::RowMajor);
                        if lines_along_mn {
                            line
                        } else {
                            e
                        }
                    };
                    let want: Vec<&[i64]> = copies.iter().filter(|c| c[0] == 0 && along_mn(c[3]) < inside as i64).map(|c| &c[1..]).collect();
                    let got: Vec<&[i64]> = copies.iter().filter(|c| c[0] == 1).map(|c| &c[1..]).collect();
                    assert_eq!(got, want, "{} {la:?}/{lb:?}, {inside} inside", t.name);
                }
            }
        }
    }
}
