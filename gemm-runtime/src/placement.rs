//! Which GPU each buffer of a launch belongs to: the stream's, or the
//! launch is an `Err` before it runs. A kernel given another GPU's memory
//! faults where peer access is off (an illegal address, which ends the
//! context and every launch after it) and reads it over the link where it
//! is on; and cudarc orders a buffer's uses by events of its own context,
//! which another GPU's stream cannot record (it leaves an error in that
//! context), managed memory included.

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceSlice};

use crate::{EpilogueArgs, GemmError};

/// Every buffer a launch reads or writes, its epilogue's included, from
/// `stream`'s GPU.
pub(crate) fn of_launch<TA, TB, TC, TX>(
    stream: &CudaStream,
    a: &impl DevicePtr<TA>,
    b: &impl DevicePtr<TB>,
    c: &impl DevicePtrMut<TC>,
    epilogue: &EpilogueArgs<'_, TX>,
) -> Result<(), GemmError> {
    check(stream, "A", a)?;
    check(stream, "B", b)?;
    check(stream, "C", c)?;
    if let Some(x) = epilogue.bias {
        check(stream, "the bias", x)?;
    }
    if let Some((sa, sb)) = epilogue.scales {
        check(stream, "A's scales", sa)?;
        check(stream, "B's scales", sb)?;
    }
    if let Some(g) = epilogue.groups {
        check(stream, "the groups' rows", g)?;
    }
    Ok(())
}

/// `Ok` where the buffer `what` comes from `stream`'s GPU (its own
/// stream's context).
pub(crate) fn check<T, X: DeviceSlice<T> + ?Sized>(stream: &CudaStream, what: &'static str, x: &X) -> Result<(), GemmError> {
    let (on, here) = (x.stream().context().ordinal(), stream.context().ordinal());
    if on == here {
        return Ok(());
    }
    Err(GemmError::WrongDevice { what, on, here })
}
