//! What a tuned kernel's first launch picks beside how its points rank
//! when each runs alone, back to back, at the GPU's power cap. A GEMM run
//! back to back brings the GPU to its cap within about 100 ms, at the clock
//! its own draw leaves it; kernels timed in rotation run at clocks their
//! neighbours' draw sets as much as their own, and rank differently with
//! what they rotate with.
//! For each size this tool, from an idle GPU (a second's sleep):
//!
//! 1. lets the real tuner pick (`GEMM_TILES_TUNE=verbose` prints its
//!    timings; `GEMM_TILES_CACHE=off`, or a folder without `*.tuned`
//!    files, keeps an earlier choice out of it);
//! 2. times every point that runs the size in rotation, samples of
//!    `--batch` launches back to back, after `--warm` seconds of it;
//! 3. runs the rotation's three fastest and the tuner's pick each alone,
//!    for `--soak` seconds (in order, then in reverse order), with the SM
//!    clock NVML reports, and again for `--short` milliseconds untimed,
//!    then timed (the tuner's second pass);
//! 4. from idle again, runs the rotation's fastest back to back for
//!    `--ramp` seconds in windows, with the clock and power: how long the
//!    GPU takes to reach its cap.
//!
//! `cargo run --release -p gemm-lab -- tuner KERNEL SIZE... [--warm S] [--soak S] [--short MS,MS] [--ramp S] [--batch N]`

use std::time::Duration;

use clap::Parser;
use gemm_ladder::measure::{padded_dims, time_rotation_of, Bench, Problem, Reps};
use gemm_ladder::nvml::{sampled, Nvml};
use gemm_runtime::internal::timing::time_back_to_back;
use gemm_runtime::GemmError;

/// A tuned kernel's first-launch pick beside its points' ranking under sustained load.
#[derive(Debug, Parser)]
#[command(name = "gemm-lab tuner")]
struct Cli {
    /// The tuned kernel (`src/tuned.rs`)
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(gemm_ladder::tuned::ALL.map(|t| t.name())))]
    kernel: String,
    /// Sizes: N (cubed) or MxNxK
    #[arg(required = true)]
    sizes: Vec<String>,
    /// Seconds of the points' rotation before the timed rounds
    #[arg(long, default_value_t = 1.0)]
    warm: f64,
    /// Seconds the rotation's fastest runs back to back from idle, in windows
    #[arg(long, default_value_t = 2.0)]
    ramp: f64,
    /// Launches back to back between a sample's two events
    #[arg(long, default_value_t = 10)]
    batch: usize,
    /// Seconds each candidate (the rotation's three fastest and the tuner's pick) runs alone, twice (in order, then reversed)
    #[arg(long, default_value_t = 2.0)]
    soak: f64,
    /// Short soaks: milliseconds untimed, then milliseconds timed, each candidate alone (in order, then reversed)
    #[arg(long, value_delimiter = ',', default_values_t = [150.0, 150.0])]
    short: Vec<f64>,
}

/// The ramp's windows: milliseconds each, from idle.
const WINDOWS_MS: [f64; 9] = [5.0, 5.0, 10.0, 30.0, 50.0, 100.0, 300.0, 500.0, 1000.0];

pub fn main(args: Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    Ok(run(&Cli::parse_from(args))?)
}

