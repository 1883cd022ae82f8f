//! The search over legal SIMT tilings: prune with the rules, compile, verify
//! against cuBLAS, time; print the best few per size.
//! `cargo run --release -p gemm-lab -- search [--focus | --stream-k | --single-buffered | --mma | --hopper] [--threads=N,..] [SIZE ...]`, SIZE N (cubed) or MxNxK
//! (default 4096, its best five re-timed in two rounds of 30 runs, then the
//! best ten again at 2048 and 8192; `--focus` searches
//! the narrower space around the H100's winners, `--stream-k` its pipelines
//! under the stream-K schedule, `--single-buffered` the tilings of the
//! warptiling step's staging; with `--stream-k` too, those under stream-K;
//! `--threads=` keeps blocks of those thread counts instead of 128 and 256;
//! `--mma` searches the bf16 mma.sync tilings of the tensor ladder instead,
//! `--hopper` the wgmma + TMA tilings of the Hopper ladder on an sm_90 GPU,
//! with `--focus` the part of them around the H100's winners).

use clap::Parser;
use gemm_ladder::measure::{time_cublas_typed, Bench, Reps};
use gemm_ladder::report::{progress, rounded, write_json, CandidateRecord, SearchRecord};
use gemm_ladder::search::{self, Space};
use gemm_runtime::spec::{Elem, Layout, Persistent};
use gemm_runtime::Dims;

/// Searches the legal tilings of a space: the rules prune, NVRTC compiles,
/// each candidate is verified against cuBLAS and timed; prints the best few
/// per size, re-times the best five at the first size in two rounds of 30
/// runs, and writes every verified candidate to target/search.{md,json}.
#[derive(Debug, Parser)]
#[command(name = "gemm-lab search")]
struct Cli {
    /// The narrower space around the H100's winners
    #[arg(long, group = "space")]
    focus: bool,
    /// The tilings of the warptiling step's single-buffered staging
    #[arg(long, group = "space")]
    single_buffered: bool,
    /// The pipelines under the stream-K schedule (with --single-buffered: those tilings under stream-K)
    #[arg(long)]
    stream_k: bool,
    /// The bf16 mma.sync tilings of the tensor ladder instead
    #[arg(long, conflicts_with_all = ["focus", "single_buffered", "stream_k", "threads"])]
    mma: bool,
    /// The bf16 wgmma + TMA tilings of the Hopper ladder instead (an sm_90 GPU)
    #[arg(long, conflicts_with_all = ["single_buffered", "stream_k", "threads", "mma"])]
    hopper: bool,
    /// Keep blocks of these thread counts instead of 128 and 256
    #[arg(long, value_delimiter = ',', value_name = "N,..")]
    threads: Vec<u32>,
    /// Sizes to search at (N for N^3, or MxNxK); the best ten are timed again at the rest
    #[arg(value_name = "SIZE", default_values = ["4096", "2048", "8192"], value_parser = parse_size)]
    sizes: Vec<Size>,
}

/// M, N, K of a problem.
#[derive(Clone, Copy, Debug)]
struct Size(usize, usize, usize);

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Size(m, n, k) if m == n && n == k => write!(f, "{m}^3"),
            Size(m, n, k) => write!(f, "{m}x{n}x{k}"),
        }
    }
}

impl Size {
    fn dims(self) -> Dims {
        Dims::new(self.0, self.1, self.2)
    }
}

/// `N` (cubed) or `MxNxK`, each side at least 1.
fn parse_size(text: &str) -> Result<Size, String> {
    gemm_ladder::cli::parse_mnk(text).map(|(m, n, k)| Size(m, n, k))
}

