//! Check a kernel against cuBLAS, then time both: the harness of every example.

use std::fmt;
use std::sync::Arc;

use gemm_runtime::cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use gemm_runtime::device::Gpu;
use gemm_runtime::internal::data::{relative_error, tolerance, POISON};
use gemm_runtime::internal::reference::Cublas;
use gemm_runtime::internal::timing::{time, Timing};
use gemm_runtime::spec::{Elem, Layout};
use gemm_runtime::{bf16, f16, Dims, EpilogueArgs, GemmError, Kernel, Tuned, F8E4M3, F8E5M2};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rand_distr::StandardNormal;

/// Why a measurement failed: the GPU said no, or the kernel computed a wrong C.
#[derive(Debug)]
pub enum Failure {
    Gpu(GemmError),
    /// `at` is the problem's size, `m x n x k`.
    Wrong {
        kernel: String,
        at: String,
        detail: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Gpu(e) => write!(f, "{e}"),
            Failure::Wrong { kernel, at, detail } => write!(f, "`{kernel}` is wrong at {at}: {detail}"),
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
    /// What the GPU is (SMs, L2, memory), read from its driver.
    pub facts: gemm_runtime::device::Facts,
}

impl Bench {
    /// Device 0 and cuBLAS on its stream; `Err` says why not (no driver, no GPU).
    pub fn open() -> Result<Self, GemmError> {
        let gpu = gemm_runtime::device::open(0)?;
        let blas = Cublas::new(gpu.stream.clone())?;
        let facts = gemm_runtime::device::Facts::read(&gpu.ctx)?;
        Ok(Bench { gpu, blas, facts })
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.gpu.stream
    }
}

/// A device matrix of any element type a kernel takes.
pub enum DevMat {
    F32(CudaSlice<f32>),
    F16(CudaSlice<f16>),
    Bf16(CudaSlice<bf16>),
    F8E4M3(CudaSlice<F8E4M3>),
    F8E5M2(CudaSlice<F8E5M2>),
}

impl DevMat {
    /// `values` on the device as `elem` (16- and 8-bit types rounded to
    /// nearest; the 8-bit ones saturate at their largest finite value).
    pub fn from_f32(stream: &Arc<CudaStream>, elem: Elem, values: &[f32]) -> Result<Self, GemmError> {
        Ok(match elem {
            Elem::F32 => DevMat::F32(stream.clone_htod(values)?),
            Elem::F16 => DevMat::F16(stream.clone_htod(&values.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>())?),
            Elem::Bf16 => DevMat::Bf16(stream.clone_htod(&values.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>())?),
            Elem::F8E4M3 => DevMat::F8E4M3(stream.clone_htod(&values.iter().map(|&x| F8E4M3::from_f32(x)).collect::<Vec<_>>())?),
            Elem::F8E5M2 => DevMat::F8E5M2(stream.clone_htod(&values.iter().map(|&x| F8E5M2::from_f32(x)).collect::<Vec<_>>())?),
        })
    }

    /// The matrix back on the host, widened to f32 (exactly: every f16, bf16 and 8-bit float is an f32).
    pub fn to_f32(&self, stream: &Arc<CudaStream>) -> Result<Vec<f32>, GemmError> {
        Ok(match self {
            DevMat::F32(d) => stream.clone_dtoh(d)?,
            DevMat::F16(d) => stream.clone_dtoh(d)?.into_iter().map(f16::to_f32).collect(),
            DevMat::Bf16(d) => stream.clone_dtoh(d)?.into_iter().map(bf16::to_f32).collect(),
            DevMat::F8E4M3(d) => stream.clone_dtoh(d)?.iter().map(F8E4M3::to_f32).collect(),
            DevMat::F8E5M2(d) => stream.clone_dtoh(d)?.iter().map(F8E5M2::to_f32).collect(),
        })
    }

    pub fn elem(&self) -> Elem {
        match self {
            DevMat::F32(_) => Elem::F32,
            DevMat::F16(_) => Elem::F16,
            DevMat::Bf16(_) => Elem::Bf16,
            DevMat::F8E4M3(_) => Elem::F8E4M3,
            DevMat::F8E5M2(_) => Elem::F8E5M2,
        }
    }

    /// The f32 buffer, for typed launchers of f32 kernels.
    pub fn f32(&self) -> &CudaSlice<f32> {
        match self {
            DevMat::F32(d) => d,
            other => panic!("an f32 matrix was expected, not {}", other.elem().rust_name()),
        }
    }

