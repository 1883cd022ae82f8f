//! Prints the generated CUDA of a ladder step, or of a variant of its spec:
//! `cargo run -p gemm-lab -- cuda STEP [VARIANT]`, e.g. `cuda autotuned edges=whole`
//! (variant settings as in the `variants` example). `--ptx` prints the PTX
//! that NVRTC makes of it for the kernel's arch instead, for a look at the
//! instructions; `--usage` ptxas's report of its machine code (registers
//! a thread, bytes spilled), through NVRTC, for sm_90 (or sm_90a where the kernel needs it).
//! `--source FILE` takes FILE's CUDA (a hand-edit of the step's) in place of
//! the generated source, for `--ptx` and `--usage`. `--layouts rrr` stores
//! A, B and C in other layouts than the step's (as `variants --layouts`).

use clap::Parser;

/// Prints the CUDA C++ that `#[gemm_kernel]` generated for a ladder step, or
/// that the generator writes for a variant of its spec.
#[derive(Debug, Parser)]
#[command(name = "gemm-lab cuda")]
struct Cli {
    /// The ladder step (either ladder, or the split-K row)
    #[arg(value_parser = step_names())]
    step: String,
    /// Settings joined by commas, applied to the step's spec (`pad=4,edges=whole`)
    variant: Option<String>,
    /// Print NVRTC's PTX for the kernel's arch instead of the CUDA
    #[arg(long, conflicts_with = "usage")]
    ptx: bool,
    /// Print ptxas's registers and spills for sm_90 instead of the CUDA
    #[arg(long)]
    usage: bool,
    /// The CUDA in FILE in place of the generated source (it must define the same kernel)
    #[arg(long, value_name = "FILE")]
    source: Option<std::path::PathBuf>,
    /// A, B and C stored in these layouts in place of the step's: three
    /// letters, r (row-major) or c (column-major), as `rrr` for a row-major B
    #[arg(long, value_parser = gemm_ladder::cli::parse_layouts)]
    layouts: Option<[gemm_runtime::spec::Layout; 3]>,
}

/// What to print of a kernel.
#[derive(Clone, Copy)]
enum Show {
    Cuda,
    Ptx,
    Usage,
}

/// The source, NVRTC's PTX of it, or ptxas's report of its machine code.
fn emit(source: &str, name: &str, arch: gemm_runtime::spec::Arch, show: Show) {
    let shown = match show {
        Show::Cuda => return print!("{source}"),
        Show::Ptx => gemm_runtime::internal::compile::compile(source, name, arch.nvrtc_name()).map(|p| p.to_src()),
        Show::Usage => {
            let target = if arch == gemm_runtime::spec::Arch::Sm90a { "sm_90a" } else { "sm_90" };
            gemm_runtime::internal::compile::usage(source, name, target).map(|u| {
                let advisories: String = u.advisories.iter().map(|a| format!("  {a}\n")).collect();
                format!(
                    "{name} on {target}: {} registers a thread, {} bytes of spill stores, {} of spill loads\n{advisories}",
                    u.registers, u.spill_stores, u.spill_loads
                )
            })
        }
    };
    match shown {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn step_names() -> clap::builder::PossibleValuesParser {
    let steps = gemm_ladder::steps::all();
    steps.map(|s| s.name).collect::<Vec<_>>().into()
}

pub fn main(args: Vec<String>) {
    let cli = Cli::parse_from(args);
    let show = if cli.ptx {
        Show::Ptx
    } else if cli.usage {
        Show::Usage
    } else {
        Show::Cuda
    };
    let step = gemm_ladder::steps::step(&cli.step).expect("clap accepts step names only");
    if cli.variant.is_none() && cli.layouts.is_none() {
        let k = step.kernel;
        return emit(&edited(cli.source.as_deref(), &k.source), &k.name, k.spec.arch, show);
    }
    let variant = cli.variant.unwrap_or_default();
    let mut spec = step.kernel.spec.clone();
    if let Some([a, b, c]) = cli.layouts {
        (spec.a.layout, spec.b.layout, spec.c.layout) = (a, b, c);
    }
    let asked = if variant.is_empty() { "the step in these layouts".to_string() } else { format!("`{variant}`") };
    let applied = if variant.is_empty() { Ok(()) } else { gemm_ladder::variants::apply_all(&mut spec, &variant) };
    let generated = applied.and_then(|()| {
        gemm_runtime::gemm_core::generate(&spec).map_err(|diags| {
            let why: Vec<String> = diags.iter().map(|d| format!("{}: {}", d.at, d.msg)).collect();
            format!("{asked} is not a kernel the generator accepts: {}", why.join("; "))
        })
    });
    match generated {
        Ok(kernel) => emit(&edited(cli.source.as_deref(), &kernel.source), &kernel.kernel_name, kernel.arch, show),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

/// FILE's CUDA where `--source` names one, else the generated `source`.
fn edited(file: Option<&std::path::Path>, source: &str) -> String {
    let Some(path) = file else { return source.to_string() };
    std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("error: {}: {e}", path.display());
        std::process::exit(1);
    })
}
