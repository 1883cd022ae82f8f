//! Ladder step `autotuned`: the search's best spec, checked against cuBLAS,
//! then timed beside it. `cargo run --release --example autotuned [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("autotuned").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
