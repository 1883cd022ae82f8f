//! The Hopper ladder, step 7 of 12: `micro`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_07_micro [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("micro").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
