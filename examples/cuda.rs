//! Prints the generated CUDA of a ladder step: `cargo run --example cuda -- STEP`.

use clap::Parser;

/// Prints the CUDA C++ that #[gemm_kernel] generated for a ladder step.
#[derive(Debug, Parser)]
#[command(name = "cuda")]
struct Cli {
    /// The ladder step (either ladder, or the split-K row)
    #[arg(value_parser = step_names())]
    step: String,
}

fn step_names() -> clap::builder::PossibleValuesParser {
    let steps = gemm_ladder::STEPS.iter().chain(&gemm_ladder::TENSOR_STEPS).chain(&gemm_ladder::steps::SPLIT_K_STEPS);
    steps.map(|s| s.name).collect::<Vec<_>>().into()
}

fn main() {
    let cli = Cli::parse();
    let step = gemm_ladder::steps::step(&cli.step).expect("clap accepts step names only");
    print!("{}", step.kernel.source);
}
