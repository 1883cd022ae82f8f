//! A bf16 linear layer, `y = gelu(x * W + b)`, as one kernel: the mma
//! ladder's best tiling with the bias and GELU fused into its epilogue (on
//! the way into its C tile in shared memory) and its edges guarded, so any
//! number of tokens works. Checked against
//! cuBLAS's product with the bias and GELU applied on the host, then timed
//! beside the same kernel without the epilogue (what fusing costs), beside
//! cuBLAS followed by a separate bias + GELU pass (what fusing saves), and
//! beside cuBLASLt's own fused GELU_BIAS epilogue (checked against ours).
//! On an sm_90 GPU the same layer on the Hopper path is checked and timed
//! beside them, each with and without its epilogue: `linear_hopper` (the
//! Hopper ladder's `tma_store` tiling, consumers sharing each tile, W read
//! N-major; and the same with the tail split, `persistent = tail_split`,
//! and with the exact GELU, erf's, which cuBLASLt does not fuse),
//! `linear_pingpong` (the `pingpong` step's: consumers taking
//! tiles in turn, one's epilogue beside the other's wgmmas) and
//! `linear_pingpong_2x1` (the same in clusters of two sharing W's tiles)
//! and `linear_pingpong_wide` (ping-pong on 64x256 tiles), and
//! `linear_overlap` (`linear_hopper`'s tiling in four stages, each
//! consumer's halves going out beside each other's wgmmas).
//!
//! `cargo run --release --example linear -- [--tokens 4096] [--features 4096] [--out 11008]`;
//! `--hopper-source FILE --plain-source FILE [--hopper-stages N]` time a
//! hand-edited `linear_hopper` and plain twin beside them; `--only PREFIX`
//! times only the Hopper layers so named. Each Hopper layer and its plain
//! twin (the same kernel without bias and GELU) are launched in turns, so
//! that the epilogue's cost compares launches the GPU ran at like clocks;
//! `--soak SECONDS` also times each kernel alone for that long, sustained,
//! where the clock follows its own power draw.

use clap::Parser;
use cudarc::cublaslt::{CudaBlasLT, Matmul, MatmulConfig};
use gemm_ladder::fused::{verify_fused, Scalars};
use gemm_ladder::measure::{time_turns, Bench, DevMat, Problem, Reps};
use gemm_ladder::steps::mma_autotuned;
use gemm_runtime::cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use gemm_runtime::internal::timing::time;
use gemm_runtime::spec::{Activation, Fused, KernelSpec, Persistent, Staging};
// ANCHOR: imports
use gemm_runtime::{bf16, gemm_kernel, Bias, Mat, MatMut, RowMajor};
// ANCHOR_END: imports
use gemm_runtime::{Dims, Kernel};

/// The layer: x (tokens x features) times W (features x out), plus the bias
/// (one value per output feature), through GELU's tanh form (as cuBLASLt's
/// GELU epilogue), in bf16 with f32 accumulation.
// ANCHOR: linear
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    epilogue = smem(bias = n, activation = gelu_tanh),
    edges = guarded,
)]
pub fn linear(x: Mat<bf16, RowMajor>, w: Mat<bf16, RowMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);
// ANCHOR_END: linear

