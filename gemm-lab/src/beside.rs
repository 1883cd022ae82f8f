//! A GEMM beside CTAs that hold some of the GPU's SMs for a while, as a
//! collective's do beside the chunks of a tensor-parallel layer: the
//! persistent walk with a fixed share of tiles a block
//! (`persistent = tiles`) against the same walk on a queue
//! (`persistent = queue`), on `hopper_autotuned`'s tiling with its
//! consumers' halves overlapped (the tensor-parallel layers' kernels).
//! `cargo run --release -p gemm-lab -- beside [MxNxK]` (default 4096 x
//! 14336 x 8192: a chunk of half the tokens of the 70B-class MLP's
//! up-projection split over two GPUs).
//!
//! The holding kernel, launched just before the GEMM on a stream of the
//! GPU's highest priority (as gemm-tp's collectives are), puts one block
//! on each of S SMs, each taking all of its SM's shared memory so that no
//! GEMM block shares it, and spins for T microseconds. Printed for each
//! hold: the GEMM's time from the launch of both to its end (CUDA events;
//! medians of runs in turns, cuBLAS alone among them for scale), and the
//! bound a walk that loses only the SMs held would reach: its time alone
//! plus S / SMs x T.

use std::sync::Arc;

use gemm_ladder::measure::{verify_on, Bench, Problem};
use gemm_ladder::variants::apply_all;
use gemm_runtime::cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute};
use gemm_runtime::cudarc::driver::{result, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use gemm_runtime::internal::compile;
use gemm_runtime::spec::Arch;
use gemm_runtime::{GemmError, Kernel};

/// Thread 0 of each block spins until `ns` nanoseconds have passed on the
/// GPU's global timer; the block's dynamic shared memory keeps its SM.
const HOLD: &str = r#"
extern "C" __global__ void hold(unsigned long long ns) {
    if (threadIdx.x == 0) {
        unsigned long long start, now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
        do {
            __nanosleep(1000);
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        } while (now - start < ns);
    }
}
"#;

/// (SMs held, for microseconds): none, then a collective's few CTAs for
/// about an all-reduce chunk's time and longer.
const HOLDS: [(u32, u64); 5] = [(0, 0), (16, 250), (32, 250), (16, 1000), (32, 1000)];
const ROUNDS: usize = 15;

/// The holding kernel (compiled and cached for this GPU) with room for
/// all of an SM's shared memory, a stream of the GPU's highest priority to
/// run it on, and the shared memory a block of it takes.
fn holder(bench: &Bench) -> Result<(CudaFunction, Arc<CudaStream>, u32), GemmError> {
    let ctx = bench.stream().context();
    let per_block = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32;
    let target = compile::device_target(Arch::Sm80, ctx.compute_capability()?);
    let hold = compile::load(ctx, HOLD, "hold", target, per_block)?;
    // all of the SM's memory as shared memory, or the L1 leaves room for a GEMM block beside it
    hold.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100)?;
    // (lower numbers are higher priorities: the range's second is the highest)
    let (_, highest) = result::stream::get_priority_range()?;
    Ok((hold, ctx.new_stream_with_priority(highest)?, per_block))
}

pub fn main(args: Vec<String>) {
    if let Err(e) = run(args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    // (args[0] is the tool's name)
    let (m, n, k) = match args.get(1) {
        Some(a) => gemm_ladder::cli::parse_mnk(a)?,
        None => (4096, 14336, 8192),
    };
    let bench = Bench::open()?;
    if bench.gpu.capability != (9, 0) {
        return Err("the walks compared are sm_90a kernels: they need compute capability 9.0".into());
    }
    let base = &gemm_ladder::steps::hopper_autotuned::KERNEL.spec;
    let mut kernels = Vec::new();
    for variant in ["overlap=true", "overlap=true,schedule=queue"] {
        let mut spec = base.clone();
        apply_all(&mut spec, variant)?;
        kernels.push((variant, Kernel::from_spec(spec)?));
    }
    let spec = &kernels[0].1.spec;
    let dims = gemm_ladder::measure::padded_dims(m, n, k, [spec.a.layout, spec.b.layout, spec.c.layout]);
    let p = Problem::for_kernel(&bench, &kernels[0].1, dims, 7)?;
    let reference = p.reference(&bench)?;
    for (variant, kernel) in &kernels {
        let err = verify_on(&bench, kernel, &p, &reference)?;
        println!("{variant}: relative error {err:.1e} against cuBLAS at {m}x{n}x{k}");
    }

    let sms = bench.facts.sms;
    let (hold, holder, per_block) = holder(&bench)?;

    let gemm = bench.stream();
    let timed = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let mut c = p.poisoned_c(&bench)?;
    // one run: the hold (if any) and the GEMM launched together, the GEMM timed from their launch to its end
    let mut once = |kernel: &Kernel, (held, us): (u32, u64)| -> Result<f64, GemmError> {
        let start = gemm.record_event(timed)?;
        if held > 0 {
            holder.wait(&start)?;
            let cfg = LaunchConfig { grid_dim: (held, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: per_block };
            let ns = us * 1000;
            // SAFETY: hold(unsigned long long), a value.
            unsafe { holder.launch_builder(&hold).arg(&ns).launch(cfg) }?;
        }
        p.launch(&bench, kernel, &mut c)?;
        let end = gemm.record_event(timed)?;
        end.synchronize()?;
        holder.synchronize()?;
        Ok(start.elapsed_ms(&end)? as f64)
    };
    for (_, kernel) in &kernels {
        once(kernel, (0, 0))?;
    }
    // cuBLAS alone in the same turns, for scale
    let mut cublas_c = p.poisoned_c(&bench)?;
    let mut cublas = || -> Result<f64, GemmError> {
        let start = gemm.record_event(timed)?;
        p.cublas(&bench, &mut cublas_c)?;
        let end = gemm.record_event(timed)?;
        end.synchronize()?;
        Ok(start.elapsed_ms(&end)? as f64)
    };
    let mut times = vec![vec![Vec::with_capacity(ROUNDS); kernels.len()]; HOLDS.len()];
    let mut cublas_times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        cublas_times.push(cublas()?);
        for (h, &hold) in HOLDS.iter().enumerate() {
            for (i, (_, kernel)) in kernels.iter().enumerate() {
                times[h][i].push(once(kernel, hold)?);
            }
        }
    }
    let median = |mut t: Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let med: Vec<Vec<f64>> = times.into_iter().map(|per| per.into_iter().map(median).collect()).collect();
    println!("\n{m} x {n} x {k}, bf16, {sms} SMs; medians of {ROUNDS} runs in turns; cuBLAS alone {:.3} ms\n", median(cublas_times));
    println!("| SMs held | for us | fixed shares: ms | queue: ms | alone + the SM-time held: ms (shares, queue) |");
    println!("|---:|---:|---:|---:|---:|");
    for (&(held, us), t) in HOLDS.iter().zip(&med) {
        let lost = held as f64 / sms as f64 * us as f64 / 1e3;
        println!("| {held} | {us} | {:.3} | {:.3} | {:.3}, {:.3} |", t[0], t[1], med[0][0] + lost, med[0][1] + lost);
    }
    Ok(())
}
