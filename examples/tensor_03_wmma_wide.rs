//! The sm_80 tensor-core ladder, step 3 of 7: `wmma_wide`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example tensor_03_wmma_wide [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("wmma_wide").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
