//! A launchable kernel: its spec and generated source, compiled on first use.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute_enum as DevAttr;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig};
use gemm_core::spec::{KernelSpec, Persistent, Staging, Which};

use crate::args::{self, Dims, Element};
use crate::compile;
use crate::empty::{self, Empty, ZeroK, Zeros};
use crate::fused::EpilogueArgs;
use crate::launch::{Order, Params};
use crate::placement;
use crate::realign::{self, Plan};
use crate::scratch::StreamKScratch;
use crate::tma;
use crate::GemmError;

/// A generated kernel. The macro makes one per `#[gemm_kernel]` as a `static`;
/// [`Kernel::from_spec`] makes one from a spec built at run time.
pub struct Kernel {
    pub spec: KernelSpec,
    pub source: Cow<'static, str>,
    pub name: Cow<'static, str>,
    pub threads: u32,
    pub smem_bytes: u32,
    /// Loaded functions by device ordinal, with how many blocks the device
    /// holds at once: the launch path's cache, in front of the process-wide
    /// one in [`compile::load`].
    loaded: Mutex<Vec<Loaded>>,
    /// Variants of this kernel made for launches whose operands it cannot
    /// take where they lie ([`realign::variant_spec`]), on first need.
    variants: Mutex<Vec<Arc<Kernel>>>,
    /// Whether this kernel is such a variant (it makes none of its own).
    variant: bool,
}

#[derive(Clone)]
struct Loaded {
    device: usize,
    f: CudaFunction,
    /// Blocks resident at once on the whole device (occupancy x SMs), at least 1.
    resident: u32,
}

/// Blocks that may share one C tile under stream-K. A tile's owner adds the
/// others' partial sums one after another, so on a grid of few tiles (small
/// M and N, large K) the fix-up grows with the blocks per tile; past a few,
/// it costs more than their math saves. Grids of many tiles never reach it.
pub const MAX_SHARERS: usize = 8;

/// Compiles and loads `kernels` for `ctx`'s device on every core (NVRTC is
/// the slow part of a first launch, and thread-safe). A kernel that fails
/// here fails again, with its error, when launched.
pub fn compile_all<'k>(kernels: impl IntoIterator<Item = &'k Kernel>, ctx: &Arc<CudaContext>) {
    let kernels: Vec<&Kernel> = kernels.into_iter().collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get()).min(kernels.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                while let Some(k) = kernels.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    let _ = k.function(ctx);
                }
            });
        }
    });
}

impl Kernel {
    /// The kernel as the macro expanded it.
    #[doc(hidden)]
    pub const fn from_parts(spec: KernelSpec, source: &'static str, name: &'static str, threads: u32, smem_bytes: u32) -> Self {
        Kernel {
            spec,
            source: Cow::Borrowed(source),
            name: Cow::Borrowed(name),
            threads,
            smem_bytes,
            loaded: Mutex::new(Vec::new()),
            variants: Mutex::new(Vec::new()),
            variant: false,
        }
    }

    /// Checks and generates a spec built at run time.
    pub fn from_spec(spec: KernelSpec) -> Result<Self, GemmError> {
        let g = gemm_core::generate(&spec).map_err(GemmError::InvalidSpec)?;
        Ok(Kernel {
            spec,
            source: g.source.into(),
            name: g.kernel_name.into(),
            threads: g.threads,
            smem_bytes: g.smem_bytes,
            loaded: Mutex::new(Vec::new()),
            variants: Mutex::new(Vec::new()),
            variant: false,
        })
    }

    /// The error of a kernel whose shared memory a device of compute
    /// capability `(major, minor)` with `limit` bytes a block cannot give,
    /// with the change to its description that fits it, where one does.
    fn over_shared_memory(&self, limit: u32, (major, minor): (i32, i32)) -> GemmError {
        let advice = match gemm_core::check::fit_shared_memory(&self.spec, limit) {
            Some(setting) => format!("describe it with {setting}, which fits"),
            None => "describe it with smaller tiles or fewer stages".to_string(),
        };
        GemmError::SharedMemory { kernel: self.name.to_string(), needs: self.smem_bytes, limit, major, minor, advice }
    }

    /// Compiles (once per process and device) and loads the kernel for `ctx`'s device.
    pub fn function(&self, ctx: &Arc<CudaContext>) -> Result<CudaFunction, GemmError> {
        Ok(self.load(ctx)?.f)
    }

