//! The ladder: every optimization step of the source documents as one
//! `#[gemm_kernel]` spec, and the harness that checks each against cuBLAS and
//! times it. Examples, tests and benches all take their kernels from here.

pub mod cli;
pub mod combos;
pub mod decode;
pub mod fp8;
pub mod fused;
pub mod grouped;
pub mod lt_fp8;
pub mod measure;
pub mod mutations;
pub mod nvml;
pub mod peak;
pub mod report;
pub mod search;
pub mod steps;
pub mod tuned;
pub mod variants;

pub use steps::{Step, FP8_STEPS, HOPPER_STEPS, STEPS, TENSOR_STEPS};
