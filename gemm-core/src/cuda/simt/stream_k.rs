//! The stream-K schedule (`persistent = stream_k`): a grid of as many blocks
//! as the GPU holds at once, the K steps of all C tiles laid end to end and
//! split evenly over them, so no block sits idle in a part-full last wave.
//!
//! A block's share of K steps falls into units, one per C tile it touches. A
//! unit that holds its tile's first K step owns the tile: it adds the partial
//! sums the later blocks left for it, in block order, and stores C. A unit
//! that starts inside its tile is always its block's first, so it never
//! waits on anyone: it leaves its partial sum and a flag, then goes on. The
//! owners wait only for those, which makes the schedule deadlock-free while
//! the whole grid is resident (the runtime sizes it so).
//!
//! A cp.async pipeline is filled once per block and flows through the whole
//! share, its copies running ahead into the next C tile: on the H100 that
//! took `autotuned` from 99.4% to 100.9% of cuBLAS at 4096^3, where a block
//! computes four to five units and its warps are the only ones on the SM.
//!
//! Measured on the H100 (BENCHMARKS.md), a variant that computed whole waves
//! of tiles first and shared only the last one to two waves was slower at
//! every size, and a loop that chose between the two kinds of unit cost 1.5%
//! in the main loop's scheduling: the schedule stays this simple.

use super::Kernel;
use crate::cuda::writer::Writer;
use crate::spec::Staging;

