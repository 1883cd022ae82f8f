//! The f32 SIMT ladder, step 10 of 10: `autotuned`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_10_autotuned [SIZE | M N K]`
//!
//! The spec is the winner of `gemm-lab search --stream-k` on the H100;
//! the search, its space and the best candidates' figures are in
//! BENCHMARKS.md, every candidate's in `docs/search-stream-k-h100.md`.

fn main() {
    let step = gemm_ladder::steps::step("autotuned").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
