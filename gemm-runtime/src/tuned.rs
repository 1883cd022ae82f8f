//! A tuned kernel: the legal points of a `tune(..)` space, one of which runs
//! each launch. On the first launch for a new key (a group of shapes, on a
//! device) the launcher compiles every point, times each on the caller's
//! own buffers, verifies the winner against the space's first point and
//! remembers it, in the process and on disk (`tune_cache`), so that later
//! launches, and later processes, go straight to the winner.
//!
//! The caller's C is never left corrupted: every timed run writes C from
//! scratch, and under `beta` (where C is also read) C is saved first,
//! restored before each run and once more before the real launch.
//!
//! In a CUDA graph capture, a launch for a key with no choice yet is an
//! `Err` (timing cannot be captured), the capture left valid.
//!
//! `GEMM_TILES_TUNE=off` skips tuning: the first point runs;
//! `GEMM_TILES_TUNE=verbose` prints each tuning's timings, choice and time to stderr. Choices can be
//! read back ([`Tuned::choices`]) and seeded from a file ([`Tuned::seed`]).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::driver::sys::CUdevice_attribute_enum as CUdevice_attribute;
use cudarc::driver::sys::{CUevent_flags, CUresult, CUstreamCaptureStatus};
use cudarc::driver::{result, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError};
use gemm_core::spec::KernelSpec;
use gemm_core::tune::TuneKey;

use crate::args::{Dims, Element};
use crate::fused::EpilogueArgs;
use crate::launch::Order;
use crate::scratch::Scratch;
use crate::tune_cache::{ChoiceKey, TuneCache};
use crate::{GemmError, Kernel};

/// The environment variable that turns tuning off (`off`: the first point
/// runs) or has it print its timings (`verbose`).
pub const ENV: &str = "GEMM_TILES_TUNE";

/// The first pass: every point in this many turns of `FIRST_RUNS` timed
/// runs, each turn's after an untimed one. Each turn starts a further
/// third along the points, so that no point is always timed last: on the
/// H100, with each point's runs in one go, the 128 x 256 tiles (listed
/// last) read 15-24% slower than they ran alone in the same process, and
/// lost to 128 x 128 ones (BENCHMARKS.md).
const FIRST_TURNS: usize = 3;
const FIRST_RUNS: usize = 2;
/// The points the first pass puts within this fraction of the fastest go
/// on to the second pass, at most `LEADERS` of them.
const CLOSE: f32 = 0.05;
const LEADERS: usize = 4;
/// The second pass times each leader alone, back to back: `SETTLE_MS` of
/// launches untimed, then `ALONE_MS` timed, the leaders in order and then
/// in reverse order; the median of a leader's timed runs decides. A GEMM
/// run back to back brings the GPU to its power cap within about 100 ms,
/// at the clock its own draw leaves (on the H200: 1400-1550 MHz where an
/// idle GPU starts at 1980), and the points draw differently: timed from idle
/// or in turns, the tuner picked between runs a point 3.7% behind another
/// at 4096 x 7168 x 16384 in e4m3 (each alone for 2 s: 1133 against 1177
/// TFLOP/s), where 150 ms alone after 150 ms to settle ranked the points
/// as 1-2 s alone did, each within 1% (performance notes, fp8). The same
/// `SETTLE_MS` of the first point run before the first pass, so that it
/// too times the GPU at its cap.
const SETTLE_MS: f32 = 150.0;
const ALONE_MS: f32 = 150.0;
/// At most this many runs (timed or untimed) a leader each time: launches
/// of a few microseconds, which never reach the power cap, are not run for
/// 150 ms; at least `MIN_RUNS` timed ones.
const MAX_RUNS: usize = 2000;
const MIN_RUNS: usize = 5;

/// Dependent launches ([`Tuned::launch_dependent`]) are tuned this many
/// back to back between two events.
const BATCH: usize = 4;

/// At most this many copies of A and B for the tuner's runs: operands of
/// 8 MB, as a weight of 4096 x 2048 in e4m3, then pass twice an L2 of 60 MB.
const MAX_COPIES: usize = 16;

/// What a choice for dependent launches adds to the device's name.
const DEPENDENT: &str = ", launched dependent";

