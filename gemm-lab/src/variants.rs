//! A ladder step beside variants of its spec, each checked against cuBLAS and
//! timed in one process, two rounds, then a third with each kernel's
//! launches taking turns with cuBLAS's (so that both see the clock the GPU
//! runs at then): what one setting is worth, without editing the spec.
//!
//! `cargo run --release -p gemm-lab -- variants STEP [SIZE] VARIANT...`, SIZE
//! either N (cubed) or MxNxK; `--check` only checks each kernel against
//! cuBLAS, one launch each (for runs under compute-sanitizer); `--soak
//! SECONDS` also times each kernel and cuBLAS sustained, alone for that
//! long each, at the clock each one's power draw leaves the GPU.
//!
//! A variant is one or more settings joined by commas: `pad=8`, `pad=none`,
//! `sweep=m`, `sweep=n`, `raster=row`, `raster=grouped(8)`, `raster=hilbert`,
//! `cluster=2x1b` (2 blocks along m, B multicast; `1x2a`, `2x2`, `none`), `stages=5`, `k=128`
//! (the K tile), `tile=192x192`, `warp_tile=48x64` and `threads=384` (the
//! block's and warp's tiles and the block's threads, checked together) and
//! `fragments=1` or `fragments=2` (cp.async pipelines), `epilogue=direct` or
//! `epilogue=vector` or `epilogue=smem` (C stored element by element, in
//! vectors, or through a C tile in shared memory in 16-byte chunks),
//! `regs=40/232` (setmaxnreg's producer and consumer registers),
//! `arrivals=thread` or `arrivals=warpgroup` (who arrives on the ring's
//! barriers), `zeroed=true` or `zeroed=false` (wgmma's accumulators zeroed
//! before each tile),
//! `cp_async=4` (TMA's stages filled by the producer warpgroup's cp.async
//! of 4 elements; `4a` or `4b`: A's or B's alone, TMA loading the other's;
//! `none`: by TMA),
//! `schedule=tiles` (a block per C tile), `schedule=persistent`, `schedule=stream_k`, `schedule=hybrid` or
//! `schedule=tail_split`, `edges=whole` or
//! `edges=guarded` (partial tiles checked), and `source=FILE`: the CUDA in FILE
//! in place of the generated source (hand-edit what `cuda STEP VARIANT`
//! prints, keeping the kernel's name and parameters), with `smem=BYTES`
//! and `block_threads=N` where it needs other shared memory or threads
//! than the spec's; a hand edit that leaves work out (to time what it
//! costs) is said to be wrong and timed all the same. Any step of
//! any ladder (fp8's included, its scales as the ladder's); cuBLAS (cuBLASLt
//! for 8-bit operands) is timed in the step's types and layouts.
//! For example `variants autotuned pad=4 sweep=m 'raster=grouped(8),pad=4'`
//! (quoted for the shell).

use clap::Parser;
use gemm_ladder::measure::{config, describe, time_cublas_typed, Bench, Reps};
use gemm_runtime::spec::Layout;
use gemm_runtime::Kernel;

/// A ladder step beside variants of its spec, each verified against cuBLAS and
/// timed in one process, two rounds: what one setting is worth.
#[derive(Debug, Parser)]
#[command(name = "gemm-lab variants", after_help = SETTINGS)]
struct Cli {
    /// The ladder step (any ladder's)
    #[arg(value_parser = step_names())]
    step: String,
    /// An optional SIZE (N for N^3, or MxNxK; default 4096), then variants: settings joined by commas
    #[arg(value_name = "[SIZE] VARIANT")]
    rest: Vec<String>,
    /// Leading dimensions rounded up to a multiple of this many elements
    /// (8: the 16 bytes the vector copies need; 64: 128-byte lines)
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    ld_multiple: u32,
    /// A, B and C stored in these layouts in place of the step's (its
    /// variants and cuBLAS likewise): three letters, r (row-major) or c
    /// (column-major), as `rrr` for a row-major B
    #[arg(long, value_parser = gemm_ladder::cli::parse_layouts)]
    layouts: Option<[Layout; 3]>,
    /// Only check each kernel against cuBLAS (one launch each), no timing:
    /// for runs under compute-sanitizer, where every launch is slow
    #[arg(long)]
    check: bool,
    /// Also time each kernel sustained beside cuBLAS: each alone, launched
    /// back to back for this many seconds, in the order kernel, cuBLAS,
    /// cuBLAS, kernel (a GPU that runs these GEMMs at its power cap sets
    /// each kernel's clock by its own draw)
    #[arg(long, value_name = "SECONDS")]
    soak: Option<f64>,
}

