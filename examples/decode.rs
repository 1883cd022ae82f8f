//! Small-M (decode) shapes: M of 1 to 64 tokens against weights of N x K,
//! each kernel of `src/decode.rs` verified against cuBLAS and timed beside
//! it, with the bandwidth it reaches against the GPU's peak memory bandwidth
//! (read from its memory clock and bus width, printed beside what a copy reaches).
//! `cargo run --release --example decode [--tokens=1,8,..] [KERNEL ...]`
//! (default: every kernel, at M = 1, 8, 16, 32 and 64)
//!
//! `decode_mma` runs the product as written; `decode_swapped` and
//! `decode_split` (the same with stream-K over K) run its transpose
//! (`C^T = W^T x^T`), the same bytes and flops, timed beside cuBLAS on that
//! same transposed problem.
//!
//! Every figure is taken two ways: a launch between two events (its start
//! and drain counted, as a lone launch pays them) and ten launches back to
//! back between two events (as a model's decode step issues its kernels,
//! one launch's drain beside the next one's start). The Hopper kernels are
//! timed a third way: back to back as dependent launches
//! (`Tuned::launch_dependent`, tuned for such launches on its own), each
//! starting while the one before finishes.
//!
//! `decode_fp8` (e4m3 weight and tokens, a scale per output channel and per
//! token) runs the swapped form too, timed the same three ways beside
//! cuBLAS's bf16 GEMM on the same problem: the step it replaces.
//! `decode_fp8_sm89` (the same on Ada's mma.sync, the product as written)
//! is timed there two ways, on GPUs of compute capability 8.9 and later (a
//! Hopper GPU emulates its mmas).

use gemm_ladder::measure::{first_launch, padded_dims, Bench, Problem, Reps};
use gemm_runtime::internal::timing::{time, time_back_to_back};
use gemm_runtime::{Dims, Tuned};

/// Launches back to back in each timed run of the second way.
const BATCH: usize = 10;

