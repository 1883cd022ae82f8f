//! Staging of the tensor-core paths: tiles of A and B copied global ->
//! shared in each operand's global layout, 16 bytes (or `vector` elements) a
//! copy along its contiguous lines; the tile's layout function (`a_at`,
//! `b_at`) places each copy, so padding and the XOR swizzle apply to copies
//! and fragment loads alike.

use super::{plus, times, Source, Tc};
use crate::cuda::copy::{self, load_edge, load_type, whole_tiles, Checks, CopyAt, CopyPlan, Edge, TileCopies};
use crate::cuda::ptx::storage_type;
use crate::cuda::stream_k::Tiling;
use crate::cuda::writer::Writer;
use crate::spec::{Edges, Layout, Staging};

/// One operand's copies of a tile.
pub(super) struct Copies {
    /// `a` or `b`.
    p: char,
    plan: CopyPlan,
    /// Elements of one stage of the shared tile.
    stage: u32,
    /// Bytes of one element (2, or 1 for 8-bit floats).
    elem_bytes: u32,
    /// Whether the operand's lines run along K (A column-major, B row-major).
    lines_along_k: bool,
}

impl Tc<'_> {
    fn copies(&self, which: char, vector: u32) -> Copies {
        let s = self.spec;
        let (op, rows, cols, tile) = if which == 'A' { (s.a, self.bm, self.bk, s.smem_a()) } else { (s.b, self.bk, self.bn, s.smem_b()) };
        Copies {
            p: which.to_ascii_lowercase(),
            plan: CopyPlan::new(rows, cols, op.layout, vector, self.threads),
            stage: tile.elems(),
            elem_bytes: op.elem.bytes(),
            lines_along_k: (which == 'A') == (op.layout == Layout::ColMajor),
        }
    }

    /// Dynamic shared memory for `stages` stages of both tiles, their shared
    /// addresses, and each thread's copies.
    fn smem_setup(&self, w: &mut Writer, stages: u32, vector: u32) -> (Copies, Copies) {
        let (a, b) = (self.copies('A', vector), self.copies('B', vector));
        w.line("// staging: tiles in dynamic shared memory");
        w.line("extern __shared__ __align__(128) unsigned char smem_raw[];");
        w.line(format!("// {stages} stage(s) of the A tile ({} elements each), then of the B tile ({})", a.stage, b.stage));
        // (8-bit A and B may differ in type, never in size: one storage type for both)
        let ty = storage_type(self.spec.a.elem);
        w.line(format!("{ty}* const As = reinterpret_cast<{ty}*>(smem_raw);"));
        w.line(format!("{ty}* const Bs = As + {};", stages * a.stage));
        w.line("const unsigned as_addr = (unsigned)__cvta_generic_to_shared(As);");
        w.line("const unsigned bs_addr = (unsigned)__cvta_generic_to_shared(Bs);");
        w.line("");
        self.copy_setup(w, &a);
        self.copy_setup(w, &b);
        (a, b)
    }

    /// Where this thread's copies of one operand come from (offsets from
    /// `{p}_src`, which moves a tile along K per copy) and go to (offsets in
    /// a stage, through the tile's layout function).
    fn copy_setup(&self, w: &mut Writer, c: &Copies) {
        let (p, plan) = (c.p, c.plan);
        let s = self.spec;
        let (op, ld) = if p == 'a' { (s.a, "lda") } else { (s.b, "ldb") };
        let bytes = plan.vector * s.a.elem.bytes();
        w.line(format!(
            "// copies of the {} tile ({}): {} round(s) of one {bytes}-byte copy per thread along its lines",
            p.to_ascii_uppercase(),
            crate::cuda::layout::describe(op.layout),
            plan.rounds
        ));
        let ty = storage_type(op.elem);
        if self.stream_k {
            w.line(format!("const {ty}* {p}_src;  // aimed by the producer below; each copy moves it one tile along K"));
        } else {
            w.line(format!("const {ty}* {p}_src = &{};  // K = 0; each copy moves it one tile along K", self.source(c, None)));
        }
        let rounds = plan.rounds;
        // Unsigned, an offset widens to 64 bits without its sign: one LEA pair a copy where an
        // int's took five instructions, the 12 copies of `mma_autotuned`'s tile 60 of its loop's
        // 340 (an offset inside a tile is below 2^31: `args::check`). cp.async's destinations
        // are shared-memory byte addresses, a stage's offset added once a copy.
        w.line(format!("unsigned {p}_off[{rounds}];  // each round's offset from {p}_src"));
        if self.clamps_copies() {
            let (limit, product) = if p == 'a' { ("M", "rows") } else { ("N", "columns") };
            if c.lines_along_k {
                w.line(format!("// (a copy past {limit}'s edge reads the line's last copy inside it instead, which only"));
            } else {
                w.line(format!("// (a line past {limit}'s edge reads the edge's last line instead, which only"));
            }
            w.line(format!("// {product} of the product past C's edge use: never stored)"));
        }
        if self.cp_async() {
            w.line(format!("unsigned {p}_dst[{rounds}];  // and its place (a byte address) in stage 0"));
        } else {
            w.line(format!("int {p}_dst[{rounds}];  // and its element in a stage"));
        }
        w.unrolled("r", rounds, |w| {
            let i = plus(&[Some("threadIdx.x".into()), if rounds > 1 { times("r", self.threads) } else { None }]);
            let body = |w: &mut Writer| {
                w.line(format!("const int i = {i};"));
                let per_line = plan.per_line;
                w.line(format!("const int line = i / {per_line};"));
                let e = if plan.vector == 1 { format!("i % {per_line}") } else { format!("(i % {per_line}) * {}", plan.vector) };
                w.line(format!("const int e = {e};"));
                if self.clamps_copies() {
                    let edge = if p == 'a' { ("block_m", "M") } else { ("block_n", "N") };
                    let off = copy::clamped("line", "e", ld, plan.vector, !c.lines_along_k, edge);
                    w.line(format!("{p}_off[r] = {off};"));
                } else {
                    w.line(format!("{p}_off[r] = line * {ld} + e;"));
                }
                if self.cp_async() {
                    let scale = if c.elem_bytes == 1 { String::new() } else { format!("{} * ", c.elem_bytes) };
                    w.line(format!("{p}_dst[r] = {p}s_addr + {scale}{p}_at(line, e);"));
                } else {
                    w.line(format!("{p}_dst[r] = {p}_at(line, e);"));
                }
            };
            // one round is written flat: a scope keeps its names to itself
            if rounds == 1 {
                w.block("", body);
            } else {
                body(w);
            }
        });
        w.line("");
    }

    /// The element of operand `c` where the block's tile starts, at K = 0 or
    /// at the K step `k_step` (an expression).
    fn source(&self, c: &Copies, k_step: Option<&str>) -> String {
        let s = self.spec;
        let (op, ld, origin) = if c.p == 'a' { (s.a, "lda", "block_m") } else { (s.b, "ldb", "block_n") };
        let k = k_step.map(|k| format!("{k} * {}", self.bk));
        let origin_line = (c.p == 'a') == (op.layout == Layout::RowMajor);
        let (origin, k) = if origin_line { (format!("{origin} * {ld}"), k) } else { (origin.to_string(), k.map(|k| format!("{k} * {ld}"))) };
        format!("{}[{}]", c.p.to_ascii_uppercase(), plus(&[Some(origin), k]))
    }

    /// Whether a guarded block's copies read inside A and B at any block
    /// along M and N ([`copy::clamped`]), so that blocks at those edges copy
    /// all but their last K tile unchecked. (A cp.async pipeline of one
    /// block a tile: under stream-K the producer moves from tile to tile.)
    /// At 4095 x 4096 x 4096, where the last row of blocks checked every
    /// copy, `mma_autotuned` ran 406 TFLOP/s against 475 at 4096^3 (H200).
    fn clamps_copies(&self) -> bool {
        self.spec.edges == Edges::Guarded && self.cp_async() && !self.stream_k
    }

    /// Whether the tiles travel by cp.async (whose destinations this keeps
    /// as shared-memory byte addresses), not through registers.
    fn cp_async(&self) -> bool {
        matches!(self.spec.staging, Staging::CpAsync { .. })
    }

    /// Declares copy `r`'s index `i` in the tile, its `line` and first
    /// element `e` along it, and names its (row, column) in a tile of `layout`.
    fn copy_position(&self, w: &mut Writer, plan: CopyPlan, layout: Layout) -> (&'static str, &'static str) {
        let i = plus(&[Some("threadIdx.x".into()), if plan.rounds > 1 { times("r", self.threads) } else { None }]);
        w.line(format!("const int i = {i};"));
        w.line(format!("const int line = i / {};", plan.per_line));
        w.line(format!("const int e = (i % {}) * {};", plan.per_line, plan.vector));
        if layout == Layout::RowMajor {
            ("line", "e")
        } else {
            ("e", "line")
        }
    }

    /// Where copy `r` of operand `c` lands in stage `stage`: a shared-memory byte address.
    fn copy_dst(c: &Copies, stage: &str) -> String {
        plus(&[Some(format!("{}_dst[r]", c.p)), times(stage, c.elem_bytes * c.stage)])
    }

    /// The vector type of one copy.
    fn copy_type(c: &Copies) -> &'static str {
        load_type(c.elem_bytes, c.plan.vector)
    }

    /// Synchronous copies of one operand's next tile, K tile `k_tile`, into
    /// registers `{p}_ld`; guarded, each copy checks the edges (every copy:
    /// synchronous staging is the ladder's teaching path, and a guarded
    /// kernel built for speed stages through cp_async, whose inner blocks
    /// skip the checks).
    fn load(&self, w: &mut Writer, c: &Copies, k_tile: &str) {
        let (p, ty, plan) = (c.p, Self::copy_type(c), c.plan);
        if self.spec.edges == Edges::Guarded {
            let op = if p == 'a' { self.spec.a } else { self.spec.b };
            let edge = Edge::new(p.to_ascii_uppercase(), op.layout, plan.vector, CopyAt::next(false, k_tile), self.bk);
            w.unrolled("r", plan.rounds, |w| {
                w.block("", |w| {
                    let (row, col) = self.copy_position(w, plan, op.layout);
                    edge.inside(w, "n", row, col);
                    w.line(format!("{p}_ld[r] = {};", load_edge(c.elem_bytes, plan.vector, &format!("{p}_src[{p}_off[r]]"), "n")));
                });
            });
        } else {
            w.unrolled("r", plan.rounds, |w| {
                w.line(format!("{p}_ld[r] = *reinterpret_cast<const {ty}*>({p}_src + {p}_off[r]);"));
            });
        }
        self.advance(w, c);
    }

    /// Stores registers `{p}_ld` into stage `stage` of the shared tile.
    fn store(&self, w: &mut Writer, c: &Copies, stage: &str) {
        let (p, ty) = (c.p, Self::copy_type(c));
        let smem = if p == 'a' { "As" } else { "Bs" };
        let stage_off = times(stage, c.stage);
        w.unrolled("r", c.plan.rounds, |w| {
            let at = plus(&[stage_off.clone(), Some(format!("{p}_dst[r]"))]);
            w.line(format!("*reinterpret_cast<{ty}*>({smem} + {at}) = {p}_ld[r];"));
        });
    }

    /// Declares the copy registers of both operands.
    fn copy_registers(&self, w: &mut Writer, a: &Copies, b: &Copies) {
        for c in [a, b] {
            w.line(format!("{} {}_ld[{}];", Self::copy_type(c), c.p, c.plan.rounds));
        }
    }

    /// Synchronous staging: one buffer (copy, barrier, math, barrier), or two
    /// (the next tile's loads issued before this tile's math, stored after it).
    pub(super) fn smem_loop(&self, w: &mut Writer, vector: u32, buffers: u32) {
        let (a, b) = self.smem_setup(w, buffers, vector);
        let bk = self.bk;
        if buffers == 1 {
            w.line(format!("// block tier: walk K one {bk}-wide tile at a time"));
            w.block(format!("for (int k0 = 0; k0 < K; k0 += {bk})"), |w| {
                w.line("// staging: global -> registers -> shared");
                self.copy_registers(w, &a, &b);
                let k_tile = format!("k0 / {bk}");
                self.load(w, &a, &k_tile);
                self.load(w, &b, &k_tile);
                self.store(w, &a, "0");
                self.store(w, &b, "0");
                w.line("__syncthreads();  // the tiles are complete before anyone reads them");
                self.k_tile(w, Source::Smem { stage: "0" });
                w.line("__syncthreads();  // everyone is done reading before the next tiles land");
            });
            return;
        }
        if self.spec.edges == Edges::Guarded {
            w.line(format!("const int tiles = (K + {}) / {bk};  // the last may be partial", bk - 1));
        } else {
            w.line(format!("const int tiles = K / {bk};"));
        }
        w.line("// staging (double buffered): tile 0 lands first; then each step computes one");
        w.line("// buffer while the next tile travels through registers into the other");
        w.block("", |w| {
            self.copy_registers(w, &a, &b);
            self.load(w, &a, "0");
            self.load(w, &b, "0");
            self.store(w, &a, "0");
            self.store(w, &b, "0");
        });
        w.line("__syncthreads();");
        w.line("");
        w.line(format!("// block tier: walk K one {bk}-wide tile at a time"));
        w.block("for (int kt = 0, buf = 0; kt < tiles; ++kt, buf ^= 1)", |w| {
            w.line("const bool more = kt + 1 < tiles;");
            self.copy_registers(w, &a, &b);
            w.line("// staging: the next tiles' global loads are issued before this tile's math");
            w.block("if (more)", |w| {
                self.load(w, &a, "kt + 1");
                self.load(w, &b, "kt + 1");
            });
            self.k_tile(w, Source::Smem { stage: "buf" });
            w.block("if (more)", |w| {
                self.store(w, &a, "(buf ^ 1)");
                self.store(w, &b, "(buf ^ 1)");
            });
            w.line("// one barrier a step: the next tiles are complete, and nobody still");
            w.line("// reads the buffer the step after next overwrites");
            w.line("__syncthreads();");
        });
    }

    /// A cp.async pipeline `stages` tiles deep, one barrier per K tile.
    /// Guarded, a block whose tiles all lie inside A and B runs it without a
    /// check. The others run it as two loops, one after the other: the
    /// first while the copies it issues lie wholly inside A and B (their
    /// sources clamped along M and N: [`Self::clamps_copies`]), without a
    /// check; the second, where they cross an edge, checks every copy. A
    /// block inside M and N so runs unchecked up to K's last whole tiles, a
    /// block at an edge of M or N up to the tile before. One loop with a check
    /// per copy made `mma_autotuned` spill; one checked loop wherever K's
    /// last tile is partial ran it at 303 TFLOP/s at 8191^3 (360 split); and
    /// the split loops alone for the whole blocks cost 4% at 4096^3.
    pub(super) fn cp_async_loop(&self, w: &mut Writer, stages: u32, vector: u32) {
        let (a, b) = self.cp_async_setup(w, stages, vector, None);
        if self.spec.edges != Edges::Guarded {
            self.cp_async_fill(w, stages, &a, &b, Checks::Off);
            self.cp_async_k_loop(w, stages, &a, &b, &[("0", "tiles", Checks::Off)]);
            return;
        }
        let fill = stages - 1;
        w.block("if (whole_tiles == tiles)", |w| {
            w.line("// every tile of this block lies inside A and B: no copy needs a check");
            self.cp_async_fill(w, stages, &a, &b, Checks::Off);
            self.cp_async_k_loop(w, stages, &a, &b, &[("0", "tiles", Checks::Off)]);
        });
        w.block("else", |w| {
            w.line(format!("// the K tiles whose refills (tile kt + {fill}) read inside A and B: all but the last few"));
            w.line(format!("const int unchecked = whole_tiles > {fill} ? whole_tiles - {fill} : 0;"));
            self.cp_async_fill(w, stages, &a, &b, Checks::PerTile);
            self.cp_async_k_loop(w, stages, &a, &b, &[("0", "unchecked", Checks::Off), ("unchecked", "tiles", Checks::Every)]);
        });
    }

    /// Shared memory, each thread's copies and the number of K tiles. Under
    /// stream-K (`sk`) a producer cursor aims the copies through the block's
    /// whole share.
    pub(super) fn cp_async_setup(&self, w: &mut Writer, stages: u32, vector: u32, sk: Option<&Tiling>) -> (Copies, Copies) {
        let (a, b) = self.smem_setup(w, stages, vector);
        match sk {
            Some(sk) => {
                sk.producer(w, &[self.source(&a, Some("copy_k")), self.source(&b, Some("copy_k"))], self.skips_copies());
                w.line("");
            }
            None if self.spec.edges == Edges::Guarded => {
                w.line(format!("const int tiles = (K + {}) / {};  // the last may be partial", self.bk - 1, self.bk));
                w.line("// the K tiles whose copies need no edge checks");
                w.line(whole_tiles("const int whole_tiles", "block_m", "block_n", (self.bm, self.bn, self.bk), self.clamps_copies()));
            }
            None => w.line(format!("const int tiles = K / {};", self.bk)),
        }
        (a, b)
    }

    /// The pipeline fill: the first `stages - 1` tiles start to travel.
    pub(super) fn cp_async_fill(&self, w: &mut Writer, stages: u32, a: &Copies, b: &Copies, checks: Checks) {
        let fill = stages - 1;
        w.line(format!("// pipeline fill: the first {fill} tile(s) start to travel, one commit group each"));
        w.unrolled("s", fill, |w| {
            let s = if fill == 1 { "0" } else { "s" };
            w.block(format!("if ({})", copy::copy_ahead(self.stream_k, s)), |w| self.issue_next(w, a, b, s, s, checks));
            w.line("cp_async_commit();  // empty past the last tile: keeps one group per tile");
        });
        w.line("int rd = 0;  // the stage being read");
        w.line(format!("int wr = {fill};  // the stage being refilled"));
    }

    /// Both operands' copies of the next tile, K tile `ahead` of this
    /// block's (under stream-K: the producer's), into stage `stage`.
    fn issue_next(&self, w: &mut Writer, a: &Copies, b: &Copies, stage: &str, ahead: &str, checks: Checks) {
        copy::issue_both_tiles(self, w, [a, b], stage, ahead, checks, self.stream_k);
    }

    /// The block tier's loop over `tiles` K tiles of a cp.async pipeline,
    /// as loops over the `segments` (from, to, copy checks) one after another.
    pub(super) fn cp_async_k_loop(&self, w: &mut Writer, stages: u32, a: &Copies, b: &Copies, segments: &[(&str, &str, Checks)]) {
        let fill = stages - 1;
        let wait = format!("cp_async_wait<{}>();", stages - 2);
        let refill = |w: &mut Writer, checks: Checks| {
            if self.stream_k {
                w.line("// refill the stage the previous K step used with the share's K step");
                w.line(format!("// {fill} ahead, of this C tile or the next"));
            } else {
                w.line(format!("// refill the stage tile kt - 1 used with tile kt + {fill}"));
            }
            let ahead = format!("kt + {fill}");
            w.block(format!("if ({})", copy::copy_ahead(self.stream_k, &ahead)), |w| self.issue_next(w, a, b, "wr", &ahead, checks));
            w.line("cp_async_commit();  // empty past the last tile: keeps one group per tile");
            w.line(format!("wr = wr == {fill} ? 0 : wr + 1;"));
        };
        let next_rd = format!("rd = rd == {fill} ? 0 : rd + 1;");
        if self.spec.staging.fragment_sets() == 2 {
            self.mma_pipelined_k_loop(w, &wait, &next_rd, segments, refill);
            return;
        }
        w.line("");
        w.line(format!("// block tier: walk K one {}-wide tile at a time", self.bk));
        for &(from, to, checks) in segments {
            Self::segment_comment(w, segments.len(), checks);
            w.block(format!("for (int kt = {from}; kt < {to}; ++kt)"), |w| {
                w.line(format!("{wait}  // this thread's copies of tile kt have landed"));
                w.line("__syncthreads();  // everyone's have; and everyone is done reading the stage refilled next");
                refill(w, checks);
                self.mma_tile_start(w);
                self.k_tile(w, Source::Smem { stage: "rd" });
                self.mma_tile_end(w);
                w.line(&next_rd);
            });
        }
    }

    /// What a K loop of a split pipeline (`segments` loops) checks.
    fn segment_comment(w: &mut Writer, segments: usize, checks: Checks) {
        if segments > 1 {
            w.line(match checks {
                Checks::Off => "// while the tiles it copies lie inside A and B: no checks",
                _ => "// the rest: every copy checks the edges of A and B",
            });
        }
    }

    /// The mma atom's K loop over a cp.async pipeline with `fragments = 2`.
    /// Fragments load one K step ahead of their mmas, so each step's ldmatrix
    /// loads overlap the previous step's mmas, across tiles too: the barrier
    /// for the next tile moves before the last K step of this one, whose
    /// fragments are already in registers. (Here rather than in `mma.rs`: it
    /// is the pipeline's barrier and refill that move.)
    fn mma_pipelined_k_loop(
        &self,
        w: &mut Writer,
        wait: &str,
        next_rd: &str,
        segments: &[(&str, &str, Checks)],
        refill: impl Fn(&mut Writer, Checks),
    ) {
        let steps = self.bk / self.ak;
        let ks = |k: u32| (k > 0).then(|| (k * self.ak).to_string());
        w.line(format!("{wait}  // the loop's first tile has landed"));
        w.line("__syncthreads();");
        w.line("// fragments, two sets: a K step's mmas use one while the next step's load into the other");
        self.mma_fragment_registers(w, Some(2));
        self.mma_fragments(w, "rd", None, Some(0));
        w.line("");
        w.line(format!("// block tier: walk K one {}-wide tile at a time", self.bk));
        for &(from, to, checks) in segments {
            Self::segment_comment(w, segments.len(), checks);
            w.block(format!("for (int kt = {from}; kt < {to}; ++kt)"), |w| {
                refill(w, checks);
                self.mma_tile_start(w);
                w.line(format!("// atom (mma): {steps} K step(s) of {} per tile, the fragments one step ahead", self.ak));
                for k in 0..steps - 1 {
                    w.block("", |w| {
                        w.line(format!("// K step {k}: step {}'s fragments load while this one's mmas run", k + 1));
                        self.mma_fragments(w, "rd", ks(k + 1), Some((k + 1) % 2));
                        self.mma_products(w, Some(k % 2));
                    });
                }
                let last = steps - 1;
                w.block("", |w| {
                    w.line(format!("// K step {last}, the last: its fragments are in registers, so the next tile's"));
                    w.line("// barrier comes first and that tile's first fragments load while these mmas run");
                    w.line(format!("{wait}  // this thread's copies of tile kt + 1 have landed"));
                    w.line("__syncthreads();  // everyone's have; and everyone is done reading tile kt's stage");
                    w.line(next_rd);
                    w.block("if (kt + 1 < tiles)", |w| self.mma_fragments(w, "rd", None, Some(steps % 2)));
                    self.mma_products(w, Some(last % 2));
                });
                self.mma_tile_end(w);
                if steps % 2 == 1 {
                    w.line("// an odd number of K steps: the next tile's first fragments move to set 0");
                    w.unrolled("im", self.ami, |w| w.unrolled("r", 4, |w| w.line("a_frag[0][im][r] = a_frag[1][im][r];")));
                    w.unrolled("jn", self.ani, |w| w.unrolled("r", 2, |w| w.line("b_frag[0][jn][r] = b_frag[1][jn][r];")));
                }
            });
        }
    }
}

