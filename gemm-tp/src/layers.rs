//! Megatron's two tensor-parallel linear layers, bf16, weights as
//! `torch.nn.Linear` stores them (`W [out, in]`, `y = x W^T + b`).

use std::sync::Mutex;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use cudarc::nccl::safe::ReduceOp;
use gemm_runtime::{bf16, Dims};

use crate::kernels::{rank_linear, Grid};
use crate::scratch::Kept;
use crate::{TpError, TpGroup};

/// How a row-parallel layer's partial outputs are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// Every rank receives the whole sum, `[m, out]`.
    AllReduce,
    /// Rank r receives rows `r * m / p .. (r + 1) * m / p` of the sum,
    /// `[m / p, out]` (sequence parallelism): m must split evenly over the
    /// ranks.
    ReduceScatter,
}

/// A layer's weight slices on the ranks this process drives (`w[i]` the
/// i-th's), and the group they were cut for: its size and those ranks.
pub(crate) struct Slices {
    world: usize,
    ranks: Vec<usize>,
    w: Vec<CudaSlice<bf16>>,
}

impl Slices {
    /// The slices lie on `group`'s GPUs, cut for its size and these ranks.
    fn check(&self, group: &TpGroup) -> Result<(), TpError> {
        if self.world != group.world() {
            return Err(TpError::Args(format!("the layer was split over {} ranks, the group has {}", self.world, group.world())));
        }
        let ranks: Vec<usize> = (0..group.local_ranks()).map(|i| group.rank(i)).collect();
        if ranks != self.ranks {
            return Err(TpError::Args(format!("the layer holds the slices of ranks {:?}; this process drives ranks {ranks:?}", self.ranks)));
        }
        for (i, w) in self.w.iter().enumerate() {
            let (on, ordinal) = (w.context().ordinal(), group.ordinal(i));
            if on != ordinal {
                return Err(TpError::Args(format!(
                    "the layer's slices for rank {} lie on GPU {on}; the group runs it on GPU {ordinal}",
                    self.ranks[i]
                )));
            }
        }
        Ok(())
    }
}

/// A linear layer split by its output features: rank r holds W's rows
/// (and b's values) `r * out / p .. (r + 1) * out / p` and computes those
/// columns of `act(x W^T + b)` from the whole input, with no
/// communication; [`Self::forward_gathered`] then gathers every rank's
/// columns onto every rank.
pub struct ColumnParallel {
    in_features: usize,
    out_features: usize,
    /// The slices of the ranks this process drives.
    pub(crate) slices: Slices,
    b: Option<Vec<CudaSlice<bf16>>>,
    gelu: bool,
    /// The gathered form's buffers: each rank's columns, then every rank's.
    kept: Mutex<Option<Kept>>,
}

impl ColumnParallel {
    /// The layer from its weights on the host (W `[out, in]`, b `[out]`,
    /// row-major), the slices of each rank this process drives copied to
    /// its GPU; `gelu`: the exact GELU after the bias. `out` must split
    /// evenly over the group's ranks.
    pub fn from_host(group: &TpGroup, in_features: usize, out_features: usize, w: &[bf16], b: Option<&[bf16]>, gelu: bool) -> Result<Self, TpError> {
        let p = group.world();
        check_weights(in_features, out_features, w, b, p, out_features, "out")?;
        let op = out_features / p;
        let (mut ws, mut bs, mut ranks) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..group.local_ranks() {
            let (s, r) = (group.stream(i), group.rank(i));
            ws.push(s.clone_htod(&w[r * op * in_features..(r + 1) * op * in_features])?);
            if let Some(b) = b {
                bs.push(s.clone_htod(&b[r * op..(r + 1) * op])?);
            }
            ranks.push(r);
        }
        let b = b.map(|_| bs);
        let slices = Slices { world: p, ranks, w: ws };
        Ok(ColumnParallel { in_features, out_features, slices, b, gelu, kept: Mutex::new(None) })
    }

    /// The output features each rank computes: `out / p`.
    pub fn out_per_rank(&self) -> usize {
        self.out_features / self.slices.world
    }

    /// Each rank's columns: `x[i]` holds the `m` tokens (`[m, in]`, the
    /// same on every rank, on the GPU of the i-th rank this process
    /// drives), `y[i]` receives `[m, out / p]`, that rank's slice of the
    /// layer's output.
    pub fn forward(&self, group: &TpGroup, x: &[&CudaSlice<bf16>], y: &mut [&mut CudaSlice<bf16>], m: usize) -> Result<(), TpError> {
        check_ranks(group, &self.slices, x, y, m, [self.in_features, self.out_per_rank()])?;
        group.after_collectives()?;
        for i in 0..group.local_ranks() {
            self.rank_forward(i, group.stream(i), x[i], y[i], m, Grid::Persistent)?;
        }
        Ok(())
    }

