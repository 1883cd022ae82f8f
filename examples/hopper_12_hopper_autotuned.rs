//! The Hopper ladder, step 12 of 12: `hopper_autotuned`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_12_hopper_autotuned [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("hopper_autotuned").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
