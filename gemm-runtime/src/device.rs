//! Device discovery: a context and stream, or an error that says why not.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

use crate::GemmError;

/// A GPU to run on: its context, a stream, and what it is.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub name: String,
    /// Compute capability (major, minor).
    pub capability: (i32, i32),
}

/// Is libcuda loadable? cudarc panics on first use when it is not, so ask first.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Opens device `ordinal`: `Err` with the reason when there is no driver or no such device.
pub fn open(ordinal: usize) -> Result<Gpu, GemmError> {
    if !driver_present() {
        return Err(GemmError::NoDriver);
    }
    let count = CudaContext::device_count().map_err(|e| GemmError::NoDevice(format!("{e:?}")))?;
    if ordinal >= count as usize {
        return Err(GemmError::NoDevice(format!("asked for device {ordinal}, but {count} CUDA device(s) are visible")));
    }
    let ctx = CudaContext::new(ordinal).map_err(|e| GemmError::NoDevice(format!("{e:?}")))?;
    let stream = ctx.default_stream();
    Ok(Gpu { name: ctx.name()?, capability: ctx.compute_capability()?, ctx, stream })
}

/// The driver's version as "major.minor".
pub fn driver_version() -> Result<String, GemmError> {
    let mut v = 0;
    // SAFETY: writes one int; the driver library is loaded by `open` before this is useful.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }.result()?;
    Ok(format!("{}.{}", v / 1000, (v % 1000) / 10))
}
