//! Mixture-of-experts layers on the grouped kernels (`src/grouped.rs`),
//! each beside what a user would do without them, in one process:
//! - the same work as one dense GEMM of all the routed rows against one
//!   expert's weight (the upper bound: the same flops, no groups);
//! - a loop of cuBLAS GEMMs, one per expert, after copying the experts'
//!   row counts to the host (the synchronization a loop needs, timed);
//! - cuBLAS's grouped GEMM (`cublasGemmGroupedBatchedEx`, one call), after
//!   the same copy: it takes the sizes in host memory.
//!
//! Layers (bf16, each expert's W stored `[n, k]`, up-projections with gate
//! and up rows interleaved, n = 2 x the feed-forward width, SwiGLU in the
//! epilogue: C holds silu(gate) * up, n / 2 wide):
//! - Mixtral-8x7B-like: 8 experts, n = 2 x 14336, k = 4096, 8192 and 32768
//!   routed rows, balanced and skewed by a Zipf law (expert i's share
//!   proportional to 1 / (i + 1));
//! - DeepSeek-V3-like: 32 local experts, n = 2 x 2048, k = 7168, 8192 rows;
//! - a masked decode step: the DeepSeek-like experts with room for 64
//!   tokens each, 1 to 64 of them routed to each.
//!
//! Contiguous layouts run `grouped_swiglu` (and, for the gate's cost,
//! `grouped_contiguous`, which writes the product itself), the decode step
//! `grouped_masked_swiglu`; then each on e4m3 operands quantized from the
//! same ones with DeepGEMM's block scales (`grouped_fp8_swiglu`,
//! `grouped_masked_fp8_swiglu`), checked against the bf16 layer within
//! e4m3's rounding. The cuBLAS loop and the dense GEMM compute the
//! product alone: SwiGLU would be a pass of its own after them, not
//! counted. Each result is checked against the cuBLAS loop's, SwiGLU
//! applied on the host, before it is timed; a row's launches are timed in
//! rotation, so that all run at the clocks the GPU's power cap leaves
//! them.
//! `cargo run --release --example moe`

use gemm_ladder::grouped::{grouped_contiguous, grouped_fp8_swiglu, grouped_masked_fp8_swiglu, grouped_masked_swiglu, grouped_swiglu};
use gemm_ladder::measure::{random_normal, time_rotation, Bench, Reps};
use gemm_runtime::cudarc::driver::CudaSlice;
use gemm_runtime::internal::data::{relative_error, tolerance};
use gemm_runtime::quantize::{blocks, rows_by_k_block};
use gemm_runtime::spec::{block_scales_a_len, block_scales_b_len};
use gemm_runtime::spec::{Elem, Layout};
use gemm_runtime::F8E4M3;
use gemm_runtime::{bf16, Dims, GemmError};

/// A routed layer: its experts' row counts, n and k.
struct Layer {
    name: &'static str,
    rows: Vec<usize>,
    n: usize,
    k: usize,
}

fn balanced(experts: usize, total: usize) -> Vec<usize> {
    (0..experts).map(|i| total / experts + usize::from(i < total % experts)).collect()
}

