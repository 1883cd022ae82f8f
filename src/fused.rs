//! Checks of the fused epilogue against cuBLAS: `alpha` and `beta` through
//! cuBLAS's own (into an f32 C, so nothing is rounded twice), the bias and
//! the activation applied to its result on the host in f64, then rounded
//! to C's type as the kernel rounds. Batches and any size included (over
//! K = 0 the product is zeros, `beta * C` on the host); a gated
//! epilogue's pairs (gate, up) joined on the host too.

use gemm_runtime::internal::data::{relative_error, POISON};
use gemm_runtime::spec::{Dim, Elem, Layout};
use gemm_runtime::{bf16, f16, Dims, GemmError, Kernel, Tuned};

use crate::measure::{c_offsets, random_normal, written_outside_c, Bench, DevMat, Failure, Problem};

/// `alpha` and `beta` for a check; `beta = 0` leaves C poisoned, which the
/// kernel must then not read.
#[derive(Clone, Copy, Debug)]
pub struct Scalars {
    pub alpha: f32,
    pub beta: f32,
}

/// `x` rounded to `elem` as the kernels round (to nearest even), widened back.
fn round_to(elem: Elem, x: f32) -> f32 {
    match elem {
        Elem::F32 => x,
        Elem::F16 => f16::from_f32(x).to_f32(),
        Elem::Bf16 => bf16::from_f32(x).to_f32(),
        Elem::F8E4M3 | Elem::F8E5M2 => unreachable!("the rules keep C f32, f16 or bf16"),
    }
}

/// Runs `kernel` (fused epilogue or not) on random inputs and compares every
/// element of C with the reference: the relative error, or why it is wrong.
pub fn verify_fused(bench: &Bench, kernel: &Kernel, dims: Dims, seed: u64, sc: Scalars) -> Result<f64, Failure> {
    verify_launch(bench, kernel, dims, seed, sc, |p, c, bias| p.launch_fused(bench, kernel, c, sc.alpha, sc.beta, bias))
}

/// [`verify_fused`] for a tuned kernel (which tunes first where the
/// shape's key is new, on the very buffers checked here: C, under beta,
/// must come out of the tuning as it went in).
pub fn verify_tuned_fused(bench: &Bench, tuned: &Tuned, dims: Dims, seed: u64, sc: Scalars) -> Result<f64, Failure> {
    verify_launch(bench, tuned.kernel(0), dims, seed, sc, |p, c, bias| p.launch_tuned_fused(bench, tuned, c, sc.alpha, sc.beta, bias))
}