fn run(cli: &Cli) -> Result<(), GemmError> {
    let tuned = gemm_ladder::tuned::named(&cli.kernel).ok_or_else(|| GemmError::Unsupported(format!("no tuned kernel `{}`", cli.kernel)))?;
    let bench = Bench::open()?;
    let s = bench.stream();
    let nvml = Nvml::open(s.context());
    println!(
        "{} ({} SMs): `{}`'s first-launch pick from idle beside its points timed in rotation, {} launches a sample, after {} s of it\n",
        bench.gpu.name, bench.facts.sms, cli.kernel, cli.batch, cli.warm
    );
    for size in &cli.sizes {
        let (m, n, k) = gemm_ladder::cli::parse_mnk(size).map_err(GemmError::Unsupported)?;
        let spec = &tuned.kernel(0).spec;
        let dims = padded_dims(m, n, k, [spec.a.layout, spec.b.layout, spec.c.layout]);
        let p = Problem::for_kernel(&bench, tuned.kernel(0), dims, 1)?;
        let mut c = p.poisoned_c(&bench)?;
        std::thread::sleep(Duration::from_secs(1));
        p.launch_tuned(&bench, tuned, &mut c)?;
        s.synchronize()?;
        let picked = tuned.chosen_for(s, dims)?.map_or("none".to_string(), |k| k.name.to_string());
        // the points that run this size
        let runs: Vec<usize> = (0..tuned.points().len()).filter(|&i| p.launch(&bench, tuned.kernel(i), &mut c).is_ok()).collect();
        s.synchronize()?;
        let launch = |i: usize, c: &mut _| -> Result<(), GemmError> {
            for _ in 0..cli.batch {
                p.launch(&bench, tuned.kernel(runs[i]), c)?;
            }
            Ok(())
        };
        // a round of every point, to size the warm-up in rounds
        let once = time_rotation_of(s, runs.len(), Reps { warmup: 0, runs: 1 }, |i| launch(i, &mut c))?;
        let round_ms: f64 = once.iter().map(|t| t.median_ms()).sum();
        let warmup = (cli.warm * 1e3 / round_ms).ceil() as usize;
        let (times, clock) = sampled(nvml.as_ref(), || time_rotation_of(s, runs.len(), Reps { warmup, runs: 10 }, |i| launch(i, &mut c)));
        let ms: Vec<f64> = times?.iter().map(|t| t.median_ms() / cli.batch as f64).collect();
        let mut order: Vec<usize> = (0..runs.len()).collect();
        order.sort_by(|&x, &y| ms[x].total_cmp(&ms[y]));
        let tflops = |ms: f64| dims.flops() / (ms * 1e-3) / 1e12;
        println!("{m} x {n} x {k}: the tuner picked `{picked}`; in rotation ({})", clock.map_or(String::new(), |c| c.describe()));
        println!("\n| rank | point | ms | TFLOP/s | |\n|---:|---|---:|---:|---|");
        for (rank, &i) in order.iter().enumerate() {
            let name = &tuned.kernel(runs[i]).name;
            let mark = if *name == picked { "the tuner's pick" } else { "" };
            if rank < 8 || !mark.is_empty() {
                println!("| {} | `{name}` | {:.4} | {:.1} | {mark} |", rank + 1, ms[i], tflops(ms[i]));
            }
        }
        let best = order[0];
        if let Some(&pick) = order.iter().find(|&&i| tuned.kernel(runs[i]).name == picked) {
            println!("\nthe pick runs {:.1}% of the rotation's fastest", 100.0 * ms[best] / ms[pick]);
        }
        // candidates alone: the rotation's three fastest and the tuner's pick
        let mut cands: Vec<usize> = order.iter().copied().take(3).collect();
        if let Some(pick) = order.iter().copied().find(|&i| tuned.kernel(runs[i]).name == picked) {
            if !cands.contains(&pick) {
                cands.push(pick);
            }
        }
        let one = |i: usize, c: &mut _| p.launch(&bench, tuned.kernel(runs[i]), c);
        let there_and_back: Vec<usize> = cands.iter().chain(cands.iter().rev()).copied().collect();
        if cli.soak > 0.0 {
            let mut sums = vec![(0.0, 0.0); runs.len()];
            for &i in &there_and_back {
                let soaked = gemm_ladder::measure::soak(s, nvml.as_ref(), cli.soak, dims.flops(), || one(i, &mut c))?;
                sums[i].0 += soaked.tflops / 2.0;
                sums[i].1 += soaked.clock.map_or(0.0, |c| c.sm_mhz) / 2.0;
            }
            println!("\neach alone for {} s, twice (in order, then reversed), the median batch's TFLOP/s:\n", cli.soak);
            for &i in &cands {
                println!("- `{}`: {:.1} at {:.0} MHz", tuned.kernel(runs[i]).name, sums[i].0, sums[i].1);
            }
            let fastest = cands.iter().map(|&i| sums[i].0).fold(0.0, f64::max);
            if let Some(&pick) = cands.iter().find(|&&i| tuned.kernel(runs[i]).name == picked) {
                println!("\nthe pick runs {:.1}% of the fastest alone", 100.0 * sums[pick].0 / fastest);
            }
        }
        if let [warm_ms, timed_ms] = cli.short[..] {
            let mut sums = vec![0.0; runs.len()];
            for &i in &there_and_back {
                let warm = ((warm_ms / ms[i] / cli.batch as f64).ceil() as usize).max(1);
                let timed = ((timed_ms / ms[i] / cli.batch as f64).ceil() as usize).max(1);
                let t = time_back_to_back(s, warm, timed, cli.batch, |_| one(i, &mut c))?;
                sums[i] += tflops(t.median_ms()) / 2.0;
            }
            println!("\neach alone, {warm_ms} ms untimed then {timed_ms} ms timed, twice (in order, then reversed), TFLOP/s:\n");
            for &i in &cands {
                println!("- `{}`: {:.1}", tuned.kernel(runs[i]).name, sums[i]);
            }
        }
        // the ramp: the rotation's fastest from idle
        if cli.ramp > 0.0 {
            std::thread::sleep(Duration::from_secs(2));
            println!("\nfrom idle, `{}` back to back:\n\n| until ms | TFLOP/s | clock |\n|---:|---:|---|", tuned.kernel(runs[best]).name);
            let mut until = 0.0;
            for w in WINDOWS_MS {
                if until >= cli.ramp * 1e3 {
                    break;
                }
                let launches = ((w / ms[best]).ceil() as usize).max(1);
                let (t, clock) =
                    sampled(nvml.as_ref(), || time_back_to_back(s, 0, 1, launches, |_| p.launch(&bench, tuned.kernel(runs[best]), &mut c)));
                let t = t?.median_ms();
                until += t * launches as f64;
                println!("| {until:.1} | {:.1} | {} |", tflops(t), clock.map_or(String::new(), |c| c.describe()));
            }
        }
        println!();
    }
    Ok(())
}
