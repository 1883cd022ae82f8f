//! The f32 SIMT ladder, step 6 of 10: `vectorized`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_06_vectorized [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("vectorized").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
