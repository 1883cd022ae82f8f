//! gemm-tp's MLP block on two or more GPUs of this machine, each form run
//! back to back for a while with every GPU's SM clock sampled (NVML): how
//! much of the all-reduce chunks hide in the GEMMs' cycles, and what the
//! clock takes back at the GPUs' power cap
//! (docs/src/performance/tensor-parallel.md; `gemm-lab/probes/tp_clocks.py` does the same with
//! cuBLAS's block through PyTorch).
//! `cargo run --release -p gemm-lab -- tp-clocks [--tokens 8192,1024] [--gpus 2] [--secs 0.6] [--rounds 5]`
//!
//! Forms, in rotation, one run of `--secs` seconds each a round: each
//! rank's GEMMs alone (the kernels `TpMlp` runs, on its slices of the
//! weights, no collective), the all-reduce of the block's output alone,
//! the block in one chunk (the plain order), and in 2 and 4 equal chunks
//! (`TpMlp::forward_planned`). For each form and GPU: the time a run of
//! the form (the median round) and the mean SM clock; for the chunked
//! forms, what a GPU's GEMMs would take at the form's clock (their cycles
//! alone, time x clock, over it) and what is left of the form's time past
//! that: the all-reduce left exposed; and for one chunk, the clock its
//! GEMMs ran at (their cycles over the time the all-reduce leaves them).
//!
//! Then one call of each chunked form at a time, traced by events (the
//! form's launches as `forward_planned` issues them, with an event after
//! each GEMM and around each chunk's all-reduce): when each chunk's GEMMs
//! and all-reduce start and end, beside the same GEMMs with no collective
//! and the same all-reduces alone: what the GEMMs lose beside the
//! collective, and how long the collective takes beside them.

use clap::Parser;
use gemm_ladder::measure::random_normal;
use gemm_ladder::nvml::{sampled_each, Nvml};
use std::time::Instant;

use gemm_runtime::cudarc::driver::sys::CUevent_flags;
use gemm_runtime::cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
use gemm_runtime::{bf16, Dims};
use gemm_tp::kernels::{rank_linear, Grid, TILE_M};
use gemm_tp::{ChunkPlan, MlpShape, TpError, TpGroup, TpMlp};

#[derive(Debug, Parser)]
#[command(name = "gemm-lab tp-clocks")]
struct Cli {
    /// Token counts (rows of x)
    #[arg(long, value_delimiter = ',', default_values_t = [8192usize, 1024])]
    tokens: Vec<usize>,
    /// GPUs in the group (the first ones of the machine)
    #[arg(long, default_value_t = 2)]
    gpus: usize,
    /// Seconds a form runs back to back in a round
    #[arg(long, default_value_t = 0.6)]
    secs: f64,
    /// Rounds (each form once a round, each round in another order; one more untimed first)
    #[arg(long, default_value_t = 5, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    rounds: usize,
}

const FORMS: [&str; 5] = ["the GEMMs alone", "the all-reduce alone", "one chunk", "2 chunks", "4 chunks"];

