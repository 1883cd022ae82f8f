//! The Hopper ladder, step 8 of 12: `tma_store`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_08_tma_store [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("tma_store").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