    pub fn f32_mut(&mut self) -> &mut CudaSlice<f32> {
        match self {
            DevMat::F32(d) => d,
            other => panic!("an f32 matrix was expected, not {}", other.elem().rust_name()),
        }
    }
}

/// Runs `$body` with `$a`, `$b`, `$c` bound to the typed buffers of three
/// [`DevMat`]s: A and B of one type (or two 8-bit ones), C of any.
macro_rules! typed {
    ($a:expr, $b:expr, $c:expr, |$x:ident, $y:ident, $z:ident| $body:expr) => {
        match ($a, $b, $c) {
            (DevMat::F32($x), DevMat::F32($y), DevMat::F32($z)) => $body,
            (DevMat::F32($x), DevMat::F32($y), DevMat::F16($z)) => $body,
            (DevMat::F32($x), DevMat::F32($y), DevMat::Bf16($z)) => $body,
            (DevMat::F16($x), DevMat::F16($y), DevMat::F32($z)) => $body,
            (DevMat::F16($x), DevMat::F16($y), DevMat::F16($z)) => $body,
            (DevMat::F16($x), DevMat::F16($y), DevMat::Bf16($z)) => $body,
            (DevMat::Bf16($x), DevMat::Bf16($y), DevMat::F32($z)) => $body,
            (DevMat::Bf16($x), DevMat::Bf16($y), DevMat::F16($z)) => $body,
            (DevMat::Bf16($x), DevMat::Bf16($y), DevMat::Bf16($z)) => $body,
            (DevMat::F8E4M3($x), DevMat::F8E4M3($y), DevMat::F32($z)) => $body,
            (DevMat::F8E4M3($x), DevMat::F8E4M3($y), DevMat::F16($z)) => $body,
            (DevMat::F8E4M3($x), DevMat::F8E4M3($y), DevMat::Bf16($z)) => $body,
            (DevMat::F8E5M2($x), DevMat::F8E5M2($y), DevMat::F32($z)) => $body,
            (DevMat::F8E5M2($x), DevMat::F8E5M2($y), DevMat::F16($z)) => $body,
            (DevMat::F8E5M2($x), DevMat::F8E5M2($y), DevMat::Bf16($z)) => $body,
            (DevMat::F8E4M3($x), DevMat::F8E5M2($y), DevMat::F32($z)) => $body,
            (DevMat::F8E4M3($x), DevMat::F8E5M2($y), DevMat::F16($z)) => $body,
            (DevMat::F8E4M3($x), DevMat::F8E5M2($y), DevMat::Bf16($z)) => $body,
            (DevMat::F8E5M2($x), DevMat::F8E4M3($y), DevMat::F32($z)) => $body,
            (DevMat::F8E5M2($x), DevMat::F8E4M3($y), DevMat::F16($z)) => $body,
            (DevMat::F8E5M2($x), DevMat::F8E4M3($y), DevMat::Bf16($z)) => $body,
            (a, b, _) => panic!("A and B differ in type: {} and {}", a.elem().rust_name(), b.elem().rust_name()),
        }
    };
}

/// Random normal A and B for a problem, laid out and typed as a kernel reads them.
pub struct Problem {
    pub dims: Dims,
    pub layouts: [Layout; 3],
    /// Element types of A, B and C.
    pub types: [Elem; 3],
    pub a: DevMat,
    pub b: DevMat,
    pub c_len: usize,
    /// Lines of C's buffer past its last (256 of them, poisoned), which no
    /// kernel may write: a store clipped wrongly at C's far edge lands
    /// there, where a buffer of C's own size would hide it.
    pub c_guard: usize,
    /// A's and B's scales, for kernels that declare them.
    pub scales: Option<Scales>,
    /// The seed of the operands (and of the scales).
    seed: u64,
}

/// A's and B's scales of a scaled kernel: on the device as the kernel reads
/// them, and here, for the reference.
pub struct Scales {
    pub a: CudaSlice<f32>,
    pub b: CudaSlice<f32>,
    kind: gemm_runtime::spec::Scale,
    host: [Vec<f32>; 2],
}

/// `m x n x k` with every leading dimension rounded up to a multiple of 8
/// elements: what the vector copies of every kernel need (16-byte rows of
/// 16-bit operands, 32-byte ones of f32), whatever the sizes themselves.
pub fn padded_dims(m: usize, n: usize, k: usize, layouts: [Layout; 3]) -> Dims {
    dims_with_ld_multiple(m, n, k, layouts, 8)
}

/// `m x n x k` with each leading dimension rounded up to a multiple of
/// `multiple` elements.
pub fn dims_with_ld_multiple(m: usize, n: usize, k: usize, layouts: [Layout; 3], multiple: usize) -> Dims {
    let ld = |rows: usize, cols: usize, l: Layout| (if l == Layout::RowMajor { cols } else { rows }).next_multiple_of(multiple);
    Dims::new(m, n, k).with_ld(ld(m, k, layouts[0]), ld(k, n, layouts[1]), ld(m, n, layouts[2]))
}

/// `len` samples of N(0, 1) from `seed`: the same data on every machine
/// (rand's seeded `StdRng`, its version pinned by Cargo.lock), never zeros or
/// constants. rand_distr's ziggurat replaced a hand-written xorshift and
/// Box-Muller: the same job, in code the ecosystem keeps.
pub fn random_normal(len: usize, seed: u64) -> Vec<f32> {
    StdRng::seed_from_u64(seed).sample_iter(StandardNormal).take(len).collect()
}

/// Sets every element of `v` that no problem's matrix of `shape` holds
/// (`count` problems `stride` elements apart) to [`POISON`]: the padding past
/// each line within the leading dimension and the gaps between problems.
pub fn poison_outside(v: &mut [f32], shape: &gemm_runtime::Shape, count: usize, stride: usize) {
    let (lines, len) = match shape.layout {
        Layout::RowMajor => (shape.rows, shape.cols),
        Layout::ColMajor => (shape.cols, shape.rows),
    };
    if len == 0 || lines == 0 || (len == shape.ld && (count == 1 || stride == shape.span())) {
        return; // packed: nothing lies outside
    }
    let mut inside = vec![false; v.len()];
    for p in 0..count {
        for line in 0..lines {
            let at = p * stride + line * shape.ld;
            inside[at..at + len].fill(true);
        }
    }
    for (x, &keep) in v.iter_mut().zip(&inside) {
        if !keep {
            *x = POISON;
        }
    }
}

impl Problem {
    /// An f32 problem.
    pub fn new(bench: &Bench, layouts: [Layout; 3], dims: Dims, seed: u64) -> Result<Self, GemmError> {
        Self::typed(bench, [Elem::F32; 3], layouts, dims, seed)
    }

