//! The f32 SIMT ladder, step 9 of 10: `double_buffering`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_09_double_buffering [SIZE | M N K]`
//!
//! Parameters: the H100's, not the seed's: 128x128 blocks with K steps of 8
//! (the seed's 16 ran slower with two buffers than with one here). Why, with
//! figures: the spec's comment in `src/steps.rs` and BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("double_buffering").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
