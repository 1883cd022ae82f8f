//! The Hopper ladder, step 9 of 12: `pingpong`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_09_pingpong [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("pingpong").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
