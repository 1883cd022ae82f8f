//! Ladder step `warptiling`: checked against cuBLAS, then timed beside it.
//! `cargo run --release --example warptiling [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("warptiling").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
