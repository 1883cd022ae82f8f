//! `gemm-lab`: the tools the kernels were investigated with, apart from the
//! user examples. Each subcommand is one tool with its own options
//! (`cargo run --release -p gemm-lab -- variants --help`); every kernel a
//! tool times is checked against cuBLAS first, in the same process.

mod ceiling;
mod copy_speed;
mod cuda;
mod prefetch;
mod read_orders;
mod search;
mod tma_lines;
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
}

#[derive(Debug, clap::Args)]
struct Args {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

fn main() {
    let lab = Lab::parse();
    // each tool sees `gemm-lab TOOL ARGS...`, as its own command line
    let argv = |name: &str, a: Args| std::iter::once(format!("gemm-lab {name}")).chain(a.args).collect::<Vec<String>>();
    let failed = match lab.tool {
        Tool::Variants(a) => {
            variants::main(argv("variants", a));
            None
        }
        Tool::Search(a) => {
            search::main(argv("search", a));
            None
        }
        Tool::Cuda(a) => {
            cuda::main(argv("cuda", a));
            None
        }
        Tool::Ceiling(a) => ceiling::main(argv("ceiling", a)).err(),
        Tool::CopySpeed(a) => copy_speed::main(argv("copy-speed", a)).err().map(|e| e.into()),
        Tool::Prefetch(a) => {
            prefetch::main(argv("prefetch", a));
            None
        }
        Tool::ReadOrders(a) => {
            read_orders::main(argv("read-orders", a));
            None
        }
        Tool::TmaLines(a) => tma_lines::main(argv("tma-lines", a)).err().map(|e| e.into()),
    };
    if let Some(e) = failed {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
