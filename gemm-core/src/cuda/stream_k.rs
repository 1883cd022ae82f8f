//! The stream-K schedule (`persistent = stream_k`), shared by every atom: a
//! grid of as many blocks as the GPU holds at once, the K steps of all C
//! tiles laid end to end and split evenly over them, so no block sits idle
//! in a part-full last wave.
//!
//! A block's share of K steps falls into units, one per C tile it touches. A
//! unit that holds its tile's first K step owns the tile: it adds the partial
//! sums the later shares left for it, in share order, and stores C. A unit
//! that starts inside its tile is always its share's first, so it never
//! waits on anyone: it leaves its partial sum and a flag, then goes on. An
//! owner waits for all its helpers' flags at once, a thread to each, then
//! adds their sums in share order (at most 8 shares to a tile).
//!
//! Which share a block takes is not its block index but the order in which
//! blocks start: each takes a ticket (an atomic count) as it begins, and
//! the first to start gets the last share, the next the one before it.
//! An owner waits only on later shares, which went to blocks that had
//! started before it; such a block is resident and waits, in turn, only on
//! blocks that started before it did, so the waits always end, however few
//! blocks the GPU holds at once (another kernel holding SMs, MPS limits).
//! Handing shares out in start order but from the first share (owners
//! waiting on blocks that had not started) serialized whole grids: a grid
//! that cannot hang must run its dependencies first.
//!
//! A cp.async pipeline is filled once per block and flows through the whole
//! share, its copies running ahead into the next C tile (the producer
//! below): on the H100 that took `autotuned` from 99.4% to 100.9% of cuBLAS
//! at 4096^3, where a block computes four to five units and its warps are
//! the only ones on the SM.
//!
//! Measured on the H100 (BENCHMARKS.md), a variant that computed whole waves
//! of tiles first and shared only the last one to two waves was slower at
//! every size, and a loop that chose between the two kinds of unit cost 1.5%
//! in the main loop's scheduling: the schedule stays this simple.
//!
//! On the Hopper path that variant is a schedule of its own, `persistent =
//! hybrid` (see [`Tiling::share`]). On the H100 it beat the persistent walk
//! where that walk's last wave is nearly empty (3072 x 3072 x 12288, 2.18
//! waves: 743 against 623 TFLOP/s) and lost where it is nearly full
//! (4096^3, 3.88 waves: 626 against 767): its shares started at staggered
//! K steps, so blocks stopped reading the same slices of A and B at once
//! and the L2 stopped sharing them (Nsight: 65% more bytes from DRAM).
//! Its shares now run in step: a share that crosses into a next tile runs
//! that tile's K steps first, from K step 0, and its first tile's after;
//! the tile's owner is then the share with its last K step, and tickets go
//! from the first share on.

use super::copy::Checks;
use super::epilogue::Team;
use super::layout::sum;
use super::schedule;
use super::writer::Writer;
use crate::spec::Raster;

/// The flag handshake between the blocks that share a tile.
pub fn helpers(w: &mut Writer) {
    w.line("// stream-K flags: a block publishes its partial sum with a release store;");
    w.line("// the tile's owner reads the flag with an acquire load before the sum");
    w.block("__device__ __forceinline__ unsigned ld_acquire(const unsigned* p)", |w| {
        w.line("unsigned v;");
        w.line("asm volatile(\"ld.acquire.gpu.global.u32 %0, [%1];\\n\" : \"=r\"(v) : \"l\"(p) : \"memory\");");
        w.line("return v;");
    });
    w.block("__device__ __forceinline__ void st_release(unsigned* p, unsigned v)", |w| {
        w.line("asm volatile(\"st.release.gpu.global.u32 [%0], %1;\\n\" :: \"l\"(p), \"r\"(v) : \"memory\");");
    });
    w.line("");
}

/// The kernel's last parameters: scratch for partial sums and their flags,
/// zeroed, with one more word past the grid's flags: the count of tickets.
pub const PARAMS: &str = "float* __restrict__ partials, unsigned* __restrict__ flags";

/// A block's C tile and how its threads hold the accumulators.
pub struct Tiling {
    pub raster: Raster,
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    /// The threads that hold the accumulators and meet at the fix-up's
    /// barriers: the block, or a specialized kernel's consumers.
    pub team: Team,
    /// Each thread's accumulators: `acc` indexed by these loops (variable,
    /// extent), outermost first, e.g. `acc[ii][jj]` over `ii` and `jj`.
    pub acc: &'static str,
    pub loops: Vec<(&'static str, u32)>,
    /// `edges = guarded`: the producer keeps the origin of the tile it
    /// copies (`copy_m`, `copy_n`) for the copies' checks.
    pub guarded: bool,
    /// How blocks share C tiles ([`Self::share`]).
    pub shares: Shares,
}

/// The schedules that share C tiles along K.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shares {
    /// `persistent = stream_k`: every tile's K steps, split evenly.
    StreamK,
    /// `persistent = hybrid`: whole waves of tiles first, a block to a
    /// tile; the K steps of the tiles left split evenly, each share run in
    /// step with the others (its next tile's K steps from 0 first).
    Hybrid,
    /// `persistent = tail_split`: whole waves first; then each tile left
    /// split along K into equal pieces, piece `j` of every tile to a block
    /// of its own, all at once: the blocks that read the same slices of A
    /// and B read them in step, as a wave does.
    TailSplit,
}

impl Tiling {
    /// Accumulators per thread.
    fn per_thread(&self) -> u32 {
        self.loops.iter().map(|l| l.1).product()
    }

