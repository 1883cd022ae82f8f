//! The GPUs of a tensor-parallel group: all driven by one process, or one
//! a process.

use std::sync::Arc;

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use cudarc::nccl::safe::{Comm, Id, ReduceOp};
use gemm_runtime::bf16;

use crate::TpError;

/// A tensor-parallel group of `world` ranks, a GPU each, and the ranks of
/// it this process drives: for each, a compute stream for the GEMMs and an
/// NCCL communicator whose own stream runs the collectives. Built by
/// [`TpGroup::new`] (one process, every rank) or [`TpGroup::from_rank`]
/// (one rank a process, the communicators joined by a [`GroupId`]).
///
/// Methods that take an index `i` mean the i-th rank this process drives
/// (every rank, in order, for a group from [`TpGroup::new`]); layers take
/// one input and one output for each of those ranks.
pub struct TpGroup {
    world: usize,
    local: Vec<Local>,
    /// The fewest SMs of any rank's GPU, the whole group's.
    sms: usize,
}

/// A rank this process drives.
struct Local {
    rank: usize,
    compute: Arc<CudaStream>,
    comm: Comm,
}

/// The id that joins the communicators of one group across processes:
/// made once (by rank 0's process, say) and handed to every process, as
/// its 128 bytes, by whatever means they share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupId([u8; 128]);

impl GroupId {
    /// A new id (NCCL's `ncclGetUniqueId`); an `Err` where NCCL is not found.
    pub fn new() -> Result<Self, TpError> {
        nccl_present()?;
        let id = Id::new()?;
        Ok(GroupId(id.internal().map(|c| c as u8)))
    }

    pub fn to_bytes(self) -> [u8; 128] {
        self.0
    }

    pub fn from_bytes(bytes: [u8; 128]) -> Self {
        GroupId(bytes)
    }
}

/// NCCL is loaded at run time: its absence is an `Err` that says so.
fn nccl_present() -> Result<(), TpError> {
    // SAFETY: only tries to dlopen the library.
    match unsafe { cudarc::nccl::sys::is_culib_present() } {
        true => Ok(()),
        false => Err(TpError::NoNccl),
    }
}

/// A stream for the GEMMs and one for the collectives on GPU `ordinal`, and its SMs.
///
/// The collectives' stream has the GPU's highest priority: where a
/// collective's CTAs and a GEMM's blocks wait for SMs at once, the block
/// scheduler places the collective's first. At the same priority they
/// waited for the GEMM's blocks before them: beside a GEMM of a block a
/// tile, an all-reduce of 0.28 ms took 1.72 (two H200s;
/// docs/src/tensor-parallel.md).
fn streams(ordinal: usize) -> Result<(Arc<CudaStream>, Arc<CudaStream>), TpError> {
    let ctx = CudaContext::new(ordinal)?;
    // (lower numbers are higher priorities: the range's second is the highest)
    let (_, highest) = cudarc::driver::result::stream::get_priority_range()?;
    Ok((ctx.new_stream()?, ctx.new_stream_with_priority(highest)?))
}

/// Every ordinal names a GPU of this machine.
fn check_ordinals(ordinals: &[usize]) -> Result<(), TpError> {
    let count = CudaContext::device_count()? as usize;
    match ordinals.iter().find(|&&o| o >= count) {
        Some(o) => Err(TpError::Args(format!("there is no GPU {o}: this machine has {count}"))),
        None => Ok(()),
    }
}

impl TpGroup {
    /// A group of the GPUs `ordinals` (rank i on `ordinals[i]`), each used
    /// once, all driven by this process. An `Err` where NCCL is not found,
    /// an ordinal repeats or names no GPU.
    pub fn new(ordinals: &[usize]) -> Result<Self, TpError> {
        if ordinals.is_empty() {
            return Err(TpError::Args("a tensor-parallel group needs at least one GPU".into()));
        }
        for (i, o) in ordinals.iter().enumerate() {
            if ordinals[..i].contains(o) {
                return Err(TpError::Args(format!("GPU {o} appears twice in the group {ordinals:?}: each rank needs a GPU of its own")));
            }
        }
        check_ordinals(ordinals)?;
        nccl_present()?;
        let mut made = Vec::with_capacity(ordinals.len());
        for &o in ordinals {
            made.push(streams(o)?);
        }
        let comms = Comm::from_devices(made.iter().map(|m| m.1.clone()).collect())?;
        let local = made.into_iter().zip(comms).enumerate().map(|(rank, ((compute, _), comm))| Local { rank, compute, comm }).collect();
        TpGroup { world: ordinals.len(), local, sms: 0 }.with_fewest_sms()
    }

