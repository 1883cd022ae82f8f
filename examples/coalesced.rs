//! Ladder step `coalesced`: checked against cuBLAS, then timed beside it.
//! `cargo run --release --example coalesced [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("coalesced").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
