//! The raster tier, shared by every atom: which C tile a block computes.

use super::writer::Writer;
use crate::spec::Raster;

/// The device functions the raster calls: the Hilbert curve's.
pub fn helpers(w: &mut Writer, raster: Raster) {
    if raster == Raster::Hilbert {
        hilbert_fn(w);
    }
}

/// Defines `block_m` and `block_n`, the origin of this block's `bm x bn` C
/// tile, from the block index (one block per tile).
pub fn raster(w: &mut Writer, raster: Raster, bm: u32, bn: u32) {
    raster_as(w, raster, bm, bn, ["block_m", "block_n"]);
}

/// [`raster`]'s tile origin defined under the names `origin` gives.
pub fn raster_as(w: &mut Writer, raster: Raster, bm: u32, bn: u32, origin: [&str; 2]) {
    match raster {
        Raster::Grouped(g) => {
            let tile = ("tile", Some("blockIdx.y * gridDim.x + blockIdx.x"));
            grouped(w, g, bm, bn, tile, ["gridDim.x", "(int)gridDim.y"], origin);
        }
        Raster::Hilbert => {
            w.line("const int tile = blockIdx.y * gridDim.x + blockIdx.x;");
            hilbert(w, bm, bn, "tile", ["(int)gridDim.y", "(int)gridDim.x"], origin);
        }
        _ => {
            w.line("// raster (row): blockIdx.x walks the N tiles, blockIdx.y the M tiles");
            w.line(format!("const int {} = blockIdx.y * {bm};", origin[0]));
            w.line(format!("const int {} = blockIdx.x * {bn};", origin[1]));
        }
    }
}

/// `block_m` and `block_n` of C tile number `tile` (a variable in scope) of
/// a grid `tiles_n` tiles wide and `tiles_m` tall (persistent schedules),
/// defined under the names `origin` gives.
pub fn tile_origin(w: &mut Writer, raster: Raster, bm: u32, bn: u32, tile: &str, origin: [&str; 2]) {
    match raster {
        Raster::Grouped(g) => grouped(w, g, bm, bn, (tile, None), ["tiles_n", "tiles_m"], origin),
        Raster::Hilbert => hilbert(w, bm, bn, tile, ["tiles_m", "tiles_n"], origin),
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

/// The Hilbert raster's origin (named by `origin`) of C tile number `tile`
/// of a grid `tiles[0]` tiles tall and `tiles[1]` wide.
fn hilbert(w: &mut Writer, bm: u32, bn: u32, tile: &str, [tiles_m, tiles_n]: [&str; 2], origin: [&str; 2]) {
    w.line("// raster (hilbert): tiles in the order of a Hilbert curve over the tile grid, so that");
    w.line("// tiles in flight at once lie close together and share A and B tiles in the L2");
    w.line("int tile_m, tile_n;");
    w.line(format!("hilbert_cell({tile}, {tiles_m}, {tiles_n}, tile_m, tile_n);"));
    w.line(format!("const int {} = tile_m * {bm};", origin[0]));
    w.line(format!("const int {} = tile_n * {bn};", origin[1]));
}

/// `hilbert_cell(d, w, h, x, y)`: cell `(x, y)` of a `w x h` grid at step
/// `d` of a generalized Hilbert curve (Červený's "gilbert", for any
/// rectangle), found by descending the curve's recursive splits: each turn
/// keeps the one sub-rectangle that holds step `d`, so the loop runs about
/// log2 of the grid's longer side times. The curve starts at (0, 0) and
/// moves one cell at a time (one diagonal step at most where a side is odd).
fn hilbert_fn(w: &mut Writer) {
    w.line("// the cell (x, y) at step d of a generalized Hilbert curve over a w x h grid; the");
    w.line("// curve fills the rectangle (a, b) from (x, y), a along its major axis: each turn");
    w.line("// keeps the part of it that holds step d");
    w.block("__device__ __forceinline__ int sign(int v)", |w| w.line("return (v > 0) - (v < 0);"));
    w.block("__device__ __forceinline__ int magnitude(int v)", |w| w.line("return v < 0 ? -v : v;"));
    w.block("__device__ __forceinline__ void hilbert_cell(int d, int w, int h, int& x, int& y)", |w| {
        w.line("int ax = w >= h ? w : 0, ay = w >= h ? 0 : h;");
        w.line("int bx = w >= h ? 0 : w, by = w >= h ? h : 0;");
        w.line("x = 0;");
        w.line("y = 0;");
        w.block("for (;;)", |w| {
            w.line("const int width = magnitude(ax + ay), height = magnitude(bx + by);");
            w.line("const int dax = sign(ax), day = sign(ay), dbx = sign(bx), dby = sign(by);");
            w.block("if (height == 1 || width == 1)", |w| {
                w.line("// a single row or column: walk it");
                w.line("x += height == 1 ? dax * d : dbx * d;");
                w.line("y += height == 1 ? day * d : dby * d;");
                w.line("return;");
            });
            w.line("int ax2 = ax >> 1, ay2 = ay >> 1, bx2 = bx >> 1, by2 = by >> 1;");
            w.block("if (2 * width > 3 * height)", |w| {
                w.line("// long: two halves along a, each the full height");
                w.block("if ((magnitude(ax2 + ay2) & 1) && width > 2)", |w| {
                    w.line("ax2 += dax;");
                    w.line("ay2 += day;");
                });
                w.line("const int first = magnitude((ax2 + ay2) * (bx + by));");
                w.block("if (d < first)", |w| {
                    w.line("ax = ax2;");
                    w.line("ay = ay2;");
                });
                w.block("else", |w| {
                    w.line("d -= first;");
                    w.line("x += ax2;");
                    w.line("y += ay2;");
                    w.line("ax -= ax2;");
                    w.line("ay -= ay2;");
                });
                w.line("continue;");
            });
            w.line("// otherwise three parts: up half of b, across all of a, back down");
            w.block("if ((magnitude(bx2 + by2) & 1) && height > 2)", |w| {
                w.line("bx2 += dbx;");
                w.line("by2 += dby;");
            });
            w.line("const int first = magnitude((bx2 + by2) * (ax2 + ay2));");
            w.block("if (d < first)", |w| {
                w.line("const int tx = ax2, ty = ay2;");
                w.line("ax = bx2;");
                w.line("ay = by2;");
                w.line("bx = tx;");
                w.line("by = ty;");
                w.line("continue;");
            });
            w.line("d -= first;");
            w.line("const int second = magnitude((ax + ay) * ((bx - bx2) + (by - by2)));");
            w.block("if (d < second)", |w| {
                w.line("x += bx2;");
                w.line("y += by2;");
                w.line("bx -= bx2;");
                w.line("by -= by2;");
                w.line("continue;");
            });
            w.line("d -= second;");
            w.line("x += (ax - dax) + (bx2 - dbx);");
            w.line("y += (ay - day) + (by2 - dby);");
            w.line("const int tx = ax, ty = ay;");
            w.line("ax = -bx2;");
            w.line("ay = -by2;");
            w.line("bx = -(tx - ax2);");
            w.line("by = -(ty - ay2);");
        });
    });
    w.line("");
}