const TOKENS: [usize; 5] = [1, 8, 16, 32, 64];
/// (N, K) of the weights.
const WEIGHTS: [(usize, usize); 4] = [(4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096)];

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    // the device's own memory peak, and inputs rotated through four times its L2
    let hbm = bench.facts.memory_bytes_per_s();
    let rotate = 4.0 * bench.facts.l2_bytes as f64;
    println!("{}\n", gemm_ladder::peak::memory_line(&bench)?);
    let reps = Reps::default();
    use gemm_ladder::decode::{decode_cluster, decode_mma, decode_split, decode_swapped};
    let kernels: [(&Tuned, bool); 4] =
        [(&decode_mma::KERNEL, false), (&decode_swapped::KERNEL, true), (&decode_split::KERNEL, true), (&decode_cluster::KERNEL, true)];
    let (flags, only): (Vec<String>, Vec<String>) = std::env::args().skip(1).partition(|a| a.starts_with("--"));
    let tokens = tokens(&flags)?;
    // what reading each weight alone reaches, timed the same way: the ceiling at M = 1
    println!(
        "Reading each weight alone on {} (a kernel of 16-byte loads and nothing else, the fastest of four shapes of it; median of 20 runs over copies that pass the L2 four times)\n",
        bench.gpu.name
    );
    println!(
        "| weight N x K | MiB | GB/s | % of HBM | back to back: GB/s | % of HBM | dependent: GB/s | % of HBM | each shape's GB/s (blocks an SM x threads, loads in flight) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for &(n, k) in &WEIGHTS {
        let bytes = 2 * n * k;
        let buffers = gemm_ladder::peak::random_buffers(&bench, bytes, (rotate / bytes as f64).ceil() as usize)?;
        let each = gemm_ladder::peak::read_ceiling(&bench, &buffers, BATCH)?;
        let read = each.iter().map(|r| r.0).fold(0.0, f64::max);
        let batched = each.iter().map(|r| r.1).fold(0.0, f64::max);
        let dependent = each.iter().map(|r| r.2).fold(0.0, f64::max);
        let shapes: Vec<String> =
            gemm_ladder::peak::READ_SHAPES.iter().zip(&each).map(|((b, t, u), r)| format!("{b} x {t}, {u}: {:.0}", r.0 / 1e9)).collect();
        println!(
            "| {n} x {k} | {} | {:.0} | {:.1}% | {:.0} | {:.1}% | {:.0} | {:.1}% | {} |",
            bytes >> 20,
            read / 1e9,
            100.0 * read / hbm,
            batched / 1e9,
            100.0 * batched / hbm,
            dependent / 1e9,
            100.0 * dependent / hbm,
            shapes.join("; ")
        );
    }
    println!();
    // the 8-bit kernels: Hopper's (swapped), Ada's (as written)
    let fp8: [(&Tuned, bool); 2] = [(&gemm_ladder::decode::decode_fp8::KERNEL, true), (&gemm_ladder::decode::decode_fp8_sm89::KERNEL, false)];
    let known = |n: &str| kernels.iter().chain(&fp8).any(|(t, _)| t.name() == n);
    if let Some(unknown) = only.iter().find(|n| !known(n)) {
        return Err(format!("no kernel {unknown} (decode_mma, decode_swapped, decode_split, decode_cluster, decode_fp8, decode_fp8_sm89)").into());
    }
    for (tuned, swapped) in kernels.into_iter().filter(|(t, _)| only.is_empty() || only.iter().any(|n| n == t.name())) {
        let first = tuned.kernel(0);
        if first.spec.arch == gemm_runtime::spec::Arch::Sm90a && bench.gpu.capability != (9, 0) {
            println!(
                "{}: skipped (sm_90a kernels need compute capability 9.0; {} is {}.{})\n",
                tuned.name(),
                bench.gpu.name,
                bench.gpu.capability.0,
                bench.gpu.capability.1
            );
            continue;
        }
        let s = &first.spec;
        let cfg = ([s.a.elem, s.b.elem, s.c.elem], [s.a.layout, s.b.layout, s.c.layout]);
        println!(
            "{} on {} (bf16; median of {} runs after tuning, over copies of the inputs that pass the L2 four times)\n",
            tuned.name(),
            bench.gpu.name,
            reps.runs
        );
        let dependent = first.waits_for_previous();
        let (head, rule) = if dependent { (" dependent: GB/s | % of HBM | % of cuBLAS b2b |", "---:|---:|---:|") } else { ("", "") };
        println!(
            "| M x N x K | TFLOP/s | GB/s | % of HBM | cuBLAS GB/s | % of cuBLAS | back to back: GB/s | % of HBM | cuBLAS GB/s | % of cuBLAS |{head} point |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|{rule}---|");
        let (mut log_sum, mut log_sum_batched, mut log_sum_dependent, mut count) = (0.0, 0.0, 0.0, 0);
        for &(n, k) in &WEIGHTS {
            for &m in &tokens {
                let dims = if swapped { padded_dims(n, m, k, cfg.1) } else { padded_dims(m, n, k, cfg.1) };
                let p = Problem::for_kernel(&bench, first, dims, 5)?;
                let reference = p.reference(&bench)?;
                let mut c = p.poisoned_c(&bench)?;
                first_launch(bench.stream(), || p.launch_tuned(&bench, tuned, &mut c))?;
                let out = c.to_f32(bench.stream())?;
                check(&out, &reference, dims, s.c.layout, gemm_runtime::internal::data::tolerance(gemm_runtime::spec::Elem::Bf16), tuned.name())?;
                // timed over copies of the inputs that together pass the L2 several times, a run on
                // each in turn: a decode step reads weights the L2 does not hold (a 4096 x 4096
                // weight, 32 MiB, fits in the H100's 50 MiB L2)
                let bytes = 2.0 * (m * k + k * n + m * n) as f64;
                let copies = (rotate / bytes).ceil() as usize;
                let mut sets = vec![(p, c)];
                for i in 1..copies {
                    let q = Problem::for_kernel(&bench, first, dims, 5 + i as u64)?;
                    let c = q.poisoned_c(&bench)?;
                    sets.push((q, c));
                }
                let t = time(bench.stream(), reps.warmup, reps.runs, |i| {
                    let (p, c) = &mut sets[i % copies];
                    p.launch_tuned(&bench, tuned, c)
                })?;
                let cublas = time(bench.stream(), reps.warmup, reps.runs, |i| {
                    let (p, c) = &mut sets[i % copies];
                    p.cublas(&bench, c)
                })?;
                let t_batched = time_back_to_back(bench.stream(), reps.warmup, reps.runs, BATCH, |i| {
                    let (p, c) = &mut sets[i % copies];
                    p.launch_tuned(&bench, tuned, c)
                })?;
                let cublas_batched = time_back_to_back(bench.stream(), reps.warmup, reps.runs, BATCH, |i| {
                    let (p, c) = &mut sets[i % copies];
                    p.cublas(&bench, c)
                })?;
                let t_dependent = if dependent {
                    // (dependent launches are tuned on their own, on their first)
                    let (p, c) = &mut sets[0];
                    first_launch(bench.stream(), || p.launch_tuned_dependent(&bench, tuned, c))?;
                    Some(time_back_to_back(bench.stream(), reps.warmup, reps.runs, BATCH, |i| {
                        let (p, c) = &mut sets[i % copies];
                        p.launch_tuned_dependent(&bench, tuned, c)
                    })?)
                } else {
                    None
                };
                let rate = |t: &gemm_runtime::internal::timing::Timing| bytes / (t.median_ms() * 1e-3);
                let (ours, theirs) = (rate(&t), rate(&cublas));
                let (ours_batched, theirs_batched) = (rate(&t_batched), rate(&cublas_batched));
                log_sum += (ours / theirs).ln();
                log_sum_batched += (ours_batched / theirs_batched).ln();
                count += 1;
                let dependent_cells = t_dependent.as_ref().map_or(String::new(), |t| {
                    let ours = rate(t);
                    log_sum_dependent += (ours / theirs_batched).ln();
                    format!(" {:.0} | {:.1}% | {:.1}% |", ours / 1e9, 100.0 * ours / hbm, 100.0 * ours / theirs_batched)
                });
                let mut point = tuned.chosen_for(bench.stream(), dims)?.map_or("?".into(), |k| format!("`{}`", k.name));
                // dependent launches are tuned on their own: their point, where another
                if let Some(k) = tuned.chosen_for_dependent(bench.stream(), dims)?.filter(|k| !point.contains(k.name.as_ref())) {
                    point += &format!("; dependent: `{}`", k.name);
                }
                println!(
                    "| {m} x {n} x {k} | {:.2} | {:.0} | {:.1}% | {:.0} | {:.1}% | {:.0} | {:.1}% | {:.0} | {:.1}% |{dependent_cells} {point} |",
                    t.tflops(dims.flops()),
                    ours / 1e9,
                    100.0 * ours / hbm,
                    theirs / 1e9,
                    100.0 * ours / theirs,
                    ours_batched / 1e9,
                    100.0 * ours_batched / hbm,
                    theirs_batched / 1e9,
                    100.0 * ours_batched / theirs_batched
                );
            }
        }
        let mean = |sum: f64| 100.0 * (sum / count as f64).exp();
        let dependent_mean = if dependent { format!(" | | {:.1}% |", mean(log_sum_dependent)) } else { String::new() };
        println!("| geometric mean | | | | | {:.1}% | | | | {:.1}% |{dependent_mean} |\n", mean(log_sum), mean(log_sum_batched));
    }
    for (tuned, swapped) in fp8.into_iter().filter(|(t, _)| only.is_empty() || only.iter().any(|n| n == t.name())) {
        let arch = tuned.kernel(0).spec.arch;
        if arch.runs_on(bench.gpu.capability) {
            fp8_table(&bench, tuned, swapped, &tokens, reps)?;
        } else {
            println!("{}: skipped ({arch} kernels do not run on {})\n", tuned.name(), bench.gpu.name);
        }
    }
    Ok(())
}

