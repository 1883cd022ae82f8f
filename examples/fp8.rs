//! 8-bit floats on Hopper: `fp8::fp8_tma_store` (e4m3 A and B, per-tensor
//! scales, f32 accumulators, bf16 C) beside cuBLASLt's fp8 GEMM (the same
//! scales; its default accumulation and its fast accumulation) and cuBLAS's
//! bf16 GEMM on the same values, in one process.
//! `cargo run --release --example fp8 [SIZE ...]`, SIZE N (cubed) or MxNxK
//! (default 4096, 8192, 4096x11008x4096 and DeepGEMM's four shapes).
//! The promoted kernels (per-tensor, per-channel and block scales) and the
//! tuned one (`tuned::fp8_tuned`) beside it, the scales of each the same
//! throughout, so that one reference serves; the block-scaled kernel also
//! beside cuBLASLt's block-scaled GEMM where the library has it, and
//! DeepGEMM's own figures (an H800's, from its README) at its shapes.
//!
//! Accuracy: each fp8 GEMM into an f32 C against sgemm on the same operands
//! widened to f32 (exactly), on random normal values quantized to e4m3.
//!
//! On Ada and consumer Blackwell (compute capability 8.9, 12.x), whose SMs
//! multiply 8-bit floats by mma.sync, it runs `steps::mma_fp8_sm89` and
//! `steps::mma_fp8_block_sm89`, and their tuned spaces, beside cuBLASLt's
//! fp8 GEMM and cuBLAS's bf16 one instead; `--mma` runs that table on other
//! GPUs too (a Hopper GPU emulates the instruction).

use gemm_ladder::fp8::{fp8_block_scaled, fp8_channel, fp8_promoted, fp8_tma_store};
use gemm_ladder::lt_fp8::LtFp8;
use gemm_ladder::measure::{first_launch, time_cublas_typed, Bench, DevMat, Problem, Reps};
use gemm_ladder::tuned::{fp8_block_tuned, fp8_tuned};
use gemm_runtime::internal::data::relative_error;
use gemm_runtime::internal::timing::time;
use gemm_runtime::spec::{Elem, Layout, Scale};
use gemm_runtime::{Dims, EpilogueArgs, GemmError, Kernel};

fn main() {
    let defaults: Vec<(usize, usize, usize)> =
        [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096)].into_iter().chain(DEEPGEMM.iter().map(|d| d.0)).collect();
    let mma = std::env::args().any(|a| a == "--mma");
    let sizes = gemm_ladder::cli::sizes_or_without(&defaults, &["--mma"]);
    if let Err(e) = run(&sizes, mma) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// DeepGEMM's figures for its dense fp8 GEMMs with block scales, M x N x K
/// and TFLOP/s, as its README gave them at commit 327ec92 (2025-04-09):
/// theirs, on an H800 SXM5 (the H100's SMs) with NVCC 12.8, not measured here.
const DEEPGEMM: [((usize, usize, usize), f64); 4] =
    [((64, 2112, 7168), 206.0), ((128, 4096, 7168), 533.0), ((4096, 7168, 16384), 1520.0), ((4096, 32768, 512), 775.0)];

