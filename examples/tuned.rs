//! The tuned kernels (`src/tuned.rs`): for each size, the first launch
//! (which compiles and times every point of the space, unless the disk
//! holds the choice) until it returns and until its kernel is done, the
//! point chosen, and its speed beside cuBLAS.
//! `cargo run --release --example tuned [SIZE ...]`, SIZE N (cubed) or
//! MxNxK (default 4096 2048)
//!
//! Run it twice: the second process finds every choice on disk
//! (`GEMM_TILES_CACHE`), and its first launches tune nothing.

use std::time::Instant;

use gemm_ladder::measure::{describe, first_launch, time_cublas_typed, Bench, Problem, Reps};
use gemm_ladder::tuned::{hopper_tuned, mma_tuned, simt_tuned};
use gemm_runtime::internal::timing::time;
use gemm_runtime::{Dims, Tuned};

fn main() {
    let sizes = gemm_ladder::cli::sizes_or(&[(4096, 4096, 4096), (2048, 2048, 2048)]);
    if let Err(e) = run(&sizes) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(sizes: &[(usize, usize, usize)]) -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    let reps = Reps::default();
    println!("| kernel | size | first launch returned (ms) | first launch done (ms) | second (ms) | chosen point | TFLOP/s | cuBLAS | % of cuBLAS |");
    println!("|---|---:|---:|---:|---:|---|---:|---:|---:|");
    for tuned in [&simt_tuned::KERNEL, &mma_tuned::KERNEL, &hopper_tuned::KERNEL] {
        let first = tuned.kernel(0);
        if first.spec.arch == gemm_runtime::spec::Arch::Sm90a && bench.gpu.capability != (9, 0) {
            println!("| {} | | skipped: sm_90a kernels need compute capability 9.0 | | | | | | |", tuned.name());
            continue;
        }
        let s = &first.spec;
        let cfg = ([s.a.elem, s.b.elem, s.c.elem], [s.a.layout, s.b.layout, s.c.layout]);
        for &(m, n, k) in sizes {
            let dims = gemm_ladder::measure::padded_dims(m, n, k, cfg.1);
            let size = if m == n && n == k { format!("{m}^3") } else { format!("{m}x{n}x{k}") };
            let p = Problem::for_kernel(&bench, first, dims, 3)?;
            let mut c = p.poisoned_c(&bench)?;
            // milliseconds from the call to its return (the kernel enqueued: the
            // launch itself) and to the kernel's end
            let launch = |c: &mut _| -> Result<(f64, f64), Box<dyn std::error::Error>> {
                let t = Instant::now();
                p.launch_tuned(&bench, tuned, c)?;
                let returned = t.elapsed().as_secs_f64() * 1e3;
                bench.stream().synchronize().map_err(gemm_runtime::GemmError::from)?;
                Ok((returned, t.elapsed().as_secs_f64() * 1e3))
            };
            let (cold_returned, cold) = first_launch(bench.stream(), || launch(&mut c))?;
            let (_, warm) = launch(&mut c)?;
            let chosen = chosen_name(tuned, &bench, dims)?;
            let t = time(bench.stream(), reps.warmup, reps.runs, |_| p.launch_tuned(&bench, tuned, &mut c))?;
            let tflops = t.tflops(dims.flops());
            let cublas = time_cublas_typed(&bench, cfg.0, cfg.1, dims, reps)?.tflops(dims.flops());
            println!(
                "| {} | {size} | {cold_returned:.1} | {cold:.1} | {warm:.3} | `{chosen}` | {tflops:.2} | {cublas:.2} ({}) | {:.1}% |",
                tuned.name(),
                describe(cfg),
                100.0 * tflops / cublas
            );
        }
    }
    Ok(())
}

fn chosen_name(tuned: &Tuned, bench: &Bench, dims: Dims) -> Result<String, Box<dyn std::error::Error>> {
    Ok(tuned.chosen_for(bench.stream(), dims)?.map_or("?".to_string(), |k| k.name.to_string()))
}
