//! Scratch memory a launch needs for itself (stream-K's partial sums and
//! flags): allocated on the launch's stream and freed on it after the kernel,
//! so launches on different streams never share it.

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
    /// `bytes` of memory on `stream`, zeroed if `zeroed`.
    pub fn new(stream: &CudaStream, bytes: usize, zeroed: bool) -> Result<Self, GemmError> {
        stream.context().bind_to_thread()?;
        let s = stream.cu_stream();
        // SAFETY: an allocation ordered on a live stream; freed on it in Drop.
        let ptr = unsafe { result::malloc_async(s, bytes.max(1)) }?;
        let scratch = Scratch { ptr, stream: s };
        if zeroed {
            // SAFETY: `bytes` fit in the allocation just made.
            unsafe { result::memset_d8_async(ptr, 0, bytes, s) }?;
        }
        Ok(scratch)
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
