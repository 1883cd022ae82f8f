//! Megatron's MLP block on a tensor-parallel group: a column-parallel
//! linear layer with bias and GELU, then a row-parallel one whose partial
//! outputs an all-reduce sums, chunk by chunk behind the GEMMs.

use std::sync::Mutex;

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use cudarc::nccl::safe::ReduceOp;
use gemm_runtime::{bf16, Dims};

use crate::kernels::{down, down_bias, up_gelu, TILE_M};
use crate::{ChunkPlan, TpError, TpGroup};

/// An MLP block's sizes: `hidden` (the model's width, the block's input and
/// output) and `ffn` (the hidden activations' width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MlpShape {
    pub hidden: usize,
    pub ffn: usize,
}

/// `y = gelu(x W1^T + b1) W2^T + b2` (bf16; W1 `[ffn, hidden]` and W2
/// `[hidden, ffn]` as `torch.nn.Linear` stores them) split over a group's
/// ranks: rank r holds W1's rows and b1's values `r * ffn / p ..` (its
/// slice of the activations) and W2's columns there (`[hidden, ffn / p]`);
/// rank 0 holds b2, which its partial sum takes before the all-reduce, so
/// that the sum takes it once.
pub struct TpMlp {
    shape: MlpShape,
    w1: Vec<CudaSlice<bf16>>,
    b1: Vec<CudaSlice<bf16>>,
    w2: Vec<CudaSlice<bf16>>,
    b2: CudaSlice<bf16>,
    /// The last forward's scratch, kept for the next of the same plan: a
    /// stream-ordered allocation of the activations (235 MB a rank at 8192
    /// tokens) went back to the driver at every synchronization.
    scratch: Mutex<Option<Scratch>>,
}

/// Each rank's buffers for one chunk plan: the activations of a chunk, and
/// each chunk's partial output.
struct Scratch {
    plan: ChunkPlan,
    /// The GPUs they lie on, rank by rank.
    ordinals: Vec<usize>,
    acts: Vec<CudaSlice<bf16>>,
    partials: Vec<Vec<CudaSlice<bf16>>>,
}

impl TpMlp {
    /// The block from its weights on the host (W1 `[ffn, hidden]`, b1
    /// `[ffn]`, W2 `[hidden, ffn]`, b2 `[hidden]`, row-major), each rank's
    /// slices copied to its GPU. `ffn` must split evenly over the ranks.
    pub fn from_host(group: &TpGroup, shape: MlpShape, w1: &[bf16], b1: &[bf16], w2: &[bf16], b2: &[bf16]) -> Result<Self, TpError> {
        let (h, f, p) = (shape.hidden, shape.ffn, group.world());
        check_split(shape, p)?;
        let want = [("W1", w1.len(), f * h), ("b1", b1.len(), f), ("W2", w2.len(), h * f), ("b2", b2.len(), h)];
        for (name, len, need) in want {
            if len != need {
                return Err(TpError::Args(format!("{name} holds {len} values; an MLP of hidden {h} and ffn {f} needs {need}")));
            }
        }
        let fp = f / p;
        let (mut w1s, mut b1s, mut w2s) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..p {
            let s = group.stream(r);
            w1s.push(s.clone_htod(&w1[r * fp * h..(r + 1) * fp * h])?);
            b1s.push(s.clone_htod(&b1[r * fp..(r + 1) * fp])?);
            // W2's columns of this rank's activations, row by row
            let cols: Vec<bf16> = (0..h).flat_map(|row| w2[row * f + r * fp..row * f + (r + 1) * fp].iter().copied()).collect();
            w2s.push(s.clone_htod(&cols)?);
        }
        let b2 = group.stream(0).clone_htod(b2)?;
        Ok(TpMlp { shape, w1: w1s, b1: b1s, w2: w2s, b2, scratch: Mutex::new(None) })
    }

    pub fn shape(&self) -> MlpShape {
        self.shape
    }

