//! The Hopper ladder, step 3 of 12: `warp_specialized`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_03_warp_specialized [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("warp_specialized").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
