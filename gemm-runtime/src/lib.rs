//! GEMM kernels written as tile descriptions: `#[gemm_kernel(..)]` on a
//! signature checks the tiling when the crate builds, generates CUDA C++
//! and gives a typed launcher; at run time the kernel is compiled once by
//! NVRTC (per process and device; a disk cache keeps it across processes)
//! and launched on a [cudarc] stream. This is the crate to depend on.
//!
//! ```no_run
//! use gemm_runtime::{bf16, device, gemm_kernel, ColMajor, Dims, GemmError, Mat, MatMut, RowMajor};
//!
//! /// bf16 on sm_80 tensor cores: 128 x 128 tiles of 4 warps, a 3-stage cp.async pipeline.
//! #[gemm_kernel(
//!     block(m = 128, n = 128, k = 32, threads = 128),
//!     warp(m = 64, n = 64),
//!     atom = mma(m16n8k16),
//!     staging = cp_async(stages = 3, vector = 8),
//!     swizzle = xor,
//!     edges = guarded,
//! )]
//! pub fn gemm(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<f32, RowMajor>);
//!
//! fn main() -> Result<(), GemmError> {
//!     let (m, n, k) = (1000, 300, 500); // edges = guarded: any size
//!     let gpu = device::open(0)?; // an Err, not a panic, without a driver or a GPU
//!     let a = gpu.stream.clone_htod(&vec![bf16::from_f32(1.0); m * k])?;
//!     let b = gpu.stream.clone_htod(&vec![bf16::from_f32(0.5); k * n])?;
//!     let mut c = gpu.stream.alloc_zeros::<f32>(m * n)?;
//!     gemm(&gpu.stream, &a, &b, &mut c, Dims::new(m, n, k))?; // the first launch compiles
//!     assert!(gpu.stream.clone_dtoh(&c)?.iter().all(|&x| x == 250.0));
//!     println!("{}", gemm::CUDA); // the generated source
//!     Ok(())
//! }
//! ```
//!
//! The guide, in the repository's `docs/` (`mdbook build docs`), covers the
//! grammar ([`gemm_kernel`]'s page has it in brief), the rules and their
//! errors, launching at any alignment, tuning (`tune(..)` in the attribute
//! makes a [`Tuned`] kernel), fused epilogues and the Hopper path.

extern crate self as gemm_runtime;

mod args;
mod buffer;
mod copy;
pub mod device;
mod empty;
mod error;
mod fused;
mod kernel;
mod placement;
pub mod quantize;
mod scratch;
#[cfg(test)]
mod test_specs;
mod tuned;

pub use args::{Batch, Dims, Element, Shape, MAX_OFFSET};
pub use buffer::{DeviceBuffer, DeviceBufferMut};
pub use copy::copy_lines;
pub use error::GemmError;
pub use fused::EpilogueArgs;
pub use gemm_core::spec;
pub use gemm_macros::gemm_kernel;
pub use kernel::{compile_all, Kernel};
pub use realign::Plan;
pub use tuned::{Choice, Tuned, ENV as TUNE_ENV};
pub use {cudarc, float8, gemm_core, half};

/// What the project's own harness, lab tools and tests reach into: the
/// compile cache, the cuBLAS reference, timing, the alignment plans, TMA
/// maps. Not part of the API: it changes without notice.
#[doc(hidden)]
pub mod internal {
    pub use crate::args::shapes as args_shapes;
    pub use crate::args::spec_shapes;
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
/// Element type names for signatures (`Mat<bf16, RowMajor>`); the 8-bit
/// floats are the `float8` crate's, as candle's and cudarc's.
pub use float8::{F8E4M3, F8E5M2};
pub use half::{bf16, f16};
