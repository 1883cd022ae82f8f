//! How a block's threads split the copies of one operand tile: each thread
//! moves `vector` elements per copy, in `rounds` rounds, along the tile's
//! contiguous dimension in global memory.

use super::writer::Writer;
use crate::spec::{KernelSpec, Layout, Staging};

/// The copies of one `rows x cols` tile by `threads` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyPlan {
    pub layout: Layout,
    /// Elements per copy.
    pub vector: u32,
    pub rounds: u32,
    /// Copies along one contiguous line of the tile (a row if row-major).
    pub per_line: u32,
    pub threads: u32,
}

impl CopyPlan {
    pub fn new(rows: u32, cols: u32, layout: Layout, vector: u32, threads: u32) -> Self {
        let inner = match layout {
            Layout::RowMajor => cols,
            Layout::ColMajor => rows,
        };
        CopyPlan { layout, vector, rounds: rows * cols / (vector * threads).max(1), per_line: inner / vector.max(1), threads }
    }

    /// Where copy `index` of the tile lands: (line, element along the line).
    pub fn position(&self, index: u32) -> (u32, u32) {
        (index / self.per_line, index % self.per_line * self.vector)
    }

    /// (row, col) of the first element of copy `index`.
    pub fn row_col(&self, index: u32) -> (u32, u32) {
        let (line, along) = self.position(index);
        match self.layout {
            Layout::RowMajor => (line, along),
            Layout::ColMajor => (along, line),
        }
    }

    /// (row, col) of round `r` relative to round 0, the same for every thread
    /// when [`Self::regular`].
    pub fn round_offset(&self, r: u32) -> (u32, u32) {
        self.row_col(r * self.threads)
    }

    /// Whether each round lands a fixed offset from the thread's first copy:
    /// the threads cover whole lines, or a line holds whole rounds. (A tile
    /// the rules reject, with no whole copy per line, counts as regular.)
    pub fn regular(&self) -> bool {
        self.per_line == 0 || self.threads.is_multiple_of(self.per_line) || self.per_line.is_multiple_of(self.threads)
    }

    /// Whether round `r`'s offset is `r` times round 1's, so a counted loop can walk them.
    pub fn linear(&self) -> bool {
        let (r1, c1) = self.round_offset(1);
        (0..self.rounds).all(|r| self.round_offset(r) == (r * r1, r * c1))
    }
}

/// Where a guarded kernel's next tile of copies lies: the C tile's origin
/// (`m`, `n`) and the K tile's index `k_tile`, and how many of that C
/// tile's K tiles lie wholly inside A and B (`whole`); all in scope, the
/// origin once [`Self::origin`] has brought it there.
#[derive(Clone, Copy)]
pub struct CopyAt<'a> {
    pub m: &'a str,
    pub n: &'a str,
    pub k_tile: &'a str,
    pub whole: &'a str,
    /// The origin is worked out by the stream-K producer's `copy_origin`.
    worked_out: bool,
}

impl<'a> CopyAt<'a> {
    /// The next copies' tile: under stream-K the producer's (`copy_*`),
    /// else K tile `ahead` of this block's C tile.
    pub fn next(stream_k: bool, ahead: &'a str) -> Self {
        if stream_k {
            CopyAt { m: "copy_m", n: "copy_n", k_tile: "copy_k", whole: "copy_whole", worked_out: true }
        } else {
            CopyAt { m: "block_m", n: "block_n", k_tile: ahead, whole: "whole_tiles", worked_out: false }
        }
    }

    /// Brings the origin into scope for checked copies: the stream-K
    /// producer works it out at each tile that needs it (a few per share)
    /// rather than keep it in registers through the K loop.
    pub fn origin(&self, w: &mut crate::cuda::writer::Writer) {
        if self.worked_out {
            w.line(format!("int {}, {};", self.m, self.n));
            w.line(format!("copy_origin({}, {});", self.m, self.n));
        }
    }

    /// Whether the tile lies wholly inside A and B, so that no copy needs a
    /// check: every tile of a problem whose sizes are tile multiples.
    pub fn whole(&self) -> String {
        format!("{} < {}", self.k_tile, self.whole)
    }
}

/// Which copies of a guarded kernel check the edges of A and B.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Checks {
    /// None: the kernel is not guarded, or this loop's tiles all lie inside.
    Off,
    /// Every copy: this loop's block lies at an edge.
    Every,
    /// A branch per tile picks checked or unchecked copies (stream-K, whose
    /// producer crosses from one C tile to the next).
    PerTile,
}