    /// `batch`, `block_m` and `block_n` of C tile number `tile` (in scope)
    /// of all batches' tiles laid end to end.
    ///
    /// In the row raster, where M ends in a partial tile, the tiles go
    /// column by column instead, and where N does too, each column shifted
    /// along N by a tile a row: in rows, the partial row's tiles (their
    /// copies checked) all fell in the last blocks' shares, which the
    /// launch then waited for; column by column one ends each column, and
    /// shifted the partial column's spread too. `autotuned` (H200, `gemm-lab
    /// variants` with each edit by hand) at 4095 x 11008 x 4096: 45.1
    /// TFLOP/s in rows, 48.1 by columns; at 4095 x 4097 x 4100: 39.8 in
    /// rows, 41.5 shifted (4095 x 4097 x 4096: 40.3, 42.2).
    pub fn tile_origin(&self, w: &mut Writer) {
        w.line("const int batch = tile / (tiles_m * tiles_n);");
        w.line("const int in_batch = tile - batch * (tiles_m * tiles_n);");
        if self.raster != Raster::Row {
            return schedule::tile_origin(w, self.raster, self.bm, self.bn, "in_batch", ["block_m", "block_n"]);
        }
        let (bm, bn) = (self.bm, self.bn);
        w.line("// raster (row): tiles in row-major order; where M ends in a partial tile, column by column (each");
        w.line("// column shifted a tile along N a row where N does too), so that the partial row's (and column's)");
        w.line("// tiles spread over the blocks' shares instead of ending them");
        w.line(format!("const bool ragged_m = M % {bm} != 0, ragged_n = N % {bn} != 0;"));
        w.line(format!("const int block_m = (ragged_m ? in_batch % tiles_m : in_batch / tiles_n) * {bm};"));
        w.line(format!(
            "const int block_n = (ragged_m ? (in_batch / tiles_m + (ragged_n ? in_batch % tiles_m : 0)) % tiles_n : in_batch % tiles_n) * {bn};"
        ));
    }

