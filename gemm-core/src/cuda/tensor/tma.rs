//! TMA staging (sm_90a) and the roles around it: a ring of `stages`
//! shared-memory stages, each filled by bulk tensor copies that complete on
//! the stage's "full" mbarrier (one arrival carrying the stage's bytes), and
//! handed back through its "empty" mbarrier.
//!
//! Roles:
//! - all warpgroups alike: every warpgroup computes; thread 0 also issues
//!   the copies, `stages` tiles ahead, each into the stage the block has
//!   just finished (a `__syncthreads` says so). One stage is seed 002's
//!   kernels 2 and 3: load, wait, compute.
//! - `specialize(..)`: a producer warpgroup (one elected thread) runs ahead
//!   through the ring, waiting on each stage's "empty" barrier; the consumer
//!   warpgroups wait on "full", issue the stage's wgmmas, and release the
//!   stage before it on "empty" (one arrival per warpgroup) once its
//!   wgmmas are done, so that one stage's wgmmas run while the next are
//!   issued. `setmaxnreg` moves registers from the producer to the
//!   consumers.
//!
//! With `cp_async` set (the launcher's variant for A or B lines TMA cannot
//! read), the whole producer warpgroup fills each stage by cp.async in
//! TMA's layout instead (`ring_copies`); the ring and its phases stay.
//!
//! Phases: stage `s` is filled for the `r`-th time by fill `r * stages + s`
//! (the K tile itself; under `persistent = tiles` a count of fills that runs
//! on through every tile of the block), so a wait for that filling is on
//! parity `r & 1`; the producer's wait for the `r`-th release is on parity
//! `(r & 1) ^ 1`, which a fresh barrier passes at once for `r = 0`.
//!
//! Under `persistent = tiles` (specialized only) a block walks C tiles, its
//! producer running on into the next tile's stages while the consumers
//! store this one's C, which under `epilogue = smem | tma` lies past the
//! stages. Under `persistent = stream_k` it walks its stream-K share of K
//! steps instead (`crate::cuda::stream_k`), the fix-up among the consumers.
//!
//! Clusters (specialized only): the raster places cluster tiles and each
//! block takes its rank's tile in its cluster's. With multicast, the blocks
//! that share an operand each load a part of its tile into all of them, so
//! a stage's "empty" barrier counts every consumer of the cluster (each
//! arrives on every block's), and the blocks meet once their barriers are
//! set up and once more before any leaves.

use super::ring_copies::COPIERS;
use super::Tc;
use crate::cuda::epilogue::Output;
use crate::cuda::ptx;
use crate::cuda::schedule;
use crate::cuda::writer::Writer;
use crate::spec::{Arrivals, Epilogue, EvictFirst, Persistent, Specialize, Staging, Which, EDGE_BOX_LINES};

/// Who walks a block's tiles: under `persistent = queue` the producer takes
/// each tile from the queue and the consumers read it from the producer,
/// where every other walk's roles work their tiles out alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walker {
    Every,
    Producer,
    Consumer,
}

/// A K step's copies of A's and B's tiles ([`Tc::tma_issue_as`]): tested
/// for a tile across M's or N's edge at the step, or known whole, or known
/// to cross it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Copies {
    Tested,
    Whole,
    Edge,
}

/// Stages a promoted consumer's K loop takes in one run ([`Tc::promoted_k_loop`]).
const PROMOTED_RUN: u32 = 8;

/// The contiguous walk's cursor, and the copy that looks one tile ahead
/// ([`Tc::move_cursor`]'s names).
const CURSOR: [&str; 5] = ["g", "g_first", "g_start", "g_end", "g_tiles_m"];
const NEXT_CURSOR: [&str; 5] = ["next_g", "next_first", "next_start", "next_end", "next_tiles_m"];

