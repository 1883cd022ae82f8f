//! The order in which a decode step reads its weight, measured alone: a
//! kernel that only reads a row-major weight in the units a decode kernel's
//! K steps take (64 rows x 512 bytes), handed to the blocks in runs of
//! several lengths, with 64 to 256 KB of loads in flight an SM.
//! `cargo run --release -p gemm-lab -- read-orders [-- --ring] [--split-source FILE]...`
//! (`--ring`: the ring of stages alone; `--split-source FILE`: a hand-edit of
//! `decode_split`'s 64 x 8 x 256 point, timed beside it)
//!
//! A run of a whole tile's K steps is `decode_swapped`'s order (a block a
//! tile), a run of units / blocks stream-K's (`decode_split`: a share a
//! block), a run of one unit puts each tile's K steps on neighbouring
//! blocks, so that the GPU reads whole rows of the weight at once. Each
//! unit is read whole rows first (a warp's load a row's 512 bytes) and, as
//! TMA copies a tile under the 128-byte swizzle, in boxes 128 bytes wide.
//! Then each weight through a ring of stages in shared memory filled by
//! TMA, as the Hopper decode kernels fill theirs, with nothing computed: a
//! unit in the four 128-byte-wide boxes of the swizzle, or in one box of
//! its rows' whole 512 bytes.

use gemm_ladder::measure::{Bench, Problem};
use gemm_ladder::peak::{random_buffers, read_units, sm_count, tma_ring, UNIT_CHUNKS, UNIT_ROWS};
use gemm_runtime::internal::timing::{time, time_back_to_back};
use gemm_runtime::spec::Staging;
use gemm_runtime::Dims;

