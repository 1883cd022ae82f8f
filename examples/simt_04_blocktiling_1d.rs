//! The f32 SIMT ladder, step 4 of 10: `blocktiling_1d`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_04_blocktiling_1d [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("blocktiling_1d").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