/// The same layer on the Hopper path (sm_90a): the `tma_store` step's
/// tiling (128x256 tiles, a producer and two consumer warpgroups of wgmma
/// m64n256k16, a persistent grid, C out by TMA stores), W row-major as the
/// layer has it, the bias and GELU on the way into the C tile.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma(bias = n, activation = gelu_tanh),
    edges = guarded,
)]
pub fn linear_hopper(x: Mat<bf16, RowMajor>, w: Mat<bf16, RowMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

/// The layer on ping-pong consumers (the `pingpong` step's tiling): each
/// consumer's bias, GELU and stores run while the other's wgmmas do.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 384),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 5),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, pingpong),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma(bias = n, activation = gelu_tanh),
    edges = guarded,
)]
pub fn linear_pingpong(x: Mat<bf16, RowMajor>, w: Mat<bf16, RowMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

/// `linear_pingpong` in clusters of two blocks along m, which share W's
/// tiles by TMA multicast (each loads half of a stage for both): half the
/// L2 traffic of W, the two blocks' consumers taking their turns in step.
#[gemm_kernel(
    block(m = 128, n = 128, k = 64, threads = 384),
    warp(m = 128, n = 128),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 5),
    specialize(producers = 1, consumers = 2, producer_regs = 40, consumer_regs = 232, pingpong),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    cluster(m = 2, n = 1, multicast = b),
    epilogue = tma(bias = n, activation = gelu_tanh),
    edges = guarded,
)]
pub fn linear_pingpong_2x1(x: Mat<bf16, RowMajor>, w: Mat<bf16, RowMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

/// Ping-pong on 64x256 tiles: one m64n256k16 wgmma a K step per consumer
/// (the widest, which reads the least shared memory per flop), the same
/// 128 accumulators a thread as `linear_pingpong`'s 128x128.
#[gemm_kernel(
    block(m = 64, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, pingpong),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma(bias = n, activation = gelu_tanh),
    edges = guarded,
)]
pub fn linear_pingpong_wide(x: Mat<bf16, RowMajor>, w: Mat<bf16, RowMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

/// `linear_hopper`'s tiling with four stages and each consumer's columns in
/// two wgmma atoms of 128, whose epilogues run a half at a time beside the
/// other half's wgmmas (`specialize(.., overlap)`): the first half while the
/// second's last K step computes, the second while the next tile's first
/// K step does for the first.
// ANCHOR: linear_overlap
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma(bias = n, activation = gelu_tanh),
    edges = guarded,
)]
pub fn linear_overlap(x: Mat<bf16, RowMajor>, w: Mat<bf16, RowMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);
// ANCHOR_END: linear_overlap

/// The unfused pass after cuBLAS: `y = gelu_tanh(y + bias[col])` in place, bf16.
const BIAS_GELU: &str = r#"
__device__ __forceinline__ float bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
__device__ __forceinline__ unsigned short f32_to_bf16(float x) {
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}
extern "C" __global__ void bias_gelu(unsigned short* y, const unsigned short* bias, int m, int n) {
    // two neighbours per thread: 4-byte loads and stores
    const long long i = 2 * ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= (long long)m * n) return;
    const int col = (int)(i % n);
    const unsigned pair = *reinterpret_cast<const unsigned*>(&y[i]);
    float v[2] = {bf16_to_f32(pair & 0xffff) + bf16_to_f32(bias[col]), bf16_to_f32(pair >> 16) + bf16_to_f32(bias[col + 1])};
    for (int j = 0; j < 2; ++j) v[j] = 0.5f * v[j] * (1.0f + tanhf(0.79788456080286536f * (v[j] + 0.044715f * v[j] * v[j] * v[j])));
    *reinterpret_cast<unsigned*>(&y[i]) = (unsigned)f32_to_bf16(v[0]) | ((unsigned)f32_to_bf16(v[1]) << 16);
}
"#;

