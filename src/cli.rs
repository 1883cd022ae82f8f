//! The examples' shared command line: run some ladder steps at one size and
//! print a table beside cuBLAS, measured in the same process.

use clap::{CommandFactory, FromArgMatches, Parser};
use gemm_runtime::spec::Layout;
use gemm_runtime::Dims;

use crate::measure::{config, describe, measure, time_cublas_typed, Bench, Config, Failure, Reps};
use crate::report::{rounded, write_json, write_target, LadderRecord, SizeRecord, StepRecord};
use crate::Step;

/// `rcr`: A, B and C's layouts, r for row-major, c for column-major.
pub fn parse_layouts(s: &str) -> Result<[Layout; 3], String> {
    let letters: Vec<Layout> = s
        .chars()
        .map(|l| match l {
            'r' => Ok(Layout::RowMajor),
            'c' => Ok(Layout::ColMajor),
            _ => Err(format!("`{l}`: layouts are r (row-major) or c (column-major)")),
        })
        .collect::<Result<_, _>>()?;
    letters.try_into().map_err(|_| format!("`{s}`: three layouts, A's, B's and C's (as rcr)"))
}

/// The sizes a program's command line names (`N` or `MxNxK` each), or
/// `default` where it names none; a bad one ends the process with status 2.
pub fn sizes_or(default: &[(usize, usize, usize)]) -> Vec<(usize, usize, usize)> {
    sizes_or_without(default, &[])
}