    /// A problem with operands of `types` (A, B, C).
    pub fn typed(bench: &Bench, types: [Elem; 3], layouts: [Layout; 3], dims: Dims, seed: u64) -> Result<Self, GemmError> {
        let op = |i: usize| gemm_runtime::spec::Operand { elem: types[i], layout: layouts[i] };
        let [sa, sb, sc] = gemm_runtime::internal::args_shapes(op(0), op(1), op(2), dims);
        let s = bench.stream();
        let batch = dims.batch;
        // every problem of a batch: the last one starts (count - 1) strides in
        let span = |span: usize, stride: usize| (batch.count - 1) * stride + span;
        // what lies between lines and between problems is NaN: a kernel that lets
        // any of it into C (even times a zero it filled in itself) is found out
        let operand = |elem: Elem, shape: &gemm_runtime::Shape, stride: usize, seed: u64| {
            // (an empty operand, at k = 0, still gets a buffer: a launch need not read it)
            let mut v = random_normal(span(shape.span(), stride).max(1), seed);
            poison_outside(&mut v, shape, batch.count, stride);
            DevMat::from_f32(s, elem, &v)
        };
        let a = operand(types[0], &sa, batch.stride_a, seed)?;
        let b = operand(types[1], &sb, batch.stride_b, seed.wrapping_add(1))?;
        Ok(Problem { dims, layouts, types, a, b, c_len: span(sc.span(), batch.stride_c), c_guard: 256 * sc.ld, scales: None, seed })
    }

    /// The problem `kernel` computes, in its types and layouts.
    pub fn for_kernel(bench: &Bench, kernel: &Kernel, dims: Dims, seed: u64) -> Result<Self, GemmError> {
        let mut p = Self::typed(bench, types(kernel), layouts(kernel), dims, seed)?;
        if kernel.spec.fused.gated {
            // C holds n / 2 columns
            let c = gemm_runtime::internal::spec_shapes(&kernel.spec, dims)[2];
            (p.c_len, p.c_guard) = ((dims.batch.count - 1) * dims.batch.stride_c + c.span(), 256 * c.ld);
        }
        p.scale_for(bench, &kernel.spec)?;
        Ok(p)
    }

    /// Gives this problem the scales `spec` declares (none where it
    /// declares none): powers of two from 1/4 to 1, drawn for each row,
    /// column or block of the scale's layout, so that every operand times
    /// its scales stays exact in f32 and the reference ([`Self::cublas`])
    /// takes them as the kernel reads them: a scale read for the wrong row,
    /// column, K block or problem is off by up to 4. (None above 1: a gated
    /// product in f16 stays finite.)
    pub fn scale_for(&mut self, bench: &Bench, spec: &gemm_runtime::spec::KernelSpec) -> Result<(), GemmError> {
        self.scales = match spec.fused.scale {
            Some(kind) => {
                let d = self.dims;
                let (la, lb) = kind.batch_lens(d.m, d.n, d.k, (d.batch.count, d.batch.stride_a, d.batch.stride_b));
                let mut rng = StdRng::seed_from_u64(self.seed.wrapping_add(0x5ca1e));
                let mut draw = |len: usize| -> Vec<f32> { (0..len.max(1)).map(|_| 2f32.powi(rng.random_range(-2..=0))).collect() };
                let host = [draw(la), draw(lb)];
                let s = bench.stream();
                Some(Scales { a: s.clone_htod(&host[0])?, b: s.clone_htod(&host[1])?, kind, host })
            }
            None => None,
        };
        Ok(())
    }

    /// The scales' buffers as a launch takes them.
    fn scale_args(&self) -> Option<(&dyn DevicePtr<f32>, &dyn DevicePtr<f32>)> {
        self.scales.as_ref().map(|sc| (&sc.a as &dyn DevicePtr<f32>, &sc.b as &dyn DevicePtr<f32>))
    }

    /// A and B widened to f32 (exactly), each element times the scale the
    /// kernel reads for it (exactly: powers of two): what sgemm computes the
    /// reference of an 8-bit or a scaled problem from. What lies outside
    /// the operands (NaN) stays as it is.
    pub fn widened_operands(&self, bench: &Bench) -> Result<(DevMat, DevMat), GemmError> {
        use gemm_runtime::spec::{block_scales_a_ld, Operand, Scale, SCALE_BLOCK};
        let s = bench.stream();
        let op = |i: usize| Operand { elem: self.types[i], layout: self.layouts[i] };
        let shapes = gemm_runtime::internal::args_shapes(op(0), op(1), op(2), self.dims);
        let d = self.dims;
        let block = SCALE_BLOCK as usize;
        let kb = d.k.div_ceil(block);
        let mut out = Vec::new();
        for (which, (m, stride)) in [(&self.a, d.batch.stride_a), (&self.b, d.batch.stride_b)].into_iter().enumerate() {
            let wide = m.to_f32(s)?;
            let Some(sc) = &self.scales else {
                out.push(DevMat::from_f32(s, Elem::F32, &wide)?);
                continue;
            };
            // (each element scaled once, from its value as read: a shared operand is every problem's)
            let mut v = wide.clone();
            let shape = &shapes[which];
            let (lines, len) = if shape.layout == Layout::RowMajor { (shape.rows, shape.cols) } else { (shape.cols, shape.rows) };
            // a batch's block scales follow problem after problem, but for an operand it shares
            let (la, lb) = sc.kind.lens(d.m, d.n, d.k);
            let per_problem = if sc.kind == Scale::Block && stride != 0 { [la, lb][which] } else { 0 };
            for p in 0..d.batch.count {
                for line in 0..lines {
                    for e in 0..len {
                        let (row, col) = if shape.layout == Layout::RowMajor { (line, e) } else { (e, line) };
                        // A's (row of C, K) or B's (K, column of C)
                        let at = match (sc.kind, which) {
                            (Scale::Tensor, _) => 0,
                            (Scale::Channel, 0) => row,
                            (Scale::Channel, _) => col,
                            (Scale::Block, 0) => col / block * block_scales_a_ld(d.m) + row,
                            (Scale::Block, _) => col / block * kb + row / block,
                        };
                        let i = p * stride + line * shape.ld + e;
                        v[i] = wide[i] * sc.host[which][p * per_problem + at];
                    }
                }
            }
            out.push(DevMat::from_f32(s, Elem::F32, &v)?);
        }
        let b = out.pop().expect("B");
        Ok((out.pop().expect("A"), b))
    }

    /// A C buffer full of [`POISON`] (NaN in every type).
    pub fn poisoned_c(&self, bench: &Bench) -> Result<DevMat, GemmError> {
        DevMat::from_f32(bench.stream(), self.types[2], &vec![POISON; self.c_len])
    }