const SETTINGS: &str = "Settings: pad=N | pad=none, sweep=m | sweep=n, raster=row | raster=grouped(N) | raster=hilbert, \
cluster=MxN[a|b] | cluster=none, stages=N, tile=MxN, warp_tile=MxN, threads=N, cp_async=V[a|b] | cp_async=none, by_class=true | by_class=false (A, B and C where they lie, \
hopper_autotuned's tiling alone), k=N (the K tile), \
fragments=1 | fragments=2, epilogue=direct | epilogue=vector | epilogue=smem | epilogue=smem_elements | epilogue=tma, schedule=tiles | schedule=persistent | schedule=stream_k | schedule=hybrid | schedule=tail_split, \
regs=P/C (setmaxnreg's producer and consumer registers), arrivals=thread | arrivals=warpgroup, zeroed=true | zeroed=false, \
edges=whole | edges=guarded, source=FILE (hand-edited CUDA in place of the generated), smem=BYTES and
block_threads=N (the dynamic shared memory and the threads a block a hand-edited kernel launches with).
Example: variants autotuned 4096 pad=4 sweep=m 'raster=grouped(8),pad=4'";

fn step_names() -> clap::builder::PossibleValuesParser {
    gemm_ladder::steps::all().map(|s| s.name).collect::<Vec<_>>().into()
}

pub fn main(args: Vec<String>) {
    let cli = Cli::parse_from(args);
    if let Err(e) = run(cli) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    let step = gemm_ladder::steps::step(&cli.step).ok_or("a ladder step")?;
    let name = cli.step.clone();
    let mut args = cli.rest.into_iter().peekable();
    let size = match args.peek().map(|a| gemm_ladder::cli::parse_mnk(a).ok()) {
        Some(Some(s)) => {
            args.next();
            s
        }
        _ => (4096, 4096, 4096),
    };
    let mut base = step.kernel.spec.clone();
    if let Some([a, b, c]) = cli.layouts {
        (base.a.layout, base.b.layout, base.c.layout) = (a, b, c);
    }
    let mut kernels = vec![Kernel::from_spec(base.clone())?];
    let mut labels = vec!["(as in the ladder)".to_string()];
    for variant in args {
        kernels.push(variant_kernel(&base, &variant)?);
        labels.push(variant);
    }
    let bench = Bench::open()?;
    let dims =
        gemm_ladder::measure::dims_with_ld_multiple(size.0, size.1, size.2, [base.a.layout, base.b.layout, base.c.layout], cli.ld_multiple as usize);
    // cuBLAS in the step's own types and layouts (or those `--layouts` gives)
    let cfg = config(&kernels[0]);
    // (cuBLASLt's fp8 GEMM where the operands are 8-bit)
    let reference = gemm_ladder::measure::reference_name(cfg.0[0], cfg.0[1]);
    let reps = Reps { warmup: 3, runs: 30 };
    let shape = if size.0 == size.1 && size.1 == size.2 { format!("{}^3", size.0) } else { format!("{}x{}x{}", size.0, size.1, size.2) };
    // every kernel checked at the timed shape itself too (odd shapes included)
    for (k, label) in kernels.iter().zip(&labels) {
        let grid = k.grid(bench.stream(), dims)?;
        match gemm_ladder::measure::verify(&bench, k, dims, 5) {
            Ok(err) => {
                // how the launcher reaches the kernel at these leading dimensions (buffers of their own, 256-byte aligned)
                let machine = gemm_runtime::internal::realign::Machine::of(&bench.gpu.ctx)?;
                let plan = gemm_runtime::internal::realign::plan(&k.spec, dims, [usize::MAX >> 8; 3], [1 << 40; 3], machine)?;
                eprintln!("{label}: relative error {err:.1e} against cuBLAS at {shape}; grid {grid:?} of {} threads; {plan:?}", k.threads)
            }
            // a hand edit may leave work out to time what it costs (a bisection): said, then timed
            Err(e @ gemm_ladder::measure::Failure::Wrong { .. }) if label.contains("source=") => eprintln!("{label}: WRONG, timed all the same: {e}"),
            Err(e) => return Err(format!("{label}: {e}").into()),
        }
    }
    if cli.check {
        return Ok(());
    }
    println!(
        "{name} at {shape} (leading dimensions a multiple of {}), median of {} runs, two rounds, then each kernel in turns with {reference}; every kernel verified against cuBLAS first\n",
        cli.ld_multiple, reps.runs
    );
    println!("| variant | round 1 TFLOP/s | round 2 TFLOP/s | % of {reference} (round 2) | in turns with {reference}: TFLOP/s, {reference}, % |");
    println!("|---|---:|---:|---:|---|");
    // every kernel was checked above at this shape (a hand edit found wrong is timed all the
    // same): all timed on one set of inputs (the variants share types and layouts)
    let inputs = gemm_ladder::measure::Problem::for_kernel(&bench, &kernels[0], dims, 11)?;
    let mut rounds = Vec::new();
    for _ in 0..2 {
        let timed: Vec<Option<f64>> = kernels
            .iter()
            .zip(&labels)
            .map(|(k, label)| match gemm_ladder::measure::time_on(&bench, k, &inputs, reps) {
                Ok(t) => Some(t.tflops(dims.flops())),
                Err(e) => {
                    eprintln!("{label}: {e}");
                    None
                }
            })
            .collect();
        let cublas = time_cublas_typed(&bench, cfg.0, cfg.1, dims, reps)?.tflops(dims.flops());
        rounds.push((timed, cublas));
    }
    let (_, cublas) = rounds[1];
    for (i, (label, k)) in labels.iter().zip(&kernels).enumerate() {
        let of = |round: usize| rounds[round].0[i];
        match (of(0), of(1)) {
            (Some(a), Some(b)) => {
                let (ours, theirs) = gemm_ladder::measure::time_in_turns(&bench, k, dims, reps)?;
                let (ours, theirs) = (ours.tflops(dims.flops()), theirs.tflops(dims.flops()));
                println!("| {label} | {a:.2} | {b:.2} | {:.1}% | {ours:.2}, {theirs:.2}, {:.1}% |", 100.0 * b / cublas, 100.0 * ours / theirs)
            }
            _ => println!("| {label} | failed (see above) | | | |"),
        }
    }
    println!("| {reference} {} | {:.2} | {:.2} | 100.0% | |", describe(cfg), rounds[0].1, cublas);
    if let Some(secs) = cli.soak {
        let mut rows = Vec::new();
        for (label, k) in labels.iter().zip(&kernels) {
            let [ours, theirs] = gemm_ladder::measure::sustained_against_cublas(&bench, k, label, dims, secs)?;
            rows.push(format!("| {label} | {ours:.2} | {theirs:.2} | {:.1}% |", 100.0 * ours / theirs));
        }
        println!("\nsustained, each alone for {secs} s (kernel, {reference}, {reference}, kernel; the means):\n");
        println!("| variant | TFLOP/s | {reference} | % of {reference} |\n|---|---:|---:|---:|");
        rows.iter().for_each(|r| println!("{r}"));
    }
    Ok(())
}

