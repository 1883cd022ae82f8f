//! A kernel's parameters and its launch, plain or dependent: a dependent
//! launch (programmatic stream serialization, sm_90) may start while the
//! stream's previous kernel finishes, which the kernel waits for before it
//! touches what that kernel writes (`griddepcontrol.wait`). The launchers
//! use it; it is public for kernels of other sources (the benchmarks' read
//! kernels) launched the same way.

use std::ffi::c_void;
use std::marker::PhantomData;

use cudarc::driver::sys::{self, CUlaunchAttributeID, CUlaunchAttributeValue};
use cudarc::driver::{CudaFunction, CudaStream, DeviceRepr, DriverError, LaunchConfig};

/// How a launch follows the stream's previous kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// After that kernel is complete.
    After,
    /// Beside its end: the kernel starts while it finishes and waits for it
    /// in its own code (kernels that have none are launched [`Order::After`]).
    Dependent,
}

/// The kernel's parameters, each a pointer to its value, as the driver
/// takes them; the values are borrowed until the launch.
#[derive(Default)]
pub struct Params<'a> {
    ptrs: Vec<*mut c_void>,
    values: PhantomData<&'a ()>,
}

impl<'a> Params<'a> {
    /// The next parameter's value.
    pub fn arg<T: DeviceRepr>(&mut self, v: &'a T) -> &mut Self {
        self.ptrs.push(v as *const T as *mut c_void);
        self
    }
}

/// Launches `f` on `stream` with `params`.
///
/// # Safety
/// `params` must be the kernel's parameters, in order and of its types,
/// and every access the kernel makes with them in bounds.
pub unsafe fn launch(f: &CudaFunction, stream: &CudaStream, cfg: LaunchConfig, params: &mut Params<'_>, order: Order) -> Result<(), DriverError> {
    stream.context().bind_to_thread()?;
    let mut attrs = Vec::new();
    if order == Order::Dependent {
        let mut value: CUlaunchAttributeValue = std::mem::zeroed();
        value.programmaticStreamSerializationAllowed = 1;
        attrs.push(sys::CUlaunchAttribute { id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, pad: [0; 4], value });
    }
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as u32,
    };
    sys::cuLaunchKernelEx(&config, f.cu_function(), params.ptrs.as_mut_ptr(), std::ptr::null_mut()).result()
}
