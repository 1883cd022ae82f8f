//! Every ladder step in one process, each checked against cuBLAS and timed
//! beside it. `cargo run --release --example ladder [SIZE | M N K]`

fn main() {
    let steps: Vec<_> = gemm_ladder::STEPS.iter().collect();
    gemm_ladder::cli::main_for(&steps, "ladder");
}
