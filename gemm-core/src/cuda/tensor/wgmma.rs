//! The wgmma atom (sm_90a): `wgmma.mma_async` m64nNk16, issued by a
//! warpgroup of 4 warps, A and B read by the tensor cores straight from the
//! TMA's swizzled tiles in shared memory through matrix descriptors.
//!
//! A descriptor holds the tile's shared address, the swizzle mode, and two
//! strides: SBO, between groups of 8 lines (8 swizzle rows), and LBO,
//! between the swizzle-wide chunks of an M- or N-major operand. A K-major
//! operand's K step (16 of 16-bit elements, 32 of 8-bit ones: `m64nNk32`)
//! moves the address 32 bytes along its swizzle row
//! (the hardware applies the swizzle to the address it forms); an M- or
//! N-major one's moves it 16 lines down.
//!
//! The accumulators: warp `w` of the warpgroup holds rows `16 w` to
//! `16 w + 15` of each 64-row wgmma, as 8-column atoms in mma's m16n8
//! C-fragment map, so the epilogue is mma's (`pairs`).

use super::pairs::PairMap;
use super::{index, plus, times, Tc};
use crate::cuda::layout::scaled;
use crate::cuda::ptx;
use crate::cuda::writer::Writer;
use crate::spec::{TmaTile, Which, B_SCALE_WINDOW};

