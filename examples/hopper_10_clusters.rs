//! The Hopper ladder, step 10 of 12: `clusters`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_10_clusters [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("clusters").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
