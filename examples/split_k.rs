//! Seed 003's split-K row: a skinny GEMM (small M and N, huge K) where one
//! block per C tile leaves the GPU idle, with one block per tile and then
//! split along K by stream-K, each checked against cuBLAS and timed beside it.
//! `cargo run --release --example split_k [SIZE | M N K]` (default 128 128 16384)
//!
//! The specs: `src/steps.rs` (`SPLIT_K_STEPS`); figures: BENCHMARKS.md.

fn main() {
    let steps: Vec<_> = gemm_ladder::steps::SPLIT_K_STEPS.iter().collect();
    gemm_ladder::cli::main_at(&steps, "split_k", gemm_runtime::Dims::new(128, 128, 16384));
}
