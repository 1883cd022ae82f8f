//! The ladder benchmark: every step of the four ladders at several sizes
//! beside cuBLAS in the step's types and layouts (cuBLASLt's fp8 GEMM in
//! its default mode for the fp8 ladder, which cuBLAS's GEMM has no type for).
//! `cargo bench --bench ladder_bench [STEP ...]` (default: every step).
//!
//! Each step is verified against cuBLAS at each size before it is timed. Timing:
//! CUDA events, 3 warm-up runs, the median of 20, inputs rotated over enough
//! random normal buffer sets that repeated runs do not find them in the L2.
//! Writes a table per ladder to stdout, and `target/bench/{ladder,tensor,hopper,fp8}.{json,svg}`.

use clap::Parser;

use gemm_ladder::measure::{config, describe, time_cublas_typed, verify_on, Bench, Config, Problem, Reps};
use gemm_ladder::report::{line_chart, progress, rounded, write_json, write_target, BenchRecord, SizeRecord, StepRecord};
use gemm_ladder::{Step, FP8_STEPS, HOPPER_STEPS, STEPS, TENSOR_STEPS};
use gemm_runtime::internal::timing::time;
use gemm_runtime::{Dims, GemmError};

const SIZES: [(usize, usize, usize); 6] =
    [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096), (8192, 1024, 8192)];