fn run(sizes: &[(usize, usize, usize)], mma: bool) -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    if mma || gemm_ladder::peak::native_e4m3_mma(bench.gpu.capability) {
        return run_mma(&bench, sizes);
    }
    if bench.gpu.capability != (9, 0) {
        return Err(format!(
            "the fp8 kernels are sm_90a: {} is compute capability {}.{}",
            bench.gpu.name, bench.gpu.capability.0, bench.gpu.capability.1
        )
        .into());
    }
    let s = bench.stream();
    let reps = Reps::default();
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    let e4m3 = Elem::F8E4M3;
    // the same kernel into an f32 C, for its accumulation's error alone
    let wide = |mut spec: gemm_runtime::spec::KernelSpec| {
        spec.c.elem = Elem::F32;
        spec.epilogue = gemm_runtime::spec::Epilogue::Vector;
        Kernel::from_spec(spec)
    };
    let (wide_kernel, wide_promoted) = (wide(fp8_tma_store::SPEC)?, wide(fp8_promoted::SPEC)?);
    let (wide_block, wide_channel) = (wide(fp8_block_scaled::SPEC)?, wide(fp8_channel::SPEC)?);
    let forms = interval_kernels()?;
    let mut interval_rows = Vec::new();
    // per-tensor scales, powers of two so that the f32 reference scales exactly
    let (scale_a, scale_b) = (0.5f32, 4.0f32);
    let scales = (s.clone_htod(&[scale_a]).map_err(GemmError::from)?, s.clone_htod(&[scale_b]).map_err(GemmError::from)?);
    println!(
        "{} (driver {}), e4m3 A (row-major) and B (column-major), f32 accumulators; median of {} runs\n",
        bench.gpu.name,
        gemm_runtime::device::driver_version()?,
        reps.runs
    );
    println!("| M x N x K | kernel | TFLOP/s (bf16 C) | % of cuBLASLt fp8 | % of cuBLASLt, same scales | relative error (f32 C) |");
    println!("|---|---|---:|---:|---:|---:|");
    let mut chosen = Vec::new();
    for &(m, n, k) in sizes {
        let dims = Dims::new(m, n, k);
        let flops = dims.flops();
        let p = Problem::typed(&bench, [e4m3, e4m3, Elem::Bf16], layouts, dims, 21)?;
        let (DevMat::F8E4M3(a), DevMat::F8E4M3(b)) = (&p.a, &p.b) else { unreachable!("e4m3 operands") };
        // accuracy: f32 C against sgemm on the widened operands
        let widened = Problem::typed(&bench, [e4m3, e4m3, Elem::F32], layouts, dims, 21)?;
        let reference: Vec<f32> = widened.reference(&bench)?.into_iter().map(|x| x * scale_a * scale_b).collect();
        let mut c32 = s.alloc_zeros::<f32>(m * n).map_err(GemmError::from)?;
        let ep = EpilogueArgs::new().scales(&scales.0, &scales.1);
        wide_kernel.launch_with(s, a, b, &mut c32, dims, ep)?;
        let ours_error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
        wide_promoted.launch_with(s, a, b, &mut c32, dims, ep)?;
        let promoted_error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
        let mut lt_errors = Vec::new();
        for fast in [false, true] {
            let mut lt = LtFp8::new::<gemm_runtime::F8E4M3, gemm_runtime::F8E4M3, f32>(s, dims, (&scales.0, &scales.1), fast)?;
            lt.run(a, b, &mut c32)?;
            lt_errors.push(relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?);
        }
        // speed: bf16 C
        let mut c = s.alloc_zeros::<gemm_runtime::bf16>(m * n).map_err(GemmError::from)?;
        let ours = time(s, reps.warmup, reps.runs, |_| fp8_tma_store(s, a, b, &mut c, &scales.0, &scales.1, dims))?.tflops(flops);
        let promoted = time(s, reps.warmup, reps.runs, |_| fp8_promoted(s, a, b, &mut c, &scales.0, &scales.1, dims))?.tflops(flops);
        // per-channel and block scales: every scale the same, so that one reference serves
        let (la, lb) = Scale::Block.lens(m, n, k);
        let (block_a, block_b) =
            (s.clone_htod(&vec![scale_a; la]).map_err(GemmError::from)?, s.clone_htod(&vec![scale_b; lb]).map_err(GemmError::from)?);
        let (row_a, col_b) = (s.clone_htod(&vec![scale_a; m]).map_err(GemmError::from)?, s.clone_htod(&vec![scale_b; n]).map_err(GemmError::from)?);
        wide_block.launch_with(s, a, b, &mut c32, dims, EpilogueArgs::new().scales(&block_a, &block_b))?;
        let block_error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
        wide_channel.launch_with(s, a, b, &mut c32, dims, EpilogueArgs::new().scales(&row_a, &col_b))?;
        let channel_error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
        let block = time(s, reps.warmup, reps.runs, |_| fp8_block_scaled(s, a, b, &mut c, &block_a, &block_b, dims))?.tflops(flops);
        // cuBLASLt with the same block scales, where the library has them
        let lt_block = match LtFp8::block_scaled::<gemm_runtime::F8E4M3, gemm_runtime::F8E4M3, f32>(s, dims, (&block_a, &block_b)) {
            Ok(mut lt) => {
                lt.run(a, b, &mut c32)?;
                let error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
                let mut lt = LtFp8::block_scaled::<gemm_runtime::F8E4M3, gemm_runtime::F8E4M3, gemm_runtime::bf16>(s, dims, (&block_a, &block_b))?;
                Ok((time(s, reps.warmup, reps.runs, |_| lt.run(a, b, &mut c))?.tflops(flops), error))
            }
            Err(e) => Err(e),
        };
        // the tuned kernels: the first launch at a size tunes; then their speed (bf16 C) and
        // the chosen point's error (f32 C)
        let mut tuned_run = |tuned: &gemm_runtime::Tuned, ep: EpilogueArgs<'_, f32>, what: &str| -> Result<(f64, f64), Box<dyn std::error::Error>> {
            first_launch(s, || tuned.launch_with(s, a, b, &mut c, dims, ep))?;
            let speed = time(s, reps.warmup, reps.runs, |_| tuned.launch_with(s, a, b, &mut c, dims, ep))?.tflops(flops);
            let point = tuned.chosen_for(s, dims)?.expect("chosen by its launches");
            wide(point.spec.clone())?.launch_with(s, a, b, &mut c32, dims, ep)?;
            let error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
            chosen.push(format!("{m} x {n} x {k}{what}: `{}`", point.name));
            Ok((speed, error))
        };
        let (tuned, tuned_error) = tuned_run(&fp8_tuned::KERNEL, EpilogueArgs::new().scales(&scales.0, &scales.1), "")?;
        let (block_tuned, block_tuned_error) = tuned_run(&fp8_block_tuned::KERNEL, EpilogueArgs::new().scales(&block_a, &block_b), ", block scales")?;
        let channel = time(s, reps.warmup, reps.runs, |_| fp8_channel(s, a, b, &mut c, &row_a, &col_b, dims))?.tflops(flops);
        let mut lt_speed = Vec::new();
        for fast in [false, true] {
            let mut lt = LtFp8::new::<gemm_runtime::F8E4M3, gemm_runtime::F8E4M3, gemm_runtime::bf16>(s, dims, (&scales.0, &scales.1), fast)?;
            lt_speed.push(time(s, reps.warmup, reps.runs, |_| lt.run(a, b, &mut c))?.tflops(flops));
        }
        let bf16 = time_cublas_typed(&bench, [Elem::Bf16; 3], layouts, dims, reps)?.tflops(flops);
        let size = format!("{m} x {n} x {k}");
        let pct = |x: f64| format!("{:.1}%", 100.0 * x / lt_speed[0]);
        let of_lt = |x: f64, lt: f64| format!("{:.1}%", 100.0 * x / lt);
        println!("| {size} | cuBLASLt fp8 | {:.1} | 100.0% | 100.0% | {:.2e} |", lt_speed[0], lt_errors[0]);
        println!(
            "| {size} | cuBLASLt fp8, fast accumulation | {:.1} | {} | {} | {:.2e} |",
            lt_speed[1],
            pct(lt_speed[1]),
            pct(lt_speed[1]),
            lt_errors[1]
        );
        println!("| {size} | `fp8_tma_store` (fast accumulation) | {ours:.1} | {} | {} | {ours_error:.2e} |", pct(ours), of_lt(ours, lt_speed[1]));
        println!("| {size} | `fp8_promoted` | {promoted:.1} | {} | {} | {promoted_error:.2e} |", pct(promoted), pct(promoted));
        println!("| {size} | `fp8_tuned` (promoted) | {tuned:.1} | {} | {} | {tuned_error:.2e} |", pct(tuned), pct(tuned));
        println!("| {size} | `fp8_channel` (per-channel scales, promoted) | {channel:.1} | {} | | {channel_error:.2e} |", pct(channel));
        match lt_block {
            Ok((lt, error)) => {
                println!("| {size} | cuBLASLt fp8, 1 x 128 and 128 x 128 scales | {lt:.1} | {} | 100.0% | {error:.2e} |", pct(lt));
                println!(
                    "| {size} | `fp8_block_scaled` (1 x 128 and 128 x 128 scales) | {block:.1} | {} | {} | {block_error:.2e} |",
                    pct(block),
                    of_lt(block, lt)
                );
                println!(
                    "| {size} | `fp8_block_tuned` (the same scales) | {block_tuned:.1} | {} | {} | {block_tuned_error:.2e} |",
                    pct(block_tuned),
                    of_lt(block_tuned, lt)
                );
            }
            Err(e) => {
                println!("| {size} | cuBLASLt fp8, 1 x 128 and 128 x 128 scales | | | | ({e}) |");
                println!("| {size} | `fp8_block_scaled` (1 x 128 and 128 x 128 scales) | {block:.1} | {} | | {block_error:.2e} |", pct(block));
                println!("| {size} | `fp8_block_tuned` (the same scales) | {block_tuned:.1} | {} | | {block_tuned_error:.2e} |", pct(block_tuned));
            }
        }
        if let Some((_, theirs)) = DEEPGEMM.iter().find(|d| d.0 == (m, n, k)) {
            println!("| {size} | DeepGEMM, block scales: its README's figure on an H800, not measured here | {theirs:.0} | | | |");
        }
        println!("| {size} | cuBLAS bf16 (bf16 operands) | {bf16:.1} | {} | | |", pct(bf16));
        // how often sums are promoted, on the same operands and reference
        let mut cells = Vec::new();
        for (_, kernel, wide) in &forms {
            wide.launch_with(s, a, b, &mut c32, dims, ep)?;
            let error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
            let t = time(s, reps.warmup, reps.runs, |_| kernel.launch_with(s, a, b, &mut c, dims, ep))?.tflops(flops);
            cells.push(format!("{t:.1}, {error:.2e}"));
        }
        interval_rows.push(format!("| {size} | {} |", cells.join(" | ")));
    }
    println!("\nThe tuned kernels' points: {}", chosen.join("; "));
    println!("\nPromotion into f32 every K block of `block.k` (`wgmma(.., promote)`) on `fp8_promoted`'s tiling: TFLOP/s (bf16 C) and relative error (f32 C)\n");
    println!("| M x N x K | {} |", forms.iter().map(|f| f.0).collect::<Vec<_>>().join(" | "));
    println!("|---|{}", "---:|".repeat(forms.len()));
    for row in interval_rows {
        println!("{row}");
    }
    Ok(())
}

