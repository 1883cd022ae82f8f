//! Ladder steps over the twelve shapes the Hopper path is judged on (square,
//! LLM projections, deep K), each verified against cuBLAS and timed beside
//! it in its types and layouts, with the geometric mean of the ratios; then
//! odd sizes beside their aligned neighbours (partial tiles at the edges,
//! and with odd leading dimensions the aligned copies of any alignment).
//! `cargo run --release --example shapes [--odd] [STEP ...]` (default: tma_store;
//! `--odd`: the odd sizes alone; STEP `hopper_tuned`, `mma_tuned` or
//! `simt_tuned`: a tuned kernel, each shape tuned on its first launch).
//! Kernels of mma.sync (the sm_80 path) are also given as a share of the
//! mma.sync ceiling measured in the same run.

use gemm_ladder::measure::{config, describe, measure, padded_dims, time_cublas_typed, Bench, DevMat, Reps};
use gemm_runtime::{Dims, Kernel};

/// M, N, K.
type Mnk = (usize, usize, usize);

/// (M, N, K); 8192x28672x8192 fits a GPU of 80 GB with room to spare.
const SHAPES: [(usize, usize, usize); 12] = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (2048, 2048, 2048),
    (4096, 11008, 4096),
    (4096, 4096, 11008),
    (8192, 28672, 8192),
    (16384, 4096, 4096),
    (4096, 16384, 4096),
    (2048, 2048, 16384),
    (6144, 6144, 6144),
    (4096, 14336, 4096),
    (3072, 3072, 12288),
];