fn main() {
    // `cargo test --all-targets` runs bench binaries without `--bench`: the
    // benchmark needs a GPU and minutes, so it only runs under `cargo bench`.
    let cli = Cli::parse();
    if !cli.bench {
        println!("ladder_bench: a GPU benchmark; run it with `cargo bench --bench ladder_bench`");
        return;
    }
    if let Some(bad) = cli.only.iter().find(|o| !STEPS.iter().chain(&TENSOR_STEPS).chain(&HOPPER_STEPS).chain(&FP8_STEPS).any(|s| &s.name == o)) {
        eprintln!("error: no step is named `{bad}`");
        std::process::exit(2);
    }
    if let Err(e) = run(cli.only) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Input sets for `dims` in `config`'s types and layouts: as many as fit
/// five times the device's L2 (so that no run finds its inputs there), at
/// least 2, at most 8.
fn rotation(bench: &Bench, config: Config, dims: Dims) -> Result<Vec<Problem>, GemmError> {
    let (types, layouts) = config;
    let bytes = types[0].bytes() as usize * (dims.m * dims.k + dims.k * dims.n);
    let sets = (5 * bench.facts.l2_bytes as usize / bytes).clamp(2, 8);
    (0..sets).map(|i| Problem::typed(bench, types, layouts, dims, 1000 + i as u64)).collect()
}

/// Every step of the four ladders at several sizes beside cuBLAS, each verified
/// first; writes target/bench/{ladder,tensor,hopper,fp8}.{json,svg}.
#[derive(Debug, Parser)]
#[command(name = "ladder_bench")]
struct Cli {
    /// Run the benchmark (`cargo bench` passes it; without it the binary only says how to run it)
    #[arg(long)]
    bench: bool,
    /// Steps to run (default: every step)
    #[arg(value_name = "STEP")]
    only: Vec<String>,
}

fn run(only: Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    let keep =
        |steps: &'static [Step]| -> Vec<&'static Step> { steps.iter().filter(|s| only.is_empty() || only.iter().any(|o| o == s.name)).collect() };
    let bench = Bench::open()?;
    let ladders = [
        (keep(&STEPS), "ladder", "f32 GEMM ladder"),
        (keep(&TENSOR_STEPS), "tensor", "tensor-core ladder"),
        (keep(&HOPPER_STEPS).into_iter().filter(|_| bench.gpu.capability == (9, 0)).collect(), "hopper", "Hopper ladder (sm_90a)"),
        (keep(&FP8_STEPS).into_iter().filter(|_| bench.gpu.capability == (9, 0)).collect(), "fp8", "fp8 ladder (sm_90a; cuBLASLt's fp8 GEMM)"),
    ];
    for (steps, name, title) in ladders {
        if !steps.is_empty() {
            ladder(&bench, &steps, name, title)?;
        }
    }
    Ok(())
}

/// Benchmarks one ladder's `steps` at every size; writes `bench/{name}.json` and `.svg`.
fn ladder(bench: &Bench, steps: &[&Step], name: &str, title: &str) -> Result<(), Box<dyn std::error::Error>> {
    let reps = Reps::default();
    let driver = gemm_runtime::device::driver_version().unwrap_or_else(|_| "?".into());
    let mut configs: Vec<Config> = Vec::new();
    for s in steps {
        if !configs.contains(&config(s.kernel)) {
            configs.push(config(s.kernel));
        }
    }
    let bar = progress(SIZES.len() * (steps.len() + configs.len()));
    // results[size][step] = (TFLOP/s, rel. error); cublas[size][config]
    let mut results = vec![vec![None; steps.len()]; SIZES.len()];
    let mut cublas = vec![vec![0.0; configs.len()]; SIZES.len()];
    for (si, &(m, n, k)) in SIZES.iter().enumerate() {
        let dims = Dims::new(m, n, k);
        let step_to = |what: &str| {
            bar.set_message(format!("{m}x{n}x{k} {what}"));
            bar.inc(1);
        };
        for (ci, &cfg) in configs.iter().enumerate() {
            step_to("inputs and cuBLAS");
            let mut sets = rotation(bench, cfg, dims)?;
            let reference = sets[0].reference(bench)?;
            let mut c = sets[0].poisoned_c(bench)?;
            // 8-bit operands: cuBLASLt's fp8 GEMM (`Problem::cublas` widens them for sgemm, a reference only)
            let t = if cfg.0[0].is_fp8() {
                time_cublas_typed(bench, cfg.0, cfg.1, dims, reps)?
            } else {
                time(bench.stream(), reps.warmup, reps.runs, |i| sets[i % sets.len()].cublas(bench, &mut c))?
            };
            cublas[si][ci] = t.tflops(dims.flops());
            for (i, step) in steps.iter().enumerate().filter(|(_, s)| config(s.kernel) == cfg) {
                step_to(step.name);
                // the step's scales, where it declares them, and the reference that takes them
                for p in &mut sets {
                    p.scale_for(bench, &step.kernel.spec)?;
                }
                let scaled;
                let reference = match sets[0].scales {
                    Some(_) => {
                        scaled = sets[0].reference(bench)?;
                        &scaled
                    }
                    None => &reference,
                };
                let rel_err = match verify_on(bench, step.kernel, &sets[0], reference) {
                    Ok(e) => e,
                    Err(gemm_ladder::measure::Failure::Gpu(GemmError::UnsupportedSize { .. })) => continue,
                    Err(e) => return Err(e.into()),
                };
                let t = time(bench.stream(), reps.warmup, reps.runs, |r| sets[r % sets.len()].launch(bench, step.kernel, &mut c))?;
                results[si][i] = Some((t.tflops(dims.flops()), rel_err, ci));
            }
        }
    }
    bar.finish_and_clear();

    // The table: one row per step, one column per size.
    let labels: Vec<String> = SIZES.iter().map(|&(m, n, k)| if m == n && n == k { format!("{m}^3") } else { format!("{m}x{n}x{k}") }).collect();
    println!(
        "\n{title}: {} (CUDA driver {driver}); TFLOP/s (% of cuBLAS in the same types and layouts, same run); median of {} runs\n",
        bench.gpu.name, reps.runs
    );
    println!("| step | {} |", labels.join(" | "));
    println!("|---|{}", "---:|".repeat(SIZES.len()));
    for (ci, c) in configs.iter().enumerate() {
        println!("| cuBLAS {} | {} |", describe(*c), (0..SIZES.len()).map(|si| format!("{:.2}", cublas[si][ci])).collect::<Vec<_>>().join(" | "));
    }
    for (i, step) in steps.iter().enumerate() {
        let cells: Vec<String> = (0..SIZES.len())
            .map(|si| results[si][i].map_or("n/a".into(), |(t, _, ci)| format!("{t:.2} ({:.1}%)", 100.0 * t / cublas[si][ci])))
            .collect();
        println!("| {} | {} |", step.name, cells.join(" | "));
    }

    let sizes = SIZES
        .iter()
        .enumerate()
        .map(|(si, &(m, n, k))| SizeRecord {
            m,
            n,
            k,
            cublas_tflops: configs.iter().enumerate().map(|(ci, c)| (describe(*c), rounded(cublas[si][ci], 3))).collect(),
            steps: steps
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    results[si][i].map(|(t, e, ci)| StepRecord {
                        step: s.name.to_string(),
                        tflops: rounded(t, 3),
                        cublas: describe(configs[ci]),
                        pct_of_cublas: rounded(100.0 * t / cublas[si][ci], 2),
                        rel_err: e,
                    })
                })
                .collect(),
        })
        .collect();
    let record = BenchRecord { device: bench.gpu.name.clone(), driver: driver.clone(), date: today(), runs: reps.runs, sizes };
    let series: Vec<(String, Vec<Option<f64>>)> =
        steps.iter().enumerate().map(|(i, s)| (s.name.to_string(), (0..SIZES.len()).map(|si| results[si][i].map(|r| r.0)).collect())).collect();
    // The chart's reference line is cuBLAS in the last steps' types (the ladder's goal).
    let last = configs.len() - 1;
    let reference: Vec<f64> = (0..SIZES.len()).map(|si| cublas[si][last]).collect();
    let svg = line_chart(&format!("{title}, {}", bench.gpu.name), &labels, &series, (&format!("cuBLAS {}", describe(configs[last])), &reference));
    let (j, s) = (write_json(&format!("bench/{name}.json"), &record)?, write_target(&format!("bench/{name}.svg"), &svg)?);
    println!("\nwrote {} and {}", j.display(), s.display());
    Ok(())
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn today() -> String {
    let days = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86400) as i64;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