/// The kernel of `base` with a variant's settings; `source=FILE` among them
/// puts FILE's CUDA in place of the generated source (the settings still
/// give the launch: threads, shared memory, parameters).
pub(crate) fn variant_kernel(base: &gemm_runtime::spec::KernelSpec, variant: &str) -> Result<Kernel, Box<dyn std::error::Error>> {
    let mut spec = base.clone();
    let (mut source, mut smem, mut threads) = (None, None, None);
    for setting in variant.split(',') {
        if let Some(path) = setting.strip_prefix("source=") {
            source = Some(std::fs::read_to_string(path).map_err(|e| format!("`{setting}`: {e}"))?);
        } else if let Some(bytes) = setting.strip_prefix("smem=") {
            smem = Some(bytes.parse::<u32>().map_err(|e| format!("`{setting}`: {e}"))?);
        } else if let Some(count) = setting.strip_prefix("block_threads=") {
            threads = Some(count.parse::<u32>().map_err(|e| format!("`{setting}`: {e}"))?);
        } else {
            gemm_ladder::variants::apply(&mut spec, setting)?;
        }
    }
    let kernel = Kernel::from_spec(spec).map_err(|e| match e {
        gemm_runtime::GemmError::InvalidSpec(diags) => {
            let why: Vec<String> = diags.iter().map(|d| format!("{}: {}", d.at, d.msg)).collect();
            format!("`{variant}` is not a kernel the generator accepts: {}", why.join("; "))
        }
        e => e.to_string(),
    })?;
    let Some(source) = source else { return Ok(kernel) };
    Ok(gemm_ladder::variants::hand_edited(&kernel, source, smem, threads).map_err(|e| format!("`{variant}`: {e} (the name the settings give)"))?)
}