pub fn main(args: Vec<String>) {
    if let Err(e) = run(Cli::parse_from(args)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn normal(len: usize, seed: u64, scale: f32) -> Vec<bf16> {
    random_normal(len, seed).into_iter().map(|x| bf16::from_f32(x * scale)).collect()
}

fn run(cli: Cli) -> Result<(), TpError> {
    let shape = MlpShape { hidden: 8192, ffn: 28672 };
    let (h, f, p) = (shape.hidden, shape.ffn, cli.gpus);
    let group = TpGroup::new(&(0..p).collect::<Vec<_>>())?;
    let nvml: Vec<Nvml> = (0..p).filter_map(|i| Nvml::open(group.stream(i).context())).collect();
    if nvml.len() != p {
        return Err(TpError::Args("NVML (libnvidia-ml.so.1) does not answer for every GPU: no clocks to sample".into()));
    }
    let gpus: Vec<&Nvml> = nvml.iter().collect();
    let (w1, b1, w2, b2) =
        (normal(f * h, 1, 1.0 / (h as f32).sqrt()), normal(f, 2, 0.1), normal(h * f, 3, 1.0 / (f as f32).sqrt()), normal(h, 4, 0.1));
    let mlp = TpMlp::from_host(&group, shape, &w1, &b1, &w2, &b2)?;
    let fp = f / p;
    // each rank's slices for its GEMMs alone: W1's rows and W2's columns (only their time counts)
    let up_w: Vec<CudaSlice<bf16>> = (0..p).map(|r| group.stream(r).clone_htod(&w1[r * fp * h..(r + 1) * fp * h])).collect::<Result<_, _>>()?;
    let up_b: Vec<CudaSlice<bf16>> = (0..p).map(|r| group.stream(r).clone_htod(&b1[r * fp..(r + 1) * fp])).collect::<Result<_, _>>()?;
    let down_w: Vec<CudaSlice<bf16>> =
        (0..p).map(|r| group.stream(r).clone_htod(&normal(h * fp, 5 + r as u64, 1.0 / (f as f32).sqrt()))).collect::<Result<_, _>>()?;
    let down_b: Vec<CudaSlice<bf16>> = (0..p).map(|r| group.stream(r).clone_htod(&b2)).collect::<Result<_, _>>()?;
    println!(
        "gemm-tp's MLP block (hidden {h}, ffn {f}) on {p} GPUs: {}; {} rounds of {} s a form\n",
        group.stream(0).context().name()?,
        cli.rounds,
        cli.secs
    );
    for &m in &cli.tokens {
        let x = normal(m * h, 9, 1.0);
        let xs: Vec<CudaSlice<bf16>> = (0..p).map(|r| group.stream(r).clone_htod(&x)).collect::<Result<_, _>>()?;
        let mut outs: Vec<CudaSlice<bf16>> = (0..p).map(|r| group.stream(r).alloc_zeros::<bf16>(m * h)).collect::<Result<_, _>>()?;
        let mut acts: Vec<CudaSlice<bf16>> = (0..p).map(|r| group.stream(r).alloc_zeros::<bf16>(m * fp)).collect::<Result<_, _>>()?;
        let plans = [ChunkPlan::new(m, 1, TILE_M)?, ChunkPlan::new(m, 2, TILE_M)?, ChunkPlan::new(m, 4, TILE_M)?];
        let xr: Vec<&CudaSlice<bf16>> = xs.iter().collect();
        let mut form = |i: usize| -> Result<(), TpError> {
            match i {
                0 => {
                    for r in 0..p {
                        // (the kernels `forward` launches for one chunk)
                        let s = group.stream(r);
                        rank_linear(s, &xs[r], &up_w[r], &mut acts[r], Some(&up_b[r]), true, Dims::new(m, fp, h), Grid::Persistent)?;
                        rank_linear(s, &acts[r], &down_w[r], &mut outs[r], Some(&down_b[r]), false, Dims::new(m, h, fp), Grid::Persistent)?;
                    }
                    Ok(())
                }
                1 => group.all_reduce(&mut outs.iter_mut().collect::<Vec<_>>(), m * h),
                _ => mlp.forward_planned(&group, &xr, &mut outs.iter_mut().collect::<Vec<_>>(), &plans[i - 2]),
            }
        };
        // per form, per round: (ms a run, each GPU's mean MHz)
        let mut runs: Vec<Vec<(f64, Vec<f64>)>> = vec![Vec::new(); FORMS.len()];
        for round in 0..=cli.rounds {
            for i in (0..FORMS.len()).map(|i| (i + round) % FORMS.len()) {
                group.synchronize()?;
                let start = Instant::now();
                let (n, clocks) = sampled_each(&gpus, || -> Result<usize, TpError> {
                    // batches of 8 runs, one at least
                    let mut n = 0;
                    loop {
                        for _ in 0..8 {
                            form(i)?;
                        }
                        group.synchronize()?;
                        n += 8;
                        if start.elapsed().as_secs_f64() >= cli.secs {
                            return Ok(n);
                        }
                    }
                });
                let ms = start.elapsed().as_secs_f64() * 1e3 / n? as f64;
                if round > 0 {
                    runs[i].push((ms, clocks.iter().map(|c| c.map_or(f64::NAN, |c| c.sm_mhz)).collect()));
                }
            }
        }
        let median = |v: &[(f64, Vec<f64>)], g: Option<usize>| {
            let mut t: Vec<f64> = v.iter().map(|(ms, mhz)| g.map_or(*ms, |g| mhz[g])).collect();
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        };
        println!("{m} tokens: a run's ms (the median round), each GPU's mean SM clock (MHz)\n");
        println!("| form | ms | {} |", (0..p).map(|g| format!("GPU {g}: MHz")).collect::<Vec<_>>().join(" | "));
        println!("|---|---:|{}", "---:|".repeat(p));
        for (i, name) in FORMS.iter().enumerate() {
            let mhz: Vec<String> = (0..p).map(|g| format!("{:.0}", median(&runs[i], Some(g)))).collect();
            println!("| {name} | {:.3} | {} |", median(&runs[i], None), mhz.join(" | "));
        }
        let (gemms, reduce) = (median(&runs[0], None), median(&runs[1], None));
        println!("\n| form | GPU | its GEMMs at the form's clock: ms | all-reduce exposed: ms | of the all-reduce alone hidden |");
        println!("|---|---:|---:|---:|---:|");
        for g in 0..p {
            let cycles = gemms * median(&runs[0], Some(g));
            let one = median(&runs[2], None);
            println!("| one chunk: its GEMMs at {:.0} MHz | {g} | {:.3} | {reduce:.3} | |", cycles / (one - reduce), one - reduce);
            for i in 3..FORMS.len() {
                let (ms, at) = (median(&runs[i], None), cycles / median(&runs[i], Some(g)));
                println!("| {} | {g} | {at:.3} | {:.3} | {:.0}% |", FORMS[i], ms - at, 100.0 * (1.0 - (ms - at) / reduce));
            }
        }
        println!();
        let gemms = Gemms { xs: &xs, up_w: &up_w, up_b: &up_b, down_w: &down_w, down_b: &down_b, acts: &mut acts, h, fp };
        traced(&group, gemms, &plans[1..], cli.rounds)?;
    }
    Ok(())
}

/// Each rank's inputs and weights for the block's GEMMs, and its activations.
struct Gemms<'a> {
    xs: &'a [CudaSlice<bf16>],
    up_w: &'a [CudaSlice<bf16>],
    up_b: &'a [CudaSlice<bf16>],
    down_w: &'a [CudaSlice<bf16>],
    down_b: &'a [CudaSlice<bf16>],
    acts: &'a mut [CudaSlice<bf16>],
    h: usize,
    fp: usize,
}

/// One call of each plan's block at a time, its launches as
/// `TpMlp::forward_planned` issues them (the first chunk's GEMMs on fixed
/// shares, the rest on the queue; chunk c's all-reduce on the
/// communicators' streams once its GEMMs are done, and the next chunk's
/// GEMMs ready with it), with events after every GEMM and around every
/// all-reduce; then the same with the next chunk's GEMMs ready as soon as
/// the kernel before them on their stream ends (as before
/// `TpGroup::collective_first`), with no all-reduce, and the all-reduces
/// alone. Prints each chunk's times on
/// GPU 0 (the medians of `rounds` calls) from the start of the call.
fn traced(group: &TpGroup, g: Gemms<'_>, plans: &[ChunkPlan], rounds: usize) -> Result<(), TpError> {
    let p = group.local_ranks();
    let (h, fp) = (g.h, g.fp);
    let ev = |s: &CudaStream| s.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
    println!("One call at a time, traced by events on GPU 0 (ms from the call's start; medians of {rounds} calls):\n");
    println!("| chunks | rows | form | chunk | GEMMs start | up-projection ends | down-projection ends | all-reduce starts | all-reduce ends |");
    println!("|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    for plan in plans {
        let m = plan.rows();
        let mut partials: Vec<Vec<CudaSlice<bf16>>> = plan
            .ranges()
            .iter()
            .map(|(a, b)| (0..p).map(|r| group.stream(r).alloc_zeros::<bf16>((b - a) * h)).collect::<Result<_, _>>())
            .collect::<Result<_, _>>()?;
        // form 0: the block as `forward_planned` issues it; 1: the same with each chunk's GEMMs
        // waiting only for cudarc's tracking; 2: its GEMMs alone; 3: its all-reduces alone.
        // Per form, per call: each chunk's five times
        let mut times: Vec<Vec<Vec<[f64; 5]>>> = vec![Vec::new(); 4];
        for round in 0..=rounds {
            for (form, per_form) in times.iter_mut().enumerate() {
                group.synchronize()?;
                let start: Vec<CudaEvent> = (0..p).map(|r| ev(group.stream(r))).collect::<Result<_, _>>()?;
                // per chunk: GPU 0's events (GEMMs start, up end, down end, all-reduce start, end)
                let mut marks: Vec<[Option<CudaEvent>; 5]> = Vec::new();
                for (c, &(a, b)) in plan.ranges().iter().enumerate() {
                    let (rows, grid) = (b - a, Grid::of_chunk(c));
                    let mut mark: [Option<CudaEvent>; 5] = Default::default();
                    let mut done = Vec::with_capacity(p);
                    for (r, part) in partials[c].iter_mut().enumerate() {
                        let s = group.stream(r);
                        if form != 3 {
                            let t0 = ev(s)?;
                            let mut act = g.acts[r].slice_mut(0..rows * fp);
                            rank_linear(s, &g.xs[r].slice(a * h..b * h), &g.up_w[r], &mut act, Some(&g.up_b[r]), true, Dims::new(rows, fp, h), grid)?;
                            let t1 = ev(s)?;
                            rank_linear(s, &act, &g.down_w[r], part, Some(&g.down_b[r]), false, Dims::new(rows, h, fp), grid)?;
                            let t2 = ev(s)?;
                            if r == 0 {
                                (mark[0], mark[1], mark[2]) = (Some(t0), Some(t1), Some(t2));
                            }
                        }
                        done.push(ev(s)?);
                    }
                    if form != 2 {
                        let mut starts = Vec::with_capacity(p);
                        for (r, d) in done.iter().enumerate() {
                            let cs = group.comm(r).stream();
                            cs.wait(d)?;
                            starts.push(ev(&cs)?);
                            if form == 0 && c + 1 < plan.ranges().len() {
                                // (as `TpGroup::collective_first`: the next chunk's GEMMs ready with the collective)
                                group.stream(r).wait(&starts[r])?;
                            }
                        }
                        group.all_reduce(&mut partials[c].iter_mut().collect::<Vec<_>>(), rows * h)?;
                        mark[3] = starts.into_iter().next();
                        mark[4] = Some(ev(&group.comm(0).stream())?);
                    }
                    marks.push(mark);
                }
                group.synchronize()?;
                if round > 0 {
                    let at = |e: &Option<CudaEvent>| e.as_ref().map_or(Ok(f64::NAN), |e| start[0].elapsed_ms(e).map(f64::from));
                    let call =
                        marks.iter().map(|m| Ok([at(&m[0])?, at(&m[1])?, at(&m[2])?, at(&m[3])?, at(&m[4])?])).collect::<Result<_, TpError>>()?;
                    per_form.push(call);
                }
            }
        }
        let names = ["the block", "the block, its GEMMs ready first", "its GEMMs alone", "its all-reduces alone"];
        for (form, calls) in times.iter().enumerate() {
            for c in 0..plan.ranges().len() {
                let cols: Vec<String> = (0..5)
                    .map(|k| {
                        let mut t: Vec<f64> = calls.iter().map(|call| call[c][k]).collect();
                        t.sort_by(f64::total_cmp);
                        let v = t[t.len() / 2];
                        if v.is_nan() {
                            String::new()
                        } else {
                            format!("{v:.3}")
                        }
                    })
                    .collect();
                let (a, b) = plan.ranges()[c];
                println!("| {} | {m} | {} | {c} ({} rows) | {} |", plan.ranges().len(), names[form], b - a, cols.join(" | "));
            }
        }
    }
    println!();
    Ok(())
}