pub fn main(args: Vec<String>) {
    let cli = Cli::parse_from(args);
    if let Err(e) = run(cli) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    let mut space = if cli.focus {
        Space::focused()
    } else if cli.single_buffered {
        Space::single_buffered()
    } else if cli.stream_k {
        Space::stream_k()
    } else {
        Space::default()
    };
    if cli.stream_k {
        space.persistent = vec![Some(Persistent::StreamK)];
    }
    if !cli.threads.is_empty() {
        space.threads = cli.threads.clone();
    }
    let (first, rest) = match cli.sizes.split_first() {
        Some((f, r)) => (*f, r.to_vec()),
        None => (Size(4096, 4096, 4096), vec![Size(2048, 2048, 2048), Size(8192, 8192, 8192)]),
    };
    let c = if cli.mma {
        search::mma_candidates()
    } else if cli.hopper {
        search::hopper_candidates(cli.focus)
    } else {
        search::candidates(&space)
    };
    println!("{} points considered, {} legal; pruned by rule:", c.considered, c.specs.len());
    for (at, n) in &c.pruned {
        println!("  {n:>6}  {at}");
    }
    let bench = Bench::open()?;
    let reps = Reps { warmup: 2, runs: 10 };
    let dims = first.dims();
    let total = c.specs.len();
    eprintln!("compiling {total} candidates with NVRTC ...");
    let bar = progress(total);
    let logged = std::env::var_os("GEMM_TILES_SEARCH_LOG").is_some();
    let all = search::run(&bench, &c.specs, dims, reps, |i, spec| {
        if logged {
            // where a candidate stalls, the log names it (the bar shows only on a terminal)
            eprintln!("{i}/{total} {}", spec.kernel_name());
        }
        bar.set_position(i as u64);
        bar.set_message(format!("{first} {}", spec.kernel_name()));
    })?;
    bar.finish_and_clear();
    let top: Vec<_> = all.iter().take(10).map(|t| t.spec.clone()).collect();
    // Every verified candidate, for the record.
    let lines: Vec<String> = all.iter().map(|t| format!("| {:.2} | `{}` |", t.tflops, search::attribute(&t.spec))).collect();
    let md = format!("{first}, all {} verified candidates\n\n| TFLOP/s | attribute |\n|---:|---|\n{}\n", all.len(), lines.join("\n"));
    eprintln!("wrote {}", gemm_ladder::report::write_target("search.md", &md)?.display());
    let candidates = all
        .iter()
        .map(|t| CandidateRecord { tflops: rounded(t.tflops, 3), kernel: t.spec.kernel_name(), attribute: search::attribute(&t.spec) })
        .collect();
    let record = SearchRecord { device: bench.gpu.name.clone(), m: first.0, n: first.1, k: first.2, candidates };
    eprintln!("wrote {}", write_json("search.json", &record)?.display());
    report(&bench, first, &all, 5, "verified candidates")?;
    // The best few again, in rounds of more runs: the winner is the best of these.
    let confirmed = search::confirm(&bench, &top[..top.len().min(5)], dims, 2, Reps { warmup: 3, runs: 30 })?;
    report(&bench, first, &confirmed, 5, "re-timed in two rounds of 30 runs (the mean of the rounds)")?;
    for size in rest {
        let again = search::run(&bench, &top, size.dims(), Reps::default(), |_, _| {})?;
        report(&bench, size, &again, 5, "verified candidates")?;
    }
    Ok(())
}

fn report(bench: &Bench, size: Size, results: &[search::Tuned], n: usize, what: &str) -> Result<(), Box<dyn std::error::Error>> {
    let dims = size.dims();
    // cuBLAS in the candidates' types and layouts
    let (types, layouts) = results.first().map_or(([Elem::F32; 3], [Layout::RowMajor; 3]), |t| {
        ([t.spec.a.elem, t.spec.b.elem, t.spec.c.elem], [t.spec.a.layout, t.spec.b.layout, t.spec.c.layout])
    });
    let cublas = time_cublas_typed(bench, types, layouts, dims, Reps::default())?.tflops(dims.flops());
    println!("\n{size}: cuBLAS ({}) {cublas:.2} TFLOP/s; best {} of {} {what}:", types[0].rust_name(), n.min(results.len()), results.len());
    println!("| TFLOP/s | % of cuBLAS | rel. error | attribute |");
    println!("|---:|---:|---:|---|");
    for t in results.iter().take(n) {
        println!("| {:.2} | {:.1}% | {:.1e} | `{}` |", t.tflops, 100.0 * t.tflops / cublas, t.rel_err, search::attribute(&t.spec));
    }
    Ok(())
}