#[derive(Parser)]
#[command(about = "A fused bf16 linear layer, y = gelu(x * W + b), against cuBLAS")]
struct Args {
    /// Rows of x: tokens.
    #[arg(long, default_value_t = 4096)]
    tokens: usize,
    /// Columns of x, rows of W.
    #[arg(long, default_value_t = 4096)]
    features: usize,
    /// Columns of W and y; even (the separate pass stores pairs).
    #[arg(long, default_value_t = 11008)]
    out: usize,
    /// Timed runs per kernel (median reported).
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Time only the Hopper layers whose names start with PREFIX (repeatable; default: all).
    #[arg(long, value_name = "PREFIX")]
    only: Vec<String>,
    /// Print the generated CUDA and stop (no GPU needed).
    #[arg(long)]
    cuda: bool,
    /// Also time a hand-edited `linear_hopper`: the CUDA in FILE (the kernel
    /// of the same name and parameters, checked like the others) beside
    /// `--plain-source`'s, the hand-edit of its plain twin.
    #[arg(long, value_name = "FILE", requires = "plain_source")]
    hopper_source: Option<std::path::PathBuf>,
    /// The hand-edited plain twin that `--hopper-source`'s kernel is timed beside.
    #[arg(long, value_name = "FILE", requires = "hopper_source")]
    plain_source: Option<std::path::PathBuf>,
    /// The stages of the hand-edited kernels' spec (default: `linear_hopper`'s).
    #[arg(long, requires = "hopper_source")]
    hopper_stages: Option<u32>,
    /// Also time each chosen Hopper layer sustained: its fused kernel alone,
    /// launched back to back for this many seconds, then its plain twin
    /// twice, then the fused kernel again, each at the clock its own power
    /// draw leaves the GPU (the H100 runs these GEMMs at its power cap);
    /// each soak's TFLOP/s and when it began and ended (Unix time, ms), to
    /// read beside `nvidia-smi -lms`.
    #[arg(long, value_name = "SECONDS")]
    soak: Option<f64>,
}

