//! DeepGEMM's fp8 GEMM with block scales (e4m3, A per row and 128 of K, B
//! per 128 x 128 block, bf16 C) timed beside ours and cuBLASLt's in one
//! process, on one set of inputs: its kernels as its own JIT built them
//! (`gemm-lab/probes/deepgemm/build.py` writes MANIFEST, one line a
//! shape: `M N K KERNEL.so SMS SMEM TILING`), loaded by dlopen.
//!
//! `cargo run --release -p gemm-lab -- deepgemm MANIFEST [--cold] [--soak SECONDS] [--variant SETTINGS]...`
//! (on the GPU host: `scripts/gpu-run LOGDIR deepgemm`)
//!
//! Each shape: A and B random normal values quantized to e4m3 by their
//! blocks' largest magnitudes (`gemm_runtime::quantize`, as DeepGEMM's tests quantize them; the two
//! libraries' scale layouts are the same buffers where M is a multiple of
//! 4); `fp8_block_scaled`, `fp8_block_tuned` (the point its first launch
//! picks), DeepGEMM's kernel, cuBLASLt by block and cuBLASLt per tensor
//! (scales of 1, its default accumulation), each checked against cuBLASLt
//! by block, then timed in rotation, each sample a CUDA graph of
//! [`LAUNCHES`] launches (so that no launch's host cost reaches the GPU's
//! time at small shapes). A graph's launches read one set of operands,
//! which the L2 keeps between them where it holds them (B of 4096 x 7168
//! in e4m3 is 29 MB); `--cold` gives each launch of a graph the next of
//! several copies, together past twice the L2, as a model's layers read
//! weights the L2 does not hold. `--soak SECONDS` then runs DeepGEMM's graph,
//! `fp8_block_tuned`'s and each variant's back to back for that long each
//! (in that order, then back), with the SM clock and power NVML reports: on
//! a GPU at its power cap, what each one's draw leaves its clock. Each `--variant`
//! (settings as `gemm-lab variants` takes them, joined by commas) adds
//! `fp8_block_scaled` so changed to the check and the rotation, under the
//! shape's row.

use std::ffi::c_void;

use gemm_ladder::fp8::fp8_block_scaled;
use gemm_ladder::lt_fp8::LtFp8;
use gemm_ladder::measure::{random_normal, time_rotation_of, Bench, Reps};
use gemm_ladder::tuned::fp8_block_tuned;
use gemm_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use gemm_runtime::cudarc::driver::{CudaGraph, CudaSlice, CudaStream, DevicePtr};
use gemm_runtime::internal::data::relative_error;
use gemm_runtime::spec::{block_scales_a_len, block_scales_b_len};
use gemm_runtime::{bf16, quantize, Dims, EpilogueArgs, GemmError, Kernel, F8E4M3};

/// Launches a graph holds: one sample's.
const LAUNCHES: usize = 10;

/// DeepGEMM's JIT entry (its `jit/template.py` at 327ec92): lhs, lhs_scales,
/// rhs, rhs_scales, out, m, stream, num_sms, smem_size, return code.
type Launch = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void, *mut c_void, *mut c_void, i32, *mut c_void, i32, i32, *mut i32);

/// `--cold`: at most this many sets of a shape's operands (operands of 4 MB
/// then pass twice an L2 of 60 MB; smaller ones come partly from the L2).
const MAX_COPIES: usize = 32;

/// A and B in e4m3 with their block scales: one set of a shape's operands.
struct Operands {
    a: CudaSlice<F8E4M3>,
    b: CudaSlice<F8E4M3>,
    sa: CudaSlice<f32>,
    sb: CudaSlice<f32>,
}

/// The epilogue's arguments: a set's scales.
fn ep(o: &Operands) -> EpilogueArgs<'_> {
    EpilogueArgs::new().scales(&o.sa, &o.sb)
}

/// One shape's kernel, as the manifest names it.
struct Entry {
    dims: (usize, usize, usize),
    so: String,
    sms: i32,
    smem: i32,
    tiling: String,
}

fn parse(line: &str) -> Result<Entry, String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<usize>().ok()).ok_or_else(|| format!("manifest line `{line}`: field {i}"));
    Ok(Entry {
        dims: (num(0)?, num(1)?, num(2)?),
        so: f.get(3).ok_or_else(|| format!("manifest line `{line}`: no kernel"))?.to_string(),
        sms: num(4)? as i32,
        smem: num(5)? as i32,
        tiling: f[6..].join(" "),
    })
}