    /// This block's share of the K steps, `[first, last)`, and the size of a
    /// partial sum.
    ///
    /// Under `hybrid` the whole waves' tiles come first, tile `blockIdx.x`,
    /// `blockIdx.x + grid`, ... a block each (the persistent walk's order:
    /// the tiles in flight at once lie side by side in the raster and share
    /// A and B in the L2, where stream-K's staggered shares did not; by
    /// block index, not by ticket, because the tickets fall to SMs in no
    /// fixed order: walked by ticket, the same waves took 2% more cycles on
    /// the H100 (7% under `tail_split`), at the same DRAM bytes and 45%
    /// more L2 traffic), then the K steps
    /// of the tiles left, fewer than the grid, split as in stream-K. A
    /// block's whole tiles take the indices before its share, so that
    /// `[first, last)` stays one run: [`Self::tile_of`] and [`Self::k_of`]
    /// map an index to its tile and K step. A share runs in step with the
    /// others: where it crosses into a next tile, that tile's K steps (from
    /// K step 0, as every block's wave did) run before its first tile's
    /// (from where the share starts), so that all blocks run within a tile
    /// less a share of the same K step (8 of 64 at 4096^3 on 132 SMs)
    /// instead of anywhere in the tile; the share with a tile's last K step
    /// owns it, and a ticket's share counts from the first.
    ///
    /// Under `tail_split` each of the tiles left (`tail`, fewer than the
    /// grid) is split along K into `pieces` runs (the grid over the tail,
    /// at most 8 and at most its K steps), piece `j` of tile left `t` to
    /// share `t + j * tail`: piece 0 to its owner, the others to helpers,
    /// one piece a block, all begun at once after the whole waves. Blocks
    /// that read the same slices of A and B then read them in step. (A
    /// share that starts inside a tile keeps its block out of step with its
    /// neighbours' K slices: on the H100, pure stream-K ran `tma_store` at
    /// 759 TFLOP/s where every share was whole tiles, 4224 x 4096 x 4096,
    /// and 513 at 4096^3, where shares start inside tiles.) At 4096^3 on
    /// 132 SMs: 116 tiles left, one piece each, the last wave as the
    /// persistent walk runs it; at 4096 x 4224 x 4096, 16 tiles of 8
    /// pieces.
    pub fn share(&self, w: &mut Writer, ticket_at: u32) {
        if self.shares == Shares::TailSplit {
            w.line("// schedule (tail split): whole waves of C tiles first, a block to a tile (tiles blockIdx.x,");
            w.line("// blockIdx.x + grid, ...: the persistent walk's blocks on the same SMs, which share A and B in the L2);");
            w.line("// then each tile left split along K into `pieces` runs, piece j of tile left t to share");
            w.line("// t + j * tail (piece 0 to the tile's owner), all at once, so that the blocks that read the");
            w.line("// same slices of A and B read them in step; [first, last) indexes this block's K steps, its");
            w.line("// whole tiles' before shared_from, then its piece's by their K step in the tile (see tile_of)");
        } else if self.shares == Shares::Hybrid {
            w.line("// schedule (hybrid): whole waves of C tiles first, a block to a tile (tiles blockIdx.x,");
            w.line("// blockIdx.x + grid, ...: the persistent walk's blocks on the same SMs, which share A and B in the L2),");
            w.line("// then the K steps of the tiles left (fewer than the grid), tile after tile, split evenly");
            w.line("// over the grid as in stream-K, each share run from the K step 0 it holds, in step with");
            w.line("// the others; [first, last) indexes this block's K steps, its whole tiles' before");
            w.line("// shared_from, its share of the rest from there (see tile_of)");
        } else {
            w.line("// schedule (stream-K): the K steps of all C tiles, tile after tile, split");
            w.line("// evenly over the grid; [first, last) is this block's share");
        }
        w.line("// (the tiles of every batch, one batch after another; a partial tile counts whole)");
        w.line(format!("const int tiles_m = (M + {}) / {};", self.bm - 1, self.bm));
        w.line(format!("const int tiles_n = (N + {}) / {};", self.bn - 1, self.bn));
        w.line(format!("const int k_tiles = (K + {}) / {};  // K steps per C tile", self.bk - 1, self.bk));
        if self.shares == Shares::TailSplit {
            w.line("const int tiles_all = batches * tiles_m * tiles_n;");
            w.line("const int dp_tiles = tiles_all / gridDim.x * gridDim.x;  // the whole waves' tiles");
            w.line("const int tail = tiles_all - dp_tiles;  // the tiles left, fewer than the grid");
            w.line("// pieces of a tile left: as many as the grid holds, at most 8 and none empty");
            w.line("int pieces = tail == 0 ? 0 : (int)gridDim.x / tail;");
            w.line("if (pieces > 8) pieces = 8;");
            w.line("if (pieces > k_tiles) pieces = k_tiles;");
        } else if self.shares == Shares::Hybrid {
            w.line("const int tiles_all = batches * tiles_m * tiles_n;");
            w.line("int dp_tiles = tiles_all / gridDim.x * gridDim.x;  // the whole waves' tiles");
            w.line("// at most 8 blocks to a shared tile (as the grid of stream-K keeps it): too few");
            w.line("// tiles left share the last whole wave's with them");
            w.line("if (tiles_all > dp_tiles && (tiles_all - dp_tiles) * 8 < (int)gridDim.x && dp_tiles > 0) dp_tiles -= gridDim.x;");
            w.line("const long long work = (long long)(tiles_all - dp_tiles) * k_tiles;  // the K steps shared");
        } else {
            w.line("const long long work = (long long)batches * tiles_m * tiles_n * k_tiles;");
        }
        if self.shares == Shares::Hybrid {
            w.line("// the share: the block that starts first takes the first share, the next the one");
            w.line("// after, so that an owner (its tile's last K step's share) only ever waits on blocks");
            w.line("// that started before it");
        } else {
            w.line("// the share: the block that starts first takes the last share, the next the one");
            w.line("// before, so that an owner only ever waits on blocks that started before it");
        }
        w.line("extern __shared__ unsigned smem_words[];  // the dynamic shared memory, in words");
        w.line(format!("unsigned& ticket = smem_words[{}];  // past the tiles", ticket_at / 4));
        w.block("if (threadIdx.x == 0)", |w| {
            w.line("ticket = atomicAdd(&flags[gridDim.x], 1u);");
            w.line("// the last block to take one puts the count back to zero for the next launch");
            w.line("if (ticket == gridDim.x - 1) flags[gridDim.x] = 0u;");
        });
        w.line("__syncthreads();");
        w.line(if self.shares == Shares::Hybrid { "const unsigned me = ticket;" } else { "const unsigned me = gridDim.x - 1 - ticket;" });
        match self.shares {
            Shares::TailSplit => {
                w.line("const int piece_j = tail == 0 ? 0 : (int)me / tail;  // this share's piece of tile left me % tail");
                w.line("const bool in_tail = piece_j < pieces;");
                w.line("// a piece's K steps: k_tiles * j / pieces .. k_tiles * (j + 1) / pieces of its tile");
                w.line("const long long shared_from = in_tail ? (long long)k_tiles * piece_j / pieces : 0;");
                w.line("const long long first = shared_from - (long long)(dp_tiles / gridDim.x) * k_tiles;");
                w.line("const long long last = in_tail ? (long long)k_tiles * (piece_j + 1) / pieces : shared_from;");
            }
            Shares::Hybrid => {
                w.line("const long long shared_from = work * me / gridDim.x;");
                w.line("const long long first = shared_from - (long long)(dp_tiles / gridDim.x) * k_tiles;");
                w.line("const long long last = work * (me + 1) / gridDim.x;");
                w.line("// in step: where the share crosses into a next tile, its K steps from that tile's");
                w.line("// start (`wrap` of them) run first, from K step 0 as every block's do, then the");
                w.line("// first tile's from where the share starts; indices [shared_from, cut) run the former");
                w.line("const long long boundary = (shared_from / k_tiles + 1) * k_tiles;");
                w.line("const long long wrap = shared_from % k_tiles != 0 && last > boundary ? last - boundary : 0;");
                w.line("const long long cut = shared_from + wrap;");
            }
            Shares::StreamK => {
                w.line("const long long first = work * me / gridDim.x;");
                w.line("const long long last = work * (me + 1) / gridDim.x;");
            }
        }
        w.line(format!("// a partial sum: {} accumulators a thread, stored so that a warp's stores are contiguous", self.per_thread()));
        w.line(format!("const int slot = {};  // floats per block", self.per_thread() * self.team.threads));
    }

