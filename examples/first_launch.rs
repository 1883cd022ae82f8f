//! The first launch of a kernel with and without the disk cache of compiled
//! kernels: each case runs in a fresh process (this program, started again
//! with `--child`), so nothing is cached in memory.
//! `cargo run --release --example first_launch`
//!
//! Cases: no cache (`GEMM_TILES_CACHE=off`), an empty cache (NVRTC compiles
//! and the entry is written), the same cache again (the entry is read).
//! Beside the ladder's kernels, the tuned ones (`mma_tuned`, 15 points, and
//! on an sm_90 GPU `hopper_tuned`, 48): on a miss a first launch compiles
//! and times every point; on a hit it reads the choice back and compiles
//! (or reads from the cache) only that point.
//! On an sm_90 GPU it also times what a TMA kernel's launch adds on the
//! host: encoding A's and B's tensor maps, which the runtime does anew for
//! each launch.

use std::process::Command;
use std::time::Instant;

use clap::Parser;

use gemm_ladder::measure::{Bench, Problem};
use gemm_ladder::steps::step;
use gemm_runtime::internal::compile::compilations;
use gemm_runtime::internal::disk_cache::ENV;
use gemm_runtime::{Dims, GemmError};

const STEPS: [&str; 3] = ["smem_tiling", "autotuned", "mma_autotuned"];

/// Times the first launch of three kernels in fresh processes: without the
/// disk cache of compiled kernels, with an empty one, and with it filled.
#[derive(Debug, Parser)]
#[command(name = "first_launch")]
struct Cli {
    /// One timed process (started by this program)
    #[arg(long, hide = true)]
    child: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if Cli::parse().child {
        return child();
    }
    let dir = std::env::temp_dir().join(format!("gemm-tiles-first-launch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let me = std::env::current_exe()?;
    let cases = [("no cache", "off".into()), ("empty cache", dir.clone().into_os_string()), ("cached", dir.clone().into_os_string())];
    println!("first launch of each kernel in a fresh process: compile (or read the cache), load, run once; milliseconds\n");
    println!(
        "| case | {} | mma_tuned ({} points) | hopper_tuned ({} points, sm_90) | NVRTC compilations | tunings |",
        STEPS.join(" | "),
        gemm_ladder::tuned::mma_tuned::KERNEL.points().len(),
        gemm_ladder::tuned::hopper_tuned::KERNEL.points().len()
    );
    println!("|---|{}---:|---:|---:|---:|", "---:|".repeat(STEPS.len()));
    for (name, cache) in cases {
        let out = Command::new(&me).arg("--child").env(ENV, cache).output()?;
        if !out.status.success() {
            return Err(format!("{name}: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        println!("| {name} | {} |", String::from_utf8_lossy(&out.stdout).trim());
    }
    let _ = std::fs::remove_dir_all(&dir);
    tensor_maps()
}

/// The host time of encoding `two_consumers`'s two tensor maps for a
/// 4096^3 problem, as every launch of it does: the median of 20 rounds of
/// 1000 launches' worth.
fn tensor_maps() -> Result<(), Box<dyn std::error::Error>> {
    use gemm_runtime::cudarc::driver::DevicePtr;
    use gemm_runtime::internal::tma::operand_map;
    use gemm_runtime::spec::Which;
    let bench = Bench::open()?;
    if bench.gpu.capability != (9, 0) {
        return Ok(());
    }
    let spec = &gemm_ladder::steps::two_consumers::KERNEL.spec;
    let dims = Dims::new(4096, 4096, 4096);
    let [sa, sb, _] = gemm_runtime::internal::args_shapes(spec.a, spec.b, spec.c, dims);
    let stream = bench.stream();
    let a = stream.alloc_zeros::<gemm_runtime::bf16>(4096 * 4096).map_err(GemmError::from)?;
    let b = stream.alloc_zeros::<gemm_runtime::bf16>(4096 * 4096).map_err(GemmError::from)?;
    let (pa, _ra) = a.device_ptr(stream);
    let (pb, _rb) = b.device_ptr(stream);
    let mut rounds: Vec<f64> = (0..20)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..1000 {
                std::hint::black_box(operand_map(spec, Which::A, pa, &sa, 1, 0, false)?);
                std::hint::black_box(operand_map(spec, Which::B, pb, &sb, 1, 0, false)?);
            }
            Ok(t.elapsed().as_secs_f64() * 1e6 / 1000.0)
        })
        .collect::<Result<_, GemmError>>()?;
    rounds.sort_by(f64::total_cmp);
    println!("\nTMA tensor maps of `two_consumers` (A and B, 4096^3), encoded on the host for each launch: {:.2} us a launch (median of 20 rounds of 1000)", rounds[10]);
    Ok(())
}

/// Times the first launch of each step (to its end on the GPU) and prints one row.
fn child() -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    let mut cells = Vec::new();
    for name in STEPS {
        let kernel = step(name).ok_or("a ladder step")?.kernel;
        cells.push(first_launch_ms(&bench, kernel, |p, c| p.launch(&bench, kernel, c))?);
    }
    // tuned kernels: every point compiled and timed on a miss, the choice read back on a hit
    for tuned in [&gemm_ladder::tuned::mma_tuned::KERNEL, &gemm_ladder::tuned::hopper_tuned::KERNEL] {
        if tuned.kernel(0).spec.arch == gemm_runtime::spec::Arch::Sm90a && bench.gpu.capability != (9, 0) {
            cells.push("-".into());
            continue;
        }
        cells.push(first_launch_ms(&bench, tuned.kernel(0), |p, c| p.launch_tuned(&bench, tuned, c))?);
    }
    println!("{} | {} | {}", cells.join(" | "), compilations(), gemm_runtime::Tuned::tunings());
    Ok(())
}

/// Milliseconds from `launch` (on a 512^3 problem for `kernel`'s types and
/// layouts) to the end of its work on the GPU.
fn first_launch_ms(
    bench: &Bench,
    kernel: &gemm_runtime::Kernel,
    launch: impl FnOnce(&Problem, &mut gemm_ladder::measure::DevMat) -> Result<(), GemmError>,
) -> Result<String, GemmError> {
    let p = Problem::for_kernel(bench, kernel, Dims::new(512, 512, 512), 1)?;
    let mut c = p.poisoned_c(bench)?;
    bench.stream().synchronize()?;
    let t = Instant::now();
    launch(&p, &mut c)?;
    bench.stream().synchronize()?;
    Ok(format!("{:.1}", t.elapsed().as_secs_f64() * 1e3))
}