/// Expert i's share proportional to 1 / (i + 1), rounded, the rest to expert 0.
fn zipf(experts: usize, total: usize) -> Vec<usize> {
    let h: f64 = (1..=experts).map(|i| 1.0 / i as f64).sum();
    let mut rows: Vec<usize> = (0..experts).map(|i| (total as f64 / ((i + 1) as f64 * h)) as usize).collect();
    rows[0] += total - rows.iter().sum::<usize>();
    rows
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let bench = Bench::open()?;
    if bench.gpu.capability != (9, 0) {
        return Err(format!(
            "the grouped kernels are sm_90a: {} is compute capability {}.{}",
            bench.gpu.name, bench.gpu.capability.0, bench.gpu.capability.1
        )
        .into());
    }
    let reps = Reps::default();
    let layers = [
        Layer { name: "Mixtral-8x7B-like, balanced", rows: balanced(8, 8192), n: 2 * 14336, k: 4096 },
        Layer { name: "Mixtral-8x7B-like, Zipf", rows: zipf(8, 8192), n: 2 * 14336, k: 4096 },
        Layer { name: "Mixtral-8x7B-like, balanced", rows: balanced(8, 32768), n: 2 * 14336, k: 4096 },
        Layer { name: "Mixtral-8x7B-like, Zipf", rows: zipf(8, 32768), n: 2 * 14336, k: 4096 },
        Layer { name: "DeepSeek-V3-like, balanced", rows: balanced(32, 8192), n: 2 * 2048, k: 7168 },
    ];
    println!("{} (driver {}), bf16, f32 accumulators; median of {} runs\n", bench.gpu.name, gemm_runtime::device::driver_version()?, reps.runs);
    println!("| layer | experts | rows | n x k | `grouped_swiglu`: us | TFLOP/s | without the gate (`grouped_contiguous`): TFLOP/s | one dense GEMM of the rows: TFLOP/s | cuBLAS per expert, counts copied to the host: us | speed-up | cuBLAS's grouped GEMM, counts copied: us | speed-up | e4m3, block scales (`grouped_fp8_swiglu`): TFLOP/s | e4m3 / bf16 |");
    println!("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    // each layer's grouped_swiglu over the dense GEMM, the cuBLAS loop over grouped_swiglu, e4m3 over bf16
    let mut log_sums = [0.0f64; 3];
    for layer in &layers {
        let ratios = contiguous(&bench, layer, reps)?;
        log_sums.iter_mut().zip(ratios).for_each(|(sum, r)| *sum += r.ln());
    }
    let [of_dense, over_loop, e4m3] = log_sums.map(|sum| (sum / layers.len() as f64).exp());
    println!(
        "\nGeometric means: `grouped_swiglu` {:.1}% of the dense GEMM; speed-up over the cuBLAS loop {over_loop:.2}; e4m3 {e4m3:.2} times bf16",
        100.0 * of_dense
    );
    masked(&bench, reps)?;
    Ok(())
}

/// SwiGLU on the host: the interleaved (gate, up) pairs of rows of `v` as silu(gate) * up.
fn swiglu(v: &[bf16]) -> Vec<f32> {
    let silu = gemm_runtime::spec::Activation::Silu;
    v.chunks(2).map(|p| (silu.apply(p[0].to_f64()) * p[1].to_f64()) as f32).collect()
}

fn bf16_random(bench: &Bench, len: usize, seed: u64) -> Result<CudaSlice<bf16>, GemmError> {
    let v: Vec<bf16> = random_normal(len, seed).into_iter().map(bf16::from_f32).collect();
    Ok(bench.stream().clone_htod(&v)?)
}

/// cuBLAS, one GEMM per expert with rows, over rows `starts[g]..starts[g] + rows[g]` of A and C
/// (C's rows `c_rows[g]` on), each expert's W `g * n * k` elements in.
#[allow(clippy::too_many_arguments)]
fn cublas_loop(
    bench: &Bench,
    a: &CudaSlice<bf16>,
    w: &CudaSlice<bf16>,
    c: &mut CudaSlice<bf16>,
    rows: &[usize],
    a_starts: &[usize],
    c_starts: &[usize],
    (n, k): (usize, usize),
) -> Result<(), GemmError> {
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    for (g, &r) in rows.iter().enumerate().filter(|(_, &r)| r > 0) {
        let av = a.slice(a_starts[g] * k..(a_starts[g] + r) * k);
        let wv = w.slice(g * n * k..(g + 1) * n * k);
        let mut cv = c.slice_mut(c_starts[g] * n..(c_starts[g] + r) * n);
        bench.blas.gemm(layouts, &av, &wv, &mut cv, Dims::new(r, n, k))?;
    }
    Ok(())
}

/// One layer's row of the table; returns `grouped_swiglu`'s speed over the
/// dense GEMM's, the cuBLAS loop's time over `grouped_swiglu`'s, and
/// e4m3's speed over bf16's.
fn contiguous(bench: &Bench, layer: &Layer, reps: Reps) -> Result<[f64; 3], Box<dyn std::error::Error>> {
    let s = bench.stream();
    let (g, n, k) = (layer.rows.len(), layer.n, layer.k);
    let m: usize = layer.rows.iter().sum();
    let starts: Vec<usize> = layer.rows.iter().scan(0, |at, r| Some(std::mem::replace(at, *at + r))).collect();
    let ends: Vec<i32> = starts.iter().zip(&layer.rows).map(|(s, r)| (s + r) as i32).collect();
    let a = bf16_random(bench, m * k, 1)?;
    let w = bf16_random(bench, g * n * k, 2)?;
    let ends_gpu = s.clone_htod(&ends).map_err(GemmError::from)?;
    // C: silu(gate) * up, n / 2 wide; the product itself (without the gate, and cuBLAS's) n wide
    let mut c = s.alloc_zeros::<bf16>(m * n / 2).map_err(GemmError::from)?;
    let mut product = s.alloc_zeros::<bf16>(m * n).map_err(GemmError::from)?;
    let mut c_ref = s.alloc_zeros::<bf16>(m * n).map_err(GemmError::from)?;
    let dims = Dims::new(m, n, k).batched(g, 0, n * k, 0);
    grouped_swiglu(s, &a, &w, &mut c, &ends_gpu, dims)?;
    grouped_contiguous(s, &a, &w, &mut product, &ends_gpu, dims)?;
    cublas_loop(bench, &a, &w, &mut c_ref, &layer.rows, &starts, &starts, (n, k))?;
    let widen = |v: Vec<bf16>| v.into_iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let reference = s.clone_dtoh(&c_ref).map_err(GemmError::from)?;
    let errs = [
        relative_error(&widen(s.clone_dtoh(&c).map_err(GemmError::from)?), &swiglu(&reference))?,
        relative_error(&widen(s.clone_dtoh(&product).map_err(GemmError::from)?), &widen(reference))?,
    ];
    if let Some(err) = errs.into_iter().find(|&e| e > tolerance(Elem::Bf16)) {
        return Err(format!("{}: relative error {err:.1e} against cuBLAS per expert", layer.name).into());
    }
    // cuBLAS's grouped GEMM computes the loop's C
    let mut c_grouped = s.alloc_zeros::<bf16>(m * n).map_err(GemmError::from)?;
    bench.blas.grouped_bf16(&a, &w, &mut c_grouped, &layer.rows, (&starts, &starts), (n, k))?;
    let err = relative_error(&widen(s.clone_dtoh(&c_grouped).map_err(GemmError::from)?), &widen(s.clone_dtoh(&c_ref).map_err(GemmError::from)?))?;
    if err > tolerance(Elem::Bf16) {
        return Err(format!("{}: cuBLAS's grouped GEMM off its loop by {err:.1e}", layer.name).into());
    }
    // the same layer on e4m3: A by 1 x 128 blocks (its scales over all m rows, which the groups
    // share), each expert's W by 128 x 128 blocks (n a multiple of 128: the experts' scales one
    // after another, as blocks of the [G * n, k] weights lie)
    assert!(n % 128 == 0, "each expert's W in whole 128-row blocks");
    let (mut qa, mut sa) =
        (s.alloc_zeros::<F8E4M3>(m * k).map_err(GemmError::from)?, s.alloc_zeros::<f32>(block_scales_a_len(m, k)).map_err(GemmError::from)?);
    let (mut qw, mut sb) =
        (s.alloc_zeros::<F8E4M3>(g * n * k).map_err(GemmError::from)?, s.alloc_zeros::<f32>(g * block_scales_b_len(n, k)).map_err(GemmError::from)?);
    rows_by_k_block(s, &a, (m, k), &mut qa, &mut sa)?;
    blocks(s, &w, (g * n, k), &mut qw, &mut sb)?;
    let mut c8 = s.alloc_zeros::<bf16>(m * n / 2).map_err(GemmError::from)?;
    grouped_fp8_swiglu(s, &qa, &qw, &mut c8, &ends_gpu, &sa, &sb, dims)?;
    let fp8_err = relative_error(&widen(s.clone_dtoh(&c8).map_err(GemmError::from)?), &widen(s.clone_dtoh(&c).map_err(GemmError::from)?))?;
    if fp8_err > FP8_BOUND {
        return Err(format!("{}: e4m3 off the bf16 layer by {fp8_err:.1e}", layer.name).into());
    }
    let flops = 2.0 * (m * n * k) as f64;
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    let w0 = w.slice(0..n * k);
    // (every launch of the row in rotation, so that each runs at the clocks the power cap leaves all)
    let [ours, fp8, ungated, dense, looped, grouped_api] = time_rotation(s, reps, |i| match i {
        0 => grouped_swiglu(s, &a, &w, &mut c, &ends_gpu, dims),
        1 => grouped_fp8_swiglu(s, &qa, &qw, &mut c8, &ends_gpu, &sa, &sb, dims),
        2 => grouped_contiguous(s, &a, &w, &mut product, &ends_gpu, dims),
        3 => bench.blas.gemm(layouts, &a, &w0, &mut c_ref, Dims::new(m, n, k)),
        // what a user writes without the kernel: the counts to the host, then a GEMM per expert
        // (4) or cuBLAS's grouped GEMM (5)
        _ => {
            let ends: Vec<i32> = s.clone_dtoh(&ends_gpu).map_err(GemmError::from)?;
            let rows: Vec<usize> = ends.iter().scan(0i32, |at, &e| Some((e - std::mem::replace(at, e)) as usize)).collect();
            if i == 4 {
                cublas_loop(bench, &a, &w, &mut c_ref, &rows, &starts, &starts, (n, k))
            } else {
                bench.blas.grouped_bf16(&a, &w, &mut c_grouped, &rows, (&starts, &starts), (n, k))
            }
        }
    })?;
    println!(
        "| {} | {g} | {m} | {n} x {k} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} | {:.2} | {:.1} | {:.2} |",
        layer.name,
        ours.median_ms() * 1e3,
        ours.tflops(flops),
        ungated.tflops(flops),
        dense.tflops(flops),
        looped.median_ms() * 1e3,
        looped.median_ms() / ours.median_ms(),
        grouped_api.median_ms() * 1e3,
        grouped_api.median_ms() / ours.median_ms(),
        fp8.tflops(flops),
        ours.median_ms() / fp8.median_ms()
    );
    Ok([dense.median_ms() / ours.median_ms(), looped.median_ms() / ours.median_ms(), ours.median_ms() / fp8.median_ms()])
}

/// How far (relative, over all of C) the e4m3 layer may lie from the bf16
/// one: each 8-bit operand rounds to 2^-4 relative, about 3% over a sum,
/// and SwiGLU multiplies two such sums.
const FP8_BOUND: f64 = 0.08;

/// The decode step: 32 experts with room for 64 tokens each, 1 to 64 routed
/// to each (a fixed draw), `grouped_masked_swiglu` on the whole `[32, 64, k]`
/// beside the cuBLAS loop over the tokens each expert holds.
fn masked(bench: &Bench, reps: Reps) -> Result<(), Box<dyn std::error::Error>> {
    let s = bench.stream();
    let (g, m_max, n, k) = (32usize, 64usize, 2 * 2048, 7168);
    let counts: Vec<i32> = (0..g).map(|i| 1 + ((i * 37 + 11) % 64) as i32).collect();
    let rows: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
    let tokens: usize = rows.iter().sum();
    let a = bf16_random(bench, g * m_max * k, 3)?;
    let w = bf16_random(bench, g * n * k, 4)?;
    let counts_gpu = s.clone_htod(&counts).map_err(GemmError::from)?;
    let mut c = s.alloc_zeros::<bf16>(g * m_max * n / 2).map_err(GemmError::from)?;
    let mut c_ref = s.alloc_zeros::<bf16>(g * m_max * n).map_err(GemmError::from)?;
    let dims = Dims::new(m_max, n, k).batched(g, m_max * k, n * k, m_max * n / 2);
    let starts: Vec<usize> = (0..g).map(|i| i * m_max).collect();
    grouped_masked_swiglu(s, &a, &w, &mut c, &counts_gpu, dims)?;
    cublas_loop(bench, &a, &w, &mut c_ref, &rows, &starts, &starts, (n, k))?;
    let (ours_c, ref_c) = (s.clone_dtoh(&c).map_err(GemmError::from)?, s.clone_dtoh(&c_ref).map_err(GemmError::from)?);
    // each expert's rows of tokens, `width` wide
    let rows_of =
        |v: &[bf16], width: usize| -> Vec<bf16> { (0..g).flat_map(|e| v[e * m_max * width..(e * m_max + rows[e]) * width].to_vec()).collect() };
    let ours_rows: Vec<f32> = rows_of(&ours_c, n / 2).into_iter().map(|x| x.to_f32()).collect();
    let err = relative_error(&ours_rows, &swiglu(&rows_of(&ref_c, n)))?;
    if err > tolerance(Elem::Bf16) {
        return Err(format!("masked decode: relative error {err:.1e} against cuBLAS per expert").into());
    }
    // on e4m3: each expert's A by 1 x 128 blocks (its scales after the one before's), the weights
    // by 128 x 128 blocks
    let la = block_scales_a_len(m_max, k);
    let (mut qa, mut sa) = (s.alloc_zeros::<F8E4M3>(g * m_max * k).map_err(GemmError::from)?, s.alloc_zeros::<f32>(g * la).map_err(GemmError::from)?);
    let (mut qw, mut sb) =
        (s.alloc_zeros::<F8E4M3>(g * n * k).map_err(GemmError::from)?, s.alloc_zeros::<f32>(g * block_scales_b_len(n, k)).map_err(GemmError::from)?);
    for e in 0..g {
        let rows = e * m_max * k..(e + 1) * m_max * k;
        rows_by_k_block(s, &a.slice(rows.clone()), (m_max, k), &mut qa.slice_mut(rows), &mut sa.slice_mut(e * la..(e + 1) * la))?;
    }
    blocks(s, &w, (g * n, k), &mut qw, &mut sb)?;
    let mut c8 = s.alloc_zeros::<bf16>(g * m_max * n / 2).map_err(GemmError::from)?;
    grouped_masked_fp8_swiglu(s, &qa, &qw, &mut c8, &counts_gpu, &sa, &sb, dims)?;
    let c8_rows: Vec<f32> = rows_of(&s.clone_dtoh(&c8).map_err(GemmError::from)?, n / 2).into_iter().map(|x| x.to_f32()).collect();
    let fp8_err = relative_error(&c8_rows, &ours_rows)?;
    if fp8_err > FP8_BOUND {
        return Err(format!("masked decode: e4m3 off the bf16 layer by {fp8_err:.1e}").into());
    }
    let flops = 2.0 * (tokens * n * k) as f64;
    let bytes = 2.0 * (g * n * k) as f64;
    let [ours, fp8, looped, grouped_api] = time_rotation(s, reps, |i| match i {
        0 => grouped_masked_swiglu(s, &a, &w, &mut c, &counts_gpu, dims),
        1 => grouped_masked_fp8_swiglu(s, &qa, &qw, &mut c8, &counts_gpu, &sa, &sb, dims),
        _ => {
            let counts: Vec<i32> = s.clone_dtoh(&counts_gpu).map_err(GemmError::from)?;
            let rows: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
            let c = &mut c_ref;
            if i == 2 {
                cublas_loop(bench, &a, &w, c, &rows, &starts, &starts, (n, k))
            } else {
                bench.blas.grouped_bf16(&a, &w, c, &rows, (&starts, &starts), (n, k))
            }
        }
    })?;
    let hbm = bench.facts.memory_bytes_per_s();
    println!(
        "\nMasked decode step, {g} experts of up to {m_max} tokens ({tokens} routed), n x k = {n} x {k}: `grouped_masked_swiglu` {:.1} us ({:.1} TFLOP/s, the weights read at {:.1}% of HBM's peak); cuBLAS per expert with the counts copied to the host {:.1} us; speed-up {:.2}",
        ours.median_ms() * 1e3,
        ours.tflops(flops),
        100.0 * bytes / (ours.median_ms() * 1e-3) / hbm,
        looped.median_ms() * 1e3,
        looped.median_ms() / ours.median_ms()
    );
    println!(
        "cuBLAS's grouped GEMM with the counts copied to the host {:.1} us; speed-up {:.2}",
        grouped_api.median_ms() * 1e3,
        grouped_api.median_ms() / ours.median_ms()
    );
    // the e4m3 weights and their scales
    let bytes8 = (g * n * k + 4 * g * block_scales_b_len(n, k)) as f64;
    println!(
        "On e4m3 with block scales, `grouped_masked_fp8_swiglu` {:.1} us (the weights read at {:.1}% of HBM's peak), {:.2} times the bf16 step",
        fp8.median_ms() * 1e3,
        100.0 * bytes8 / (fp8.median_ms() * 1e-3) / hbm,
        ours.median_ms() / fp8.median_ms()
    );
    Ok(())
}