impl TileCopies<Copies> for Tc<'_> {
    /// cp.async copies of the next tile of one operand into stage `stage`.
    fn issue(&self, w: &mut Writer, c: &Copies, stage: &str) {
        let (p, rounds) = (c.p, c.plan.rounds);
        let bytes = c.plan.vector * self.spec.a.elem.bytes();
        w.unrolled("r", rounds, |w| {
            w.line(format!("cp_async_{bytes}({}, {p}_src + {p}_off[r]);", Self::copy_dst(c, stage)));
        });
    }

    /// [`Self::issue`] for a tile at an edge (`at`) of a guarded kernel: each
    /// copy reads only the elements inside the matrix and fills the rest of
    /// its bytes with zeros, which add nothing to the products.
    fn issue_guarded(&self, w: &mut Writer, c: &Copies, stage: &str, at: CopyAt) {
        let s = self.spec;
        let (p, plan) = (c.p, c.plan);
        let op = if p == 'a' { s.a } else { s.b };
        let eb = op.elem.bytes();
        let edge = Edge::new(p.to_ascii_uppercase(), op.layout, plan.vector, at, self.bk);
        w.unrolled("r", plan.rounds, |w| {
            let body = |w: &mut Writer| {
                let (row, col) = self.copy_position(w, plan, op.layout);
                edge.inside(w, "n", row, col);
                let follows = edge.line_follows(row, col);
                w.line(format!("copy_edge_{}({}, {p}_src + {p}_off[r], n, {follows});", plan.vector * eb, Self::copy_dst(c, stage)));
            };
            // the names are this copy's own
            w.block("", body);
        });
    }

    /// [`Self::issue`] for the stream-K producer's tile at an edge of M or N
    /// ([`Self::skips_copies`]), K tiles before the last: a copy whose line
    /// (A row-major, B column-major) or first element (the other layouts)
    /// lies past the edge is skipped. The stale tile left in its place
    /// feeds only rows or columns of the product past C's edges, never
    /// stored; a copy across the edge reads on into the line's pitch, a
    /// multiple of the vector, inside the operand where another line
    /// follows (as [`copy::clamped`] copies do).
    fn issue_skipping(&self, w: &mut Writer, c: &Copies, stage: &str) {
        let (p, plan) = (c.p, c.plan);
        let bytes = plan.vector * self.spec.a.elem.bytes();
        let limit = if p == 'a' { "copy_rows" } else { "copy_cols" };
        w.unrolled("r", plan.rounds, |w| {
            let i = plus(&[Some("threadIdx.x".into()), if plan.rounds > 1 { times("r", self.threads) } else { None }]);
            let at = if c.lines_along_k {
                let along = format!("({i}) % {}", plan.per_line);
                if plan.vector == 1 {
                    along
                } else {
                    format!("{along} * {}", plan.vector)
                }
            } else {
                format!("({i}) / {}", plan.per_line)
            };
            w.line(format!("if ({at} < {limit}) cp_async_{bytes}({}, {p}_src + {p}_off[r]);", Self::copy_dst(c, stage)));
        });
    }

    /// Moves `{p}_src` on by one K tile.
    fn advance(&self, w: &mut Writer, c: &Copies) {
        let ld = if c.p == 'a' { "lda" } else { "ldb" };
        let step = if c.lines_along_k { format!("{} * {ld}", self.bk) } else { self.bk.to_string() };
        w.line(format!("{}_src += {step};", c.p));
    }

    /// Whether a guarded stream-K producer's copies skip the lines past M
    /// and N in place of a check each ([`Self::issue_skipping`]), so that
    /// its tiles at those edges copy all but their last K tile as inner
    /// ones do. Its copies move from tile to tile, so their sources cannot
    /// be clamped once as a block a tile's are ([`Self::clamps_copies`]);
    /// clamped anew at each tile, they made ptxas spill in the loop of
    /// sizes without edges. At 2047 x 2300 x 4100 the tail split ran 181-183
    /// TFLOP/s checking each copy of its edge tiles and 300-308 skipping,
    /// and `decode_mma`'s one-token steps, whose tiles all lie at M's edge,
    /// 3-19% faster (H200).
    fn skips_copies(&self) -> bool {
        self.spec.edges == Edges::Guarded && self.cp_async() && self.stream_k
    }
}

