//! A Megatron MLP block (`x -> gelu(x W1^T + b1) -> W2^T + b2`, bf16) split
//! over every GPU this machine has, beside the same block on one GPU.
//! `cargo run --release -p gemm-tp --example tp_mlp`
//!
//! For each size (8192 and 1024 tokens, hidden 8192, ffn 28672: a
//! 70B-class layer) and GPU count it prints, for one chunk (the GEMMs,
//! then the all-reduce), for 2 and 4 chunks asked for (each chunk's
//! all-reduce beside the next chunk's GEMMs, the tokens cut as
//! `TpMlp::plan` cuts them: the rows of each chunk printed) and for 2
//! equal chunks: the block's time, TFLOP/s a
//! GPU, the speed-up over one GPU (holding the whole block), and how much
//! of the all-reduce's time alone the overlap hid: (one chunk - this) /
//! all-reduce alone. These forms and the all-reduce alone are timed in
//! turns, a run of each a round, each round in another order, so that the
//! GPUs' clocks drifting under their power cap move them all alike. Then
//! one chunk again, timed on its own as `examples/tp_mlp.py` times
//! PyTorch's block, and the all-reduce of the output alone with its bus
//! bandwidth as nccl-tests reports it (bytes x 2 (p - 1) / p / time).
//!
//! `examples/tp_mlp.py` times the same block in PyTorch, written the plain
//! way (the GEMMs, an unfused GELU, a blocking all-reduce), for a
//! comparison on the same machine: `torchrun --nproc_per_node=N
//! gemm-tp/examples/tp_mlp.py`.

use std::time::Instant;

use gemm_runtime::cudarc::driver::{CudaContext, CudaSlice};
use gemm_runtime::{bf16, Dims};
use gemm_tp::kernels::{linear_bias, linear_bias_gelu, TILE_M};
use gemm_tp::{ChunkPlan, MlpShape, TpError, TpGroup, TpMlp};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rand_distr::StandardNormal;

fn normal(len: usize, seed: u64, scale: f32) -> Vec<bf16> {
    StdRng::seed_from_u64(seed).sample_iter::<f32, _>(StandardNormal).take(len).map(|x| bf16::from_f32(x * scale)).collect()
}

