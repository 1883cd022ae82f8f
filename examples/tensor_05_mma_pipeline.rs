//! The sm_80 tensor-core ladder, step 5 of 7: `mma_pipeline`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example tensor_05_mma_pipeline [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("mma_pipeline").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