/// `kernel` with the CUDA in `path` in place of its generated source (the
/// spec still gives the launch). A few per run: leaking them is simpler
/// than teaching `Kernel` to own a hand-edited source.
fn hand_edited(kernel: &Kernel, path: &std::path::Path) -> Result<Kernel, Box<dyn std::error::Error>> {
    let source = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(gemm_ladder::variants::hand_edited(kernel, source, None, None).map_err(|e| format!("{}: {e}", path.display()))?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if args.cuda {
        print!("{}", linear::CUDA);
        return Ok(());
    }
    if args.out % 2 != 0 {
        return Err(format!("--out {} must be even: the separate bias + GELU pass stores pairs", args.out).into());
    }
    let bench = Bench::open()?;
    let dims = Dims::new(args.tokens, args.out, args.features);
    let kernel = &linear::KERNEL;

    // correctness: cuBLAS's product, the bias and GELU on the host, rounded to bf16
    let err = verify_fused(&bench, kernel, dims, 1, Scalars { alpha: 1.0, beta: 0.0 })?;
    let odd = Dims::new(1000, 3000, 1000); // not a multiple of any tile
    let odd_err = verify_fused(&bench, kernel, odd, 2, Scalars { alpha: 1.0, beta: 0.0 })?;
    println!(
        "y = gelu(x * W + b) on {}: relative error {err:.2e} at {}x{}x{}, {odd_err:.2e} at 1000x3000x1000",
        bench.gpu.name, dims.m, dims.n, dims.k
    );

    let s = bench.stream();
    let p = Problem::for_kernel(&bench, kernel, dims, 3)?;
    let bias = DevMat::from_f32(s, gemm_runtime::spec::Elem::Bf16, &gemm_ladder::measure::random_normal(dims.n, 4))?;
    let mut y = p.poisoned_c(&bench)?;
    let reps = Reps { warmup: 5, runs: args.runs };
    let timed = |f: &mut dyn FnMut() -> Result<(), gemm_runtime::GemmError>| time(s, reps.warmup, reps.runs, |_| f());

    let fused = timed(&mut || p.launch_fused(&bench, kernel, &mut y, 1.0, 0.0, Some(&bias)))?;
    let plain = timed(&mut || p.launch(&bench, &mma_autotuned::KERNEL, &mut y))?;
    let cublas = timed(&mut || p.cublas(&bench, &mut y))?;
    // cuBLAS, then the separate bias + GELU pass over y
    let f = gemm_runtime::internal::compile::load(s.context(), BIAS_GELU, "bias_gelu", "sm_80", 0)?;
    let (m, n) = (dims.m as i32, dims.n as i32);
    let pairs = (dims.m * dims.n / 2) as u32;
    let cfg = LaunchConfig { grid_dim: (pairs.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (DevMat::Bf16(yb), DevMat::Bf16(bb)) = (&mut y, &bias) else { unreachable!("the layer is bf16") };
    let separate = |y: &mut gemm_runtime::cudarc::driver::CudaSlice<bf16>| -> Result<(), gemm_runtime::GemmError> {
        match (&p.a, &p.b) {
            (DevMat::Bf16(a), DevMat::Bf16(b)) => bench.blas.gemm(p.layouts, a, b, y, dims)?,
            _ => unreachable!("the layer is bf16"),
        }
        let mut l = s.launch_builder(&f);
        l.arg(&mut *y).arg(bb).arg(&m).arg(&n);
        // SAFETY: y holds m x n bf16 values, bias n; n is even, so every pair is inside y
        unsafe { l.launch(cfg) }?;
        Ok(())
    };
    let unfused = time(s, reps.warmup, reps.runs, |_| separate(yb))?;

    // cuBLASLt with its GELU_BIAS epilogue (GELU's tanh form). cuBLASLt is
    // column-major: row-major y = x * W is column-major y^T = W^T x^T, whose
    // rows (bias along them) are y's columns.
    let lt = CudaBlasLT::new(s.clone()).map_err(|e| format!("cuBLASLt: {e:?}"))?;
    let (DevMat::Bf16(x), DevMat::Bf16(wt)) = (&p.a, &p.b) else { unreachable!("the layer is bf16") };
    let (mu, nu, ku) = (dims.m as u64, dims.n as u64, dims.k as u64);
    let lt_cfg = MatmulConfig {
        transa: false,
        transb: false,
        transc: false,
        m: nu,
        n: mu,
        k: ku,
        alpha: 1.0,
        lda: nu as i64,
        ldb: ku as i64,
        beta: 0.0,
        ldc: nu as i64,
        stride_a: None,
        stride_b: None,
        stride_c: None,
        stride_bias: None,
        batch_size: None,
    };
    // SAFETY: W is k x n and x m x k (row-major, dense), y m x n, the bias n long
    let cublaslt = |y: &mut CudaSlice<bf16>| unsafe { lt.matmul(lt_cfg, wt, x, y, Some(bb), Some(&cudarc::cublaslt::Activation::Gelu)) };
    let mut y_lt = p.poisoned_c(&bench)?;
    let DevMat::Bf16(ylt) = &mut y_lt else { unreachable!("the layer is bf16") };
    cublaslt(ylt).map_err(|e| format!("cuBLASLt: {e:?}"))?;
    // (cuBLASLt's error type is not the runtime's: the timed calls keep the first error aside)
    let mut lt_error = None;
    let lt_fused = time(s, reps.warmup, reps.runs, |_| {
        if let Err(e) = cublaslt(ylt) {
            lt_error.get_or_insert(e);
        }
        Ok(())
    })?;
    if let Some(e) = lt_error {
        return Err(format!("cuBLASLt: {e:?}").into());
    }
    // the same layer, two ways: ours against cuBLASLt's
    p.launch_fused(&bench, kernel, &mut y, 1.0, 0.0, Some(&bias))?;
    let (ours, theirs) = (y.to_f32(s)?, y_lt.to_f32(s)?);
    let diff = ours.iter().zip(&theirs).map(|(a, b)| f64::from(a - b).powi(2)).sum::<f64>().sqrt();
    let norm = theirs.iter().map(|b| f64::from(*b).powi(2)).sum::<f64>().sqrt();
    println!("ours against cuBLASLt's GELU_BIAS: relative (Frobenius) difference {:.2e}", diff / norm);

    // the Hopper path, where the GPU has it: each fused kernel checked, then
    // timed beside its plain twin, the same spec without the bias and GELU
    // and linear_hopper whose last, part-full wave of tiles is split along K
    // (at 4096 x 11008: 56 tiles left for 132 SMs, two pieces each)
    let spec = &linear_hopper::KERNEL.spec;
    let tail_split =
        Kernel::from_spec(KernelSpec { name: format!("{}_tail_split", spec.name).into(), persistent: Some(Persistent::TailSplit), ..spec.clone() })?;
    // and with four stages, as hopper_autotuned has them (the C tile out in two parts)
    let deep =
        Kernel::from_spec(KernelSpec { name: format!("{}_tail_split_s4", spec.name).into(), staging: Staging::tma(4), ..tail_split.spec.clone() })?;
    // and the exact GELU (erf), which cuBLASLt's epilogue does not offer
    let erf = |k: &Kernel| {
        let fused = Fused { activation: Some(Activation::Gelu), ..k.spec.fused };
        Kernel::from_spec(KernelSpec { name: format!("{}_erf", k.spec.name).into(), fused, ..k.spec.clone() })
    };
    let (hopper_erf, pingpong_erf, overlap_erf) = (erf(&linear_hopper::KERNEL)?, erf(&linear_pingpong::KERNEL)?, erf(&linear_overlap::KERNEL)?);
    let plain_twin =
        |k: &Kernel| Kernel::from_spec(KernelSpec { name: format!("plain_{}", k.spec.name).into(), fused: Fused::default(), ..k.spec.clone() });
    let edited = match (&args.hopper_source, &args.plain_source) {
        (Some(f), Some(p)) => {
            let mut spec = linear_hopper::KERNEL.spec.clone();
            if let Some(stages) = args.hopper_stages {
                spec.staging = Staging::tma(stages);
            }
            let base = Kernel::from_spec(spec)?;
            Some((hand_edited(&base, f)?, hand_edited(&plain_twin(&base)?, p)?))
        }
        _ => None,
    };
    let mut layers: Vec<(&str, &Kernel, &str)> = vec![
        ("linear_overlap", &linear_overlap::KERNEL, "on the Hopper path, each half's epilogue beside the other's wgmmas"),
        ("linear_overlap (erf GELU)", &overlap_erf, "on the Hopper path, halves overlapped, with the exact GELU (erf)"),
        ("linear_hopper", &linear_hopper::KERNEL, "on the Hopper path"),
        ("linear_hopper (tail split)", &tail_split, "on the Hopper path, the last wave split along K"),
        ("linear_hopper (tail split, 4 stages)", &deep, "on the Hopper path, the last wave split, four stages"),
        ("linear_hopper (erf GELU)", &hopper_erf, "on the Hopper path with the exact GELU (erf)"),
        ("linear_pingpong", &linear_pingpong::KERNEL, "on ping-pong consumers"),
        ("linear_pingpong (erf GELU)", &pingpong_erf, "on ping-pong consumers with the exact GELU (erf)"),
        ("linear_pingpong_2x1", &linear_pingpong_2x1::KERNEL, "on ping-pong consumers in clusters of two"),
        ("linear_pingpong_wide", &linear_pingpong_wide::KERNEL, "on ping-pong consumers of 64x256 tiles"),
    ];
    if let Some((k, _)) = &edited {
        layers.push(("linear_hopper (hand-edited)", k, "on the Hopper path, hand-edited"));
    }
    if let Some(unknown) = args.only.iter().find(|o| !layers.iter().any(|(name, ..)| name.starts_with(o.as_str()))) {
        let names: Vec<&str> = layers.iter().map(|(name, ..)| *name).collect();
        return Err(format!("--only {unknown}: no Hopper layer's name starts so ({})", names.join(", ")).into());
    }
    let mut hopper = Vec::new();
    if bench.gpu.capability == (9, 0) {
        let chosen = |name: &str| args.only.is_empty() || args.only.iter().any(|o| name.starts_with(o.as_str()));
        for (i, (name, k, label)) in layers.into_iter().enumerate().filter(|(_, (name, ..))| chosen(name)) {
            let twin;
            let plain_k = match &edited {
                Some((f, p)) if std::ptr::eq(k, f) => p,
                _ => {
                    twin = plain_twin(k)?;
                    &twin
                }
            };
            let seed = 5 + 2 * i as u64;
            let err = verify_fused(&bench, k, dims, seed, Scalars { alpha: 1.0, beta: 0.0 })?;
            let odd_err = verify_fused(&bench, k, odd, seed + 1, Scalars { alpha: 1.0, beta: 0.0 })?;
            println!("{name}: relative error {err:.2e} at {}x{}x{}, {odd_err:.2e} at 1000x3000x1000", dims.m, dims.n, dims.k);
            // the fused kernel and its twin in turns, each launch between events of its own: the
            // clock the GPU picks drifts over a process, and so weighs on both alike
            let (fused, plain) = time_turns(s, reps, |fused| {
                if fused {
                    p.launch_fused(&bench, k, &mut y, 1.0, 0.0, Some(&bias))
                } else {
                    p.launch(&bench, plain_k, &mut y)
                }
            })?;
            // sustained: each kernel alone, back to back, at the clock its own power draw leaves the GPU
            let sustained = match args.soak {
                Some(secs) => {
                    let fused_plain = gemm_ladder::measure::time_sustained(s, secs, dims.flops(), [name, "plain twin"], |fused| {
                        if fused {
                            p.launch_fused(&bench, k, &mut y, 1.0, 0.0, Some(&bias))
                        } else {
                            p.launch(&bench, plain_k, &mut y)
                        }
                    })?;
                    // and once, cuBLAS's GEMM beside the plain twin
                    if hopper.is_empty() {
                        let [theirs, ours] = gemm_ladder::measure::time_sustained(s, secs, dims.flops(), ["cuBLAS GEMM", "plain twin"], |cublas| {
                            if cublas {
                                p.cublas(&bench, &mut y)
                            } else {
                                p.launch(&bench, plain_k, &mut y)
                            }
                        })?;
                        println!("sustained, {name}'s plain twin runs at {:.1}% of cuBLAS's GEMM", 100.0 * ours / theirs);
                    }
                    Some(fused_plain)
                }
                None => None,
            };
            hopper.push((name, label, fused, plain, sustained));
        }
    }

    let flops = dims.flops();
    println!("{:<48} {:>9} {:>9} {:>12}", "", "ms", "TFLOP/s", "vs fused");
    let mut rows = vec![
        ("fused: linear (bias + GELU in the epilogue)", &fused),
        ("same kernel, no epilogue (mma_autotuned)", &plain),
        ("cuBLAS GEMM alone", &cublas),
        ("cuBLAS GEMM + separate bias + GELU pass", &unfused),
        ("cuBLASLt GEMM with its GELU_BIAS epilogue", &lt_fused),
    ];
    let names: Vec<(String, String)> = hopper.iter().map(|(name, ..)| (format!("fused: {name}"), format!("{name}, no epilogue"))).collect();
    for ((_, _, fused, plain, _), (fused_name, plain_name)) in hopper.iter().zip(&names) {
        rows.push((fused_name, fused));
        rows.push((plain_name, plain));
    }
    for (name, t) in rows {
        println!("{name:<48} {:>9.3} {:>9.1} {:>11.3}x", t.median_ms(), t.tflops(flops), t.median_ms() / fused.median_ms());
    }
    println!("the fused epilogue costs {:+.1}% over the same kernel without it", 100.0 * (fused.median_ms() / plain.median_ms() - 1.0));
    for (_, label, fused, plain, sustained) in &hopper {
        print!("{label} it costs {:+.1}%", 100.0 * (fused.median_ms() / plain.median_ms() - 1.0));
        match sustained {
            Some([f, p]) => println!(" (in turns), {:+.1}% sustained ({f:.1} against {p:.1} TFLOP/s)", 100.0 * (p / f - 1.0)),
            None => println!(),
        }
    }
    Ok(())
}