    /// Every GPU of the machine, in order, driven by this process.
    pub fn all() -> Result<Self, TpError> {
        let count = CudaContext::device_count()? as usize;
        Self::new(&(0..count).collect::<Vec<_>>())
    }

    /// Rank `rank` of a group of `world`, on GPU `ordinal`, driven by this
    /// process alone; every rank's process calls it with the same `id`, and
    /// the call returns once all `world` have joined.
    pub fn from_rank(ordinal: usize, rank: usize, world: usize, id: &GroupId) -> Result<Self, TpError> {
        if rank >= world {
            return Err(TpError::Args(format!("rank {rank} of a group of {world}: ranks run from 0 to {}", world.saturating_sub(1))));
        }
        check_ordinals(&[ordinal])?;
        nccl_present()?;
        let (compute, comm_stream) = streams(ordinal)?;
        let comm = Comm::from_rank(comm_stream, rank, world, Id::uninit(id.0.map(|b| b as _)))?;
        TpGroup { world, local: vec![Local { rank, compute, comm }], sms: 0 }.with_fewest_sms()
    }

    /// The group with its SM count: the fewest of its GPUs', over every
    /// rank (an all-reduce, as ranks may run in other processes), so that
    /// every rank cuts a layer's tokens into the same chunks.
    fn with_fewest_sms(mut self) -> Result<Self, TpError> {
        let mut counts = Vec::with_capacity(self.local.len());
        for l in &self.local {
            let sms = l.compute.context().attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
            counts.push(l.comm.stream().clone_htod(&[sms as u32])?);
        }
        self.each_in_nccl_group(|i| Ok(self.comm(i).all_reduce_in_place(&mut counts[i], &ReduceOp::Min).map(drop)?))?;
        // (read on the stream that summed it)
        let fewest = self.local[0].comm.stream().clone_dtoh(&counts[0])?;
        self.sms = fewest[0] as usize;
        Ok(self)
    }

    /// The fewest SMs of the group's GPUs: what chunks are fitted to
    /// ([`crate::ChunkPlan::fitted`]).
    pub fn sms(&self) -> usize {
        self.sms
    }

    /// The number of ranks of the whole group.
    pub fn world(&self) -> usize {
        self.world
    }

    /// The number of ranks this process drives.
    pub fn local_ranks(&self) -> usize {
        self.local.len()
    }

    /// The group rank of the i-th rank this process drives.
    pub fn rank(&self, i: usize) -> usize {
        self.local[i].rank
    }

    /// The i-th rank's compute stream: where its inputs should be written and its outputs read.
    pub fn stream(&self, i: usize) -> &Arc<CudaStream> {
        &self.local[i].compute
    }

    /// The i-th rank's communicator (its stream runs the collectives).
    pub fn comm(&self, i: usize) -> &Comm {
        &self.local[i].comm
    }

    /// The i-th rank's device ordinal.
    pub fn ordinal(&self, i: usize) -> usize {
        self.local[i].compute.context().ordinal()
    }

    /// Each compute stream made to wait for the collectives enqueued so far
    /// on its communicator's stream. Every layer's call starts so: its
    /// GEMMs never run beside an earlier call's collective, which they
    /// would where nothing reads that collective's output in between (a
    /// loop over the same input), on the fixed shares that assume SMs to
    /// themselves. In a model the next layer reads that output anyway.
    pub(crate) fn after_collectives(&self) -> Result<(), TpError> {
        for l in &self.local {
            let done = l.comm.stream().record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
            l.compute.wait(&done)?;
        }
        Ok(())
    }