/// An 8-bit decode kernel at each weight and token count, checked against
/// sgemm on its operands widened to f32 (times their scales) and timed
/// beside cuBLAS's bf16 GEMM on the same problem (transposed where the
/// kernel is `swapped`): a launch alone, back to back, and (Hopper's)
/// back to back as dependent launches.
fn fp8_table(bench: &Bench, tuned: &Tuned, swapped: bool, tokens: &[usize], reps: Reps) -> Result<(), Box<dyn std::error::Error>> {
    let hbm = bench.facts.memory_bytes_per_s();
    let rotate = 4.0 * bench.facts.l2_bytes as f64;
    let first = tuned.kernel(0);
    let layouts = [first.spec.a.layout, first.spec.b.layout, first.spec.c.layout];
    println!(
        "{} on {} (e4m3 weight and tokens, a scale per channel and per token, bf16 C; median of {} runs after tuning, over copies of the inputs that pass the L2 four times)\n",
        tuned.name(),
        bench.gpu.name,
        reps.runs
    );
    println!(
        "| M x N x K | GB/s | % of HBM | back to back: GB/s | % of HBM | dependent: GB/s | % of HBM | us | cuBLAS bf16 back to back: us | bf16 time / fp8 time (back to back) | point |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut log_sum = 0.0;
    let mut count = 0;
    for &(n, k) in &WEIGHTS {
        for &m in tokens {
            let (rows, cols) = if swapped { (n, m) } else { (m, n) };
            let dims = gemm_ladder::measure::dims_with_ld_multiple(rows, cols, k, layouts, 16);
            let p = Problem::for_kernel(bench, first, dims, 5)?;
            let reference = p.reference(bench)?;
            let mut c = p.poisoned_c(bench)?;
            first_launch(bench.stream(), || p.launch_tuned(bench, tuned, &mut c))?;
            check(&c.to_f32(bench.stream())?, &reference, dims, layouts[2], gemm_ladder::measure::kernel_tolerance(&first.spec), tuned.name())?;
            let bytes = (m * k + k * n) as f64 + 2.0 * (m * n) as f64;
            let copies = (rotate / bytes).ceil() as usize;
            let mut sets = vec![(p, c)];
            for i in 1..copies {
                let q = Problem::for_kernel(bench, first, dims, 5 + i as u64)?;
                let c = q.poisoned_c(bench)?;
                sets.push((q, c));
            }
            let t = time(bench.stream(), reps.warmup, reps.runs, |i| {
                let (p, c) = &mut sets[i % copies];
                p.launch_tuned(bench, tuned, c)
            })?;
            let t_batched = time_back_to_back(bench.stream(), reps.warmup, reps.runs, BATCH, |i| {
                let (p, c) = &mut sets[i % copies];
                p.launch_tuned(bench, tuned, c)
            })?;
            // (dependent launches: Hopper's kernels alone wait for the one before in the kernel)
            let t_dependent = if first.waits_for_previous() {
                let (p, c) = &mut sets[0];
                first_launch(bench.stream(), || p.launch_tuned_dependent(bench, tuned, c))?;
                Some(time_back_to_back(bench.stream(), reps.warmup, reps.runs, BATCH, |i| {
                    let (p, c) = &mut sets[i % copies];
                    p.launch_tuned_dependent(bench, tuned, c)
                })?)
            } else {
                None
            };
            drop(sets);
            // the bf16 step it replaces: cuBLAS on bf16 operands of the same shape
            let bf16 = [gemm_runtime::spec::Elem::Bf16; 3];
            let bf16_bytes = 2.0 * (m * k + k * n + m * n) as f64;
            let bf16_copies = (rotate / bf16_bytes).ceil() as usize;
            let mut bf16_sets = Vec::new();
            for i in 0..bf16_copies {
                let q = Problem::typed(bench, bf16, layouts, dims, 5 + i as u64)?;
                let c = q.poisoned_c(bench)?;
                bf16_sets.push((q, c));
            }
            let cublas = time_back_to_back(bench.stream(), reps.warmup, reps.runs, BATCH, |i| {
                let (p, c) = &mut bf16_sets[i % bf16_copies];
                p.cublas(bench, c)
            })?;
            let rate = |t: &gemm_runtime::internal::timing::Timing| bytes / (t.median_ms() * 1e-3);
            let speedup = cublas.median_ms() / t_batched.median_ms();
            log_sum += speedup.ln();
            count += 1;
            let mut point = tuned.chosen_for(bench.stream(), dims)?.map_or("?".into(), |k| format!("`{}`", k.name));
            if let Some(k) = tuned.chosen_for_dependent(bench.stream(), dims)?.filter(|k| !point.contains(k.name.as_ref())) {
                point += &format!("; dependent: `{}`", k.name);
            }
            let dependent = t_dependent.as_ref().map_or(" | ".to_string(), |t| format!("{:.0} | {:.1}%", rate(t) / 1e9, 100.0 * rate(t) / hbm));
            println!(
                "| {m} x {n} x {k} | {:.0} | {:.1}% | {:.0} | {:.1}% | {dependent} | {:.1} | {:.1} | {speedup:.2} | {point} |",
                rate(&t) / 1e9,
                100.0 * rate(&t) / hbm,
                rate(&t_batched) / 1e9,
                100.0 * rate(&t_batched) / hbm,
                1e3 * t_batched.median_ms(),
                1e3 * cublas.median_ms(),
            );
        }
    }
    println!("| geometric mean | | | | | | | | | {:.2} | |\n", (log_sum / count as f64).exp());
    Ok(())
}

/// The tokens (M) to time: `--tokens=1,8` picks some of [`TOKENS`].
fn tokens(flags: &[String]) -> Result<Vec<usize>, String> {
    let mut tokens = TOKENS.to_vec();
    for flag in flags {
        let list = flag.strip_prefix("--tokens=").ok_or_else(|| format!("unknown option {flag} (--tokens=1,8,..)"))?;
        tokens = list.split(',').map(|t| t.parse().map_err(|_| format!("--tokens: {t} is not a number of tokens"))).collect::<Result<_, _>>()?;
    }
    Ok(tokens)
}

/// C's elements (not the padding of its lines) against cuBLAS's.
fn check(out: &[f32], reference: &[f32], d: Dims, layout: gemm_runtime::spec::Layout, tolerance: f64, name: &str) -> Result<(), String> {
    let (lines, len) = if layout == gemm_runtime::spec::Layout::RowMajor { (d.m, d.n) } else { (d.n, d.m) };
    let ld = d.ldc.unwrap_or(len);
    let pick = |v: &[f32]| -> Vec<f32> { (0..lines).flat_map(|l| v[l * ld..l * ld + len].to_vec()).collect() };
    let err = gemm_runtime::internal::data::relative_error(&pick(out), &pick(reference))?;
    if err > tolerance {
        return Err(format!("{name} at {}x{}x{}: relative error {err:.1e} against cuBLAS", d.m, d.n, d.k));
    }
    Ok(())
}
