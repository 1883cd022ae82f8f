//! The epilogue of the atoms whose accumulators follow mma's m16n8 C
//! fragment: mma.sync, and wgmma, whose 64xN result each warp of the
//! warpgroup holds as 16 rows of 8-wide atoms. In every 16x8 atom lane `l`
//! holds rows `l / 4` and `l / 4 + 8`, columns `(l % 4) * 2` and the next:
//! two pairs of neighbours along n. The atom says where its 16x8 atoms lie
//! ([`PairMap`]); the rest is shared.

use super::{index, plus, times, Tc};
use crate::cuda::epilogue::{self, Output, Team, Value};
use crate::cuda::writer::Writer;
use crate::spec::{CTile, Dim, Elem, Epilogue, Layout, Staging};

/// Where a warp's 16x8 atoms lie in its tile (from `warp_m`, `warp_n`).
pub(super) struct PairMap {
    /// Loops along m: (variable, extent, rows a step).
    pub m: Vec<(&'static str, u32, u32)>,
    /// Loops along n: (variable, extent, columns a step).
    pub n: Vec<(&'static str, u32, u32)>,
    /// One atom's 4 values, indexed by the loops' variables: `{acc}[2 * h + e]`.
    pub acc: String,
}

impl PairMap {
    fn offset(loops: &[(&'static str, u32, u32)]) -> Vec<Option<String>> {
        loops.iter().map(|&(v, n, step)| times(index(v, n), step)).collect()
    }

    fn loops(loops: &[(&'static str, u32, u32)]) -> Vec<(&'static str, u32)> {
        loops.iter().map(|&(v, n, _)| (v, n)).collect()
    }

    /// `[v0][v1]..`: the subscripts of the bias registers loaded ahead.
    fn subscripts(loops: &[(&'static str, u32, u32)]) -> String {
        loops.iter().map(|(v, ..)| format!("[{v}]")).collect()
    }
}

/// `body` inside fully unrolled loops over `loops`, outermost first.
fn nest(w: &mut Writer, loops: &[(&'static str, u32)], body: &mut dyn FnMut(&mut Writer)) {
    match loops.split_first() {
        Some((&(var, n), rest)) => w.unrolled(var, n, |w| nest(w, rest, body)),
        None => body(w),
    }
}

impl Tc<'_> {
    /// The accumulators of `map` to C, through the fused math. Under
    /// `epilogue = smem` the values go to the block's C tile first, then out
    /// in 16-byte chunks (`epilogue::copy_out`): stored straight from the
    /// registers, a warp's 4-byte pairs land in 8 rows of C at once, which
    /// cost `mma_autotuned` 7% at 4096^3 (5 us a wave of 132 tiles at K = 64).
    pub(super) fn pairs_epilogue(&self, w: &mut Writer, out: &Output, map: &PairMap) {
        let s = self.spec;
        let how = match s.epilogue {
            Epilogue::Vector => "vector: pairs of neighbours along n",
            Epilogue::Smem => "smem: through the block's C tile in shared memory, then 16-byte chunks",
            Epilogue::SmemElements => "smem_elements: through the block's C tile in shared memory, then in 16-byte chunks aligned to C's own lines (f32: elements), a warp's side by side (C at any alignment)",
            Epilogue::Tma => "tma: through the block's C tile in shared memory, then TMA stores",
            _ => "direct",
        };
        out.describe(w, how);
        let tile = s.c_tile();
        let staged = tile.map(|t| out.into_tile(t));
        let out = staged.as_ref().unwrap_or(out);
        if let Some(t) = tile {
            self.c_tile_setup(w, t);
            epilogue::tile_shift(w, s, out);
            w.line("// where this lane's accumulators lie in the C tile: rows lane / 4 (+ 8) and");
            w.line("// columns (lane % 4) * 2 (+ 1) of each 16x8 atom");
            w.line("const int t_row = warp_m + lane / 4;");
            w.line("const int t_col = warp_n + (lane % 4) * 2;");
            if s.fused.any() {
                w.line("// and in C, for the fused math");
                w.declare("c_row", "const int c_row = block_m + t_row;");
                w.declare("c_col", "const int c_col = block_n + t_col;");
            }
        } else {
            w.line("// where this lane's accumulators lie in C: rows lane / 4 (+ 8) and columns");
            w.line("// (lane % 4) * 2 (+ 1) of each 16x8 atom");
            w.line("const int c_row = block_m + warp_m + lane / 4;");
            w.line("const int c_col = block_n + warp_n + (lane % 4) * 2;");
        }
        if let Some(t) = tile.filter(|t| t.bands > 1) {
            return self.bands_out(w, out, map, t);
        }
        let parts = tile.map_or(1, |t| t.parts);
        if parts == 1 {
            return self.pairs_out(w, out, map, None, None);
        }
        // a C tile in parts: the last loop along n (a consumer's columns, spec.rs) split among them
        let &(q, extent, step) = map.n.last().expect("a loop along n");
        debug_assert!(map.acc.contains(&format!("[{q}]")), "{} indexes its atoms by {q}", map.acc);
        let per = extent / parts;
        let width = per * step;
        w.line(format!("// the C tile goes out in {parts} parts of {width} columns, each through the same buffer"));
        w.unrolled("part", parts, |w| {
            let team = self.team();
            w.block("if (part > 0)", |w| {
                w.line(format!("if ({}) bulk_wait_read<0>();  // the previous part's TMA stores have read the buffer", team.leader));
                w.line(format!("{}  // and every consumer knows it", team.sync));
            });
            let mut n = map.n.clone();
            *n.last_mut().expect("a loop along n") = (q, per, step);
            let acc = map.acc.replace(&format!("[{q}]"), &format!("[{q} + {per} * part]"));
            self.pairs_out(w, out, &PairMap { m: map.m.clone(), n, acc }, Some(("part", width)), None);
        });
    }

    /// A C tile that goes out in bands ([`CTile::bands`]): band after band
    /// through one buffer, each filled by the warpgroups whose 64-row atoms
    /// lie in it (a wgmma atom's rows `group_m + 64 * im`), then copied out
    /// by all of them, who meet again before the next band overwrites it.
    fn bands_out(&self, w: &mut Writer, out: &Output, map: &PairMap, t: CTile) {
        let lines = t.lines / t.bands;
        let team = self.team();
        let &(im, extent, step) = map.m.first().expect("a loop along m");
        debug_assert_eq!((map.m.len(), step), (1, 64), "wgmma's atoms, 64 rows each");
        w.line(format!("// the C tile goes out in {} bands of {lines} rows, each through the same buffer", t.bands));
        // (`c_band`: the raster may have a `band` of its own in scope)
        w.unrolled("c_band", t.bands, |w| {
            w.block("if (c_band > 0)", |w| {
                w.line(format!("{}  // every consumer has copied the previous band out of the buffer", team.sync));
            });
            let banded = out.in_band("c_band", lines);
            // (each of this warpgroup's atoms stored where its rows, group_m + 64 * im on, lie in the band)
            let row0 = match times(index(im, extent), 64) {
                Some(off) => format!("(group_m + {off})"),
                None => "group_m".into(),
            };
            self.pairs_stores(w, &banded, map, None, None, Some(format!("{row0} / {lines} == c_band")));
            epilogue::copy_out(w, self.spec, &banded, &team);
        });
    }

    /// `specialize(.., overlap)`, before the wait for the first half: where
    /// this lane's accumulators lie, and a 16-bit bias along n for both
    /// halves, packed, so that its loads' latency passes beside the last
    /// wgmmas (loaded a half at a time, before each half's stores, the
    /// fused layer's epilogue cost 3.3% on the H100 against 1.7%, with one
    /// K step issued ahead). Returns
    /// the bias registers, `[half][q]`, where loaded.
    pub(super) fn overlap_setup(&self, w: &mut Writer, out: &Output) -> Option<&'static str> {
        w.line("// where this lane's accumulators lie in the C tile: rows lane / 4 (+ 8) and");
        w.line("// columns (lane % 4) * 2 (+ 1) of each 16x8 atom");
        w.line("const int t_row = warp_m + lane / 4;");
        w.line("const int t_col = warp_n + (lane % 4) * 2;");
        if self.spec.fused.any() {
            w.line("// and in C, for the fused math");
            w.declare("c_row", "const int c_row = block_m + t_row;");
            w.declare("c_col", "const int c_col = block_n + t_col;");
        }
        let col = format!("c_col + half * {} + q * 8", self.an);
        out.bias_pairs_ahead(w, &col, &[("half", 2), ("q", self.an / 8)])
    }

    /// `specialize(.., overlap)`: half `half` of a consumer's accumulators
    /// (its wgmma atom column `half`) to C through the fused math, as part
    /// `half` of the C tile, which holds half the block's columns: half 0
    /// sets the C tile up, half 1 first waits until half 0's TMA stores
    /// have read the buffer. `bias`: [`Self::overlap_setup`]'s registers.
    pub(super) fn overlap_half(&self, w: &mut Writer, out: &Output, half: u32, bias: Option<&str>) {
        let Some(t) = self.spec.c_tile() else { unreachable!("overlap stores through a C tile (the rules)") };
        let staged = out.into_tile(t);
        if half == 0 {
            out.describe(w, "tma: through the block's C tile in shared memory, then TMA stores, a half at a time beside the other half's wgmmas");
            self.c_tile_setup(w, t);
        } else {
            let team = self.team();
            w.line(format!("if ({}) bulk_wait_read<0>();  // the first half's TMA stores have read the buffer", team.leader));
            w.line(format!("{}  // and every consumer knows it", team.sync));
        }
        let map = PairMap { m: vec![("im", 1, 64)], n: vec![("q", self.an / 8, 8)], acc: format!("acc[im][{half}][q]") };
        w.line(format!("// half {half}: columns {} to {} of the block's", half * self.an, (half + 1) * self.an - 1));
        let bias = bias.map(|b| format!("{b}[{half}]"));
        w.block("", |w| self.pairs_out(w, &staged, &map, Some((&half.to_string(), self.an)), bias.as_deref()));
    }

    /// [`Self::pairs_epilogue`]'s stores of `map`'s accumulators, and the C
    /// tile's way out; under `part` (its variable and columns) one part of a
    /// C tile that goes out in parts, `width` columns from `part * width` on;
    /// `bias_pairs`: registers already holding a 16-bit bias along n,
    /// packed in pairs, indexed by `map`'s loops along n.
    fn pairs_out(&self, w: &mut Writer, out: &Output, map: &PairMap, part: Option<(&str, u32)>, bias_pairs: Option<&str>) {
        self.pairs_stores(w, out, map, part, bias_pairs, None);
        let s = self.spec;
        match (s.c_tile(), s.epilogue) {
            (Some(_), Epilogue::Tma) => epilogue::tma_store_out(w, s, out, &self.team(), part),
            (Some(_), _) => epilogue::copy_out(w, s, out, &self.team()),
            _ => {}
        }
    }

    /// [`Self::pairs_out`]'s stores of `map`'s accumulators into C or the
    /// C tile (in a band of it, [`Output::in_band`], from the band's first
    /// row), each atom's under `only` where given.
    fn pairs_stores(&self, w: &mut Writer, out: &Output, map: &PairMap, part: Option<(&str, u32)>, bias_pairs: Option<&str>, only: Option<String>) {
        let s = self.spec;
        let tile = s.c_tile();
        let at = |base: &str| {
            let first = match (out.band(), base) {
                (Some((var, lines)), "t") => format!("(t_row - {var} * {lines})"),
                _ => format!("{base}_row"),
            };
            let mut rows = vec![Some(first)];
            rows.extend(PairMap::offset(&map.m));
            rows.push(Some("h * 8".into()));
            let mut cols = vec![Some(format!("{base}_col"))];
            // (the buffer holds the part alone)
            if let (Some((var, width)), "c") = (part, base) {
                cols.push(Some(format!("{var} * {width}")));
            }
            cols.extend(PairMap::offset(&map.n));
            (plus(&rows), plus(&cols))
        };
        let (row, col) = at("c");
        let in_tile = tile.map(|_| at("t"));
        // a lane's bias values: 2 columns of each atom along n, 2 rows of each along m
        let bias = match (s.fused.bias.map(|b| b.along), bias_pairs) {
            (Some(Dim::N), Some(pairs)) => {
                let b = format!("{pairs}{}", PairMap::subscripts(&map.n));
                Some([0, 1].map(|e| out.bias_from_pair(&b, e)))
            }
            (Some(Dim::N), None) => {
                let mut loops = PairMap::loops(&map.n);
                loops.push(("e", 2));
                let sub = PairMap::subscripts(&map.n);
                // as f32 values where few; else a 16-bit bias packed, a pair of columns a
                // register (loaded under a branch, which ptxas cannot load again where it
                // needs the registers: packed even where f32 fits, ping-pong's 128x128
                // consumers spilled 188 bytes)
                match out.bias_ahead(w, &plus(&[Some(col.clone()), Some("e".into())]), &loops) {
                    Some(b) => Some([format!("{b}{sub}[0]"), format!("{b}{sub}[1]")]),
                    None => {
                        out.bias_pairs_ahead(w, &col, &PairMap::loops(&map.n)).map(|b| [0, 1].map(|e| out.bias_from_pair(&format!("{b}{sub}"), e)))
                    }
                }
            }
            (Some(Dim::M), _) => {
                let mut loops = PairMap::loops(&map.m);
                loops.push(("h", 2));
                let sub = PairMap::subscripts(&map.m);
                out.bias_ahead(w, &row, &loops).map(|b| [format!("{b}{sub}[h]"), format!("{b}{sub}[h]")])
            }
            (None, _) => None,
        };
        let mut loops = PairMap::loops(&map.m);
        loops.extend(PairMap::loops(&map.n));
        loops.push(("h", 2));
        nest(w, &loops, &mut |w| {
            let values = [format!("{}[2 * h]", map.acc), format!("{}[2 * h + 1]", map.acc)]
                .into_iter()
                .enumerate()
                .map(|(e, acc)| Value { acc, bias: bias.as_ref().map(|b| b[e].clone()) })
                .collect::<Vec<_>>();
            let in_tile = in_tile.as_ref().map(|(r, c)| (r.as_str(), c.as_str()));
            match &only {
                Some(cond) => w.block(format!("if ({cond})"), |w| out.store_at(w, (&row, &col), in_tile, Dim::N, &values)),
                None => out.store_at(w, (&row, &col), in_tile, Dim::N, &values),
            }
        });
    }

    /// Frees the space the C tile takes and points `c_tile` at it: the
    /// staged tiles' own once every warp is done reading them (under
    /// stream-K a space of its own, free once the last unit's tile went out).
    fn c_tile_setup(&self, w: &mut Writer, t: CTile) {
        let s = self.spec;
        let c_type = if s.c.elem == Elem::F32 { "float" } else { "unsigned short" };
        let lines = if s.c.layout == Layout::RowMajor { "rows" } else { "columns" };
        if let Staging::Tma { .. } = s.staging {
            let team = self.team();
            // ping-pong consumers each have a C tile, one after another
            let offset = match s.specialize {
                Some(sp) if sp.pingpong => format!("{} + group * {}", s.epilogue_scratch_offset(), t.lines * t.ld * s.c.elem.bytes()),
                _ => s.epilogue_scratch_offset().to_string(),
            };
            if s.epilogue == Epilogue::Tma {
                if s.persistent.is_some() {
                    w.line(format!("if ({}) bulk_wait_read<0>();  // the previous tile's TMA stores have read the C tile", team.leader));
                    w.line(format!("{}  // and every consumer knows it", team.sync));
                }
                if t.parts > 1 {
                    w.line(format!(
                        "// a buffer for a part of the block's C tile, past the stages: {} {lines} of {}, in the TMA store's boxes",
                        t.lines,
                        t.line / t.parts
                    ));
                } else {
                    w.line(format!("// the block's C tile, past the stages: {} {lines} of {}, in the TMA store's boxes", t.lines, t.line));
                }
                w.line(format!("const unsigned c_tile_addr = a_smem + {offset};"));
            } else {
                if s.persistent.is_some() {
                    w.line(format!("{}  // the previous tile's C has gone out of the C tile", team.sync));
                }
                if t.bands > 1 {
                    let band = t.lines / t.bands;
                    w.line(format!("// a buffer for a band of the block's C tile, past the stages: {band} {lines} of {}, {} apart", t.line, t.ld));
                } else {
                    w.line(format!("// the block's C tile, past the stages: {} {lines} of {}, {} apart", t.lines, t.line, t.ld));
                }
            }
            w.line(format!("{c_type}* const c_tile = reinterpret_cast<{c_type}*>(smem_raw + (a_smem - smem_base) + {offset});"));
            return;
        }
        if self.stream_k {
            w.line("__syncthreads();  // the last unit's C tile has gone out");
        } else {
            if matches!(s.staging, Staging::CpAsync { .. }) {
                w.line("cp_async_wait<0>();  // no copy is still in flight into the stages (the last groups are empty)");
            }
            w.line("__syncthreads();  // every warp is done with the staged tiles, whose space the C tile takes");
        }
        w.line(format!("// the block's C tile: {} {lines} of {}, {} apart", t.lines, t.line, t.ld));
        let at = match s.epilogue_scratch_offset() {
            0 => "smem_raw".to_string(),
            offset => format!("smem_raw + {offset}"),
        };
        w.line(format!("{c_type}* const c_tile = reinterpret_cast<{c_type}*>({at});"));
    }

    /// The threads that share the block's C tile.
    pub(super) fn team(&self) -> Team {
        match self.spec.specialize {
            // ping-pong: a consumer warpgroup has a tile of its own
            Some(sp) if sp.pingpong => {
                Team { sync: "consumers_sync();", thread: "(threadIdx.x % 128)".into(), leader: "threadIdx.x % 128 == 0".into(), threads: 128 }
            }
            Some(sp) => Team {
                sync: "consumers_sync();",
                thread: format!("(threadIdx.x - {})", 128 * sp.producers),
                leader: format!("threadIdx.x == {}", 128 * sp.producers),
                threads: 128 * sp.consumers,
            },
            None => Team::block(self.threads),
        }
    }
}
