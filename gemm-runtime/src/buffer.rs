//! The device buffers a launcher takes, with an error that reads from the
//! caller's side when one holds the wrong element type: "a buffer of `bf16`
//! is expected here, found `CudaSlice<f32>`", where cudarc's own trait
//! would say "expected `f32`, found `bf16`".

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, UnifiedSlice, UnifiedView, UnifiedViewMut};

/// A device buffer of `T` elements that a kernel reads: cudarc's slices,
/// views and unified memory.
#[diagnostic::on_unimplemented(
    message = "a device buffer of `{T}` is expected here, found `{Self}`",
    label = "the kernel's signature gives this argument `{T}` elements",
    note = "pass a CudaSlice<{T}> (or a CudaView of one), or change the element type in the kernel's signature"
)]
pub trait DeviceBuffer<T>: DevicePtr<T> {}

/// A device buffer of `T` elements that a kernel writes.
#[diagnostic::on_unimplemented(
    message = "a writable device buffer of `{T}` is expected here, found `{Self}`",
    label = "the kernel's signature gives C `{T}` elements",
    note = "pass a CudaSlice<{T}> (or a CudaViewMut of one), or change C's element type in the kernel's signature"
)]
pub trait DeviceBufferMut<T>: DevicePtrMut<T> {}

impl<T> DeviceBuffer<T> for CudaSlice<T> {}
impl<T> DeviceBuffer<T> for CudaView<'_, T> {}
impl<T> DeviceBuffer<T> for CudaViewMut<'_, T> {}
impl<T> DeviceBuffer<T> for UnifiedSlice<T> {}
impl<T> DeviceBuffer<T> for UnifiedView<'_, T> {}
impl<T> DeviceBuffer<T> for UnifiedViewMut<'_, T> {}
impl<T> DeviceBufferMut<T> for CudaSlice<T> {}
impl<T> DeviceBufferMut<T> for CudaViewMut<'_, T> {}
impl<T> DeviceBufferMut<T> for UnifiedSlice<T> {}
impl<T> DeviceBufferMut<T> for UnifiedViewMut<'_, T> {}
