//! The sm_80 tensor-core ladder, step 6 of 7: `mma_swizzle`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example tensor_06_mma_swizzle [SIZE | M N K]`
//!
//! The spec and why each parameter: `src/steps.rs`; figures: BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("mma_swizzle").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
