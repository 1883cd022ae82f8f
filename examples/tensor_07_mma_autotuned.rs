//! The sm_80 tensor-core ladder, step 7 of 7: `mma_autotuned`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example tensor_07_mma_autotuned [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("mma_autotuned").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