    /// Before a collective that the next GEMMs on the compute streams run
    /// beside: each communicator's stream made to wait for its compute
    /// stream's work so far, and the compute stream for that point of the
    /// communicator's stream, so that the collective and the GEMMs after it
    /// are ready at once and the collective's priority places its CTAs
    /// first. Ordered by cudarc's tracking alone, the GEMM was ready as
    /// soon as the kernel before it on its stream ended, took every SM
    /// (its persistent blocks hold a whole register file each), and the
    /// collective waited for its blocks to exit: on two H200s a chunk's
    /// all-reduce of 0.30 ms ended 1.6-1.9 ms after it was ready
    /// (docs/src/performance/tensor-parallel.md). The compute
    /// streams' next GEMMs so also wait for the collectives before this
    /// one, long done where a chunk's GEMMs outlast its collective.
    pub(crate) fn collective_first(&self) -> Result<(), TpError> {
        let untimed = Some(CUevent_flags::CU_EVENT_DISABLE_TIMING);
        for l in &self.local {
            let cs = l.comm.stream();
            cs.wait(&l.compute.record_event(untimed)?)?;
            l.compute.wait(&cs.record_event(untimed)?)?;
        }
        Ok(())
    }

    /// `call(i)` for every rank this process drives, in one NCCL group: one
    /// thread driving several communicators must enqueue their collectives
    /// together. The group is ended even where a call failed, so that the
    /// next one starts afresh.
    pub(crate) fn each_in_nccl_group(&self, call: impl FnMut(usize) -> Result<(), TpError>) -> Result<(), TpError> {
        cudarc::nccl::result::group_start()?;
        let calls = (0..self.local.len()).try_for_each(call);
        let ended = cudarc::nccl::result::group_end();
        calls?;
        ended?;
        Ok(())
    }

    /// After an NCCL group: the i-th rank's buffers that its collective
    /// read and wrote, their use recorded on its communicator's stream
    /// again. cudarc records a use when a pointer is taken, which inside a
    /// group is before the collective is enqueued (at the group's end);
    /// taken again now, whoever uses them next (a reader of the output, the
    /// scratch's next writer, its release) waits for the collective itself.
    pub(crate) fn recorded_after_collective(&self, i: usize, reads: &[&dyn DevicePtr<bf16>], writes: &mut [&mut dyn DevicePtrMut<bf16>]) {
        let s = self.local[i].comm.stream();
        for b in reads {
            drop(b.device_ptr(&s));
        }
        for b in writes.iter_mut() {
            drop(b.device_ptr_mut(&s));
        }
    }

    /// Sums the first `len` values of `bufs` (one a rank this process
    /// drives, on its GPU) over the group, in place, on the communicators'
    /// streams; whoever uses the buffers next on another stream waits for
    /// the sum (cudarc's event tracking). A `len` of 0 sums nothing and
    /// joins no collective (every rank is called with the same `len`).
    pub fn all_reduce(&self, bufs: &mut [&mut CudaSlice<bf16>], len: usize) -> Result<(), TpError> {
        if bufs.len() != self.local.len() {
            return Err(TpError::Args(format!("give one buffer a rank this process drives: {} ranks, {} buffers", self.local.len(), bufs.len())));
        }
        for (i, b) in bufs.iter().enumerate() {
            let (on, ordinal) = (b.context().ordinal(), self.ordinal(i));
            if on != ordinal {
                return Err(TpError::Args(format!("rank {}'s buffer lies on GPU {on}; the rank runs on GPU {ordinal}", self.rank(i))));
            }
            if b.len() < len {
                return Err(TpError::Args(format!("rank {}'s buffer holds {} values; the sum takes {len}", self.rank(i), b.len())));
            }
        }
        if len == 0 {
            return Ok(());
        }
        self.each_in_nccl_group(|i| Ok(self.comm(i).all_reduce_in_place(&mut bufs[i].slice_mut(0..len), &ReduceOp::Sum).map(drop)?))?;
        for (i, b) in bufs.iter_mut().enumerate() {
            self.recorded_after_collective(i, &[], &mut [&mut b.slice_mut(0..len)]);
        }
        Ok(())
    }

    /// Waits until the streams of every rank this process drives are done.
    pub fn synchronize(&self) -> Result<(), TpError> {
        for l in &self.local {
            l.compute.synchronize()?;
            l.comm.stream().synchronize()?;
        }
        Ok(())
    }
}
