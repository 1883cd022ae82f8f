//! The f32 SIMT ladder, step 5 of 10: `blocktiling_2d`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_05_blocktiling_2d [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("blocktiling_2d").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
