//! Ladder step `double_buffering`: checked against cuBLAS, then timed beside it.
//! `cargo run --release --example double_buffering [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("double_buffering").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
