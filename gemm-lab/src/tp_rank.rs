//! One rank's share of gemm-tp's tensor-parallel MLP block, on one GPU:
//! what its GEMMs cost on each walk of their tiles, beside cuBLAS, and
//! what cutting the tokens into chunks costs them, with no collective.
//! `cargo run --release -p gemm-lab -- tp-rank [--tokens 8192,1024]
//! [--world 2,4] [--hidden 8192] [--ffn 28672]`.
//!
//! For each token count m and group size p, a rank computes the
//! up-projection `gelu(x W1^T + b1)` on its `ffn / p` columns (m x ffn/p x
//! hidden) and its partial down-projection (m x hidden x ffn/p). Printed:
//! 1. each GEMM on gemm-tp's three kernels (fixed shares of whole tiles,
//!    each consumer's halves overlapped; the same with the last wave split
//!    along K; the queue, what chunks after the first run on), and on
//!    variants of its spec (the halves not overlapped: whole tiles, the
//!    hybrid),
//!    beside cuBLAS's plain GEMM of the same operands (no bias or GELU:
//!    the bound a separate epilogue pass would add to);
//! 2. the rank's GEMMs of the whole block cut into 1, 2 and 4 chunks of
//!    tokens as `TpMlp::forward` runs them (the first chunk on fixed
//!    shares or their tail split, the others on the queue), cut equally
//!    and as
//!    `ChunkPlan::fitted` cuts them, with nothing beside them: what the
//!    chunks cost before any all-reduce hides behind them.
//!
//! Every form of a table runs in rotation (CUDA events, medians), so that
//! all run at the clocks the GPU's power cap leaves them. Each variant's
//! output is checked against gemm-tp's kernel's first (gemm-tp's tests
//! check that one against the single-GPU layer).

use clap::Parser;
use gemm_ladder::measure::{random_normal, time_rotation, Bench, Reps};
use gemm_ladder::variants::apply_all;
use std::sync::Arc;
use std::time::Instant;

use gemm_runtime::cudarc::driver::sys::CUevent_flags;
use gemm_runtime::cudarc::driver::{CudaSlice, CudaStream};
use gemm_runtime::internal::data::{relative_error, tolerance};
use gemm_runtime::spec::{Elem, Layout};
use gemm_runtime::{bf16, Dims, EpilogueArgs, GemmError, Kernel};
use gemm_tp::kernels::{
    linear_bias, linear_bias_gelu, linear_bias_gelu_queued, linear_bias_gelu_tail_split, linear_bias_queued, linear_bias_tail_split, rank_linear,
    Grid, TILE_M, TILE_N,
};
use gemm_tp::{ChunkGemm, ChunkPlan};

#[derive(Debug, Parser)]
#[command(name = "gemm-lab tp-rank")]
struct Cli {
    /// Token counts (rows of x)
    #[arg(long, value_delimiter = ',', default_values_t = [8192usize, 1024])]
    tokens: Vec<usize>,
    /// Group sizes: each rank holds ffn / p of the block's columns
    #[arg(long, value_delimiter = ',', default_values_t = [2usize, 4])]
    world: Vec<usize>,
    /// The model's width
    #[arg(long, default_value_t = 8192)]
    hidden: usize,
    /// The activations' width
    #[arg(long, default_value_t = 28672)]
    ffn: usize,
    /// Timed rounds (each form once a round)
    #[arg(long, default_value_t = 15, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    rounds: usize,
}

/// Variants of gemm-tp's kernel spec timed beside it (`gemm-lab variants`' settings).
const VARIANTS: [&str; 2] = ["overlap=false", "overlap=false,schedule=hybrid"];

/// Table 1's forms: cuBLAS, gemm-tp's three kernels, the variants.
const FORMS: usize = 4 + VARIANTS.len();

