//! The f32 SIMT ladder, step 7 of 10: `bank_conflicts`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_07_bank_conflicts [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("bank_conflicts").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
