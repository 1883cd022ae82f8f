//! Ladder step `autotuned`: the search's best spec, checked against cuBLAS,
//! then timed beside it. `cargo run --release --example autotuned [SIZE | M N K]`
//!
//! The spec is the winner of `examples/search.rs --stream-k` on the H100;
//! the search, its space and the best candidates' figures are in
//! BENCHMARKS.md, every candidate's in `docs/search-stream-k-h100.md`.

fn main() {
    let step = gemm_ladder::steps::step("autotuned").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