    /// The loop over this block's units; `body` computes the unit's `tiles`
    /// K steps, ending at `it`, into the accumulators, its copies checked as
    /// told (a body that needs the unit's tile works it out with
    /// [`Self::unit_tile`] and [`Self::tile_origin`] in a scope of its own).
    /// Each unit then hands its partial sum over or, as its tile's owner,
    /// adds the others' and runs `epilogue`, in scope with `batch`,
    /// `block_m` and `block_n`.
    ///
    /// Guarded, a launch whose C tiles all lie wholly inside M, N and K (sizes
    /// that are tile multiples) runs a loop with unchecked copies, any other
    /// a loop with a branch per tile, in every block. In one loop for all
    /// sizes, the checked copies' code took registers from the K loop: ptxas
    /// issued 52 of its 96 shared-memory loads back to back instead of
    /// between the FMAs (SASS of `autotuned`). The choice is the launch's,
    /// not each block's: where blocks whose shares hold no edge tile took the
    /// unchecked loop beside others in the branch loop, `autotuned` ran
    /// 4096 x 11007 x 4096 at 38.2 TFLOP/s; every block in the branch loop,
    /// 49.0, and every block in the unchecked loop at 4096 x 11008 x 4096
    /// 51.7 (H200, 2026-11-29, 097ba97).
    pub fn units(&self, w: &mut Writer, body: impl Fn(&mut Writer, Checks), epilogue: impl Fn(&mut Writer)) {
        // (the hybrid's indices are no tile-major run: its shares are TMA's, never checked)
        debug_assert!(self.shares != Shares::Hybrid, "the hybrid runs on TMA stages alone (support.rs)");
        if !self.guarded {
            return self.unit_loop(w, Checks::Off, &body, &epilogue);
        }
        w.line("// whether every C tile lies wholly inside M, N and K, so that no copy needs a check (the");
        w.line("// launch's choice: blocks in the two loops side by side ran slower than all in the checked one)");
        w.line(format!("const bool all_whole = M % {} == 0 && N % {} == 0 && K % {} == 0;", self.bm, self.bn, self.bk));
        w.block("if (all_whole)", |w| self.unit_loop(w, Checks::Off, &body, &epilogue));
        w.block("else", |w| {
            w.line("// sizes with edges: a branch per tile picks checked or unchecked copies");
            self.unit_loop(w, Checks::PerTile, &body, &epilogue)
        });
    }

    /// [`Self::units`] for staging that needs no checks of its own (TMA
    /// fills what lies past the edges with zeros): one loop for every share.
    pub fn units_unchecked(&self, w: &mut Writer, body: impl Fn(&mut Writer, Checks), epilogue: impl Fn(&mut Writer)) {
        self.unit_loop(w, Checks::Off, &body, &epilogue)
    }

    /// The C tile of the block's K step `v` (an index in `[first, last)`).
    pub fn tile_of(&self, v: &str) -> String {
        // the whole waves by block index, as the persistent walk: see share()
        let dp = format!("(int)blockIdx.x + (int)(({v} - first) / k_tiles) * gridDim.x");
        match self.shares {
            Shares::TailSplit => format!("({v} < shared_from ? {dp} : dp_tiles + (int)me % tail)"),
            Shares::Hybrid => format!("({v} < shared_from ? {dp} : dp_tiles + (int)({} / k_tiles))", Self::in_step(v)),
            Shares::StreamK => format!("(int)({v} / k_tiles)"),
        }
    }

    /// The K step within its C tile of the block's K step `v`.
    pub fn k_of(&self, v: &str) -> String {
        match self.shares {
            Shares::TailSplit => format!("(int)({v} < shared_from ? ({v} - first) % k_tiles : {v})"),
            Shares::Hybrid => format!("(int)({v} < shared_from ? ({v} - first) % k_tiles : {} % k_tiles)", Self::in_step(v)),
            Shares::StreamK => format!("(int)({v} % k_tiles)"),
        }
    }

    /// Under `hybrid`, the shared K step that index `v` of the share runs
    /// (the share's steps past its first tile boundary come first).
    fn in_step(v: &str) -> String {
        format!("({v} < cut ? {v} + (boundary - shared_from) : {v} - wrap)")
    }

    /// `tiles`, the K steps of the unit that starts at index `it`, its first
    /// K step in its tile `k_step`: up to the tile's end or the share's (or,
    /// under `hybrid`, to where the share's order jumps back).
    pub fn unit_len(&self, w: &mut Writer, k_step: &str) {
        w.line(format!("const long long k_left = k_tiles - {k_step};"));
        let end = if self.shares == Shares::Hybrid {
            w.line("const long long run_end = it < cut ? cut : last;  // where the share's order jumps back, or its end");
            "run_end"
        } else {
            "last"
        };
        w.line(format!("const int tiles = (int)({end} - it < k_left ? {end} - it : k_left);"));
    }