    /// [`Self::poisoned_c`] with C's guard lines past it, poisoned too.
    pub fn guarded_c(&self, bench: &Bench) -> Result<DevMat, GemmError> {
        DevMat::from_f32(bench.stream(), self.types[2], &vec![POISON; self.c_len + self.c_guard])
    }

    /// Launches `kernel` on this problem's A and B into `c`.
    pub fn launch(&self, bench: &Bench, kernel: &Kernel, c: &mut DevMat) -> Result<(), GemmError> {
        let ep = EpilogueArgs { scales: self.scale_args(), ..EpilogueArgs::new() };
        typed!(&self.a, &self.b, c, |a, b, c| kernel.launch_with(bench.stream(), a, b, c, self.dims, ep))
    }

    /// [`Self::launch`] as a dependent launch, beside the end of the
    /// stream's previous kernel ([`Kernel::launch_dependent`]).
    pub fn launch_dependent(&self, bench: &Bench, kernel: &Kernel, c: &mut DevMat) -> Result<(), GemmError> {
        let ep = EpilogueArgs { scales: self.scale_args(), ..EpilogueArgs::new() };
        typed!(&self.a, &self.b, c, |a, b, c| kernel.launch_dependent(bench.stream(), a, b, c, self.dims, ep))
    }

    /// Launches a tuned kernel (tuning first where its key is new) on this
    /// problem's A and B into `c`.
    pub fn launch_tuned(&self, bench: &Bench, tuned: &Tuned, c: &mut DevMat) -> Result<(), GemmError> {
        let ep = EpilogueArgs { scales: self.scale_args(), ..EpilogueArgs::new() };
        typed!(&self.a, &self.b, c, |a, b, c| tuned.launch_with(bench.stream(), a, b, c, self.dims, ep))
    }

    /// [`Self::launch_tuned`] as a dependent launch, beside the end of the
    /// stream's previous kernel ([`Tuned::launch_dependent`]).
    pub fn launch_tuned_dependent(&self, bench: &Bench, tuned: &Tuned, c: &mut DevMat) -> Result<(), GemmError> {
        let ep = EpilogueArgs { scales: self.scale_args(), ..EpilogueArgs::new() };
        typed!(&self.a, &self.b, c, |a, b, c| tuned.launch_dependent(bench.stream(), a, b, c, self.dims, ep))
    }

    /// Launches `kernel` with its epilogue's arguments: `alpha` and `beta`
    /// where the spec declares them, and `bias` (of the spec's bias type).
    pub fn launch_fused(
        &self,
        bench: &Bench,
        kernel: &Kernel,
        c: &mut DevMat,
        alpha: f32,
        beta: f32,
        bias: Option<&DevMat>,
    ) -> Result<(), GemmError> {
        let f = kernel.spec.fused;
        let (alpha, beta) = (f.alpha.then_some(alpha), f.beta.then_some(beta));
        let s = bench.stream();
        macro_rules! with_bias {
            ($x:expr) => {
                typed!(&self.a, &self.b, c, |a, b, c| kernel.launch_with(
                    s,
                    a,
                    b,
                    c,
                    self.dims,
                    EpilogueArgs { scales: self.scale_args(), alpha, beta, bias: $x, groups: None, max_blocks: None }
                ))
            };
        }
        match bias {
            None => with_bias!(None::<&dyn DevicePtr<f32>>),
            Some(DevMat::F32(x)) => with_bias!(Some(x as &dyn DevicePtr<f32>)),
            Some(DevMat::F16(x)) => with_bias!(Some(x as &dyn DevicePtr<f16>)),
            Some(DevMat::Bf16(x)) => with_bias!(Some(x as &dyn DevicePtr<bf16>)),
            Some(DevMat::F8E4M3(_) | DevMat::F8E5M2(_)) => unreachable!("the rules keep the bias f32, f16 or bf16"),
        }
    }

    /// [`Self::launch_fused`] for a tuned kernel.
    pub fn launch_tuned_fused(
        &self,
        bench: &Bench,
        tuned: &Tuned,
        c: &mut DevMat,
        alpha: f32,
        beta: f32,
        bias: Option<&DevMat>,
    ) -> Result<(), GemmError> {
        let f = tuned.points()[0].fused;
        let (alpha, beta) = (f.alpha.then_some(alpha), f.beta.then_some(beta));
        let s = bench.stream();
        macro_rules! with_bias {
            ($x:expr) => {
                typed!(&self.a, &self.b, c, |a, b, c| tuned.launch_with(
                    s,
                    a,
                    b,
                    c,
                    self.dims,
                    EpilogueArgs { scales: self.scale_args(), alpha, beta, bias: $x, groups: None, max_blocks: None }
                ))
            };
        }
        match bias {
            None => with_bias!(None::<&dyn DevicePtr<f32>>),
            Some(DevMat::F32(x)) => with_bias!(Some(x as &dyn DevicePtr<f32>)),
            Some(DevMat::F16(x)) => with_bias!(Some(x as &dyn DevicePtr<f16>)),
            Some(DevMat::Bf16(x)) => with_bias!(Some(x as &dyn DevicePtr<bf16>)),
            Some(DevMat::F8E4M3(_) | DevMat::F8E5M2(_)) => unreachable!("the rules keep the bias f32, f16 or bf16"),
        }
    }

    /// cuBLAS computes this problem into `c`; 8-bit A and B, which cuBLAS's
    /// GEMM does not take, and scaled ones are widened to f32 first and
    /// times their scales (exactly: [`Self::widened_operands`]), so that
    /// sgemm computes the product of the operands as the kernel reads them.
    pub fn cublas(&self, bench: &Bench, c: &mut DevMat) -> Result<(), GemmError> {
        if self.a.elem().is_fp8() || self.b.elem().is_fp8() || self.scales.is_some() {
            let (a, b) = self.widened_operands(bench)?;
            return typed!(&a, &b, c, |a, b, c| bench.blas.gemm(self.layouts, a, b, c, self.dims));
        }
        typed!(&self.a, &self.b, c, |a, b, c| bench.blas.gemm(self.layouts, a, b, c, self.dims))
    }

