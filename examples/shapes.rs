//! Ladder steps over the twelve shapes the Hopper path is judged on (square,
//! LLM projections, deep K), each verified against cuBLAS and timed beside
//! it in its types and layouts, with the geometric mean of the ratios.
//! `cargo run --release --example shapes [STEP ...]` (default: tma_store)

use gemm_ladder::measure::{config, describe, measure, padded_dims, time_cublas_typed, Bench, Reps};

/// (M, N, K); 8192x28672x8192 fits the H100's 80 GB with room to spare.
const SHAPES: [(usize, usize, usize); 12] = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (2048, 2048, 2048),
    (4096, 11008, 4096),
    (4096, 4096, 11008),
    (8192, 28672, 8192),
    (16384, 4096, 4096),
    (4096, 16384, 4096),
    (2048, 2048, 16384),
    (6144, 6144, 6144),
    (4096, 14336, 4096),
    (3072, 3072, 12288),
];

fn main() {
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        names.push("tma_store".into());
    }
    if let Err(e) = run(&names) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(names: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    let reps = Reps::default();
    for name in names {
        let step = gemm_ladder::steps::step(name).ok_or_else(|| format!("no ladder step named {name}"))?;
        let cfg = config(step.kernel);
        let s = &step.kernel.spec;
        println!("{name} on {} against cuBLAS {}, median of {} runs\n", bench.gpu.name, describe(cfg), reps.runs);
        println!("| M x N x K | cuBLAS TFLOP/s | {name} TFLOP/s | % of cuBLAS |");
        println!("|---|---:|---:|---:|");
        let mut log_sum = 0.0;
        for (m, n, k) in SHAPES {
            let dims = padded_dims(m, n, k, [s.a.layout, s.b.layout, s.c.layout]);
            let cublas = time_cublas_typed(&bench, cfg.0, cfg.1, dims, reps)?.tflops(dims.flops());
            let ours = measure(&bench, step.kernel, dims, reps)?.tflops;
            log_sum += (ours / cublas).ln();
            println!("| {m} x {n} x {k} | {cublas:.2} | {ours:.2} | {:.1}% |", 100.0 * ours / cublas);
        }
        println!("| geometric mean | | | {:.1}% |\n", 100.0 * (log_sum / SHAPES.len() as f64).exp());
    }
    Ok(())
}
