//! How a layer's M rows (tokens) are split into chunks, each computed and
//! then communicated while the next one computes.

use crate::kernels::tail_split_pays;

/// One GEMM every chunk runs, as the chunk plan sees it: its tiles along N
/// (for the chunk's m rows) and its K, which a tile's time follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkGemm {
    /// Tiles across N: `n` over the tile's width, rounded up.
    pub tiles_n: usize,
    /// The GEMM's K.
    pub k: usize,
}

impl ChunkGemm {
    /// What this GEMM costs a chunk of `rows` tile rows on `sms` SMs, in
    /// units of K / (2 sms): a wave of tiles (each running the whole K) is
    /// 2 sms. The chunks' GEMMs run one after another, each a whole number
    /// of waves, but the `first` chunk's, on fixed shares, split a last
    /// wave of `last` tiles, at most half full, along K
    /// ([`tail_split_pays`]): counted as half a wave for the halves of K
    /// and a fixup growing with the tiles split, sms + `last`. A rough
    /// count: such waves ran 0.55-0.89 of a wave on H200s, where this
    /// gives 0.55-0.70 (docs/src/performance/tensor-parallel.md).
    pub fn cost(&self, rows: usize, sms: usize, first: bool) -> u64 {
        let (tiles, sms) = (rows * self.tiles_n, sms.max(1));
        let units = if first && tail_split_pays(tiles, sms) { 2 * sms * (tiles / sms) + sms + tiles % sms } else { 2 * sms * tiles.div_ceil(sms) };
        (units * self.k) as u64
    }
}

/// [`ChunkPlan::fitted`] plans chunks of at most this many tiles' rows
/// with equal chunks instead: with as many rows, each chunk's GEMMs run
/// many waves, and what a part-full last wave costs them is small.
pub const FITTED_TILES: usize = 256;

/// `m` rows in `chunks` chunks of nearly equal size (the first `m %
/// chunks` one row longer), each a multiple of `align` rows where it can be
/// (the GEMMs' tile height: a chunk ending mid-tile leaves that tile's rows
/// to two launches).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkPlan {
    ranges: Vec<(usize, usize)>,
}

impl ChunkPlan {
    /// The plan for `m` rows in at most `chunks` chunks of whole `align`-row
    /// tiles (the last takes what is left): fewer chunks where `m` has too
    /// few tiles, and never an empty one (no rows: no chunks).
    pub fn new(m: usize, chunks: usize, align: usize) -> Result<Self, crate::TpError> {
        if chunks == 0 || align == 0 {
            return Err(crate::TpError::Args(format!("a chunk plan needs chunks and an alignment: chunks = {chunks}, align = {align}")));
        }
        let tiles = m.div_ceil(align);
        let chunks = chunks.min(tiles);
        let mut ranges = Vec::with_capacity(chunks);
        let mut start = 0;
        for c in 0..chunks {
            // tiles spread evenly over the chunks, the first ones a tile longer
            let t = tiles / chunks + usize::from(c < tiles % chunks);
            let end = (start + t * align).min(m);
            ranges.push((start, end));
            start = end;
        }
        Ok(ChunkPlan { ranges })
    }