/// Tunings done in this process, over every tuned kernel (tests read it to
/// see that a cached choice tuned nothing).
static TUNINGS: AtomicUsize = AtomicUsize::new(0);

/// A kernel tuned over the legal points of its space.
pub struct Tuned {
    name: &'static str,
    points: &'static [KernelSpec],
    key: TuneKey,
    /// Each point's kernel, generated when first needed: a process that
    /// finds its choice on disk generates and compiles that point alone.
    kernels: OnceLock<Vec<OnceLock<Kernel>>>,
    /// Choices made or read in this process: (device, shape key) -> point.
    chosen: Mutex<Vec<(ChoiceAt, usize)>>,
}

/// Where a choice holds: the device and the key's shape group.
type ChoiceAt = (String, [usize; 4]);

/// One choice, as [`Tuned::choices`] reads it back and [`Tuned::seed`] takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub device: String,
    /// m, n, k and the batch count, as the space's key groups them.
    pub shape: [usize; 4],
    pub kernel: String,
}

impl Tuned {
    /// The tuned kernel the macro expands: `points` are the space's legal
    /// specs, in its order.
    #[doc(hidden)]
    pub const fn new(name: &'static str, points: &'static [KernelSpec], key: TuneKey) -> Self {
        Tuned { name, points, key, kernels: OnceLock::new(), chosen: Mutex::new(Vec::new()) }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn key(&self) -> TuneKey {
        self.key
    }

    /// The legal points, as specs.
    pub fn points(&self) -> &'static [KernelSpec] {
        self.points
    }

    /// Point `i` as a kernel, generated on first use (it compiles on its
    /// first launch).
    pub fn kernel(&self, i: usize) -> &Kernel {
        let slots = self.kernels.get_or_init(|| (0..self.points.len()).map(|_| OnceLock::new()).collect());
        slots[i].get_or_init(|| Kernel::from_spec(self.points[i].clone()).expect("the macro kept legal points only"))
    }

    /// Every point as a kernel.
    pub fn kernels(&self) -> impl Iterator<Item = &Kernel> {
        (0..self.points.len()).map(|i| self.kernel(i))
    }

    /// Point `i`'s kernel name (its tiling), without generating its source.
    fn point_name(&self, i: usize) -> String {
        self.points[i].kernel_name()
    }

    /// Tunings this process has run, over every tuned kernel.
    pub fn tunings() -> usize {
        TUNINGS.load(Ordering::Relaxed)
    }

    /// The choices known to this process: made, read from disk or seeded.
    pub fn choices(&self) -> Vec<Choice> {
        let chosen = self.chosen.lock().unwrap_or_else(|p| p.into_inner());
        chosen.iter().map(|((device, shape), i)| Choice { device: device.clone(), shape: *shape, kernel: self.point_name(*i) }).collect()
    }

    /// Takes choices from a file of lines `device | m n k batch | kernel
    /// name` (what [`Self::choices`] gives, as [`Self::write_choices`]
    /// writes it), for deployments that should not tune. Lines for other
    /// kernels are skipped; a malformed line is an error.
    pub fn seed(&self, path: &Path) -> Result<usize, GemmError> {
        let text = std::fs::read_to_string(path).map_err(|e| GemmError::Tuning(format!("reading {}: {e}", path.display())))?;
        let mut taken = 0;
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#')) {
            let bad = || GemmError::Tuning(format!("{}:{}: expected `device | m n k batch | kernel name`, got `{line}`", path.display(), n + 1));
            let parts: Vec<&str> = line.split(" | ").collect();
            let [device, shape, kernel] = parts[..] else { return Err(bad()) };
            let shape: Vec<usize> = shape.split(' ').map(|v| v.parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
            let shape: [usize; 4] = shape.try_into().map_err(|_| bad())?;
            if let Some(i) = (0..self.points.len()).position(|i| self.point_name(i) == kernel) {
                self.remember((device.to_string(), shape), i);
                taken += 1;
            }
        }
        Ok(taken)
    }

