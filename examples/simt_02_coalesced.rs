//! The f32 SIMT ladder, step 2 of 10: `coalesced`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_02_coalesced [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("coalesced").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