impl Checks {
    /// A loop's checks where it may meet any tile: a branch per tile when
    /// `spec` is guarded, none otherwise.
    pub fn per_tile_if_guarded(spec: &KernelSpec) -> Self {
        if spec.edges == crate::spec::Edges::Guarded {
            Checks::PerTile
        } else {
            Checks::Off
        }
    }
}

/// Whether there is a next tile to copy: K tile `ahead` of this loop's
/// first, or under stream-K any K step left in the block's share.
pub fn copy_ahead(stream_k: bool, ahead: &str) -> String {
    if stream_k {
        "copies_left > 0".to_string()
    } else {
        format!("{ahead} < tiles")
    }
}

/// Both operands' copies of the next tile, K tile `ahead` of this block's
/// (under stream-K: the producer's), as `checks` says: `unchecked` writes
/// them without checks, `checked` with each element checked against the
/// edges (the tile's origin in scope, as `at` names it). Under stream-K
/// the producer then moves on.
pub fn issue_next(
    w: &mut Writer,
    stream_k: bool,
    ahead: &str,
    checks: Checks,
    unchecked: &dyn Fn(&mut Writer),
    checked: &dyn Fn(&mut Writer, CopyAt),
) {
    let at = CopyAt::next(stream_k, ahead);
    let checked = |w: &mut Writer| {
        w.line("// copies check each line against the edges and fill zeros past them");
        at.origin(w);
        checked(w, at);
    };
    match checks {
        Checks::Off => unchecked(w),
        Checks::Every => checked(w),
        Checks::PerTile => {
            w.block(format!("if ({})", at.whole()), unchecked);
            w.block("else", checked);
        }
    }
    if stream_k {
        advance_producer(w);
    }
}

/// One path's cp.async copies of an operand's tile (`C` says how the
/// block's threads split it): what [`issue_both_tiles`] emits, orders and
/// branches between the same way on every path.
pub(crate) trait TileCopies<C> {
    /// The copies of the next tile into stage `stage`, unchecked.
    fn issue(&self, w: &mut Writer, c: &C, stage: &str);
    /// The copies of a tile at an edge (`at`): each reads only the elements
    /// inside the matrix and fills the rest of its bytes with zeros.
    fn issue_guarded(&self, w: &mut Writer, c: &C, stage: &str, at: CopyAt);
    /// The stream-K producer's copies of a K tile before K's last: those
    /// past the tile's rows inside M (A) or columns inside N (B) skipped.
    fn issue_skipping(&self, w: &mut Writer, c: &C, stage: &str);
    /// Moves the operand's source on by one K tile.
    fn advance(&self, w: &mut Writer, c: &C);
    /// Whether a guarded stream-K producer skips the copies past M and N
    /// ([`Self::issue_skipping`]) in place of checking every copy of every
    /// K tile of a tile at those edges.
    fn skips_copies(&self) -> bool;
}

/// Both operands' copies of the next tile, K tile `ahead` of the block's
/// (under stream-K: the producer's), into stage `stage`; each source moves
/// on right after its copies (the order the kernels were measured fastest in).
pub(crate) fn issue_both_tiles<C>(p: &impl TileCopies<C>, w: &mut Writer, [a, b]: [&C; 2], stage: &str, ahead: &str, checks: Checks, stream_k: bool) {
    let checked = |w: &mut Writer, at: CopyAt| {
        p.issue_guarded(w, a, stage, at);
        p.issue_guarded(w, b, stage, at);
        p.advance(w, a);
        p.advance(w, b);
    };
    // a tile the producer copies under checks per tile may lie at an edge of M or N
    let skipping = checks == Checks::PerTile && p.skips_copies();
    let unchecked = |w: &mut Writer| {
        for c in [a, b] {
            if skipping {
                p.issue_skipping(w, c, stage);
            } else {
                p.issue(w, c, stage);
            }
            p.advance(w, c);
        }
    };
    issue_next(w, stream_k, ahead, checks, &unchecked, &checked);
}

/// Moves a stream-K producer's cursor on by the K step just issued (the
/// cursor `stream_k` declares: copies left, K step, tile).
pub(crate) fn advance_producer(w: &mut Writer) {
    w.line("--copies_left;");
    w.block("if (++copy_k == k_tiles)", |w| {
        w.line("// that was the C tile's last K step: the next copy starts the next tile");
        w.line("copy_k = 0;");
        w.line("++copy_tile;");
        w.line("aim();");
    });
}

