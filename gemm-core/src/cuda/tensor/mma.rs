//! The mma atom: `mma.sync.m16n8k16`, operand fragments loaded from shared
//! memory by `ldmatrix`, accumulators in registers in the mma fragment layout.
//!
//! An operand whose shared lines run along K (A row-major, B column-major)
//! is read by plain `ldmatrix`; one whose lines run along M or N by
//! `ldmatrix.trans`, which hands each lane the transposed matrix. Either way
//! lane `i` addresses row `i % 8` of 8x8 matrix `i / 8`, in the order the
//! fragment registers take them: A's (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7,
//! k 8-15), (m 8-15, k 8-15); B's (k 0-7, n 0-7), (k 8-15, n 0-7), and for a
//! second atom along n the same 8 columns on.

use super::{index, plus, times, Source, Tc};
use crate::cuda::epilogue::{self, Output, Value};
use crate::cuda::ptx;
use crate::cuda::writer::Writer;
use crate::spec::{CTile, Dim, Elem, Epilogue, Layout, Staging};

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
        ptx::mma_m16n8k16(w, self.spec.a.elem);
    }

    pub(super) fn mma_accumulators(&self, w: &mut Writer) {
        w.line(format!("// accumulators: {}x{} atoms of 16x8, 4 floats per lane each", self.ami, self.ani));
        w.line(format!("float acc[{}][{}][4] = {{}};", self.ami, self.ani));
        w.line("");
    }

    /// The shared-memory line and element each lane's ldmatrix address starts from.
    pub(super) fn ldmatrix_lanes(&self, w: &mut Writer) {
        w.line("// ldmatrix: the line and element of the shared tile this lane addresses");
        let (a_line, a_elem) =
            if self.trans('A') { ("(lane / 16) * 8 + lane % 8", "warp_m + (lane / 8 % 2) * 8") } else { ("warp_m + lane % 16", "(lane / 16) * 8") };
        let (b_line, b_elem) = if self.trans('B') {
            ("(lane / 8 % 2) * 8 + lane % 8", "warp_n + (lane / 16) * 8")
        } else {
            ("warp_n + (lane / 16) * 8 + lane % 8", "(lane / 8 % 2) * 8")
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
        let stage_elems = if which == 'A' { self.spec.smem_a().elems() } else { self.spec.smem_b().elems() };
        let at = plus(&[times(stage, stage_elems), Some(format!("{p}_at({line}, {elem})"))]);
        format!("{p}s_addr + 2 * ({at})")
    }

    /// One K step of 16: A and B fragments by ldmatrix, then every atom's mma.
    pub(super) fn mma_k_step(&self, w: &mut Writer, src: Source) {
        let Source::Smem { stage } = src else { unreachable!("checked: mma needs staged tiles") };
        let ks = (self.bk > 16).then(|| "ks * 16".to_string());
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
                w.line(format!("mma_m16n8k16(acc[im][jn], a_frag{set}[im], b_frag{set}[jn][0], b_frag{set}[jn][1]);"));
            });
        });
    }

    /// The accumulator map of the m16n8 atom: lane `l` holds rows `l / 4` and
    /// `l / 4 + 8`, columns `(l % 4) * 2` and the next, of each atom. Under
    /// `epilogue = smem` the values go to the block's C tile first, then out
    /// in 16-byte chunks (`epilogue::copy_out`): stored straight from the
    /// registers, a warp's 4-byte pairs land in 8 rows of C at once, which
    /// cost `mma_autotuned` 7% at 4096^3 (5 us a wave of 132 tiles at K = 64).
    pub(super) fn mma_epilogue(&self, w: &mut Writer, out: &Output) {
        let s = self.spec;
        let how = match s.epilogue {
            Epilogue::Vector => "vector: pairs of neighbours along n",
            Epilogue::Smem => "smem: through the block's C tile in shared memory, then 16-byte chunks",
            _ => "direct",
        };
        out.describe(w, how);
        let tile = s.c_tile();
        let staged = tile.map(|t| out.into_tile(t));
        let out = staged.as_ref().unwrap_or(out);
        if let Some(t) = tile {
            self.c_tile_setup(w, t);
            w.line("// where this lane's accumulators lie in the C tile: rows lane / 4 (+ 8) and");
            w.line("// columns (lane % 4) * 2 (+ 1) of each 16x8 atom");
            w.line("const int t_row = warp_m + lane / 4;");
            w.line("const int t_col = warp_n + (lane % 4) * 2;");
            if s.fused.any() {
                w.line("// and in C, for the fused math");
                w.line("const int c_row = block_m + t_row;");
                w.line("const int c_col = block_n + t_col;");
            }
        } else {
            w.line("// where this lane's accumulators lie in C: rows lane / 4 (+ 8) and columns");
            w.line("// (lane % 4) * 2 (+ 1) of each 16x8 atom");
            w.line("const int c_row = block_m + warp_m + lane / 4;");
            w.line("const int c_col = block_n + warp_n + (lane % 4) * 2;");
        }
        let (mi, ni) = (self.ami, self.ani);
        let at = |base: &str| {
            let row = plus(&[Some(format!("{base}_row")), times(index("im", mi), 16), Some("h * 8".into())]);
            let col = plus(&[Some(format!("{base}_col")), times(index("jn", ni), 8)]);
            (row, col)
        };
        let (row, col) = at("c");
        let in_tile = tile.map(|_| at("t"));
        // a lane's bias values: 2 columns of each atom along n, 2 rows of each along m
        let bias = match s.fused.bias.map(|b| b.along) {
            Some(Dim::N) => out
                .bias_ahead(w, &plus(&[Some(col.clone()), Some("e".into())]), &[("jn", ni), ("e", 2)])
                .map(|b| [format!("{b}[jn][0]"), format!("{b}[jn][1]")]),
            Some(Dim::M) => out.bias_ahead(w, &row, &[("im", mi), ("h", 2)]).map(|b| [format!("{b}[im][h]"), format!("{b}[im][h]")]),
            None => None,
        };
        w.unrolled("im", mi, |w| {
            w.unrolled("jn", ni, |w| {
                w.unrolled("h", 2, |w| {
                    let values = ["acc[im][jn][2 * h]", "acc[im][jn][2 * h + 1]"]
                        .iter()
                        .enumerate()
                        .map(|(e, acc)| Value { acc: acc.to_string(), bias: bias.as_ref().map(|b| b[e].clone()) })
                        .collect::<Vec<_>>();
                    let in_tile = in_tile.as_ref().map(|(r, c)| (r.as_str(), c.as_str()));
                    out.store_at(w, (&row, &col), in_tile, Dim::N, &values);
                });
            });
        });
        if tile.is_some() {
            epilogue::copy_out(w, s, out, self.threads);
        }
    }

    /// Frees the space the C tile takes and points `c_tile` at it: the
    /// staged tiles' own once every warp is done reading them (under
    /// stream-K a space of its own, free once the last unit's tile went out).
    fn c_tile_setup(&self, w: &mut Writer, t: CTile) {
        let s = self.spec;
        let c_type = if s.c.elem == Elem::F32 { "float" } else { "unsigned short" };
        if self.stream_k {
            w.line("__syncthreads();  // the last unit's C tile has gone out");
        } else {
            if matches!(s.staging, Staging::CpAsync { .. }) {
                w.line("cp_async_wait<0>();  // no copy is still in flight into the stages (the last groups are empty)");
            }
            w.line("__syncthreads();  // every warp is done with the staged tiles, whose space the C tile takes");
        }
        let lines = if s.c.layout == Layout::RowMajor { "rows" } else { "columns" };
        w.line(format!("// the block's C tile: {} {lines} of {}, {} apart", t.lines, t.line, t.ld));
        let at = match s.epilogue_scratch_offset() {
            0 => "smem_raw".to_string(),
            offset => format!("smem_raw + {offset}"),
        };
        w.line(format!("{c_type}* const c_tile = reinterpret_cast<{c_type}*>({at});"));
    }
}