    /// [`Self::function`], with the device's resident block count found once at load.
    fn load(&self, ctx: &Arc<CudaContext>) -> Result<Loaded, GemmError> {
        let device = ctx.ordinal();
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = loaded.iter().find(|l| l.device == device) {
            return Ok(l.clone());
        }
        let (major, minor) = ctx.compute_capability()?;
        if !self.spec.arch.runs_on((major, minor)) {
            let (kernel, kernel_arch) = (self.name.to_string(), self.spec.arch.to_string());
            if self.spec.arch.new_enough((major, minor)) {
                return Err(GemmError::ArchSpecific { kernel, kernel_arch, major, minor });
            }
            return Err(GemmError::ArchTooOld { kernel, kernel_arch, major, minor });
        }
        // (the rules hold a kernel to its arch's largest GPU: an sm_80 kernel to the A100's 163 KB,
        // where GPUs of compute capability 8.6, 8.9 and 12.0 give 99 KB)
        let limit = ctx.attribute(DevAttr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        if self.smem_bytes > limit.max(0) as u32 {
            return Err(self.over_shared_memory(limit.max(0) as u32, (major, minor)));
        }
        let target = compile::device_target(self.spec.arch, (major, minor));
        let f = compile::load(ctx, &self.source, &self.name, target, self.smem_bytes)?;
        self.check_register_pool(&f)?;
        // (asked in relaxed capture mode, as the load: a first launch may be captured into a graph)
        let resident = compile::relaxed(ctx, || {
            let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(self.threads, self.smem_bytes as usize, None)?;
            let sms = ctx.attribute(DevAttr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
            let mut resident = (per_sm * sms.max(0) as u32).max(1);
            if self.spec.cluster.is_some() {
                // a cluster's blocks share one GPC, so fewer clusters than SMs / size may fit at once
                let size = self.spec.cluster_size();
                let cfg = LaunchConfig { grid_dim: (size, 1, 1), block_dim: (self.threads, 1, 1), shared_mem_bytes: self.smem_bytes };
                let clusters = f.occupancy_max_active_clusters(cfg, &ctx.default_stream())?;
                resident = clusters.max(1) * size;
            }
            Ok(resident)
        })?;
        let l = Loaded { device, f, resident };
        loaded.push(l.clone());
        Ok(l)
    }

    /// `setmaxnreg` moves registers between a block's warpgroups: one that
    /// asks for more waits until others have given back enough, so what all
    /// ask for must fit what the block was launched with, or it waits
    /// forever. The rules check this against the register cap; this checks
    /// it against what ptxas compiled, so that no launch can hang.
    fn check_register_pool(&self, f: &CudaFunction) -> Result<(), GemmError> {
        let Some(sp) = self.spec.specialize.filter(|sp| sp.producer_regs.is_some() || sp.consumer_regs.is_some()) else { return Ok(()) };
        // registers go to warps in units of 256: 8 a thread
        let per_thread = (f.num_regs()?.max(0) as u32).div_ceil(8) * 8;
        let asked = 128 * (sp.producers * sp.producer_regs.unwrap_or(per_thread) + sp.consumers * sp.consumer_regs.unwrap_or(per_thread));
        let held = self.threads * per_thread;
        if asked > held {
            return Err(GemmError::RegisterPool { kernel: self.name.to_string(), asked, held, per_thread });
        }
        Ok(())
    }

    /// Launches `C = A * B` on `stream` after checking every argument: for
    /// kernels without epilogue arguments (see [`Self::launch_with`]). An
    /// empty product ([`Dims::is_empty`]) writes nothing where m, n or the
    /// batch is 0, and C's epilogue of a zero product where k is.
    pub fn launch<TA: Element, TB: Element, TC: Element>(
        &self,
        stream: &CudaStream,
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
    ) -> Result<(), GemmError> {
        self.launch_with(stream, a, b, c, dims, EpilogueArgs::new())
    }

    /// Launches the kernel with its epilogue's arguments (`alpha`, `beta`,
    /// the bias), each required exactly where the spec declares it.
    pub fn launch_with<TA: Element, TB: Element, TC: Element, TX: Element>(
        &self,
        stream: &CudaStream,
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
        epilogue: EpilogueArgs<'_, TX>,
    ) -> Result<(), GemmError> {
        self.launch_in(Order::After, stream, a, b, c, dims, epilogue)
    }

    /// [`Self::launch_with`] as a dependent launch (programmatic stream
    /// serialization): the kernel may start while the stream's previous
    /// kernel finishes, its blocks placed and set up (barriers, the ring)
    /// as that kernel's blocks end, and waits for it before it reads or
    /// writes global memory. For layers launched back to back, as a
    /// model's decode step runs them. Kernels staged by TMA (the Hopper path,
    /// [`Self::waits_for_previous`]) wait in their code; the others are
    /// launched as [`Self::launch_with`] launches them, after the previous
    /// kernel. A kernel launched after one of these must wait for it as
    /// well (a plain launch does; a dependent launch of code of your own
    /// must call `cudaGridDependencySynchronize` first).
    pub fn launch_dependent<TA: Element, TB: Element, TC: Element, TX: Element>(
        &self,
        stream: &CudaStream,
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
        epilogue: EpilogueArgs<'_, TX>,
    ) -> Result<(), GemmError> {
        self.launch_in(Order::Dependent, stream, a, b, c, dims, epilogue)
    }

    /// Whether the kernel's code waits for the stream's previous kernel
    /// (`griddepcontrol.wait`), so that a dependent launch may overlap it.
    pub fn waits_for_previous(&self) -> bool {
        matches!(self.spec.staging, Staging::Tma { .. })
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_in<TA: Element, TB: Element, TC: Element, TX: Element>(
        &self,
        order: Order,
        stream: &CudaStream,
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
        epilogue: EpilogueArgs<'_, TX>,
    ) -> Result<(), GemmError> {
        let order = if self.waits_for_previous() { order } else { Order::After };
        for (operand, expected, given) in [('A', self.spec.a.elem, TA::ELEM), ('B', self.spec.b.elem, TB::ELEM), ('C', self.spec.c.elem, TC::ELEM)] {
            if expected != given {
                return Err(GemmError::ElemMismatch {
                    kernel: self.name.to_string(),
                    operand,
                    expected: expected.rust_name(),
                    given: given.rust_name(),
                });
            }
        }
        epilogue.check(&self.spec, &self.name, &dims)?;
        placement::of_launch(stream, a, b, c, &epilogue)?;
        match empty::of(&self.spec, dims, [a.len(), b.len(), c.len()])? {
            Empty::No => {}
            Empty::Nothing => return Ok(()),
            Empty::ZeroK(z) => return self.launch_over_zeros::<TA, TB, TC, TX>(order, stream, c, z, epilogue),
        }
        let (a_ptr, _a_sync) = a.device_ptr(stream);
        let (b_ptr, _b_sync) = b.device_ptr(stream);
        let given_lens = [a.len(), b.len(), c.len()];
        let (c_ptr, _c_sync) = c.device_ptr_mut(stream);
        let given = [a_ptr, b_ptr, c_ptr];
        // operands the kernel cannot take where they lie, and lines TMA reads
        // slowly in a product wide enough to pay for it, go through aligned
        // copies; the arguments are checked once where they can be taken as they are
        let grouped = self.spec.groups.is_some();
        let (copied, checked) = match args::check(&self.spec, dims, given_lens, given) {
            // (grouped problems are read and written where they lie: a copy of C would write its rows
            // past each problem's)
            Ok(shapes) if grouped => ([false; 3], Some(shapes)),
            Ok(shapes) => {
                let slow = realign::repitched(&self.spec, &shapes, dims);
                if !self.variant && slow != [false; 3] {
                    let by_class = realign::slow_lines_by_class(&self.spec, dims, given, slow, realign::Machine::of(stream.context())?);
                    if let Some(spec) = by_class {
                        // A and B where they lie, a class of lines at a time, in place of their copies
                        let variant = self.variant_of(spec)?;
                        drop((_a_sync, _b_sync, _c_sync));
                        return variant.launch_in(order, stream, a, b, c, dims, epilogue);
                    }
                }
                (slow, Some(shapes))
            }
            Err(e @ GemmError::Misaligned { .. }) if grouped => {
                // (a C the kernel cannot write where it lies by a variant that can; A and B as they lie)
                let spec = if self.variant { None } else { realign::grouped_c_spec(&self.spec, dims, given) };
                let Some(spec) = spec else { return Err(e) };
                let variant = self.variant_of(spec)?;
                drop((_a_sync, _b_sync, _c_sync));
                return variant.launch_in(order, stream, a, b, c, dims, epilogue);
            }
            Err(GemmError::Misaligned { .. }) => {
                if !self.variant {
                    if let (_, Some(spec)) = realign::route(&self.spec, dims, given, realign::Machine::of(stream.context())?) {
                        // the variant takes what it can where it lies (and copies the rest itself)
                        let variant = self.variant_of(spec)?;
                        drop((_a_sync, _b_sync, _c_sync));
                        return variant.launch_in(order, stream, a, b, c, dims, epilogue);
                    }
                }
                (realign::copied(&self.spec, dims, given), None)
            }
            Err(e) => return Err(e),
        };
        let (staged, [sa, sb, sc]) = match checked {
            Some(shapes) if copied == [false; 3] => (None, shapes),
            _ => {
                let s = realign::stage(stream, &self.spec, dims, given, given_lens, copied, epilogue.beta.is_some())?;
                let shapes = args::check(&self.spec, s.dims, s.lens, s.ptrs)?;
                (Some(s), shapes)
            }
        };
        let (dims, [a_ptr, b_ptr, c_ptr]) = staged.as_ref().map_or((dims, given), |s| (s.dims, s.ptrs));
        // after copies of its operands, a kernel that waits in its code for the one before starts
        // beside the copy kernel's end: `hopper_autotuned` with A and B copied ran 0.5-1.2% faster so
        // on the H100 at 4096 x 4096 x 4100 and 4095 x 4097 x 4100 (BENCHMARKS.md)
        let order = if staged.as_ref().is_some_and(|s| s.before) && self.waits_for_previous() { Order::Dependent } else { order };
        let bias = epilogue.bias.map(|x| x.device_ptr(stream));
        let Loaded { f, resident, .. } = self.load(stream.context())?;
        // (checked: only a persistent kernel takes a cap, at least 1)
        let resident = epilogue.max_blocks.map_or(resident, |cap| resident.min(cap));
        // stream-K's flags and partial sums, or the queue's counts: the stream's kept scratch
        let scratch = match self.spec.persistent {
            Some(Persistent::StreamK | Persistent::Hybrid | Persistent::TailSplit | Persistent::Queue) => {
                Some(self.stream_k_scratch_for(stream, resident, dims)?)
            }
            _ => None,
        };
        let grid_dim = self.grid_for(resident, dims);
        let cfg = LaunchConfig { grid_dim, block_dim: (self.threads, 1, 1), shared_mem_bytes: self.smem_bytes };
        // `args::check` bounded every size and offset by i32::MAX, and the
        // batch by the buffers' lengths.
        let ints = [dims.m, dims.n, dims.k, sa.ld, sb.ld, sc.ld].map(|v| v as i32);
        let b = dims.batch;
        let strides = [b.stride_a, b.stride_b, b.stride_c].map(|v| v as i64);
        let mut launch = Params::default();
        launch.arg(&a_ptr).arg(&b_ptr).arg(&c_ptr);
        for v in &ints {
            launch.arg(v);
        }
        for v in &strides {
            launch.arg(v);
        }
        let scale_ptrs = epilogue.scales.map(|(a, b)| (a.device_ptr(stream), b.device_ptr(stream)));
        if let Some(((sa, _), (sb, _))) = &scale_ptrs {
            launch.arg(sa).arg(sb);
        }
        if let Some(alpha) = &epilogue.alpha {
            launch.arg(alpha);
        }
        if let Some(beta) = &epilogue.beta {
            launch.arg(beta);
        }
        let bias_stride = b.stride_bias as i64;
        if let Some((bias_ptr, _)) = &bias {
            launch.arg(bias_ptr).arg(&bias_stride);
        }
        let groups = epilogue.groups.map(|r| r.device_ptr(stream));
        if let Some((groups_ptr, _)) = &groups {
            launch.arg(groups_ptr);
        }
        let batches = b.count as i32;
        let scratch_ptrs: Vec<u64> = match &scratch {
            Some(s) if self.spec.persistent == Some(Persistent::Queue) => vec![s.flags()],
            Some(s) => vec![s.partials(), s.flags()],
            None => Vec::new(),
        };
        // (indexed and contiguous groups on a grid of a block per tile take the count beside their array)
        let placed = self.spec.groups.is_some_and(gemm_core::spec::Groups::one_a_and_c);
        if self.spec.persistent.is_some() || placed {
            launch.arg(&batches);
        }
        for p in &scratch_ptrs {
            launch.arg(p);
        }
        let mut maps = Vec::new();
        for name in self.spec.tma_maps() {
            maps.push(match name {
                "a" => tma::operand_map(&self.spec, Which::A, a_ptr, &sa, b.count, b.stride_a, false)?,
                "b" => tma::operand_map(&self.spec, Which::B, b_ptr, &sb, b.count, b.stride_b, false)?,
                // an edge map no tile reads at these sizes: the whole tile's in its place, not encoded
                // (grouped problems end at rows of their own: A's edge boxes may be read at any)
                "a_edge" if !self.spec.edge_map_read(Which::A, dims.m) && !grouped => maps[0],
                "b_edge" if !self.spec.edge_map_read(Which::B, dims.n) => maps[1],
                "a_edge" => tma::operand_map(&self.spec, Which::A, a_ptr, &sa, b.count, b.stride_a, true)?,
                "b_edge" => tma::operand_map(&self.spec, Which::B, b_ptr, &sb, b.count, b.stride_b, true)?,
                // A's block scales (checked for their length): K block after K block of m rows, m rounded up to 4 apart
                "sfa" => {
                    let Some(((sfa, _), _)) = &scale_ptrs else { unreachable!("a block-scaled kernel's scales are checked given") };
                    let count = if b.stride_a == 0 { 1 } else { b.count };
                    tma::scale_map(*sfa, dims.m, dims.k, self.spec.block_scale_rows(), count)?
                }
                _ => tma::c_map(&self.spec, c_ptr, &sc, b.count, b.stride_c)?,
            });
        }
        for m in &maps {
            launch.arg(m);
        }
        // the by-class variant's maps, a class of each operand's lines at a time
        let classes = match self.spec.by_class() {
            true if !realign::by_class_takes(dims) => {
                let rule = "the by-class variant takes one problem of M >= 16 and N >= 8 (each class of lines holds some)";
                return Err(GemmError::UnsupportedSize { kernel: self.name.to_string(), rule: rule.to_string() });
            }
            true => Some(tma::line_classes(self.spec.a.elem, [a_ptr, b_ptr, c_ptr], [sa.ld, sb.ld, sc.ld], (dims.m, dims.n, dims.k))?),
            false => None,
        };
        if let Some(classes) = &classes {
            launch.arg(classes);
        }
        // SAFETY: the kernel's parameters are (A, B, C pointers, M, N, K, lda,
        // ldb, ldc, batch strides of A, B and C), then the epilogue's (alpha,
        // beta, bias and its batch stride) where the spec declares them, the
        // groups' array under groups = .., then under persistent = tiles
        // (batches), under persistent = queue (batches, its two counts),
        // under stream-K (batches,
        // partials, flags) with the scratch sized for its grid, and under TMA
        // staging A's and B's tensor maps unless cp.async fills the stages
        // (and C's under epilogue = tma), in `KernelSpec::tma_maps`'s order, or
        // under `by_class` the maps of every class of lines (`LineClasses`), as
        // `gemm_core`'s params module generates them; the checks above keep
        // every access in bounds (the by-class plan asks M >= 16 and N >= 8,
        // so that every class holds lines).
        unsafe { crate::launch::launch(&f, stream, cfg, &mut launch, order) }?;
        if let Some(s) = &staged {
            s.finish(stream)?;
        }
        Ok(())
    }

    /// A launch over K = 0: the kernel over a K tile of zeros (and zero
    /// block scales), so that C gets its epilogue of a zero product.
    fn launch_over_zeros<TA: Element, TB: Element, TC: Element, TX: Element>(
        &self,
        order: Order,
        stream: &CudaStream,
        c: &mut impl DevicePtrMut<TC>,
        z: ZeroK,
        epilogue: EpilogueArgs<'_, TX>,
    ) -> Result<(), GemmError> {
        let owner = c.stream().clone();
        let a = Zeros::<TA>::new(stream, owner.clone(), z.lens[0])?;
        let b = Zeros::<TB>::new(stream, owner.clone(), z.lens[1])?;
        let scales = z
            .scales
            .map(|(sa, sb)| Ok::<_, GemmError>((Zeros::<f32>::new(stream, owner.clone(), sa)?, Zeros::<f32>::new(stream, owner.clone(), sb)?)));
        let scales = scales.transpose()?;
        let epilogue = match &scales {
            Some((sa, sb)) => EpilogueArgs { scales: Some((sa, sb)), ..epilogue },
            None => epilogue,
        };
        self.launch_in(order, stream, &a, &b, c, z.dims, epilogue)
    }

    /// The variant of this kernel for `spec` (one of
    /// [`realign::variant_spec`]'s), generated once and kept.
    fn variant_of(&self, spec: KernelSpec) -> Result<Arc<Kernel>, GemmError> {
        let mut variants = self.variants.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = variants.iter().find(|k| k.spec == spec) {
            return Ok(k.clone());
        }
        let k = Arc::new(Kernel { variant: true, ..Kernel::from_spec(spec)? });
        variants.push(k.clone());
        Ok(k)
    }

    /// The variant of this kernel that writes C at any alignment, which
    /// launches whose C this kernel's stores cannot take run (where their
    /// A and B need no narrower copies), as deep products run it (a
    /// shallow one may take the whole C tile and a stage fewer:
    /// [`realign::scalar_c_spec_for`]); `None` where there is none.
    pub fn scalar_c_variant(&self) -> Option<Arc<Kernel>> {
        self.variant_of(realign::scalar_c_spec(&self.spec)?).ok()
    }

    /// How a launch with these arguments reaches the kernel: directly, or
    /// with some operands through aligned copies (see [`crate::realign`]);
    /// an `Err` for what no copy mends (sizes, lengths, the batch).
    pub fn plan<TA: Element, TB: Element, TC: Element>(
        &self,
        stream: &CudaStream,
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
    ) -> Result<Plan, GemmError> {
        let (a_ptr, _a_sync) = a.device_ptr(stream);
        let (b_ptr, _b_sync) = b.device_ptr(stream);
        let lens = [a.len(), b.len(), c.len()];
        let (c_ptr, _c_sync) = c.device_ptr_mut(stream);
        realign::plan(&self.spec, dims, lens, [a_ptr, b_ptr, c_ptr], realign::Machine::of(stream.context())?)
    }

    /// A stream-K kernel's grid for `dims` on `stream`'s device: as many
    /// blocks as are resident at once (more would wait for a free SM; fewer
    /// resident, as when another kernel holds SMs, only slows it: the
    /// shares go out in start order, so no block waits on one that has not
    /// started), at most one per K step, and at most `MAX_SHARERS` (8) per C
    /// tile.
    pub fn stream_k_grid(&self, stream: &CudaStream, dims: Dims) -> Result<u32, GemmError> {
        Ok(self.stream_k_blocks(self.load(stream.context())?.resident, dims))
    }

    /// The grid a launch for `dims` on `stream`'s device takes: one block
    /// per C tile (a row of clusters for a clustered kernel, the batch along
    /// z), or one row: for a stream-K kernel what the device holds at once,
    /// for a persistent one the fewest of those that take as few rounds of
    /// tiles (128 blocks for 4096^3's 512 tiles of 128 x 256 on 132 SMs).
    pub fn grid(&self, stream: &CudaStream, dims: Dims) -> Result<(u32, u32, u32), GemmError> {
        Ok(self.grid_for(self.load(stream.context())?.resident, dims))
    }

    fn grid_for(&self, resident: u32, dims: Dims) -> (u32, u32, u32) {
        match self.spec.persistent {
            Some(Persistent::StreamK | Persistent::Hybrid | Persistent::TailSplit) => (self.stream_k_blocks(resident, dims), 1, 1),
            // at most a block per SM (or what occupancy allows), each walking tiles
            Some(Persistent::Tiles | Persistent::Queue) => (self.persistent_blocks(resident, dims), 1, 1),
            // a block per tile (grouped problems placing their own in one A and C: one deep)
            None => {
                let (x, y, z) = gemm_core::block_grid(&self.spec, dims.m, dims.n, dims.batch.count);
                (x, y, z as u32)
            }
        }
    }

    /// A persistent kernel's grid: whole clusters (each taking cluster
    /// tiles) under a cluster, else blocks, balanced over the C tiles of
    /// the whole batch ([`balanced_blocks`]).
    fn persistent_blocks(&self, resident: u32, dims: Dims) -> u32 {
        let b = &self.spec.block;
        let (cm, cn) = self.spec.cluster.map_or((1, 1), |c| (c.m as usize, c.n as usize));
        let tiles = if self.spec.by_class() {
            realign::by_class_tiles(dims)
        } else if self.spec.groups == Some(gemm_core::spec::Groups::Contiguous) {
            // at most: the rows' tiles, and a partial one more for each group
            (dims.m.div_ceil(b.m as usize) + dims.batch.count) * dims.n.div_ceil(b.n as usize)
        } else if self.spec.groups == Some(gemm_core::spec::Groups::Indexed) {
            // the rows' tiles, each of one group
            dims.m.div_ceil(b.m as usize) * dims.n.div_ceil(b.n as usize)
        } else {
            dims.m.div_ceil(b.m as usize * cm) * dims.n.div_ceil(b.n as usize * cn) * dims.batch.count
        };
        let size = cm * cn;
        (balanced_blocks(tiles, resident as usize / size) * size) as u32
    }

    fn stream_k_blocks(&self, resident: u32, dims: Dims) -> u32 {
        let b = &self.spec.block;
        // a partial tile (edges = guarded) counts whole
        let tiles = dims.m.div_ceil(b.m as usize) * dims.n.div_ceil(b.n as usize) * dims.batch.count;
        let steps = tiles * dims.k.div_ceil(b.k.unwrap_or(1) as usize);
        (resident as usize).min(steps.max(1)).min((tiles * MAX_SHARERS).max(1)) as u32
    }

    /// A stream-K launch's scratch for its grid: a partial sum per block, a
    /// zeroed flag per block that says its partial sum is complete, and the
    /// zeroed count of tickets that hands out the shares as blocks start
    /// (the stream's, kept from launch to launch: see [`StreamKScratch`]);
    /// under `persistent = queue` the queue's two zeroed counts.
    #[doc(hidden)]
    pub fn stream_k_scratch(&self, stream: &CudaStream, dims: Dims) -> Result<StreamKScratch, GemmError> {
        self.stream_k_scratch_for(stream, self.load(stream.context())?.resident, dims)
    }

    fn stream_k_scratch_for(&self, stream: &CudaStream, resident: u32, dims: Dims) -> Result<StreamKScratch, GemmError> {
        if self.spec.persistent == Some(Persistent::Queue) {
            // the queue's two counts, kept zero between launches as stream-K's flags are
            return StreamKScratch::get(stream, 2, 0);
        }
        let blocks = self.stream_k_blocks(resident, dims) as usize;
        let tile = (self.spec.block.m * self.spec.block.n) as usize;
        StreamKScratch::get(stream, blocks + 1, blocks * tile * 4)
    }
}

/// The fewest blocks (at most `resident`) that walk `tiles` in as few
/// rounds as `resident` blocks would: every block takes the same count of
/// tiles, or one fewer, where `resident` blocks would leave the last round
/// part full. The rounds are the same, yet on the H100 `hopper_autotuned`
/// ran faster on the fewer blocks (512 tiles of 128 x 256 at 4096^3 on 128
/// blocks against 132: 798.02 TFLOP/s against 790.68; 8192^3 on 128: 824.80
/// against 808.61; BENCHMARKS.md).
fn balanced_blocks(tiles: usize, resident: usize) -> usize {
    let (tiles, resident) = (tiles.max(1), resident.max(1));
    let rounds = tiles.div_ceil(resident);
    tiles.div_ceil(rounds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::spec::Arch;

    /// The persistent grid keeps the rounds of a block per SM and gives
    /// every block the same count of tiles, or one fewer: 512 tiles on 132
    /// SMs take four rounds, so 128 blocks; 1376 take eleven, 126 blocks;
    /// fewer tiles than SMs a block each; one tile past the SMs two rounds.
    #[test]
    fn the_persistent_grid_balances_its_rounds_on_the_fewest_blocks() {
        for (tiles, resident, blocks) in
            [(512, 132, 128), (2048, 132, 128), (1376, 132, 126), (100, 132, 100), (132, 132, 132), (133, 132, 67), (0, 132, 1), (5, 0, 1)]
        {
            assert_eq!(balanced_blocks(tiles, resident), blocks, "{tiles} tiles, {resident} resident");
        }
        for tiles in 1..2000 {
            for resident in [1, 7, 64, 114, 132] {
                let blocks = balanced_blocks(tiles, resident);
                let rounds = tiles.div_ceil(resident);
                assert!(blocks <= resident.min(tiles), "{tiles}, {resident}: {blocks}");
                assert_eq!(tiles.div_ceil(blocks), rounds, "{tiles}, {resident}: {blocks} blocks");
                // no fewer blocks would do: one less takes another round
                assert!(blocks == 1 || tiles.div_ceil(blocks - 1) > rounds, "{tiles}, {resident}: {blocks}");
            }
        }
    }

    /// `mma_autotuned`'s tiling (128 x 256 x 64, 3 stages, 144 KB) passes
    /// the A100's 163 KB, not the 99 KB a block gets on GPUs of compute
    /// capability 8.6, 8.9 and 12.0: there its launch says so and names the
    /// stages that fit, 2 (96 KB, the C tile in their place); where two
    /// stages do not fit either, a halved K tile.
    #[test]
    fn a_kernel_over_the_devices_shared_memory_says_what_fits() {
        let spec = KernelSpec {
            block: gemm_core::spec::Block { m: 128, n: 256, k: Some(64), threads: 256, min_blocks: None },
            warp: Some(gemm_core::spec::Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 }),
            ..crate::test_specs::mma()
        };
        let k = Kernel::from_spec(spec).unwrap();
        assert!(k.smem_bytes > 99 * 1024 && k.smem_bytes <= 163 * 1024, "{}", k.smem_bytes);
        let msg = k.over_shared_memory(99 * 1024, (8, 9)).to_string();
        assert!(msg.contains(&format!("needs {} bytes", k.smem_bytes)) && msg.contains("sm_89") && msg.contains("at most 101376"), "{msg}");
        assert!(msg.ends_with("describe it with stages = 2, which fits"), "{msg}");
        // two stages are the fewest a pipeline takes: at 80 KB a block, K is halved instead
        // (3 stages of 24 KB); at 48 KB the C tile alone (66 KB) is too large
        let msg = k.over_shared_memory(80 * 1024, (8, 6)).to_string();
        assert!(msg.ends_with("describe it with block(k = 32), which fits"), "{msg}");
        let msg = k.over_shared_memory(48 * 1024, (8, 6)).to_string();
        assert!(msg.ends_with("describe it with smaller tiles or fewer stages"), "{msg}");
    }

    /// sm_80 kernels run on every newer GPU; sm_90a kernels on Hopper (9.0)
    /// alone: an A100 or a Blackwell GPU gets `ArchTooOld`, not a launch.
    #[test]
    fn hopper_kernels_run_on_compute_capability_9_0_only() {
        let runs_on = |arch: Arch, device| arch.runs_on(device);
        assert!(runs_on(Arch::Sm80, (8, 0)) && runs_on(Arch::Sm80, (9, 0)) && runs_on(Arch::Sm80, (10, 0)));
        assert!(!runs_on(Arch::Sm80, (7, 5)));
        assert!(runs_on(Arch::Sm90a, (9, 0)));
        for other in [(8, 0), (8, 9), (10, 0), (12, 0)] {
            assert!(!runs_on(Arch::Sm90a, other), "sm_90a on {other:?}");
        }
    }

    /// A kernel for the GPUs of 99 KB a block runs on its compute capability
    /// and newer ones: sm_89's on an RTX 4090 or an H200, not on an A6000.
    #[test]
    fn kernels_for_consumer_gpus_run_on_their_capability_and_newer() {
        let runs_on = |arch: Arch, device| arch.runs_on(device);
        assert!(runs_on(Arch::Sm86, (8, 6)) && runs_on(Arch::Sm86, (8, 9)) && !runs_on(Arch::Sm86, (8, 0)));
        assert!(runs_on(Arch::Sm89, (8, 9)) && runs_on(Arch::Sm89, (9, 0)) && !runs_on(Arch::Sm89, (8, 6)));
        assert!(runs_on(Arch::Sm120, (12, 0)) && !runs_on(Arch::Sm120, (10, 0)));
    }
}