/// (odd, aligned neighbour, packed): odd m; odd n with B column-major, as
/// the Hopper ladder stores it; with leading dimensions padded to a multiple
/// of 8 (`packed` false), these measure the guarded edges alone; packed,
/// an odd side that is a line's length makes an odd leading dimension, and
/// they measure what any alignment costs: GPT-2's vocabulary, every side odd.
const ODD: [(Mnk, Mnk, bool); 7] = [
    ((4095, 11008, 4096), (4096, 11008, 4096), false),
    ((4096, 11007, 4096), (4096, 11008, 4096), false),
    ((8191, 8192, 8192), (8192, 8192, 8192), false),
    ((4096, 11007, 4096), (4096, 11008, 4096), true),
    ((8192, 50257, 768), (8192, 50264, 768), true),
    ((4095, 4097, 4100), (4096, 4096, 4096), true),
    ((4095, 4097, 4100), (4096, 4096, 4096), false),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--odd`: the odd sizes alone
    let odd_only = args.iter().any(|a| a == "--odd");
    let mut names: Vec<String> = args.into_iter().filter(|a| a != "--odd").collect();
    if names.is_empty() {
        names.push("tma_store".into());
    }
    if let Err(e) = run(&names, odd_only) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(names: &[String], odd_only: bool) -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    let reps = Reps::default();
    for name in names {
        if let Some(tuned) = tuned_kernel(name) {
            tuned_shapes(&bench, reps, name, tuned, odd_only)?;
            continue;
        }
        let step = gemm_ladder::steps::step(name).ok_or_else(|| format!("no ladder step or tuned kernel named {name}"))?;
        let cfg = config(step.kernel);
        println!("{name} on {} against cuBLAS {}, median of {} runs\n", bench.gpu.name, describe(cfg), reps.runs);
        if !odd_only {
            twelve_shapes(&bench, reps, (name, false), step.kernel, |_| Ok(step.kernel))?;
        }
        odd_sizes(&bench, reps, cfg, |_| Ok(step.kernel))?;
        println!();
    }
    Ok(())
}

/// The tuned kernels `shapes` takes by name (`src/tuned.rs`), those whose
/// operands a plain problem holds.
fn tuned_kernel(name: &str) -> Option<&'static gemm_runtime::Tuned> {
    ["hopper_tuned", "mma_tuned", "simt_tuned"].contains(&name).then(|| gemm_ladder::tuned::named(name)).flatten()
}

/// `name` over the twelve shapes beside cuBLAS, each shape run by the
/// kernel `kernel_at` gives for it (`first`'s types and layouts), with the
/// geometric mean of the ratios; an mma.sync kernel also against the
/// mma.sync ceiling, measured first. A tuned kernel's rows (`tuned`) name
/// its choice.
fn twelve_shapes<'k>(
    bench: &Bench,
    reps: Reps,
    (name, tuned): (&str, bool),
    first: &Kernel,
    kernel_at: impl Fn(Dims) -> Result<&'k Kernel, Box<dyn std::error::Error>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let cfg = config(first);
    let s = &first.spec;
    let ceiling = match s.atom {
        gemm_runtime::spec::Atom::Mma { .. } => Some(gemm_ladder::peak::mma_sync_ceiling(bench)?),
        _ => None,
    };
    if let Some(c) = ceiling {
        println!("mma.sync ceiling (back-to-back m16n8k16 bf16): {c:.1} TFLOP/s\n");
    }
    let (ceiling_col, chosen_col) = (if ceiling.is_some() { " % of the ceiling |" } else { "" }, if tuned { " chosen point |" } else { "" });
    println!("| M x N x K | cuBLAS TFLOP/s | {name} TFLOP/s | % of cuBLAS |{ceiling_col}{chosen_col}");
    println!("|---|---:|---:|---:|{}{}", if ceiling.is_some() { "---:|" } else { "" }, if tuned { "---|" } else { "" });
    let (mut log_cublas, mut log_ceiling) = (0.0, 0.0);
    for (m, n, k) in SHAPES {
        let dims = padded_dims(m, n, k, [s.a.layout, s.b.layout, s.c.layout]);
        let kernel = kernel_at(dims)?;
        let ours = measure(bench, kernel, dims, reps)?.tflops;
        let cublas = time_cublas_typed(bench, cfg.0, cfg.1, dims, reps)?.tflops(dims.flops());
        log_cublas += (ours / cublas).ln();
        let of_ceiling = ceiling.map_or(String::new(), |c| {
            log_ceiling += (ours / c).ln();
            format!(" {:.1}% |", 100.0 * ours / c)
        });
        let chosen = if tuned { format!(" `{}` |", kernel.name) } else { String::new() };
        println!("| {m} x {n} x {k} | {cublas:.2} | {ours:.2} | {:.1}% |{of_ceiling}{chosen}", 100.0 * ours / cublas);
    }
    let mean = |log: f64| 100.0 * (log / SHAPES.len() as f64).exp();
    let of_ceiling = if ceiling.is_some() { format!(" {:.1}% |", mean(log_ceiling)) } else { String::new() };
    println!("| geometric mean | | | {:.1}% |{of_ceiling}{}\n", mean(log_cublas), if tuned { " |" } else { "" });
    Ok(())
}

/// A tuned kernel (`src/tuned.rs`) over the twelve shapes and the odd
/// sizes: the first launch at each shape tunes it (its key, or reads the
/// choice from disk), then the chosen point is verified and timed beside
/// cuBLAS.
fn tuned_shapes(bench: &Bench, reps: Reps, name: &str, tuned: &gemm_runtime::Tuned, odd_only: bool) -> Result<(), Box<dyn std::error::Error>> {
    let first = tuned.kernel(0);
    let cfg = config(first);
    println!("{name} on {} against cuBLAS {}, median of {} runs\n", bench.gpu.name, describe(cfg), reps.runs);
    // the point chosen for `dims`, tuned on the first launch at its key
    let chosen = |dims: Dims| -> Result<&Kernel, Box<dyn std::error::Error>> {
        let p = gemm_ladder::measure::Problem::for_kernel(bench, first, dims, 2)?;
        let mut c = p.poisoned_c(bench)?;
        gemm_ladder::measure::first_launch(bench.stream(), || p.launch_tuned(bench, tuned, &mut c))?;
        Ok(tuned.chosen_for(bench.stream(), dims)?.ok_or("a choice after the first launch")?)
    };
    if !odd_only {
        twelve_shapes(bench, reps, (name, true), first, chosen)?;
    }
    odd_sizes(bench, reps, cfg, chosen)
}

/// The odd sizes beside their aligned neighbours, each run by the kernel
/// `kernel_at` gives for it (a step's own, or a tuned kernel's choice for
/// that size), with the launch's plan (see `gemm_runtime::Plan`) and
/// cuBLAS at the same odd size (types and layouts `cfg`).
fn odd_sizes<'k>(
    bench: &Bench,
    reps: Reps,
    cfg: gemm_ladder::measure::Config,
    kernel_at: impl Fn(Dims) -> Result<&'k Kernel, Box<dyn std::error::Error>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let layouts = cfg.1;
    println!("| odd M x N x K | leading dimensions | TFLOP/s | aligned neighbour | TFLOP/s | odd / aligned | cuBLAS at the odd size | how the launch runs | kernel |");
    println!("|---|---|---:|---:|---:|---:|---:|---|---|");
    for ((m, n, k), (am, an, ak), packed) in ODD {
        let odd = if packed { Dims::new(m, n, k) } else { padded_dims(m, n, k, layouts) };
        let aligned = padded_dims(am, an, ak, layouts);
        let (at_odd, at_aligned) = (kernel_at(odd)?, kernel_at(aligned)?);
        let p = gemm_ladder::measure::Problem::for_kernel(bench, at_odd, odd, 1)?;
        let mut c = p.poisoned_c(bench)?;
        let plan = match (&p.a, &p.b, &mut c) {
            (DevMat::Bf16(a), DevMat::Bf16(b), DevMat::Bf16(c)) => format!("{:?}", at_odd.plan(bench.stream(), a, b, c, odd)?),
            (DevMat::F16(a), DevMat::F16(b), DevMat::F16(c)) => format!("{:?}", at_odd.plan(bench.stream(), a, b, c, odd)?),
            (DevMat::F32(a), DevMat::F32(b), DevMat::F32(c)) => format!("{:?}", at_odd.plan(bench.stream(), a, b, c, odd)?),
            _ => "(mixed element types)".to_string(),
        };
        let (t_odd, t_aligned) = (measure(bench, at_odd, odd, reps)?.tflops, measure(bench, at_aligned, aligned, reps)?.tflops);
        let cublas = time_cublas_typed(bench, cfg.0, cfg.1, odd, reps)?.tflops(odd.flops());
        let lds = if packed { "packed" } else { "padded to 8" };
        println!(
            "| {m} x {n} x {k} | {lds} | {t_odd:.2} | {am} x {an} x {ak} | {t_aligned:.2} | {:.1}% | {cublas:.2} | {plan} | `{}` |",
            100.0 * t_odd / t_aligned,
            at_odd.name
        );
    }
    println!();
    Ok(())
}