impl Tc<'_> {
    pub(super) fn tma_helpers(&self, w: &mut Writer) {
        let loads = [Which::A, Which::B].into_iter().any(|which| self.spec.tma_loads(which));
        // kernels whose every thread arrives wait on their tokens alone (the rules: no cluster, ping-pong or stream-K)
        let first = self.evict_first();
        // (the queue's slots are waited on by parity, whatever the stages' arrivals)
        let parity_waits = !self.thread_arrivals() || self.spec.persistent == Some(Persistent::Queue);
        ptx::tma(w, loads || self.spec.epilogue == Epilogue::Tma, loads, parity_waits, first.a || first.b, self.tests_ahead());
        ptx::griddep(w, self.prefetch() > 0);
        if let Some(r) = self.ring() {
            self.ring_copy_helpers(w, r.vector);
        }
        if self.spec.persistent == Some(Persistent::Queue) {
            Self::queue_helpers(w);
        }
        if self.spec.block_scale_bytes() > 0 {
            ptx::block_scale_copies(w, self.b_scales_copied());
        }
        if self.spec.specialize.is_some_and(|sp| sp.producer_regs.is_some() || sp.consumer_regs.is_some()) {
            ptx::setmaxnreg(w);
        }
        if [Which::A, Which::B].into_iter().any(|which| self.spec.edge_boxes(which)) {
            self.edge_loads_fn(w);
        }
        if self.thread_arrivals() {
            ptx::mbar_arrive_wait(w);
        }
        if let Some(c) = self.spec.cluster {
            ptx::cluster(w, c.multicast.is_some());
            if c.k > 1 {
                ptx::cluster_floats(w);
            }
        }
        // (the by-class variant stores C by TMA a class of lines at a time, through buffers of its own)
        let by_class = self.spec.by_class();
        if self.spec.epilogue == Epilogue::Tma || by_class {
            ptx::tma_store(w);
        }
        if self.spec.epilogue == Epilogue::Tma && !by_class {
            crate::cuda::epilogue::c_tile_at_fn(w, self.spec);
        }
        let consumers_meet = self.spec.c_tile().is_some() || self.spec.persistent.is_some_and(Persistent::splits_k) || by_class;
        if let (Some(sp), true) = (self.spec.specialize, consumers_meet) {
            w.line("// a barrier among the consumer warpgroups alone, which share the C tile or the fix-up (the producer never comes)");
            if sp.pingpong {
                w.line("// ping-pong: each consumer stores its own tile, so it meets itself alone (barrier 1 + its index)");
                w.block("__device__ __forceinline__ void consumers_sync()", |w| {
                    w.line(format!("asm volatile(\"bar.sync %0, 128;\\n\" :: \"r\"(threadIdx.x / 128 - {} + 1) : \"memory\");", sp.producers));
                });
            } else {
                w.block("__device__ __forceinline__ void consumers_sync()", |w| {
                    w.line(format!("asm volatile(\"bar.sync 1, {};\\n\" ::: \"memory\");", 128 * sp.consumers));
                });
            }
            w.line("");
        }
        if let (Some(sp), true) = (self.spec.specialize, self.spec.b_scale_window_bytes() > 0) {
            // (a warpgroup's own: ping-pong consumers run their K loops on tiles of their own)
            w.line("// a barrier among one consumer warpgroup's threads alone, around its window of B's scales");
            w.line("// (barrier 8 + its warpgroup: those among consumers for the C tile take 1 to 4)");
            let id = if sp.consumers == 1 { format!("{}", 8 + sp.producers) } else { "8 + threadIdx.x / 128".to_string() };
            w.block("__device__ __forceinline__ void window_sync()", |w| {
                w.line(format!("asm volatile(\"bar.sync %0, 128;\\n\" :: \"r\"({id}) : \"memory\");"));
            });
            w.line("");
        }
    }

    /// `persistent = queue`'s device functions: thread 0 takes each tile
    /// number from the launch's count and hands it, through two slots of
    /// shared memory (each with a full and an empty barrier), to every
    /// thread that walks the tiles, itself included.
    fn queue_helpers(w: &mut Writer) {
        w.line("// persistent = queue: tile q's number in slot q % 2 (a full barrier the writer arrives on, an empty one");
        w.line("// every reader arrives on), waited on in round q / 2");
        w.block("__device__ __forceinline__ int queue_peek(unsigned qbar, int q)", |w| {
            w.line("mbar_wait(qbar + 8 * (q & 1), (q >> 1) & 1);  // thread 0 has written tile q's number");
            w.line("int t;");
            w.line("asm volatile(\"ld.shared.u32 %0, [%1];\\n\" : \"=r\"(t) : \"r\"(qbar + 32 + 4 * (q & 1)) : \"memory\");");
            w.line("return t;");
        });
        w.block("__device__ __forceinline__ int queue_next(unsigned qbar, int q)", |w| {
            w.line("const int t = queue_peek(qbar, q);");
            w.line("mbar_arrive(qbar + 16 + 8 * (q & 1));  // this thread is done with the slot");
            w.line("return t;");
        });
        w.block("__device__ __forceinline__ int queue_take(unsigned* queue, unsigned qbar, int q)", |w| {
            w.block("if (threadIdx.x == 0)", |w| {
                w.line("const unsigned t = atomicAdd(queue, 1u);  // (past the last tile once all are taken)");
                w.line("mbar_wait(qbar + 16 + 8 * (q & 1), ((q >> 1) & 1) ^ 1);  // every walker has read the slot's tile before");
                w.line("asm volatile(\"st.shared.u32 [%0], %1;\\n\" :: \"r\"(qbar + 32 + 4 * (q & 1)), \"r\"(t) : \"memory\");");
                w.line("mbar_arrive(qbar + 8 * (q & 1));  // (releases the store to the threads that wait on the barrier)");
            });
            w.line("return queue_next(qbar, q);");
        });
        w.line("");
    }

    /// The threads that walk a queue's tiles: the producer's
    /// ([`Self::producer_threads`]) and every consumer's.
    fn queue_walkers(&self) -> u32 {
        let sp = self.spec.specialize.expect("the rules: persistent = queue is specialized");
        self.producer_threads(sp).0 + 128 * sp.consumers
    }

    /// The threads of the producer warpgroups that run the producer: their
    /// count, and the condition that picks them out (none where the one
    /// producer warpgroup copies by cp.async, all of it).
    fn producer_threads(&self, sp: Specialize) -> (u32, Option<String>) {
        match self.ring() {
            Some(_) if sp.producers == 1 => (128, None),
            Some(_) => (COPIERS, Some(format!("threadIdx.x < {COPIERS}"))),
            None => (1, Some("threadIdx.x == 0".into())),
        }
    }

    /// After the producer's walk under `persistent = queue`: the last block
    /// done taking tiles puts the queue's counts back to zero for the
    /// stream's next launch (every block's last take comes before its count
    /// of blocks done).
    fn queue_done(&self, w: &mut Writer) {
        if self.spec.persistent != Some(Persistent::Queue) {
            return;
        }
        w.line("// the queue's counts back to zero for the next launch, by the last block done taking tiles");
        w.block("if (threadIdx.x == 0)", |w| {
            w.line("__threadfence();  // this block's last take before its count of blocks done");
            w.block("if (atomicAdd(queue + 1, 1u) == gridDim.x - 1)", |w| {
                w.line("queue[0] = 0u;");
                w.line("queue[1] = 0u;");
            });
        });
    }

    /// Bytes of one stage of both tiles: what a filling's barrier expects.
    pub(super) fn stage_bytes(&self) -> (u32, u32) {
        let s = self.spec;
        let (a, b) = (s.tma_tile(Which::A), s.tma_tile(Which::B));
        (a.bytes(), b.bytes())
    }

    /// The ring's shared memory and barriers, initialized by thread 0.
    fn tma_setup(&self, w: &mut Writer, stages: u32, releases: u32) {
        let (a_bytes, b_bytes) = self.stage_bytes();
        w.line(format!("// staging (tma): {stages} stage(s) of the A tile ({a_bytes} bytes) and of the B tile ({b_bytes} bytes) from a"));
        w.line("// 1024-byte boundary (the swizzle's period), then a full and an empty mbarrier per stage");
        w.line("extern __shared__ __align__(1024) unsigned char smem_raw[];");
        w.line("const unsigned smem_base = (unsigned)__cvta_generic_to_shared(smem_raw);");
        w.line("const unsigned a_smem = (smem_base + 1023) & ~1023u;");
        match self.spec.groups {
            Some(crate::spec::Groups::Contiguous) => {
                w.line("// A's rows in its tensor map: a tile at a group's end loads its A box whole where these rows go");
                w.line("// on past the group's (they feed only rows of C never stored), in edge boxes at their end only");
                w.line("const int a_rows = M;");
            }
            Some(crate::spec::Groups::Masked) => {
                w.line("// each problem's rows of A in its tensor map (m_max): a tile loads its A box whole where they go on");
                w.line("// past its problem's count (they feed only rows of C never stored), in edge boxes up to the count else");
                w.line("const int a_rows = M;");
            }
            _ => {}
        }
        w.line(format!("const unsigned b_smem = a_smem + {};", stages * a_bytes));
        let c_tile = self.spec.epilogue_scratch_bytes();
        let past = if c_tile > 0 { format!(" (past the C tile's {c_tile})") } else { String::new() };
        w.line(format!("const unsigned full = b_smem + {};  // stage s's at full + 8 * s{past}", stages * b_bytes + c_tile));
        w.line(format!("const unsigned empty = full + {};", 8 * stages));
        let pingpong = self.spec.specialize.filter(|sp| sp.pingpong).map(|sp| sp.consumers);
        if pingpong.is_some() {
            w.line(format!("const unsigned turns = empty + {};  // consumer c's turn with the ring done: turns + 8 * c", 8 * stages));
        }
        let queue = self.spec.queue_bytes() > 0;
        if queue {
            w.line(format!(
                "const unsigned qbar = empty + {};  // persistent = queue: its slots' full barriers, their empty ones, then the two slots",
                8 * stages + pingpong.map_or(0, |c| 8 * c)
            ));
        }
        if self.spec.block_scale_bytes() > 0 {
            let turns = pingpong.map_or(0, |c| 8 * c) + self.spec.queue_bytes();
            let rows = self.spec.block_scale_rows();
            w.line(format!(
                "// each stage's scales (scale = block): A's {rows} rows of the K block, then B's of the tile's 128-column blocks (4 floats a stage)"
            ));
            w.line(format!("const unsigned sfa_smem = (empty + {} + 127) & ~127u;", 8 * stages + turns));
            if self.b_scales_copied() {
                w.line(format!("const unsigned sfb_smem = sfa_smem + {};", stages * self.spec.block_scale_slot()));
            }
            if self.spec.b_scale_window_bytes() > 0 {
                w.line(format!(
                    "const unsigned sfb_window = sfa_smem + {};  // each consumer's window of B's scales (a window's K blocks, 4 bytes each)",
                    self.spec.b_scale_window_offset()
                ));
            }
        }
        let per = if self.multicasts() { " of each block of the cluster" } else { "" };
        // (under `scale = block` the landing of B's scale copies is one arrival more: `cp_async_arrive`)
        let (scale_copies, scales_note) = if self.b_scales_copied() { (1, ", and its scale copies' landing") } else { (0, "") };
        w.block("if (threadIdx.x == 0)", |w| {
            w.block(format!("for (int s = 0; s < {stages}; ++s)"), |w| {
                if let Some(r) = self.ring() {
                    let tma = if r.only.is_some() { ", and thread 0's with the bytes TMA loads" } else { "" };
                    w.line(format!(
                        "mbar_init(full + 8 * s, {});  // each producer thread's, and its copies' landing{tma}{scales_note}",
                        self.ring_arrivals() + scale_copies
                    ));
                } else if self.thread_arrivals() {
                    w.line(format!(
                        "mbar_init(full + 8 * s, {});  // the producer's arrival with the stage's bytes, and every consumer thread's{scales_note}",
                        releases + scale_copies
                    ));
                } else {
                    w.line(format!("mbar_init(full + 8 * s, {});  // the producer's arrival, with the stage's bytes{scales_note}", 1 + scale_copies));
                }
                let whose = match pingpong {
                    Some(_) => "the release of the consumer whose tile it holds",
                    None if self.thread_arrivals() => "every consumer thread's release, and the producer's arrival before it waits",
                    None if self.warp_releases() => "one release per consumer warp",
                    None => "one release per consumer warpgroup",
                };
                w.line(format!("mbar_init(empty + 8 * s, {releases});  // {whose}{per}"));
            });
            if let Some(c) = pingpong {
                w.line(format!("for (int c = 0; c < {c}; ++c) mbar_init(turns + 8 * c, 1);"));
            }
            if queue {
                let walkers = self.queue_walkers();
                w.block("for (int s = 0; s < 2; ++s)", |w| {
                    w.line("mbar_init(qbar + 8 * s, 1);  // thread 0's arrival once it has written the slot");
                    w.line(format!("mbar_init(qbar + 16 + 8 * s, {walkers});  // every thread that walks the tiles, once it has read it"));
                });
            }
            w.line("mbar_fence_init();");
        });
        if self.spec.cluster.is_some() {
            w.line("cluster_sync();  // every block's barriers are set up before any block's copies reach them");
            self.cluster_place(w);
        } else {
            w.line("__syncthreads();");
        }
        // A dependent launch (the launcher's `launch_dependent`) starts this kernel while the
        // stream's previous one finishes: its blocks set up above, then wait for that kernel
        // before any read or write of global memory (stream-K's ticket included). Its own
        // dependents start as its blocks end: let start with each block (by
        // `griddepcontrol.launch_dependents`), decode kernels launched back to back lost up to
        // 11 points of HBM at some shapes on the H100 where they now gain 3-7 (BENCHMARKS.md).
        // Under `tma(prefetch = ..)` they start once each block has issued its last copy, and this
        // kernel's blocks first ask the L2 for the start of their tiles (`l2_prefetch`).
        if !self.spec.persistent.is_some_and(Persistent::splits_k) {
            // (stream-K's share defines it with the rest of its schedule)
            w.line(format!("const int k_tiles = (K + {bk} - 1) / {bk};", bk = self.bk));
        }
        let split = self.spec.k_split();
        if split > 1 {
            w.line(format!(
                "// cluster split along K: rank_k streams the tile's K steps [k_first, k_first + k_count), {split} parts as even as they go"
            ));
            w.line(format!("const int k_first = rank_k * k_tiles / {split};"));
            w.line(format!("const int k_count = (rank_k + 1) * k_tiles / {split} - k_first;"));
        }
        if self.prefetch() > 0 {
            self.l2_prefetch(w);
        }
        w.line("griddep_wait();  // the stream's previous kernel is complete (at once where not launched dependent)");
        w.line("");
    }

    /// The batch's coordinates in the tensor maps, for problem `batch`: an
    /// operand the batch shares (stride 0) has one problem.
    fn map_batches(w: &mut Writer, batch: &str) {
        w.line("// the problem each operand's tiles come from: an operand the batch shares has one");
        w.line(format!("const int a_batch = batch_a != 0 ? {batch} : 0;"));
        w.line(format!("const int b_batch = batch_b != 0 ? {batch} : 0;"));
    }

    /// The C tiles this block computes, each with `block_m`, `block_n` and
    /// its problem, `batch`, in scope for `body` (which copies by TMA after
    /// `map_batches`): one per block, or under `persistent = tiles`
    /// every `gridDim.x`-th tile of all problems' in the raster's order.
    fn for_each_tile(&self, w: &mut Writer, body: impl FnOnce(&mut Writer)) {
        self.for_each_tile_of(w, None, Walker::Every, body)
    }

    /// [`Self::for_each_tile`]; with `turns` (ping-pong consumers, persistent
    /// only) this consumer's tiles alone: every `turns`-th of the block's
    /// walk (of its cluster's, in a cluster) from its own place (`group`),
    /// each with its place `turn` in scope. Under `persistent = queue` the
    /// producer takes each tile from the queue and the consumers read it
    /// (`walker`), its count `q` in scope.
    fn for_each_tile_of(&self, w: &mut Writer, turns: Option<u32>, walker: Walker, body: impl FnOnce(&mut Writer)) {
        let s = self.spec;
        let persistent = s.persistent.is_some_and(Persistent::whole_tiles);
        // the raster places block tiles, or cluster tiles of which a block takes its rank's
        let place = |w: &mut Writer| match s.cluster {
            None => schedule::tile_origin(w, s.raster, self.bm, self.bn, "tile", ["block_m", "block_n"]),
            Some(c) => {
                schedule::tile_origin(w, s.raster, self.bm * c.m, self.bn * c.n, "tile", ["cluster_m", "cluster_n"]);
                if c.k > 1 {
                    // (the rules: a cluster that splits K is one tile's)
                    w.line("// the cluster's blocks share the tile");
                    w.line("const int block_m = cluster_m;");
                    w.line("const int block_n = cluster_n;");
                } else {
                    // the rank read again, not kept: one register fewer through the K loop (ptxas spilled less)
                    w.line(format!("const int block_m = cluster_m + (int)(cluster_rank() % {}) * {};", c.m, self.bm));
                    w.line(format!("const int block_n = cluster_n + (int)(cluster_rank() / {}) * {};", c.m, self.bn));
                }
            }
        };
        // a block's place in the persistent walk, and the walk's stride: in blocks, or in clusters
        let size = s.cluster_size();
        let (first, grid) = if s.cluster.is_some() {
            (format!("blockIdx.x / {size}"), format!("gridDim.x / {size}"))
        } else {
            ("blockIdx.x".into(), "gridDim.x".into())
        };
        let walk = |w: &mut Writer, header: String, body: &mut dyn FnMut(&mut Writer)| {
            w.block(header, |w| {
                w.line("const int batch = t / (tiles_m * tiles_n);");
                w.line("const int tile = t % (tiles_m * tiles_n);");
                place(w);
                Self::masked_rows(w, s);
                body(w);
            });
        };
        let mut body = Some(body);
        let mut once = |w: &mut Writer| (body.take().expect("the body is emitted once"))(w);
        if let Some(c) = turns {
            let whose = if s.cluster.is_some() { "its cluster's walk" } else { "the block's walk" };
            w.line(format!("// schedule (persistent, ping-pong): this consumer's tiles, one in {c} of {whose}"));
            let stride = if s.cluster.is_some() { format!("({grid})") } else { grid.clone() };
            let header =
                format!("for (int t = {first} + {stride} * group, turn = group; t < tiles_m * tiles_n * batches; t += {stride} * {c}, turn += {c})");
            return walk(w, header, &mut once);
        }
        if persistent && s.groups == Some(crate::spec::Groups::Contiguous) {
            return self.contiguous_walk(w, &mut once);
        }
        if persistent && s.groups == Some(crate::spec::Groups::Indexed) {
            return self.indexed_walk(w, &mut once);
        }
        if s.persistent == Some(Persistent::Queue) {
            let (next, who) = match walker {
                Walker::Producer => ("queue_take(queue, qbar, q)", "the producer takes from the queue"),
                Walker::Consumer => ("queue_next(qbar, q)", "the consumers read from the producer"),
                Walker::Every => unreachable!("the rules: persistent = queue is specialized, with no prefetch"),
            };
            w.line(format!("// schedule (persistent, queue): this block's tiles, one at a time as {who}, until one lies past the last"));
            return walk(w, format!("for (int q = 0, t = {next}; t < tiles_m * tiles_n * batches; ++q, t = {next})"), &mut once);
        }
        if persistent {
            if s.cluster.is_some() {
                w.line("// schedule (persistent): this cluster's tiles, a grid's worth of clusters apart, over every problem");
            } else {
                w.line("// schedule (persistent): this block's tiles, gridDim.x apart, over every problem");
            }
            return walk(w, format!("for (int t = {first}; t < tiles_m * tiles_n * batches; t += {grid})"), &mut once);
        }
        match s.cluster {
            None => {
                w.line("// batch: blockIdx.z is the problem this block works on");
                w.line("const int batch = blockIdx.z;");
                schedule::raster(w, s.raster, self.bm, self.bn);
            }
            Some(_) => {
                w.line("// batch: blockIdx.z is the problem this block works on; blockIdx.x / cluster size its cluster tile");
                w.line("const int batch = blockIdx.z;");
                w.line(format!("const int tile = blockIdx.x / {size};"));
                place(w);
            }
        }
        once(w);
    }

    /// `groups = contiguous`'s persistent walk: each group's tiles in turn
    /// (its rows' tiles along M, none reaching into the next group, times
    /// N's), this block's every `gridDim.x`-th, found by a cursor over the
    /// groups that only moves on (every role keeps its own and takes the
    /// same tiles). In a tile's body `block_m` is the tile's first row of A
    /// and C, `batch` its group (B's problem), and `M` the group's end, so
    /// that every guard and edge load stops there.
    fn contiguous_walk(&self, w: &mut Writer, body: &mut dyn FnMut(&mut Writer)) {
        let bm = self.bm;
        w.line("// schedule (persistent, groups = contiguous): each group's tiles in turn, group g's rows of A and C");
        w.line("// from group_ends[g - 1] (0 for the first) to group_ends[g] (kept within M and after the start);");
        w.line("// this block takes every gridDim.x-th tile, its cursor (g and the group's first tile) moving on only");
        w.line(format!("int g = 0, g_first = 0, g_start = 0, g_end = min(M, max(__ldg(group_ends), 0)), g_tiles_m = (g_end + {bm} - 1) / {bm};"));
        w.block("for (int t = blockIdx.x; ; t += gridDim.x)", |w| {
            self.move_cursor(w, "t", CURSOR, "M");
            w.line("if (g >= batches) break;  // past the last group's tiles");
            w.line("const int batch = g;");
            w.line("const int tile = t - g_first;");
            // (the row raster reads tiles_n alone)
            w.line("[[maybe_unused]] const int tiles_m = g_tiles_m;  // the group's own, for the raster below");
            // (the tile's first row within its group: not `tile_m`, which the Hilbert raster declares)
            schedule::tile_origin(w, self.spec.raster, self.bm, self.bn, "tile", ["in_group_m", "block_n"]);
            w.line("const int block_m = g_start + in_group_m;");
            w.line("// the group's end: every guard below stops there (the producer, whose A box goes on to a_rows,");
            w.line("// may not read it)");
            w.line("[[maybe_unused]] const int M = g_end;");
            body(w);
        });
    }

    /// `groups = indexed`'s persistent walk: the tiles of A's and C's rows
    /// (one problem's, whatever the batch), this block's every
    /// `gridDim.x`-th; each takes the group of its first row as `batch`
    /// (B's problem), and a tile whose first row is padding (-1), or names
    /// no group of the batch, is skipped by every role alike. The consumers
    /// stop C's rows at the end of the group's run ([`Self::indexed_run`]).
    fn indexed_walk(&self, w: &mut Writer, body: &mut dyn FnMut(&mut Writer)) {
        w.line("// schedule (persistent, groups = indexed): the tiles of A's and C's rows, gridDim.x apart; each");
        w.line("// takes its first row's group, and one whose first row is padding (-1) or past the groups is skipped");
        w.block("for (int t = blockIdx.x; t < tiles_m * tiles_n; t += gridDim.x)", |w| {
            w.line("const int tile = t;");
            schedule::tile_origin(w, self.spec.raster, self.bm, self.bn, "tile", ["block_m", "block_n"]);
            w.line("const int batch = __ldg(row_groups + block_m);");
            w.line("if (batch < 0 || batch >= batches) continue;");
            body(w);
        });
    }

    /// `groups = indexed`, in a consumer before its stores: `run_end`, where
    /// the tile's run of its group's rows ends ([`super::group_run_end`]).
    fn indexed_run(&self, w: &mut Writer) {
        w.line("// groups = indexed (the consumers' warps, each whole):");
        super::group_run_end(w, self.bm, "batch");
    }

    /// `groups = masked`: problem `batch` holds `group_rows[batch]` of its M
    /// rows (a negative count none); a tile past them is skipped (the
    /// persistent walk's producer and consumers skip the same tiles), and
    /// `M` is the problem's own from here on, so that every guard and the
    /// edge boxes' loads stop at its rows.
    fn masked_rows(w: &mut Writer, spec: &crate::spec::KernelSpec) {
        if spec.groups != Some(crate::spec::Groups::Masked) {
            return;
        }
        // (the contiguous layout's walk places its tiles itself: `contiguous_walk`)
        w.line("// groups = masked: this problem holds group_rows[batch] of its M rows; a tile past them is");
        w.line("// skipped, and M below is the problem's own (every guard and edge load reads it)");
        w.line("const int rows = min(M, max(__ldg(group_rows + batch), 0));");
        w.line("if (block_m >= rows) continue;");
        w.line("const int M = rows;");
    }

    /// The K loop's counter of filled stages: `kt` for one tile, or `it`,
    /// which runs on through every tile of a persistent block, so that the
    /// ring's stages and phases carry over from tile to tile.
    fn fill_counter(&self) -> &'static str {
        if self.spec.persistent.is_some_and(Persistent::whole_tiles) {
            "it"
        } else {
            "kt"
        }
    }

    /// The copies of K tile `kt` into stage `stage`: the stage's bytes
    /// announced on its full barrier, then each box of A and B. Where an
    /// operand's tile may cross M's or N's edge in boxes of fewer lines
    /// ([`crate::spec::KernelSpec::edge_boxes`]), a tile that does takes
    /// `edge_loads` instead, tested here at each K step.
    fn tma_issue(&self, w: &mut Writer, kt: &str, stage: &str) {
        self.tma_issue_as(w, kt, stage, Copies::Tested);
    }

    /// [`Self::tma_issue`] for a tile known to be whole (`Copies::Whole`),
    /// known to cross an edge (`Copies::Edge`: `edge_loads`), or tested.
    fn tma_issue_as(&self, w: &mut Writer, kt: &str, stage: &str, copies: Copies) {
        let (a_bytes, b_bytes) = self.stage_bytes();
        w.line(format!("const unsigned bar = full + 8 * {stage};"));
        if self.ring().is_some() {
            w.line(format!("const int k0 = {kt} * {};", self.bk));
            return self.ring_issue(w, stage);
        }
        let dst = |which: Which| match which {
            Which::A => format!("a_smem + {stage} * {a_bytes}"),
            Which::B => format!("b_smem + {stage} * {b_bytes}"),
        };
        // (where edge boxes of A stop: a contiguous group's at A's end, its map's rows, a_rows;
        // a masked problem's at its count, M, as TMA fills a box's lines past the map's rows slowly)
        let a_end = match self.spec.groups {
            Some(crate::spec::Groups::Contiguous) => "a_rows",
            _ => "M",
        };
        if self.spec.block_scale_bytes() > 0 {
            self.scale_loads(w, kt, stage);
        }
        let whole = |w: &mut Writer| {
            w.line(format!("mbar_expect_bytes(bar, {});", a_bytes + b_bytes));
            for which in [Which::A, Which::B] {
                self.tile_loads(w, which, &dst(which));
            }
        };
        let edge = |w: &mut Writer| {
            let maps = self.edge_loads_maps().join(", ");
            w.line(format!("edge_loads(bar, {}, {}, k0, block_m, block_n, {a_end}, N, a_batch, b_batch, {maps});", dst(Which::A), dst(Which::B)));
        };
        w.line(format!("const int k0 = {kt} * {};", self.bk));
        match (copies, self.whole_tile()) {
            (Copies::Edge, _) => edge(w),
            (Copies::Whole, _) | (Copies::Tested, None) => whole(w),
            (Copies::Tested, Some(inside)) => {
                w.block(format!("if ({inside})"), whole);
                w.block("else", |w| {
                    w.line("// more than a quarter of the tile lies past M's or N's edge (out of line: the producer has few registers)");
                    edge(w);
                });
            }
        }
    }

    /// Where an operand's tile may cross M's or N's edge in boxes of fewer
    /// lines, the test that this block's tile does not; `None` where every
    /// tile copies whole boxes.
    fn whole_tile(&self) -> Option<String> {
        if self.ring().is_some() {
            return None;
        }
        // (whole boxes of A as far as its map's rows go, a_rows, past a group's or problem's M: in
        // edge boxes at each contiguous group's end, the e4m3 Zipf-skewed Mixtral-like layer ran at
        // 0.905 of the balanced one's speed, whole boxes 0.978: H200, the guide's performance notes)
        let a_whole_to = match self.spec.groups {
            Some(crate::spec::Groups::Contiguous | crate::spec::Groups::Masked) => "a_rows",
            _ => "M",
        };
        let inside: Vec<String> = [(Which::A, "block_m", a_whole_to), (Which::B, "block_n", "N")]
            .into_iter()
            .filter(|(which, ..)| self.spec.edge_boxes(*which))
            .map(|(which, origin, end)| format!("{end} - {origin} > {}", self.spec.edge_lines_most(which)))
            .collect();
        (!inside.is_empty()).then(|| inside.join(" && "))
    }

    /// Whether `edge_loads` is inlined: a warp-specialized producer tests
    /// a tile's edges once (stream-K's once a unit) and walks its K in a
    /// loop of whole tiles' copies or one of edge tiles'
    /// ([`Self::tile_k_loops`]); other kernels test each K step and call it.
    fn edge_loads_inlined(&self) -> bool {
        self.spec.specialize.is_some()
    }

    /// A specialized producer's K loop over one tile's steps (`k_loop`,
    /// given how its copies go): where a tile may cross an edge, the tile
    /// tested once, a loop for a whole tile and one for a tile across it.
    fn tile_k_loops(&self, w: &mut Writer, k_loop: impl Fn(&mut Writer, Copies)) {
        match self.whole_tile() {
            None => k_loop(w, Copies::Whole),
            Some(inside) => {
                // (tested at each K step, with a call in the loop, the whole tiles' copies took
                // their coordinates through vector registers: the ring alone ran 17% slower)
                w.line("// the tile's edges tested once: a K loop for a whole tile, another for one across an edge");
                w.block(format!("if ({inside})"), |w| k_loop(w, Copies::Whole));
                w.block("else", |w| {
                    w.line("// more than a quarter of the tile lies past M's or N's edge");
                    k_loop(w, Copies::Edge);
                });
            }
        }
    }

    /// `scale = block`: K block `kt`'s scales into stage `stage`'s slots,
    /// before the stage's tiles (whose arrival completes the barrier's
    /// phase): B's of the tile's 128-column blocks by cp.async (past N, the
    /// last block's: its columns are never stored), A's rows by TMA (zeros
    /// past M), each of the tile's problem (`a_batch`, `b_batch`: its
    /// operands' problems, 0 where the batch shares one). (B's by a TMA box of 4 f32s from each block's scale on, a
    /// 1-D map over all of them, ran into an illegal instruction on the
    /// H200.)
    fn scale_loads(&self, w: &mut Writer, kt: &str, stage: &str) {
        // (a TMA box side is at most 256 elements, so a tile spans at most 2 of B's blocks: a
        // stage's slot holds 4)
        let blocks = if self.b_scales_copied() { self.bn.div_ceil(crate::spec::SCALE_BLOCK) } else { 0 };
        debug_assert!(blocks <= 4, "a stage's slot of B's scales holds 4");
        if blocks > 0 {
            w.line(format!("// K block {kt}'s scales of this tile's problem: B's by cp.async (the barrier waits for them), A's by TMA"));
        } else {
            w.line(format!("// K block {kt}'s scales of this tile's problem: A's by TMA (the consumers read B's)"));
        }
        for j in 0..blocks {
            let nb = if j == 0 { "block_n / 128".to_string() } else { format!("block_n / 128 + {j}") };
            let nb = if self.spec.edges == crate::spec::Edges::Guarded && j > 0 { format!("min({nb}, (N - 1) / 128)") } else { nb };
            let at = if j == 0 { format!("sfb_smem + 16 * {stage}") } else { format!("sfb_smem + 16 * {stage} + {}", 4 * j) };
            w.line(format!("cp_async_4({at}, {});", Self::b_scale_at("b_batch", &nb, kt)));
        }
        if blocks > 0 {
            w.line("cp_async_arrive(bar);");
        }
        let rows = self.spec.block_scale_rows();
        w.line(format!("mbar_expect_more(bar, {});", rows * 4));
        // (a box starts on 16 bytes: from the row below block_m on a multiple of 4, where a tile may start anywhere)
        let first = if rows > self.bm { "block_m & ~3" } else { "block_m" };
        w.line(format!("tma_load(sfa_smem + {stage} * {}, tmap_sfa, {first}, {kt}, a_batch, bar);", self.spec.block_scale_slot()));
    }

    /// `scale = block`: where B's scale of K block `kt` and 128-column
    /// block `block` of problem `batch` lies (a batch's scales follow their
    /// operands': each problem's after the one before's, shared where it is).
    pub(super) fn b_scale_at(batch: &str, block: &str, kt: &str) -> String {
        format!("scale_b + ({batch} * ((N + 127) / 128) + {block}) * k_tiles + {kt}")
    }

    /// `edge_loads`, the copies of a K step of a tile that crosses M's or
    /// N's edge: of an operand whose tile may, the boxes of
    /// [`EDGE_BOX_LINES`] lines that hold some of the matrix's (the lines
    /// past it feed only accumulators that are never stored), up to the
    /// whole tile's; of the other, its whole tile.
    fn edge_loads_fn(&self, w: &mut Writer) {
        let maps: Vec<String> = self.edge_loads_maps().iter().map(|m| format!("const TensorMap& {m}")).collect();
        w.line("// a K step's copies for a tile that crosses M's or N's edge. TMA fills a box's lines past a");
        w.line("// matrix's end slowly, and issues many small boxes slowly too: where more than a quarter of");
        w.line(format!("// an operand's box lies past the edge, only its boxes of {EDGE_BOX_LINES} lines that hold some of the"));
        w.line("// matrix's are loaded. The lines left out feed only rows and columns of C never stored.");
        let params = format!(
            "unsigned bar, unsigned a_dst, unsigned b_dst, int k0, int block_m, int block_n, int M, int N, int a_batch, int b_batch, {}",
            maps.join(", ")
        );
        // (inlined where each tile's edges are tested once: called from a loop of edge tiles' own,
        // the function made ptxas serialize the consumers' wgmmas, C7512; called at each K step
        // of the one loop, it is kept out of line, inlined there it ran 3.5% slower)
        let inlined = self.edge_loads_inlined();
        let inline = if inlined { "__forceinline__" } else { "__noinline__" };
        w.block(format!("__device__ {inline} void edge_loads({params})"), |w| {
            let mut expect = Vec::new();
            for (which, x, edge) in [(Which::A, "a", "M - block_m"), (Which::B, "b", "N - block_n")] {
                let t = self.spec.tma_tile(which);
                if self.spec.edge_boxes(which) {
                    w.line(format!("const bool {x}_whole = {edge} > {};", self.spec.edge_lines_most(which)));
                    // (none where a cluster's block lies wholly past the edge: its partner's tile does not)
                    w.line(format!("const int {x}_lines = max(0, min({edge}, {}));", t.outer));
                    let per_box = t.bytes() / (t.outer / EDGE_BOX_LINES);
                    expect.push(format!("({x}_whole ? {} : ({x}_lines + {}) / {EDGE_BOX_LINES} * {per_box})", t.bytes(), EDGE_BOX_LINES - 1));
                } else {
                    expect.push(t.bytes().to_string());
                }
            }
            w.line(format!("mbar_expect_bytes(bar, {});", expect.join(" + ")));
            for (which, x, origin) in [(Which::A, "a", "block_m"), (Which::B, "b", "block_n")] {
                let t = self.spec.tma_tile(which);
                if !self.spec.edge_boxes(which) {
                    self.tile_loads(w, which, &format!("{x}_dst"));
                    continue;
                }
                w.block(format!("if ({x}_whole)"), |w| self.tile_loads(w, which, &format!("{x}_dst")));
                let line = t.box_bytes() / t.outer;
                let boxes = |w: &mut Writer| {
                    for j in 0..t.k_boxes {
                        let k = if j == 0 { "k0".to_string() } else { format!("k0 + {}", j * t.inner) };
                        let off = if j == 0 { String::new() } else { format!(" + {}", j * t.box_bytes()) };
                        w.line(format!("{}({x}_dst{off} + p * {line}, tmap_{x}_edge, {k}, {origin} + p, {x}_batch, bar);", self.load_fn(which)));
                    }
                };
                let boxes_loop = format!("for (int p = 0; p < {x}_lines; p += {EDGE_BOX_LINES})");
                if inlined {
                    // (unrolled in the edge tiles' K loop, the boxes' coordinates were hoisted out of it and
                    // held registers the consumers needed: grouped_fp8_swiglu spilled 28 bytes)
                    w.block("else", |w| {
                        w.line("#pragma unroll 1  // a box at a time: unrolled, the boxes' coordinates would hold registers through the K loop");
                        w.block(&boxes_loop, boxes);
                    });
                } else {
                    w.block(format!("else {boxes_loop}"), boxes);
                }
            }
        });
        w.line("");
    }

    /// The tensor maps `edge_loads` takes: each operand's whole tile's, and
    /// its edge boxes' where its tile may cross the edge.
    fn edge_loads_maps(&self) -> Vec<&'static str> {
        let mut maps = vec!["tmap_a", "tmap_b"];
        maps.extend([(Which::A, "tmap_a_edge"), (Which::B, "tmap_b_edge")].into_iter().filter(|(w, _)| self.spec.edge_boxes(*w)).map(|(_, m)| m));
        maps
    }

    /// The copies of operand `which`'s whole tile for K step `k0` into the
    /// stage at `dst`: every box, or under a multicast this block's part of
    /// the tile, into every block of the share.
    pub(super) fn tile_loads(&self, w: &mut Writer, which: Which, dst: &str) {
        let t = self.spec.tma_tile(which);
        let (map, batch, origin) = if which == Which::A { ("tmap_a", "a_batch", "block_m") } else { ("tmap_b", "b_batch", "block_n") };
        let at_box = |i: u32| match i * t.box_bytes() {
            0 => dst.to_string(),
            off => format!("{dst} + {off}"),
        };
        // K-major: (k, m or n), boxes of lines; M/N-major: (m or n, k), a box per swizzle row of it
        let step = if t.k_major { t.outer } else { t.inner };
        let at = |o: String| if t.k_major { ("k0".to_string(), o) } else { (o, "k0".to_string()) };
        let share = self.spec.multicast_share(which);
        if share == 1 {
            let load = self.load_fn(which);
            for (i, c0, c1) in self.tile_boxes(which) {
                w.line(format!("{load}({}, {map}, {c0}, {c1}, {batch}, bar);", at_box(i)));
            }
            return;
        }
        debug_assert_eq!(t.k_boxes, 1, "a shared tile is one swizzle row deep (the rules)");
        // this block's part of a shared tile, into every block of the share
        let per = t.boxes / share;
        w.line(format!("// {which:?} is shared: this block loads part share_part ({per} of its {} boxes) into every block of the share", t.boxes));
        for j in 0..per {
            let i = if per == 1 { "share_part".to_string() } else { format!("(share_part * {per} + {j})") };
            let (c0, c1) = at(format!("{origin} + {i} * {step}"));
            w.line(format!("tma_load_multicast({dst} + {i} * {}, {map}, {c0}, {c1}, {batch}, bar, share_mask);", t.box_bytes()));
        }
    }

    /// The operands whose TMA loads ask the L2 to evict their lines first.
    fn evict_first(&self) -> EvictFirst {
        match self.spec.staging {
            Staging::Tma { evict_first, .. } => evict_first,
            _ => EvictFirst::default(),
        }
    }

    /// The helper that loads operand `which`'s boxes: with the L2's
    /// evict-first hint where the spec asks for it ([`EvictFirst`]).
    fn load_fn(&self, which: Which) -> &'static str {
        if self.evict_first().of(which) {
            "tma_load_first"
        } else {
            "tma_load"
        }
    }

    /// The boxes of operand `which`'s whole tile at K step `k0` (in scope):
    /// each box's place in the stage and its coordinates in the tensor map.
    fn tile_boxes(&self, which: Which) -> Vec<(u32, String, String)> {
        let t = self.spec.tma_tile(which);
        let origin = if which == Which::A { "block_m" } else { "block_n" };
        let step = if t.k_major { t.outer } else { t.inner };
        let mut boxes = Vec::new();
        // a K-major tile wider than a swizzle row: a run of boxes for each of its K boxes
        for j in 0..t.k_boxes {
            let k = if j == 0 { "k0".to_string() } else { format!("k0 + {}", j * t.inner) };
            for i in 0..t.boxes {
                let o = if i == 0 { origin.to_string() } else { format!("{origin} + {}", i * step) };
                let (c0, c1) = if t.k_major { (k.clone(), o) } else { (o, k.clone()) };
                boxes.push((j * t.boxes + i, c0, c1));
            }
        }
        boxes
    }

    /// K steps of the block's tile prefetched into the L2 ahead of a
    /// dependent launch's wait (`tma(prefetch = ..)`; 0: none).
    fn prefetch(&self) -> u32 {
        match self.spec.staging {
            crate::spec::Staging::Tma { prefetch, .. } => prefetch,
            _ => 0,
        }
    }

    /// `tma(prefetch = P)`, before the wait for the stream's previous
    /// kernel: the block's threads ask the L2 for the first P K steps (of
    /// its part of K, under a cluster split) of its A and B tiles, the
    /// lines inside the matrices. A dependent launch runs this while that
    /// kernel's last copies land, which each of its blocks allowed once it
    /// had issued them ([`Self::let_next_start`]): a decode step's weight
    /// streams from HBM where the gap between two kernels would leave it
    /// idle. Nothing reaches the block until after the wait, and the L2
    /// serves every read, so a prefetched line the previous kernel then
    /// writes is read as written. (TMA's own prefetch of a box,
    /// `cp.async.bulk.prefetch.tensor`, slowed the H100's decode steps
    /// where a 128-byte line a thread sped them: BENCHMARKS.md.)
    fn l2_prefetch(&self, w: &mut Writer) {
        let p = self.prefetch();
        w.line(format!("// prefetch: the first {p} K steps of this block's tiles into the L2 while the kernel before ends"));
        w.block("", |w| {
            self.for_each_tile(w, |w| {
                Self::map_batches(w, "batch");
                // this block's K steps: the tile's, or under a cluster split its rank's part of them
                let (first, count) =
                    if self.spec.k_split() > 1 { (format!("k_first * {}", self.bk), "k_count") } else { ("0".to_string(), "k_tiles") };
                w.line(format!("const int k_begin = {first};"));
                w.line(format!("const int k_end = min(K, k_begin + min({p}, {count}) * {});", self.bk));
                w.block("if (k_end > k_begin)", |w| {
                    let operands =
                        [(Which::A, "A", "lda", "a_batch * batch_a", "block_m", "M"), (Which::B, "B", "ldb", "b_batch * batch_b", "block_n", "N")];
                    for (which, ptr, ld, batch, origin, end) in operands {
                        let (tile, bytes) = match which {
                            Which::A => (self.bm, self.spec.a.elem.bytes()),
                            Which::B => (self.bn, self.spec.b.elem.bytes()),
                        };
                        // (none where a cluster's block lies wholly past the edge)
                        let across = format!("max(0, min({tile}, {end} - {origin}))");
                        // K-major: a line of the tile's K steps per row (column) of its own; else a line per K
                        let (at, lines, len) = if self.spec.tma_tile(which).k_major {
                            (format!("(long long){origin} * {ld} + k_begin"), across, "(k_end - k_begin)".to_string())
                        } else {
                            (format!("(long long)k_begin * {ld} + {origin}"), "k_end - k_begin".to_string(), across)
                        };
                        w.line(format!(
                            "prefetch_lines((const char*)({ptr} + {batch} + {at}), (long long){ld} * {bytes}, {lines}, {len} * {bytes});"
                        ));
                    }
                });
            });
        });
    }

    /// Under `tma(prefetch = ..)`, where the block's last copy is issued:
    /// the stream's next dependent launch may start (and prefetch) once
    /// every block has said so. Before its copies it would hold the SMs
    /// and the HBM this kernel still needs.
    fn let_next_start(&self, w: &mut Writer, cond: Option<String>) {
        if self.prefetch() == 0 {
            return;
        }
        let call = "griddep_launch();  // this block's copies are all issued: the next dependent launch may start";
        match cond {
            Some(c) => w.line(format!("if ({c}) {call}")),
            None => w.line(call),
        }
    }

    /// The kernel's body under TMA staging, after the raster.
    pub(super) fn tma_body(&self, w: &mut Writer, stages: u32) {
        match self.spec.specialize {
            Some(sp) if self.spec.persistent.is_some_and(Persistent::splits_k) => self.specialized_stream_k(w, stages, sp),
            Some(sp) => self.specialized(w, stages, sp),
            None => self.alike(w, stages),
        }
    }

    /// Stream-K on the producer/consumer ring: the schedule's share of K
    /// steps (`crate::cuda::stream_k`), the producer filling stages through
    /// every unit of it and the consumers computing each unit, then handing
    /// its partial sum over or, as the tile's owner, adding the others' and
    /// storing C; the fix-up's barriers are the consumers' alone.
    fn specialized_stream_k(&self, w: &mut Writer, stages: u32, sp: Specialize) {
        let sk = self.tiling();
        self.tma_setup(w, stages, sp.consumers);
        sk.share(w, self.spec.smem_bytes() - self.spec.ticket_bytes());
        w.line("");
        // The ring counts the stages filled (emptied) so far in an int, a
        // stage and phase by a division by a constant; the producer works
        // out each unit's tile once. Worked out for every K step from the
        // share's 64-bit index (divisions by k_tiles), the hybrid ran 4096^3
        // at 78.8% of the persistent walk on the H100, and 81.6% this way.
        let (stage, round) = (format!("% {stages}"), format!("/ {stages}"));
        let producer = |w: &mut Writer| {
            w.line("// every K step of the share, unit after unit (a unit: K steps of one C tile)");
            w.line("int filled = 0;  // stages filled so far, over the whole share");
            w.block("for (long long it = first; it < last;)", |w| {
                w.line(format!("const int k_step = {};", sk.k_of("it")));
                sk.unit_len(w, "k_step");
                w.line(format!("const int tile = {};", sk.tile_of("it")));
                w.line("it += tiles;");
                sk.tile_origin(w);
                Self::map_batches(w, "batch");
                self.tile_k_loops(w, |w, copies| {
                    w.block("for (int kt = k_step; kt < k_step + tiles; ++kt, ++filled)", |w| {
                        w.line(format!("const int stage = filled {stage};"));
                        w.line(format!("mbar_wait(empty + 8 * stage, ((filled {round}) & 1) ^ 1);  // every consumer has released it"));
                        self.tma_issue_as(w, "kt", "stage", copies);
                    });
                });
            });
        };
        let consumers = |w: &mut Writer| {
            w.line("int used = 0;  // stages emptied so far, over the whole share");
            let body = |w: &mut Writer, _| {
                self.wgmma_accumulators(w);
                w.line("// block tier: the unit's K steps");
                w.block("for (int kt = 0; kt < tiles; ++kt, ++used)", |w| {
                    w.line(format!("const int stage = used {stage};"));
                    self.wait_full(w, "stage", &format!("(used {round}) & 1"));
                    self.wgmma_tile(w, "stage", 1);
                    w.line("// this warpgroup releases the previous stage, whose wgmmas are done");
                    self.release(w, "kt > 0 && ", &format!("((used - 1) {stage})"));
                });
                w.line("wgmma_wait<0>();  // the last stage's wgmmas");
                w.line("// and its stage goes back to the producer, already into the next unit");
                self.release(w, "", &format!("((used - 1) {stage})"));
            };
            sk.units_unchecked(w, body, |w| {
                let out = Output::for_batch(self.spec, w, "unit");
                self.epilogue(w, &out)
            });
        };
        self.roles(w, sp, producer, consumers);
    }

    /// The warpgroups' roles: one thread of warpgroup 0 runs `producer`
    /// (the warpgroup first gives registers back), the consumer warpgroups
    /// `consumers` (taking registers, their warpgroup tier in scope), then
    /// wait for their last TMA stores.
    fn roles(&self, w: &mut Writer, sp: Specialize, producer: impl FnOnce(&mut Writer), consumers: impl FnOnce(&mut Writer)) {
        let who = if self.ring().is_some() { "its threads copy by cp.async" } else { "one thread issues the copies" };
        w.line(format!("// roles: warpgroup 0 produces ({who}), {} consume", sp.consumers));
        w.block(format!("if (threadIdx.x < {})", 128 * sp.producers), |w| {
            if let Some(r) = sp.producer_regs {
                w.line(format!("regs_dec<{r}>();  // the producer needs few registers: give them to the consumers"));
            }
            match self.producer_threads(sp).1 {
                // the whole (only) producer warpgroup copies
                None => producer(w),
                Some(those) => w.block(format!("if ({those})"), producer),
            }
        });
        w.block("else", |w| {
            if let Some(r) = sp.consumer_regs {
                w.line(format!("regs_inc<{r}>();"));
            }
            self.warpgroup_tier(w, sp.producers);
            consumers(w);
            self.stores_done(w);
        });
    }

    /// Every warpgroup computes; thread 0 issues the copies ahead.
    fn alike(&self, w: &mut Writer, stages: u32) {
        self.tma_setup(w, stages, 1);
        self.for_each_tile(w, |w| self.alike_tile(w, stages));
        self.stores_done(w);
    }

    /// Under `epilogue = tma`, the leader waits for its last TMA stores
    /// to complete before the block exits.
    fn stores_done(&self, w: &mut Writer) {
        if self.spec.epilogue == Epilogue::Tma {
            w.line(format!("if ({}) bulk_wait<0>();  // the last TMA stores are complete", self.team().leader));
        }
    }

    /// One tile's K loop and epilogue with every warpgroup alike.
    fn alike_tile(&self, w: &mut Writer, stages: u32) {
        Self::map_batches(w, "batch");
        self.warpgroup_tier(w, 0);
        self.wgmma_accumulators(w);
        w.line(format!("// staging: thread 0 fills the first {stages} stage(s)"));
        w.block("if (threadIdx.x == 0)", |w| {
            w.block(format!("for (int kt = 0; kt < {stages} && kt < k_tiles; ++kt)"), |w| self.tma_issue(w, "kt", "kt"));
        });
        w.line("// block tier: walk K a tile at a time");
        w.block("for (int kt = 0; kt < k_tiles; ++kt)", |w| {
            let stage = if stages == 1 { "0".to_string() } else { format!("kt % {stages}") };
            let round = if stages == 1 { "kt".to_string() } else { format!("kt / {stages}") };
            w.line(format!("const int stage = {stage};"));
            w.line(format!("mbar_wait(full + 8 * stage, ({round}) & 1);  // the stage's copies have landed"));
            self.wgmma_tile(w, "stage", 0);
            w.line("__syncthreads();  // every warpgroup is done with the stage");
            w.block(format!("if (threadIdx.x == 0 && kt + {stages} < k_tiles)"), |w| {
                self.tma_issue(w, &format!("(kt + {stages})"), "stage");
            });
            self.let_next_start(w, Some(format!("threadIdx.x == 0 && kt + {stages} >= k_tiles - 1")));
        });
        w.line("");
        let out = Output::for_batch(self.spec, w, "tile");
        self.epilogue(w, &out);
    }

    /// A producer warpgroup feeds consumer warpgroups through the ring.
    fn specialized(&self, w: &mut Writer, stages: u32, sp: Specialize) {
        // under multicast, a stage is free once every block that reads it is done with it
        let readers = if self.multicasts() { self.spec.cluster_size() } else { 1 };
        // ping-pong: each stage is one consumer's, which alone releases it
        let releasing = if sp.pingpong { 1 } else { sp.consumers };
        // arrivals by thread: every consumer thread and the producer arrive on each barrier (the rules: no cluster)
        let per = if self.warp_releases() { 4 } else { 1 };
        let arrivals = if self.thread_arrivals() { 1 + 128 * sp.consumers } else { releasing * readers * per };
        self.tma_setup(w, stages, arrivals);
        let persistent = self.spec.persistent.is_some_and(Persistent::whole_tiles);
        if persistent && self.spec.cluster.is_none() {
            // (the contiguous walk counts each group's tiles along M itself)
            if self.spec.groups != Some(crate::spec::Groups::Contiguous) {
                w.line(format!("const int tiles_m = (M + {bm} - 1) / {bm};", bm = self.bm));
            }
            w.line(format!("const int tiles_n = (N + {bn} - 1) / {bn};", bn = self.bn));
        }
        let it = self.fill_counter();
        let (stage, round) = (format!("{it} % {stages}"), format!("{it} / {stages}"));
        // the persistent K loops count the stages they fill or empty through every tile
        let split = self.spec.k_split() > 1;
        let k_loop = match (persistent, split) {
            (true, _) => "for (int kt = 0; kt < k_tiles; ++kt, ++it)",
            (false, true) => "for (int kt = 0; kt < k_count; ++kt)",
            (false, false) => "for (int kt = 0; kt < k_tiles; ++kt)",
        };
        let k_step = self.k_step();
        let producer = |w: &mut Writer| {
            if persistent {
                w.line("int it = 0;  // stages filled so far, over every tile");
            }
            self.for_each_tile_of(w, None, Walker::Producer, |w| {
                Self::map_batches(w, "batch");
                let k_loop = |w: &mut Writer, copies: Copies| {
                    w.block(k_loop, |w| {
                        w.line(format!("const int stage = {stage};"));
                        let whose = if self.multicasts() { " of the cluster" } else { "" };
                        if self.thread_arrivals() {
                            w.line("mbar_arrive_wait(empty + 8 * stage);  // every consumer thread has released it");
                        } else {
                            w.line(format!("mbar_wait(empty + 8 * stage, (({round}) & 1) ^ 1);  // every consumer{whose} has released it"));
                        }
                        self.tma_issue_as(w, &k_step, "stage", copies);
                    });
                };
                self.tile_k_loops(w, k_loop);
                self.let_next_start(w, None);
            });
            if self.spec.block_scale_bytes() > 0 {
                w.line("asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");  // its scale copies have landed before it leaves");
            }
            self.queue_done(w);
        };
        let consumers = |w: &mut Writer| {
            if sp.overlap && self.spec.promoted() {
                return self.overlap_promoted(w, stages);
            }
            if sp.overlap {
                return self.overlap_consumers(w, stages);
            }
            if sp.pingpong {
                w.line("int it = 0;  // the ring's count at this consumer's K step: set at each of its tiles");
            } else if persistent {
                w.line("int it = 0;  // stages emptied so far, over every tile");
            }
            if self.thread_arrivals() {
                w.line("// the ring starts empty: each thread's first release of every stage");
                w.line(format!("for (int s = 0; s < {stages}; ++s) mbar_arrive(empty + 8 * s);"));
            }
            let turns = sp.pingpong.then_some(sp.consumers);
            self.for_each_tile_of(w, turns, Walker::Consumer, |w| {
                self.wgmma_accumulators(w);
                if let Some(c) = turns {
                    w.line("// ping-pong: tile `turn` of the block's walk fills the ring from stage count turn * k_tiles;");
                    w.line(format!("// its K loop waits for the previous turn's (consumer (turn - 1) % {c}) to be done with the ring"));
                    w.line("it = turn * k_tiles;");
                    w.line(format!("if (turn > 0) mbar_wait(turns + 8 * ((turn - 1) % {c}), ((turn - 1) / {c}) & 1);"));
                }
                let promoted = self.spec.promoted();
                if promoted {
                    self.promoted_k_loop(w, stages, if split { "k_count" } else { "k_tiles" }, "0");
                } else {
                    w.line("// block tier: walk K a tile at a time");
                    w.block(k_loop, |w| {
                        w.line(format!("const int stage = {stage};"));
                        self.wait_full(w, "stage", &format!("({round}) & 1"));
                        self.wgmma_tile(w, "stage", 1);
                        w.line("// this warpgroup releases the previous stage, whose wgmmas are done");
                        self.release(w, "kt > 0 && ", &format!("(({it} - 1) % {stages})"));
                    });
                }
                if !promoted {
                    w.line("wgmma_wait<0>();  // the last stage's wgmmas");
                }
                if persistent && !promoted {
                    w.line("// and its stage goes back to the producer, already into the next tile");
                    self.release(w, "", &format!("((it - 1) % {stages})"));
                }
                if split {
                    self.k_split_sum(w, sp);
                }
                if turns.is_some() {
                    w.line("// this turn is done with the ring: the next consumer's K loop may start");
                    w.line("if (threadIdx.x % 128 == 0) mbar_arrive(turns + 8 * group);");
                }
                w.line("");
                if self.spec.groups == Some(crate::spec::Groups::Indexed) {
                    self.indexed_run(w);
                    return w.block("", |w| {
                        w.line("const int M = run_end;  // the group's rows of this tile: every guard below stops there");
                        let out = Output::for_batch(self.spec, w, "tile");
                        self.epilogue(w, &out);
                    });
                }
                let out = Output::for_batch(self.spec, w, "tile");
                self.epilogue(w, &out);
            });
        };
        self.roles(w, sp, producer, consumers);
        if self.spec.cluster.is_some() {
            w.line("cluster_sync();  // no block leaves while another may still arrive on its barriers");
        }
    }

    /// The K step the K loops' stage `kt` holds: the tile's, or under a
    /// split along K this rank's part's.
    fn k_step(&self) -> String {
        self.k_step_of("kt")
    }

    /// [`Self::k_step`] of the loop variable `kt`.
    pub(super) fn k_step_of(&self, kt: &str) -> String {
        if self.spec.k_split() > 1 {
            format!("(k_first + {kt})")
        } else {
            kt.to_string()
        }
    }

    /// A promoted consumer's K loop (`wgmma(.., promote)`, `scale = block`):
    /// runs of [`PROMOTED_RUN`] stages, then pairs, then an odd count's last
    /// stage alone ([`Self::promoted_run`]: the sums of one stage promoted
    /// while the next one's wgmmas run). Each stage goes back to the
    /// producer once its wgmmas are done, before its promotion.
    ///
    /// Measured at 4096^3 on the H200 against cuBLASLt's fp8 GEMM (1370
    /// TFLOP/s): a stage at a time, 1258; in pairs, 1333. A warpgroup's
    /// tensor work stops once a run, for its last promotion: with both
    /// consumers waiting on the same stages, their stops meet (one
    /// consumer's runs shifted half a run behind ran 7% slower). Runs of 8
    /// stages in place of pairs: `fp8_block_scaled` (5 stages) +2.2% at
    /// 4096^3 and +3.1% at 8192^3 (1175 to 1201, 1231 to 1270; runs of 4
    /// +1.4%, +1.8%; H200, 2026-11-29). A pair in flight across the loop's
    /// turn instead makes ptxas serialize the wgmmas (C7514: 1034).
    ///
    /// By atom rows ([`crate::spec::KernelSpec::sums_by_atom_row`]) a stage at a time,
    /// the loop unrolled a turn of the ring and each wgmma's descriptors
    /// offsets from its stage's, so that few instructions lie between the
    /// wgmmas; the next stage's barrier tried before the last row's
    /// promotion ([`Self::tests_ahead`], 3% fewer cycles on 256 x 128
    /// tiles, H200, 2026-12-02). With the first two, 256 x 128 tiles ran
    /// 5.3% faster at 4096 x 7168 x 16384 and 4% at 4096^3 (1088 to 1146,
    /// 1073 to 1116 TFLOP/s) and 4% slower at
    /// 4096 x 32768 x 512, whose tiles take four stages each (888 to 852);
    /// 64 x 64 tiles of a lone consumer, which had taken its sums in pairs,
    /// 6.6% faster at 128 x 4096 x 7168 (H200, 2026-11-30).
    ///
    /// The loop starts at K step `first` (an expression: 0, or 1 where the
    /// tile's first stage went ahead, [`Self::overlap_promoted`]).
    fn promoted_k_loop(&self, w: &mut Writer, stages: u32, count: &str, first: &str) {
        let it = self.fill_counter();
        let step = |n: u32| if it == "kt" { format!("kt += {n}") } else { format!("kt += {n}, it += {n}") };
        if self.spec.sums_by_atom_row() {
            // (a stage at a time: one set of one row's sums leaves no second stage to run under a promotion)
            if self.block_scaled() {
                self.b_scale_window(w);
            }
            let ahead = self.tests_ahead();
            if ahead {
                w.line("unsigned landed = 0;  // 1 where the stage's copies were seen landed while the last stage's sums were promoted");
            }
            // (unrolled where a consumer thread has 128 registers or more: at the 96 of four consumers,
            // 640 threads, ptxas spilled)
            if self.spec.register_cap() >= 128 {
                w.line("// block tier: walk K a stage at a time, each atom row's sums waited on and promoted in turn,");
                w.line("// unrolled a turn of the ring");
                w.line(format!("#pragma unroll {stages}"));
            } else {
                w.line("// block tier: walk K a stage at a time, each atom row's sums waited on and promoted in turn");
            }
            return w.block(format!("for (int kt = {first}; kt < {count}; {})", step(1)), |w| {
                w.line(format!("const int s0 = {it} % {stages};"));
                if self.block_scaled() {
                    self.window_b_scale(w, first, count);
                }
                let parity = format!("({it} / {stages}) & 1");
                if ahead {
                    w.line(format!("if (!landed) mbar_wait(full + 8 * s0, {parity});  // the stage's copies have landed"));
                } else {
                    self.wait_full(w, "s0", &parity);
                }
                self.promoted_by_rows(w, "s0", &|w: &mut Writer| {
                    self.release(w, "", "s0");
                    if ahead {
                        w.line("// the next stage's barrier tried now: the answer comes while this row's sums are promoted");
                        w.line(format!("landed = mbar_test(full + 8 * (({it} + 1) % {stages}), (({it} + 1) / {stages}) & 1, kt + 1 < {count});"));
                    }
                });
            });
        }
        w.line(format!(
            "// block tier: walk K {PROMOTED_RUN} stages at a time, then two, each stage's sums promoted while the next one's wgmmas run"
        ));
        w.line(format!("int kt = {first};"));
        let run = |w: &mut Writer, n: u32| {
            let stage_var = |i: u32| format!("s{i}");
            self.promoted_run(
                w,
                n,
                &|w: &mut Writer, i: u32| {
                    let at = if i == 0 { it.to_string() } else { format!("({it} + {i})") };
                    w.line(format!("const int s{i} = {at} % {stages};"));
                    self.wait_full(w, &stage_var(i), &format!("({at} / {stages}) & 1"));
                },
                &|w: &mut Writer, i: u32| self.release(w, "", &stage_var(i)),
            );
        };
        w.block(format!("for (; kt + {} < {count}; {})", PROMOTED_RUN - 1, step(PROMOTED_RUN)), |w| run(w, PROMOTED_RUN));
        w.block(format!("for (; kt + 1 < {count}; {})", step(2)), |w| run(w, 2));
        w.block(format!("if (kt < {count})"), |w| {
            w.line("// an odd count's last stage");
            run(w, 1);
            if it != "kt" {
                w.line("++it;");
            }
        });
    }

    /// A cluster split along K, after the K loop: the ranks past 0 store
    /// their accumulators into rank 0's shared memory, a block tile of
    /// floats each (thread after thread, so that a warp's stores are
    /// contiguous), and exit; after the cluster's barrier rank 0 adds them
    /// in rank order, a fixed order whatever the timing, and goes on to the
    /// epilogue. The producer warpgroups arrive on the same barrier at the
    /// kernel's end (a cluster barrier counts every thread that has not
    /// exited), which they reach once their copies are issued.
    fn k_split_sum(&self, w: &mut Writer, sp: Specialize) {
        let split = self.spec.k_split();
        let threads = 128 * sp.consumers;
        let per = self.spec.block.m * self.spec.block.n / threads;
        let first = 128 * sp.producers;
        let others = if split == 2 { "rank 1 stores its sum".to_string() } else { format!("ranks 1 to {} store their sums", split - 1) };
        let exits = if split == 2 { "exits" } else { "exit" };
        w.line(format!("// cluster split along K: {others} in rank 0's shared memory and {exits};"));
        w.line("// rank 0 adds them in rank order (a fixed order) and stores the tile");
        w.line(format!(
            "const unsigned sums = a_smem + {} + (threadIdx.x - {first}) * 4;  // this thread's first float of the ranks' sums",
            self.spec.k_split_offset()
        ));
        // the accumulators' loops (those of one pass go), their index in acc and their place in
        // the thread's run of them (`e` fastest)
        let dims = [("im", self.ami), ("jn", self.ani), ("q", self.an / 8), ("e", 4)];
        let loops: Vec<(&str, u32)> = dims.iter().copied().filter(|&(_, n)| n > 1).collect();
        let acc = format!("acc{}", dims.iter().map(|&(v, n)| if n > 1 { format!("[{v}]") } else { "[0]".into() }).collect::<String>());
        let mut stride = 1;
        let mut terms = Vec::new();
        for &(v, n) in dims.iter().rev() {
            if n > 1 {
                terms.push(if stride == 1 { v.to_string() } else { format!("{v} * {stride}") });
            }
            stride *= n;
        }
        terms.reverse();
        let flat = if terms.is_empty() { "0".to_string() } else { terms.join(" + ") };
        let each = |w: &mut Writer, line: String| {
            fn nest(w: &mut Writer, loops: &[(&str, u32)], line: &str) {
                match loops.split_first() {
                    Some((&(var, n), rest)) => {
                        w.line("#pragma unroll");
                        w.block(format!("for (int {var} = 0; {var} < {n}; ++{var})"), |w| nest(w, rest, line));
                    }
                    None => w.line(line),
                }
            }
            nest(w, &loops, &line)
        };
        w.block("if (rank_k != 0)", |w| {
            each(w, format!("st_cluster_f32(sums + ((rank_k - 1) * {per} + {flat}) * {}, 0, {acc});", threads * 4));
        });
        w.line("cluster_sync();  // every rank's sum is in rank 0's shared memory");
        w.line("if (rank_k != 0) return;");
        w.block(format!("for (int r = 1; r < {split}; ++r)"), |w| {
            each(w, format!("{acc} += ld_shared_f32(sums + ((r - 1) * {per} + {flat}) * {});", threads * 4));
        });
    }

    /// `specialize(.., overlap)` on a promoted consumer: the next tile's
    /// first stage's wgmmas (into `part0`) issued before this tile's
    /// epilogue, so that the tensor cores work through it; done before the
    /// walk's back edge (ptxas serializes wgmmas in flight across it), they
    /// are promoted at the next tile's start, where its scales are known,
    /// and the stage released then. Its K loop starts at its second stage.
    /// It pays where the epilogue is long: 6-7% on `grouped_fp8_swiglu`'s
    /// Mixtral-like layer (SwiGLU through a C tile), nothing behind a TMA
    /// store's (H200, the guide's performance notes).
    fn overlap_promoted(&self, w: &mut Writer, stages: u32) {
        w.line("int it = 0;  // stages emptied so far, over every tile");
        w.line("int ahead = 0;  // 1 where the tile's first stage's sums are in part0 already (issued beside the previous tile's epilogue)");
        w.line("// declared once: the next tile's first stage's sums are made before this tile is done");
        self.sum_declarations(w);
        self.for_each_tile_of(w, None, Walker::Consumer, |w| {
            self.acc_declaration(w);
            w.block("if (ahead)", |w| {
                w.line("// the first stage, done beside the previous tile's epilogue: its scales, its release and its sums");
                w.line(format!("const int s0 = it % {stages};"));
                if self.block_scaled() {
                    self.read_block_scales(w, &Self::scales_of("part0"), "s0");
                }
                self.release(w, "", "s0");
                self.promote(w, "part0");
                w.line("++it;");
            });
            self.promoted_k_loop(w, stages, "k_tiles", "ahead");
            w.line("");
            let more = self.next_tile_exists(w);
            w.line("// the next tile's first stage, its wgmmas beside this tile's epilogue");
            w.line(format!("ahead = {more} && k_tiles > 0;"));
            w.block("if (ahead)", |w| {
                w.line(format!("const int s0 = it % {stages};"));
                self.wait_full(w, "s0", &format!("(it / {stages}) & 1"));
                self.wgmma_group(w, "s0", "part0");
            });
            let out = Output::for_batch(self.spec, w, "tile");
            self.epilogue(w, &out);
            w.line("wgmma_wait<0>();  // the next tile's first stage is done (no wgmma in flight across the walk's back edge)");
        });
    }

    /// Whether this block's walk has a tile after the one in scope: an
    /// expression, after any lines it needs. The contiguous walk moves a
    /// copy of its cursor on to the next tile's place.
    fn next_tile_exists(&self, w: &mut Writer) -> String {
        if self.spec.persistent == Some(Persistent::Queue) {
            w.line("// this block's next tile from the queue, once the producer has taken it (read again, and the slot");
            w.line("// released, at the walk's next turn)");
            w.line("const int t_next = queue_peek(qbar, q + 1);");
            return "t_next < tiles_m * tiles_n * batches".into();
        }
        if self.spec.groups != Some(crate::spec::Groups::Contiguous) {
            return "t + gridDim.x < tiles_m * tiles_n * batches".into();
        }
        w.line("// whether this block has another tile: a copy of the walk's cursor moved on to it (A's rows");
        w.line("// clamp the ends: M is the group's here)");
        let copies: Vec<String> = NEXT_CURSOR.iter().zip(CURSOR).map(|(next, now)| format!("{next} = {now}")).collect();
        w.line(format!("int {};", copies.join(", ")));
        self.move_cursor(w, "t + (int)gridDim.x", NEXT_CURSOR, "a_rows");
        format!("{} < batches", NEXT_CURSOR[0])
    }

    /// The contiguous walk's cursor (`names`: the group, its first tile in
    /// the walk, its first and end rows, its tiles along M) moved on until
    /// tile `t` lies in its group or the groups are past; each end kept
    /// within `rows` and after its group's start.
    fn move_cursor(&self, w: &mut Writer, t: &str, names: [&str; 5], rows: &str) {
        let [g, first, start, end, tiles_m] = names;
        let bm = self.bm;
        w.block(format!("while ({g} < batches && {t} >= {first} + {tiles_m} * tiles_n)"), |w| {
            w.line(format!("{first} += {tiles_m} * tiles_n;"));
            w.line(format!("{start} = {end};"));
            w.block(format!("if (++{g} < batches)"), |w| {
                w.line(format!("{end} = min({rows}, max(__ldg(group_ends + {g}), {start}));"));
                w.line(format!("{tiles_m} = ({end} - {start} + {bm} - 1) / {bm};"));
            });
        });
    }

    /// `specialize(.., overlap)`: a consumer's persistent walk with its two
    /// wgmma atoms along n committed as groups of their own. After a
    /// tile's K loop the first half goes out while the second half's last
    /// K step computes; then the next tile's first K steps for the first
    /// half are issued, as many as the ring holds but one (all of this
    /// tile's stages are free by then), and the second half goes out
    /// beside them.
    fn overlap_consumers(&self, w: &mut Writer, stages: u32) {
        let (stage, round) = (format!("it % {stages}"), format!("it / {stages}"));
        let ahead_most = (stages - 1).max(1);
        w.line("int it = 0;  // stages emptied so far, over every tile");
        w.line("// the next tile's first K steps whose first-half wgmmas are in flight (issued beside the previous tile's second half's epilogue)");
        w.line("int ahead = 0;");
        // declared once: the next tile's first wgmmas are issued into them before this tile is done
        self.wgmma_accumulators(w);
        self.for_each_tile_of(w, None, Walker::Consumer, |w| {
            w.line("// block tier: walk K a tile at a time, each half's wgmmas a group");
            w.block("for (int kt = 0; kt < k_tiles; ++kt, ++it)", |w| {
                w.line(format!("const int stage = {stage};"));
                w.line("const bool issued = kt < ahead;  // the first half's wgmmas of this K step are in flight");
                w.block("if (!issued)", |w| self.wait_full(w, "stage", &format!("({round}) & 1")));
                w.line("wgmma_fence();");
                w.block("if (!issued)", |w| self.wgmma_half(w, "stage", 0, "kt > 0 || ks > 0"));
                self.wgmma_half(w, "stage", 1, "kt > 0 || ks > 0");
                w.line("// the previous K step's groups are done with their stage (where the first halves went");
                w.line("// ahead, the second half's group is the last after them)");
                w.line("if (issued) wgmma_wait<1>();");
                w.line("else wgmma_wait<2>();");
                w.line("// this warpgroup releases the previous stage");
                self.release(w, "kt > 0 && ", &format!("((it - 1) % {stages})"));
            });
            w.line("");
            let out = Output::for_batch(self.spec, w, "tile");
            let bias = self.overlap_setup(w, &out);
            w.line("wgmma_wait<1>();  // the first half is whole; the second half's last K step may still run");
            self.overlap_half(w, &out, 0, bias);
            w.line("wgmma_wait<0>();  // the second half is whole");
            w.line("// and the last stage goes back to the producer, already into the next tile");
            self.release(w, "", &format!("((it - 1) % {stages})"));
            w.line(format!("// the next tile's first K steps for the first half ({ahead_most} of the ring's {stages} stages, all free now),"));
            w.line("// beside this tile's second half's epilogue");
            let more = self.next_tile_exists(w);
            w.line(format!("ahead = {more} ? (k_tiles < {ahead_most} ? k_tiles : {ahead_most}) : 0;"));
            w.block("for (int kt = 0; kt < ahead; ++kt)", |w| {
                w.line(format!("const int stage = (it + kt) % {stages};"));
                self.wait_full(w, "stage", &format!("((it + kt) / {stages}) & 1"));
                w.line("wgmma_fence();");
                self.wgmma_half(w, "stage", 0, "kt > 0 || ks > 0");
            });
            self.overlap_half(w, &out, 1, bias);
            // ptxas wants no wgmma in flight across the walk's back edge;
            // without this wait it puts its own at the start of the second
            // half's epilogue, which then ran after the next tile's early
            // wgmmas instead of beside them
            w.line("wgmma_wait<0>();  // the next tile's early K steps are done");
        });
    }

    /// A consumer's wait for the filling of stage `stage` (a variable in
    /// scope) of parity `parity`; where cp.async filled it, then the fence
    /// that lets wgmma (the async proxy) see what the copies wrote.
    pub(super) fn wait_full(&self, w: &mut Writer, stage: &str, parity: &str) {
        if self.thread_arrivals() {
            w.line(format!("mbar_arrive_wait(full + 8 * {stage});  // the stage's copies have landed (every consumer thread arrives)"));
            return;
        }
        w.line(format!("mbar_wait(full + 8 * {stage}, {parity});  // the stage's copies have landed"));
        if self.ring().is_some() {
            w.line("fence_proxy_async();  // written by cp.async, read by wgmma");
        }
    }

    /// A consumer warpgroup's release of stage `stage` (an expression) on
    /// the empty barrier, where `cond` (a prefix ending in `&& ` or empty)
    /// holds: one arrival from the warpgroup, or under multicast one on
    /// the barrier of each block of the cluster, whose copies also fill it.
    pub(super) fn release(&self, w: &mut Writer, cond: &str, stage: &str) {
        let size = self.spec.cluster_size();
        if self.thread_arrivals() {
            return match cond.strip_suffix(" && ") {
                Some(c) => w.line(format!("if ({c}) mbar_arrive(empty + 8 * {stage});  // every thread")),
                None => w.line(format!("mbar_arrive(empty + 8 * {stage});  // every thread")),
            };
        }
        // (by warp: each warp reads the stage's block scales itself, after its wgmmas)
        let (group, who) = if self.warp_releases() { (32, "each warp, past its reads of the stage's scales") } else { (128, "") };
        let note = if who.is_empty() { String::new() } else { format!("  // {who}") };
        if self.warp_releases() {
            // (the arrival releases the elected lane's reads alone: the warp's other lanes' come first)
            w.line("__syncwarp();  // every lane's reads of the scales are done");
        }
        if self.multicasts() {
            w.line(format!("if ({cond}threadIdx.x % {group} < {size}) mbar_arrive_cluster(empty + 8 * {stage}, threadIdx.x % {group});{note}"));
        } else {
            w.line(format!("if ({cond}threadIdx.x % {group} == 0) mbar_arrive(empty + 8 * {stage});{note}"));
        }
    }

    /// Whether each consumer warp releases the stages on its own, not its
    /// warpgroup's first thread for all four: under `scale = block` in a
    /// producer's ring, where each warp reads a stage's scales from shared
    /// memory after issuing its wgmmas, so that no `wgmma_fence` waits for
    /// the reads. (Read before the wgmmas, with one release a warpgroup,
    /// the kernel ran within the runs' noise of this: 88% of per-tensor
    /// promotion's speed at 4096^3 on the H200, against 86%.)
    pub(super) fn warp_releases(&self) -> bool {
        self.spec.block_scale_bytes() > 0 && self.spec.paired_sums()
    }

    /// [`KernelSpec::b_scales_copied`](crate::spec::KernelSpec::b_scales_copied).
    pub(super) fn b_scales_copied(&self) -> bool {
        self.spec.b_scales_copied()
    }

    /// Whether a consumer by atom rows tries the next stage's full barrier
    /// before its last row's promotion and waits after it only where that
    /// try failed ([`Self::promoted_k_loop`]), as ptxas scheduled
    /// DeepGEMM's loop: a try's answer takes time, which the promotion's
    /// multiplies then hide. (Placed after the promotion, past the branch
    /// for a window of B's scales, it held each stage's next wgmmas.)
    pub(super) fn tests_ahead(&self) -> bool {
        self.spec.sums_by_atom_row() && !self.thread_arrivals() && self.ring().is_none()
    }

    /// Whether every thread arrives on the ring's barriers and waits on its
    /// token (`arrivals = thread`), not the elected arrivals and parity waits.
    fn thread_arrivals(&self) -> bool {
        self.spec.specialize.is_some_and(|sp| sp.arrivals == Arrivals::Thread)
    }

    /// Whether an operand goes to the blocks of a cluster by TMA multicast.
    fn multicasts(&self) -> bool {
        self.spec.cluster.is_some_and(|c| c.multicast.is_some())
    }

    /// A clustered kernel's view of its place: the cluster's C tiles
    /// (`tiles_m x tiles_n` of them, each `cluster.m x cluster.n` block
    /// tiles), this block's tile in its cluster's, and under multicast
    /// which part of the shared operand it loads and for which blocks.
    fn cluster_place(&self, w: &mut Writer) {
        let c = self.spec.cluster.expect("clustered");
        let (cbm, cbn) = (self.bm * c.m, self.bn * c.n);
        if c.k > 1 {
            w.line(format!("// cluster: {} blocks share each {cbm}x{cbn} tile along K, rank r streaming part r of its K steps", c.k));
        } else {
            w.line(format!("// cluster: {}x{} blocks (rank r at m tile r % {}, n tile r / {}) take a {cbm}x{cbn} cluster tile", c.m, c.n, c.m, c.m));
        }
        w.line("const unsigned rank = cluster_rank();");
        w.declare("rank_m", format!("const int rank_m = rank % {};", c.m));
        if c.k > 1 {
            w.declare("rank_n", format!("const int rank_n = rank / {} % {};", c.m, c.n));
            w.line(format!("const int rank_k = rank / {};  // this block's part of the tile's K steps", c.m * c.n));
        } else {
            w.declare("rank_n", format!("const int rank_n = rank / {};", c.m));
        }
        w.declare("tiles_m", format!("const int tiles_m = (M + {cbm} - 1) / {cbm};  // cluster tiles"));
        w.declare("tiles_n", format!("const int tiles_n = (N + {cbn} - 1) / {cbn};"));
        match c.multicast {
            Some(Which::B) => {
                w.line(format!("// multicast: the {} blocks of a cluster column share B; each loads part rank_m of it for all", c.m));
                w.line(format!("const unsigned short share_mask = {:#x} << (rank_n * {});", (1u32 << c.m) - 1, c.m));
                w.line("const int share_part = rank_m;");
            }
            Some(Which::A) => {
                let row: u32 = (0..c.n).map(|j| 1 << (c.m * j)).sum();
                w.line(format!("// multicast: the {} blocks of a cluster row share A; each loads part rank_n of it for all", c.n));
                w.line(format!("const unsigned short share_mask = {row:#x} << rank_m;"));
                w.line("const int share_part = rank_n;");
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Groups, KernelSpec};

    /// `grouped_masked`'s tiling (128 x 256 tiles, two consumers, a
    /// persistent walk in the grouped raster) on the layout `groups`.
    fn spec(groups: Groups) -> KernelSpec {
        use crate::spec::*;
        let bf16 = |layout| Operand { elem: Elem::Bf16, layout };
        let s = KernelSpec {
            name: "walk".into(),
            a: bf16(Layout::RowMajor),
            b: bf16(Layout::ColMajor),
            c: bf16(Layout::RowMajor),
            block: Block { m: 128, n: 256, k: Some(64), threads: 384, min_blocks: None },
            warp: Some(Warp { m: 64, n: 256, m_iters: 1, n_iters: 1 }),
            thread: None,
            atom: Atom::Wgmma { m: 64, n: 256, k: 16, zeroed: false, promote: false },
            staging: Staging::tma(4),
            specialize: Some(Specialize {
                producers: 1,
                consumers: 2,
                producer_regs: Some(56),
                consumer_regs: Some(224),
                pingpong: false,
                arrivals: Arrivals::Warpgroup,
                overlap: false,
            }),
            swizzle: Swizzle::B128,
            raster: Raster::Grouped(16),
            persistent: Some(Persistent::Tiles),
            cluster: None,
            epilogue: Epilogue::Vector,
            fused: Fused::default(),
            edges: Edges::Guarded,
            groups: Some(groups),
            arch: Arch::Sm90a,
        };
        assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
        s
    }

    /// The tiles (problem, block_m, block_n, the M its guards stop at) that
    /// a grouped spec's persistent walk gives every block of a `grid` of
    /// blocks over an `m x n` problem of `batches` groups with `array` (the
    /// layout's device array): the walk as generated, compiled as host C++
    /// and run block after block.
    fn walk(groups: Groups, (m, n, batches): (usize, usize, usize), array: &[i32], grid: u32) -> Vec<(i32, i32, i32, i32)> {
        let s = spec(groups);
        let tc = Tc::new(&s);
        let mut w = Writer::default();
        let name = groups.array();
        w.block(format!("static void walk(int M, int N, int batches, const int* {name})"), |w| {
            if groups != Groups::Contiguous {
                w.line(format!("const int tiles_m = (M + {} - 1) / {};", tc.bm, tc.bm));
            }
            w.line(format!("const int tiles_n = (N + {} - 1) / {};", tc.bn, tc.bn));
            tc.for_each_tile(w, |w| w.line("std::printf(\"%d %d %d %d\\n\", batch, block_m, block_n, M);"));
        });
        let values: Vec<String> = array.iter().map(i32::to_string).collect();
        let program = format!(
            "{}{}\nint main() {{\n  static const int array[] = {{{}}};\n  gridDim.x = {grid};\n  for (unsigned b = 0; b < {grid}; ++b) {{ blockIdx.x = b; walk({m}, {n}, {batches}, array); }}\n}}\n",
            crate::cuda::host::WARP_SHIM,
            w.finish(),
            values.join(", ")
        );
        let out = crate::cuda::host::run_cpp(&format!("walk-{}-{grid}", groups.name()), &program);
        crate::cuda::host::printed_tiles(&out)
    }

    /// The tiles each group's rows `[start, end)` should take in 128 x 256 tiles.
    fn expected(groups: &[(i32, usize, usize)], n: usize) -> Vec<(i32, i32, i32, i32)> {
        crate::cuda::host::group_tiles(groups, n, (128, 256))
    }

    /// `groups = contiguous`: every group's rows in tiles of its own, none
    /// reaching into the next group (its last partial, its M the group's
    /// end), each tile once over the grid; empty groups (first, middle,
    /// last) take none; one-row groups one a column; all rows in one group
    /// its rows' tiles; ends that go back make a group empty, ends past m
    /// stop at m; and one group of all m rows is a plain launch's walk.
    #[test]
    fn the_contiguous_walk_gives_each_group_its_own_tiles_once() {
        let (m, n) = (333, 600);
        // (the ends; each group's rows that remain: group, start, end)
        type Case<'a> = (&'a [i32], &'a [(i32, usize, usize)]);
        let cases: [Case; 6] = [
            (&[100, 100, 333], &[(0, 0, 100), (2, 100, 333)]),
            (&[0, 0, 333], &[(2, 0, 333)]),
            (&[1, 2, 3, 333], &[(0, 0, 1), (1, 1, 2), (2, 2, 3), (3, 3, 333)]),
            (&[200, 100, 333, 1000], &[(0, 0, 200), (2, 200, 333)]),
            (&[-5, 129, 1000], &[(1, 0, 129), (2, 129, 333)]),
            (&[333], &[(0, 0, 333)]),
        ];
        for (ends, groups) in cases {
            for grid in [1, 3, 7] {
                let got = walk(Groups::Contiguous, (m, n, ends.len()), ends, grid);
                assert_eq!(got, expected(groups, n), "ends {ends:?} over {grid} blocks");
            }
        }
        // one group of all the rows walks a plain launch's tiles
        assert_eq!(walk(Groups::Contiguous, (m, n, 1), &[m as i32], 5), walk(Groups::Masked, (m, n, 1), &[m as i32], 5));
    }

    /// The look ahead of a promoted consumer's `overlap` on contiguous
    /// groups: at each of a block's tiles, a copy of the walk's cursor
    /// moved on one tile says whether the walk gives the block another (the
    /// next tile's first stage is issued early only then: one the producer
    /// never fills would hang the consumers). Every block's tiles but its
    /// last say yes, its last no, over empty, one-row and clamped groups
    /// and grids with blocks of one tile or none.
    #[test]
    fn the_contiguous_walks_look_ahead_finds_each_blocks_next_tile() {
        let (m, n) = (333, 600);
        let s = spec(Groups::Contiguous);
        let tc = Tc::new(&s);
        let cases: [&[i32]; 7] = [&[100, 100, 333], &[0, 0, 333], &[1, 2, 3, 333], &[200, 100, 333, 1000], &[-5, 129, 1000], &[333], &[0]];
        for ends in cases {
            for grid in [1u32, 3, 7, 40] {
                let mut w = Writer::default();
                w.block("static void walk(int M, int N, int batches, const int* group_ends)", |w| {
                    w.line("const int a_rows = M;");
                    w.line(format!("const int tiles_n = (N + {} - 1) / {};", tc.bn, tc.bn));
                    tc.for_each_tile(w, |w| {
                        let more = tc.next_tile_exists(w);
                        w.line(format!("std::printf(\"%u %d\\n\", blockIdx.x, (int)({more}));"));
                    });
                });
                let values: Vec<String> = ends.iter().map(i32::to_string).collect();
                let program = format!(
                    "{}{}\nint main() {{\n  static const int array[] = {{{}}};\n  gridDim.x = {grid};\n  for (unsigned b = 0; b < {grid}; ++b) {{ blockIdx.x = b; walk({m}, {n}, {}, array); }}\n}}\n",
                    crate::cuda::host::WARP_SHIM,
                    w.finish(),
                    values.join(", "),
                    ends.len()
                );
                let out = crate::cuda::host::run_cpp(&format!("look-ahead-{grid}"), &program);
                let said: Vec<(u32, i32)> = out
                    .lines()
                    .map(|l| {
                        let v: Vec<&str> = l.split_whitespace().collect();
                        (v[0].parse().unwrap(), v[1].parse().unwrap())
                    })
                    .collect();
                // the same blocks' tiles as the walk gives them
                assert_eq!(said.len(), walk(Groups::Contiguous, (m, n, ends.len()), ends, grid).len(), "ends {ends:?} over {grid} blocks");
                for b in 0..grid {
                    let mine: Vec<i32> = said.iter().filter(|(block, _)| *block == b).map(|&(_, more)| more).collect();
                    let want: Vec<i32> = (0..mine.len()).map(|i| i32::from(i + 1 < mine.len())).collect();
                    assert_eq!(mine, want, "ends {ends:?}, block {b} of {grid}");
                }
            }
        }
    }

    /// `fp8_promoted`'s tiling (e4m3, promoted sums, 128 x 128 x 128 tiles
    /// of two consumers, a persistent walk) on `stages` stages.
    fn promoted_spec(stages: u32) -> KernelSpec {
        use crate::spec::*;
        let mut s = spec(Groups::Contiguous);
        let e4m3 = |layout| Operand { elem: Elem::F8E4M3, layout };
        (s.a, s.b) = (e4m3(Layout::RowMajor), e4m3(Layout::ColMajor));
        s.block = Block { m: 128, n: 128, k: Some(128), threads: 384, min_blocks: None };
        s.warp = Some(Warp { m: 64, n: 128, m_iters: 1, n_iters: 1 });
        s.atom = Atom::Wgmma { m: 64, n: 128, k: 32, zeroed: false, promote: true };
        s.staging = Staging::tma(stages);
        s.specialize = s.specialize.map(|sp| Specialize { producer_regs: Some(24), consumer_regs: Some(240), ..sp });
        s.epilogue = Epilogue::Tma;
        s.fused = Fused { scale: Some(Scale::Tensor), ..Fused::default() };
        s.groups = None;
        assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
        s
    }

    /// Host stand-ins for a promoted consumer's K loop: the ring's waits and
    /// releases checked in order, wgmma groups that land (their sums 2^k for
    /// the tile's k-th stage) only when waited for, NaNs until then.
    /// `STAGE_A`: the bytes of A a stage holds, which names a descriptor's
    /// stage; `GROUPS`: the wgmma groups a stage takes (its atom rows', one
    /// by one, or one), all done before its release.
    const PROMOTED_SHIM: &str = r#"#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <vector>
static const unsigned full = 0, empty = 1 << 12, a_smem = 1 << 20, b_smem = 1 << 26;
static struct { unsigned x; } threadIdx = {128};
static int S, STAGE_A, GROUPS, waits, releases, tile_at, fills[64], done[1 << 12];
static bool released[1 << 12];
struct Group { float (*d)[4]; int k, steps; };
static std::vector<Group> pending;
static Group open_group;
static void fail(const char* why, int a, int b) { std::printf("FAIL %s %d %d\n", why, a, b); std::exit(0); }
static void mbar_wait(unsigned bar, int parity) {
    const int s = (int)(bar - full) / 8, f = waits++;
    if (s != f % S || parity != ((f / S) & 1)) fail("wait out of order", s, f);
    if (f >= S && !released[f - S]) fail("wait for a fill the producer cannot make", s, f);
    fills[s] = f;
}
// a try of the next wait ahead of it (`mbar_test`): tried in order, as a wait is; it succeeds, as a
// wait, on every other fill the producer can have made, and fails on the rest
static unsigned mbar_test(unsigned bar, int parity, unsigned when) {
    if (!when) return 0;
    const int s = (int)(bar - full) / 8, f = waits;
    if (s != f % S || parity != ((f / S) & 1)) fail("try out of order", s, f);
    if ((f >= S && !released[f - S]) || f % 2 == 1) return 0;
    mbar_wait(bar, parity);
    return 1;
}
static void mbar_arrive(unsigned bar) {
    const int s = (int)(bar - empty) / 8, r = releases++;
    if (s != r % S || fills[s] != r) fail("release out of order", s, r);
    if (done[r] < GROUPS) fail("release before the stage's wgmmas are done", s, r);
    released[r] = true;
}
static void fence_proxy_async() {}
static void wgmma_fence() {}
static void wgmma_commit() {
    if (open_group.steps != 4) fail("a group of other than four K steps", open_group.steps, open_group.k);
    pending.push_back(open_group);
}
template <int N> static void wgmma_wait() {
    while ((int)pending.size() > N) {
        const Group g = pending.front();
        pending.erase(pending.begin());
        for (int q = 0; q < 16; ++q) for (int e = 0; e < 4; ++e) g.d[q][e] = std::ldexp(1.0f, g.k - tile_at);
        ++done[g.k];
    }
}
static unsigned long long wgmma_desc(unsigned addr, int, int) { return addr; }
static void wgmma_m64n128k32(float (*d)[4], unsigned long long a, unsigned long long, bool accumulate) {
    const int k = fills[(int)(a - a_smem) / STAGE_A];
    if (!accumulate) {
        open_group = Group{d, k, 1};
        for (int q = 0; q < 16; ++q) for (int e = 0; e < 4; ++e) d[q][e] = NAN;
    } else if (open_group.d != d || open_group.k != k) fail("a group across sets or stages", k, open_group.k);
    else ++open_group.steps;
}
"#;

    /// A promoted consumer's K loop as generated (runs, pairs, a last
    /// stage), run on the host for every K count from 1 to 23 and 2 to 6
    /// stages, with and without a first stage gone ahead (`overlap`), over
    /// several tiles in a row: host stand-ins check that it waits for the
    /// ring's fills in order with each one's parity, never for a fill the
    /// producer could not have made (its stage not yet released), releases
    /// each stage once and only after the wgmmas reading it are done, and
    /// promotes each stage's sums once, whole (a set read while its
    /// wgmmas run holds NaNs): the accumulators end at 2^K - 1 where stage
    /// k's sums are 2^k.
    #[test]
    fn the_promoted_k_loop_waits_releases_and_promotes_every_stage_once() {
        for stages in 2..=6u32 {
            let s = promoted_spec(stages);
            let tc = Tc::new(&s);
            let mut w = Writer::default();
            w.block("static float tile(int k_tiles, int ahead, int& it)", |w| {
                w.line("const int group_m = 0, group_n = 0;");
                tc.acc_declaration(w);
                tc.sum_declarations(w);
                w.block("if (ahead)", |w| {
                    // what `overlap_promoted` does with the stage that went ahead
                    w.line(format!("const int s0 = it % {stages};"));
                    tc.wait_full(w, "s0", &format!("(it / {stages}) & 1"));
                    tc.wgmma_group(w, "s0", "part0");
                    w.line("wgmma_wait<0>();");
                    tc.release(w, "", "s0");
                    tc.promote(w, "part0");
                    w.line("++it;");
                });
                tc.promoted_k_loop(w, stages, "k_tiles", "ahead");
                w.line("if (!pending.empty()) fail(\"wgmmas left in flight\", (int)pending.size(), 0);");
                w.line("return acc[0][0][0][0] == acc[0][0][15][3] ? acc[0][0][0][0] : NAN;");
            });
            let program = format!(
                "{PROMOTED_SHIM}{}\nint main() {{\n  S = {stages};\n  STAGE_A = 16384;\n  GROUPS = 1;\n  int it = 0;\n  for (int ahead = 0; ahead < 2; ++ahead)\n    for (int k = 1; k <= 23; ++k) {{\n      // this tile's stages are the ring's fills from tile_at on, their sums 2^0, 2^1, ...\n      tile_at = waits;\n      const float sum = tile(k, ahead, it);\n      std::printf(\"%d %d %d %.1f %d\\n\", ahead, k, waits - tile_at, sum, releases == waits && it == waits);\n    }}\n}}\n",
                w.finish()
            );
            let out = crate::cuda::host::run_cpp(&format!("promoted-loop-{stages}"), &program);
            each_stage_once(&out, stages, 46);
        }
    }

    /// The host runs' lines, `ahead k waits sum released` a tile: none
    /// failed, `tiles` of them, each tile with a wait a stage, every
    /// stage's sums once (2^k - 1) and every stage released.
    fn each_stage_once(out: &str, stages: u32, tiles: usize) {
        assert!(!out.contains("FAIL"), "{stages} stages: {out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), tiles, "{stages} stages: {out}");
        for l in lines {
            let v: Vec<&str> = l.split_whitespace().collect();
            let k: i32 = v[1].parse().unwrap();
            assert_eq!(v[2].parse::<i32>().unwrap(), k, "{stages} stages, {l}: a wait a stage");
            assert_eq!(v[3].parse::<f64>().unwrap(), f64::from((1 << k) - 1), "{stages} stages, {l}: every stage's sums once");
            assert_eq!(v[4], "1", "{stages} stages, {l}: every stage released, the fill counter at the waits");
        }
    }

    /// Consumers that take their sums one atom row at a time
    /// (`KernelSpec::sums_by_atom_row`): one of a 128-row warpgroup tile
    /// (256 x 128 tiles) and a lone consumer of 64 rows (64 x 128 tiles),
    /// run on the host as the paired loop is above, for every K count from
    /// 1 to 23 and 2 to 4 stages over several tiles: each stage waited for
    /// in order (or tried ahead, during the last stage's promotion, and
    /// found landed: the shim's tries succeed on every other fill) and
    /// released once, after its last row's wgmmas; each row's
    /// sums promoted once, whole, into its own accumulators (all end at
    /// 2^K - 1).
    #[test]
    fn a_tall_or_lone_consumer_promotes_each_atom_row_of_each_stage_once() {
        for (stages, tall) in (2..=4u32).flat_map(|s| [(s, true), (s, false)]) {
            let mut s = promoted_spec(stages);
            if tall {
                (s.block.m, s.warp.as_mut().unwrap().m) = (256, 128);
            } else {
                (s.block.m, s.block.threads) = (64, 256);
                s.specialize.as_mut().unwrap().consumers = 1;
            }
            assert!(s.sums_by_atom_row() && !s.paired_sums(), "{s:?}");
            assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
            let rows = s.warp.unwrap().m / 64;
            // the accumulators and one atom row's sums; for the tall tile the paired loop's three
            // sets would not fit
            assert_eq!(s.accumulators_per_thread(), 64 * rows + 64);
            if tall {
                let mut overlapped = s.clone();
                overlapped.specialize.as_mut().unwrap().overlap = true;
                assert!(!overlapped.sums_by_atom_row() && overlapped.accumulators_per_thread() == 3 * 128);
                assert!(crate::check(&overlapped).iter().any(|d| d.msg.contains("384 f32 accumulators")), "{:?}", crate::check(&overlapped));
            }
            let tc = Tc::new(&s);
            let mut w = Writer::default();
            w.block("static float tile(int k_tiles, int& it)", |w| {
                w.line("const int group_m = 0, group_n = 0;");
                tc.acc_declaration(w);
                tc.sum_declarations(w);
                tc.promoted_k_loop(w, stages, "k_tiles", "0");
                w.line("if (!pending.empty()) fail(\"wgmmas left in flight\", (int)pending.size(), 0);");
                w.line("const float v = acc[0][0][0][0];");
                let last = rows - 1;
                w.line(format!("return v == acc[0][0][15][3] && v == acc[{last}][0][0][0] && v == acc[{last}][0][15][3] ? v : NAN;"));
            });
            let program = format!(
                "{PROMOTED_SHIM}{}\nint main() {{\n  S = {stages};\n  STAGE_A = {};\n  GROUPS = {rows};\n  int it = 0;\n  for (int k = 1; k <= 23; ++k) {{\n    tile_at = waits;\n    const float sum = tile(k, it);\n    std::printf(\"0 %d %d %.1f %d\\n\", k, waits - tile_at, sum, releases == waits && it == waits);\n  }}\n}}\n",
                w.finish(),
                s.tma_tile(Which::A).bytes()
            );
            let out = crate::cuda::host::run_cpp(&format!("promoted-rows-{stages}-{rows}"), &program);
            each_stage_once(&out, stages, 23);
        }
    }

    /// `scale = block` in a producer's ring: the landing of B's scale
    /// copies is one of a full barrier's two arrivals (`.noinc`: the form
    /// with an arrival pending beside the producer's own stops the kernel
    /// under synccheck), and every consumer warp's lanes are done reading
    /// a stage's scales before the warp's elected lane releases it.
    #[test]
    fn block_scale_copies_arrive_once_and_each_warp_syncs_before_its_release() {
        use crate::spec::{Atom, Fused, Scale};
        let mut s = promoted_spec(5);
        s.atom = Atom::Wgmma { m: 64, n: 128, k: 32, zeroed: false, promote: false };
        s.fused = Fused { scale: Some(Scale::Block), ..Fused::default() };
        assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
        let src = crate::generate(&s).unwrap().source;
        assert!(src.contains("mbar_init(full + 8 * s, 2);"), "{src}");
        assert!(src.contains("cp.async.mbarrier.arrive.noinc.shared::cta.b64") && !src.contains("cp.async.mbarrier.arrive.shared"), "{src}");
        let lines: Vec<&str> = src.lines().map(str::trim).collect();
        let releases: Vec<usize> = (1..lines.len()).filter(|&i| lines[i].contains("mbar_arrive(empty")).collect();
        assert!(releases.len() >= 3, "the runs', pairs' and last stage's releases: {src}");
        for i in releases {
            assert!(lines[i - 1].starts_with("__syncwarp();"), "a release without its warp's sync: {}", lines[i]);
        }
    }

    /// `scale = block` by atom rows (a lone consumer of 64 x 64, two of
    /// 128 x 128): the producer copies no scale of B (a full barrier of one
    /// arrival, no cp.async in the source); each consumer warpgroup loads
    /// its tile's scales of B, N's last block's where its columns lie past
    /// N, into a window of its own in shared memory, between two barriers
    /// of its own, 256 K blocks at a time where its K loop reaches
    /// them, and each stage reads its K block's from there before it waits
    /// for the stage.
    #[test]
    fn a_consumer_by_atom_rows_loads_b_scales_into_its_window() {
        use crate::spec::{Atom, Fused, Scale};
        let mut s = promoted_spec(6);
        (s.block.m, s.block.n, s.block.threads) = (64, 64, 256);
        s.staging = crate::spec::Staging::tma(8);
        s.warp = s.warp.map(|w| crate::spec::Warp { n: 64, ..w });
        s.specialize.as_mut().unwrap().consumers = 1;
        s.atom = Atom::Wgmma { m: 64, n: 64, k: 32, zeroed: false, promote: false };
        s.fused = Fused { scale: Some(Scale::Block), ..Fused::default() };
        assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
        assert!(s.sums_by_atom_row());
        let reads_its_own = |s: &KernelSpec| {
            assert!(crate::check(s).is_empty(), "{:?}", crate::check(s));
            assert!(s.sums_by_atom_row());
            let consumers = s.specialize.unwrap().consumers;
            assert_eq!(s.b_scale_window_bytes(), consumers * crate::spec::B_SCALE_WINDOW * 4);
            let src = crate::generate(s).unwrap().source;
            assert!(src.contains("mbar_init(full + 8 * s, 1);") && !src.contains("cp_async") && !src.contains("sfb_smem"), "{src}");
            let lines: Vec<&str> = src.lines().map(str::trim).collect();
            let find = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap_or_else(|| panic!("no line `{p}`: {src}"));
            let window = find("if (kt % 256 == 0)");
            let load = find("sfb[k - kt] = __ldg(scale_b + ");
            assert!(lines[load].contains("min((block_n + group_n) / 128, (N - 1) / 128)"), "{}", lines[load]);
            assert!(lines[load - 1].starts_with("for (int k = kt + threadIdx.x % 128; k < min(kt + 256, k_tiles); k += 128)"), "{}", lines[load - 1]);
            assert!(lines[load - 3].starts_with("window_sync();") && lines[load + 2].starts_with("window_sync();"), "{src}");
            assert!(window < load && load < find("const float sb = sfb[kt % 256];"), "a window filled where it starts, then read");
            assert!(lines[find("float* const sfb = ")].ends_with("(threadIdx.x / 128 - 1) * 256;"), "a window a warpgroup: {src}");
            let read = find("const float sb = sfb[kt % 256];");
            assert!(lines[window - 1].starts_with("const int s0 = it % "), "{}", lines[window - 1]);
            assert!(lines[window - 2].starts_with("for (int kt = 0; kt < k_tiles; kt += 1, it += 1)"), "{}", lines[window - 2]);
            assert!(lines[read + 1].starts_with("if (!landed) mbar_wait(full + 8 * s0"), "the read goes ahead of the wait: {}", lines[read + 1]);
            // the next stage's barrier tried once the stage is released, ahead of the last row's promotion
            let release = find("if (threadIdx.x % 128 == 0) mbar_arrive(empty + 8 * s0);");
            let rows = s.warp.unwrap().m / 64;
            assert!(
                lines[release + 2].starts_with("landed = mbar_test(full + 8 * ((it + 1) % ") && lines[release + 2].ends_with("kt + 1 < k_tiles);"),
                "{src}"
            );
            assert!(lines[release + 3..].iter().take(6).any(|l| l.starts_with(&format!("acc[{}][0][q][e] +=", rows - 1))), "{src}");
            assert!(src.contains("void window_sync()"), "the warpgroup's barrier: {src}");
            assert_eq!(lines.iter().filter(|l| l.contains("__ldg(scale_b")).count(), 1, "B's scales loaded in one place: {src}");
        };
        reads_its_own(&s);
        // 256 x 128 tiles of two 128 x 128 consumers
        (s.block.m, s.block.n, s.block.threads) = (256, 128, 384);
        s.warp = s.warp.map(|w| crate::spec::Warp { m: 128, n: 128, ..w });
        s.specialize.as_mut().unwrap().consumers = 2;
        s.atom = Atom::Wgmma { m: 64, n: 128, k: 32, zeroed: false, promote: false };
        s.staging = crate::spec::Staging::tma(3);
        reads_its_own(&s);
    }

    /// Block scales under a cluster split along K (64 x 64 tiles of a lone
    /// consumer, four ranks): the producer loads A's scales and the
    /// consumer loads B's at the rank's K steps, not the part's, and the
    /// other ranks' sums land in rank 0's shared memory past every stage's
    /// scales, which rank 0 may still be reading.
    /// The consumers' warpgroup index is read from lane 0, so that ptxas
    /// knows it is the same across each warp and builds the wgmma
    /// descriptors from it in uniform registers (from `threadIdx.x / 128`,
    /// in vector registers, the fp8 128 x 128 tiles ran 7-10% slower on the
    /// H200): under warp specialization (after the producer's warpgroup),
    /// and where every warpgroup computes.
    #[test]
    fn the_consumers_warpgroup_index_is_read_from_lane_0() {
        // (after the producer's warpgroup: warpgroup 1 is consumer 0)
        for s in [promoted_spec(5), spec(Groups::Contiguous)] {
            let src = crate::generate(&s).unwrap().source;
            let group = src.lines().map(str::trim).find(|l| l.starts_with("const int group = ")).unwrap_or_else(|| panic!("no group: {src}"));
            assert_eq!(group, "const int group = __shfl_sync(0xffffffff, threadIdx.x / 128, 0) - 1;");
            assert!(src.contains("const int group_m = group * 64;"), "the sub-tile follows the index: {src}");
        }
        // (every warpgroup alike: the bf16 spec without a producer, a block a tile)
        let mut alike = spec(Groups::Contiguous);
        (alike.groups, alike.specialize, alike.persistent, alike.block.threads) = (None, None, None, 256);
        assert!(crate::check(&alike).is_empty(), "{:?}", crate::check(&alike));
        let src = crate::generate(&alike).unwrap().source;
        assert!(src.contains("const int group = __shfl_sync(0xffffffff, threadIdx.x / 128, 0);"), "{src}");
    }

    #[test]
    fn a_split_along_k_reads_each_ranks_scales_and_sums_past_them() {
        use crate::spec::{Atom, Cluster, Fused, Scale, Staging, Warp};
        let mut s = promoted_spec(6);
        (s.block.m, s.block.n, s.block.threads) = (64, 64, 256);
        s.warp = s.warp.map(|w| Warp { n: 64, ..w });
        s.specialize.as_mut().unwrap().consumers = 1;
        s.atom = Atom::Wgmma { m: 64, n: 64, k: 32, zeroed: false, promote: false };
        s.fused = Fused { scale: Some(Scale::Block), ..Fused::default() };
        (s.staging, s.persistent) = (Staging::tma(8), None);
        s.cluster = Some(Cluster { m: 1, n: 1, k: 4, multicast: None });
        assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
        let src = crate::generate(&s).unwrap().source;
        let lines: Vec<&str> = src.lines().map(str::trim).collect();
        let has = |p: &str| lines.iter().any(|l| l.starts_with(p) && l.contains("(k_first + kt)"));
        assert!(has("tma_load(sfa_smem + stage * "), "A's scales at the rank's K step: {src}");
        assert!(
            lines.iter().any(|l| l.starts_with("sfb[k - kt] = __ldg(scale_b + ") && l.contains("(k_first + k)")),
            "B's scales at the rank's K steps: {src}"
        );
        // (a rank of no K block, k_count = 0, loads none and meets no barrier: its consumers alike)
        let windows = "for (int k = kt + threadIdx.x % 128; k < min(kt + 256, k_count); k += 128)";
        assert!(lines.iter().any(|l| l.starts_with(windows)), "over the rank's K blocks alone: {src}");
        // every stage's scales end before the other ranks' sums begin
        let scales_end = s.tiles_bytes() + 16 * 8 + s.block_scale_bytes();
        assert!(s.k_split_offset() >= scales_end, "{} < {scales_end}", s.k_split_offset());
        // (the 1024 bytes of slack before the tiles' start)
        assert!(s.smem_bytes() >= s.k_split_offset() + s.k_split_bytes() + 1024 - 16);
    }

    /// `groups = masked`: problem g's tiles up to its count (negative: none;
    /// past m_max: m_max), each with M its count.
    #[test]
    fn the_masked_walk_skips_tiles_past_each_problems_rows() {
        let (m, n) = (300, 300);
        let got = walk(Groups::Masked, (m, n, 4), &[0, 129, -3, 1000], 4);
        assert_eq!(got, expected(&[(1, 0, 129), (3, 0, 300)], n));
    }

    /// `groups = indexed`: each tile takes its first row's group; a tile
    /// whose first row is padding (-1) or names a group past the batch is
    /// skipped; the consumers stop C's rows at the run's end themselves.
    #[test]
    fn the_indexed_walk_gives_each_tile_its_first_rows_group() {
        let (m, n) = (640, 300);
        let mut rows = vec![-1; m];
        rows[..100].fill(0);
        rows[128..384].fill(2);
        rows[512] = 1;
        rows[640 - 1] = 1;
        let got = walk(Groups::Indexed, (m, n, 3), &rows, 3);
        let mut want = Vec::new();
        for (g, row) in [(0, 0), (2, 128), (2, 256), (1, 512)] {
            for col in (0..n).step_by(256) {
                want.push((g, row, col as i32, m as i32));
            }
        }
        want.sort();
        assert_eq!(got, want);
        rows[0] = 3;
        assert!(walk(Groups::Indexed, (m, n, 3), &rows, 2).iter().all(|t| t.1 != 0), "a group past the batch's is skipped");
    }

    /// `epilogue = tma` on narrow tiles: a C tile of 64, 32, 16 or 8 columns
    /// of bf16 goes out in boxes of its own width (one TMA store a tile),
    /// and under `overlap` a tile of 64 columns (two wgmma atoms of 32) in
    /// boxes of 32 columns, one TMA store a half. (Boxes of 64 had taken
    /// none: the half's 32 columns are no whole box.)
    #[test]
    fn narrow_c_tiles_go_out_by_tma_in_boxes_of_their_width_and_each_half_under_overlap() {
        use crate::spec::*;
        let store = "tma_store(tmap_c";
        for n in [64, 32, 16, 8] {
            let mut s = spec(Groups::Contiguous);
            (s.groups, s.persistent, s.epilogue) = (None, None, Epilogue::Tma);
            (s.block.m, s.block.n, s.block.threads) = (64, n, 256);
            s.warp = Some(Warp { m: 64, n, m_iters: 1, n_iters: 1 });
            s.atom = Atom::Wgmma { m: 64, n, k: 16, zeroed: false, promote: false };
            s.specialize.as_mut().unwrap().consumers = 1;
            assert!(crate::check(&s).is_empty(), "{n}: {:?}", crate::check(&s));
            assert_eq!(s.c_tile_box(), n.min(64));
            let src = crate::generate(&s).unwrap().source;
            assert_eq!(src.matches(store).count(), 1, "{n}: {src}");
            assert!(src.contains(&format!("1 TMA store(s) of a box of 64 x {n}")), "{n}: {src}");
        }
        let mut s = spec(Groups::Contiguous);
        (s.groups, s.epilogue) = (None, Epilogue::Tma);
        (s.block.m, s.block.n, s.block.threads) = (128, 64, 384);
        s.warp = Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 });
        s.atom = Atom::Wgmma { m: 64, n: 32, k: 16, zeroed: false, promote: false };
        s.specialize.as_mut().unwrap().overlap = true;
        assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
        assert_eq!((s.c_tile_box(), s.c_tile_swizzle(), s.c_tile().map(|t| t.parts)), (32, 64, Some(2)));
        let src = crate::generate(&s).unwrap().source;
        assert!(src.contains("1 TMA store(s) of a box of 128 x 32") && src.matches(store).count() >= 1, "{src}");
    }

    /// A warp-specialized producer tests a tile's edges once, before its
    /// K loop: one loop copies whole boxes, the other calls `edge_loads`,
    /// inlined (a call in the loop took the copies' coordinates through
    /// vector registers) and walking its boxes one at a time. Stream-K's
    /// producer, whose units start mid-tile, tests once a unit.
    #[test]
    fn a_specialized_producer_tests_each_tiles_edges_once_before_its_k_loop() {
        let mut s = spec(Groups::Contiguous);
        s.groups = None;
        for (persistent, k_loop) in [
            (Persistent::Tiles, "for (int kt = 0; kt < k_tiles; ++kt, ++it)"),
            (Persistent::StreamK, "for (int kt = k_step; kt < k_step + tiles; ++kt, ++filled)"),
            (Persistent::Hybrid, "for (int kt = k_step; kt < k_step + tiles; ++kt, ++filled)"),
        ] {
            s.persistent = Some(persistent);
            assert!(crate::check(&s).is_empty(), "{:?}", crate::check(&s));
            let src = crate::generate(&s).unwrap().source;
            let lines: Vec<&str> = src.lines().map(str::trim).collect();
            let tests: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("if (M - block_m > ")).collect();
            assert_eq!(tests.len(), 1, "{persistent:?}: {src}");
            let loops: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with(k_loop)).collect();
            assert!(loops.contains(&(tests[0] + 1)), "{persistent:?}: the whole tiles' loop follows the test: {src}");
            let calls: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("edge_loads(bar,")).collect();
            assert_eq!(calls.len(), 1, "{persistent:?}: {src}");
            let edge_loop = loops.iter().copied().filter(|&l| l > tests[0] + 1 && l < calls[0]).max().expect("a loop of edge tiles around the call");
            assert!(
                lines[tests[0] + 2..edge_loop].iter().any(|l| l.starts_with("else {")),
                "{persistent:?}: the edge tiles' loop is the test's else: {src}"
            );
            assert!(src.contains("__device__ __forceinline__ void edge_loads("), "{persistent:?}: {src}");
            assert_eq!(src.matches("#pragma unroll 1  // a box at a time").count(), 2, "the edge boxes' loops, one box a turn: {src}");
        }
    }

    /// A specialized tile whose C lines are no whole 16-byte chunk (a gated
    /// C of 4 bf16 a line) is a rule's error, not a division by zero while
    /// the rules size its shared memory.
    #[test]
    fn c_lines_of_no_whole_chunk_under_tma_stores_are_refused_not_a_panic() {
        use crate::spec::*;
        let mut s = spec(Groups::Contiguous);
        (s.groups, s.epilogue) = (None, Epilogue::Tma);
        s.fused = Fused { activation: Some(Activation::Silu), gated: true, ..Fused::default() };
        s.block.n = 8;
        s.warp = Some(Warp { m: 64, n: 8, m_iters: 1, n_iters: 1 });
        s.atom = Atom::Wgmma { m: 64, n: 8, k: 16, zeroed: false, promote: false };
        assert_eq!(s.c_tile_box(), 0);
        let d = crate::check(&s);
        assert!(d.iter().any(|d| d.at == "epilogue" && d.msg.contains("whole 16-byte lines")), "{d:?}");
    }
}
