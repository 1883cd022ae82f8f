//! How a layer's M rows (tokens) are split into chunks, each computed and
//! then communicated while the next one computes.

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
    /// few tiles, and never an empty one.
    pub fn new(m: usize, chunks: usize, align: usize) -> Result<Self, crate::TpError> {
        if m == 0 || chunks == 0 || align == 0 {
            return Err(crate::TpError::Args(format!(
                "a chunk plan needs rows, chunks and an alignment: m = {m}, chunks = {chunks}, align = {align}"
            )));
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

    /// Each chunk's rows, `start..end`, in order, covering `0..m` once.
    pub fn ranges(&self) -> &[(usize, usize)] {
        &self.ranges
    }

    /// The most rows a chunk holds.
    pub fn largest(&self) -> usize {
        self.ranges.iter().map(|(s, e)| e - s).max().unwrap_or(0)
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
    fn an_empty_plan_is_an_error() {
        for (m, c, a) in [(0, 4, 128), (100, 0, 128), (100, 4, 0)] {
            assert!(ChunkPlan::new(m, c, a).is_err());
        }
    }
}
