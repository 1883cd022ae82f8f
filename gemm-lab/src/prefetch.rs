//! `tma(prefetch = ..)` alone: points of the Hopper decode kernels, each
//! as the tuner has it and with 0, 2, 3 and 4 K steps prefetched, launched
//! dependent back to back at M = 1 over the decode weights, one process.
//! `cargo run --release -p gemm-lab -- prefetch`
//!
//! A dependent launch (`Kernel::launch_dependent`) starts while the
//! stream's previous kernel finishes. With `prefetch = P` its blocks ask
//! the L2 for the first P K steps of their tiles before they wait for that
//! kernel, and let the next launch start once they have issued their last
//! copy; with 0 the next launch starts as the blocks end. Timed as `decode`
//! times dependent launches: ten back to back between two events, the
//! median of 20 runs, over copies of the inputs that pass the L2 four
//! times, % of the H100's HBM bandwidth.

use gemm_ladder::decode::{decode_cluster, decode_swapped};
use gemm_ladder::measure::{padded_dims, Bench, Problem, Reps};
use gemm_runtime::internal::timing::time_back_to_back;
use gemm_runtime::spec::{KernelSpec, Staging};
use gemm_runtime::{Kernel, Tuned};

/// (N, K) of the weights, bf16, stored `[N, K]` row-major (the swapped product's A).
const WEIGHTS: [(usize, usize); 4] = [(4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096)];
const BATCH: usize = 10;
const PREFETCH: [u32; 4] = [0, 2, 3, 4];

/// The points timed: a space, and what the point's name holds (tile, threads, stages).
static POINTS: [(&Tuned, &str); 3] = [
    (&decode_swapped::KERNEL, "_b64x8x256_t128__w64x8_i1x1__wgmma64x8x16__tma_s4_"),
    (&decode_swapped::KERNEL, "_b128x8x128_t256__w64x8_i1x1__wgmma64x8x16__tma_s3_"),
    (&decode_cluster::KERNEL, "_b64x8x256_t256__w64x8_i1x1__wgmma64x8x16__tma_s4_"),
];

pub fn main(_args: Vec<String>) {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// `spec` with `prefetch` K steps prefetched.
fn prefetching(spec: &KernelSpec, steps: u32) -> KernelSpec {
    let mut s = spec.clone();
    if let Staging::Tma { prefetch, .. } = &mut s.staging {
        *prefetch = steps;
    }
    s
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    // the device's own memory peak, and inputs rotated through four times its L2
    let hbm = bench.facts.memory_bytes_per_s();
    let rotate = 4.0 * bench.facts.l2_bytes as f64;
    println!("{}\n", gemm_ladder::peak::memory_line(&bench)?);
    if bench.gpu.capability != (9, 0) {
        return Err("the decode kernels that prefetch are sm_90a: they need compute capability 9.0".into());
    }
    let reps = Reps::default();
    let mut rows = Vec::new();
    for (tuned, holds) in POINTS {
        let spec =
            tuned.points().iter().find(|s| s.kernel_name().contains(holds)).ok_or_else(|| format!("no point of {} holds {holds}", tuned.name()))?;
        let kernels: Vec<Kernel> = PREFETCH.iter().map(|&p| Kernel::from_spec(prefetching(spec, p))).collect::<Result<_, _>>()?;
        let stages = match spec.staging {
            Staging::Tma { stages, .. } => stages,
            _ => 0,
        };
        let b = spec.block;
        rows.push((format!("`{}` {} x {} x {}, {stages} stages", tuned.name(), b.m, b.n, b.k.unwrap_or(0)), kernels));
    }
    println!("M = 1 launched dependent on {}, % of HBM with 0, 2, 3 and 4 K steps prefetched\n", bench.gpu.name);
    println!("| weight N x K | point | {} |", PREFETCH.map(|p| p.to_string()).join(" | "));
    println!("|---|---|{}", "---:|".repeat(PREFETCH.len()));
    for (n, k) in WEIGHTS {
        let first = &rows[0].1[0];
        let dims = padded_dims(n, 1, k, [first.spec.a.layout, first.spec.b.layout, first.spec.c.layout]);
        let bytes = 2.0 * (n * k + k + n) as f64;
        let copies = (rotate / bytes).ceil() as usize;
        let mut sets = Vec::new();
        for i in 0..copies {
            let p = Problem::for_kernel(&bench, first, dims, 5 + i as u64)?;
            let c = p.poisoned_c(&bench)?;
            sets.push((p, c));
        }
        for (label, kernels) in &rows {
            let mut cells = Vec::new();
            for kernel in kernels {
                // checked against cuBLAS first, on the first copy
                let (p, c) = &mut sets[0];
                let reference = p.reference(&bench)?;
                p.launch_dependent(&bench, kernel, c)?;
                let err = gemm_runtime::internal::data::relative_error(&c.to_f32(bench.stream())?[..n], &reference[..n])?;
                if err > gemm_runtime::internal::data::tolerance(gemm_runtime::spec::Elem::Bf16) {
                    return Err(format!("{} at {n} x {k}: relative error {err:.1e} against cuBLAS", kernel.name).into());
                }
                let t = time_back_to_back(bench.stream(), reps.warmup, reps.runs, BATCH, |i| {
                    let (p, c) = &mut sets[i % copies];
                    p.launch_dependent(&bench, kernel, c)
                })?;
                cells.push(format!("{:.1}%", 100.0 * bytes / (t.median_ms() * 1e-3) / hbm));
            }
            println!("| {n} x {k} | {label} | {} |", cells.join(" | "));
        }
    }
    Ok(())
}