/// `launch` captured [`LAUNCHES`] times into a graph on `stream`.
fn graph_of(stream: &std::sync::Arc<CudaStream>, mut launch: impl FnMut() -> Result<(), GemmError>) -> Result<CudaGraph, GemmError> {
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    let launched = (0..LAUNCHES).try_for_each(|_| launch());
    let graph = stream.end_capture(CUgraphInstantiate_flags(0))?;
    launched?;
    graph.ok_or_else(|| GemmError::Unsupported("an empty capture".into()))
}

pub fn main(args: Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: gemm-lab deepgemm MANIFEST [--cold] [--soak SECONDS] [--variant SETTINGS]...";
    let manifest = args.get(1).ok_or(usage)?;
    let (mut soak, mut variants, mut cold) = (None, Vec::new(), false);
    let mut rest = args[2..].iter();
    while let Some(flag) = rest.next() {
        if flag == "--cold" {
            cold = true;
            continue;
        }
        let value = rest.next().ok_or(usage)?;
        match flag.as_str() {
            "--soak" => soak = Some(value.parse::<f64>().map_err(|_| usage)?),
            "--variant" => variants.push((value.clone(), crate::variants::variant_kernel(&fp8_block_scaled::KERNEL.spec, value)?)),
            _ => return Err(usage.into()),
        }
    }
    let entries: Vec<Entry> = std::fs::read_to_string(manifest)?.lines().filter(|l| !l.trim().is_empty()).map(parse).collect::<Result<_, _>>()?;
    Ok(run(&entries, cold, soak, &variants)?)
}