/// [`sizes_or`] past the program's `flags`, which its command line may also hold.
pub fn sizes_or_without(default: &[(usize, usize, usize)], flags: &[&str]) -> Vec<(usize, usize, usize)> {
    let sizes: Result<Vec<_>, String> = std::env::args().skip(1).filter(|a| !flags.contains(&a.as_str())).map(|a| parse_mnk(&a)).collect();
    match sizes {
        Ok(s) if s.is_empty() => default.to_vec(),
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

/// One size argument, `N` (cubed) or `MxNxK`, each side at least 1.
pub fn parse_mnk(text: &str) -> Result<(usize, usize, usize), String> {
    let bad = || format!("`{text}`: a size is N (cubed) or MxNxK, each a positive whole number");
    let sides: Vec<usize> = text.split('x').map(|p| p.parse::<usize>().ok().filter(|&v| v > 0)).collect::<Option<_>>().ok_or_else(bad)?;
    match sides[..] {
        [n] => Ok((n, n, n)),
        [m, n, k] => Ok((m, n, k)),
        _ => Err(bad()),
    }
}

/// The examples' size arguments: `SIZE` (cubed) or `M N K`.
#[derive(Debug, clap::Args)]
pub struct SizeArgs {
    /// SIZE for SIZE x SIZE x SIZE, or M N K (default: the example's own)
    #[arg(value_name = "SIZE | M N K", num_args = 0..=3)]
    pub dims: Vec<usize>,
}

impl SizeArgs {
    /// The sizes asked for, or `default` where none.
    pub fn dims(&self, default: Dims) -> Result<Dims, String> {
        let dims = match self.dims.as_slice() {
            [] => default,
            [s] => Dims::new(*s, *s, *s),
            [m, n, k] => Dims::new(*m, *n, *k),
            other => return Err(format!("expected SIZE or M N K, got {} numbers", other.len())),
        };
        if dims.m == 0 || dims.n == 0 || dims.k == 0 {
            return Err("every size must be at least 1".into());
        }
        Ok(dims)
    }
}

#[derive(Debug, Parser)]
struct StepsCli {
    #[command(flatten)]
    size: SizeArgs,
}

/// Parses the command line of an example that runs `steps`: its `--help`
/// names them and what each changes; bad arguments get clap's errors.
fn parse_args(steps: &[&Step], name: &str, default: Dims) -> StepsCli {
    let listed: Vec<String> = steps.iter().map(|s| format!("  {}: {}", s.name, s.change)).collect();
    let about = format!(
        "Checks each step against cuBLAS, then times it beside cuBLAS in the same process ({} by default).\n\nSteps:\n{}",
        format_args!("{} x {} x {}", default.m, default.n, default.k),
        listed.join("\n")
    );
    let cmd = StepsCli::command().name(name.to_string()).about(about);
    StepsCli::from_arg_matches(&cmd.get_matches()).unwrap_or_else(|e| e.exit())
}

/// Runs `steps`, prints the table, and writes it as `target/<name>.md` with a
/// bar chart `target/<name>.svg` and the record `target/<name>.json`; on any failure prints one line and exits 1.
pub fn main_for(steps: &[&Step], name: &str) {
    main_at(steps, name, Dims::new(4096, 4096, 4096));
}

/// [`main_for`] at `default` where the command line names no size.
pub fn main_at(steps: &[&Step], name: &str, default: Dims) {
    let args = parse_args(steps, name, default);
    if let Err(e) = args.size.dims(default).map_err(Into::into).and_then(|dims| run(steps, name, dims)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The four ladders, each in its own table and files (`ladder`, `tensor`,
/// `hopper`, `fp8`; the last two on sm_90 GPUs only).
pub fn main_for_both() {
    let simt: Vec<&Step> = crate::STEPS.iter().collect();
    let tensor: Vec<&Step> = crate::TENSOR_STEPS.iter().collect();
    let hopper: Vec<&Step> = crate::HOPPER_STEPS.iter().collect();
    let fp8: Vec<&Step> = crate::FP8_STEPS.iter().collect();
    let default = Dims::new(4096, 4096, 4096);
    let all: Vec<&Step> = simt.iter().chain(&tensor).chain(&hopper).chain(&fp8).copied().collect();
    let args = parse_args(&all, "ladder", default);
    let dims = match args.size.dims(default) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let ladders = run(&simt, "ladder", dims).and_then(|_| run(&tensor, "tensor", dims)).and_then(|_| run(&hopper, "hopper", dims));
    if let Err(e) = ladders.and_then(|_| run(&fp8, "fp8", dims)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(steps: &[&Step], name: &str, dims: Dims) -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    let reps = Reps::default();
    // (the mma.sync ceiling is the 16-bit tensor ladders' yardstick, not 8-bit wgmma's)
    let tensor = steps.iter().any(|s| s.kernel.spec.tensor_core()) && !steps.iter().any(|s| s.kernel.spec.a.elem.is_fp8());
    let driver = gemm_runtime::device::driver_version().unwrap_or_else(|_| "?".into());
    let heading = format!(
        "{} (sm_{}{}, CUDA driver {driver}), C = A * B accumulated in f32, m = {}, n = {}, k = {}; median of {} runs after {} warm-up; cuBLAS in each step's types and layouts (A, B, C; r = row-major, c = column-major)",
        bench.gpu.name, bench.gpu.capability.0, bench.gpu.capability.1, dims.m, dims.n, dims.k, reps.runs, reps.warmup
    );
    println!("{heading}\n");
    // cuBLAS once per distinct configuration, in the order the steps need them.
    let mut cublas: Vec<(Config, f64)> = Vec::new();
    for s in steps {
        let c = config(s.kernel);
        if !cublas.iter().any(|(k, _)| *k == c) {
            cublas.push((c, time_cublas_typed(&bench, c.0, c.1, dims, reps)?.tflops(dims.flops())));
        }
    }
    let ceiling = if tensor { Some(crate::peak::mma_sync_ceiling(&bench)?) } else { None };
    let mut table = if let Some(peak) = ceiling {
        vec![
            "| step | TFLOP/s | % of cuBLAS | % of mma.sync ceiling | speed-up over previous | rel. error vs cuBLAS | seed's figure |".to_string(),
            "|---|---:|---:|---:|---:|---:|---|".to_string(),
            format!("| mma.sync ceiling (back-to-back m16n8k16 bf16) | {peak:.2} | | 100.0% | | | |"),
        ]
    } else {
        vec![
            "| step | TFLOP/s | % of cuBLAS | speed-up over previous | rel. error vs cuBLAS | seed's figure |".to_string(),
            "|---|---:|---:|---:|---:|---|".to_string(),
        ]
    };
    for (c, t) in &cublas {
        let pct = ceiling.map_or(String::new(), |p| format!(" {:.1}% |", 100.0 * t / p));
        // (cuBLAS has no 8-bit GEMM: cuBLASLt's, in its default mode)
        let who = if c.0[0].is_fp8() { "cuBLASLt fp8" } else { "cuBLAS" };
        table.push(format!("| {who} {} | {t:.2} | 100.0% |{pct} | | |", describe(*c)));
    }
    for line in &table {
        println!("{line}");
    }
    let mut bars = Vec::new();
    let mut records = Vec::new();
    let mut prev: Option<f64> = None;
    for step in steps {
        let reference = cublas.iter().find(|(c, _)| *c == config(step.kernel)).map_or(f64::NAN, |r| r.1);
        let line = match measure(&bench, step.kernel, dims, reps) {
            Ok(m) => {
                let speedup = prev.map_or(String::new(), |p| format!("{:.2}x", m.tflops / p));
                prev = Some(m.tflops);
                bars.push((step.name.to_string(), m.tflops));
                records.push(StepRecord {
                    step: step.name.to_string(),
                    tflops: rounded(m.tflops, 3),
                    cublas: describe(config(step.kernel)),
                    pct_of_cublas: rounded(100.0 * m.tflops / reference, 2),
                    rel_err: m.rel_err,
                });
                let pct = ceiling.map_or(String::new(), |p| format!(" {:.1}% |", 100.0 * m.tflops / p));
                format!(
                    "| {} | {:.2} | {:.1}% |{pct} {speedup} | {:.1e} | {} |",
                    step.name,
                    m.tflops,
                    100.0 * m.tflops / reference,
                    m.rel_err,
                    step.seed
                )
            }
            Err(Failure::Gpu(gemm_runtime::GemmError::UnsupportedSize { rule, .. })) => {
                format!("| {} | skipped: {rule} | | | | {} |", step.name, step.seed)
            }
            // (a step this GPU cannot run: its arch, or shared memory past what it gives a block)
            Err(Failure::Gpu(
                e @ (gemm_runtime::GemmError::ArchTooOld { .. }
                | gemm_runtime::GemmError::ArchSpecific { .. }
                | gemm_runtime::GemmError::SharedMemory { .. }),
            )) => {
                format!("| {} | skipped: {e} | | | | {} |", step.name, step.seed)
            }
            Err(e) => return Err(e.into()),
        };
        println!("{line}");
        table.push(line);
    }
    let md = format!("{heading}\n\n{}\n", table.join("\n"));
    let (last, reference) = *cublas.last().ok_or("no steps to run")?;
    let title = format!("{} TFLOP/s, {}x{}x{} {}, {}", name, dims.m, dims.n, dims.k, describe(last), bench.gpu.name);
    let svg = crate::report::bar_chart(&title, &bars, (&format!("cuBLAS {}", describe(last)), reference));
    let (md_path, svg_path) = (write_target(&format!("{name}.md"), &md)?, write_target(&format!("{name}.svg"), &svg)?);
    let size = SizeRecord {
        m: dims.m,
        n: dims.n,
        k: dims.k,
        cublas_tflops: cublas.iter().map(|(c, t)| (describe(*c), rounded(*t, 3))).collect(),
        steps: records,
    };
    let record = LadderRecord { device: bench.gpu.name.clone(), driver, runs: reps.runs, size };
    let json_path = write_json(&format!("{name}.json"), &record)?;
    println!("\nwrote {}, {} and {}\n", md_path.display(), svg_path.display(), json_path.display());
    Ok(())
}

#[cfg(test)]
mod parse_tests {
    use super::{parse_layouts, parse_mnk, Layout};

    /// A size is a cube's side or MxNxK, every side at least 1.
    #[test]
    fn sizes_parse_as_a_cube_or_three_sides() {
        assert_eq!(parse_mnk("4096"), Ok((4096, 4096, 4096)));
        assert_eq!(parse_mnk("3072x3072x12288"), Ok((3072, 3072, 12288)));
        for bad in ["0", "12x5", "4096x0x4096", "x", "pad=8", "1x2x3x4"] {
            assert!(parse_mnk(bad).is_err(), "{bad}");
        }
    }

    /// Layouts are three letters, A's, B's and C's, each r or c.
    #[test]
    fn layouts_parse_as_three_letters_r_or_c() {
        assert_eq!(parse_layouts("rcr"), Ok([Layout::RowMajor, Layout::ColMajor, Layout::RowMajor]));
        assert_eq!(parse_layouts("rrr"), Ok([Layout::RowMajor; 3]));
        for bad in ["", "rc", "rrrr", "rxr", "RCR"] {
            assert!(parse_layouts(bad).is_err(), "{bad}");
        }
    }
}
