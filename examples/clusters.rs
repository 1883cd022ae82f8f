//! Hopper ladder step `clusters`: checked against cuBLAS, then timed beside it.
//! `cargo run --release --example clusters [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("clusters").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
