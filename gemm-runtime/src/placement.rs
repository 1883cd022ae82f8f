//! Which GPU each buffer of a launch lies on: the stream's, or managed
//! memory, which any GPU reaches. A kernel given another GPU's memory
//! faults where peer access is off (an illegal address, which ends the
//! context and every launch after it) and reads it over the link where
//! it is on; either way the launch is an `Err` before it runs.

use cudarc::driver::{sys, CudaStream, DevicePtr, DevicePtrMut};

use crate::{EpilogueArgs, GemmError};

/// Every buffer a launch reads or writes, its epilogue's included, on
/// `stream`'s GPU or in managed memory.
pub(crate) fn of_launch<TA, TB, TC, TX>(
    stream: &CudaStream,
    a: &impl DevicePtr<TA>,
    b: &impl DevicePtr<TB>,
    c: &mut impl DevicePtrMut<TC>,
    epilogue: &EpilogueArgs<'_, TX>,
) -> Result<(), GemmError> {
    read(stream, "A", a)?;
    read(stream, "B", b)?;
    written(stream, "C", c)?;
    if let Some(x) = epilogue.bias {
        read(stream, "the bias", x)?;
    }
    if let Some((sa, sb)) = epilogue.scales {
        read(stream, "A's scales", sa)?;
        read(stream, "B's scales", sb)?;
    }
    if let Some(g) = epilogue.groups {
        read(stream, "the groups' rows", g)?;
    }
    Ok(())
}

/// A buffer that `stream`'s work reads, named `what` in the error.
pub(crate) fn read<T, X: DevicePtr<T> + ?Sized>(stream: &CudaStream, what: &'static str, x: &X) -> Result<(), GemmError> {
    // (the address, where it is needed, taken on the buffer's own stream: taken for another
    // context's stream, it records the buffer's events there, which fails and leaves the
    // error in that context)
    check(stream, what, x.stream().context().ordinal(), || x.device_ptr(x.stream()).0)
}

/// A buffer that `stream`'s work writes, named `what` in the error.
pub(crate) fn written<T, X: DevicePtrMut<T> + ?Sized>(stream: &CudaStream, what: &'static str, x: &mut X) -> Result<(), GemmError> {
    let own = x.stream().clone();
    check(stream, what, own.context().ordinal(), || x.device_ptr_mut(&own).0)
}

/// `Ok` where the buffer `what`, on GPU `on`, lies on `stream`'s GPU or
/// in managed memory; its address (`ptr`) is asked for only where the
/// GPUs differ.
fn check(stream: &CudaStream, what: &'static str, on: usize, ptr: impl FnOnce() -> sys::CUdeviceptr) -> Result<(), GemmError> {
    let here = stream.context().ordinal();
    if on == here || managed(stream, ptr())? {
        return Ok(());
    }
    Err(GemmError::WrongDevice { what, on, here })
}

/// Whether `ptr` is managed memory (cudarc's unified slices, whose own
/// checks say which streams may reach them).
fn managed(stream: &CudaStream, ptr: sys::CUdeviceptr) -> Result<bool, GemmError> {
    stream.context().bind_to_thread()?;
    let mut is_managed: u32 = 0;
    // SAFETY: CU_POINTER_ATTRIBUTE_IS_MANAGED writes one unsigned int (a bool) into `is_managed`
    unsafe {
        sys::cuPointerGetAttribute((&mut is_managed as *mut u32).cast(), sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr).result()?;
    }
    Ok(is_managed != 0)
}
