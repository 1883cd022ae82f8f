//! The f32 SIMT ladder, step 1 of 10: `naive`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_01_naive [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("naive").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