    /// The whole output on every rank: `y[i]` receives `[m, out]`. Each
    /// rank's columns are computed as [`Self::forward`] computes them, then
    /// an all-gather brings every rank's onto every rank (one block of `m x
    /// out / p` after another), and a 2-D copy on each compute stream puts
    /// them side by side.
    pub fn forward_gathered(&self, group: &TpGroup, x: &[&CudaSlice<bf16>], y: &mut [&mut CudaSlice<bf16>], m: usize) -> Result<(), TpError> {
        let (p, op) = (group.world(), self.out_per_rank());
        check_ranks(group, &self.slices, x, y, m, [self.in_features, self.out_features])?;
        if m == 0 {
            // (no rows to gather: every rank is called with the same m, so none joins a collective)
            return Ok(());
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let mut bufs = Kept::get(&mut kept, group, &[m * op, p * m * op])?;
        let [own, all] = bufs.as_mut_slice() else { unreachable!("two buffers a rank") };
        group.after_collectives()?;
        for i in 0..group.local_ranks() {
            self.rank_forward(i, group.stream(i), x[i], &mut own[i], m, Grid::Persistent)?;
        }
        group.each_in_nccl_group(|i| Ok(group.comm(i).all_gather(&own[i], &mut all[i]).map(drop)?))?;
        for (i, yi) in y.iter_mut().enumerate() {
            group.recorded_after_collective(i, &[&own[i]], &mut [&mut all[i]]);
            for q in 0..p {
                // rank q's m x op block to columns q * op.. of each row
                copy_columns(group.stream(i), &all[i], q * m * op, yi, q * op, self.out_features, m, op)?;
            }
        }
        Ok(())
    }

    /// The i-th rank's columns for rows of x (`[rows, in]`) into y (`[rows, out / p]`).
    pub(crate) fn rank_forward(
        &self,
        i: usize,
        s: &CudaStream,
        x: &impl DevicePtr<bf16>,
        y: &mut impl DevicePtrMut<bf16>,
        rows: usize,
        grid: Grid,
    ) -> Result<(), TpError> {
        let bias = self.b.as_ref().map(|b| &b[i]);
        let dims = Dims::new(rows, self.out_per_rank(), self.in_features);
        Ok(rank_linear(s, x, &self.slices.w[i], y, bias, self.gelu, dims, grid)?)
    }
}

/// A linear layer split by its input features: rank r holds W's columns
/// `r * in / p .. (r + 1) * in / p` (`[out, in / p]`) and multiplies its
/// slice of the input's features (a [`ColumnParallel`] layer's output, say)
/// by them into a partial sum of the whole output, which a collective adds
/// up ([`Reduce`]). The bias is added once: by rank 0's epilogue, into its
/// partial sum, so that the sum holds it once with no pass over the output
/// after the collective.
pub struct RowParallel {
    in_features: usize,
    out_features: usize,
    slices: Slices,
    /// The bias, where this process drives rank 0.
    b: Option<CudaSlice<bf16>>,
    /// The reduce-scatter's partial sums, a buffer a rank.
    kept: Mutex<Option<Kept>>,
}

impl RowParallel {
    /// The layer from its weights on the host (W `[out, in]`, b `[out]`,
    /// row-major), the columns of W of each rank this process drives copied
    /// to its GPU, b to rank 0's. `in` must split evenly over the group's
    /// ranks.
    pub fn from_host(group: &TpGroup, in_features: usize, out_features: usize, w: &[bf16], b: Option<&[bf16]>) -> Result<Self, TpError> {
        let p = group.world();
        check_weights(in_features, out_features, w, b, p, in_features, "in")?;
        let ip = in_features / p;
        let (mut ws, mut ranks, mut bias) = (Vec::new(), Vec::new(), None);
        for i in 0..group.local_ranks() {
            let (s, r) = (group.stream(i), group.rank(i));
            // W's columns of this rank's input features, row by row
            let cols: Vec<bf16> =
                (0..out_features).flat_map(|row| w[row * in_features + r * ip..row * in_features + (r + 1) * ip].iter().copied()).collect();
            ws.push(s.clone_htod(&cols)?);
            if let (0, Some(b)) = (r, b) {
                bias = Some(s.clone_htod(b)?);
            }
            ranks.push(r);
        }
        let slices = Slices { world: p, ranks, w: ws };
        Ok(RowParallel { in_features, out_features, slices, b: bias, kept: Mutex::new(None) })
    }

