//! The fp8 ladder, step 2 of 5: `fp8_tma_store`, checked against cuBLAS (on its operands widened to f32), then timed beside cuBLASLt's fp8 GEMM.
//! `cargo run --release --example fp8_02_fp8_tma_store [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/fp8.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("fp8_tma_store").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
