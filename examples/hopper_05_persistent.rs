//! The Hopper ladder, step 5 of 12: `persistent`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_05_persistent [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("persistent").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