/// Ada's path: `mma_fp8_sm89` (e4m3 by mma.sync, per-tensor scales) and
/// `mma_fp8_block_sm89` (block scales, each the same here, so that one
/// reference serves), each beside its tuned space, cuBLASLt's fp8 GEMM with
/// the same scales and cuBLAS's bf16 GEMM; the two kernels' errors (f32 C)
/// against sgemm on the operands widened to f32.
fn run_mma(bench: &Bench, sizes: &[(usize, usize, usize)]) -> Result<(), Box<dyn std::error::Error>> {
    use gemm_ladder::steps::{mma_fp8_block_sm89, mma_fp8_sm89};
    use gemm_ladder::tuned::{mma_fp8_block_tuned_sm89, mma_fp8_tuned_sm89};
    let s = bench.stream();
    let reps = Reps::default();
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    let e4m3 = Elem::F8E4M3;
    // each kernel into an f32 C, for its error
    let wide = |mut spec: gemm_runtime::spec::KernelSpec| {
        (spec.c.elem, spec.epilogue) = (Elem::F32, gemm_runtime::spec::Epilogue::Vector);
        Kernel::from_spec(spec)
    };
    let (wide, wide_block) = (wide(mma_fp8_sm89::SPEC)?, wide(mma_fp8_block_sm89::SPEC)?);
    let (scale_a, scale_b) = (0.5f32, 4.0f32);
    let scales = (s.clone_htod(&[scale_a]).map_err(GemmError::from)?, s.clone_htod(&[scale_b]).map_err(GemmError::from)?);
    let native = gemm_ladder::peak::native_e4m3_mma(bench.gpu.capability);
    println!(
        "{} (driver {}), e4m3 A (row-major) and B (column-major) by mma.sync{}, f32 accumulators; median of {} runs\n",
        bench.gpu.name,
        gemm_runtime::device::driver_version()?,
        if native { "" } else { " (emulated by this GPU with f16 mmas)" },
        reps.runs
    );
    println!("| M x N x K | kernel | TFLOP/s (bf16 C) | % of cuBLASLt fp8 | relative error (f32 C) |");
    println!("|---|---|---:|---:|---:|");
    for &(m, n, k) in sizes {
        let dims = Dims::new(m, n, k);
        let flops = dims.flops();
        let p = Problem::typed(bench, [e4m3, e4m3, Elem::Bf16], layouts, dims, 21)?;
        let (DevMat::F8E4M3(a), DevMat::F8E4M3(b)) = (&p.a, &p.b) else { unreachable!("e4m3 operands") };
        let widened = Problem::typed(bench, [e4m3, e4m3, Elem::F32], layouts, dims, 21)?;
        let reference: Vec<f32> = widened.reference(bench)?.into_iter().map(|x| x * scale_a * scale_b).collect();
        let mut c32 = s.alloc_zeros::<f32>(m * n).map_err(GemmError::from)?;
        wide.launch_with(s, a, b, &mut c32, dims, EpilogueArgs::new().scales(&scales.0, &scales.1))?;
        let error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
        // block scales of the same values throughout
        let (la, lb) = Scale::Block.lens(m, n, k);
        let blocks = (s.clone_htod(&vec![scale_a; la]).map_err(GemmError::from)?, s.clone_htod(&vec![scale_b; lb]).map_err(GemmError::from)?);
        wide_block.launch_with(s, a, b, &mut c32, dims, EpilogueArgs::new().scales(&blocks.0, &blocks.1))?;
        let block_error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
        let mut c = s.alloc_zeros::<gemm_runtime::bf16>(m * n).map_err(GemmError::from)?;
        let ours = time(s, reps.warmup, reps.runs, |_| mma_fp8_sm89(s, a, b, &mut c, &scales.0, &scales.1, dims))?.tflops(flops);
        let block = time(s, reps.warmup, reps.runs, |_| mma_fp8_block_sm89(s, a, b, &mut c, &blocks.0, &blocks.1, dims))?.tflops(flops);
        // their tuned spaces: the first launch at a size tunes, then the chosen point's speed
        let mut tuned_run = |tuned: &gemm_runtime::Tuned, ep: EpilogueArgs<'_, f32>| -> Result<(f64, String), GemmError> {
            first_launch(s, || tuned.launch_with(s, a, b, &mut c, dims, ep))?;
            let speed = time(s, reps.warmup, reps.runs, |_| tuned.launch_with(s, a, b, &mut c, dims, ep))?.tflops(flops);
            let point = tuned.chosen_for(s, dims)?.expect("chosen by its launches");
            let stages = match point.spec.staging {
                gemm_runtime::spec::Staging::CpAsync { stages, .. } => stages,
                _ => unreachable!("Ada's tuned kernels stage by cp.async"),
            };
            Ok((speed, format!("{} x {}, {stages} stages", point.spec.block.m, point.spec.block.n)))
        };
        let tuned = tuned_run(&mma_fp8_tuned_sm89::KERNEL, EpilogueArgs::new().scales(&scales.0, &scales.1))?;
        let block_tuned = tuned_run(&mma_fp8_block_tuned_sm89::KERNEL, EpilogueArgs::new().scales(&blocks.0, &blocks.1))?;
        // cuBLASLt's fp8 GEMM, where it has an algorithm for these sizes (lines 16 bytes aligned)
        let lt = (|| -> Result<(f64, f64), Box<dyn std::error::Error>> {
            let mut lt = LtFp8::new::<gemm_runtime::F8E4M3, gemm_runtime::F8E4M3, f32>(s, dims, (&scales.0, &scales.1), false)?;
            lt.run(a, b, &mut c32)?;
            let error = relative_error(&s.clone_dtoh(&c32).map_err(GemmError::from)?, &reference)?;
            let mut lt = LtFp8::new::<gemm_runtime::F8E4M3, gemm_runtime::F8E4M3, gemm_runtime::bf16>(s, dims, (&scales.0, &scales.1), false)?;
            Ok((time(s, reps.warmup, reps.runs, |_| lt.run(a, b, &mut c))?.tflops(flops), error))
        })();
        let bf16 = time_cublas_typed(bench, [Elem::Bf16; 3], layouts, dims, reps)?.tflops(flops);
        let size = format!("{m} x {n} x {k}");
        let pct = |x: f64| lt.as_ref().map_or(String::new(), |(theirs, _)| format!("{:.1}%", 100.0 * x / theirs));
        match &lt {
            Ok((theirs, lt_error)) => println!("| {size} | cuBLASLt fp8 | {theirs:.1} | 100.0% | {lt_error:.2e} |"),
            Err(e) => println!("| {size} | cuBLASLt fp8 | | | ({e}) |"),
        }
        println!("| {size} | `mma_fp8_sm89` | {ours:.1} | {} | {error:.2e} |", pct(ours));
        println!("| {size} | `mma_fp8_tuned_sm89` (chose {}) | {:.1} | {} | |", tuned.1, tuned.0, pct(tuned.0));
        println!("| {size} | `mma_fp8_block_sm89` (block scales) | {block:.1} | {} | {block_error:.2e} |", pct(block));
        println!("| {size} | `mma_fp8_block_tuned_sm89` (chose {}) | {:.1} | {} | |", block_tuned.1, block_tuned.0, pct(block_tuned.0));
        println!("| {size} | cuBLAS bf16 (bf16 operands) | {bf16:.1} | {} | |", pct(bf16));
    }
    Ok(())
}

