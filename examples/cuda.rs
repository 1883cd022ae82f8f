//! Prints the generated CUDA of a ladder step: `cargo run --example cuda -- STEP`.

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    match gemm_ladder::steps::step(&name) {
        Some(step) => print!("{}", step.kernel.source),
        None => {
            let names: Vec<_> = gemm_ladder::STEPS.iter().chain(&gemm_ladder::TENSOR_STEPS).map(|s| s.name).collect();
            eprintln!("usage: cuda STEP, where STEP is one of {}", names.join(", "));
            std::process::exit(2);
        }
    }
}