    /// C as cuBLAS computes it, widened to f32. A 16-bit C comes from
    /// cuBLAS's f32 C, rounded here to C's type to nearest even, as the
    /// kernels round: asked for a 16-bit C, cuBLAS may split K and add the
    /// parts in C's own type (at 7 x 207 x 399 in bf16 an element came out
    /// 0.12 from the f32 sum, 30 units in its last place), which is no
    /// reference for kernels that round once.
    pub fn reference(&self, bench: &Bench) -> Result<Vec<f32>, GemmError> {
        let [_, _, c_elem] = self.types;
        if c_elem == Elem::F32 {
            let mut c = self.poisoned_c(bench)?;
            self.cublas(bench, &mut c)?;
            return c.to_f32(bench.stream());
        }
        let mut c = DevMat::from_f32(bench.stream(), Elem::F32, &vec![POISON; self.c_len])?;
        self.cublas(bench, &mut c)?;
        let wide = c.to_f32(bench.stream())?;
        Ok(match c_elem {
            Elem::F16 => wide.into_iter().map(|x| f16::from_f32(x).to_f32()).collect(),
            _ => wide.into_iter().map(|x| bf16::from_f32(x).to_f32()).collect(),
        })
    }
}

/// Element types and layouts of A, B and C: what cuBLAS is timed on beside a kernel.
pub type Config = ([Elem; 3], [Layout; 3]);

/// `kernel`'s types and layouts.
pub fn config(kernel: &Kernel) -> Config {
    (types(kernel), layouts(kernel))
}

/// `bf16bf16bf16_rrr`: the types of A, B, C, then their layouts (r = row-major, c = column-major).
pub fn describe(c: Config) -> String {
    let l = |l: Layout| if l == Layout::RowMajor { 'r' } else { 'c' };
    format!("{}{}{}_{}{}{}", c.0[0].rust_name(), c.0[1].rust_name(), c.0[2].rust_name(), l(c.1[0]), l(c.1[1]), l(c.1[2]))
}

fn layouts(k: &Kernel) -> [Layout; 3] {
    [k.spec.a.layout, k.spec.b.layout, k.spec.c.layout]
}

fn types(k: &Kernel) -> [Elem; 3] {
    [k.spec.a.elem, k.spec.b.elem, k.spec.c.elem]
}

/// The relative error a correct `spec` may show against the f32 reference:
/// C's rounding (`data::tolerance`), and for 8-bit operands the tensor
/// cores' own sums, which keep fewer bits than f32 when nothing promotes
/// them (cuBLASLt's fast accumulation, the same, measured 1.3e-3 at K =
/// 4096 and 2.1e-3 at K = 8192 on an H200): bf16's bound, 2^-8, for them.
pub fn kernel_tolerance(spec: &gemm_runtime::spec::KernelSpec) -> f64 {
    let c = tolerance(spec.c.elem);
    if spec.a.elem.is_fp8() {
        c.max(2f64.powi(-8))
    } else {
        c
    }
}

/// Runs `kernel` once on fresh random inputs into a poisoned C and compares
/// with cuBLAS: the relative error, or a [`Failure::Wrong`] past the tolerance.
pub fn verify(bench: &Bench, kernel: &Kernel, dims: Dims, seed: u64) -> Result<f64, Failure> {
    let p = Problem::for_kernel(bench, kernel, dims, seed)?;
    let reference = p.reference(bench)?;
    verify_on(bench, kernel, &p, &reference)
}

/// [`verify`] on a problem whose cuBLAS result is known, for checking many
/// kernels on one set of inputs.
pub fn verify_on(bench: &Bench, kernel: &Kernel, p: &Problem, reference: &[f32]) -> Result<f64, Failure> {
    let mut c = p.guarded_c(bench)?;
    p.launch(bench, kernel, &mut c)?;
    let out = c.to_f32(bench.stream())?;
    let at = format!("{}x{}x{}", p.dims.m, p.dims.n, p.dims.k);
    let wrong = |detail| Failure::Wrong { kernel: kernel.name.to_string(), at: at.clone(), detail };
    let tolerance = kernel_tolerance(&kernel.spec);
    // C's elements only; the rest of its buffer (padding past each line's
    // end) must still hold the poison
    let offsets = c_offsets(kernel, p.dims);
    if let Some(i) = written_outside_c(&out, &vec![f32::NAN; out.len()], &offsets) {
        return Err(wrong(format!("element {i} of C's buffer lies past a line's end or past C's last line and was written")));
    }
    let got: Vec<f32> = offsets.iter().map(|o| out[o.0]).collect();
    let want: Vec<f32> = offsets.iter().map(|o| reference[o.0]).collect();
    match relative_error(&got, &want) {
        Ok(err) if err <= tolerance => Ok(err),
        Ok(err) => Err(wrong(format!("relative error {err:.3e} against cuBLAS is over {tolerance:.1e}"))),
        Err(detail) => Err(wrong(detail)),
    }
}

/// Times `kernel` on random inputs (CUDA events, warm-up, `reps.runs` runs).
pub fn time_kernel(bench: &Bench, kernel: &Kernel, dims: Dims, reps: Reps) -> Result<Timing, GemmError> {
    let p = Problem::for_kernel(bench, kernel, dims, 11)?;
    time_on(bench, kernel, &p, reps)
}

/// [`time_kernel`] on given inputs.
pub fn time_on(bench: &Bench, kernel: &Kernel, p: &Problem, reps: Reps) -> Result<Timing, GemmError> {
    let mut c = p.poisoned_c(bench)?;
    time(bench.stream(), reps.warmup, reps.runs, |_| p.launch(bench, kernel, &mut c))
}

/// How long the GPU idles after a tuning before anything is timed: from
/// idle its clock is back at its highest (`gemm-lab tuner` starts from a
/// second's sleep too).
pub const IDLE_AFTER_TUNING: std::time::Duration = std::time::Duration::from_secs(1);

/// A tuned kernel's first launch at a shape (`launch`); where it tuned
/// ([`Tuned::tunings`] grew), the stream is waited for and the GPU left idle
/// [`IDLE_AFTER_TUNING`] before anything else is timed. A tuning runs its
/// points back to back for a second or more, at the GPU's power cap where
/// it binds, and a kernel timed right after it runs at the clock the cap
/// left, where the kernels beside it are timed from idle: on an H200 at
/// 8192^3, `fp8_block_tuned`'s 256 x 128 tiles read 1193-1217 TFLOP/s
/// timed right after their tuning and 1402 from idle (2026-12-03).
pub fn first_launch<T, E: From<GemmError>>(stream: &CudaStream, launch: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    let before = Tuned::tunings();
    let out = launch()?;
    if Tuned::tunings() != before {
        stream.synchronize().map_err(GemmError::from)?;
        std::thread::sleep(IDLE_AFTER_TUNING);
    }
    Ok(out)
}

/// Times cuBLAS sgemm on the same kind of inputs.
pub fn time_cublas(bench: &Bench, layouts: [Layout; 3], dims: Dims, reps: Reps) -> Result<Timing, GemmError> {
    time_cublas_typed(bench, [Elem::F32; 3], layouts, dims, reps)
}

/// Times cuBLAS on inputs of `types` (A, B, C) and `layouts`.
pub fn time_cublas_typed(bench: &Bench, types: [Elem; 3], layouts: [Layout; 3], dims: Dims, reps: Reps) -> Result<Timing, GemmError> {
    let p = Problem::typed(bench, types, layouts, dims, 11)?;
    with_reference(bench, &p, |_, launch| time(bench.stream(), reps.warmup, reps.runs, |_| launch()))
}

/// The library a kernel of operands `a` and `b` is timed against: cuBLAS,
/// or where an operand is 8-bit (cuBLAS has no 8-bit GEMM) cuBLASLt.
pub fn reference_name(a: Elem, b: Elem) -> &'static str {
    if a.is_fp8() || b.is_fp8() {
        "cuBLASLt"
    } else {
        "cuBLAS"
    }
}

