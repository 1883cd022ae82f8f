//! The mma atom: `mma.sync.m16n8k16` (f16/bf16) or `m16n8k32` (8-bit
//! floats), operand fragments loaded from shared memory by `ldmatrix`,
//! accumulators in registers in the mma fragment layout.
//!
//! An operand whose shared lines run along K (A row-major, B column-major)
//! is read by plain `ldmatrix`; one whose lines run along M or N by
//! `ldmatrix.trans`, which hands each lane the transposed matrix. Either way
//! lane `i` addresses row `i % 8` of 8x8 matrix `i / 8`, in the order the
//! fragment registers take them: A's (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7,
//! k 8-15), (m 8-15, k 8-15); B's (k 0-7, n 0-7), (k 8-15, n 0-7), and for a
//! second atom along n the same 8 columns on. An 8x8 matrix is 8 lines of 16
//! bytes: for 8-bit operands (K-major, as the rules require) its k runs 0-15
//! and 16-31, the bytes m16n8k32's fragments hold.

use super::pairs::PairMap;
use super::{index, plus, times, Source, Tc};
use crate::cuda::ptx;
use crate::cuda::writer::Writer;
use crate::spec::Layout;

impl Tc<'_> {
    /// Whether an operand's shared lines run along M or N, so ldmatrix transposes.
    fn trans(&self, which: char) -> bool {
        if which == 'A' {
            self.spec.a.layout == Layout::ColMajor
        } else {
            self.spec.b.layout == Layout::RowMajor
        }
    }

    pub(super) fn mma_helpers(&self, w: &mut Writer) {
        let mut variants = vec![(4, self.trans('A'))];
        if self.ani >= 2 {
            variants.push((4, self.trans('B')));
        }
        if self.ani % 2 == 1 {
            variants.push((2, self.trans('B')));
        }
        variants.sort_unstable();
        variants.dedup();
        ptx::ldmatrix(w, &variants);
        ptx::mma_sync(w, self.spec.a.elem, self.spec.b.elem);
    }

    pub(super) fn mma_accumulators(&self, w: &mut Writer) {
        w.line(format!("// accumulators: {}x{} atoms of 16x8, 4 floats per lane each", self.ami, self.ani));
        w.line(format!("float acc[{}][{}][4] = {{}};", self.ami, self.ani));
        w.line("");
    }

    /// Whether each K tile's sums are scaled apart, then added into the
    /// accumulators (`scale = block`: a K tile is one K block of scales).
    fn mma_block_scaled(&self) -> bool {
        self.spec.fused.scale == Some(crate::spec::Scale::Block)
    }

    /// Where a K tile's mmas sum: the accumulators, or under `scale = block`
    /// the tile's own sums.
    fn mma_sums(&self) -> &'static str {
        if self.mma_block_scaled() {
            "part"
        } else {
            "acc"
        }
    }

    /// `scale = block`, before K tile `kt`'s mmas: its sums start at zero,
    /// and the scales they take are read, to be used once the mmas are done
    /// (the loads in flight beside them): A's of this lane's rows (lane / 4
    /// and + 8 of each 16-row atom; past M, the last row's) times B's of the
    /// warp's 128-column block (past N, the last block's). C's rows and
    /// columns past the edges are never stored.
    pub(super) fn mma_tile_start(&self, w: &mut Writer) {
        if !self.mma_block_scaled() {
            return;
        }
        let guarded = self.spec.edges == crate::spec::Edges::Guarded;
        w.line("// scale = block: this K block's sums start at zero, and their scales load beside its mmas");
        w.line(format!("float part[{}][{}][4] = {{}};", self.ami, self.ani));
        w.line(format!("float sc[{}][2];", self.ami));
        w.block("", |w| {
            let nb = if guarded { "min((block_n + warp_n) / 128, (N - 1) / 128)" } else { "(block_n + warp_n) / 128" };
            w.line(format!("const float sb = __ldg(scale_b + {nb} * ((K + 127) / 128) + kt);"));
            w.unrolled("im", self.ami, |w| {
                w.unrolled("h", 2, |w| {
                    let row =
                        plus(&[Some("block_m + warp_m".into()), times(index("im", self.ami), 16), Some("lane / 4".into()), Some("h * 8".into())]);
                    let row = if guarded { format!("min({row}, M - 1)") } else { row };
                    w.line(format!("sc[im][h] = __ldg(scale_a + kt * sfa_ld + {row}) * sb;"));
                });
            });
        });
    }

    /// `scale = block`, after K tile `kt`'s mmas: its sums, scaled, into the accumulators.
    pub(super) fn mma_tile_end(&self, w: &mut Writer) {
        if !self.mma_block_scaled() {
            return;
        }
        w.line("// scale = block: the K block's sums, scaled, into the accumulators");
        w.unrolled_nest(&[("im", self.ami), ("jn", self.ani), ("r", 4)], "acc[im][jn][r] += sc[im][r / 2] * part[im][jn][r];");
    }

    /// The shared-memory line and element each lane's ldmatrix address
    /// starts from. (A K-major operand's second matrix along K starts 16
    /// bytes on: 8 elements of 16 bits, 16 of 8.)
    pub(super) fn ldmatrix_lanes(&self, w: &mut Writer) {
        w.line("// ldmatrix: the line and element of the shared tile this lane addresses");
        let (a16, b16) = (16 / self.spec.a.elem.bytes(), 16 / self.spec.b.elem.bytes());
        let (a_line, a_elem) = if self.trans('A') {
            ("(lane / 16) * 8 + lane % 8".to_string(), "warp_m + (lane / 8 % 2) * 8".to_string())
        } else {
            ("warp_m + lane % 16".to_string(), format!("(lane / 16) * {a16}"))
        };
        let (b_line, b_elem) = if self.trans('B') {
            ("(lane / 8 % 2) * 8 + lane % 8".to_string(), "warp_n + (lane / 16) * 8".to_string())
        } else {
            ("warp_n + (lane / 16) * 8 + lane % 8".to_string(), format!("(lane / 8 % 2) * {b16}"))
        };
        w.line(format!("const int a_line = {a_line}, a_elem = {a_elem};"));
        w.line(format!("const int b_line = {b_line}, b_elem = {b_elem};"));
        w.line("");
    }

    /// The shared address of an ldmatrix: operand `which`'s fragment at
    /// `mn` (along M or N, from the warp's origin) and `k` within the tile.
    fn ldmatrix_addr(&self, which: char, stage: &str, mn: Option<String>, k: Option<String>) -> String {
        let p = which.to_ascii_lowercase();
        let (along_line, along_elem) = if self.trans(which) { (k, mn) } else { (mn, k) };
        let line = plus(&[Some(format!("{p}_line")), along_line]);
        let elem = plus(&[Some(format!("{p}_elem")), along_elem]);
        let (stage_elems, bytes) = if which == 'A' {
            (self.spec.smem_a().elems(), self.spec.a.elem.bytes())
        } else {
            (self.spec.smem_b().elems(), self.spec.b.elem.bytes())
        };
        let at = plus(&[times(stage, stage_elems), Some(format!("{p}_at({line}, {elem})"))]);
        match bytes {
            1 => format!("{p}s_addr + {at}"),
            b => format!("{p}s_addr + {b} * ({at})"),
        }
    }

    /// One K step of the atom's K: A and B fragments by ldmatrix, then every atom's mma.
    pub(super) fn mma_k_step(&self, w: &mut Writer, src: Source) {
        let Source::Smem { stage } = src else { unreachable!("checked: mma needs staged tiles") };
        let ks = (self.bk > self.ak).then(|| format!("ks * {}", self.ak));
        self.mma_fragment_registers(w, None);
        self.mma_fragments(w, stage, ks, None);
        self.mma_products(w, None);
    }

    /// Declares the fragment registers: one set, or `Some(n)` sets for
    /// fragments loaded ahead of the mmas that use them.
    pub(super) fn mma_fragment_registers(&self, w: &mut Writer, sets: Option<u32>) {
        let n = sets.map_or(String::new(), |n| format!("[{n}]"));
        w.line(format!("unsigned a_frag{n}[{}][4], b_frag{n}[{}][2];", self.ami, self.ani));
    }

    /// The fragments of one K step (at `ks` within the tile) by ldmatrix
    /// from stage `stage`, into fragment set `set`.
    pub(super) fn mma_fragments(&self, w: &mut Writer, stage: &str, ks: Option<String>, set: Option<u32>) {
        let (mi, ni) = (self.ami, self.ani);
        let set = set.map_or(String::new(), |s| format!("[{s}]"));
        let (a, b) = (format!("a_frag{set}"), format!("b_frag{set}"));
        let trans = |which| if self.trans(which) { "_trans" } else { "" };
        w.unrolled("im", mi, |w| {
            let addr = self.ldmatrix_addr('A', stage, times(index("im", mi), 16), ks.clone());
            w.line(format!("ldmatrix_x4{}({a}[im][0], {a}[im][1], {a}[im][2], {a}[im][3], {addr});", trans('A')));
        });
        let pairs = ni / 2;
        w.unrolled("jp", pairs, |w| {
            let addr = self.ldmatrix_addr('B', stage, times(index("jp", pairs), 16), ks.clone());
            let (j0, j1) = if pairs > 1 { ("2 * jp", "2 * jp + 1") } else { ("0", "1") };
            w.line(format!("ldmatrix_x4{}({b}[{j0}][0], {b}[{j0}][1], {b}[{j1}][0], {b}[{j1}][1], {addr});", trans('B')));
        });
        if ni % 2 == 1 {
            let last = ni - 1;
            let addr = self.ldmatrix_addr('B', stage, times(&last.to_string(), 8), ks.clone());
            w.line(format!("ldmatrix_x2{}({b}[{last}][0], {b}[{last}][1], {addr});", trans('B')));
        }
    }

    /// Every atom's mma on fragment set `set`.
    pub(super) fn mma_products(&self, w: &mut Writer, set: Option<u32>) {
        let set = set.map_or(String::new(), |s| format!("[{s}]"));
        w.unrolled("im", self.ami, |w| {
            w.unrolled("jn", self.ani, |w| {
                w.line(format!("mma_m16n8k{}({}[im][jn], a_frag{set}[im], b_frag{set}[jn][0], b_frag{set}[jn][1]);", self.ak, self.mma_sums()));
            });
        });
    }

    /// mma's accumulators in the m16n8 C-fragment map: atom `(im, jn)` at
    /// rows `16 im`, columns `8 jn` of the warp's tile.
    pub(super) fn mma_pairs(&self) -> PairMap {
        PairMap { m: vec![("im", self.ami, 16)], n: vec![("jn", self.ani, 8)], acc: "acc[im][jn]".into() }
    }
}