    /// Writes [`Self::choices`] in the form [`Self::seed`] reads.
    pub fn write_choices(&self, path: &Path) -> Result<(), GemmError> {
        let lines: String = self
            .choices()
            .iter()
            .map(|c| format!("{} | {} {} {} {} | {}\n", c.device, c.shape[0], c.shape[1], c.shape[2], c.shape[3], c.kernel))
            .collect();
        std::fs::write(path, format!("# {}: device | m n k batch (as the key groups them) | kernel\n{lines}", self.name))
            .map_err(|e| GemmError::Tuning(format!("writing {}: {e}", path.display())))
    }

    fn remember(&self, key: ChoiceAt, index: usize) {
        let mut chosen = self.chosen.lock().unwrap_or_else(|p| p.into_inner());
        chosen.retain(|(k, _)| *k != key);
        chosen.push((key, index));
    }

    fn recall(&self, key: &ChoiceAt) -> Option<usize> {
        let chosen = self.chosen.lock().unwrap_or_else(|p| p.into_inner());
        chosen.iter().find(|(k, _)| k == key).map(|(_, i)| *i)
    }

    /// Launches `C = A * B` with the point chosen for these sizes, tuning
    /// first if none is (see the module).
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

    /// [`Self::launch`] with the epilogue's arguments.
    pub fn launch_with<TA: Element, TB: Element, TC: Element, TX: Element>(
        &self,
        stream: &CudaStream,
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
        epilogue: EpilogueArgs<'_, TX>,
    ) -> Result<(), GemmError> {
        let index = self.choose(Order::After, stream, a, b, c, dims, &epilogue)?;
        self.kernel(index).launch_with(stream, a, b, c, dims, epilogue)
    }

    /// [`Self::launch_with`] as a dependent launch ([`Kernel::launch_dependent`]):
    /// beside the end of the stream's previous kernel. Its choice is its
    /// own, the points timed as they will run, launched dependent back to
    /// back (the point that leads plain launches need not lead these); it
    /// is remembered (and kept on disk) under the device's name with
    /// ", launched dependent" added.
    pub fn launch_dependent<TA: Element, TB: Element, TC: Element, TX: Element>(
        &self,
        stream: &CudaStream,
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
        epilogue: EpilogueArgs<'_, TX>,
    ) -> Result<(), GemmError> {
        let index = self.choose(Order::Dependent, stream, a, b, c, dims, &epilogue)?;
        self.kernel(index).launch_dependent(stream, a, b, c, dims, epilogue)
    }

    /// The kernel that runs for `dims` on `stream`'s device, once chosen
    /// (by a launch, the disk or a seed); `None` before.
    pub fn chosen_for(&self, stream: &CudaStream, dims: Dims) -> Result<Option<&Kernel>, GemmError> {
        Ok(self.recall(&self.choice_at(Order::After, stream, dims)?).map(|i| self.kernel(i)))
    }

    /// [`Self::chosen_for`] for dependent launches ([`Self::launch_dependent`]).
    pub fn chosen_for_dependent(&self, stream: &CudaStream, dims: Dims) -> Result<Option<&Kernel>, GemmError> {
        Ok(self.recall(&self.choice_at(Order::Dependent, stream, dims)?).map(|i| self.kernel(i)))
    }

    /// Where a choice for `dims` on `stream`'s device is kept: the device
    /// (and whether launches are dependent) and the shape's group.
    fn choice_at(&self, order: Order, stream: &CudaStream, dims: Dims) -> Result<ChoiceAt, GemmError> {
        let device = device_name(stream)?;
        let device = if order == Order::Dependent { format!("{device}{DEPENDENT}") } else { device };
        Ok((device, self.key.of(dims.m, dims.n, dims.k, dims.batch.count)))
    }