/// (N, K) of the decode weights, bf16, stored `[N, K]` row-major.
const WEIGHTS: [(usize, usize); 3] = [(4096, 11008), (11008, 4096), (14336, 4096)];
const BATCH: usize = 10;
pub fn main(args: Vec<String>) {
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    // the device's own memory peak, and inputs rotated through four times its L2
    let hbm = bench.facts.memory_bytes_per_s();
    let rotate = 4.0 * bench.facts.l2_bytes as f64;
    println!("{}\n", gemm_ladder::peak::memory_line(&bench)?);
    let sms = sm_count(&bench)?;
    println!(
        "Reading a weight in units of {UNIT_ROWS} rows x {} bytes on {} (32 KB of loads in flight a block; median of 20 runs; a launch between two events, then {BATCH} back to back)\n",
        UNIT_CHUNKS * 16,
        bench.gpu.name
    );
    println!("| weight N x K | order | units a run | blocks an SM | box, bytes | GB/s | % of HBM | back to back: GB/s | % of HBM |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    // `--ring`: the ring alone
    let orders = !args.iter().any(|a| a == "--ring");
    for (n, k) in WEIGHTS.into_iter().filter(|_| orders) {
        let (rows, row_bytes) = (n, 2 * k);
        let (tiles, steps) = ((rows / UNIT_ROWS) as i64, (row_bytes / 16 / UNIT_CHUNKS) as i64);
        let buffers = random_buffers(&bench, rows * row_bytes, (rotate / (rows * row_bytes) as f64).ceil() as usize)?;
        for per_sm in [2u32, 4, 8] {
            let blocks = per_sm * sms;
            let share = (tiles * steps + blocks as i64 - 1) / blocks as i64;
            let orders = [("a tile a block", steps), ("a share a block", share), ("runs", 2), ("runs", 1)];
            for ((name, run), box_chunks) in orders.into_iter().flat_map(|o| [(o, UNIT_CHUNKS), (o, 8)]) {
                let (one, many) = read_units(&bench, &buffers, (rows, row_bytes), blocks, run, box_chunks, BATCH)?;
                println!(
                    "| {n} x {k} | {name} | {run} | {per_sm} | {} | {:.0} | {:.1}% | {:.0} | {:.1}% |",
                    16 * box_chunks,
                    one / 1e9,
                    100.0 * one / hbm,
                    many / 1e9,
                    100.0 * many / hbm
                );
            }
        }
    }
    // the same weights through a ring of stages filled by TMA, as the decode kernels read them
    println!("\nThrough a ring of stages filled by TMA, one block an SM, a share a block, nothing computed (units of {UNIT_ROWS} x 256 elements)\n");
    println!("| weight N x K | boxes a unit | stages | GB/s | % of HBM | back to back: GB/s | % of HBM |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (n, k) in WEIGHTS {
        let buffers = random_buffers(&bench, 2 * n * k, (rotate / (2 * n * k) as f64).ceil() as usize)?;
        let shapes = [
            (4, 0, false, "4 of 64 x 64, 128-byte swizzle"),
            (1, 0, false, "1 of 256 x 64, no swizzle"),
            (4, 8, false, "4 of 64 x 64, and x's 4 of 64 x 8"),
            (4, 8, true, "the same, each released once the next has landed"),
        ];
        for (boxes, x_rows, lag, label) in shapes {
            for stages in [3, 4, 6] {
                let (one, many) = tma_ring(&bench, &buffers, (n, k), (boxes, x_rows, lag), stages, BATCH)?;
                println!(
                    "| {n} x {k} | {label} | {stages} | {:.0} | {:.1}% | {:.0} | {:.1}% |",
                    one / 1e9,
                    100.0 * one / hbm,
                    many / 1e9,
                    100.0 * many / hbm
                );
            }
        }
    }
    // beside them, decode_split's point of the same units (64 x 8 x 256 tiles, four stages) at M = 1,
    // launched as any kernel is, on one copy of each weight (each larger than the L2)
    let point = gemm_ladder::decode::decode_split::KERNEL
        .kernels()
        .find(|k| {
            k.spec.block.m == 64 && k.spec.block.n == 8 && k.spec.block.k == Some(256) && matches!(k.spec.staging, Staging::Tma { stages: 4, .. })
        })
        .ok_or("decode_split's space has no 64 x 8 x 256 point with four stages")?;
    // and hand-edits of its CUDA (`--split-source FILE`, repeatable: the point's kernel, edited)
    if args.last().is_some_and(|a| a == "--split-source") {
        return Err("--split-source needs a FILE: a hand-edit of decode_split's 64 x 8 x 256 point".into());
    }
    let mut kernels = vec![("as generated".to_string(), None)];
    for path in args.windows(2).filter(|w| w[0] == "--split-source").map(|w| w[1].clone()) {
        let source = std::fs::read_to_string(&path).map_err(|e| format!("--split-source {path}: {e}"))?;
        let edited = gemm_ladder::variants::hand_edited(point, source, None, None).map_err(|e| format!("--split-source {path}: {e}"))?;
        kernels.push((path, Some(edited)));
    }
    println!("\n`decode_split` at M = 1, its 64 x 8 x 256 point with four stages\n");
    println!("| kernel | weight N x K | relative error | GB/s | % of HBM | back to back: GB/s | % of HBM |\n|---|---|---:|---:|---:|---:|---:|");
    for (n, k) in WEIGHTS {
        for (name, edited) in &kernels {
            let kernel = edited.as_ref().unwrap_or(point);
            let dims = Dims::new(n, 1, k);
            // (an edit that computes nothing shows here as a large error)
            let err = gemm_ladder::measure::verify(&bench, kernel, dims, 3).map_or_else(|e| format!("{e}"), |e| format!("{e:.1e}"));
            let p = Problem::for_kernel(&bench, kernel, dims, 3)?;
            let mut c = p.poisoned_c(&bench)?;
            let one = time(bench.stream(), 3, 20, |_| p.launch(&bench, kernel, &mut c))?;
            let many = time_back_to_back(bench.stream(), 3, 20, BATCH, |_| p.launch(&bench, kernel, &mut c))?;
            let rate = |ms: f64| 2.0 * (n * k) as f64 / (ms * 1e-3);
            let (one, many) = (rate(one.median_ms()), rate(many.median_ms()));
            println!(
                "| {name} | {n} x {k} | {err} | {:.0} | {:.1}% | {:.0} | {:.1}% |",
                one / 1e9,
                100.0 * one / hbm,
                many / 1e9,
                100.0 * many / hbm
            );
        }
    }
    Ok(())
}
