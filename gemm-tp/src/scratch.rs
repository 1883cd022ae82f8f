//! Buffers a layer keeps on each rank from one call to the next: a
//! stream-ordered allocation of the MLP's activations (235 MB a rank at
//! 8192 tokens) went back to the driver at every synchronization.

use cudarc::driver::CudaSlice;
use gemm_runtime::bf16;

use crate::{TpError, TpGroup};

/// Buffers of the lengths `lens` on every rank a process drives:
/// `bufs[j][i]` holds `lens[j]` values on the i-th rank's GPU.
pub(crate) struct Kept {
    lens: Vec<usize>,
    ordinals: Vec<usize>,
    bufs: Vec<Vec<CudaSlice<bf16>>>,
}

impl Kept {
    /// The buffers of `lens` on `group`'s GPUs: those in `slot` where they
    /// are these, else new ones (allocated on the compute streams; what
    /// reads them is written first), kept there for the next call.
    pub(crate) fn get<'a>(slot: &'a mut Option<Kept>, group: &TpGroup, lens: &[usize]) -> Result<&'a mut [Vec<CudaSlice<bf16>>], TpError> {
        let ordinals: Vec<usize> = (0..group.local_ranks()).map(|i| group.ordinal(i)).collect();
        if !matches!(slot.as_ref(), Some(k) if k.lens == lens && k.ordinals == ordinals) {
            // the old ones go back before the new ones are taken
            *slot = None;
            let mut bufs = Vec::with_capacity(lens.len());
            for &len in lens {
                // SAFETY: every element is written (by a GEMM or a collective) before anything reads it.
                bufs.push((0..group.local_ranks()).map(|i| unsafe { group.stream(i).alloc::<bf16>(len) }).collect::<Result<Vec<_>, _>>()?);
            }
            *slot = Some(Kept { lens: lens.to_vec(), ordinals, bufs });
        }
        Ok(&mut slot.as_mut().expect("just made").bufs)
    }
}