    /// The plan of at most `chunks` chunks of whole `align`-row tiles (the
    /// last takes what is left) on which `gemms` run in the fewest waves of
    /// tiles on `sms` SMs, each wave as long as the GEMM's K
    /// ([`ChunkGemm::cost`]). The chunks' GEMMs run one after another, each
    /// a whole number of waves: cut evenly, a chunk can leave most of a
    /// GEMM's last wave idle where the whole layer fills it (1024 of 4096
    /// tokens on two H200s: 448 tiles of the up-projection, 3.4 waves, 15%
    /// slower than a quarter of the 13.6 waves of the whole;
    /// docs/src/tensor-parallel.md), and only the first chunk splits a
    /// last wave along K. Among plans of the fewest waves: the most
    /// chunks, then the most even, then the larger chunks first; and equal
    /// chunks of that count where they count at most [`Self::slack`] more.
    /// Every rank must cut alike, so `sms` is the group's fewest. Past
    /// [`FITTED_TILES`] tiles' rows, equal chunks ([`Self::new`]).
    pub fn fitted(m: usize, chunks: usize, align: usize, gemms: &[ChunkGemm], sms: usize) -> Result<Self, crate::TpError> {
        let even = Self::new(m, chunks, align)?;
        let tiles = m.div_ceil(align);
        if tiles == 0 || tiles > FITTED_TILES || gemms.is_empty() || sms == 0 {
            return Ok(even);
        }
        let chunks = chunks.min(tiles);
        // a chunk of r tile rows, the first or another: its GEMMs' waves, each as long as its K
        let cost = |first: bool, r: usize| -> u64 { gemms.iter().map(|g| g.cost(r, sms, first)).sum() };
        // the fewest waves for each chunk count, then the smallest largest chunk that keeps them
        let any = Waves::new(tiles, chunks, tiles, &cost);
        let least = (1..=chunks).filter_map(|j| any.after(0, j)).min().expect("one chunk can always be cut");
        let count = (1..=chunks).rev().find(|&j| any.after(0, j) == Some(least)).expect("the least is some count's");
        // equal chunks of that count, unless another cut counts half a wave fewer
        let equal = Self::new(m, count, align)?;
        let equal_cost: u64 = equal.ranges.iter().map(|&(a, b)| cost(a == 0, (b - a).div_ceil(align))).sum();
        if equal_cost <= least + Self::slack(gemms, sms) {
            return Ok(equal);
        }
        // (a larger bound on the chunks never takes more waves: search it by halves)
        let (mut lo, mut hi) = (tiles.div_ceil(count), tiles);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if Waves::new(tiles, count, mid, &cost).total() == least {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let largest = lo;
        let waves = Waves::new(tiles, count, largest, &cost);
        // from the front, each chunk the largest that the rest can follow at the least total
        let (mut ranges, mut at, mut left) = (Vec::with_capacity(count), 0, least);
        for j in (1..=count).rev() {
            let r = (1..=largest.min(tiles - at))
                .rev()
                .find(|&r| waves.after(at + r, j - 1).is_some_and(|rest| cost(at == 0, r) + rest == left))
                .expect("the least total is reachable");
            left -= cost(at == 0, r);
            ranges.push((at * align, ((at + r) * align).min(m)));
            at += r;
        }
        Ok(ChunkPlan { ranges })
    }

    /// How many fewer units ([`ChunkGemm::cost`]) a cut other than equal
    /// chunks must count to be taken: half a wave of the GEMM of least K.
    /// The first chunk's split wave is counted roughly, and the rest of the
    /// block is not counted at all (the last chunk's collective, exposed):
    /// at 8192 tokens on two H200s, a first chunk of 3968 rows, counted a
    /// tenth of a wave ahead of equal halves, ran the block 1.0-2.9% slower
    /// than they did in each of four runs (docs/src/performance/tensor-parallel.md).
    pub fn slack(gemms: &[ChunkGemm], sms: usize) -> u64 {
        gemms.iter().map(|g| (sms * g.k) as u64).min().unwrap_or(0)
    }

    /// Each chunk's rows, `start..end`, in order, covering `0..m` once.
    pub fn ranges(&self) -> &[(usize, usize)] {
        &self.ranges
    }

    /// The rows all the chunks hold: the layer's m.
    pub fn rows(&self) -> usize {
        self.ranges.last().map_or(0, |&(_, end)| end)
    }

    /// The most rows a chunk holds.
    pub fn largest(&self) -> usize {
        self.ranges.iter().map(|(s, e)| e - s).max().unwrap_or(0)
    }
}

/// The fewest waves that tile rows `i..tiles` take in exactly `j` chunks
/// of at most `largest` rows each, for every `i` and `j` (none where they
/// cannot be cut so).
struct Waves {
    tiles: usize,
    /// `least[j][i]`
    least: Vec<Vec<Option<u64>>>,
}

impl Waves {
    /// `cost(first, r)`: a chunk of `r` tile rows, the first or another.
    fn new(tiles: usize, chunks: usize, largest: usize, cost: &impl Fn(bool, usize) -> u64) -> Self {
        let mut least = vec![vec![None; tiles + 1]; chunks + 1];
        least[0][tiles] = Some(0);
        for j in 1..=chunks {
            for i in (0..tiles).rev() {
                least[j][i] = (1..=largest.min(tiles - i)).filter_map(|r| least[j - 1][i + r].map(|rest| cost(i == 0, r) + rest)).min();
            }
        }
        Waves { tiles, least }
    }

    /// The fewest waves of the whole, in all its chunks.
    fn total(&self) -> u64 {
        self.least.last().and_then(|l| l[0]).unwrap_or(u64::MAX)
    }

