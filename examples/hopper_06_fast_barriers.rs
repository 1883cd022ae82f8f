//! The Hopper ladder, step 6 of 12: `fast_barriers`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_06_fast_barriers [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("fast_barriers").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