impl Tc<'_> {
    pub(super) fn wgmma_helpers(&self, w: &mut Writer) {
        let s = self.spec;
        let (a, b) = (s.tma_tile(Which::A), s.tma_tile(Which::B));
        ptx::wgmma(w, (s.a.elem, s.b.elem), self.an, !a.k_major, !b.k_major, s.by_class());
        let mode = match a.swizzle {
            128 => 1,
            64 => 2,
            _ => 3,
        };
        w.line(format!("// a wgmma matrix descriptor: a tile at shared address `addr` in the {}-byte swizzle,", a.swizzle));
        w.line("// `sbo` bytes between groups of 8 lines, `lbo` between swizzle-wide chunks (M/N-major)");
        w.block("__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo)", |w| {
            w.line("return (unsigned long long)((addr & 0x3FFFF) >> 4)");
            w.line("    | (unsigned long long)((lbo & 0x3FFFF) >> 4) << 16");
            w.line("    | (unsigned long long)((sbo & 0x3FFFF) >> 4) << 32");
            w.line(format!("    | {mode}ull << 62;"));
        });
        w.line("");
    }

    /// Warpgroup tier: where this warpgroup's sub-tile starts in the block
    /// tile, and the 16 rows of each 64 that this warp holds. `first` is the
    /// warpgroup index of the first consumer.
    pub(super) fn warpgroup_tier(&self, w: &mut Writer, first: u32) {
        let (groups_m, groups_n) = (self.bm / self.wm, self.warps_n);
        w.line(format!(
            "// warpgroup tier: {groups_m}x{groups_n} warpgroups, each a {}x{} sub-tile of {}x{} wgmma atoms of {}x{}",
            self.wm, self.wn, self.ami, self.ani, self.am, self.an
        ));
        w.declare("warp", "const int warp = threadIdx.x / 32;");
        w.declare("lane", "const int lane = threadIdx.x % 32;");
        // read from lane 0: ptxas then knows it is the same across the warp, and keeps it and the
        // wgmma descriptors built from it in uniform registers (as vector registers, each
        // descriptor took 64-bit adds and moves between wgmmas: fp8's 128 x 128 tiles ran 7-10%
        // slower on the H200)
        let group = match first {
            0 => "__shfl_sync(0xffffffff, threadIdx.x / 128, 0)".to_string(),
            f => format!("__shfl_sync(0xffffffff, threadIdx.x / 128, 0) - {f}"),
        };
        w.declare("group", format!("const int group = {group};"));
        let group_m = match (groups_m, groups_n) {
            (1, _) => "0".to_string(),
            (_, 1) => format!("group * {}", self.wm),
            _ => scaled(&format!("group / {groups_n}"), self.wm),
        };
        let group_n = match (groups_m, groups_n) {
            (_, 1) => "0".to_string(),
            (1, _) => format!("group * {}", self.wn),
            _ => scaled(&format!("group % {groups_n}"), self.wn),
        };
        w.line(format!("const int group_m = {group_m};"));
        w.line(format!("const int group_n = {group_n};"));
        w.line("// warp w of a warpgroup holds rows 16 w to 16 w + 15 of each 64-row wgmma");
        w.line("const int warp_m = group_m + (warp % 4) * 16;");
        w.line("const int warp_n = group_n;");
        w.line("");
    }

    pub(super) fn wgmma_accumulators(&self, w: &mut Writer) {
        self.acc_declaration(w);
        self.sum_declarations(w);
    }

    /// The accumulators of [`Self::wgmma_accumulators`], zeroed where they start a tile at zero.
    pub(super) fn acc_declaration(&self, w: &mut Writer) {
        let q = self.an / 8;
        w.line(format!("// accumulators: {}x{} wgmma atoms of 64x{}, each {q} 16x8 atoms of 4 floats per lane", self.ami, self.ani, self.an));
        if self.zeroed() {
            w.line(format!("float acc[{}][{}][{q}][4];", self.ami, self.ani));
            w.line("// zeroed before the tile: every wgmma adds to them (seed 002's kernels 1 to 8)");
            w.unrolled_nest(&[("im", self.ami), ("jn", self.ani), ("q", q), ("e", 4)], "acc[im][jn][q][e] = 0.0f;");
        } else {
            // no zeroing: a tile's first wgmma writes them without accumulating
            w.line(format!("float acc[{}][{}][{q}][4];  // set by the tile's first wgmmas", self.ami, self.ani));
        }
    }

    /// A promoted consumer's sums of [`Self::wgmma_accumulators`], and under
    /// `scale = block` their scales.
    pub(super) fn sum_declarations(&self, w: &mut Writer) {
        let q = self.an / 8;
        let sets = self.sum_sets();
        let by_row = self.spec.sums_by_atom_row();
        match sets.len() {
            0 => {}
            1 if by_row => w.line("// one atom row's sums at a time, promoted into its accumulators in f32 once its wgmmas are done"),
            1 => w.line("// each stage's sums, promoted into the accumulators in f32 once its wgmmas are done"),
            _ => w.line("// two stages' sums, each promoted into the accumulators in f32 while the other's wgmmas run"),
        }
        let rows = if by_row { 1 } else { self.ami };
        for set in sets {
            w.line(format!("float {set}[{rows}][{}][{q}][4];", self.ani));
        }
        if self.block_scaled() {
            w.line(
                "// each set's scales: this thread's rows of A (lane / 4, + 8, of each 64-row atom) times B's of the warpgroup's 128-column block",
            );
            for set in sets {
                w.line(format!("float {}[{}][2];", Self::scales_of(set), self.ami));
            }
        }
        w.line("");
    }

    /// The promoted sums' sets: one, or two in a producer's ring (`paired_sums`).
    fn sum_sets(&self) -> &'static [&'static str] {
        match (self.promoted(), self.spec.paired_sums()) {
            (false, _) => &[],
            (true, false) => &["part"],
            (true, true) => &["part0", "part1"],
        }
    }

    /// The scales of sum set `set` under `scale = block`.
    pub(super) fn scales_of(set: &str) -> String {
        set.replace("part", "sc")
    }

    /// Whether each K block's sums are scaled as they are promoted (`scale = block`).
    pub(super) fn block_scaled(&self) -> bool {
        self.spec.fused.scale == Some(crate::spec::Scale::Block)
    }

    /// `scale = block`: stage `stage`'s scales of this thread's
    /// accumulators into `sc`, from the stage's slots in shared memory: the
    /// rows of A (lane / 4 and + 8 of each 64-row atom) times B's for the
    /// warpgroup's 128-column block (a consumer by atom rows reads `sb`
    /// from its window: [`Self::window_b_scale`]). No warp may read the slots once the
    /// stage goes back to the producer: outside a producer's ring, and in
    /// it by atom rows, they are read before the stage's wgmmas, which
    /// every warp of the warpgroup issues; in the paired loop each warp
    /// releases the stage itself. (Each thread
    /// loading its scales from global memory ran about as fast, 1120 TFLOP/s
    /// at 4096^3 on the H200 where per-tensor scales ran 1300, against the
    /// staged form's 1107-1179: staged, no consumer waits on a global load.)
    pub(super) fn read_block_scales(&self, w: &mut Writer, sc: &str, stage: &str) {
        w.block("", |w| {
            // (a box longer than the tile starts at the row below block_m on a multiple of 4)
            let shift = if self.spec.block_scale_rows() > self.bm { " + (block_m & 3)" } else { "" };
            let slot = self.spec.block_scale_slot() / 4;
            w.line(format!("const float* const sfa = reinterpret_cast<const float*>(smem_raw + (sfa_smem - smem_base)) + {stage} * {slot}{shift};"));
            // (a consumer by atom rows has read B's from its window: `Self::window_b_scale`)
            if self.b_scales_copied() {
                w.line(format!(
                    "const float sb = reinterpret_cast<const float*>(smem_raw + (sfb_smem - smem_base))[{stage} * 4 + (block_n + group_n) / 128 - block_n / 128];"
                ));
            }
            w.unrolled("im", self.ami, |w| {
                w.unrolled("h", 2, |w| {
                    let row = plus(&[Some("warp_m".into()), times(index("im", self.ami), 64), Some("lane / 4".into()), Some("h * 8".into())]);
                    w.line(format!("{sc}[im][h] = sfa[{row}] * sb;"));
                });
            });
        });
    }

    /// `scale = block` by atom rows, at the top of a stage of the K loop
    /// (K blocks `first` to `count`, `kt` the stage's): where `kt` starts a
    /// window of [`B_SCALE_WINDOW`] K blocks, the
    /// warpgroup's scales of B for them loaded from global memory into its
    /// window in shared memory, a K block a thread, between two barriers of
    /// the warpgroup's; then the stage's `sb` read from there. The producer
    /// does not copy them into the stages (`b_scales_copied`): their
    /// landing cost 15% at 128 x 4096 x 7168 on 64 x 64 tiles. Loaded from
    /// global memory a stage at a time, each stage's promotion waited on its
    /// load, longer than the stage's wgmmas took from the L2: the windows
    /// ran 1.6-5.3% faster at 128 rows and at 64 x 2112 x 7168; filled once
    /// the first row's wgmmas were issued, 3.5-5.9% slower than here (H200,
    /// 2026-12-02, the guide's fp8 notes). A window is tested for at
    /// each stage rather than looped over: a loop's bound, held through the
    /// stages, made ptxas spill at 256 x 128.
    pub(super) fn window_b_scale(&self, w: &mut Writer, first: &str, count: &str) {
        let window = B_SCALE_WINDOW;
        let at = if first == "0" { "kt".to_string() } else { format!("(kt - {first})") };
        w.block(format!("if ({at} % {window} == 0)"), |w| {
            w.line(format!("// a window's first K block: B's scales of this warpgroup's next {window} into its window"));
            w.line("window_sync();  // the warpgroup is done with its last window (the last tile's)");
            w.line("#pragma unroll 1  // (in each of the stages the K loop unrolls)");
            w.block(format!("for (int k = kt + threadIdx.x % 128; k < min(kt + {window}, {count}); k += 128)"), |w| {
                w.line(format!("sfb[k - kt] = __ldg({});", self.warpgroup_b_scale(&self.k_step_of("k"))));
            });
            w.line("window_sync();  // and this one is in");
        });
        w.line(format!("const float sb = sfb[{at} % {window}];"));
    }

    /// The consumer's window of B's scales ([`Self::window_b_scale`]).
    pub(super) fn b_scale_window(&self, w: &mut Writer) {
        let producers = self.spec.specialize.map_or(0, |sp| sp.producers);
        w.line(format!("// B's scales of this warpgroup's K blocks, {B_SCALE_WINDOW} at a time, in its window of shared memory"));
        w.line(format!(
            "float* const sfb = reinterpret_cast<float*>(smem_raw + (sfb_window - smem_base)) + (threadIdx.x / 128 - {producers}) * {B_SCALE_WINDOW};"
        ));
    }

    /// Where the warpgroup's B scale of K block `kt` lies: its 128-column
    /// block's (a warpgroup whose columns all lie past N, its results never
    /// stored, reads N's last block's).
    fn warpgroup_b_scale(&self, kt: &str) -> String {
        let block = "(block_n + group_n) / 128";
        let block = if self.spec.edges == crate::spec::Edges::Guarded { format!("min({block}, (N - 1) / 128)") } else { block.to_string() };
        Self::b_scale_at("(batch_b != 0 ? batch : 0)", &block, kt)
    }

    /// The stage's sums added into the accumulators (each times its scales
    /// under `scale = block`), which start the tile at zero.
    pub(super) fn promote(&self, w: &mut Writer, set: &str) {
        self.promote_rows(w, set, None);
    }

    /// [`Self::promote`] of every atom row, or of atom row `row` alone from
    /// a set of one row's sums ([`KernelSpec::sums_by_atom_row`]).
    fn promote_rows(&self, w: &mut Writer, set: &str, row: Option<u32>) {
        let q = self.an / 8;
        let from = if row.is_some() { format!("{set}[0]") } else { format!("{set}[im]") };
        let sc = Self::scales_of(set);
        let value = if self.block_scaled() { format!("{sc}[im][e / 2] * {from}[jn][q][e]") } else { format!("{from}[jn][q][e]") };
        let fold = format!("acc[im][jn][q][e] += {value};");
        match row {
            // (one row: `im` a constant of the generated code)
            Some(r) => {
                let fold = fold.replace("[im]", &format!("[{r}]"));
                w.unrolled_nest(&[("jn", self.ani), ("q", q), ("e", 4)], &fold);
            }
            None => w.unrolled_nest(&[("im", self.ami), ("jn", self.ani), ("q", q), ("e", 4)], &fold),
        }
    }

    /// A stage of a consumer whose sums come by atom rows
    /// ([`KernelSpec::sums_by_atom_row`]), its copies landed: its scales,
    /// then for each atom row its wgmmas into the one set, a wait for them
    /// and their promotion; the stage goes back to the producer
    /// (`release(w)`) once the last row's wgmmas are done.
    pub(super) fn promoted_by_rows(&self, w: &mut Writer, stage: &str, release: &dyn Fn(&mut Writer)) {
        if self.block_scaled() {
            // (read before the stage's wgmmas, which every warp of the warpgroup issues)
            self.read_block_scales(w, "sc", stage);
        }
        let steps = self.bk / self.ak;
        // (each atom's descriptor an offset from its stage's: fewer instructions between the wgmmas
        // than each computed whole; measured with the loop's unrolling, `promoted_k_loop`)
        w.line(format!(
            "const unsigned long long da = {};  // the stage's tiles: each atom's descriptor an offset from these",
            self.stage_descriptor(Which::A, stage)
        ));
        w.line(format!("const unsigned long long db = {};", self.stage_descriptor(Which::B, stage)));
        for r in 0..self.ami {
            w.line(format!("// atom (wgmma): row {r}, {steps} K step(s) of {} over its 1x{} atoms into `part`, one group", self.ak, self.ani));
            w.line("wgmma_fence();");
            self.wgmma_steps_of(w, stage, "part", if steps > 1 { "ks > 0" } else { "0" }, Some(r), Some(("da", "db")));
            w.line("wgmma_commit();");
            let others = if self.spec.specialize.is_some_and(|sp| sp.consumers > 1) { " (the other consumers' wgmmas run meanwhile)" } else { "" };
            w.line(format!("wgmma_wait<0>();  // row {r}'s sums are whole{others}"));
            if r + 1 == self.ami {
                release(w);
            }
            self.promote_rows(w, "part", Some(r));
        }
    }

    /// A promoted stage outside a producer's ring (every warpgroup alike,
    /// stream-K): its wgmmas into the sums (afresh), committed as a group,
    /// a wait for them, and their promotion.
    fn wgmma_promoted(&self, w: &mut Writer, stage: &str) {
        if self.block_scaled() {
            self.read_block_scales(w, "sc", stage);
        }
        self.wgmma_group(w, stage, "part");
        w.line("wgmma_wait<0>();  // the stage's sums are whole: promote them (and the stage may be released)");
        self.promote(w, "part");
    }

    /// One stage's wgmmas into sum set `set` (afresh), committed as a group.
    pub(super) fn wgmma_group(&self, w: &mut Writer, stage: &str, set: &str) {
        let steps = self.bk / self.ak;
        w.line(format!("// atom (wgmma): {steps} K step(s) of {} over {}x{} atoms into `{set}`, one group", self.ak, self.ami, self.ani));
        w.line("wgmma_fence();");
        self.wgmma_steps(w, stage, set, if steps > 1 { "ks > 0" } else { "0" });
        w.line("wgmma_commit();");
    }

    /// `n` stages of a promoted consumer in a producer's ring, K steps `kt`
    /// on, their sums in the two sets by turns: the first two stages' waits
    /// (`wait(w, i)`, which names the stage `s{i}`) and wgmmas; then each
    /// stage's sums promoted as they are whole, the next stage's wgmmas
    /// running meanwhile, and the set it frees taking stage i + 2's wgmmas.
    /// Only the last stage's promotion has no wgmmas of this warpgroup
    /// behind it. Under `scale = block` each stage's scales are read past
    /// its wgmmas (each warp releases the stages: `warp_releases`). Each
    /// stage goes back to the producer (`release(w, i)`) before its sums
    /// are promoted. (A select of the tile's first stage in the promotion,
    /// not zeroed accumulators, doubled its instructions: 974 TFLOP/s at
    /// 4096^3 on the H200, 1160 zeroed, a stage at a time.)
    pub(super) fn promoted_run(&self, w: &mut Writer, n: u32, wait: &dyn Fn(&mut Writer, u32), release: &dyn Fn(&mut Writer, u32)) {
        let sets = self.sum_sets();
        let set = |i: u32| sets[i as usize % sets.len()];
        let issue = |w: &mut Writer, i: u32| {
            wait(w, i);
            self.wgmma_group(w, &format!("s{i}"), set(i));
        };
        let scales = |w: &mut Writer, i: u32| {
            if self.block_scaled() {
                self.read_block_scales(w, &Self::scales_of(set(i)), &format!("s{i}"));
            }
        };
        // (the stages issued before the first promotion: one a set)
        let lead = n.min(sets.len() as u32);
        (0..lead).for_each(|i| issue(w, i));
        (0..lead).for_each(|i| scales(w, i));
        for i in 0..n {
            if i + 1 < n {
                w.line("wgmma_wait<1>();  // this stage's sums are whole, the next one's wgmmas running");
            } else {
                w.line("wgmma_wait<0>();  // the last stage's sums are whole");
            }
            release(w, i);
            self.promote(w, set(i));
            if i + lead < n {
                issue(w, i + lead);
                scales(w, i + lead);
            }
        }
    }

    /// The descriptor of operand `which`'s atom at `mn` (rows of A or
    /// columns of B from the block tile's origin) and K step `ks` of the
    /// tile in stage `stage`.
    fn descriptor(&self, which: Which, stage: &str, mn: &str, ks: &str) -> String {
        let (stage_at, at, lbo, sbo) = self.descriptor_parts(which, stage, mn, ks);
        format!("wgmma_desc({}, {lbo}, {sbo})", plus(&[Some(stage_at), Some(at)]))
    }

    /// The descriptor of the start of operand `which`'s tile in stage
    /// `stage`, from which [`Self::descriptor_from`] offsets each atom's.
    fn stage_descriptor(&self, which: Which, stage: &str) -> String {
        let (stage_at, _, lbo, sbo) = self.descriptor_parts(which, stage, "0", "0");
        format!("wgmma_desc({stage_at}, {lbo}, {sbo})")
    }

    /// [`Self::descriptor`] as an offset from `stage_desc`, the stage's
    /// [`Self::stage_descriptor`]: the atom's bytes past the tile's start
    /// over 16, added to the address field (a shared-memory address over 16
    /// fits its 14 bits with no carry into the next field).
    fn descriptor_from(&self, which: Which, stage_desc: &str, mn: &str, ks: &str) -> String {
        let (_, at, _, _) = self.descriptor_parts(which, "0", mn, ks);
        if at == "0" {
            stage_desc.to_string()
        } else {
            format!("{stage_desc} + (({at}) >> 4)")
        }
    }

    /// A descriptor's address as the stage's tile's start and the atom's
    /// bytes past it (expressions), and its leading- and stride-dimension
    /// byte offsets.
    fn descriptor_parts(&self, which: Which, stage: &str, mn: &str, ks: &str) -> (String, String, u32, u32) {
        let t: TmaTile = self.spec.tma_tile(which);
        let base = if which == Which::A { "a_smem" } else { "b_smem" };
        let stage_bytes = t.bytes();
        let row = t.swizzle;
        let sbo = 8 * row;
        let (at, lbo) = if t.k_major && t.k_boxes > 1 {
            // line `mn` of K box `ks / per`, 32 bytes (16 elements) a K step along the box's row
            let per = row / 32;
            let k_box = t.box_bytes() * t.boxes;
            let (along, which_box) = (format!("{} % {per}", term(ks)), format!("{} / {per}", term(ks)));
            (plus(&[times(&term(mn), row), times(&format!("({along})"), 32), times(&format!("({which_box})"), k_box)]), 16)
        } else if t.k_major {
            // line `mn` of the tile, 32 bytes (16 elements) a K step along it
            (plus(&[times(&term(mn), row), times(ks, 32)]), 16)
        } else {
            // chunk `mn / inner` of the tile, 16 lines a K step down it
            let chunk = format!("{} / {}", term(mn), t.inner);
            (plus(&[times(&format!("({chunk})"), t.box_bytes()), times(ks, 16 * row)]), t.box_bytes())
        };
        (plus(&[Some(base.to_string()), times(stage, stage_bytes)]), at, lbo, sbo)
    }

    /// One stage's math: every K step of 16 over every atom of the
    /// warpgroup's tile, issued back to back and committed as one group;
    /// then a wait until at most `in_flight` groups are still running (0:
    /// this stage's are done; 1: the previous stage's are, while this
    /// one's keep the tensor cores busy).
    pub(super) fn wgmma_tile(&self, w: &mut Writer, stage: &str, in_flight: u32) {
        if self.promoted() {
            return self.wgmma_promoted(w, stage);
        }
        let steps = self.bk / self.ak;
        w.line(format!("// atom (wgmma): {steps} K step(s) of {} over {}x{} atoms, one group", self.ak, self.ami, self.ani));
        w.line("wgmma_fence();");
        // seed 002's kernel 9: D = A * B at the tile's first K step, D += A * B after
        // (zeroed accumulators: D += A * B always)
        let accumulate = match (self.zeroed(), steps > 1) {
            (true, _) => "1",
            (false, true) => "kt > 0 || ks > 0",
            (false, false) => "kt > 0",
        };
        self.wgmma_steps(w, stage, "acc", accumulate);
        w.line("wgmma_commit();");
        match in_flight {
            0 => w.line("wgmma_wait<0>();  // the stage may be released once its wgmmas are done"),
            n => w.line(format!("wgmma_wait<{n}>();  // the groups before the last {n} are done with their stages")),
        }
    }

    /// Every K step of the stage over every atom into `target`, back to back.
    fn wgmma_steps(&self, w: &mut Writer, stage: &str, target: &str, accumulate: &str) {
        self.wgmma_steps_of(w, stage, target, accumulate, None, None);
    }

    /// [`Self::wgmma_steps`] over every atom row, or over atom row `row`
    /// alone into `target`'s one row of sums, with each atom's descriptors
    /// whole or, given `from` (the stage's A and B descriptors, declared),
    /// as offsets from the stage's.
    fn wgmma_steps_of(&self, w: &mut Writer, stage: &str, target: &str, accumulate: &str, row: Option<u32>, from: Option<(&str, &str)>) {
        let steps = self.bk / self.ak;
        // (`rows`: the atom row's offset from the warpgroup's first, an expression)
        let row_of = |w: &mut Writer, rows: Option<String>, to: &str| {
            w.unrolled("jn", self.ani, |w| {
                let m = plus(&[Some("group_m".into()), rows.clone()]);
                let n = plus(&[Some("group_n".into()), times(index("jn", self.ani), self.an)]);
                let ks = index("ks", steps);
                let (da, db) = match from {
                    Some((a, b)) => (self.descriptor_from(Which::A, a, &m, ks), self.descriptor_from(Which::B, b, &n, ks)),
                    None => (self.descriptor(Which::A, stage, &m, ks), self.descriptor(Which::B, stage, &n, ks)),
                };
                w.line(format!("wgmma_m64n{}k{}({target}[{to}][jn], {da}, {db}, {accumulate});", self.an, self.ak));
            });
        };
        w.unrolled("ks", steps, |w| match row {
            Some(r) => row_of(w, (r > 0).then(|| (r * 64).to_string()), "0"),
            None => w.unrolled("im", self.ami, |w| row_of(w, times(index("im", self.ami), 64), "im")),
        });
    }

    /// `specialize(.., overlap)`: one stage's K steps for half `jn` (the
    /// consumer's atom column `jn`) alone, committed as a group of its own;
    /// `accumulate` is the wgmmas' accumulate flag.
    pub(super) fn wgmma_half(&self, w: &mut Writer, stage: &str, jn: u32, accumulate: &str) {
        let steps = self.bk / self.ak;
        w.line(format!("// atom (wgmma): half {jn}, {steps} K step(s) of {} over its 64x{} atom, one group", self.ak, self.an));
        w.unrolled("ks", steps, |w| {
            let n = plus(&[Some("group_n".into()), times(&jn.to_string(), self.an)]);
            let ks = index("ks", steps);
            let da = self.descriptor(Which::A, stage, "group_m", ks);
            let db = self.descriptor(Which::B, stage, &n, ks);
            w.line(format!("wgmma_m64n{}k{}(acc[0][{jn}], {da}, {db}, {accumulate});", self.an, self.ak));
        });
        w.line("wgmma_commit();");
    }

    /// Whether each stage's sums are promoted into the accumulators
    /// (`wgmma(.., promote)`, `scale = block`).
    fn promoted(&self) -> bool {
        self.spec.promoted()
    }

    /// Whether the accumulators are zeroed before each tile (`wgmma(.., zeroed)`).
    fn zeroed(&self) -> bool {
        // under a cluster split along K a rank may hold no K step of the tile at all; promoted,
        // a stage's sums are added to them alone (`promoted_run`)
        matches!(self.spec.atom, crate::spec::Atom::Wgmma { zeroed: true, .. }) || self.spec.k_split() > 1 || self.promoted()
    }

    /// wgmma's accumulators in the m16n8 C-fragment map: atom `(im, jn)`
    /// at rows `64 im`, columns `an jn` of the warpgroup's tile, its 16x8
    /// atoms `q` 8 columns apart.
    pub(super) fn wgmma_pairs(&self) -> PairMap {
        PairMap { m: vec![("im", self.ami, 64)], n: vec![("jn", self.ani, self.an), ("q", self.an / 8, 8)], acc: "acc[im][jn][q]".into() }
    }
}

/// Parenthesizes a compound expression.
fn term(e: &str) -> String {
    crate::cuda::layout::term(e)
}
