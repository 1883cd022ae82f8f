//! The f32 SIMT ladder, step 10 of 10: `autotuned`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_10_autotuned [SIZE | M N K]`
//!
//! The spec is the winner of `gemm-lab search --stream-k 4096` on an H200,
//! its shared rows padded by 4 to fit GPUs that give a block 99 KB: the
//! guide's performance notes on the f32 SIMT pipeline say what it beat.

fn main() {
    let step = gemm_ladder::steps::step("autotuned").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