#[cfg(test)]
mod tests {
    use super::super::Tc;
    use crate::cuda::copy::TileCopies;
    use crate::cuda::writer::Writer;
    use crate::spec::*;

    /// `mma_tuned`'s tail-split point, its operands in `a` and `b`.
    fn tail_split(a: Layout, b: Layout) -> KernelSpec {
        let base = super::super::tests::sm80_contiguous();
        let s = KernelSpec {
            name: "skips".into(),
            a: Operand { layout: a, ..base.a },
            b: Operand { layout: b, ..base.b },
            staging: Staging::CpAsync { stages: 2, vector: 8, transpose_a: false, fragments: 2 },
            persistent: Some(Persistent::TailSplit),
            groups: None,
            ..base
        };
        assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
        s
    }

    /// The stream-K producer's copies of a tile at an edge of M or N, in
    /// each layout of A and B (compiled as host C++ and run for every
    /// thread of the block): a copy is issued exactly where its line, or
    /// its first element along the line, lies inside the tile's rows inside
    /// M (A) or columns inside N (B), and reads where it would unchecked.
    #[test]
    fn copies_past_m_and_n_are_skipped_and_every_copy_inside_is_issued() {
        for (a, b) in [(Layout::RowMajor, Layout::RowMajor), (Layout::ColMajor, Layout::ColMajor)] {
            let s = tail_split(a, b);
            let tc = Tc::new(&s);
            assert!(tc.skips_copies(), "a guarded cp.async tail split skips");
            for which in ['A', 'B'] {
                let c = tc.copies(which, 8);
                let (p, plan) = (c.p, c.plan);
                let full = if which == 'A' { 128 } else { 256 };
                for inside in [1, 5, 8, 9, 100, full - 1, full] {
                    let mut w = Writer::default();
                    tc.issue_skipping(&mut w, &c, "0");
                    let program = format!(
                        "#include <cstdio>\nstruct Dim3 {{ unsigned x, y, z; }};\nstatic Dim3 threadIdx;\n\
                         struct Src {{ long at; }};\nstatic Src operator+(Src s, unsigned o) {{ return Src{{s.at + (long)o}}; }}\n\
                         static void cp_async_16(unsigned dst, Src src) {{ std::printf(\"%u %ld\\n\", dst, src.at); }}\n\
                         int main() {{\n  for (unsigned t = 0; t < {threads}; ++t) {{\n    threadIdx = Dim3{{t, 0, 0}};\n    \
                         const Src {p}_src{{0}};\n    unsigned {p}_off[{rounds}], {p}_dst[{rounds}];\n    \
                         for (int r = 0; r < {rounds}; ++r) {{ const unsigned i = t + r * {threads}; {p}_dst[r] = i; \
                         {p}_off[r] = i / {per_line} * 1000 + i % {per_line} * {vector}; }}\n    \
                         const int copy_rows = {inside}, copy_cols = {inside};\n    (void)copy_rows; (void)copy_cols;\n{}  }}\n}}\n",
                        w.finish(),
                        threads = plan.threads,
                        rounds = plan.rounds,
                        per_line = plan.per_line,
                        vector = plan.vector,
                    );
                    let out = crate::cuda::host::run_cpp("skips", &program);
                    let issued: Vec<(u32, i64)> = out
                        .lines()
                        .map(|l| {
                            let mut f = l.split(' ');
                            (f.next().unwrap().parse().unwrap(), f.next().unwrap().parse().unwrap())
                        })
                        .collect();
                    let expected: Vec<(u32, i64)> = (0..plan.threads * plan.rounds)
                        .filter_map(|i| {
                            let (line, e) = plan.position(i);
                            let along_mn = if c.lines_along_k { e } else { line };
                            (along_mn < inside).then_some((i, line as i64 * 1000 + e as i64))
                        })
                        .collect();
                    let mut sorted = issued.clone();
                    sorted.sort();
                    assert_eq!(sorted, expected, "{which} {a:?}/{b:?}, {inside} inside");
                }
            }
        }
    }
}