/// `f` given the reference's name ([`reference_name`]) and a launch of it
/// on `p` into a C of its own: cuBLAS's GEMM, or cuBLASLt's fp8 GEMM
/// ([`with_lt_fp8`]).
fn with_reference<R>(
    bench: &Bench,
    p: &Problem,
    f: impl FnOnce(&'static str, &mut dyn FnMut() -> Result<(), GemmError>) -> Result<R, GemmError>,
) -> Result<R, GemmError> {
    let name = reference_name(p.a.elem(), p.b.elem());
    if p.a.elem().is_fp8() || p.b.elem().is_fp8() {
        return with_lt_fp8(bench, p, |launch| f(name, launch));
    }
    let mut c = p.poisoned_c(bench)?;
    f(name, &mut || p.cublas(bench, &mut c))
}

/// `f` given a launch of cuBLASLt's fp8 GEMM on `p` into a C of its own:
/// its default mode (its partial sums promoted into f32), per-tensor
/// scales of 1; e4m3 operands, A row-major and B column-major (the one
/// layout it takes).
fn with_lt_fp8<R>(
    bench: &Bench,
    p: &Problem,
    f: impl FnOnce(&mut dyn FnMut() -> Result<(), GemmError>) -> Result<R, GemmError>,
) -> Result<R, GemmError> {
    let s = bench.stream();
    let scales = (s.clone_htod(&[1.0f32])?, s.clone_htod(&[1.0f32])?);
    let mut c = p.poisoned_c(bench)?;
    let (DevMat::F8E4M3(a), DevMat::F8E4M3(b)) = (&p.a, &p.b) else {
        return Err(GemmError::Unsupported(format!(
            "the fp8 reference times e4m3 A and B, not {} and {}",
            p.a.elem().rust_name(),
            p.b.elem().rust_name()
        )));
    };
    if p.layouts[..2] != [Layout::RowMajor, Layout::ColMajor] {
        return Err(GemmError::Unsupported("cuBLASLt's fp8 GEMM takes A row-major and B column-major".into()));
    }
    macro_rules! with {
        ($t:ty, $c:expr) => {{
            let mut lt = crate::lt_fp8::LtFp8::new::<F8E4M3, F8E4M3, $t>(s, p.dims, (&scales.0, &scales.1), false)?;
            f(&mut || lt.run(a, b, $c))
        }};
    }
    match &mut c {
        DevMat::Bf16(c) => with!(bf16, c),
        DevMat::F16(c) => with!(f16, c),
        DevMat::F32(c) => with!(f32, c),
        other => Err(GemmError::Unsupported(format!("the fp8 reference writes C in bf16, f16 or f32, not {}", other.elem().rust_name()))),
    }
}

/// `kernel` and cuBLAS (in the kernel's types and layouts; cuBLASLt's fp8
/// GEMM for 8-bit operands) at `dims`,
/// launched in turns, each launch between events of its own, `reps.runs`
/// of each: the GPU's clock, which drifts within a process, weighs on both
/// alike. Returns (the kernel's timing, cuBLAS's).
pub fn time_in_turns(bench: &Bench, kernel: &Kernel, dims: Dims, reps: Reps) -> Result<(Timing, Timing), GemmError> {
    let s = &kernel.spec;
    let ours = Problem::for_kernel(bench, kernel, dims, 11)?;
    let theirs = Problem::typed(bench, [s.a.elem, s.b.elem, s.c.elem], [s.a.layout, s.b.layout, s.c.layout], dims, 11)?;
    let mut c_ours = ours.poisoned_c(bench)?;
    with_reference(bench, &theirs, |_, reference| {
        time_turns(bench.stream(), reps, |first| if first { ours.launch(bench, kernel, &mut c_ours) } else { reference() })
    })
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}

/// Two kernels sustained, each alone for `secs` seconds (`launch(true)`
/// the first, `launch(false)` the second), in the order first, second,
/// second, first, so that the GPU's warming weighs on both; each soak
/// printed with the clock and power it ran at (where NVML answers), and
/// the two means of TFLOP/s.
pub fn time_sustained(
    s: &CudaStream,
    secs: f64,
    flops: f64,
    names: [&str; 2],
    mut launch: impl FnMut(bool) -> Result<(), GemmError>,
) -> Result<[f64; 2], GemmError> {
    let nvml = crate::nvml::Nvml::open(s.context());
    let mut tflops = [0.0; 2];
    for first in [true, false, false, true] {
        let soaked = soak(s, nvml.as_ref(), secs, flops, || launch(first))?;
        let name = names[usize::from(!first)];
        println!("{name} alone for {secs} s: {}", soaked.describe());
        tflops[usize::from(!first)] += soaked.tflops / 2.0;
    }
    Ok(tflops)
}

/// A launch run back to back for a while: when it began and ended (Unix
/// ms), the median batch's TFLOP/s and what the clock did meanwhile.
pub struct Soaked {
    pub start_ms: u128,
    pub end_ms: u128,
    pub tflops: f64,
    pub clock: Option<crate::nvml::Sample>,
}

impl Soaked {
    /// `"651.2 TFLOP/s at 1455 MHz, 699 W, .. (from .. to .. ms, Unix time)"`
    pub fn describe(&self) -> String {
        let clock = self.clock.map_or(String::new(), |c| format!(" {}", c.describe()));
        format!("{:.1} TFLOP/s{clock} (from {} to {} ms, Unix time)", self.tflops, self.start_ms, self.end_ms)
    }
}

/// `launch` back to back for `secs` seconds (one timed batch at least), in
/// timed batches of 100, `nvml`'s GPU sampled meanwhile.
pub fn soak(
    s: &CudaStream,
    nvml: Option<&crate::nvml::Nvml>,
    secs: f64,
    flops: f64,
    mut launch: impl FnMut() -> Result<(), GemmError>,
) -> Result<Soaked, GemmError> {
    let (start_ms, clock) = (unix_ms(), std::time::Instant::now());
    let (batches, sample) = crate::nvml::sampled(nvml, || -> Result<Vec<f64>, GemmError> {
        let mut batches = Vec::new();
        loop {
            batches.push(gemm_runtime::internal::timing::time_back_to_back(s, 0, 1, 100, |_| launch())?.tflops(flops));
            if clock.elapsed().as_secs_f64() >= secs {
                return Ok(batches);
            }
        }
    });
    let mut batches = batches?;
    batches.sort_by(f64::total_cmp);
    Ok(Soaked { start_ms, end_ms: unix_ms(), tflops: batches[batches.len() / 2], clock: sample })
}

/// `kernel` and cuBLAS (in the kernel's types and layouts; cuBLASLt's fp8
/// GEMM for 8-bit operands) at `dims`,
/// sustained ([`time_sustained`], `secs` seconds a soak, the kernel first):
/// each at the clock its own power draw leaves the GPU, the kernel's soaks
/// printed as `label`'s. Returns the two mean TFLOP/s, ours and cuBLAS's.
pub fn sustained_against_cublas(bench: &Bench, kernel: &Kernel, label: &str, dims: Dims, secs: f64) -> Result<[f64; 2], GemmError> {
    let s = &kernel.spec;
    let ours = Problem::for_kernel(bench, kernel, dims, 11)?;
    let theirs = Problem::typed(bench, [s.a.elem, s.b.elem, s.c.elem], [s.a.layout, s.b.layout, s.c.layout], dims, 11)?;
    let mut c_ours = ours.poisoned_c(bench)?;
    with_reference(bench, &theirs, |name, reference| {
        time_sustained(
            bench.stream(),
            secs,
            dims.flops(),
            [label, name],
            |first| if first { ours.launch(bench, kernel, &mut c_ours) } else { reference() },
        )
    })
}

/// Two launches timed in turns: `launch(true)` and `launch(false)` one
/// after the other, each between events of its own, `reps.runs` times each
/// after `reps.warmup` untimed pairs. Returns (the first's timing, the second's).
pub fn time_turns(stream: &CudaStream, reps: Reps, mut launch: impl FnMut(bool) -> Result<(), GemmError>) -> Result<(Timing, Timing), GemmError> {
    let [first, second] = time_rotation(stream, reps, |i| launch(i == 0))?;
    Ok((first, second))
}

/// `N` launches timed in rotation: `launch(0)`, `launch(1)`, ..,
/// `launch(N - 1)`, then again, each between events of its own,
/// `reps.runs` times each after `reps.warmup` untimed rounds, so that each
/// runs at the clocks the GPU's power cap leaves all of them (timed one
/// after another, `grouped_fp8_swiglu` ran 985 and 1134 TFLOP/s in two
/// runs of the `moe` example's build, H200). Returns each one's timing, in
/// launch order.
pub fn time_rotation<const N: usize>(
    stream: &CudaStream,
    reps: Reps,
    launch: impl FnMut(usize) -> Result<(), GemmError>,
) -> Result<[Timing; N], GemmError> {
    let all = time_rotation_of(stream, N, reps, launch)?;
    Ok(all.try_into().unwrap_or_else(|_| unreachable!("one timing a launch")))
}

/// [`time_rotation`] of `n` launches, `n` known at run time.
pub fn time_rotation_of(
    stream: &CudaStream,
    n: usize,
    reps: Reps,
    mut launch: impl FnMut(usize) -> Result<(), GemmError>,
) -> Result<Vec<Timing>, GemmError> {
    let all = time(stream, n * reps.warmup, n * reps.runs, |i| launch(i % n))?;
    Ok(split_rotation(&all, n))
}

/// `n` launches timed in rotation, apart: each one's, every `n`th from its own.
fn split_rotation(all: &Timing, n: usize) -> Vec<Timing> {
    (0..n).map(|k| Timing { runs_ms: all.runs_ms.iter().skip(k).step_by(n).copied().collect() }).collect()
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

/// (offset, problem, row, column) of every element of every problem's C, in the order the problems,
/// rows and columns come: what a check compares (the gaps between problems
/// and past the leading dimension are not C's).
pub(crate) fn c_offsets(kernel: &Kernel, dims: Dims) -> Vec<(usize, usize, usize, usize)> {
    let layout = kernel.spec.c.layout;
    let ldc = gemm_runtime::internal::spec_shapes(&kernel.spec, dims)[2].ld;
    // (a gated C holds a column for each pair of the product's)
    let cols = if kernel.spec.fused.gated { dims.n / 2 } else { dims.n };
    let mut out = Vec::with_capacity(dims.m * cols * dims.batch.count);
    for b in 0..dims.batch.count {
        for row in 0..dims.m {
            for col in 0..cols {
                let at = match layout {
                    Layout::RowMajor => row * ldc + col,
                    Layout::ColMajor => col * ldc + row,
                };
                out.push((b * dims.batch.stride_c + at, b, row, col));
            }
        }
    }
    out
}

/// The first element of C's buffer outside every problem's C (a gap between
/// problems, or past a line's end within the leading dimension) that the
/// kernel changed from `before`: a store past C's edge lands there.
pub(crate) fn written_outside_c(out: &[f32], before: &[f32], offsets: &[(usize, usize, usize, usize)]) -> Option<usize> {
    let mut is_c = vec![false; out.len()];
    for &(at, ..) in offsets {
        is_c[at] = true;
    }
    let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    (0..out.len()).find(|&i| !is_c[i] && !same(out[i], before[i]))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_write_past_c_is_found_and_untouched_padding_is_not() {
        // a 2 x 2 C with a leading dimension of 3: elements 2 and 5 are padding
        let offsets: Vec<_> = [0, 1, 3, 4].iter().map(|&at| (at, 0, 0, 0)).collect();
        let before = [f32::NAN; 6];
        let kept = [1.0, 2.0, f32::NAN, 3.0, 4.0, f32::NAN];
        assert_eq!(written_outside_c(&kept, &before, &offsets), None);
        let spilled = [1.0, 2.0, 0.0, 3.0, 4.0, f32::NAN];
        assert_eq!(written_outside_c(&spilled, &before, &offsets), Some(2));
        // with beta, C's buffer starts with values; padding must keep them bit for bit
        let before = [0.5, 0.5, 0.25, 0.5, 0.5, -0.0];
        let zeroed = [1.0, 2.0, 0.25, 3.0, 4.0, 0.0];
        assert_eq!(written_outside_c(&zeroed, &before, &offsets), Some(5));
    }
    use super::{poison_outside, random_normal, split_rotation, written_outside_c};
    use gemm_runtime::internal::timing::Timing;
    use gemm_runtime::spec::{Elem, Layout, Operand};
    use gemm_runtime::{internal::args_shapes, Dims};

    #[test]
    fn operands_are_poisoned_between_lines_and_problems_and_nowhere_else() {
        let op = |layout| Operand { elem: Elem::F32, layout };
        // A 2 x 3 row-major with lines 5 apart, B 3 x 2 column-major (lines of 3) packed
        let dims = Dims::new(2, 2, 3).with_ld(5, 3, 2);
        let [a, b, _] = args_shapes(op(Layout::RowMajor), op(Layout::ColMajor), op(Layout::RowMajor), dims);
        let mut v = vec![1.0; 2 * 10]; // two problems 10 apart: the second starts at 10
        poison_outside(&mut v, &a, 2, 10);
        let kept: Vec<bool> = v.iter().map(|x| !x.is_nan()).collect();
        // each problem: two lines of 3 elements, 5 apart, then the gap to the next
        let want: Vec<bool> = (0..4).flat_map(|_| [true, true, true, false, false]).collect();
        assert_eq!(kept, want);
        // packed, one problem or problems back to back: untouched
        let mut packed = vec![1.0; 6];
        poison_outside(&mut packed, &b, 1, 0);
        poison_outside(&mut packed, &b, 2, 0);
        assert!(packed.iter().all(|x| *x == 1.0));
        // a gap of one between packed problems
        let mut gapped = vec![1.0; 13];
        poison_outside(&mut gapped, &b, 2, 7);
        assert_eq!(gapped.iter().position(|x| x.is_nan()), Some(6));
        assert_eq!(gapped.iter().filter(|x| x.is_nan()).count(), 1);
    }

    #[test]
    fn launches_timed_in_rotation_split_into_each_ones_runs() {
        let turns = Timing { runs_ms: vec![1.0, 2.0, 1.5, 2.5, 1.25, 2.25] };
        let [first, second] = &split_rotation(&turns, 2)[..] else { panic!("two launches' timings") };
        assert_eq!(first.runs_ms, [1.0, 1.5, 1.25]);
        assert_eq!(second.runs_ms, [2.0, 2.5, 2.25]);
        assert_eq!((first.median_ms(), second.median_ms()), (1.25, 2.25));
        let three = split_rotation(&Timing { runs_ms: vec![1.0, 2.0, 3.0, 1.5, 2.5, 3.5] }, 3);
        assert_eq!(three.iter().map(|t| t.runs_ms.clone()).collect::<Vec<_>>(), [vec![1.0, 1.5], vec![2.0, 2.5], vec![3.0, 3.5]]);
    }

    #[test]
    fn random_normal_is_seeded_with_zero_mean_and_unit_variance() {
        let v = random_normal(100_000, 7);
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.02, "mean {mean}");
        assert!((var - 1.0).abs() < 0.03, "variance {var}");
        assert_eq!(random_normal(8, 1), random_normal(8, 1));
        assert_ne!(random_normal(8, 1), random_normal(8, 2));
    }
}