    /// The fewest waves from tile row `i` on, in `j` chunks.
    fn after(&self, i: usize, j: usize) -> Option<u64> {
        self.least.get(j).and_then(|l| l.get(i.min(self.tiles))).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers(p: &ChunkPlan, m: usize) -> bool {
        let mut at = 0;
        for &(s, e) in p.ranges() {
            if s != at || e <= s {
                return false;
            }
            at = e;
        }
        at == m
    }

    /// Chunks cover the rows once, in order, none empty; whole tiles but
    /// the last; as many chunks as asked where there are tiles for them.
    #[test]
    fn chunks_cover_every_row_once_in_whole_tiles() {
        for (m, chunks) in [(8192, 4), (1024, 4), (1000, 3), (129, 2), (1, 4), (128, 1), (8191, 8), (300, 7)] {
            let p = ChunkPlan::new(m, chunks, 128).unwrap();
            assert!(covers(&p, m), "{m} rows in {chunks}: {p:?}");
            assert!(p.ranges().len() <= chunks && p.ranges().len() == chunks.min(m.div_ceil(128)), "{m} rows in {chunks}: {p:?}");
            for &(s, e) in &p.ranges()[..p.ranges().len() - 1] {
                assert!(s % 128 == 0 && (e - s) % 128 == 0, "{m} rows in {chunks}: {p:?}");
            }
        }
        assert_eq!(ChunkPlan::new(8192, 4, 128).unwrap().ranges(), &[(0, 2048), (2048, 4096), (4096, 6144), (6144, 8192)]);
        // M not a multiple of the chunk: the last chunk is short
        assert_eq!(ChunkPlan::new(1000, 2, 128).unwrap().ranges(), &[(0, 512), (512, 1000)]);
        // a chunk count of 1: the whole layer at once
        assert_eq!(ChunkPlan::new(777, 1, 128).unwrap().ranges(), &[(0, 777)]);
        assert_eq!(ChunkPlan::new(777, 1, 128).unwrap().largest(), 777);
    }

    #[test]
    fn a_plan_without_chunks_or_alignment_is_an_error() {
        for (m, c, a) in [(100, 0, 128), (100, 4, 0), (0, 0, 128)] {
            assert!(ChunkPlan::new(m, c, a).is_err());
        }
    }

    /// No rows: no chunks, equal or fitted, and nothing for a chunk to hold.
    #[test]
    fn no_rows_plan_no_chunks() {
        for p in [ChunkPlan::new(0, 4, 128).unwrap(), ChunkPlan::fitted(0, 4, 128, &TWO_H200, 132).unwrap()] {
            assert!(p.ranges().is_empty(), "{p:?}");
            assert_eq!((p.rows(), p.largest()), (0, 0));
        }
    }

    /// One rank's GEMMs of the 70B-class MLP block on two GPUs (hidden
    /// 8192, ffn 28672 over 2: the up-projection 56 tiles of 256 across and
    /// K 8192, the down-projection 32 across and K 14336), 132 SMs.
    const TWO_H200: [ChunkGemm; 2] = [ChunkGemm { tiles_n: 56, k: 8192 }, ChunkGemm { tiles_n: 32, k: 14336 }];

    /// A plan's GEMMs in units of K / (2 sms) ([`ChunkGemm::cost`]).
    fn waves(p: &ChunkPlan, gemms: &[ChunkGemm], sms: usize) -> u64 {
        p.ranges().iter().enumerate().map(|(c, (a, b))| gemms.iter().map(|g| g.cost((b - a).div_ceil(128), sms, c == 0)).sum::<u64>()).sum()
    }

    /// A wave is 2 sms units of K / (2 sms); the first chunk's last wave,
    /// split along K where it is at most half full, sms and its tiles; no
    /// other chunk's.
    #[test]
    fn a_gemm_costs_its_waves_and_a_first_chunk_its_split_tail_less() {
        let g = ChunkGemm { tiles_n: 56, k: 8192 };
        // 8 tile rows: 448 tiles on 132 SMs, 3 waves and 52 tiles (at most half of 132)
        assert_eq!(g.cost(8, 132, false), 4 * 264 * 8192);
        assert_eq!(g.cost(8, 132, true), (3 * 264 + 132 + 52) * 8192);
        // 4 tile rows: 224 tiles, the last wave 92 tiles, more than half: not split
        assert_eq!(g.cost(4, 132, true), 2 * 264 * 8192);
        // one wave or less is never split
        assert_eq!(g.cost(2, 132, true), 264 * 8192);
        // whole waves: nothing to split
        assert_eq!(ChunkGemm { tiles_n: 33, k: 7 }.cost(8, 132, true), 2 * 264 * 7);
    }

    /// Where equal chunks fill the waves as the whole does, the plan is
    /// theirs; where they would leave waves part-full, or lose the one
    /// chunk's split last wave, it cuts otherwise or fewer, and never takes
    /// more waves than equal chunks.
    #[test]
    fn fitted_chunks_take_no_more_waves_than_equal_ones() {
        let fitted = |m, c| ChunkPlan::fitted(m, c, 128, &TWO_H200, 132).unwrap();
        // 4 x 1024 of 4096: the up-projection's 3.4 waves a chunk run as 4; 2 x 2048 take the whole's
        assert_eq!(fitted(4096, 4), ChunkPlan::new(4096, 2, 128).unwrap());
        let one = |m| waves(&ChunkPlan::new(m, 1, 128).unwrap(), &TWO_H200, 132);
        assert!(one(4096) < waves(&ChunkPlan::new(4096, 4, 128).unwrap(), &TWO_H200, 132));
        // 1024 tokens: one chunk's up-projection (448 tiles) splits its last wave, which
        // 2 x 512 (224 tiles each, the last wave 92) cannot: one chunk
        assert_eq!(fitted(1024, 2), ChunkPlan::new(1024, 1, 128).unwrap());
        assert_eq!(fitted(1024, 4), ChunkPlan::new(1024, 1, 128).unwrap());
        assert!(one(1024) < waves(&ChunkPlan::new(1024, 2, 128).unwrap(), &TWO_H200, 132));
        // 8192 tokens: equal halves lose the split, which a first chunk of 31 tile rows
        // keeps, but by less than the slack: equal halves
        let slack = ChunkPlan::slack(&TWO_H200, 132);
        let halves = ChunkPlan::new(8192, 2, 128).unwrap();
        let first_31 = ChunkPlan { ranges: vec![(0, 3968), (3968, 8192)] };
        assert!(waves(&first_31, &TWO_H200, 132) == one(8192) && one(8192) < waves(&halves, &TWO_H200, 132));
        assert!(waves(&halves, &TWO_H200, 132) <= one(8192) + slack);
        assert_eq!(fitted(8192, 2), halves);
        assert_eq!(fitted(8192, 4), halves);
        for m in [1, 127, 128, 1000, 1024, 3000, 4096, 8191, 8192, 16384, 40000] {
            for c in 1..=6 {
                let p = fitted(m, c);
                assert!(covers(&p, m) && p.ranges().len() <= c, "{m} rows in {c}: {p:?}");
                for &(s, e) in &p.ranges()[..p.ranges().len() - 1] {
                    assert!(s % 128 == 0 && (e - s) % 128 == 0, "{m} rows in {c}: {p:?}");
                }
                let equal = waves(&ChunkPlan::new(m, c, 128).unwrap(), &TWO_H200, 132);
                assert!(waves(&p, &TWO_H200, 132) <= equal + slack, "{m} rows in {c}: {p:?}");
            }
        }
    }

    /// Every way to cut a few tiles' rows, tried: the plan takes the
    /// fewest waves (the first chunk's last wave split where that pays),
    /// then the most chunks, then the smallest largest chunk, then the
    /// larger chunks first; or equal chunks of that count where they take
    /// at most the slack more.
    #[test]
    fn the_fitted_plan_is_the_best_of_every_cut() {
        fn cuts(left: usize, most: usize, at: &mut Vec<usize>, all: &mut Vec<Vec<usize>>) {
            if left == 0 {
                all.push(at.clone());
                return;
            }
            if at.len() == most {
                return;
            }
            for r in 1..=left {
                at.push(r);
                cuts(left - r, most, at, all);
                at.pop();
            }
        }
        let shapes: [&[ChunkGemm]; 3] =
            [&TWO_H200, &[ChunkGemm { tiles_n: 3, k: 10 }], &[ChunkGemm { tiles_n: 5, k: 7 }, ChunkGemm { tiles_n: 2, k: 30 }]];
        for gemms in shapes {
            for sms in [4, 7, 132] {
                for tiles in 1..=12 {
                    for chunks in 1..=4 {
                        let mut all = Vec::new();
                        cuts(tiles, chunks, &mut Vec::new(), &mut all);
                        let key = |c: &Vec<usize>| {
                            let w: u64 = c.iter().enumerate().map(|(i, &r)| gemms.iter().map(|g| g.cost(r, sms, i == 0)).sum::<u64>()).sum();
                            (w, std::cmp::Reverse(c.len()), *c.iter().max().unwrap(), std::cmp::Reverse(c.clone()))
                        };
                        let best = all.iter().min_by_key(|c| key(c)).unwrap();
                        // equal chunks of its count: the first tiles % count a tile longer
                        let n = best.len();
                        let equal: Vec<usize> = (0..n).map(|i| tiles / n + usize::from(i < tiles % n)).collect();
                        let want = if key(&equal).0 <= key(best).0 + ChunkPlan::slack(gemms, sms) { &equal } else { best };
                        let p = ChunkPlan::fitted(tiles * 128, chunks, 128, gemms, sms).unwrap();
                        let got: Vec<usize> = p.ranges().iter().map(|(a, b)| (b - a) / 128).collect();
                        assert_eq!(&got, want, "{tiles} tiles in {chunks}, {sms} SMs, {gemms:?}");
                    }
                }
            }
        }
    }
}
