//! Kernel specs, the tiling rules and the CUDA generator.
//!
//! One implementation of each, shared by the `#[gemm_kernel]` macro (which turns
//! [`check::Diag`]s into compile errors at the offending argument) and by tools
//! that build specs at run time.

pub mod check;
pub mod cuda;
mod generate;
pub mod spec;
pub mod support;
pub mod tune;

pub use check::{check, Diag};
pub use cuda::{block_grid, grid};
pub use generate::{diagnose, generate, Generated};
pub use spec::*;