pub fn main(args: Vec<String>) {
    if let Err(e) = run(Cli::parse_from(args)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn bf16_normal(s: &Arc<CudaStream>, len: usize, seed: u64, scale: f32) -> Result<CudaSlice<bf16>, GemmError> {
    let v: Vec<bf16> = random_normal(len, seed).into_iter().map(|x| bf16::from_f32(x * scale)).collect();
    Ok(s.clone_htod(&v)?)
}

fn to_f32(s: &Arc<CudaStream>, c: &CudaSlice<bf16>) -> Result<Vec<f32>, GemmError> {
    Ok(s.clone_dtoh(c)?.into_iter().map(|x| x.to_f32()).collect())
}

/// One of the rank's two GEMMs: its operands, bias and output.
struct Gemm<'a> {
    name: &'static str,
    dims: Dims,
    x: CudaSlice<bf16>,
    w: CudaSlice<bf16>,
    b: CudaSlice<bf16>,
    /// gemm-tp's: fixed shares, their last wave split along K, the queue.
    shipped: [&'static Kernel; 3],
    variants: &'a [Kernel],
}

/// `VARIANTS` of `kernel`'s spec.
fn variants(kernel: &Kernel) -> Result<Vec<Kernel>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for v in VARIANTS {
        let mut spec = kernel.spec.clone();
        apply_all(&mut spec, v).map_err(|e| format!("`{v}` on gemm-tp's kernel: {e}"))?;
        out.push(Kernel::from_spec(spec)?);
    }
    Ok(out)
}

fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    let up_variants = variants(&linear_bias_gelu::KERNEL)?;
    let down_variants = variants(&linear_bias::KERNEL)?;
    let bench = Bench::open()?;
    if bench.gpu.capability != (9, 0) {
        return Err("gemm-tp's kernels are sm_90a kernels: they need compute capability 9.0".into());
    }
    let s = bench.stream().clone();
    let (h, ffn) = (cli.hidden, cli.ffn);
    println!(
        "One rank's GEMMs of the tensor-parallel MLP block (hidden {h}, ffn {ffn}), bf16, {} SMs; ms, medians of {} rounds in rotation\n",
        bench.facts.sms, cli.rounds
    );
    for &p in &cli.world {
        if ffn % p != 0 {
            return Err(format!("ffn {ffn} does not split over {p} ranks").into());
        }
        let f = ffn / p;
        for &m in &cli.tokens {
            let gemms = [
                Gemm {
                    name: "up, bias + GELU",
                    dims: Dims::new(m, f, h),
                    x: bf16_normal(&s, m * h, 1, 1.0)?,
                    w: bf16_normal(&s, f * h, 2, 1.0 / (h as f32).sqrt())?,
                    b: bf16_normal(&s, f, 3, 0.1)?,
                    shipped: [&linear_bias_gelu::KERNEL, &linear_bias_gelu_tail_split::KERNEL, &linear_bias_gelu_queued::KERNEL],
                    variants: &up_variants,
                },
                Gemm {
                    name: "down, bias",
                    dims: Dims::new(m, h, f),
                    x: bf16_normal(&s, m * f, 4, 1.0)?,
                    w: bf16_normal(&s, h * f, 5, 1.0 / (f as f32).sqrt())?,
                    b: bf16_normal(&s, h, 6, 0.1)?,
                    shipped: [&linear_bias::KERNEL, &linear_bias_tail_split::KERNEL, &linear_bias_queued::KERNEL],
                    variants: &down_variants,
                },
            ];
            println!("p = {p}, {m} tokens\n");
            println!("| GEMM | m x n x k | cuBLAS, no epilogue | gemm-tp's | its tail split | its queue | {} |", VARIANTS.join(" | "));
            println!("|---|---|---:|---:|---:|---:|{}", "---:|".repeat(VARIANTS.len()));
            for g in &gemms {
                each_walk(&bench, g, cli.rounds)?;
            }
            chunks(&s, &gemms, m, bench.facts.sms as usize, cli.rounds)?;
        }
    }
    Ok(())
}

/// Table 1's row: `g` on cuBLAS, gemm-tp's two kernels and the variants.
fn each_walk(bench: &Bench, g: &Gemm<'_>, rounds: usize) -> Result<(), Box<dyn std::error::Error>> {
    let s = bench.stream();
    let all: Vec<&Kernel> = g.shipped.iter().copied().chain(g.variants).collect();
    let d = g.dims;
    let mut c = s.alloc_zeros::<bf16>(d.m * d.n).map_err(GemmError::from)?;
    let ep = || EpilogueArgs::new().bias(&g.b);
    // gemm-tp's kernel's C, the reference of the others
    all[0].launch_with(s, &g.x, &g.w, &mut c, d, ep())?;
    let reference = to_f32(s, &c)?;
    for (k, v) in all[1..].iter().zip(["its tail split", "its queue"].into_iter().chain(VARIANTS)) {
        s.memset_zeros(&mut c).map_err(GemmError::from)?;
        k.launch_with(s, &g.x, &g.w, &mut c, d, ep())?;
        let err = relative_error(&to_f32(s, &c)?, &reference)?;
        if err > tolerance(Elem::Bf16) {
            return Err(format!("{} at {}x{}x{}: `{v}` differs from gemm-tp's kernel by {err:.1e}", g.name, d.m, d.n, d.k).into());
        }
    }
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    let t = time_rotation::<FORMS>(s, Reps { warmup: 2, runs: rounds }, |i| match i.checked_sub(1) {
        None => bench.blas.gemm(layouts, &g.x, &g.w, &mut c, d),
        Some(k) => all[k].launch_with(s, &g.x, &g.w, &mut c, d, ep()),
    })?;
    let cols: Vec<String> = t.iter().map(|t| format!("{:.3}", t.median_ms())).collect();
    println!("| {} | {}x{}x{} | {} |", g.name, d.m, d.n, d.k, cols.join(" | "));
    Ok(())
}

