//! The sm_80 tensor-core ladder, step 2 of 7: `wmma_block`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example tensor_02_wmma_block [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("wmma_block").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
