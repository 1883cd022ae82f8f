//! `gemm-lab`: the tools the kernels were investigated with, apart from the
//! user examples. Each subcommand is one tool with its own options
//! (`cargo run --release -p gemm-lab -- variants --help`); every kernel a
//! tool times is checked against cuBLAS first, in the same process.

mod beside;
mod ceiling;
mod copy_speed;
mod cuda;
mod deepgemm;
mod prefetch;
mod read_orders;
mod search;
mod tma_lines;
mod tp_clocks;
mod tp_rank;
mod tuner;
mod variants;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "gemm-lab", about = "Investigation tools for gemm-tiles kernels (each subcommand takes --help)")]
struct Lab {
    #[command(subcommand)]
    tool: Tool,
}

/// Each tool parses its own arguments: they pass through untouched.
#[derive(Debug, Subcommand)]
enum Tool {
    /// A ladder step beside variants of its spec (`pad=8`, `schedule=hybrid`, ...), checked and timed in one process
    #[command(disable_help_flag = true)]
    Variants(Args),
    /// Search the legal tilings of a path: prune with the rules, compile, verify, time
    #[command(disable_help_flag = true)]
    Search(Args),
    /// Print the generated CUDA of a ladder step or of a variant of its spec
    #[command(disable_help_flag = true)]
    Cuda(Args),
    /// A GEMM beside CTAs that hold SMs for a while: the persistent walk's fixed shares against its queue
    #[command(disable_help_flag = true)]
    Beside(Args),
    /// The mma.sync m16n8k16 ceiling at several occupancies
    #[command(disable_help_flag = true)]
    Ceiling(Args),
    /// The launcher's copy of misaligned operands against the driver's copy
    #[command(disable_help_flag = true)]
    CopySpeed(Args),
    /// tma(prefetch = ..) alone on the Hopper decode kernels, launched dependent
    #[command(disable_help_flag = true)]
    Prefetch(Args),
    /// The order a decode step reads its weight in, measured alone
    #[command(disable_help_flag = true)]
    ReadOrders(Args),
    /// What TMA makes of lines that are not 128 bytes apart, and maps by line class
    #[command(disable_help_flag = true)]
    TmaLines(Args),
    /// One rank's GEMMs of gemm-tp's MLP block on each walk beside cuBLAS, and cut into chunks
    #[command(disable_help_flag = true)]
    TpRank(Args),
    /// DeepGEMM's fp8 GEMM with block scales (as its JIT built it) beside ours and cuBLASLt's, in one process
    #[command(disable_help_flag = true)]
    Deepgemm(Args),
    /// A tuned kernel's first-launch pick beside its points' ranking under sustained load, and the clock's ramp from idle
    #[command(disable_help_flag = true)]
    Tuner(Args),
    /// gemm-tp's MLP block on two or more GPUs, each form with its GPUs' SM clocks: the all-reduce hidden in cycles
    #[command(disable_help_flag = true)]
    TpClocks(Args),
}

#[derive(Debug, clap::Args)]
struct Args {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// A tool's entry: its command line in, an error out (tools that report
/// their own errors and exit return `Ok`).
type Run = Box<dyn FnOnce(Vec<String>) -> Result<(), Box<dyn std::error::Error>>>;

fn main() {
    let lab = Lab::parse();
    let reports_itself = |f: fn(Vec<String>)| -> Run {
        Box::new(move |argv| {
            f(argv);
            Ok(())
        })
    };
    let (name, args, run): (&str, Args, Run) = match lab.tool {
        Tool::Variants(a) => ("variants", a, reports_itself(variants::main)),
        Tool::Search(a) => ("search", a, reports_itself(search::main)),
        Tool::Cuda(a) => ("cuda", a, reports_itself(cuda::main)),
        Tool::Beside(a) => ("beside", a, reports_itself(beside::main)),
        Tool::Ceiling(a) => ("ceiling", a, Box::new(ceiling::main)),
        Tool::CopySpeed(a) => ("copy-speed", a, Box::new(|argv| copy_speed::main(argv).map_err(Into::into))),
        Tool::Prefetch(a) => ("prefetch", a, reports_itself(prefetch::main)),
        Tool::ReadOrders(a) => ("read-orders", a, reports_itself(read_orders::main)),
        Tool::TmaLines(a) => ("tma-lines", a, Box::new(|argv| tma_lines::main(argv).map_err(Into::into))),
        Tool::TpRank(a) => ("tp-rank", a, reports_itself(tp_rank::main)),
        Tool::Deepgemm(a) => ("deepgemm", a, Box::new(deepgemm::main)),
        Tool::Tuner(a) => ("tuner", a, Box::new(tuner::main)),
        Tool::TpClocks(a) => ("tp-clocks", a, reports_itself(tp_clocks::main)),
    };
    // each tool sees `gemm-lab TOOL ARGS...`, as its own command line
    let argv = std::iter::once(format!("gemm-lab {name}")).chain(args.args).collect();
    if let Err(e) = run(argv) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