/// `{var} = ...`: the K tiles of the C tile at (`m`, `n`) whose copies lie
/// wholly inside A and B: all whole ones in an interior C tile; at an edge
/// of M or N none, or, where the copies' sources are [`clamped`] (or the
/// copies past those edges skipped), all whole ones but the last K tile
/// (which holds the operands' last lines). One comparison per tile then
/// picks the unchecked copies.
pub fn whole_tiles(var: &str, m: &str, n: &str, (bm, bn, bk): (u32, u32, u32), clamped: bool) -> String {
    let edge = if clamped { format!("(K - 1) / {bk}") } else { "0".to_string() };
    format!("{var} = {m} + {bm} <= M && {n} + {bn} <= N ? K / {bk} : {edge};")
}

/// The offset of a copy at `line` and `e` along it (tile coordinates) from
/// its operand's tile origin, with the side along M or N (`limit` of the
/// matrix, the tile starting at `origin`) clamped inside the matrix: a copy
/// past that edge reads the edge's last line, or the line's last copy,
/// instead. What it reads lands only in rows or columns of the product past
/// C's edge, which are never stored, so a block at an edge of M or N copies
/// every K tile but the last without a check (a copy across the edge, the
/// line's last, may read up to a vector past it: inside the line's pitch,
/// a multiple of the vector, so inside the operand where another line
/// follows; the last K tile, which holds the operand's last line, is
/// checked). `lines_along_mn`: the operand's lines run along M or N (A
/// row-major, B column-major), else the elements along a line do.
pub fn clamped(line: &str, e: &str, ld: &str, vector: u32, lines_along_mn: bool, (origin, limit): (&str, &str)) -> String {
    if lines_along_mn {
        format!("min({line}, {limit} - 1 - {origin}) * {ld} + {e}")
    } else if vector == 1 {
        format!("{line} * {ld} + min({e}, {limit} - 1 - {origin})")
    } else {
        format!("{line} * {ld} + min({e}, ({limit} - 1 - {origin}) / {vector} * {vector})")
    }
}

/// One operand's copies at the edges of a guarded kernel: the tile's first
/// element lies at (`origin`) of a matrix of `limits` rows and columns.
pub struct Edge {
    pub layout: Layout,
    /// Elements per copy, along the layout's contiguous side.
    pub vector: u32,
    pub origin: (String, String),
    pub limits: (&'static str, &'static str),
}

impl Edge {
    /// The operand's edge for its tile at `at`: A's rows run along M and its
    /// columns along K, B's rows along K and its columns along N.
    pub fn new(which: char, layout: Layout, vector: u32, at: CopyAt, bk: u32) -> Self {
        let k0 = format!("{} * {bk}", crate::cuda::layout::term(at.k_tile));
        let (origin, limits) = if which == 'A' { ((at.m.to_string(), k0), ("M", "K")) } else { ((k0, at.n.to_string()), ("K", "N")) };
        Edge { layout, vector, origin, limits }
    }

    /// The copy's line at (`row`, `col`) of the tile (across the
    /// contiguous side) and the matrix's count of lines; its first element
    /// along the line and the line's length.
    fn line_and_along(&self, row: &str, col: &str) -> ((String, &'static str), (String, &'static str)) {
        let (r, c) = (format!("{} + {row}", self.origin.0), format!("{} + {col}", self.origin.1));
        match self.layout {
            Layout::RowMajor => ((r, self.limits.0), (c, self.limits.1)),
            Layout::ColMajor => ((c, self.limits.1), (r, self.limits.0)),
        }
    }

    /// Whether another line of the matrix follows the copy's at (`row`,
    /// `col`) of the tile: a copy across the end of such a line reads
    /// inside the operand past it (the line's pitch, then the next line).
    pub fn line_follows(&self, row: &str, col: &str) -> String {
        let ((line, line_limit), _) = self.line_and_along(row, col);
        format!("{line} + 1 < {line_limit}")
    }

    /// `const int {name}`: how many of the copy's elements at (`row`, `col`)
    /// of the tile lie inside the matrix (0 to `vector`).
    pub fn inside(&self, w: &mut crate::cuda::writer::Writer, name: &str, row: &str, col: &str) {
        let ((line, line_limit), (along, along_limit)) = self.line_and_along(row, col);
        let v = self.vector;
        if v == 1 {
            w.line(format!("const int {name} = {line} < {line_limit} && {along} < {along_limit};"));
        } else {
            w.line(format!("const int {name}_left = {along_limit} - ({along});"));
            w.line(format!("const int {name} = {line} < {line_limit} ? ({name}_left < 0 ? 0 : {name}_left < {v} ? {name}_left : {v}) : 0;"));
        }
    }
}

