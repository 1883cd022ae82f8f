//! The sm_80 tensor-core ladder, step 4 of 7: `mma_ldmatrix`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example tensor_04_mma_ldmatrix [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("mma_ldmatrix").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
