//! Shared-memory layouts of the tensor-core paths: where element `e` of line
//! `line` of an operand tile lives. One function per tile, emitted into the
//! kernel and called by both sides: the copies that write the tile and the
//! fragment loads that read it.

use super::writer::Writer;
use crate::spec::{SmemTile, Swizzle};

/// Emits `__device__ int {name}(int line, int e)`, the element offset of
/// (line, e) in one stage of `tile`, for elements of `bytes` bytes (2, or 1
/// for 8-bit floats: a 16-byte chunk holds 8 or 16).
pub fn offset_fn(w: &mut Writer, name: &str, what: &str, tile: SmemTile, swizzle: Swizzle, bytes: u32) {
    let SmemTile { lines, len, row } = tile;
    match swizzle {
        Swizzle::Xor => {
            let per_chunk = 16 / bytes;
            let bits = per_chunk.trailing_zeros();
            let chunks = len / per_chunk;
            let (period, mask) = xor_pattern(chunks);
            w.line(format!("// {what}: {lines} lines of {len} elements ({chunks} 16-byte chunks); chunk c of line l is stored"));
            let shift = if period == 1 { "line".to_string() } else { format!("(line / {period})") };
            w.line(format!("// at chunk c ^ {shift} % {}: the 8 rows an ldmatrix reads at one chunk land in 8 different bank groups", mask + 1));
            w.block(format!("__device__ __forceinline__ int {name}(int line, int e)"), |w| {
                let term = if period == 1 { format!("(line & {mask})") } else { format!("((line >> {}) & {mask})", period.trailing_zeros()) };
                w.line(format!("return line * {row} + (((e >> {bits}) ^ {term}) << {bits}) + (e & {});", per_chunk - 1));
            });
        }
        _ => {
            let pad = if row > len { format!(", each padded to {row} so that successive lines start in other banks") } else { String::new() };
            w.line(format!("// {what}: {lines} lines of {len} elements{pad}"));
            w.block(format!("__device__ __forceinline__ int {name}(int line, int e)"), |w| {
                w.line(format!("return line * {row} + e;"));
            });
        }
    }
}

/// The XOR pattern for lines of `chunks` 16-byte chunks: lines `period`
/// apart share a pattern, which XORs the chunk index with `(line / period) &
/// mask`, so that 8 consecutive lines cover all 8 bank groups (128 bytes).
pub fn xor_pattern(chunks: u32) -> (u32, u32) {
    let c = chunks.clamp(1, 8);
    (8 / c, c - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 8 lines an ldmatrix reads at one logical chunk land in 8 distinct
    /// 16-byte bank groups, and within a line the permutation is one-to-one.
    #[test]
    fn xor_spreads_eight_lines_over_all_bank_groups() {
        for chunks in [2u32, 4, 8, 16, 32] {
            let (period, mask) = xor_pattern(chunks);
            let at = |line: u32, c: u32| line * chunks + (c ^ ((line / period) & mask));
            for first in [0u32, 8, 16] {
                for c in 0..chunks {
                    let mut groups: Vec<u32> = (first..first + 8).map(|l| at(l, c) % 8).collect();
                    groups.sort_unstable();
                    groups.dedup();
                    assert_eq!(groups.len(), 8, "{chunks} chunks, chunk {c}, lines from {first}");
                }
                let mut within: Vec<u32> = (0..chunks).map(|c| at(first + 3, c) - (first + 3) * chunks).collect();
                within.sort_unstable();
                assert_eq!(within, (0..chunks).collect::<Vec<_>>());
            }
        }
    }
}