fn run(entries: &[Entry], cold: bool, soak: Option<f64>, variants: &[(String, Kernel)]) -> Result<(), GemmError> {
    let say = |what: String| GemmError::Unsupported(what);
    let bench = Bench::open()?;
    let ctx = bench.stream().context().clone();
    // A capture refuses the events cudarc would make its launches wait on: every
    // stream here is ordered by synchronizing instead.
    // SAFETY: each buffer's use on the capture stream follows a synchronize of the stream that wrote it.
    unsafe { ctx.disable_event_tracking() };
    let s = ctx.new_stream()?;
    let operands =
        if cold { "each launch's operands a copy of its own, the copies past twice the L2" } else { "one set of operands, as the L2 keeps it" };
    println!(
        "{} ({} SMs), DeepGEMM 327ec92 as its JIT built it; graphs of {LAUNCHES} launches timed in rotation, medians; {operands}\n",
        bench.gpu.name, bench.facts.sms
    );
    println!("| M x N x K | `fp8_block_scaled` | `fp8_block_tuned` (its point) | DeepGEMM (its tiling: SMs, block m x n, stages, multicast) | cuBLASLt by block | cuBLASLt per tensor | DeepGEMM / our faster |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let (mut errors, mut soaks) = (Vec::new(), Vec::new());
    for e in entries {
        let (m, n, k) = e.dims;
        if !m.is_multiple_of(4) {
            errors.push(format!("{m} x {n} x {k}: left out: M must be a multiple of 4 for the two libraries' A scales to be one buffer"));
            continue;
        }
        let dims = Dims::new(m, n, k);
        // the check's reference: a shape cuBLASLt refuses is said so and left out, not the run's end
        if let Some(why) = LtFp8::block_scaled_refuses(dims) {
            errors.push(format!("{m} x {n} x {k}: left out: {why}"));
            continue;
        }
        // A [m][k] by 1 x 128 blocks, its scales [k block][m]; B stored [n][k] by 128 x 128 blocks, [n block][k block]
        let (x, w) = (s.clone_htod(&random_normal(m * k, 1))?, s.clone_htod(&random_normal(n * k, 2))?);
        let (mut a, mut b) = (s.alloc_zeros::<F8E4M3>(m * k)?, s.alloc_zeros::<F8E4M3>(n * k)?);
        let mut sa = s.alloc_zeros::<f32>(block_scales_a_len(m, k))?;
        let mut sb = s.alloc_zeros::<f32>(block_scales_b_len(n, k))?;
        quantize::rows_by_k_block(&s, &x, (m, k), &mut a, &mut sa)?;
        quantize::blocks(&s, &w, (n, k), &mut b, &mut sb)?;
        // `--cold`: copies of the operands, a launch in a graph taking the next, so that together
        // they pass twice the L2 and each launch reads its operands from memory
        let bytes = m * k + n * k + 4 * (sa.len() + sb.len());
        let copies = if cold { ((2 * bench.facts.l2_bytes as usize).div_ceil(bytes) + 1).min(MAX_COPIES) } else { 1 };
        let mut sets = vec![Operands { a, b, sa, sb }];
        for _ in 1..copies {
            let o = &sets[0];
            let copy = Operands { a: s.clone_dtod(&o.a)?, b: s.clone_dtod(&o.b)?, sa: s.clone_dtod(&o.sa)?, sb: s.clone_dtod(&o.sb)? };
            sets.push(copy);
        }
        s.synchronize()?;
        let ones = (s.clone_htod(&[1.0f32])?, s.clone_htod(&[1.0f32])?);
        // (C poisoned: a kernel that leaves an element unwritten fails the check)
        let mut cs: Vec<CudaSlice<bf16>> = (0..5).map(|_| s.clone_htod(&vec![bf16::NAN; m * n])).collect::<Result<_, _>>()?;
        let mut cv: Vec<CudaSlice<bf16>> = variants.iter().map(|_| s.clone_htod(&vec![bf16::NAN; m * n])).collect::<Result<_, _>>()?;
        let mut lt_block: Vec<LtFp8> =
            sets.iter().map(|o| LtFp8::block_scaled::<F8E4M3, F8E4M3, bf16>(&s, dims, (&o.sa, &o.sb))).collect::<Result<_, _>>()?;
        let mut lt_tensor = LtFp8::new::<F8E4M3, F8E4M3, bf16>(&s, dims, (&ones.0, &ones.1), false)?;
        // the tuned kernel picks its point on its first launch at the shape (outside any capture)
        fp8_block_tuned::KERNEL.launch_with(&s, &sets[0].a, &sets[0].b, &mut cs[1], dims, ep(&sets[0]))?;
        let tuned = fp8_block_tuned::KERNEL.chosen_for(&s, dims)?.ok_or_else(|| say("fp8_block_tuned chose no point".into()))?;
        // SAFETY: DeepGEMM's JIT output: a library whose loading runs no code of consequence
        let lib = unsafe { libloading::Library::new(&e.so) }.map_err(|err| say(format!("{}: {err}", e.so)))?;
        // SAFETY: the symbol DeepGEMM's JIT exports, with the signature its template writes
        let dg: libloading::Symbol<Launch> = unsafe { lib.get(b"launch") }.map_err(|err| say(format!("{}: {err}", e.so)))?;
        let ptr = |p: u64| p as *mut c_void;
        let stream_ptr = s.cu_stream() as *mut c_void;
        let sms = e.sms;
        let deepgemm = |o: &Operands, c: &mut CudaSlice<bf16>| -> Result<(), GemmError> {
            let (pa, pb, psa, psb) = (o.a.device_ptr(&s).0, o.b.device_ptr(&s).0, o.sa.device_ptr(&s).0, o.sb.device_ptr(&s).0);
            let pc = c.device_ptr(&s).0;
            let mut rc = 0i32;
            // SAFETY: device buffers of the sizes DeepGEMM's wrapper checks, on one stream
            unsafe { dg(ptr(pa), ptr(psa), ptr(pb), ptr(psb), ptr(pc), m as i32, stream_ptr, sms, e.smem, &mut rc) };
            if rc != 0 {
                return Err(GemmError::Unsupported(format!("DeepGEMM's launch returned {rc}")));
            }
            Ok(())
        };
        // each once on the first operands, then checked against cuBLASLt by block (per tensor: unscaled, not compared)
        {
            let o = &sets[0];
            let [c0, c1, c2, c3, c4] = &mut cs[..] else { unreachable!() };
            fp8_block_scaled(&s, &o.a, &o.b, c0, &o.sa, &o.sb, dims)?;
            tuned.launch_with(&s, &o.a, &o.b, c1, dims, ep(o))?;
            deepgemm(o, c2)?;
            lt_block[0].run(&o.a, &o.b, c3)?;
            lt_tensor.run(&o.a, &o.b, c4)?;
            for ((_, kernel), c) in variants.iter().zip(cv.iter_mut()) {
                kernel.launch_with(&s, &o.a, &o.b, c, dims, ep(o))?;
            }
        }
        s.synchronize()?;
        let outs: Vec<Vec<f32>> =
            cs.iter().chain(&cv).map(|c| Ok::<_, GemmError>(s.clone_dtoh(c)?.iter().map(|x| x.to_f32()).collect())).collect::<Result<_, _>>()?;
        let reference = &outs[3];
        let errs: Vec<f64> = outs.iter().map(|o| relative_error(o, reference)).collect::<Result<_, _>>().map_err(say)?;
        errors.push(format!(
            "{m} x {n} x {k}: relative error against cuBLASLt by block: `fp8_block_scaled` {:.1e}, `fp8_block_tuned` {:.1e}, DeepGEMM {:.1e}{}",
            errs[0],
            errs[1],
            errs[2],
            variants.iter().zip(&errs[5..]).map(|((label, _), e)| format!(", `{label}` {e:.1e}")).collect::<String>()
        ));
        // a graph's launches take the operand sets in turn
        let turn = std::cell::Cell::new(0usize);
        let next = || {
            let i = turn.get();
            turn.set(i + 1);
            i % sets.len()
        };
        let [c0, c1, c2, c3, c4] = &mut cs[..] else { unreachable!() };
        let mut graphs = vec![
            graph_of(&s, || {
                let o = &sets[next()];
                fp8_block_scaled(&s, &o.a, &o.b, c0, &o.sa, &o.sb, dims)
            })?,
            graph_of(&s, || {
                let o = &sets[next()];
                tuned.launch_with(&s, &o.a, &o.b, c1, dims, ep(o))
            })?,
            graph_of(&s, || deepgemm(&sets[next()], c2))?,
            graph_of(&s, || {
                let i = next();
                lt_block[i].run(&sets[i].a, &sets[i].b, c3)
            })?,
            graph_of(&s, || {
                let o = &sets[next()];
                lt_tensor.run(&o.a, &o.b, c4)
            })?,
        ];
        for ((_, kernel), c) in variants.iter().zip(cv.iter_mut()) {
            graphs.push(graph_of(&s, || {
                let o = &sets[next()];
                kernel.launch_with(&s, &o.a, &o.b, c, dims, ep(o))
            })?);
        }
        let t = time_rotation_of(&s, graphs.len(), Reps { warmup: 3, runs: 30 }, |i| Ok(graphs[i].launch()?))?;
        let tf: Vec<f64> = t.iter().map(|t| dims.flops() / (t.median_ms() / LAUNCHES as f64 * 1e-3) / 1e12).collect();
        println!(
            "| {m} x {n} x {k} | {:.1} | {:.1} (`{}`) | {:.1} ({}) | {:.1} | {:.1} | {:.1}% |",
            tf[0],
            tf[1],
            tuned.name,
            tf[2],
            e.tiling,
            tf[3],
            tf[4],
            100.0 * tf[2] / tf[1].max(tf[0])
        );
        for ((label, _), v) in variants.iter().zip(&tf[5..]) {
            println!("| (`fp8_block_scaled` with `{label}`) | {v:.1} | | | | | {:.1}% |", 100.0 * tf[2] / v);
        }
        if let Some(secs) = soak {
            let nvml = gemm_ladder::nvml::Nvml::open(s.context());
            // DeepGEMM, ours, each variant, then back
            let there: Vec<usize> = [2, 1].into_iter().chain(5..graphs.len()).collect();
            for &i in there.iter().chain(there.iter().rev()) {
                let soaked = gemm_ladder::measure::soak(&s, nvml.as_ref(), secs, dims.flops() * LAUNCHES as f64, || Ok(graphs[i].launch()?))?;
                let who = match i {
                    2 => "DeepGEMM".to_string(),
                    1 => "fp8_block_tuned".to_string(),
                    _ => format!("`fp8_block_scaled` with `{}`", variants[i - 5].0),
                };
                soaks.push(format!("{m} x {n} x {k}, {who} alone for {secs} s: {}", soaked.describe()));
            }
        }
        drop(graphs);
        drop(lib);
    }
    println!();
    errors.iter().chain(&soaks).for_each(|e| println!("{e}"));
    Ok(())
}
