//! Buffers a layer keeps on each rank from one call to the next: a
//! stream-ordered allocation of the MLP's activations (235 MB a rank at
//! 8192 tokens) went back to the driver at every synchronization.

use cudarc::driver::{CudaSlice, CudaViewMut};
use gemm_runtime::bf16;

use crate::{TpError, TpGroup};

/// Buffers on every rank a process drives, `bufs[j][i]` on the i-th
/// rank's GPU, each as long as the longest call has wanted so far: calls
/// of other sizes (fewer tokens, another chunk count) take views of them
/// and allocate nothing.
pub(crate) struct Kept {
    ordinals: Vec<usize>,
    bufs: Vec<Vec<CudaSlice<bf16>>>,
}

impl Kept {
    /// Views of `lens[j]` values of the j-th buffers on `group`'s GPUs:
    /// of those in `slot`, a buffer too short (or on other GPUs) replaced
    /// by a new one (allocated on the compute streams; what reads them is
    /// written first), kept there for the next call.
    pub(crate) fn get<'a>(slot: &'a mut Option<Kept>, group: &TpGroup, lens: &[usize]) -> Result<Vec<Vec<CudaViewMut<'a, bf16>>>, TpError> {
        let ordinals: Vec<usize> = (0..group.local_ranks()).map(|i| group.ordinal(i)).collect();
        if !matches!(slot.as_ref(), Some(k) if k.ordinals == ordinals) {
            *slot = None;
        }
        let kept = slot.get_or_insert_with(|| Kept { ordinals, bufs: Vec::new() });
        for (j, &len) in lens.iter().enumerate() {
            if kept.bufs.get(j).is_some_and(|b| b.iter().all(|s| s.len() >= len)) {
                continue;
            }
            // the old one goes back before the new one is taken
            if let Some(old) = kept.bufs.get_mut(j) {
                old.clear();
            }
            // SAFETY: every element is written (by a GEMM or a collective) before anything reads it.
            let new = (0..group.local_ranks()).map(|i| unsafe { group.stream(i).alloc::<bf16>(len) }).collect::<Result<Vec<_>, _>>()?;
            match kept.bufs.get_mut(j) {
                Some(old) => *old = new,
                None => kept.bufs.push(new),
            }
        }
        Ok(kept.bufs.iter_mut().zip(lens).map(|(b, &len)| b.iter_mut().map(|s| s.slice_mut(0..len)).collect()).collect())
    }
}