    /// The input features each rank holds: `in / p`.
    pub fn in_per_rank(&self) -> usize {
        self.in_features / self.slices.world
    }

    /// `x[i]` holds the i-th rank's slice of the input (`[m, in / p]`: for
    /// rank r = `group.rank(i)`, features `r * in / p ..`); `y[i]` receives
    /// the sum of the partial outputs: `[m, out]` under
    /// [`Reduce::AllReduce`], rows `r * m / p ..` of it (`[m / p, out]`)
    /// under [`Reduce::ReduceScatter`]. Read `y` on the group's compute
    /// streams: cudarc orders them after the collective that wrote it.
    pub fn forward(&self, group: &TpGroup, x: &[&CudaSlice<bf16>], y: &mut [&mut CudaSlice<bf16>], m: usize, reduce: Reduce) -> Result<(), TpError> {
        let (p, out) = (group.world(), self.out_features);
        let rows = match reduce {
            Reduce::AllReduce => m,
            Reduce::ReduceScatter if m.is_multiple_of(p) => m / p,
            Reduce::ReduceScatter => {
                return Err(TpError::Args(format!("a reduce-scatter gives each of the {p} ranks m / {p} rows: m = {m} does not split evenly")))
            }
        };
        check_ranks(group, &self.slices, x, y, m, [self.in_per_rank(), 0])?;
        for (i, yi) in y.iter().enumerate() {
            if yi.len() < rows * out {
                let r = group.rank(i);
                return Err(TpError::Args(format!("rank {r}'s output holds {} values; {rows} rows of {out} need {}", yi.len(), rows * out)));
            }
        }
        if m == 0 {
            // (no rows to sum: every rank is called with the same m, so none joins a collective)
            return Ok(());
        }
        let here = group.local_ranks();
        group.after_collectives()?;
        match reduce {
            Reduce::AllReduce => {
                // each rank's partial sum in its output, summed there
                for i in 0..here {
                    self.rank_partial(i, group, x[i], y[i], m, Grid::Persistent)?;
                }
                group.all_reduce(y, m * out)?;
            }
            Reduce::ReduceScatter => {
                let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
                let mut bufs = Kept::get(&mut kept, group, &[m * out])?;
                let [partials] = bufs.as_mut_slice() else { unreachable!("one buffer a rank") };
                for i in 0..here {
                    self.rank_partial(i, group, x[i], &mut partials[i], m, Grid::Persistent)?;
                }
                group.each_in_nccl_group(|i| {
                    let mut dst = y[i].slice_mut(0..rows * out);
                    Ok(group.comm(i).reduce_scatter(&partials[i], &mut dst, &ReduceOp::Sum).map(drop)?)
                })?;
                for (i, yi) in y.iter_mut().enumerate() {
                    group.recorded_after_collective(i, &[&partials[i]], &mut [&mut yi.slice_mut(0..rows * out)]);
                }
            }
        }
        Ok(())
    }