/// Table 2: the rank's two GEMMs over m tokens in 1, 2 and 4 chunks, as
/// `TpMlp::forward` launches them (the first chunk on fixed shares or their tail split, the
/// rest on the queue), cut equally and as `ChunkPlan::fitted` cuts them,
/// nothing beside them. Each run records an event after every launch, so
/// the table also gives the up- and down-projections' share of the time,
/// and the host's time to issue the launches (a sequence the host issues
/// slower than the GPU runs it leaves the GPU idle between them).
fn chunks(s: &Arc<CudaStream>, gemms: &[Gemm<'_>; 2], m: usize, sms: usize, rounds: usize) -> Result<(), Box<dyn std::error::Error>> {
    let [up, down] = gemms;
    let (f, h) = (up.dims.n, down.dims.n);
    let fit = [ChunkGemm { tiles_n: f.div_ceil(TILE_N), k: h }, ChunkGemm { tiles_n: h.div_ceil(TILE_N), k: f }];
    // (chunks asked for, fitted)
    let forms = [(1usize, false), (2, false), (2, true), (4, false), (4, true)];
    let plans: Vec<ChunkPlan> = forms
        .iter()
        .map(|&(c, fitted)| if fitted { ChunkPlan::fitted(m, c, TILE_M, &fit, sms) } else { ChunkPlan::new(m, c, TILE_M) })
        .collect::<Result<_, _>>()?;
    let mut act = s.alloc_zeros::<bf16>(m * f).map_err(GemmError::from)?;
    let mut out = s.alloc_zeros::<bf16>(m * h).map_err(GemmError::from)?;
    let timed = Some(CUevent_flags::CU_EVENT_DEFAULT);
    // per form: each run's (whole, up, down, host issue) in ms
    let mut runs = vec![Vec::with_capacity(rounds); forms.len()];
    for round in 0..rounds + 2 {
        for (i, plan) in plans.iter().enumerate() {
            let issue = Instant::now();
            let mut events = vec![s.record_event(timed).map_err(GemmError::from)?];
            for (c, &(start, end)) in plan.ranges().iter().enumerate() {
                let rows = end - start;
                // (as `TpMlp::forward` runs them: the queue beside a collective, else fixed shares or their tail split)
                let grid = Grid::of_chunk(c);
                let xs = up.x.slice(start * h..end * h);
                let mut a = act.slice_mut(0..rows * f);
                rank_linear(s, &xs, &up.w, &mut a, Some(&up.b), true, Dims::new(rows, f, h), grid)?;
                events.push(s.record_event(timed).map_err(GemmError::from)?);
                let mut o = out.slice_mut(start * h..end * h);
                rank_linear(s, &a, &down.w, &mut o, Some(&down.b), false, Dims::new(rows, h, f), grid)?;
                events.push(s.record_event(timed).map_err(GemmError::from)?);
            }
            let host = issue.elapsed().as_secs_f64() * 1e3;
            s.synchronize().map_err(GemmError::from)?;
            if round >= 2 {
                let ms = |a: usize, b: usize| events[a].elapsed_ms(&events[b]).map(f64::from).map_err(GemmError::from);
                let (mut ups, mut downs) = (0.0, 0.0);
                for c in 0..plan.ranges().len() {
                    ups += ms(2 * c, 2 * c + 1)?;
                    downs += ms(2 * c + 1, 2 * c + 2)?;
                }
                runs[i].push([ms(0, events.len() - 1)?, ups, downs, host]);
            }
        }
    }
    let median = |runs: &[[f64; 4]], k: usize| {
        let mut t: Vec<f64> = runs.iter().map(|r| r[k]).collect();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    println!("\nThe rank's GEMMs of the block in chunks, in rotation (each launch followed by an event):\n");
    println!("| chunks asked for | cut | rows each | ms | over one chunk | up-projections | down-projections | host issues them in |");
    println!("|---:|---|---|---:|---:|---:|---:|---:|");
    let one = median(&runs[0], 0);
    for ((&(c, fitted), plan), r) in forms.iter().zip(&plans).zip(&runs) {
        let rows: Vec<String> = plan.ranges().iter().map(|(a, b)| (b - a).to_string()).collect();
        let cut = if fitted { "fitted" } else { "equal" };
        let ms = median(r, 0);
        println!(
            "| {c} | {cut} | {} | {ms:.3} | {:+.1}% | {:.3} | {:.3} | {:.3} |",
            rows.join(", "),
            100.0 * (ms / one - 1.0),
            median(r, 1),
            median(r, 2),
            median(r, 3)
        );
    }
    println!();
    Ok(())
}
