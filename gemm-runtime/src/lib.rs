//! The runtime for `#[gemm_kernel]` kernels: discover the GPU, compile the
//! generated CUDA with NVRTC (once per process and device), check arguments,
//! launch on a cudarc stream. Also the cuBLAS reference, event timing and test
//! data that examples, tests and benches share.

extern crate self as gemm_runtime;

mod args;
mod buffer;
mod copy;
pub mod device;
mod error;
mod fused;
mod kernel;
mod scratch;
#[cfg(test)]
mod test_specs;
mod tuned;

pub use buffer::{DeviceBuffer, DeviceBufferMut};
pub use args::{Batch, Dims, Element, Shape, MAX_OFFSET};
pub use copy::copy_lines;
pub use error::GemmError;
pub use fused::EpilogueArgs;
pub use gemm_core::spec;
pub use gemm_macros::gemm_kernel;
pub use kernel::{compile_all, Kernel};
pub use realign::Plan;
pub use tuned::{Choice, Tuned, ENV as TUNE_ENV};
pub use {cudarc, gemm_core, half};

/// What the project's own harness, lab tools and tests reach into: the
/// compile cache, the cuBLAS reference, timing, the alignment plans, TMA
/// maps. Not part of the API: it changes without notice.
#[doc(hidden)]
pub mod internal {
    pub use crate::args::shapes as args_shapes;
    pub mod compile;
    pub mod data;
    pub mod disk_cache;
    pub mod launch;
    pub mod realign;
    pub mod reference;
    pub mod timing;
    pub mod tma;
    pub mod tune_cache;
}
// (the crate's own modules name them at the root, as before)
use internal::{compile, data, disk_cache, launch, realign, tma, tune_cache};

/// Markers for kernel signatures: `a: Mat<f32, RowMajor>` is an input of f32
/// stored row-major; `c: MatMut<..>` is the output. The macro reads them; the
/// launcher takes cudarc device buffers.
pub struct Mat<T, L>(std::marker::PhantomData<(T, L)>);
/// The output matrix of a kernel signature; see [`Mat`].
pub struct MatMut<T, L>(std::marker::PhantomData<(T, L)>);
/// The bias vector of a kernel signature whose epilogue adds one
/// (`bias: Bias<f32>`); the launcher takes a cudarc device buffer.
pub struct Bias<T>(std::marker::PhantomData<T>);
/// Rows are contiguous in memory.
pub struct RowMajor;
/// Columns are contiguous in memory.
pub struct ColMajor;
/// Element type names for signatures (`Mat<bf16, RowMajor>`).
pub use half::{bf16, f16};