/// The check itself: `kernel` gives the spec (types, layouts, epilogue)
/// and `launch` runs it on the problem into C with the bias.
fn verify_launch(
    bench: &Bench,
    kernel: &Kernel,
    dims: Dims,
    seed: u64,
    sc: Scalars,
    launch: impl FnOnce(&Problem, &mut DevMat, Option<&DevMat>) -> Result<(), GemmError>,
) -> Result<f64, Failure> {
    let spec = &kernel.spec;
    let f = spec.fused;
    let s = bench.stream();
    let p = Problem::for_kernel(bench, kernel, dims, seed)?;
    let (alpha, beta) = (if f.alpha { sc.alpha } else { 1.0 }, if f.beta { sc.beta } else { 0.0 });
    // C before the launch: values beta scales, or poison where beta = 0
    // (and the guard lines past C, which must come out as they went in)
    let len = p.c_len + p.c_guard;
    let c0: Vec<f32> =
        if beta != 0.0 { random_normal(len, seed + 7).into_iter().map(|x| round_to(spec.c.elem, x)).collect() } else { vec![POISON; len] };
    let bias_host: Option<Vec<f32>> = f.bias.map(|b| {
        let len = if b.along == Dim::N { dims.n } else { dims.m };
        let len = (dims.batch.count - 1) * dims.batch.stride_bias + len;
        random_normal(len, seed + 9).into_iter().map(|x| round_to(b.elem, x)).collect()
    });
    let bias = match (&bias_host, f.bias) {
        (Some(v), Some(b)) => Some(DevMat::from_f32(s, b.elem, v)?),
        _ => None,
    };
    let mut c = DevMat::from_f32(s, spec.c.elem, &c0)?;
    launch(&p, &mut c, bias.as_ref())?;
    let out = c.to_f32(s)?;
    // cuBLAS: alpha * A * B + beta * C0 into an f32 C; gated, the whole product (C0 is not read),
    // packed, problem after problem
    let (wide_dims, product) = if f.gated {
        let (m, n, count) = (dims.m, dims.n, dims.batch.count);
        let packed = Dims { ldc: None, ..dims }.batched(count, dims.batch.stride_a, dims.batch.stride_b, m * n);
        (
            packed,
            Some(move |batch: usize, row: usize, col: usize| {
                batch * m * n + if p.layouts[2] == Layout::RowMajor { row * n + col } else { col * m + row }
            }),
        )
    } else {
        (dims, None)
    };
    let mut wide = match product {
        Some(_) => DevMat::from_f32(s, Elem::F32, &vec![0.0; wide_dims.batch.count * dims.m * dims.n])?,
        None => DevMat::from_f32(s, Elem::F32, &c0)?,
    };
    match (&p.a, &p.b) {
        // over K = 0 the product is zeros: alpha * 0 + beta * C0 (C0 in `wide`; not read where beta = 0)
        _ if dims.k == 0 => {
            let scaled: Vec<f32> = wide.to_f32(s)?.into_iter().map(|x| if beta == 0.0 { 0.0 } else { beta * x }).collect();
            wide = DevMat::from_f32(s, Elem::F32, &scaled)?;
        }
        // 8-bit operands, which cuBLAS's GEMM does not take, and scaled ones: sgemm on them
        // widened to f32, each times its scale (exactly)
        _ if p.a.elem().is_fp8() || p.scales.is_some() => {
            let (a, b) = p.widened_operands(bench)?;
            bench.blas.gemm_scaled(p.layouts, a.f32(), b.f32(), wide.f32_mut(), wide_dims, alpha, beta)?
        }
        (DevMat::F32(a), DevMat::F32(b)) => bench.blas.gemm_scaled(p.layouts, a, b, wide.f32_mut(), wide_dims, alpha, beta)?,
        (DevMat::F16(a), DevMat::F16(b)) => bench.blas.gemm_scaled(p.layouts, a, b, wide.f32_mut(), wide_dims, alpha, beta)?,
        (DevMat::Bf16(a), DevMat::Bf16(b)) => bench.blas.gemm_scaled(p.layouts, a, b, wide.f32_mut(), wide_dims, alpha, beta)?,
        _ => unreachable!("a problem's A and B share a type"),
    }
    let wide = wide.to_f32(s)?;
    let (mut got, mut want) = (Vec::new(), Vec::new());
    let offsets = c_offsets(kernel, dims);
    let at = format!("{}x{}x{} (batch of {})", dims.m, dims.n, dims.k, dims.batch.count);
    let wrong = |detail| Failure::Wrong { kernel: kernel.name.to_string(), at: at.clone(), detail };
    if let Some(i) = written_outside_c(&out, &c0, &offsets) {
        return Err(wrong(format!(
            "element {i} of C's buffer lies outside C (between problems, past a line's end or past C's last line) and was written"
        )));
    }
    // the product at (row, col) of a problem with its bias: C's element at `at`, or gated, the product's
    let value = |at: usize, batch: usize, row: usize, col: usize| {
        // (lazily: C's offset `at` may lie past the packed product's end)
        let mut v = product.map_or_else(|| wide[at], |p| wide[p(batch, row, col)]) as f64;
        if let (Some(b), Some(bias)) = (f.bias, &bias_host) {
            let i = if b.along == Dim::N { col } else { row };
            v += bias[batch * dims.batch.stride_bias + i] as f64;
        }
        v
    };
    for &(at, batch, row, col) in &offsets {
        let act = |v: f64| f.activation.map_or(v, |a| a.apply(v));
        let v = match f.gated {
            true => act(value(at, batch, row, 2 * col)) * value(at, batch, row, 2 * col + 1),
            false => act(value(at, batch, row, col)),
        };
        got.push(out[at]);
        want.push(round_to(spec.c.elem, v as f32));
    }
    let tol = crate::measure::kernel_tolerance(spec);
    match relative_error(&got, &want) {
        Ok(e) if e <= tol => Ok(e),
        Ok(e) => Err(wrong(format!("relative error {e:.3e} against cuBLAS and the host's epilogue is over {tol:.1e}"))),
        Err(d) => Err(wrong(d)),
    }
}
