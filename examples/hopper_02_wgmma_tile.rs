//! The Hopper ladder, step 2 of 12: `wgmma_tile`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_02_wgmma_tile [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("wgmma_tile").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