/// The median time in ms of each of `forms` forms, `run(i)` running form
/// i once: timed in `rounds` turns of one run each after one untimed turn,
/// each turn starting one form further on (a form ran 15% slower where it
/// always followed the block on one GPU), `sync` waiting for every GPU
/// after each run (host time: the block spans GPUs).
fn medians_in_turns(
    rounds: usize,
    forms: usize,
    mut run: impl FnMut(usize) -> Result<(), TpError>,
    sync: &dyn Fn() -> Result<(), TpError>,
) -> Result<Vec<f64>, TpError> {
    let mut times = vec![Vec::with_capacity(rounds); forms];
    for round in 0..=rounds {
        for i in (0..forms).map(|i| (i + round) % forms) {
            let start = Instant::now();
            run(i)?;
            sync()?;
            if round > 0 {
                times[i].push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    Ok(times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), TpError> {
    let gpus = CudaContext::device_count()? as usize;
    let shape = MlpShape { hidden: 8192, ffn: 28672 };
    let (h, f) = (shape.hidden, shape.ffn);
    println!("Megatron MLP block, bf16, hidden {h}, ffn {f}; {gpus} GPU(s)\n");
    let w1 = normal(f * h, 1, 1.0 / (h as f32).sqrt());
    let b1 = normal(f, 2, 0.1);
    let w2 = normal(h * f, 3, 1.0 / (f as f32).sqrt());
    let b2 = normal(h, 4, 0.1);
    println!("| tokens | GPUs | chunks asked for | rows a chunk | ms | TFLOP/s a GPU | speed-up over one GPU | all-reduce hidden |");
    println!("|---:|---:|---:|---|---:|---:|---:|---:|");
    let mut alone = Vec::new();
    let mut nccl = None;
    for m in [8192usize, 1024] {
        let flops = 2.0 * 2.0 * (m * h * f) as f64;
        let x = normal(m * h, 5, 1.0);
        // one GPU holding the whole block: the same kernels, no communication
        let ctx = CudaContext::new(0)?;
        let s = ctx.default_stream();
        let (dw1, db1, dw2, db2, dx) = (s.clone_htod(&w1)?, s.clone_htod(&b1)?, s.clone_htod(&w2)?, s.clone_htod(&b2)?, s.clone_htod(&x)?);
        let mut act = s.alloc_zeros::<bf16>(m * f)?;
        let mut out = s.alloc_zeros::<bf16>(m * h)?;
        let mut one = || -> Result<(), TpError> {
            linear_bias_gelu(&s, &dx, &dw1, &mut act, &db1, Dims::new(m, f, h))?;
            linear_bias(&s, &act, &dw2, &mut out, &db2, Dims::new(m, h, f))?;
            Ok(s.synchronize()?)
        };
        if gpus == 1 {
            let one = medians_in_turns(20, 1, |_| one(), &|| Ok(()))?[0];
            println!("| {m} | 1 | 1 | {m} | {one:.3} | {:.1} | 1.00 | |", flops / (one * 1e-3) / 1e12);
        }
        for world in (2..=gpus).filter(|w| w.is_power_of_two()) {
            // ANCHOR: setup
            // ranks 0..world on GPUs 0..world; each rank's slices of the weights on its GPU
            let group = TpGroup::new(&(0..world).collect::<Vec<_>>())?;
            // (NCCL is loaded by now: the group made its communicators)
            nccl = Some(gemm_runtime::cudarc::nccl::result::get_nccl_version()?);
            let mlp = TpMlp::from_host(&group, shape, &w1, &b1, &w2, &b2)?;
            // the tokens on every rank, and a buffer there for the block's output
            let xs: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).clone_htod(&x)).collect::<Result<_, _>>()?;
            let mut outs: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).alloc_zeros::<bf16>(m * h)).collect::<Result<_, _>>()?;
            let xr: Vec<&CudaSlice<bf16>> = xs.iter().collect();
            // ANCHOR_END: setup
            // the all-reduce of the block's output alone
            let mut bufs: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).alloc_zeros::<bf16>(m * h)).collect::<Result<_, _>>()?;
            let chunk_counts = [1, 2, 4];
            // then 2 equal chunks, where the plan cuts otherwise (or keeps one chunk)
            let equal = ChunkPlan::new(m, 2, TILE_M)?;
            let forms = chunk_counts.len() + 3;
            let (reduce, single) = (chunk_counts.len() + 1, chunk_counts.len() + 2);
            let run = |i: usize| match chunk_counts.get(i) {
                Some(&c) => {
                    // ANCHOR: forward
                    let mut or: Vec<&mut CudaSlice<bf16>> = outs.iter_mut().collect();
                    mlp.forward(&group, &xr, &mut or, m, c)
                    // ANCHOR_END: forward
                }
                None if i == chunk_counts.len() => mlp.forward_planned(&group, &xr, &mut outs.iter_mut().collect::<Vec<_>>(), &equal),
                None if i == reduce => group.all_reduce(&mut bufs.iter_mut().collect::<Vec<_>>(), m * h),
                None => one(),
            };
            let t = medians_in_turns(20, forms, run, &|| group.synchronize())?;
            let (serial, comm, one) = (t[0], t[reduce], t[single]);
            if world == 2 {
                println!("| {m} | 1 | 1 | {m} | {one:.3} | {:.1} | 1.00 | |", flops / (one * 1e-3) / 1e12);
            }
            let mut plans = chunk_counts.iter().map(|&c| Ok((c.to_string(), mlp.plan(&group, m, c)?))).collect::<Result<Vec<_>, TpError>>()?;
            plans.push(("2 equal".into(), equal));
            for ((asked, plan), &ms) in plans.iter().zip(&t) {
                let rows: Vec<String> = plan.ranges().iter().map(|(a, b)| (b - a).to_string()).collect();
                println!(
                    "| {m} | {world} | {asked} | {} | {ms:.3} | {:.1} | {:.2} | {:.0}% |",
                    rows.join(", "),
                    flops / world as f64 / (ms * 1e-3) / 1e12,
                    one / ms,
                    100.0 * (serial - ms) / comm
                );
            }
            // one chunk again, timed on its own as tp_mlp.py times PyTorch's block
            let own = medians_in_turns(
                15,
                1,
                |_| {
                    let mut or: Vec<&mut CudaSlice<bf16>> = outs.iter_mut().collect();
                    mlp.forward(&group, &xr, &mut or, m, 1)
                },
                &|| group.synchronize(),
            )?[0];
            let bytes = (m * h * 2) as f64;
            alone.push((m, world, own, comm, bytes * 2.0 * (world - 1) as f64 / world as f64 / (comm * 1e-3) / 1e9));
        }
    }
    println!("\n| tokens | GPUs | one chunk, timed on its own: ms | all-reduce of the output alone: ms | bus GB/s |");
    println!("|---:|---:|---:|---:|---:|");
    for (m, world, own, comm, bus) in alone {
        println!("| {m} | {world} | {own:.3} | {comm:.3} | {bus:.0} |");
    }
    if let Some(v) = nccl {
        println!("\nNCCL {}.{}.{}", v / 10000, v % 10000 / 100, v % 100);
    }
    Ok(())
}