/// The register type of a synchronous copy of `vector` elements of `bytes` each.
pub fn load_type(bytes: u32, vector: u32) -> &'static str {
    match (bytes, bytes * vector) {
        (4, 4) => "float",
        (4, 8) => "float2",
        (4, _) => "float4",
        (_, 16) => "uint4",
        (_, 8) => "uint2",
        (_, 4) => "unsigned",
        (_, 2) => "unsigned short",
        _ => "unsigned char",
    }
}

/// The C type of one element of `bytes` bytes, as the copies read it.
fn elem_type(bytes: u32) -> &'static str {
    match bytes {
        4 => "float",
        2 => "unsigned short",
        _ => "unsigned char",
    }
}

/// The helper of a guarded synchronous copy (global -> registers): the
/// first `n` elements of a vector, zeros past them, nothing read past them;
/// `out_of_line`, a function of its own (see its comment).
pub fn load_edge_helper(w: &mut crate::cuda::writer::Writer, bytes: u32, vector: u32, out_of_line: bool) {
    if vector == 1 {
        return;
    }
    let ty = load_type(bytes, vector);
    let elem = elem_type(bytes);
    let inline = if out_of_line {
        w.line("// a copy across an edge of A or B: the n elements inside it, then zeros (out of line:");
        w.line("// it runs only at the edges, and inlined it took registers from the K loop)");
        // Inlined, its code in `autotuned`'s K loop made ptxas bunch the loop's
        // shared-memory loads (see `stream_k::Tiling::units`).
        "__noinline__"
    } else {
        // (a call keeps the caller's live registers across it: with its calls
        // `mma_autotuned`'s guarded K loop spilled, with the loads inlined it does not)
        w.line("// a copy across an edge of A or B: the n elements inside it, then zeros");
        "__forceinline__"
    };
    w.block(format!("__device__ {inline} {ty} load_edge(const {elem}* p, int n)"), |w| {
        if bytes == 4 {
            let lanes = ["x", "y", "z", "w"];
            w.line(format!("{ty} v;"));
            for (i, l) in lanes.iter().take(vector as usize).enumerate() {
                w.line(format!("v.{l} = {i} < n ? p[{i}] : 0.0f;"));
            }
            w.line("return v;");
        } else {
            // 16-bit elements go in pairs, 8-bit ones in fours (the rules keep their vector at 4
            // or more), into 32-bit words, lowest first
            let per_word = 4 / bytes;
            let word = |i: u32| {
                let terms = (0..per_word).map(|j| match (i + j, 8 * bytes * j) {
                    (e, 0) => format!("({e} < n ? (unsigned)p[{e}] : 0u)"),
                    (e, shift) => format!("({e} < n ? (unsigned)p[{e}] : 0u) << {shift}"),
                });
                terms.collect::<Vec<_>>().join(" | ")
            };
            let words = vector / per_word;
            if words == 1 {
                return w.line(format!("return {};", word(0)));
            }
            w.line(format!("return {ty}{{"));
            for q in 0..words {
                w.line(format!("    {}{}", word(per_word * q), if q + 1 < words { "," } else { "" }));
            }
            w.line("};");
        }
    });
}

