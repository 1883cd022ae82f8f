//! Check a kernel against cuBLAS, then time both: the harness of every example.

use std::fmt;
use std::sync::Arc;

use gemm_runtime::cudarc::driver::{CudaSlice, CudaStream};
use gemm_runtime::data::{random_normal, relative_error, F32_TOLERANCE, POISON};
use gemm_runtime::device::Gpu;
use gemm_runtime::reference::Cublas;
use gemm_runtime::spec::{Elem, Layout};
use gemm_runtime::timing::{time, Timing};
use gemm_runtime::{Dims, GemmError, Kernel};

/// Why a measurement failed: the GPU said no, or the kernel computed a wrong C.
#[derive(Debug)]
pub enum Failure {
    Gpu(GemmError),
    Wrong { kernel: String, dims: Dims, detail: String },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Gpu(e) => write!(f, "{e}"),
            Failure::Wrong { kernel, dims, detail } => {
                write!(f, "`{kernel}` is wrong at {}x{}x{}: {detail}", dims.m, dims.n, dims.k)
            }
        }
    }
}

impl std::error::Error for Failure {}

impl From<GemmError> for Failure {
    fn from(e: GemmError) -> Self {
        Failure::Gpu(e)
    }
}

/// Timing repetitions.
#[derive(Clone, Copy, Debug)]
pub struct Reps {
    pub warmup: usize,
    pub runs: usize,
}

impl Default for Reps {
    fn default() -> Self {
        Reps { warmup: 3, runs: 20 }
    }
}

/// A GPU with its cuBLAS handle: everything a measurement needs.
pub struct Bench {
    pub gpu: Gpu,
    pub blas: Cublas,
}

impl Bench {
    /// Device 0 and cuBLAS on its stream; `Err` says why not (no driver, no GPU).
    pub fn open() -> Result<Self, GemmError> {
        let gpu = gemm_runtime::device::open(0)?;
        let blas = Cublas::new(gpu.stream.clone())?;
        Ok(Bench { gpu, blas })
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.gpu.stream
    }
}

/// Random normal A and B for a problem, laid out as a kernel reads them.
pub struct Problem {
    pub dims: Dims,
    pub layouts: [Layout; 3],
    pub a: CudaSlice<f32>,
    pub b: CudaSlice<f32>,
    pub c_len: usize,
}

impl Problem {
    pub fn new(bench: &Bench, layouts: [Layout; 3], dims: Dims, seed: u64) -> Result<Self, GemmError> {
        let op = |l| gemm_runtime::spec::Operand { elem: Elem::F32, layout: l };
        let [sa, sb, sc] = gemm_runtime::args_shapes(op(layouts[0]), op(layouts[1]), op(layouts[2]), dims);
        let s = bench.stream();
        let a = s.clone_htod(&random_normal(sa.span(), seed))?;
        let b = s.clone_htod(&random_normal(sb.span(), seed.wrapping_add(1)))?;
        Ok(Problem { dims, layouts, a, b, c_len: sc.span() })
    }

    /// A C buffer full of [`POISON`].
    pub fn poisoned_c(&self, bench: &Bench) -> Result<CudaSlice<f32>, GemmError> {
        Ok(bench.stream().clone_htod(&vec![POISON; self.c_len])?)
    }

    /// C as cuBLAS computes it.
    pub fn reference(&self, bench: &Bench) -> Result<Vec<f32>, GemmError> {
        let mut c = self.poisoned_c(bench)?;
        bench.blas.sgemm(self.layouts, &self.a, &self.b, &mut c, self.dims)?;
        Ok(bench.stream().clone_dtoh(&c)?)
    }
}

fn layouts(k: &Kernel) -> [Layout; 3] {
    [k.spec.a.layout, k.spec.b.layout, k.spec.c.layout]
}

/// Runs `kernel` once on fresh random inputs into a poisoned C and compares
/// with cuBLAS: the relative error, or a [`Failure::Wrong`] past the tolerance.
pub fn verify(bench: &Bench, kernel: &Kernel, dims: Dims, seed: u64) -> Result<f64, Failure> {
    let p = Problem::new(bench, layouts(kernel), dims, seed)?;
    let reference = p.reference(bench)?;
    verify_on(bench, kernel, &p, &reference)
}

/// [`verify`] on a problem whose cuBLAS result is known, for checking many
/// kernels on one set of inputs.
pub fn verify_on(bench: &Bench, kernel: &Kernel, p: &Problem, reference: &[f32]) -> Result<f64, Failure> {
    let mut c = p.poisoned_c(bench)?;
    kernel.launch(bench.stream(), &p.a, &p.b, &mut c, p.dims)?;
    let out = bench.stream().clone_dtoh(&c).map_err(GemmError::from)?;
    let wrong = |detail| Failure::Wrong { kernel: kernel.name.to_string(), dims: p.dims, detail };
    match relative_error(&out, reference) {
        Ok(err) if err <= F32_TOLERANCE => Ok(err),
        Ok(err) => Err(wrong(format!("relative error {err:.3e} against cuBLAS is over {F32_TOLERANCE:.0e}"))),
        Err(detail) => Err(wrong(detail)),
    }
}

/// Times `kernel` on random inputs (CUDA events, warm-up, `reps.runs` runs).
pub fn time_kernel(bench: &Bench, kernel: &Kernel, dims: Dims, reps: Reps) -> Result<Timing, GemmError> {
    let p = Problem::new(bench, layouts(kernel), dims, 11)?;
    time_on(bench, kernel, &p, reps)
}

/// [`time_kernel`] on given inputs.
pub fn time_on(bench: &Bench, kernel: &Kernel, p: &Problem, reps: Reps) -> Result<Timing, GemmError> {
    let mut c = p.poisoned_c(bench)?;
    time(bench.stream(), reps.warmup, reps.runs, |_| kernel.launch(bench.stream(), &p.a, &p.b, &mut c, p.dims))
}

/// Times cuBLAS sgemm on the same kind of inputs.
pub fn time_cublas(bench: &Bench, layouts: [Layout; 3], dims: Dims, reps: Reps) -> Result<Timing, GemmError> {
    let p = Problem::new(bench, layouts, dims, 11)?;
    let mut c = p.poisoned_c(bench)?;
    time(bench.stream(), reps.warmup, reps.runs, |_| bench.blas.sgemm(layouts, &p.a, &p.b, &mut c, dims))
}

/// One step measured: correctness, then speed beside cuBLAS's.
pub struct Measured {
    pub kernel: String,
    pub dims: Dims,
    pub rel_err: f64,
    pub ms: f64,
    pub tflops: f64,
}

/// Verifies, then times, `kernel` at `dims`.
pub fn measure(bench: &Bench, kernel: &Kernel, dims: Dims, reps: Reps) -> Result<Measured, Failure> {
    let rel_err = verify(bench, kernel, dims, 1)?;
    let t = time_kernel(bench, kernel, dims, reps)?;
    Ok(Measured { kernel: kernel.name.to_string(), dims, rel_err, ms: t.median_ms(), tflops: t.tflops(dims.flops()) })
}
