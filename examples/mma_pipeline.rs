//! Tensor ladder step `mma_pipeline`: checked against cuBLAS, then timed beside it.
//! `cargo run --release --example mma_pipeline [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("mma_pipeline").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
