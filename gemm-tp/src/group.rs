//! The GPUs of a tensor-parallel group, driven by one process.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream, DevicePtr, DevicePtrMut};
use cudarc::nccl::safe::Comm;
use gemm_runtime::bf16;

use crate::TpError;

/// One process's tensor-parallel group: for each GPU (rank), a compute
/// stream for the GEMMs and an NCCL communicator (all of them from one id)
/// whose own stream runs the collectives.
pub struct TpGroup {
    compute: Vec<Arc<CudaStream>>,
    comms: Vec<Comm>,
    /// Each rank's GPU's SMs.
    sms: Vec<u32>,
}

impl TpGroup {
    /// A group of the GPUs `ordinals` (rank i on `ordinals[i]`), each used
    /// once. An `Err` where NCCL is not found, an ordinal repeats or names
    /// no GPU.
    pub fn new(ordinals: &[usize]) -> Result<Self, TpError> {
        if ordinals.is_empty() {
            return Err(TpError::Args("a tensor-parallel group needs at least one GPU".into()));
        }
        for (i, o) in ordinals.iter().enumerate() {
            if ordinals[..i].contains(o) {
                return Err(TpError::Args(format!("GPU {o} appears twice in the group {ordinals:?}: each rank needs a GPU of its own")));
            }
        }
        let count = CudaContext::device_count()? as usize;
        if let Some(o) = ordinals.iter().find(|&&o| o >= count) {
            return Err(TpError::Args(format!("there is no GPU {o}: this machine has {count}")));
        }
        // SAFETY: only tries to dlopen the library.
        if !unsafe { cudarc::nccl::sys::is_culib_present() } {
            return Err(TpError::NoNccl);
        }
        let mut compute = Vec::with_capacity(ordinals.len());
        let mut comm_streams = Vec::with_capacity(ordinals.len());
        let mut sms = Vec::with_capacity(ordinals.len());
        for &o in ordinals {
            let ctx = CudaContext::new(o)?;
            compute.push(ctx.new_stream()?);
            comm_streams.push(ctx.new_stream()?);
            sms.push(ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?.max(1) as u32);
        }
        let comms = Comm::from_devices(comm_streams)?;
        Ok(TpGroup { compute, comms, sms })
    }

    /// Every GPU of the machine, in order.
    pub fn all() -> Result<Self, TpError> {
        let count = CudaContext::device_count()? as usize;
        Self::new(&(0..count).collect::<Vec<_>>())
    }

    /// The number of ranks.
    pub fn world(&self) -> usize {
        self.compute.len()
    }

    /// Rank `rank`'s compute stream: where its inputs should be written and its outputs read.
    pub fn stream(&self, rank: usize) -> &Arc<CudaStream> {
        &self.compute[rank]
    }

    /// Rank `rank`'s communicator (its stream runs the collectives).
    pub fn comm(&self, rank: usize) -> &Comm {
        &self.comms[rank]
    }

    /// Rank `rank`'s GPU's SMs.
    pub fn sms(&self, rank: usize) -> u32 {
        self.sms[rank]
    }

    /// Rank `rank`'s device ordinal.
    pub fn ordinal(&self, rank: usize) -> usize {
        self.compute[rank].context().ordinal()
    }

    /// `call(r)` for every rank, in one NCCL group: one thread drives every
    /// communicator, so their collectives must be enqueued together. The
    /// group is ended even where a call failed, so that the next one starts
    /// afresh.
    pub(crate) fn each_in_nccl_group(&self, call: impl FnMut(usize) -> Result<(), TpError>) -> Result<(), TpError> {
        cudarc::nccl::result::group_start()?;
        let calls = (0..self.world()).try_for_each(call);
        let ended = cudarc::nccl::result::group_end();
        calls?;
        ended?;
        Ok(())
    }

    /// After an NCCL group: rank `rank`'s buffers that its collective read
    /// and wrote, their use recorded on its communicator's stream again.
    /// cudarc records a use when a pointer is taken, which inside a group
    /// is before the collective is enqueued (at the group's end); taken
    /// again now, whoever uses them next (a reader of the output, the
    /// scratch's next writer, its release) waits for the collective itself.
    pub(crate) fn recorded_after_collective(&self, rank: usize, reads: &[&dyn DevicePtr<bf16>], writes: &mut [&mut dyn DevicePtrMut<bf16>]) {
        let s = self.comms[rank].stream();
        for b in reads {
            drop(b.device_ptr(&s));
        }
        for b in writes.iter_mut() {
            drop(b.device_ptr_mut(&s));
        }
    }

    /// Waits until every rank's streams are done.
    pub fn synchronize(&self) -> Result<(), TpError> {
        for (s, c) in self.compute.iter().zip(&self.comms) {
            s.synchronize()?;
            c.stream().synchronize()?;
        }
        Ok(())
    }
}