    #[allow(clippy::too_many_arguments)]
    fn choose<TA: Element, TB: Element, TC: Element, TX: Element>(
        &self,
        order: Order,
        stream: &CudaStream,
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
        epilogue: &EpilogueArgs<'_, TX>,
    ) -> Result<usize, GemmError> {
        // an empty product has nothing to time: the first point whose tiles take its m and n
        // writes it (nothing, or the epilogue over K = 0), and no choice is kept for its shape
        if dims.is_empty() {
            let takes = |spec: &KernelSpec| {
                let req = spec.requirements();
                dims.m.is_multiple_of(req.m_multiple as usize) && dims.n.is_multiple_of(req.n_multiple as usize)
            };
            return Ok(self.points.iter().position(takes).unwrap_or(0));
        }
        let key = self.choice_at(order, stream, dims)?;
        let shape = key.1;
        if let Some(i) = self.recall(&key) {
            return Ok(i);
        }
        if std::env::var(ENV).is_ok_and(|v| v == "off") || self.points.len() == 1 {
            self.remember(key, 0);
            return Ok(0);
        }
        let disk = TuneCache::from_env().map(|cache| {
            let space = (0..self.points.len()).map(|i| self.point_name(i)).collect::<Vec<_>>().join("\n");
            let nvrtc = crate::compile::nvrtc_cached_version().to_string();
            (cache, ChoiceKey { device: key.0.clone(), space, shape, nvrtc })
        });
        if let Some((i, _)) = disk.as_ref().and_then(|(cache, k)| cache.get(k)) {
            self.remember(key, i);
            return Ok(i);
        }
        // (timing waits on the stream, which a capture refuses, and would put every timed run into
        // the graph; asked before anything goes onto the stream, so the capture stays valid)
        if stream.capture_status()? != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            return Err(GemmError::Tuning(format!(
                "`{}` has no point chosen for {} x {} x {} yet, and its tuning cannot run in a CUDA graph capture: launch it once at this shape before capturing, or seed the choice (Tuned::seed); {ENV}=off runs its first point",
                self.name, dims.m, dims.n, dims.k
            )));
        }
        let i = self.tune(order, stream, a, b, c, dims, epilogue)?;
        if let Some((cache, k)) = &disk {
            cache.put(k, i, &self.point_name(i));
        }
        self.remember(key, i);
        Ok(i)
    }

    /// Compiles every point (in parallel), times each that accepts these
    /// arguments (the first pass, in turns, after the first point alone has
    /// brought the GPU to its power cap), times those close to the fastest
    /// each alone (the second pass), and verifies the winner against the
    /// first point that runs.
    /// Each timed launch reads the next of some copies of A and B where
    /// those fit the L2 twice over, as a model's layers each read a weight
    /// of their own: on operands the L2 kept from the run before, points
    /// ranked otherwise (fp8 at 128 x 4096 x 2048 on the H200, the point
    /// picked so ran 1.3% behind another on operands the L2 held, and 16%
    /// behind it on operands from memory). Dependent launches are timed
    /// `BATCH` back to back between two events (an event between them
    /// would end the overlap), C restored before each where the kernels
    /// read it (`beta`: the copies, timed, end the overlap too).
    #[allow(clippy::too_many_arguments)]
    fn tune<TA: Element, TB: Element, TC: Element, TX: Element>(
        &self,
        order: Order,
        stream: &CudaStream,
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
        epilogue: &EpilogueArgs<'_, TX>,
    ) -> Result<usize, GemmError> {
        // (before the tuning copies its operands: each point's launch checks them again)
        crate::placement::of_launch(stream, a, b, c, epilogue)?;
        TUNINGS.fetch_add(1, Ordering::Relaxed);
        let started = std::time::Instant::now();
        let kernels: Vec<&Kernel> = self.kernels().collect();
        crate::kernel::compile_all(kernels.iter().copied(), stream.context());
        let compiled = started.elapsed();
        // C's bytes, saved where the kernels read it (beta)
        let c_bytes = c.len() * std::mem::size_of::<TC>();
        let saved = if epilogue.beta.is_some() { Some(Scratch::new(stream, c_bytes)?) } else { None };
        let c_ptr = c.device_ptr_mut(stream).0;
        let cu = stream.cu_stream();
        // SAFETY (both copies): `saved` holds `c_bytes`, C's whole buffer.
        let restore = |saved: &Option<Scratch>| -> Result<(), GemmError> {
            if let Some(s) = saved {
                unsafe { result::memcpy_dtod_async(c_ptr, s.ptr(), c_bytes, cu) }?;
            }
            Ok(())
        };
        if let Some(s) = &saved {
            unsafe { result::memcpy_dtod_async(s.ptr(), c_ptr, c_bytes, cu) }?;
        }
        // `runs` timed runs of one point, in milliseconds, after an untimed one:
        // timed from the first run after another point's, the launches that
        // copied A and B at 4095x4097x4100 all took 0.37 ms on the H100, where
        // the same points took 0.28 in five runs in a row
        let batch = if order == Order::Dependent { BATCH } else { 1 };
        // runs re-reading operands the L2 holds would not rank the points as
        // layers that each read their own weight run: copies of A and B in turn
        let copies = operand_copies(stream, a, b)?;
        let mut turn = 0;
        // first: every point that runs these arguments
        let mut runnable = Vec::new();
        let mut reasons = Vec::new();
        for (i, k) in kernels.iter().enumerate() {
            restore(&saved)?;
            match k.launch_with(stream, a, b, c, dims, *epilogue) {
                Ok(()) => runnable.push(i),
                Err(e) => reasons.push(format!("{}: {e}", k.name)),
            }
        }
        let Some(&first) = runnable.first() else {
            return Err(GemmError::Tuning(format!("no point of `{}` runs these arguments:\n{}", self.name, reasons.join("\n"))));
        };
        let mut launch_next = |k: &Kernel, c: &mut _| -> Result<(), GemmError> {
            turn += 1;
            match copies.get(turn % copies.len().max(1)) {
                Some((a, b)) => k.launch_in(order, stream, a, b, c, dims, *epilogue),
                None => k.launch_in(order, stream, a, b, c, dims, *epilogue),
            }
        };
        let mut time = |k: &Kernel, runs: usize, c: &mut _| -> Result<Vec<f32>, GemmError> {
            restore(&saved)?;
            launch_next(k, c)?;
            let mut events = Vec::with_capacity(runs);
            for _ in 0..runs {
                restore(&saved)?;
                let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
                for j in 0..batch {
                    if j > 0 {
                        restore(&saved)?;
                    }
                    launch_next(k, c)?;
                }
                let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
                events.push((start, end));
            }
            stream.synchronize()?;
            Ok(events.iter().map(|(s, e)| s.elapsed_ms(e).map(|ms| ms / batch as f32)).collect::<Result<_, _>>()?)
        };
        let runs_for = |ms: f32, each: f32| runs_filling(ms, each, batch);
        // the GPU brought to where a stream of these launches holds it
        let each = median(time(kernels[first], 1, c)?);
        time(kernels[first], runs_for(SETTLE_MS, each), c)?;
        // `points`' medians over `turns` turns of `runs` runs each, each turn
        // starting further along the points
        let mut in_turns = |points: &[usize], turns: usize, runs: usize, c: &mut _| -> Result<Vec<(usize, f32)>, GemmError> {
            let mut times = vec![Vec::new(); points.len()];
            for t in 0..turns {
                let start = t * points.len() / turns;
                for j in 0..points.len() {
                    let p = (start + j) % points.len();
                    times[p].extend(time(kernels[points[p]], runs, c)?);
                }
            }
            Ok(points.iter().copied().zip(times.into_iter().map(median)).collect())
        };
        let medians = in_turns(&runnable, FIRST_TURNS, FIRST_RUNS, c)?;
        let verbose = std::env::var(ENV).is_ok_and(|v| v == "verbose");
        let show = |pass: &str, medians: &[(usize, f32)]| {
            for &(i, ms) in medians {
                eprintln!("{} at {}x{}x{}, {pass}: {ms:.4} ms {}", self.name, dims.m, dims.n, dims.k, kernels[i].name);
            }
        };
        if verbose {
            show("first pass", &medians);
        }
        // second pass: the leaders, each alone, in order and back
        let leaders = leaders(&medians);
        let winner = if leaders.len() > 1 {
            let mut times = vec![Vec::new(); leaders.len()];
            for j in (0..leaders.len()).chain((0..leaders.len()).rev()) {
                let (k, each) = (kernels[leaders[j]], medians.iter().find(|m| m.0 == leaders[j]).map_or(1.0, |m| m.1));
                time(k, runs_for(SETTLE_MS, each), c)?;
                times[j].extend(time(k, runs_for(ALONE_MS, each).max(MIN_RUNS), c)?);
            }
            let medians: Vec<(usize, f32)> = leaders.iter().copied().zip(times.into_iter().map(median)).collect();
            if verbose {
                show("second pass, each alone", &medians);
            }
            fastest(&medians)
        } else {
            leaders[0]
        };
        if winner != first {
            // the winner's C against the first point's, on the same inputs
            let mut outputs = Vec::with_capacity(2);
            for k in [&kernels[first], &kernels[winner]] {
                restore(&saved)?;
                k.launch_with(stream, a, b, c, dims, *epilogue)?;
                outputs.push(read_back::<TC>(stream, c_ptr, c.len())?);
            }
            let spec = &kernels[winner].spec;
            let (err, apart) = compare(&outputs[1], &outputs[0], c_elements(spec, dims));
            let tolerance = crate::data::tolerance(spec.c.elem);
            if err > tolerance || apart > 0 {
                return Err(GemmError::Tuning(format!(
                    "`{}`'s fastest point `{}` differs from its first `{}` by {err:.1e} (tolerance {tolerance:.0e}; {apart} element(s) finite in one and not the other)",
                    self.name, kernels[winner].name, kernels[first].name
                )));
            }
        }
        restore(&saved)?;
        stream.synchronize()?;
        if verbose {
            eprintln!(
                "{} at {}x{}x{}: chose {} in {:.2} s ({:.2} s compiling, {:.2} s timing)",
                self.name,
                dims.m,
                dims.n,
                dims.k,
                kernels[winner].name,
                started.elapsed().as_secs_f64(),
                compiled.as_secs_f64(),
                (started.elapsed() - compiled).as_secs_f64()
            );
        }
        Ok(winner)
    }
}