    /// The block on `m` tokens: `x[r]` holds them (`[m, hidden]`, the same
    /// on every rank, on rank r's GPU) and `out[r]` receives the block's
    /// output (`[m, hidden]`, all-reduced: the same on every rank). The
    /// tokens go in `chunks` chunks of whole 128-row tiles (fewer where m
    /// has fewer tiles), each chunk's all-reduce on the communicators'
    /// streams while the next chunk's GEMMs run on the compute streams;
    /// one chunk is the plain order, the all-reduce after both GEMMs. Read
    /// `out` on the group's compute streams: cudarc orders them after the
    /// collectives that wrote it.
    pub fn forward(&self, group: &TpGroup, x: &[&CudaSlice<bf16>], out: &mut [&mut CudaSlice<bf16>], m: usize, chunks: usize) -> Result<(), TpError> {
        let (h, p) = (self.shape.hidden, group.world());
        self.check_args(group, x, out, m)?;
        let plan = ChunkPlan::new(m, chunks, TILE_M)?;
        let fp = self.shape.ffn / p;
        let mut kept = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let ordinals: Vec<usize> = (0..p).map(|r| group.ordinal(r)).collect();
        if !matches!(kept.as_ref(), Some(k) if k.plan == plan && k.ordinals == ordinals) {
            *kept = None;
            *kept = Some(Scratch::new(group, &plan, fp, h)?);
        }
        let Some(Scratch { acts, partials, .. }) = kept.as_mut() else { unreachable!("the scratch was just made") };
        for (c, &(start, end)) in plan.ranges().iter().enumerate() {
            let rows = end - start;
            for r in 0..p {
                let s = group.stream(r);
                let xs = x[r].slice(start * h..end * h);
                let mut act = acts[r].slice_mut(0..rows * fp);
                up_gelu(s, &xs, &self.w1[r], &mut act, &self.b1[r], Dims::new(rows, fp, h))?;
                let partial = &mut partials[r][c];
                if r == 0 {
                    down_bias(s, &act, &self.w2[r], partial, &self.b2, Dims::new(rows, h, fp))?;
                } else {
                    down(s, &act, &self.w2[r], partial, Dims::new(rows, h, fp))?;
                }
            }
            // one thread drives every communicator: their calls go in one NCCL group (ended
            // even where a call failed, so that the next group starts afresh)
            cudarc::nccl::result::group_start()?;
            let calls: Result<(), TpError> = (0..p).try_for_each(|r| {
                let mut dst = out[r].slice_mut(start * h..end * h);
                group.comm(r).all_reduce(&partials[r][c], &mut dst, &ReduceOp::Sum)?;
                Ok(())
            });
            let ended = cudarc::nccl::result::group_end();
            calls?;
            ended?;
            // cudarc records a buffer's use on a stream when its pointer is taken, which inside
            // an NCCL group is before the collective is enqueued (at the group's end): taken
            // again now, so that whoever reads `out` next, and the partials' release, wait for
            // the all-reduce itself
            for r in 0..p {
                let comm_stream = group.comm(r).stream();
                drop(out[r].slice_mut(start * h..end * h).device_ptr_mut(&comm_stream));
                drop(partials[r][c].device_ptr(&comm_stream));
            }
        }
        Ok(())
    }

    /// Each rank's tokens and output on its own GPU, holding `m` rows.
    fn check_args(&self, group: &TpGroup, x: &[&CudaSlice<bf16>], out: &[&mut CudaSlice<bf16>], m: usize) -> Result<(), TpError> {
        let (h, p) = (self.shape.hidden, group.world());
        if self.w1.len() != p {
            return Err(TpError::Args(format!("the layer was split over {} ranks, the group has {p}", self.w1.len())));
        }
        if x.len() != p || out.len() != p {
            return Err(TpError::Args(format!("give one input and one output a rank: {p} ranks, {} inputs, {} outputs", x.len(), out.len())));
        }
        if m == 0 {
            return Err(TpError::Args("m = 0 tokens: nothing to compute".into()));
        }
        for r in 0..p {
            let ordinal = group.ordinal(r);
            let weights = self.w1[r].context().ordinal();
            if weights != ordinal {
                return Err(TpError::Args(format!("the layer's slices for rank {r} lie on GPU {weights}; the group runs rank {r} on GPU {ordinal}")));
            }
            for (what, len, on) in [("input", x[r].len(), x[r].context().ordinal()), ("output", out[r].len(), out[r].context().ordinal())] {
                if on != ordinal {
                    return Err(TpError::Args(format!("rank {r}'s {what} lies on GPU {on}; the rank runs on GPU {ordinal}")));
                }
                if len < m * h {
                    return Err(TpError::Args(format!("rank {r}'s {what} holds {len} values; {m} tokens of hidden {h} need {}", m * h)));
                }
            }
        }
        Ok(())
    }
}

impl Scratch {
    /// On each rank: the activations of a chunk (reused chunk after chunk on
    /// the compute stream), and each chunk's partial output in a buffer of
    /// its own, so that its all-reduce waits for that chunk's GEMMs alone.
    fn new(group: &TpGroup, plan: &ChunkPlan, fp: usize, h: usize) -> Result<Self, TpError> {
        let (mut acts, mut partials) = (Vec::new(), Vec::new());
        for r in 0..group.world() {
            let s = group.stream(r);
            // SAFETY: every element is written by a GEMM before anything reads it.
            acts.push(unsafe { s.alloc::<bf16>(plan.largest() * fp) }?);
            partials.push(plan.ranges().iter().map(|&(a, b)| unsafe { s.alloc::<bf16>((b - a) * h) }).collect::<Result<Vec<_>, _>>()?);
        }
        let ordinals = (0..group.world()).map(|r| group.ordinal(r)).collect();
        Ok(Scratch { plan: plan.clone(), ordinals, acts, partials })
    }
}

/// `ffn` splits evenly over `p` ranks.
fn check_split(shape: MlpShape, p: usize) -> Result<(), TpError> {
    if shape.hidden == 0 || shape.ffn == 0 {
        return Err(TpError::Args(format!("an MLP of hidden {} and ffn {}: both must be at least 1", shape.hidden, shape.ffn)));
    }
    if !shape.ffn.is_multiple_of(p) {
        return Err(TpError::Args(format!("ffn = {} does not split over {p} ranks: use a multiple of {p}", shape.ffn)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The activations split evenly over the ranks, or the split is an `Err` naming the remedy.
    #[test]
    fn the_ffn_width_must_split_evenly_over_the_ranks() {
        assert!(check_split(MlpShape { hidden: 8192, ffn: 28672 }, 4).is_ok());
        let e = check_split(MlpShape { hidden: 64, ffn: 30 }, 4).unwrap_err().to_string();
        assert!(e.contains("does not split over 4 ranks"), "{e}");
        assert!(check_split(MlpShape { hidden: 0, ffn: 8 }, 1).is_err());
    }
}
