//! The examples' shared command line: run some ladder steps at one size and
//! print a table beside cuBLAS, measured in the same process.

use gemm_runtime::spec::Layout;
use gemm_runtime::Dims;

use crate::measure::{measure, time_cublas, Bench, Failure, Reps};
use crate::Step;

/// `[SIZE | M N K]` from the command line; 4096 cubed by default.
pub fn dims_from_args() -> Result<Dims, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let nums: Result<Vec<usize>, _> = args.iter().map(|a| a.parse::<usize>()).collect();
    let dims = match nums.map_err(|_| format!("expected SIZE or M N K as numbers, got {args:?}"))?.as_slice() {
        [] => Dims::new(4096, 4096, 4096),
        [s] => Dims::new(*s, *s, *s),
        [m, n, k] => Dims::new(*m, *n, *k),
        other => return Err(format!("expected SIZE or M N K, got {} numbers", other.len())),
    };
    if dims.m == 0 || dims.n == 0 || dims.k == 0 {
        return Err("every size must be at least 1".into());
    }
    Ok(dims)
}

/// Runs `steps`, prints the table, and writes it as `target/<name>.md` with a
/// bar chart `target/<name>.svg`; on any failure prints one line and exits 1.
pub fn main_for(steps: &[&Step], name: &str) {
    if let Err(e) = run(steps, name) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(steps: &[&Step], name: &str) -> Result<(), Box<dyn std::error::Error>> {
    let dims = dims_from_args()?;
    let bench = Bench::open()?;
    let reps = Reps::default();
    let driver = gemm_runtime::device::driver_version().unwrap_or_else(|_| "?".into());
    let heading = format!(
        "{} (sm_{}{}, CUDA driver {driver}), C = A * B in f32, m = {}, n = {}, k = {}; median of {} runs after {} warm-up",
        bench.gpu.name, bench.gpu.capability.0, bench.gpu.capability.1, dims.m, dims.n, dims.k, reps.runs, reps.warmup
    );
    println!("{heading}\n");
    let cublas = time_cublas(&bench, [Layout::RowMajor; 3], dims, reps)?.tflops(dims.flops());
    let mut table = vec![
        "| step | TFLOP/s | % of cuBLAS | speed-up over previous | rel. error vs cuBLAS | seed's figure |".to_string(),
        "|---|---:|---:|---:|---:|---|".to_string(),
        format!("| cuBLAS sgemm | {cublas:.2} | 100.0% | | | |"),
    ];
    for line in &table {
        println!("{line}");
    }
    let mut bars = Vec::new();
    let mut prev: Option<f64> = None;
    for step in steps {
        let line = match measure(&bench, step.kernel, dims, reps) {
            Ok(m) => {
                let speedup = prev.map_or(String::new(), |p| format!("{:.2}x", m.tflops / p));
                prev = Some(m.tflops);
                bars.push((step.name.to_string(), m.tflops));
                format!(
                    "| {} | {:.2} | {:.1}% | {speedup} | {:.1e} | {} |",
                    step.name,
                    m.tflops,
                    100.0 * m.tflops / cublas,
                    m.rel_err,
                    step.seed
                )
            }
            Err(Failure::Gpu(gemm_runtime::GemmError::UnsupportedSize { rule, .. })) => {
                format!("| {} | skipped: {rule} | | | | {} |", step.name, step.seed)
            }
            Err(e) => return Err(e.into()),
        };
        println!("{line}");
        table.push(line);
    }
    let md = format!("{heading}\n\n{}\n", table.join("\n"));
    let title = format!("{} TFLOP/s, {}x{}x{} f32, {}", name, dims.m, dims.n, dims.k, bench.gpu.name);
    let svg = crate::report::bar_chart(&title, &bars, ("cuBLAS", cublas));
    let (md_path, svg_path) = (crate::report::write_target(&format!("{name}.md"), &md)?, crate::report::write_target(&format!("{name}.svg"), &svg)?);
    println!("\nwrote {} and {}", md_path.display(), svg_path.display());
    Ok(())
}