/// The flag handshake between the blocks that share a tile.
pub(super) fn helpers(w: &mut Writer) {
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

impl Kernel<'_> {
    /// The stream-K loop over this block's units. A cp.async pipeline is set
    /// up once and flows through the whole share (a producer runs its copies
    /// ahead across units); shared-memory staging starts afresh in each unit.
    pub(super) fn stream_k_units(&self, w: &mut Writer) {
        let bk = self.spec.block.k.expect("checked: staged tiles have a K step");
        let (rows, cols) = (self.mi * self.tm, self.ni * self.tn);
        w.line("");
        w.line("// schedule (stream-K): the K steps of all C tiles, tile after tile, split");
        w.line("// evenly over the grid; [first, last) is this block's share");
        w.line(format!("const int tiles_m = M / {};", self.bm));
        w.line(format!("const int tiles_n = N / {};", self.bn));
        w.line(format!("const int k_tiles = K / {bk};  // K steps per C tile"));
        w.line("const long long work = (long long)tiles_m * tiles_n * k_tiles;");
        w.line("const long long first = work * blockIdx.x / gridDim.x;");
        w.line("const long long last = work * (blockIdx.x + 1) / gridDim.x;");
        w.line(format!(
            "// a partial sum: {rows}x{cols} accumulators a thread, stored so that a warp's stores are contiguous"
        ));
        let slot = rows * cols * self.threads;
        w.line(format!("const int slot = {slot};  // floats per block"));
        if let Staging::CpAsync { stages, vector, .. } = self.spec.staging {
            w.line("");
            self.cp_async_prologue(w, stages, vector);
        }
        w.line("");
        w.block("for (long long it = first; it < last;)", |w| {
            w.line("// this unit: K steps k_step.. of one C tile, up to the tile's end or the share's");
            w.line("const int tile = (int)(it / k_tiles);");
            w.line("const int k_step = (int)(it - (long long)tile * k_tiles);");
            w.line("const int tiles = (int)(last - it < k_tiles - k_step ? last - it : k_tiles - k_step);");
            w.line("it += tiles;");
            self.tile_origin(w);
            match self.spec.staging {
                Staging::CpAsync { stages, vector, .. } => {
                    self.accumulators(w);
                    self.cp_async_main_loop(w, stages, vector);
                }
                Staging::Smem { vector, buffers, .. } => {
                    w.line(format!("const int k_begin = k_step * {bk};"));
                    w.line(format!("const int k_end = k_begin + tiles * {bk};"));
                    self.accumulators(w);
                    w.line("__syncthreads();  // the previous unit is done with shared memory");
                    self.smem_body(w, vector, buffers);
                }
                _ => unreachable!("checked by support::unsupported"),
            }
            w.line("");
            self.fixup(w, rows, cols);
            w.line("");
            self.staged_epilogue(w);
        });
    }

    /// `block_m` and `block_n` of C tile number `tile`.
    fn tile_origin(&self, w: &mut Writer) {
        crate::cuda::schedule::tile_origin(w, self.spec.raster, self.bm, self.bn);
    }

    /// The cp.async producer's cursor: the C tile and K step its next copy
    /// fetches, and `aim`, which points the copy sources (`a_src = ...`, as
    /// `sources` give them) there.
    pub(super) fn producer(&self, w: &mut Writer, sources: &[String; 2]) {
        w.line("// the producer: copies run ahead of the math through this block's whole share,");
        w.line("// across its units, so the pipeline does not drain and refill between C tiles");
        w.line("int copy_tile = (int)(first / k_tiles);  // the C tile and K step the next copy fetches");
        w.line("int copy_k = (int)(first - (long long)copy_tile * k_tiles);");
        w.line("int copies_left = (int)(last - first);  // K steps of the share not yet copied");
        w.line("// points the copies' sources at K step copy_k of C tile copy_tile");
        w.statement_block("const auto aim = [&]()", |w| {
            w.line("const int tile = copy_tile;");
            self.tile_origin(w);
            w.line(format!("a_src = &{};", sources[0]));
            w.line(format!("b_src = &{};", sources[1]));
        });
        w.line("aim();");
    }

    /// Moves the producer's cursor on by the K step just issued.
    pub(super) fn advance_producer(&self, w: &mut Writer) {
        w.line("--copies_left;");
        w.block("if (++copy_k == k_tiles)", |w| {
            w.line("// that was the C tile's last K step: the next copy starts the next tile");
            w.line("copy_k = 0;");
            w.line("++copy_tile;");
            w.line("aim();");
        });
    }

    /// Hands a partial sum over to the tile's owner, or, in the owner, adds
    /// the partial sums of the later blocks that share its tile.
    fn fixup(&self, w: &mut Writer, rows: u32, cols: u32) {
        let each = |w: &mut Writer, line: &str| {
            w.unrolled("ii", rows, |w| w.unrolled("jj", cols, |w| w.line(line)));
        };
        let at = format!("(ii * {cols} + jj) * {}", self.threads);
        w.block("if (k_step > 0)", |w| {
            w.line("// the tile's first K step is an earlier block's: leave this partial sum for it");
            w.line("float* const mine = partials + (long long)blockIdx.x * slot + threadIdx.x;");
            each(w, &format!("__stcg(&mine[{at}], acc[ii][jj]);"));
            w.line("__threadfence();  // the sum is visible to the whole GPU before the flag");
            w.line("__syncthreads();");
            w.line("if (threadIdx.x == 0) st_release(&flags[blockIdx.x], 1u);");
            w.line("continue;");
        });
        w.line("// this block owns the tile; where it stopped short of the tile's end, the blocks");
        w.line("// after it hold the rest, each in its first unit: add their sums in block order");
        w.line("// (a fixed order: the result does not depend on timing)");
        w.block("if (tiles < k_tiles)", |w| {
            w.line("const long long tile_end = (long long)(tile + 1) * k_tiles;");
            w.block("for (unsigned b = blockIdx.x + 1; work * b / gridDim.x < tile_end; ++b)", |w| {
                w.line("if (work * (b + 1) / gridDim.x == work * b / gridDim.x) continue;  // an empty share");
                w.line("if (threadIdx.x == 0) while (ld_acquire(&flags[b]) == 0) {}");
                w.line("__syncthreads();  // thread 0 saw the flag: the sum is complete");
                w.line("const float* const theirs = partials + (long long)b * slot + threadIdx.x;");
                each(w, &format!("acc[ii][jj] += __ldcg(&theirs[{at}]);"));
            });
        });
    }
}
