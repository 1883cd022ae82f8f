//! The raster tier, shared by every atom: which C tile a block computes.

use super::writer::Writer;
use crate::spec::Raster;

/// Defines `block_m` and `block_n`, the origin of this block's `bm x bn` C
/// tile, from the block index (one block per tile).
pub fn raster(w: &mut Writer, raster: Raster, bm: u32, bn: u32) {
    match raster {
        Raster::Grouped(g) => {
            let tile = ("tile", Some("blockIdx.y * gridDim.x + blockIdx.x"));
            grouped(w, g, bm, bn, tile, ["gridDim.x", "(int)gridDim.y"], ["block_m", "block_n"]);
        }
        _ => {
            w.line("// raster (row): blockIdx.x walks the N tiles, blockIdx.y the M tiles");
            w.line(format!("const int block_m = blockIdx.y * {bm};"));
            w.line(format!("const int block_n = blockIdx.x * {bn};"));
        }
    }
}

/// `block_m` and `block_n` of C tile number `tile` (a variable in scope) of
/// a grid `tiles_n` tiles wide and `tiles_m` tall (persistent schedules),
/// defined under the names `origin` gives.
pub fn tile_origin(w: &mut Writer, raster: Raster, bm: u32, bn: u32, tile: &str, origin: [&str; 2]) {
    match raster {
        Raster::Grouped(g) => grouped(w, g, bm, bn, (tile, None), ["tiles_n", "tiles_m"], origin),
        _ => {
            w.line("// raster (row): tiles in row-major order");
            w.line(format!("const int {} = ({tile} / tiles_n) * {bm};", origin[0]));
            w.line(format!("const int {} = ({tile} % tiles_n) * {bn};", origin[1]));
        }
    }
}

/// The grouped raster's origin (named by `origin`) of C tile number
/// `tile.0` (defined as `tile.1` where given, else in scope) of a grid
/// `tiles_n` tiles wide and `tiles_m` tall.
fn grouped(w: &mut Writer, g: u32, bm: u32, bn: u32, tile: (&str, Option<&str>), [tiles_n, tiles_m]: [&str; 2], origin: [&str; 2]) {
    w.line(format!("// raster (grouped): tiles are taken in order down bands {g} M tiles tall,"));
    w.line("// column by column, so that a wave of blocks shares A and B tiles in the L2");
    let (tile, definition) = tile;
    if let Some(d) = definition {
        w.line(format!("const int {tile} = {d};"));
    }
    w.line(format!("const int band = {tile} / ({g} * {tiles_n});"));
    w.line(format!("const int band_rows = {tiles_m} - band * {g} < {g} ? {tiles_m} - band * {g} : {g};"));
    w.line(format!("const int in_band = {tile} % ({g} * {tiles_n});"));
    w.line(format!("const int {} = (band * {g} + in_band % band_rows) * {bm};", origin[0]));
    w.line(format!("const int {} = (in_band / band_rows) * {bn};", origin[1]));
}
