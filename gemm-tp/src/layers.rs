//! Megatron's two tensor-parallel linear layers, bf16, weights as
//! `torch.nn.Linear` stores them (`W [out, in]`, `y = x W^T + b`).

use std::sync::Mutex;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use cudarc::nccl::safe::ReduceOp;
use gemm_runtime::{bf16, Dims};

use crate::kernels::rank_linear;
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

/// A linear layer split by its output features: rank r holds W's rows
/// (and b's values) `r * out / p .. (r + 1) * out / p` and computes those
/// columns of `act(x W^T + b)` from the whole input, with no
/// communication; [`Self::forward_gathered`] then gathers every rank's
/// columns onto every rank.
pub struct ColumnParallel {
    in_features: usize,
    out_features: usize,
    pub(crate) w: Vec<CudaSlice<bf16>>,
    b: Option<Vec<CudaSlice<bf16>>>,
    gelu: bool,
    /// The gathered form's buffers: each rank's columns, then every rank's.
    kept: Mutex<Option<Kept>>,
}

impl ColumnParallel {
    /// The layer from its weights on the host (W `[out, in]`, b `[out]`,
    /// row-major), each rank's slices copied to its GPU; `gelu`: the exact
    /// GELU after the bias. `out` must split evenly over the ranks.
    pub fn from_host(group: &TpGroup, in_features: usize, out_features: usize, w: &[bf16], b: Option<&[bf16]>, gelu: bool) -> Result<Self, TpError> {
        let p = group.world();
        check_weights(in_features, out_features, w, b, p, out_features, "out")?;
        let op = out_features / p;
        let (mut ws, mut bs) = (Vec::new(), Vec::new());
        for r in 0..p {
            let s = group.stream(r);
            ws.push(s.clone_htod(&w[r * op * in_features..(r + 1) * op * in_features])?);
            if let Some(b) = b {
                bs.push(s.clone_htod(&b[r * op..(r + 1) * op])?);
            }
        }
        let b = b.map(|_| bs);
        Ok(ColumnParallel { in_features, out_features, w: ws, b, gelu, kept: Mutex::new(None) })
    }

    /// The output features each rank computes: `out / p`.
    pub fn out_per_rank(&self) -> usize {
        self.out_features / self.w.len()
    }

    /// Each rank's columns: `x[r]` holds the `m` tokens (`[m, in]`, the
    /// same on every rank, on rank r's GPU), `y[r]` receives
    /// `[m, out / p]`, rank r's slice of the layer's output.
    pub fn forward(&self, group: &TpGroup, x: &[&CudaSlice<bf16>], y: &mut [&mut CudaSlice<bf16>], m: usize) -> Result<(), TpError> {
        check_ranks(group, &self.w, x, y, m, [self.in_features, self.out_per_rank()])?;
        for r in 0..group.world() {
            self.rank_forward(r, group.stream(r), x[r], y[r], m, None)?;
        }
        Ok(())
    }

    /// The whole output on every rank: `y[r]` receives `[m, out]`. Each
    /// rank's columns are computed as [`Self::forward`] computes them, then
    /// an all-gather brings every rank's onto every rank (one block of `m x
    /// out / p` after another), and a 2-D copy on each compute stream puts
    /// them side by side.
    pub fn forward_gathered(&self, group: &TpGroup, x: &[&CudaSlice<bf16>], y: &mut [&mut CudaSlice<bf16>], m: usize) -> Result<(), TpError> {
        let (p, op) = (group.world(), self.out_per_rank());
        check_ranks(group, &self.w, x, y, m, [self.in_features, self.out_features])?;
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let [own, all] = Kept::get(&mut kept, group, &[m * op, p * m * op])? else { unreachable!("two buffers a rank") };
        for r in 0..p {
            self.rank_forward(r, group.stream(r), x[r], &mut own[r], m, None)?;
        }
        group.each_in_nccl_group(|r| Ok(group.comm(r).all_gather(&own[r], &mut all[r]).map(drop)?))?;
        for r in 0..p {
            group.recorded_after_collective(r, &[&own[r]], &mut [&mut all[r]]);
            let s = group.stream(r);
            for q in 0..p {
                // rank q's m x op block to columns q * op.. of each row
                copy_columns(s, &all[r], q * m * op, y[r], q * op, self.out_features, m, op)?;
            }
        }
        Ok(())
    }

