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
    match nums.map_err(|_| format!("expected SIZE or M N K as numbers, got {args:?}"))?.as_slice() {
        [] => Ok(Dims::new(4096, 4096, 4096)),
        [s] => Ok(Dims::new(*s, *s, *s)),
        [m, n, k] => Ok(Dims::new(*m, *n, *k)),
        other => Err(format!("expected SIZE or M N K, got {} numbers", other.len())),
    }
}

/// Runs `steps` and prints the table; on any failure prints one line and exits 1.
pub fn main_for(steps: &[&Step]) {
    if let Err(e) = run(steps) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(steps: &[&Step]) -> Result<(), Box<dyn std::error::Error>> {
    let dims = dims_from_args()?;
    let bench = Bench::open()?;
    let reps = Reps::default();
    let driver = gemm_runtime::device::driver_version().unwrap_or_else(|_| "?".into());
    println!(
        "{} (sm_{}{}, CUDA driver {driver}), C = A * B in f32, m = {}, n = {}, k = {}; median of {} runs after {} warm-up",
        bench.gpu.name, bench.gpu.capability.0, bench.gpu.capability.1, dims.m, dims.n, dims.k, reps.runs, reps.warmup
    );
    let cublas = time_cublas(&bench, [Layout::RowMajor; 3], dims, reps)?.tflops(dims.flops());
    println!();
    println!("| step | TFLOP/s | % of cuBLAS | speed-up over previous | rel. error vs cuBLAS | seed's figure |");
    println!("|---|---:|---:|---:|---:|---|");
    println!("| cuBLAS sgemm | {cublas:.2} | 100.0% | | | |");
    let mut prev: Option<f64> = None;
    for step in steps {
        let m = match measure(&bench, step.kernel, dims, reps) {
            Ok(m) => m,
            Err(Failure::Gpu(gemm_runtime::GemmError::UnsupportedSize { rule, .. })) => {
                println!("| {} | skipped: {rule} | | | | {} |", step.name, step.seed);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let speedup = prev.map_or(String::new(), |p| format!("{:.2}x", m.tflops / p));
        println!(
            "| {} | {:.2} | {:.1}% | {speedup} | {:.1e} | {} |",
            step.name,
            m.tflops,
            100.0 * m.tflops / cublas,
            m.rel_err,
            step.seed
        );
        prev = Some(m.tflops);
    }
    Ok(())
}