/// How often the sums are promoted into f32 against speed and error:
/// `fp8_promoted`'s tiling unpromoted (fast accumulation) and promoted
/// every stage, a stage `block.k` deep (256 in three stages; 128 in six; 64,
/// a 64-byte swizzle row, in eight): each form's name, its kernel (bf16 C)
/// and the same into an f32 C.
fn interval_kernels() -> Result<Vec<(&'static str, Kernel, Kernel)>, GemmError> {
    use gemm_runtime::spec::{Atom, Staging, Swizzle};
    let forms: [(&str, u32, u32, bool); 4] =
        [("fast accumulation", 128, 6, false), ("every 256", 256, 3, true), ("every 128", 128, 6, true), ("every 64", 64, 8, true)];
    let mut kernels = Vec::new();
    for (name, k, stages, promote) in forms {
        let mut spec = fp8_promoted::SPEC;
        spec.block.k = Some(k);
        if let Staging::Tma { stages: s, .. } = &mut spec.staging {
            *s = stages;
        }
        if let Atom::Wgmma { promote: p, .. } = &mut spec.atom {
            *p = promote;
        }
        if k == 64 {
            spec.swizzle = Swizzle::B64;
        }
        let mut wide = spec.clone();
        (wide.c.elem, wide.epilogue) = (Elem::F32, gemm_runtime::spec::Epilogue::Vector);
        kernels.push((name, Kernel::from_spec(spec)?, Kernel::from_spec(wide)?));
    }
    Ok(kernels)
}
