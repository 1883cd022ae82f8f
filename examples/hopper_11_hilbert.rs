//! The Hopper ladder, step 11 of 12: `hilbert`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example hopper_11_hilbert [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("hilbert").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