    /// Rank r's columns for rows of x (`[rows, in]`) into y (`[rows, out / p]`).
    pub(crate) fn rank_forward(
        &self,
        r: usize,
        s: &CudaStream,
        x: &impl DevicePtr<bf16>,
        y: &mut impl DevicePtrMut<bf16>,
        rows: usize,
        max_blocks: Option<u32>,
    ) -> Result<(), TpError> {
        let bias = self.b.as_ref().map(|b| &b[r]);
        let dims = Dims::new(rows, self.out_per_rank(), self.in_features);
        Ok(rank_linear(s, x, &self.w[r], y, bias, self.gelu, dims, max_blocks)?)
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
    w: Vec<CudaSlice<bf16>>,
    b: Option<CudaSlice<bf16>>,
    /// The reduce-scatter's partial sums, a buffer a rank.
    kept: Mutex<Option<Kept>>,
}

impl RowParallel {
    /// The layer from its weights on the host (W `[out, in]`, b `[out]`,
    /// row-major), each rank's columns of W copied to its GPU, b to rank
    /// 0's. `in` must split evenly over the ranks.
    pub fn from_host(group: &TpGroup, in_features: usize, out_features: usize, w: &[bf16], b: Option<&[bf16]>) -> Result<Self, TpError> {
        let p = group.world();
        check_weights(in_features, out_features, w, b, p, in_features, "in")?;
        let ip = in_features / p;
        let mut ws = Vec::new();
        for r in 0..p {
            // W's columns of this rank's input features, row by row
            let cols: Vec<bf16> =
                (0..out_features).flat_map(|row| w[row * in_features + r * ip..row * in_features + (r + 1) * ip].iter().copied()).collect();
            ws.push(group.stream(r).clone_htod(&cols)?);
        }
        let b = b.map(|b| group.stream(0).clone_htod(b)).transpose()?;
        Ok(RowParallel { in_features, out_features, w: ws, b, kept: Mutex::new(None) })
    }

    /// The input features each rank holds: `in / p`.
    pub fn in_per_rank(&self) -> usize {
        self.in_features / self.w.len()
    }

    /// `x[r]` holds rank r's slice of the input (`[m, in / p]`); `y[r]`
    /// receives the sum of the partial outputs: `[m, out]` under
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
        check_ranks(group, &self.w, x, y, m, [self.in_per_rank(), 0])?;
        for (r, yr) in y.iter().enumerate() {
            if yr.len() < rows * out {
                return Err(TpError::Args(format!("rank {r}'s output holds {} values; {rows} rows of {out} need {}", yr.len(), rows * out)));
            }
        }
        match reduce {
            Reduce::AllReduce => {
                // each rank's partial sum in its output, summed there
                for r in 0..p {
                    self.rank_partial(r, group.stream(r), x[r], y[r], m, None)?;
                }
                group.each_in_nccl_group(|r| {
                    let mut dst = y[r].slice_mut(0..m * out);
                    Ok(group.comm(r).all_reduce_in_place(&mut dst, &ReduceOp::Sum).map(drop)?)
                })?;
                for (r, yr) in y.iter_mut().enumerate() {
                    group.recorded_after_collective(r, &[], &mut [&mut yr.slice_mut(0..m * out)]);
                }
            }
            Reduce::ReduceScatter => {
                let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
                let [partials] = Kept::get(&mut kept, group, &[m * out])? else { unreachable!("one buffer a rank") };
                for r in 0..p {
                    self.rank_partial(r, group.stream(r), x[r], &mut partials[r], m, None)?;
                }
                group.each_in_nccl_group(|r| {
                    let mut dst = y[r].slice_mut(0..rows * out);
                    Ok(group.comm(r).reduce_scatter(&partials[r], &mut dst, &ReduceOp::Sum).map(drop)?)
                })?;
                for r in 0..p {
                    group.recorded_after_collective(r, &[&partials[r]], &mut [&mut y[r].slice_mut(0..rows * out)]);
                }
            }
        }
        Ok(())
    }

    /// Rank r's partial sum for rows of x (`[rows, in / p]`) into y
    /// (`[rows, out]`), the bias in rank 0's.
    pub(crate) fn rank_partial(
        &self,
        r: usize,
        s: &CudaStream,
        x: &impl DevicePtr<bf16>,
        y: &mut impl DevicePtrMut<bf16>,
        rows: usize,
        max_blocks: Option<u32>,
    ) -> Result<(), TpError> {
        let bias = if r == 0 { self.b.as_ref() } else { None };
        let dims = Dims::new(rows, self.out_features, self.in_per_rank());
        Ok(rank_linear(s, x, &self.w[r], y, bias, false, dims, max_blocks)?)
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

/// A layer's slices on the group's GPUs, and each rank's input and output
/// on its own GPU, holding `m` rows of `widths` (input, output; an output
/// width of 0 is checked by the caller).
pub(crate) fn check_ranks(
    group: &TpGroup,
    weights: &[CudaSlice<bf16>],
    x: &[&CudaSlice<bf16>],
    y: &[&mut CudaSlice<bf16>],
    m: usize,
    [width_x, width_y]: [usize; 2],
) -> Result<(), TpError> {
    let p = group.world();
    if weights.len() != p {
        return Err(TpError::Args(format!("the layer was split over {} ranks, the group has {p}", weights.len())));
    }
    if x.len() != p || y.len() != p {
        return Err(TpError::Args(format!("give one input and one output a rank: {p} ranks, {} inputs, {} outputs", x.len(), y.len())));
    }
    if m == 0 {
        return Err(TpError::Args("m = 0 tokens: nothing to compute".into()));
    }
    for r in 0..p {
        let ordinal = group.ordinal(r);
        let on = weights[r].context().ordinal();
        if on != ordinal {
            return Err(TpError::Args(format!("the layer's slices for rank {r} lie on GPU {on}; the group runs rank {r} on GPU {ordinal}")));
        }
        for (what, len, on, width) in
            [("input", x[r].len(), x[r].context().ordinal(), width_x), ("output", y[r].len(), y[r].context().ordinal(), width_y)]
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
    src: &CudaSlice<bf16>,
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