    /// The i-th rank's partial sum for rows of x (`[rows, in / p]`) into y
    /// (`[rows, out]`), on its compute stream; the bias in rank 0's.
    pub(crate) fn rank_partial(
        &self,
        i: usize,
        group: &TpGroup,
        x: &impl DevicePtr<bf16>,
        y: &mut impl DevicePtrMut<bf16>,
        rows: usize,
        grid: Grid,
    ) -> Result<(), TpError> {
        let bias = if group.rank(i) == 0 { self.b.as_ref() } else { None };
        let dims = Dims::new(rows, self.out_features, self.in_per_rank());
        Ok(rank_linear(group.stream(i), x, &self.slices.w[i], y, bias, false, dims, grid)?)
    }
}

/// W `[out, in]` and b `[out]` hold what the sizes say, and `split` (the
/// features the layer splits, named `what`) splits evenly over `p` ranks.
fn check_weights(in_f: usize, out_f: usize, w: &[bf16], b: Option<&[bf16]>, p: usize, split: usize, what: &str) -> Result<(), TpError> {
    if in_f == 0 || out_f == 0 {
        return Err(TpError::Args(format!("a layer of {in_f} inputs and {out_f} outputs: both must be at least 1")));
    }
    if !split.is_multiple_of(p) {
        return Err(TpError::Args(format!("{what} = {split} features do not split over {p} ranks: use a multiple of {p}")));
    }
    if w.len() != out_f * in_f {
        return Err(TpError::Args(format!("W holds {} values; a layer of {in_f} inputs and {out_f} outputs needs {}", w.len(), out_f * in_f)));
    }
    if let Some(b) = b.filter(|b| b.len() != out_f) {
        return Err(TpError::Args(format!("b holds {} values; a layer of {out_f} outputs needs {out_f}", b.len())));
    }
    Ok(())
}

/// A layer's slices on the group's GPUs, cut for it, and an input and an
/// output for each rank this process drives, on that rank's GPU, holding
/// `m` rows of `widths` (input, output; an output width of 0 is checked by
/// the caller).
pub(crate) fn check_ranks(
    group: &TpGroup,
    slices: &Slices,
    x: &[&CudaSlice<bf16>],
    y: &[&mut CudaSlice<bf16>],
    m: usize,
    [width_x, width_y]: [usize; 2],
) -> Result<(), TpError> {
    slices.check(group)?;
    let here = group.local_ranks();
    if x.len() != here || y.len() != here {
        return Err(TpError::Args(format!(
            "give one input and one output a rank this process drives: {here} ranks, {} inputs, {} outputs",
            x.len(),
            y.len()
        )));
    }
    for i in 0..here {
        let (r, ordinal) = (group.rank(i), group.ordinal(i));
        for (what, len, on, width) in
            [("input", x[i].len(), x[i].context().ordinal(), width_x), ("output", y[i].len(), y[i].context().ordinal(), width_y)]
        {
            if on != ordinal {
                return Err(TpError::Args(format!("rank {r}'s {what} lies on GPU {on}; the rank runs on GPU {ordinal}")));
            }
            if len < m * width {
                return Err(TpError::Args(format!("rank {r}'s {what} holds {len} values; {m} rows of {width} need {}", m * width)));
            }
        }
    }
    Ok(())
}

/// `rows x cols` values of `src` from element `at` (row after row, `cols`
/// apart) to `dst`'s columns `col..` of rows `ld` apart, on `s`.
#[allow(clippy::too_many_arguments)]
fn copy_columns(
    s: &CudaStream,
    src: &impl DevicePtr<bf16>,
    at: usize,
    dst: &mut CudaSlice<bf16>,
    col: usize,
    ld: usize,
    rows: usize,
    cols: usize,
) -> Result<(), TpError> {
    use cudarc::driver::sys;
    let e = std::mem::size_of::<bf16>();
    let (src_ptr, _read) = src.device_ptr(s);
    let (dst_ptr, _write) = dst.device_ptr_mut(s);
    let copy = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: src_ptr + (at * e) as u64,
        srcArray: std::ptr::null_mut(),
        srcPitch: cols * e,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: dst_ptr + (col * e) as u64,
        dstArray: std::ptr::null_mut(),
        dstPitch: ld * e,
        WidthInBytes: cols * e,
        Height: rows,
    };
    // SAFETY: the caller's checks keep both regions within their buffers (src holds p blocks of
    // rows x cols, dst rows of ld >= col + cols); both pointers are used on `s`, ordered by cudarc.
    unsafe { sys::cuMemcpy2DAsync_v2(&copy, s.cu_stream()) }.result().map_err(|e| TpError::Gemm(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The split features divide evenly over the ranks, W and b hold what
    /// the sizes say, or each is an `Err` naming the remedy (checked before
    /// any GPU is touched).
    #[test]
    fn weights_must_match_the_sizes_and_split_evenly_over_the_ranks() {
        let w = vec![bf16::ZERO; 8192 * 28672];
        assert!(check_weights(8192, 28672, &w, None, 4, 28672, "out").is_ok());
        let e = |r: Result<(), TpError>| r.unwrap_err().to_string();
        let w = vec![bf16::ZERO; 64 * 30];
        assert!(e(check_weights(64, 30, &w, None, 4, 30, "out")).contains("out = 30 features do not split over 4 ranks"));
        assert!(e(check_weights(64, 30, &w[1..], None, 2, 30, "out")).contains("W holds 1919 values"));
        assert!(e(check_weights(64, 30, &w, Some(&w[..29]), 2, 30, "out")).contains("b holds 29 values"));
        assert!(e(check_weights(0, 30, &[], None, 1, 30, "out")).contains("at least 1"));
    }
}
