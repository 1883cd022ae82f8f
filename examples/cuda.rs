//! Prints the generated CUDA of a ladder step, or of a variant of its spec:
//! `cargo run --example cuda -- STEP [VARIANT]`, e.g. `cuda autotuned edges=whole`
//! (variant settings as in the `variants` example). `--ptx` prints the PTX
//! that NVRTC makes of it for the kernel's arch instead, for `ptxas -v`'s
//! resource report (registers, spills) or a look at the instructions.

use clap::Parser;

/// Prints the CUDA C++ that #[gemm_kernel] generated for a ladder step, or
/// that the generator writes for a variant of its spec.
#[derive(Debug, Parser)]
#[command(name = "cuda")]
struct Cli {
    /// The ladder step (either ladder, or the split-K row)
    #[arg(value_parser = step_names())]
    step: String,
    /// Settings joined by commas, applied to the step's spec (`pad=4,edges=whole`)
    variant: Option<String>,
    /// Print NVRTC's PTX for the kernel's arch instead of the CUDA
    #[arg(long)]
    ptx: bool,
}

/// The source, or with `--ptx` NVRTC's PTX of it.
fn emit(source: &str, name: &str, arch: gemm_runtime::spec::Arch, ptx: bool) {
    if !ptx {
        return print!("{source}");
    }
    match gemm_runtime::compile::compile(source, name, arch.nvrtc_name()) {
        Ok(p) => print!("{}", p.to_src()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn step_names() -> clap::builder::PossibleValuesParser {
    let steps =
        gemm_ladder::STEPS.iter().chain(&gemm_ladder::TENSOR_STEPS).chain(&gemm_ladder::HOPPER_STEPS).chain(&gemm_ladder::steps::SPLIT_K_STEPS);
    steps.map(|s| s.name).collect::<Vec<_>>().into()
}

fn main() {
    let cli = Cli::parse();
    let step = gemm_ladder::steps::step(&cli.step).expect("clap accepts step names only");
    let Some(variant) = cli.variant else {
        let k = step.kernel;
        return emit(&k.source, &k.name, k.spec.arch, cli.ptx);
    };
    let mut spec = step.kernel.spec.clone();
    let generated = gemm_ladder::variants::apply_all(&mut spec, &variant).and_then(|()| {
        gemm_runtime::gemm_core::generate(&spec).map_err(|diags| {
            let why: Vec<String> = diags.iter().map(|d| format!("{}: {}", d.at, d.msg)).collect();
            format!("`{variant}` is not a kernel the generator accepts: {}", why.join("; "))
        })
    });
    match generated {
        Ok(kernel) => emit(&kernel.source, &kernel.kernel_name, kernel.arch, cli.ptx),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
