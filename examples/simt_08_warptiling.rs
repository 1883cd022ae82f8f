//! The f32 SIMT ladder, step 8 of 10: `warptiling`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_08_warptiling [SIZE | M N K]`
//!
//! Parameters: the H100's, not the seed's (128x128x16 blocks of 128 threads,
//! warps of 64x64 in 1x4 steps, 78.7% of cuBLAS here): 64x128x16 blocks of
//! 128 threads, warps of 32x64 in 1x2 steps of 8x4 thread tiles, FMAs a
//! column at a time, a grouped raster, C stored element by element. Why
//! each, with figures: the spec's comment in `src/steps.rs` and BENCHMARKS.md.

fn main() {
    let step = gemm_ladder::steps::step("warptiling").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
