//! Tensor ladder step `wmma_warp`: checked against cuBLAS, then timed beside it.
//! `cargo run --release --example wmma_warp [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("wmma_warp").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
