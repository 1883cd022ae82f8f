//! The Hopper ladder, step 1 of 12: `wgmma_tma`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_01_wgmma_tma [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("wgmma_tma").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
