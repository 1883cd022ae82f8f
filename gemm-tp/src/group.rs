//! The GPUs of a tensor-parallel group, driven by one process.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};
use cudarc::nccl::safe::Comm;

use crate::TpError;

/// One process's tensor-parallel group: for each GPU (rank), a compute
/// stream for the GEMMs and an NCCL communicator (all of them from one id)
/// whose own stream runs the collectives.
pub struct TpGroup {
    compute: Vec<Arc<CudaStream>>,
    comms: Vec<Comm>,
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
        for &o in ordinals {
            let ctx = CudaContext::new(o)?;
            compute.push(ctx.new_stream()?);
            comm_streams.push(ctx.new_stream()?);
        }
        let comms = Comm::from_devices(comm_streams)?;
        Ok(TpGroup { compute, comms })
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

    /// Rank `rank`'s device ordinal.
    pub fn ordinal(&self, rank: usize) -> usize {
        self.compute[rank].context().ordinal()
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
