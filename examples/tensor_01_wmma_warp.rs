//! The sm_80 tensor-core ladder, step 1 of 7: `wmma_warp`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example tensor_01_wmma_warp [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("wmma_warp").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
