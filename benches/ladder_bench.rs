//! The ladder benchmark: every step at several sizes beside cuBLAS sgemm.
//! `cargo bench --bench ladder_bench [STEP ...]` (default: every step).
//!
//! Each step is verified against cuBLAS at each size before it is timed. Timing:
//! CUDA events, 3 warm-up runs, the median of 20, inputs rotated over enough
//! random normal buffer sets that repeated runs do not find them in the L2.
//! Writes a table to stdout, `target/bench/ladder.json` and `target/bench/ladder.svg`.

use std::io::Write;

use gemm_ladder::measure::{verify_on, Bench, Problem, Reps};
use gemm_ladder::report::{json_str, line_chart, write_target};
use gemm_ladder::STEPS;
use gemm_runtime::spec::Layout;
use gemm_runtime::timing::time;
use gemm_runtime::{Dims, GemmError};

const SIZES: [(usize, usize, usize); 6] =
    [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096), (8192, 1024, 8192)];

/// Bytes of inputs to rotate through: well past the H100's 50 MB of L2.
const ROTATION_BYTES: usize = 256 << 20;

fn main() {
    // `cargo test --all-targets` runs bench binaries without `--bench`: the
    // benchmark needs a GPU and minutes, so it only runs under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("ladder_bench: a GPU benchmark; run it with `cargo bench --bench ladder_bench`");
        return;
    }
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Input sets for `dims`: as many as fit ROTATION_BYTES, at least 2, at most 8.
fn rotation(bench: &Bench, dims: Dims) -> Result<Vec<Problem>, GemmError> {
    let bytes = 4 * (dims.m * dims.k + dims.k * dims.n);
    let sets = (ROTATION_BYTES / bytes).clamp(2, 8);
    (0..sets).map(|i| Problem::new(bench, [Layout::RowMajor; 3], dims, 1000 + i as u64)).collect()
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo bench` passes `--bench`; anything else names steps to keep.
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let steps: Vec<_> = STEPS.iter().filter(|s| only.is_empty() || only.iter().any(|o| o == s.name)).collect();
    let bench = Bench::open()?;
    let reps = Reps::default();
    let driver = gemm_runtime::device::driver_version().unwrap_or_else(|_| "?".into());
    let total = SIZES.len() * (steps.len() + 1);
    let mut done = 0;
    // results[size][step] = (TFLOP/s, rel. error); cublas[size]
    let mut results = vec![vec![None; steps.len()]; SIZES.len()];
    let mut cublas = vec![0.0; SIZES.len()];
    for (si, &(m, n, k)) in SIZES.iter().enumerate() {
        let dims = Dims::new(m, n, k);
        let mut progress = |what: &str| {
            done += 1;
            eprint!("\r[{done:>3}/{total}] {m}x{n}x{k} {what:<24}");
            let _ = std::io::stderr().flush();
        };
        progress("inputs and cuBLAS");
        let sets = rotation(&bench, dims)?;
        let reference = sets[0].reference(&bench)?;
        let mut c = sets[0].poisoned_c(&bench)?;
        let t = time(bench.stream(), reps.warmup, reps.runs, |i| {
            let p = &sets[i % sets.len()];
            bench.blas.sgemm([Layout::RowMajor; 3], &p.a, &p.b, &mut c, dims)
        })?;
        cublas[si] = t.tflops(dims.flops());
        for (i, step) in steps.iter().enumerate() {
            progress(step.name);
            let rel_err = match verify_on(&bench, step.kernel, &sets[0], &reference) {
                Ok(e) => e,
                Err(gemm_ladder::measure::Failure::Gpu(GemmError::UnsupportedSize { .. })) => continue,
                Err(e) => return Err(e.into()),
            };
            let t = time(bench.stream(), reps.warmup, reps.runs, |r| {
                let p = &sets[r % sets.len()];
                step.kernel.launch(bench.stream(), &p.a, &p.b, &mut c, dims)
            })?;
            results[si][i] = Some((t.tflops(dims.flops()), rel_err));
        }
    }
    eprintln!();

    // The table: one row per step, one column per size.
    let labels: Vec<String> = SIZES.iter().map(|&(m, n, k)| if m == n && n == k { format!("{m}^3") } else { format!("{m}x{n}x{k}") }).collect();
    println!("{} (CUDA driver {driver}); TFLOP/s (% of cuBLAS in the same run); median of {} runs\n", bench.gpu.name, reps.runs);
    println!("| step | {} |", labels.join(" | "));
    println!("|---|{}", "---:|".repeat(SIZES.len()));
    println!("| cuBLAS sgemm | {} |", cublas.iter().map(|t| format!("{t:.2}")).collect::<Vec<_>>().join(" | "));
    for (i, step) in steps.iter().enumerate() {
        let cells: Vec<String> = (0..SIZES.len())
            .map(|si| results[si][i].map_or("n/a".into(), |(t, _)| format!("{t:.2} ({:.1}%)", 100.0 * t / cublas[si])))
            .collect();
        println!("| {} | {} |", step.name, cells.join(" | "));
    }

    let mut json = format!(
        "{{\n  \"device\": {},\n  \"driver\": {},\n  \"date\": {},\n  \"runs\": {},\n  \"sizes\": [\n",
        json_str(&bench.gpu.name),
        json_str(&driver),
        json_str(&today()),
        reps.runs
    );
    for (si, &(m, n, k)) in SIZES.iter().enumerate() {
        let steps_json: Vec<String> = steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                results[si][i].map(|(t, e)| {
                    format!("{{\"step\": {}, \"tflops\": {t:.3}, \"pct_of_cublas\": {:.2}, \"rel_err\": {e:.3e}}}", json_str(s.name), 100.0 * t / cublas[si])
                })
            })
            .collect();
        json += &format!(
            "    {{\"m\": {m}, \"n\": {n}, \"k\": {k}, \"cublas_tflops\": {:.3}, \"steps\": [\n      {}\n    ]}}{}\n",
            cublas[si],
            steps_json.join(",\n      "),
            if si + 1 < SIZES.len() { "," } else { "" }
        );
    }
    json += "  ]\n}\n";
    let series: Vec<(String, Vec<Option<f64>>)> =
        steps.iter().enumerate().map(|(i, s)| (s.name.to_string(), (0..SIZES.len()).map(|si| results[si][i].map(|r| r.0)).collect())).collect();
    let svg = line_chart(&format!("f32 GEMM ladder, {}", bench.gpu.name), &labels, &series, ("cuBLAS sgemm", &cublas));
    let (j, s) = (write_target("bench/ladder.json", &json)?, write_target("bench/ladder.svg", &svg)?);
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
