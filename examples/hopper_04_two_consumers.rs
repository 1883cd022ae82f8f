//! The Hopper ladder, step 4 of 12: `two_consumers`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_04_two_consumers [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("two_consumers").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