    /// Whether the unit just computed leaves its partial sum to the tile's
    /// owner: under `hybrid` the owner holds the tile's last K step (it runs
    /// last: a share runs its first tile's K steps after the next tile's),
    /// elsewhere the tile's first.
    fn helps(&self) -> &'static str {
        if self.shares == Shares::Hybrid {
            "k_step + tiles < k_tiles"
        } else {
            "k_step > 0"
        }
    }

    fn unit_loop(&self, w: &mut Writer, checks: Checks, body: &dyn Fn(&mut Writer, Checks), epilogue: &dyn Fn(&mut Writer)) {
        w.block("for (long long it = first; it < last;)", |w| {
            w.line("// this unit: K steps of one C tile, up to the tile's end or the share's");
            self.unit_len(w, &self.k_of("it"));
            w.line("it += tiles;");
            body(w, checks);
            w.line("");
            // The tile, its first K step and its origin are worked out after
            // the K loop: live through it, they took registers the loop
            // needed, and `autotuned` ran 6% slower (its shared-memory loads
            // bunched up instead of interleaving with the FMAs).
            w.line("// the unit's tile and first K step, and where the tile lies, worked out after");
            w.line("// the K loop so that they hold no registers through it");
            self.unit_tile(w);
            self.tile_origin(w);
            w.line("");
            self.fixup(w);
            w.line("");
            epilogue(w);
        });
    }

    /// `tile` and `k_step`, the C tile and first K step of the unit whose
    /// `tiles` K steps end at `it`.
    pub fn unit_tile(&self, w: &mut Writer) {
        w.line(format!("const int tile = {};", self.tile_of("(it - tiles)")));
        w.line(format!("const int k_step = {};", self.k_of("(it - tiles)")));
    }

    /// The cp.async producer's cursor: the C tile and K step its next copy
    /// fetches, and `aim`, which points the copy sources (`a_src = ...`, as
    /// `sources` give them, in terms of `block_m`, `block_n` and `copy_k`)
    /// there. Guarded, `aim` also works out how many of that tile's K tiles
    /// copy without checks: all whole ones where it lies inside M and N;
    /// at those edges none, or where the copies `skip` lines past them,
    /// all but the last (which holds the operands' last lines), with
    /// `copy_rows` and `copy_cols`, the tile's rows inside M and columns
    /// inside N, for the unchecked copies' tests.
    pub fn producer(&self, w: &mut Writer, sources: &[String; 2], skip: bool) {
        debug_assert!(self.shares != Shares::Hybrid, "the hybrid runs on TMA stages alone (support.rs)");
        w.line("// the producer: copies run ahead of the math through this block's whole share,");
        w.line("// across its units, so the pipeline does not drain and refill between C tiles");
        if self.shares == Shares::TailSplit {
            w.line("int copy_tile, copy_k;  // the C tile and K step the next copy fetches (aim() works them out)");
        } else {
            w.line("int copy_tile = (int)(first / k_tiles);  // the C tile and K step the next copy fetches");
            w.line("int copy_k = (int)(first - (long long)copy_tile * k_tiles);");
        }
        w.line("int copies_left = (int)(last - first);  // K steps of the share not yet copied");
        if self.guarded {
            w.line("// the K tiles of that C tile that need no edge checks");
            w.line("int copy_whole = 0;");
            if skip {
                w.line("// that tile's rows inside M and columns inside N: copies past them are skipped");
                w.line(format!("int copy_rows = {}, copy_cols = {};", self.bm, self.bn));
            }
            // Kept in registers through the K loop, the origin slowed
            // `autotuned`'s loop (see `units`): the few checked tiles work it out.
            w.line("// the origin of that C tile, for the checked copies at its edges");
            w.statement_block("const auto copy_origin = [&](int& copy_m, int& copy_n)", |w| {
                w.line("const int tile = copy_tile;");
                self.tile_origin(w);
                w.line("copy_m = block_m;");
                w.line("copy_n = block_n;");
            });
        }
        w.line("// points the copies' sources at K step copy_k of C tile copy_tile");
        w.statement_block("const auto aim = [&]()", |w| {
            if self.shares == Shares::TailSplit {
                w.line("// the tail split's tiles are no run: the cursor follows the share's index of the next copy");
                w.line("if (copies_left == 0) return;  // past the share's last copy (where no tile is left)");
                w.line("const long long v = last - copies_left;");
                w.line(format!("copy_tile = {};", self.tile_of("v")));
                w.line(format!("copy_k = {};", self.k_of("v")));
            }
            w.line("const int tile = copy_tile;");
            self.tile_origin(w);
            w.line(format!("a_src = &{} + batch * batch_a;", sources[0]));
            w.line(format!("b_src = &{} + batch * batch_b;", sources[1]));
            if self.guarded {
                w.line(super::copy::whole_tiles("copy_whole", "block_m", "block_n", (self.bm, self.bn, self.bk), skip));
                if skip {
                    w.line("copy_rows = M - block_m;");
                    w.line("copy_cols = N - block_n;");
                }
            }
        });
        w.line("aim();");
    }

    /// Emits `line` once for each accumulator, with `{acc}` the accumulator
    /// and `{at}` its float in a partial sum.
    fn each(&self, w: &mut Writer, line: &str) {
        let mut stride = self.team.threads;
        let mut terms = Vec::new();
        for &(var, n) in self.loops.iter().rev() {
            if n > 1 {
                terms.push(Some(if stride == 1 { var.to_string() } else { format!("{var} * {stride}") }));
            }
            stride *= n;
        }
        terms.reverse();
        let at = sum("", &terms);
        let subscripts: String = self.loops.iter().map(|l| format!("[{}]", l.0)).collect();
        let line = line.replace("{acc}", &format!("{}{subscripts}", self.acc)).replace("{at}", &at);
        w.unrolled_nest(&self.loops, &line);
    }

    /// Hands a partial sum over to the tile's owner, or, in the owner, adds
    /// the partial sums of the other blocks that share its tile.
    fn fixup(&self, w: &mut Writer) {
        let t = &self.team;
        w.block(format!("if ({})", self.helps()), |w| {
            if self.shares == Shares::Hybrid {
                w.line("// the tile's last K step is a later share's: leave this partial sum for it");
            } else {
                w.line("// the tile's first K step is an earlier share's: leave this partial sum for it");
            }
            let piece = self.helper_piece(w);
            w.line(format!("float* const mine = partials + (long long){piece} * slot + {};", t.thread));
            self.each(w, "__stcg(&mine[{at}], {acc});");
            w.line("__threadfence();  // the sum is visible to the whole GPU before the flag");
            w.line(t.sync);
            w.line(format!("if ({}) st_release(&flags[{piece}], 1u);", t.leader));
            w.line("continue;");
        });
        w.line("// this block owns the tile; where its unit is not the whole tile, other blocks");
        w.line("// hold the rest: add their partial sums in share order (a fixed order: the result");
        w.line("// does not depend on timing)");
        w.block("if (tiles < k_tiles)", |w| {
            let (b_begin, nonempty, piece) = self.owner_helpers(w);
            w.line("// wait for all their flags at once, a thread to a share (empty shares have none)");
            w.block(format!("for (unsigned b = {b_begin} + {}; b < b_end; b += {})", t.thread, t.threads), |w| {
                let wait = |w: &mut Writer| {
                    w.line(format!("while (ld_acquire(&flags[{piece}]) == 0) {{}}"));
                    w.line(format!("flags[{piece}] = 0u;  // its only reader: zero again for the next launch"));
                };
                match nonempty {
                    Some(nonempty) => w.block(format!("if ({nonempty})"), wait),
                    None => wait(w),
                }
            });
            w.line(format!("{}  // every flag seen: every sum is complete", t.sync));
            w.block(format!("for (unsigned b = {b_begin}; b < b_end; ++b)"), |w| {
                if let Some(nonempty) = nonempty {
                    w.line(format!("if (!({nonempty})) continue;  // an empty share"));
                }
                w.line(format!("const float* const theirs = partials + (long long){piece} * slot + {};", t.thread));
                self.each(w, "{acc} += __ldcg(&theirs[{at}]);");
            });
        });
    }

    /// In a helper's unit: the index of its partial sum and flag. One a
    /// block under stream-K and the hybrid (a share starts inside a tile
    /// once at most); under `tail_split` `me - tail`, one a helper (a
    /// piece each), under the grid.
    fn helper_piece(&self, w: &mut Writer) -> &'static str {
        if self.shares != Shares::TailSplit {
            return "me";
        }
        w.line("const int piece = (int)me - tail;  // this helper's partial sum");
        "piece"
    }

    /// In an owner's unit: `b_end` and the first of its helpers `b` (an
    /// expression), with the test that helper `b`'s share is not empty
    /// (none where none is) and the index of `b`'s partial sum for this tile.
    fn owner_helpers(&self, w: &mut Writer) -> (&'static str, Option<&'static str>, &'static str) {
        if self.shares == Shares::TailSplit {
            w.line("// its helpers: pieces b = 1 .. pieces - 1 of its tile, shares me + b * tail, which started");
            w.line("// before this one; piece b's partial sum is at me + (b - 1) * tail");
            w.line("const unsigned b_end = (unsigned)pieces;");
            return ("1", None, "((int)me + ((int)b - 1) * tail)");
        }
        if self.shares == Shares::Hybrid {
            w.line("// they are shares b_begin .. me - 1, of blocks that started before this one");
            w.line("const long long tile_start = (long long)(tile - dp_tiles) * k_tiles;  // in the shared K steps");
            w.line("unsigned b_begin = me;");
            w.line("while (b_begin > 0 && work * b_begin / gridDim.x > tile_start) --b_begin;");
            w.line("const unsigned b_end = me;");
            return ("b_begin", Some("work * (b + 1) / gridDim.x != work * b / gridDim.x"), "b");
        }
        w.line("// they are shares me + 1 .. b_end - 1, of blocks that started before this one");
        w.line("const long long tile_end = (long long)(tile + 1) * k_tiles;");
        w.line("unsigned b_end = me + 1;");
        w.line("while (work * b_end / gridDim.x < tile_end) ++b_end;");
        ("me + 1", Some("work * (b + 1) / gridDim.x != work * b / gridDim.x"), "b")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 128 x 256 x 64 tiles of a block of 256 threads in the row raster.
    fn tiling(shares: Shares, guarded: bool) -> Tiling {
        let team = Team::block(256);
        Tiling { raster: Raster::Row, bm: 128, bn: 256, bk: 64, team, acc: "acc", loops: vec![("i", 1)], guarded, shares }
    }

    /// The row raster's walk (compiled as host C++ and run): every tile of
    /// C once whichever sides end in a partial tile; where M does, column
    /// by column (the partial row's tiles one at the end of each column),
    /// each column shifted a tile along N a row where N does too (the
    /// partial column's tiles one in each column's run); else in rows.
    #[test]
    fn the_row_walk_takes_every_tile_once_and_spreads_a_partial_row() {
        let t = tiling(Shares::StreamK, true);
        let mut w = Writer::default();
        w.block("static void walk(int M, int N)", |w| {
            w.line("const int tiles_m = (M + 127) / 128, tiles_n = (N + 255) / 256;");
            w.block("for (int tile = 0; tile < tiles_m * tiles_n; ++tile)", |w| {
                t.tile_origin(w);
                w.line("(void)batch;");
                w.line("std::printf(\"%d %d %d %d %d\\n\", M, N, tile, block_m, block_n);");
            });
        });
        let sizes: [(usize, usize); 7] = [(4096, 4096), (4095, 11008), (4096, 11007), (4095, 4097), (1, 256), (129, 512), (300, 700)];
        let calls: String = sizes.iter().map(|(m, n)| format!("  walk({m}, {n});\n")).collect();
        let program = format!("#include <cstdio>\n{}\nint main() {{\n{calls}}}\n", w.finish());
        let text = crate::cuda::host::run_cpp("stream-k-row-walk", &program);
        for (m, n) in sizes {
            let (tm, tn) = (m.div_ceil(128), n.div_ceil(256));
            let walk: Vec<(usize, usize, usize)> = text
                .lines()
                .map(|l| l.split(' ').map(|v| v.parse::<usize>().unwrap()).collect::<Vec<_>>())
                .filter(|v| (v[0], v[1]) == (m, n))
                .map(|v| (v[2], v[3], v[4]))
                .collect();
            let mut seen = vec![0; tm * tn];
            for &(_, bm, bn) in &walk {
                assert!(bm % 128 == 0 && bn % 256 == 0 && bm < m && bn < n, "{m} x {n}: tile at {bm}, {bn}");
                seen[bm / 128 * tn + bn / 256] += 1;
            }
            assert!(walk.len() == tm * tn && seen.iter().all(|&s| s == 1), "{m} x {n}: {seen:?}");
            let (ragged_m, ragged_n) = (m % 128 != 0, n % 256 != 0);
            for &(tile, bm, bn) in &walk {
                let want = match (ragged_m, ragged_n) {
                    (true, false) => (tile % tm * 128, tile / tm * 256),
                    (true, true) => (tile % tm * 128, (tile / tm + tile % tm) % tn * 256),
                    _ => (tile / tn * 128, tile % tn * 256),
                };
                assert_eq!((bm, bn), want, "{m} x {n}, tile {tile}");
            }
            // where both sides are partial, each run of tiles_m tiles holds few of the partial column's
            // (one each tiles_n of it), where column by column unshifted one run would hold them all
            if ragged_m && ragged_n {
                for run in walk.chunks(tm) {
                    assert!(run.iter().filter(|t| t.2 / 256 == tn - 1).count() <= tm.div_ceil(tn), "{m} x {n}: {run:?}");
                }
            }
        }
    }

    /// Host stand-ins for what a share's code uses: the block and grid
    /// indices, the ticket's word of shared memory, `atomicAdd`, the barrier.
    const SHIM: &str = "#include <cstdio>\n#include <vector>\nstruct Dim3 { unsigned x, y, z; };\nstatic Dim3 gridDim, blockIdx, threadIdx;\n\
        static unsigned smem_words[4];\nstatic unsigned atomicAdd(unsigned* p, unsigned v) { unsigned o = *p; *p += v; return o; }\n\
        static void __syncthreads() {}\n#define __shared__\n";

    /// The cp.async producer's cursor (compiled as host C++ and run for
    /// every block of several grids): it copies the K steps of the block's
    /// units, in the order the units compute them, under stream-K and under
    /// the tail split, whose next tile after a block's whole waves is no
    /// neighbour and whose piece starts inside its tile.
    #[test]
    fn the_producer_copies_the_k_steps_the_units_compute_in_their_order() {
        for shares in [Shares::StreamK, Shares::TailSplit] {
            let t = tiling(shares, false);
            let mut w = Writer::default();
            w.block("static int schedule(int M, int N, int K, int batches, unsigned* flags)", |w| {
                t.share(w, 0);
                w.line("const float* a_src; const float* b_src;");
                t.producer(w, &["A[0 * block_m]".to_string(), "B[0 * block_n]".to_string()], false);
                w.line("std::vector<long long> copied, computed;");
                w.block("while (copies_left > 0)", |w| {
                    w.line("copied.push_back((long long)copy_tile * k_tiles + copy_k);");
                    crate::cuda::copy::advance_producer(w);
                });
                w.block("for (long long it = first; it < last;)", |w| {
                    t.unit_len(w, &t.k_of("it"));
                    w.line("it += tiles;");
                    t.unit_tile(w);
                    w.line("for (int s = 0; s < tiles; ++s) computed.push_back((long long)tile * k_tiles + k_step + s);");
                });
                w.line("(void)a_src; (void)b_src;");
                w.line("return copied != computed ? 1 : computed.empty() ? 2 : 0;  // 2: an empty share");
            });
            let shim = format!("{SHIM}static float A[1], B[1];\nstatic const long long batch_a = 0, batch_b = 0;\n");
            // (tiles along m, along n, K steps, grid): fewer tiles than blocks, whole waves and a part
            // left in pieces, one K step a tile
            let cases = [(2, 3, 5, 132), (12, 11, 64, 132), (17, 29, 7, 100), (17, 29, 40, 100), (5, 5, 1, 7), (9, 20, 64, 132)];
            let mut body = String::new();
            for (tm, tn, kt, grid) in cases {
                body += &format!(
                    "  {{ gridDim.x = {grid}; unsigned flags[{grid} + 1] = {{0}}; int bad = 0, busy = 0;\n\
                     for (int j = 0; j < {grid}; ++j) {{ blockIdx.x = (j * 13 + 3) % {grid}; const int r = schedule({tm} * 128, {tn} * 256, {kt} * 64, 1, flags); bad += r == 1; busy += r == 0; }}\n\
                     std::printf(\"{tm}x{tn}x{kt} on {grid}: %d wrong of %d\\n\", bad, busy); }}\n",
                );
            }
            let program = format!("{shim}{}\nint main() {{\n{body}}}\n", w.finish());
            let text = crate::cuda::host::run_cpp(&format!("stream-k-producer-{shares:?}"), &program);
            assert_eq!(text.lines().count(), cases.len(), "{text}");
            for line in text.lines() {
                assert!(line.contains(": 0 wrong of ") && !line.ends_with("of 0"), "{shares:?}: {line}");
            }
        }
    }

    /// The schedule's share, its map from K-step indices to tiles and its
    /// partial sums' places, compiled as plain C++ by the host compiler and
    /// run for every block of grids of several sizes: each K step of each C
    /// tile falls to exactly one block, a unit never runs past its tile's
    /// end, each helper's partial sum has a place of its own under the
    /// grid, and each owner waits on exactly the partial sums of its tile,
    /// all written by blocks that took their tickets before it (blocks run
    /// here in ticket order). Under the hybrid, every block's K steps stay
    /// within a tile less a share ahead of the shared phase's clock (in step).
    /// Under the hybrids, the whole waves' tiles go whole to one block
    /// each, tile `b + j * grid` in wave `j` to block index `b` (blocks
    /// started in an order other than their indices), and a shared tile has at
    /// most 8 blocks.
    #[test]
    fn every_k_step_of_every_tile_falls_to_one_block() {
        for shares in [Shares::StreamK, Shares::Hybrid, Shares::TailSplit] {
            let t = tiling(shares, false);
            let mut w = Writer::default();
            let head = "static void schedule(int M, int N, int K, int batches, unsigned* flags, int* seen, int* whole, int* sharers, int* written, int* claimed, int* drift)";
            w.block(head, |w| {
                t.share(w, 0);
                w.block("for (long long it = first; it < last;)", |w| {
                    t.unit_len(w, &t.k_of("it"));
                    w.line("it += tiles;");
                    t.unit_tile(w);
                    w.line("for (int s = 0; s < tiles; ++s) seen[tile * k_tiles + k_step + s] += 1;");
                    w.line("if (k_step + tiles > k_tiles) seen[0] += 1000;  // past the tile's end");
                    w.line("if (tiles == k_tiles) whole[tile] = (int)blockIdx.x + 1;");
                    w.line("sharers[tile] += 1;");
                    if shares == Shares::Hybrid {
                        w.line("// how far the unit's K steps run ahead of the shared phase's clock, modulo a tile");
                        w.line("if (it - tiles >= shared_from) for (int s = 0; s < tiles; ++s) {");
                        w.line("  const long long clock = it - tiles + s - shared_from;");
                        w.line("  const int d = (int)(((k_step + s - clock) % k_tiles + k_tiles) % k_tiles);");
                        w.line("  if (d > *drift) *drift = d; }");
                    }
                    w.block(format!("if ({})", t.helps()), |w| {
                        let piece = t.helper_piece(w);
                        w.line(format!("if ({piece} < 0 || {piece} >= (int)gridDim.x || written[{piece}] != -1) seen[0] += 1000000;"));
                        w.line(format!("else written[{piece}] = tile;"));
                        w.line("continue;");
                    });
                    w.block("if (tiles < k_tiles)", |w| {
                        let (b_begin, nonempty, piece) = t.owner_helpers(w);
                        w.block(format!("for (unsigned b = {b_begin}; b < b_end; ++b)"), |w| {
                            if let Some(nonempty) = nonempty {
                                w.line(format!("if (!({nonempty})) continue;"));
                            }
                            // blocks run here in the order they took their tickets: a sum not yet
                            // written is one the owner would wait for on a block that started after it
                            w.line(format!("if ({piece} < 0 || {piece} >= (int)gridDim.x || claimed[{piece}] != -1 || written[{piece}] != tile) seen[0] += 1000000;"));
                            w.line(format!("else claimed[{piece}] = tile;"));
                        });
                    });
                });
            });
            let shim = SHIM;
            // (tiles along m, along n, K steps, grid): fewer tiles than blocks, a whole
            // wave, waves and a part, too few tiles left (the hybrid shares a wave more)
            let cases = [
                (2, 3, 5, 132),
                (12, 11, 64, 132),
                (32, 16, 64, 132),
                (17, 29, 7, 100),
                (17, 29, 40, 100),
                (34, 4, 9, 132),
                (70, 4, 3, 132),
                (5, 5, 1, 7),
                (9, 20, 64, 132),
            ];
            let mut body = String::new();
            for (tm, tn, kt, grid) in cases {
                let dp = match shares {
                    Shares::StreamK => "0".to_string(),
                    Shares::Hybrid => {
                        format!("(tiles / {grid} - ((tiles % {grid}) * 8 < {grid} && tiles % {grid} && tiles >= {grid} ? 1 : 0)) * {grid}")
                    }
                    Shares::TailSplit => format!("tiles / {grid} * {grid}"),
                };
                body += &format!(
                    "  {{ gridDim.x = {grid}; unsigned flags[{grid} + 1] = {{0}}; const int tiles = {tm} * {tn};\n\
                     std::vector<int> seen(tiles * {kt}), whole(tiles), sharers(tiles), written({grid}, -1), claimed({grid}, -1); int drift = 0;\n\
                     for (int j = 0; j < {grid}; ++j) {{ blockIdx.x = (j * 13 + 3) % {grid}; schedule({tm} * 128, {tn} * 256, {kt} * 64, 1, flags, seen.data(), whole.data(), sharers.data(), written.data(), claimed.data(), &drift); }}\n\
                     int bad = 0, most = 0;\n\
                     for (int i = 0; i < tiles * {kt}; ++i) bad += seen[i] != 1;\n\
                     for (int i = 0; i < tiles; ++i) most = sharers[i] > most ? sharers[i] : most;\n\
                     for (int i = 0; i < {grid}; ++i) bad += written[i] != claimed[i];  // every partial sum read by its tile's owner alone\n\
                     bad += flags[{grid}] != 0;  // the ticket count back to zero\n\
                     const int dp = {dp};\n\
                     for (int i = 0; i < dp; ++i) bad += whole[i] != i % {grid} + 1;  // tile b + j * grid, whole to block b\n\
                     // in step (the hybrid): a block's K step runs ahead of the clock by no more than a tile\n\
                     // less its share (0 to 8 of 64 K steps at 4096^3), not anywhere in the tile\n\
                     const int share = (int)((long long)(tiles - dp) * {kt} / {grid});\n\
                     bad += drift > {kt} - share % {kt};\n\
                     std::printf(\"{tm}x{tn}x{kt} on {grid}: %d wrong, at most %d to a tile, K steps ahead by up to %d\\n\", bad, most, drift); }}\n",
                );
            }
            let program = format!("{shim}{}\nint main() {{\n{body}}}\n", w.finish());
            let text = crate::cuda::host::run_cpp(&format!("stream-k-{shares:?}"), &program);
            assert_eq!(text.lines().count(), cases.len(), "{text}");
            for line in text.lines() {
                assert!(line.contains(": 0 wrong"), "{shares:?}: {line}");
                if shares != Shares::StreamK {
                    let most: u32 = line.rsplit("at most ").next().unwrap().split(' ').next().unwrap().parse().unwrap();
                    assert!(most <= 8, "{shares:?}: {line}");
                }
            }
        }
    }
}