/// The helpers of a guarded cp.async kernel's copies of `vector` (> 1)
/// elements of `bytes` each at its edges: a copy wholly inside goes by
/// cp.async; one across the end of a line that another line of the operand
/// follows goes by a cp.async of its elements inside with a source size
/// (zeros past them): its bytes past the edge lie inside the operand (the
/// rest of the line's pitch, then the next line, at least a vector long),
/// so compute-sanitizer, which counts such a copy as reading all its bytes,
/// sees nothing read past the buffer. The copy stays asynchronous where a
/// plain load stalled its warp for the memory's latency in every K tile of
/// an edge block: on the H200 `mma_autotuned` ran 4095 x 4097 x 4100 at 248
/// TFLOP/s with the loads, 288 so (7606ac3). A copy wholly outside stores
/// zeros; across the end of the operand's last line, a plain load of the
/// elements inside, then zeros, stored to shared memory.
pub fn copy_edge_helpers(w: &mut crate::cuda::writer::Writer, bytes: u32, vector: u32) {
    load_edge_helper(w, bytes, vector, false);
    let (ty, elem) = (load_type(bytes, vector), elem_type(bytes));
    let size = bytes * vector;
    // the vector's 32-bit words, as st.shared takes them
    let (kind, words): (&str, Vec<String>) = match ty {
        "float4" => ("v4.f32", ["x", "y", "z", "w"].iter().map(|l| format!("\"f\"(v.{l})")).collect()),
        "float2" => ("v2.f32", ["x", "y"].iter().map(|l| format!("\"f\"(v.{l})")).collect()),
        "uint4" => ("v4.u32", ["x", "y", "z", "w"].iter().map(|l| format!("\"r\"(v.{l})")).collect()),
        "uint2" => ("v2.u32", ["x", "y"].iter().map(|l| format!("\"r\"(v.{l})")).collect()),
        _ => ("u32", vec!["\"r\"(v)".to_string()]),
    };
    let regs: Vec<String> = (1..=words.len()).map(|i| format!("%{i}")).collect();
    let regs = if words.len() == 1 { regs[0].clone() } else { format!("{{{}}}", regs.join(", ")) };
    w.line(format!("// a {size}-byte copy at an edge: whole, by cp.async; across the end of a line another line follows, by"));
    w.line("// a cp.async of its n elements inside that fills zeros past them (its bytes past the edge lie inside the");
    w.line("// operand: the line's pitch, then the next line); wholly outside, zeros; across the end of the operand's");
    w.line("// last line, its n elements by a load, then zeros (nothing past the operand is read)");
    w.block(format!("__device__ __forceinline__ void copy_edge_{size}(unsigned dst, const {elem}* src, int n, bool follows)"), |w| {
        w.block(format!("if (n == {vector})"), |w| w.line(format!("cp_async_{size}(dst, src);")));
        let n_bytes = if bytes == 1 { "n".to_string() } else { format!("n * {bytes}") };
        w.block("else if (n > 0 && follows)", |w| w.line(format!("cp_async_{size}_zfill(dst, src, {n_bytes});")));
        w.block("else", |w| {
            w.line(format!("const {ty} v = n > 0 ? load_edge(src, n) : {ty}{{}};"));
            w.line(format!("asm volatile(\"st.shared.{kind} [%0], {regs};\\n\" :: \"r\"(dst), {});", words.join(", ")));
        });
    });
}

/// The value of a guarded synchronous copy from `src` (an element), of
/// which `n` (in scope) elements lie inside the matrix.
pub fn load_edge(bytes: u32, vector: u32, src: &str, n: &str) -> String {
    let ty = load_type(bytes, vector);
    match vector {
        1 if bytes == 4 => format!("{n} > 0 ? {src} : 0.0f"),
        1 => format!("({})({n} > 0 ? {src} : 0)", elem_type(bytes)),
        v => format!("{n} == {v} ? *reinterpret_cast<const {ty}*>(&{src}) : load_edge(&{src}, {n})"),
    }
}

/// Whether every cp.async copy of `spec`'s tiles sits a fixed offset from the
/// thread's first, which the generator relies on to keep addresses in registers.
pub fn cp_async_rounds_regular(spec: &KernelSpec) -> bool {
    let Staging::CpAsync { vector, .. } = spec.staging else { return true };
    let Some(k) = spec.block.k else { return true };
    let t = spec.block.threads.max(1);
    let (a, b) = (spec.a.layout, spec.b.layout);
    // A copy that transposes the operand moves one element at a time.
    let (a_transposes, b_transposes) = spec.copies_transpose();
    let a_vec = if a_transposes { 1 } else { vector };
    let b_vec = if b_transposes { 1 } else { vector };
    CopyPlan::new(spec.block.m, k, a, a_vec, t).regular() && CopyPlan::new(k, spec.block.n, b, b_vec, t).regular()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_of_whole_lines_step_down_the_tile() {
        // A 128x8 row-major tile, one element per copy, 128 threads: 16 rows a round.
        let p = CopyPlan::new(128, 8, Layout::RowMajor, 1, 128);
        assert_eq!((p.rounds, p.per_line), (8, 8));
        assert!(p.regular() && p.linear());
        assert_eq!(p.round_offset(3), (48, 0));
        assert_eq!(p.row_col(9), (1, 1));
    }

    #[test]
    fn rounds_within_long_lines_step_along_them() {
        // An 8x256 row-major tile in float4s, 32 threads: 64 copies a line, two rounds a line.
        let p = CopyPlan::new(8, 256, Layout::RowMajor, 4, 32);
        assert_eq!((p.rounds, p.per_line), (16, 64));
        assert!(p.regular() && !p.linear());
        assert_eq!(p.round_offset(1), (0, 128));
        assert_eq!(p.round_offset(2), (1, 0));
        // Column-major: lines are columns.
        let p = CopyPlan::new(16, 64, Layout::ColMajor, 4, 64);
        assert_eq!(p.round_offset(1), (0, 16));
    }

    #[test]
    fn thread_counts_that_split_lines_unevenly_are_irregular() {
        // 12 threads over lines of 8 copies: each round starts somewhere else.
        assert!(!CopyPlan::new(96, 8, Layout::RowMajor, 1, 12).regular());
    }
}
