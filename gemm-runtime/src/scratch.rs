//! Scratch memory launches need for themselves, ordered on a stream: aligned
//! copies of operands, C saved while tuning, and stream-K's partial sums and
//! flags, which each stream keeps from launch to launch ([`StreamKScratch`]).

use cudarc::driver::{result, sys, CudaStream};

use crate::GemmError;

/// Device memory ordered on one stream: usable by work queued after its
/// allocation, returned to the stream's pool once the work queued before the
/// drop has run.
pub struct Scratch {
    ptr: sys::CUdeviceptr,
    stream: sys::CUstream,
}

impl Scratch {
    /// `bytes` of memory on `stream` (not zeroed).
    pub fn new(stream: &CudaStream, bytes: usize) -> Result<Self, GemmError> {
        stream.context().bind_to_thread()?;
        let s = stream.cu_stream();
        // SAFETY: an allocation ordered on a live stream; freed on it in Drop.
        let ptr = unsafe { result::malloc_async(s, bytes.max(1)) }?;
        Ok(Scratch { ptr, stream: s })
    }

    pub fn ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: stream-ordered after every use queued so far. A failure here
        // leaves the memory to the pool; there is no caller to tell.
        let _ = unsafe { result::free_async(self.ptr, self.stream) };
    }
}

/// Stream-K's scratch (the ticket count, a flag and a partial sum a block)
/// for one stream, kept from launch to launch: its kernels leave every flag
/// and the count at zero as they end, so a launch needs no memset of its own
/// (allocating and zeroing it for each launch cost about 5 us a launch on
/// the H100, over a quarter of a 1 x 4096 x 4096 decode step). Launches on
/// one stream run one after another, so they can share it; each stream has
/// its own, known by the driver's id for it (a handle may be reused by a
/// stream made after another is destroyed, while the old one's work still
/// runs), kept until the process ends: at most [`KEPT_STREAMS`] of them.
/// A launch gets scratch of its own instead, allocated and zeroed on its
/// stream, on a stream past those, and on a stream being captured into a
/// graph (as graph nodes: memory allocated in a capture belongs to the
/// graph).
struct StreamK {
    /// The context's handle and the stream's id (none for a launch's own).
    key: Option<(usize, u64)>,
    scratch: Scratch,
    /// Flag words zeroed at the start, then partial-sum bytes.
    flag_words: usize,
    partial_bytes: usize,
}

impl StreamK {
    /// Room for `flag_words` flags, zeroed on `stream`, then `partial_bytes`.
    fn new(stream: &CudaStream, key: Option<(usize, u64)>, flag_words: usize, partial_bytes: usize) -> Result<Self, GemmError> {
        let scratch = Scratch::new(stream, flags_bytes(flag_words) + partial_bytes)?;
        // SAFETY: the flags lie inside the allocation just made.
        unsafe { result::memset_d8_async(scratch.ptr, 0, flags_bytes(flag_words), stream.cu_stream()) }?;
        Ok(StreamK { key, scratch, flag_words, partial_bytes })
    }
}

/// The bytes `flag_words` flags take: the partial sums start on the
/// 256-byte boundary after them.
fn flags_bytes(flag_words: usize) -> usize {
    (flag_words * 4).next_multiple_of(256)
}

// SAFETY: the stream handle is only used to free the buffer on its stream,
// which the driver allows from any thread.
unsafe impl Send for StreamK {}

static STREAM_K: std::sync::Mutex<Vec<StreamK>> = std::sync::Mutex::new(Vec::new());

/// The most streams whose stream-K scratch is kept (a program that makes
/// streams without end would otherwise keep scratch for each).
pub const KEPT_STREAMS: usize = 16;

/// A stream-K launch's scratch: held (with every other stream's) until it
/// is dropped, so that no other launch on the stream replaces the buffer
/// between handing out its addresses and queueing the kernel.
pub struct StreamKScratch {
    guard: std::sync::MutexGuard<'static, Vec<StreamK>>,
    /// The stream's kept scratch, or (in a capture, or on a stream past
    /// those kept) the launch's own.
    place: Place,
}

enum Place {
    Kept(usize),
    Own(StreamK),
}

impl StreamKScratch {
    /// The stream's scratch with room for `flag_words` zeroed flags (the
    /// blocks' and the ticket count) and `partial_bytes` of partial sums;
    /// grown where a launch needs more (the old buffer freed on the stream,
    /// after the launches queued before).
    pub fn get(stream: &CudaStream, flag_words: usize, partial_bytes: usize) -> Result<Self, GemmError> {
        let mut guard = STREAM_K.lock().unwrap_or_else(|p| p.into_inner());
        stream.context().bind_to_thread()?;
        // (asked first: a capture refuses cuStreamGetId, and is then invalidated)
        if stream.capture_status()? != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            let own = StreamK::new(stream, None, flag_words, partial_bytes)?;
            return Ok(StreamKScratch { guard, place: Place::Own(own) });
        }
        let mut id = 0u64;
        // SAFETY: a live stream's handle, and a place for its id.
        unsafe { sys::cuStreamGetId(stream.cu_stream(), &mut id) }.result()?;
        let key = Some((stream.context().cu_ctx() as usize, id));
        let found = guard.iter().position(|s| s.key == key);
        if found.is_none() && guard.len() >= KEPT_STREAMS {
            let own = StreamK::new(stream, None, flag_words, partial_bytes)?;
            return Ok(StreamKScratch { guard, place: Place::Own(own) });
        }
        let fits = found.is_some_and(|i| guard[i].flag_words >= flag_words && guard[i].partial_bytes >= partial_bytes);
        let at = match found {
            Some(i) if fits => i,
            Some(i) => {
                // (the old scratch, dropped here, is freed on the stream after its launches)
                guard[i] = StreamK::new(stream, key, guard[i].flag_words.max(flag_words), guard[i].partial_bytes.max(partial_bytes))?;
                i
            }
            None => {
                guard.push(StreamK::new(stream, key, flag_words, partial_bytes)?);
                guard.len() - 1
            }
        };
        Ok(StreamKScratch { guard, place: Place::Kept(at) })
    }

    fn entry(&self) -> &StreamK {
        match &self.place {
            Place::Kept(i) => &self.guard[*i],
            Place::Own(own) => own,
        }
    }

    /// The flags (the blocks', then the ticket count), zero between launches.
    pub fn flags(&self) -> sys::CUdeviceptr {
        self.entry().scratch.ptr
    }

    /// Where the partial sums start.
    pub fn partials(&self) -> sys::CUdeviceptr {
        let s = self.entry();
        s.scratch.ptr + flags_bytes(s.flag_words) as u64
    }

    /// The flag words (a copy, read after the stream's work so far): every
    /// one is zero between launches.
    #[doc(hidden)]
    pub fn flag_words(&self, stream: &CudaStream) -> Result<Vec<u32>, GemmError> {
        let s = self.entry();
        let mut words = vec![0u32; s.flag_words];
        stream.synchronize()?;
        stream.context().bind_to_thread()?;
        // SAFETY: the flags lie inside the allocation; the stream's work on them is done.
        unsafe { result::memcpy_dtoh_sync(&mut words, s.scratch.ptr) }?;
        Ok(words)
    }
}