/// A copy of A's and B's buffers.
type Operands<TA, TB> = (CudaSlice<TA>, CudaSlice<TB>);

/// Copies of A and B (the whole buffers) that with them pass twice the
/// device's L2 (at most [`MAX_COPIES`]), for tuning; none where A and B
/// alone do, or where the device has no memory for them (the points are
/// then timed on the caller's buffers).
fn operand_copies<TA: Element, TB: Element>(
    stream: &CudaStream,
    a: &impl DevicePtr<TA>,
    b: &impl DevicePtr<TB>,
) -> Result<Vec<Operands<TA, TB>>, GemmError> {
    let l2 = stream.context().attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?.max(0) as usize;
    let (a_bytes, b_bytes) = (a.len() * std::mem::size_of::<TA>(), b.len() * std::mem::size_of::<TB>());
    let copies = copies_past_l2(l2, a_bytes + b_bytes);
    if copies == 0 {
        return Ok(Vec::new());
    }
    // allocated on the operands' own streams (the launch's is borrowed, not shared), and
    // those synchronized before the copies on the launch's stream
    // SAFETY: each copy is written whole, from its operand's buffer of the same length, before any read
    let made: Result<Vec<Operands<TA, TB>>, DriverError> =
        (0..copies).map(|_| unsafe { Ok((a.stream().alloc::<TA>(a.len())?, b.stream().alloc::<TB>(b.len())?)) }).collect();
    let mut made = match made {
        Ok(made) => made,
        Err(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    a.stream().synchronize()?;
    b.stream().synchronize()?;
    let cu = stream.cu_stream();
    let (a_ptr, _a_sync) = a.device_ptr(stream);
    let (b_ptr, _b_sync) = b.device_ptr(stream);
    for (x, y) in &mut made {
        unsafe {
            result::memcpy_dtod_async(x.device_ptr_mut(stream).0, a_ptr, a_bytes, cu)?;
            result::memcpy_dtod_async(y.device_ptr_mut(stream).0, b_ptr, b_bytes, cu)?;
        }
    }
    Ok(made)
}

/// How many copies of operands of `bytes` pass twice an L2 of `l2` bytes,
/// at most [`MAX_COPIES`]; none where one set alone does.
fn copies_past_l2(l2: usize, bytes: usize) -> usize {
    let copies = (2 * l2).div_ceil(bytes.max(1)).min(MAX_COPIES);
    if copies <= 1 {
        0
    } else {
        copies
    }
}

/// The runs of `batch` launches of `each` milliseconds that fill `ms`
/// milliseconds, one at least and at most [`MAX_RUNS`].
fn runs_filling(ms: f32, each: f32, batch: usize) -> usize {
    ((ms / (each * batch as f32).max(1e-4)).ceil() as usize).clamp(1, MAX_RUNS)
}

/// The median of some timed runs.
fn median(mut ms: Vec<f32>) -> f32 {
    ms.sort_by(f32::total_cmp);
    ms[ms.len() / 2]
}

/// The index of the fastest of (point, median) pairs (the earlier on a tie).
fn fastest(medians: &[(usize, f32)]) -> usize {
    medians.iter().fold(medians[0], |best, &m| if m.1 < best.1 { m } else { best }).0
}

/// The points whose first-pass median is within `CLOSE` of the fastest,
/// fastest first, at most `LEADERS` of them.
fn leaders(medians: &[(usize, f32)]) -> Vec<usize> {
    let best = medians.iter().map(|m| m.1).fold(f32::INFINITY, f32::min);
    let mut close: Vec<(usize, f32)> = medians.iter().copied().filter(|m| m.1 <= best * (1.0 + CLOSE)).collect();
    close.sort_by(|x, y| x.1.total_cmp(&y.1));
    close.into_iter().take(LEADERS).map(|m| m.0).collect()
}

/// The indices of C's elements in its buffer (not the padding past each
/// line's end, nor what lies between the problems of a batch).
fn c_elements(spec: &KernelSpec, dims: Dims) -> impl Iterator<Item = usize> {
    let c = crate::args::spec_shapes(spec, dims)[2];
    let (lines, len) = if c.layout == gemm_core::spec::Layout::RowMajor { (c.rows, c.cols) } else { (c.cols, c.rows) };
    let (count, stride) = (dims.batch.count, dims.batch.stride_c);
    (0..count).flat_map(move |p| (0..lines).flat_map(move |l| (0..len).map(move |e| p * stride + l * c.ld + e)))
}

/// `||got - want|| / ||want||` over the elements at `at` that are finite
/// in both, and how many are finite in one but not the other (a NaN or an
/// infinity the inputs carry is the same in both).
fn compare(got: &[f32], want: &[f32], at: impl Iterator<Item = usize>) -> (f64, usize) {
    let (mut diff, mut norm, mut apart) = (0f64, 0f64, 0);
    for i in at {
        let (x, y) = (got[i], want[i]);
        if x.is_finite() && y.is_finite() {
            diff += (f64::from(x) - f64::from(y)).powi(2);
            norm += f64::from(y).powi(2);
        } else if x.is_finite() != y.is_finite() || (x.is_infinite() && x != y) {
            apart += 1;
        }
    }
    ((diff / norm.max(f64::MIN_POSITIVE)).sqrt(), apart)
}

/// C's `len` elements at `ptr`, as f32.
fn read_back<TC: Element>(stream: &CudaStream, ptr: cudarc::driver::sys::CUdeviceptr, len: usize) -> Result<Vec<f32>, GemmError> {
    let size = std::mem::size_of::<TC>();
    let mut bytes = vec![0u8; len * size];
    // SAFETY: `bytes` holds C's `len` elements; the stream is synchronized
    // before they are read.
    unsafe { result::memcpy_dtoh_async(&mut bytes, ptr, stream.cu_stream()) }?;
    stream.synchronize()?;
    // SAFETY: every `Element` (f32, f16, bf16) is plain data for which any
    // bit pattern is a value; each chunk holds one, possibly unaligned.
    Ok(bytes.chunks_exact(size).map(|b| unsafe { std::ptr::read_unaligned(b.as_ptr().cast::<TC>()) }.to_f32()).collect())
}

/// The device as choices name it: its name and compute capability.
fn device_name(stream: &CudaStream) -> Result<String, GemmError> {
    // asked of the driver once per device, not at every launch
    static NAMES: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
    let ctx = stream.context();
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, name)) = names.iter().find(|(d, _)| *d == ctx.ordinal()) {
        return Ok(name.clone());
    }
    let (major, minor) = ctx.compute_capability()?;
    let name = format!("{} sm_{major}{minor}", ctx.name()?);
    names.push((ctx.ordinal(), name.clone()));
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::spec::*;

    /// The winner's check reads C's elements only: not a line's padding,
    /// nor the gap between problems, which the kernels never write.
    #[test]
    fn the_check_reads_cs_elements_and_not_its_padding() {
        let spec =
            KernelSpec { c: Operand { elem: Elem::Bf16, layout: Layout::ColMajor }, epilogue: Epilogue::Direct, ..crate::test_specs::mma_64() };
        // C column-major, 3 x 2 with ldc 4, two problems 10 apart
        let dims = Dims::new(3, 2, 5).with_ld(5, 2, 4).batched(2, 0, 0, 10);
        let at: Vec<usize> = c_elements(&spec, dims).collect();
        assert_eq!(at, [0, 1, 2, 4, 5, 6, 10, 11, 12, 14, 15, 16]);
        let mut want = vec![f32::NAN; 20];
        for &i in &at {
            want[i] = i as f32;
        }
        let mut got = want.clone();
        assert_eq!(compare(&got, &want, at.iter().copied()), (0.0, 0), "padding left NaN does not count");
        got[5] = f32::NAN;
        assert_eq!(compare(&got, &want, at.iter().copied()).1, 1, "an element one wrote and the other did not");
        got[5] = 6.0;
        assert!(compare(&got, &want, at.iter().copied()).0 > 0.01);
    }

    /// The tuner's runs read copies of A and B that pass twice the L2: 15
    /// of e4m3's 128 x 2048 and 4096 x 2048 on the H200's 60 MB, 16 at
    /// most for smaller operands, none where one set passes it twice.
    #[test]
    fn the_tuners_operand_copies_pass_twice_the_l2() {
        let l2 = 60 << 20;
        let fp8 = 128 * 2048 + 4096 * 2048;
        assert_eq!(copies_past_l2(l2, fp8), 15);
        assert!(copies_past_l2(l2, fp8) * fp8 >= 2 * l2);
        assert_eq!(copies_past_l2(l2, 1 << 20), MAX_COPIES);
        // bf16 at 4096^3: two sets of 64 MiB pass 120 MiB
        assert_eq!(copies_past_l2(l2, 2 * 2 * 4096 * 4096), 2);
        assert_eq!(copies_past_l2(l2, 2 * l2), 0);
        assert_eq!(copies_past_l2(l2, 0), MAX_COPIES);
    }

    /// The second pass takes the points within 5% of the fastest, fastest
    /// first, four at most; the decision takes the earlier point on a tie.
    #[test]
    fn the_points_close_to_the_fastest_are_timed_again() {
        let medians = [(0, 1.30), (2, 1.00), (3, 1.06), (5, 1.04), (7, 1.02)];
        assert_eq!(leaders(&medians), [2, 7, 5]);
        let many: Vec<(usize, f32)> = (0..10).map(|i| (i, 1.0 + i as f32 * 0.001)).collect();
        assert_eq!(leaders(&many), [0, 1, 2, 3]);
        assert_eq!(leaders(&[(4, 2.0)]), [4]);
        assert_eq!(fastest(&[(3, 1.5), (1, 1.2), (6, 1.2)]), 1);
        assert_eq!(median(vec![3.0, 1.0, 2.0, 9.0, 0.5]), 2.0);
    }

    /// A leader alone runs long enough for the GPU's clock to settle at its
    /// power cap: 150 ms of 0.7 ms launches (215 runs), of dependent ones
    /// in fours, and of launches too short or too long to fill it in
    /// 1..`MAX_RUNS` runs (a launch of 100 ms settles the clock alone).
    #[test]
    fn a_leader_alone_runs_for_its_time_within_bounds() {
        assert_eq!(runs_filling(ALONE_MS, 0.7, 1), 215);
        assert_eq!(runs_filling(ALONE_MS, 0.7, BATCH), 54);
        assert_eq!(runs_filling(ALONE_MS, 0.005, 1), MAX_RUNS);
        assert_eq!(runs_filling(ALONE_MS, 0.0, 1), MAX_RUNS);
        assert_eq!(runs_filling(SETTLE_MS, 100.0, 1), 2);
        assert_eq!(runs_filling(SETTLE_MS, 400.0, 1), 1);
    }
}
