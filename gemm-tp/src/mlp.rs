//! Megatron's MLP block on a tensor-parallel group: a column-parallel
//! linear layer with bias and GELU, then a row-parallel one whose partial
//! outputs an all-reduce sums, chunk by chunk behind the GEMMs.

use std::sync::Mutex;

use cudarc::driver::CudaSlice;
use cudarc::nccl::safe::ReduceOp;
use gemm_runtime::bf16;

use crate::kernels::{Grid, TILE_M, TILE_N};
use crate::layers::check_ranks;
use crate::scratch::Kept;
use crate::{ChunkGemm, ChunkPlan, ColumnParallel, RowParallel, TpError, TpGroup};

/// An MLP block's sizes: `hidden` (the model's width, the block's input and
/// output) and `ffn` (the hidden activations' width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MlpShape {
    pub hidden: usize,
    pub ffn: usize,
}

/// `y = gelu(x W1^T + b1) W2^T + b2` (bf16; W1 `[ffn, hidden]` and W2
/// `[hidden, ffn]` as `torch.nn.Linear` stores them) split over a group's
/// ranks: a [`ColumnParallel`] layer (rank r holds W1's rows and b1's
/// values `r * ffn / p ..`, its slice of the activations) and a
/// [`RowParallel`] one (W2's columns there; b2 in rank 0's partial sum, so
/// that the sum takes it once).
pub struct TpMlp {
    shape: MlpShape,
    up: ColumnParallel,
    down: RowParallel,
    /// Each rank's activations of a chunk, then each chunk's partial output.
    kept: Mutex<Option<Kept>>,
}

impl TpMlp {
    /// The block from its weights on the host (W1 `[ffn, hidden]`, b1
    /// `[ffn]`, W2 `[hidden, ffn]`, b2 `[hidden]`, row-major), each rank's
    /// slices copied to its GPU. `ffn` must split evenly over the ranks.
    pub fn from_host(group: &TpGroup, shape: MlpShape, w1: &[bf16], b1: &[bf16], w2: &[bf16], b2: &[bf16]) -> Result<Self, TpError> {
        let (h, f) = (shape.hidden, shape.ffn);
        let up = ColumnParallel::from_host(group, h, f, w1, Some(b1), true)?;
        let down = RowParallel::from_host(group, f, h, w2, Some(b2))?;
        Ok(TpMlp { shape, up, down, kept: Mutex::new(None) })
    }

    pub fn shape(&self) -> MlpShape {
        self.shape
    }

    /// The block on `m` tokens: `x[i]` holds them (`[m, hidden]`, the same
    /// on every rank, on the GPU of the i-th rank this process drives) and
    /// `out[i]` receives the block's output (`[m, hidden]`, all-reduced: the
    /// same on every rank). The tokens go in at most `chunks` chunks of
    /// whole 128-row tiles, cut where the chunks' GEMMs take no more waves
    /// of tiles than need be ([`Self::plan`]), each chunk's all-reduce on
    /// the communicators' streams while the next chunk's GEMMs run on the
    /// compute streams; one chunk is the plain order, the all-reduce after
    /// both GEMMs. Read `out` on the group's compute streams: cudarc orders
    /// them after the collectives that wrote it.
    pub fn forward(&self, group: &TpGroup, x: &[&CudaSlice<bf16>], out: &mut [&mut CudaSlice<bf16>], m: usize, chunks: usize) -> Result<(), TpError> {
        // (the arguments checked before the plan, whose errors say less of them)
        check_ranks(group, &self.up.slices, x, out, m, [self.shape.hidden; 2])?;
        let plan = self.plan(group, m, chunks)?;
        self.forward_planned(group, x, out, &plan)
    }

    /// How [`Self::forward`] cuts `m` tokens asked to go in `chunks`
    /// chunks on `group` ([`ChunkPlan::fitted`] for the block's two GEMMs
    /// on the group's fewest SMs): fewer chunks, or chunks of other sizes,
    /// where equal ones would leave the GEMMs' last waves part-full, or
    /// lose the split along K that the first chunk's last wave takes where
    /// it is at most half full, by half a wave or more.
    pub fn plan(&self, group: &TpGroup, m: usize, chunks: usize) -> Result<ChunkPlan, TpError> {
        let (h, fp) = (self.shape.hidden, self.up.out_per_rank());
        // the up-projection's tiles across its fp columns, then the down-projection's across h
        let gemms = [ChunkGemm { tiles_n: fp.div_ceil(TILE_N), k: h }, ChunkGemm { tiles_n: h.div_ceil(TILE_N), k: fp }];
        ChunkPlan::fitted(m, chunks, TILE_M, &gemms, group.sms())
    }

    /// [`Self::forward`] on the chunks of `plan` (any plan: equal chunks
    /// from [`ChunkPlan::new`], say), whose rows are the tokens.
    pub fn forward_planned(
        &self,
        group: &TpGroup,
        x: &[&CudaSlice<bf16>],
        out: &mut [&mut CudaSlice<bf16>],
        plan: &ChunkPlan,
    ) -> Result<(), TpError> {
        let (h, fp) = (self.shape.hidden, self.up.out_per_rank());
        check_ranks(group, &self.up.slices, x, out, plan.rows(), [h, h])?;
        if plan.ranges().is_empty() {
            // (no tokens: every rank plans alike, so none joins a collective)
            return Ok(());
        }
        let mut lens = vec![plan.largest() * fp];
        lens.extend(plan.ranges().iter().map(|(a, b)| (b - a) * h));
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let mut bufs = Kept::get(&mut kept, group, &lens)?;
        group.after_collectives()?;
        let (acts, partials) = bufs.split_at_mut(1);
        let acts = &mut acts[0];
        for (c, &(start, end)) in plan.ranges().iter().enumerate() {
            let rows = end - start;
            for i in 0..group.local_ranks() {
                // chunk c's GEMMs run beside chunk c - 1's all-reduce, the first chunk's beside none
                let grid = Grid::of_chunk(c);
                let xs = x[i].slice(start * h..end * h);
                let mut act = acts[i].slice_mut(0..rows * fp);
                self.up.rank_forward(i, group.stream(i), &xs, &mut act, rows, grid)?;
                self.down.rank_partial(i, group, &act, &mut partials[c][i], rows, grid)?;
            }
            if c + 1 < plan.ranges().len() {
                group.collective_first()?;
            }
            group.each_in_nccl_group(|i| {
                let mut dst = out[i].slice_mut(start * h..end * h);
                Ok(group.comm(i).all_reduce(&partials[c][i], &mut dst, &ReduceOp::Sum).map(drop)?)
            })?;
            for (i, oi) in out.iter_mut().enumerate() {
                group.recorded_after_collective(i, &[&partials[c][i]], &mut [&mut oi.slice_mut(start * h..end * h)]);
            }
        }
        Ok(())
    }
}
