//! NVRTC compilation, the on-disk cache of its output (`disk_cache`), and
//! the per-process cache of loaded kernels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUfunction_attribute_enum as Attr;
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::Ptx;
use gemm_core::spec::Arch;

use crate::disk_cache::{DiskCache, Entry};
use crate::GemmError;

/// Is libnvrtc loadable? cudarc panics on first use when it is not, so ask first.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

static COMPILATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COMPILATIONS_HERE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many NVRTC compilations this process has run (the cache's hit test).
pub fn compilations() -> usize {
    COMPILATIONS.load(Ordering::SeqCst)
}

/// How many of them ran on this thread: exact where other threads compile too.
pub fn compilations_here() -> usize {
    COMPILATIONS_HERE.with(|c| c.get())
}

/// Compiles `source` with NVRTC for `arch` (an `--gpu-architecture` value such
/// as `sm_80`); on failure the error carries NVRTC's log with each offending
/// source line quoted under its message.
pub fn compile(source: &str, kernel: &str, arch: &'static str) -> Result<Ptx, GemmError> {
    Ok(Ptx::from_src(nvrtc(source, kernel, arch)?.0))
}

/// [`compile`], with NVRTC's log where it succeeded: its warnings, which
/// the tests hold generated kernels to have none of.
pub fn compile_with_log(source: &str, kernel: &str, arch: &'static str) -> Result<(Ptx, String), GemmError> {
    let (ptx, _, log) = nvrtc_with(source, kernel, arch, &[])?;
    Ok((Ptx::from_src(ptx), log))
}

/// [`compile`]'s PTX, and for a real GPU target (`sm_..`, not `compute_..`)
/// the machine code NVRTC made of it on the way (its ptxas runs for such a
/// target anyway): loading that skips the driver's compiling the PTX again.
pub fn compile_cubin(source: &str, kernel: &str, arch: &'static str) -> Result<(String, Option<Vec<u8>>), GemmError> {
    nvrtc(source, kernel, arch)
}

fn nvrtc(source: &str, kernel: &str, arch: &'static str) -> Result<(String, Option<Vec<u8>>), GemmError> {
    nvrtc_with(source, kernel, arch, &[]).map(|(ptx, cubin, _)| (ptx, cubin))
}

/// What ptxas reports of a kernel's machine code for a real GPU `arch`
/// (`sm_..`): registers a thread, bytes spilled to local memory, and its
/// warnings and performance advisories (such as wgmmas it serialized).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Usage {
    pub registers: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub advisories: Vec<String>,
}

/// Compiles `source` to machine code for `arch` with ptxas's report on
/// (NVRTC's `--ptxas-options=-v`) and reads [`Usage`] from it: spills the
/// tests can check without a GPU.
pub fn usage(source: &str, kernel: &str, arch: &'static str) -> Result<Usage, GemmError> {
    let (_, _, log) = nvrtc_with(source, kernel, arch, &["--ptxas-options=-v".to_string()])?;
    usage_of(&log, kernel).ok_or_else(|| GemmError::Compile {
        kernel: kernel.into(),
        arch: arch.into(),
        log: format!("no ptxas report of the kernel in NVRTC's log:\n{log}"),
    })
}

/// The kernel's [`Usage`] in ptxas's report: the lines of its own entry
/// (each device function it calls, such as a guarded load kept out of
/// line, has lines of its own, which say nothing of the kernel's spills).
fn usage_of(log: &str, kernel: &str) -> Option<Usage> {
    let number_before = |line: &str, what: &str| -> Option<u32> {
        let at = line.find(what)?;
        line[..at].split_whitespace().last()?.parse().ok()
    };
    let mut u = Usage { registers: 0, spill_stores: 0, spill_loads: 0, advisories: Vec::new() };
    let (mut found, mut ours) = (false, false);
    for line in log.lines() {
        // each function's lines follow a line that names it
        if let Some(at) = line.find("Compiling entry function '").or_else(|| line.find("Function properties for ")) {
            ours = line[at..].contains(kernel);
        }
        if ours {
            if let Some(r) = number_before(line, " registers") {
                u.registers = r;
                found = true;
            }
            if let Some(b) = number_before(line, " bytes spill stores") {
                u.spill_stores = b;
            }
            if let Some(b) = number_before(line, " bytes spill loads") {
                u.spill_loads = b;
            }
        }
        // ptxas's performance notes (`(C75..)`: wgmmas serialized, waits it injected) and any warning
        if line.contains("Performance") || line.contains("(C75") || line.contains("warning") {
            u.advisories.push(line.trim().to_string());
        }
    }
    found.then_some(u)
}

/// NVRTC with `extra` options: the PTX, the machine code for a real GPU
/// target, and the program's log.
fn nvrtc_with(source: &str, kernel: &str, arch: &'static str, extra: &[String]) -> Result<(String, Option<Vec<u8>>, String), GemmError> {
    use cudarc::nvrtc::{result, sys};
    if !nvrtc_present() {
        return Err(GemmError::NoNvrtc);
    }
    COMPILATIONS.fetch_add(1, Ordering::SeqCst);
    COMPILATIONS_HERE.with(|c| c.set(c.get() + 1));
    let failed = |log: String| GemmError::Compile { kernel: kernel.into(), arch: arch.into(), log };
    let src = std::ffi::CString::new(source).map_err(|_| failed("the source holds a NUL byte".into()))?;
    let name = std::ffi::CString::new(format!("{kernel}.cu")).map_err(|_| failed("the kernel name holds a NUL byte".into()))?;
    let prog = result::create_program(&src, Some(&name)).map_err(|e| failed(format!("{e:?}")))?;
    // SAFETY: `prog` lives until the destroy below; `src` and `name` outlive it.
    let out = unsafe {
        let mut options = vec![format!("--gpu-architecture={arch}"), "--std=c++17".to_string()];
        options.extend_from_slice(extra);
        match result::compile_program(prog, &options) {
            Err(_) => {
                let log = result::get_program_log(prog).map(|l| std::ffi::CStr::from_ptr(l.as_ptr()).to_string_lossy().into_owned());
                Err(failed(annotate(&log.unwrap_or_default(), source)))
            }
            Ok(()) => result::get_ptx(prog).map_err(|e| failed(format!("{e:?}"))).map(|ptx| {
                let ptx = std::ffi::CStr::from_ptr(ptx.as_ptr()).to_string_lossy().into_owned();
                let log =
                    result::get_program_log(prog).map(|l| std::ffi::CStr::from_ptr(l.as_ptr()).to_string_lossy().into_owned()).unwrap_or_default();
                let mut size = 0usize;
                let cubin = (arch.starts_with("sm_") && sys::nvrtcGetCUBINSize(prog, &mut size).result().is_ok() && size > 0)
                    .then(|| {
                        let mut bytes = vec![0u8; size];
                        sys::nvrtcGetCUBIN(prog, bytes.as_mut_ptr().cast()).result().ok().map(|_| bytes)
                    })
                    .flatten();
                (ptx, cubin, log)
            }),
        }
    };
    // SAFETY: created above and not destroyed before.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

/// NVRTC's version as "major.minor" (part of a disk cache entry's key).
pub fn nvrtc_version() -> Result<String, GemmError> {
    if !nvrtc_present() {
        return Err(GemmError::NoNvrtc);
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints; the library is loadable (checked above).
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }.result().map_err(|e| GemmError::Compile {
        kernel: String::new(),
        arch: String::new(),
        log: format!("nvrtcVersion: {e:?}"),
    })?;
    Ok(format!("{major}.{minor}"))
}

/// [`compile`], through `cache` where there is one: a whole entry for this
/// source, target and NVRTC version is used as it is; otherwise NVRTC
/// compiles and the entry is (re)written.
pub fn compile_cached(source: &str, kernel: &str, target: &'static str, cache: Option<&DiskCache>) -> Result<Ptx, GemmError> {
    let Some(cache) = cache else { return compile(source, kernel, target) };
    // unknown (no library): compiles uncached, and compile says why it cannot
    let nvrtc = nvrtc_cached_version();
    if nvrtc.is_empty() {
        return compile(source, kernel, target);
    }
    let entry = Entry { source, target, nvrtc };
    if let Some(ptx) = cache.get(&entry) {
        return Ok(Ptx::from_src(ptx));
    }
    let ptx = compile(source, kernel, target)?;
    cache.put(&entry, &ptx.to_src());
    Ok(ptx)
}

/// The machine code of `source` for a real GPU `target`, through `cache`
/// where there is one (PTX and machine code are stored together, from one
/// compilation); `None` for a `compute_..` target.
pub fn machine_code(source: &str, kernel: &str, target: &'static str, cache: Option<&DiskCache>) -> Result<Option<Vec<u8>>, GemmError> {
    if !target.starts_with("sm_") {
        return Ok(None);
    }
    let nvrtc = nvrtc_cached_version();
    let entry = cache.filter(|_| !nvrtc.is_empty()).map(|c| (c, Entry { source, target, nvrtc }));
    if let Some(cubin) = entry.as_ref().and_then(|(c, e)| c.get_cubin(e)) {
        return Ok(Some(cubin));
    }
    let (ptx, cubin) = compile_cubin(source, kernel, target)?;
    if let Some((c, e)) = &entry {
        c.put(e, &ptx);
        if let Some(bytes) = &cubin {
            c.put_cubin(e, bytes);
        }
    }
    Ok(cubin)
}

/// NVRTC's version, asked of the library once per process; empty where
/// there is no library (nothing is cached then).
pub(crate) fn nvrtc_cached_version() -> &'static str {
    static NVRTC: OnceLock<String> = OnceLock::new();
    NVRTC.get_or_init(|| nvrtc_version().unwrap_or_default())
}

/// The disk cache the environment asks for, looked up once per process.
fn disk_cache() -> Option<&'static DiskCache> {
    static CACHE: OnceLock<Option<DiskCache>> = OnceLock::new();
    CACHE.get_or_init(DiskCache::from_env).as_ref()
}

/// Quotes the source line under every `file.cu(LINE): ...` message of an NVRTC
/// log that does not already show it.
fn annotate(log: &str, source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let log_lines: Vec<&str> = log.lines().collect();
    let mut out = String::new();
    for (i, msg) in log_lines.iter().enumerate() {
        out.push_str(msg);
        out.push('\n');
        let line_no = msg.split_once(".cu(").and_then(|(_, rest)| rest.split_once(')')).and_then(|(n, _)| n.parse::<usize>().ok());
        let Some((n, text)) = line_no.and_then(|n| lines.get(n.wrapping_sub(1)).map(|t| (n, t.trim()))) else { continue };
        let shown = log_lines.get(i + 1).is_some_and(|next| next.trim() == text);
        if !shown {
            out.push_str(&format!("  {n:>4} | {text}\n"));
        }
    }
    out
}

/// The `--gpu-architecture` to build a kernel targeting `arch` for a device of
/// compute capability `cap`. Arch-specific targets (sm_90a) are built as they
/// are; others for the device itself, since SASS for sm_80 does not run on sm_90.
pub fn device_target(arch: Arch, cap: (i32, i32)) -> &'static str {
    if arch == Arch::Sm90a {
        return arch.nvrtc_name();
    }
    match cap {
        (8, 0) => "sm_80",
        (8, 6) => "sm_86",
        (8, 7) => "sm_87",
        (8, 9) => "sm_89",
        (9, 0) => "sm_90",
        (10, 0) => "sm_100",
        (12, 0) => "sm_120",
        // PTX of the kernel's own arch: the driver finishes it for the device.
        _ => match arch {
            Arch::Sm80 => "compute_80",
            Arch::Sm86 => "compute_86",
            Arch::Sm89 => "compute_89",
            Arch::Sm90 | Arch::Sm90a => "compute_90",
            Arch::Sm100 => "compute_100",
            Arch::Sm120 => "compute_120",
        },
    }
}

/// Identifies one compiled kernel: the device, the arch it was built for and the source.
#[derive(Hash, PartialEq, Eq)]
struct Key {
    device: usize,
    target: &'static str,
    kernel: String,
    source: String,
}

/// One slot per kernel: its lock is held while that kernel compiles, so a
/// kernel compiles once while different kernels compile in parallel.
type Slot = Arc<Mutex<Option<CudaFunction>>>;

static CACHE: Mutex<Option<HashMap<Key, Slot>>> = Mutex::new(None);

/// The loaded function for a kernel on `ctx`'s device: compiled (or read from
/// the disk cache) and loaded on first use, from this process's cache after. Raises the dynamic shared-memory limit where
/// the kernel needs more than the default 48 KB.
pub fn load(ctx: &Arc<CudaContext>, source: &str, kernel: &str, target: &'static str, smem_bytes: u32) -> Result<CudaFunction, GemmError> {
    let key = Key { device: ctx.ordinal(), target, kernel: kernel.into(), source: source.into() };
    let slot: Slot = {
        let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        cache.get_or_insert_with(HashMap::new).entry(key).or_default().clone()
    };
    let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(f) = slot.as_ref() {
        return Ok(f.clone());
    }
    let f = relaxed(ctx, || {
        let module = match machine_code(source, kernel, target, disk_cache())? {
            // machine code where NVRTC made some; PTX (the driver compiles it) if
            // that does not load, or for a `compute_..` target
            Some(cubin) => match ctx.load_module(Ptx::from_binary(cubin)) {
                Ok(m) => m,
                Err(_) => ctx.load_module(compile_cached(source, kernel, target, disk_cache())?)?,
            },
            None => ctx.load_module(compile_cached(source, kernel, target, disk_cache())?)?,
        };
        let f = module.load_function(kernel)?;
        if smem_bytes > 48 * 1024 {
            f.set_attribute(Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem_bytes as i32)?;
        }
        Ok(f)
    })?;
    *slot = Some(f.clone());
    Ok(f)
}

/// Runs `f` with this thread's stream capture mode relaxed, then puts the
/// mode back. A kernel's first launch loads its module, and a launch
/// captured into a CUDA graph runs while a capture is in progress, whose
/// global and thread-local modes refuse calls that are not stream work and
/// may synchronize the device (allocations; a module's load may be one),
/// ending the capture; a relaxed thread may make them. PyTorch's allocator
/// relaxes its allocations so.
pub(crate) fn relaxed<R>(ctx: &CudaContext, f: impl FnOnce() -> Result<R, GemmError>) -> Result<R, GemmError> {
    use cudarc::driver::sys::{cuThreadExchangeStreamCaptureMode, CUstreamCaptureMode};
    ctx.bind_to_thread()?;
    let mut mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: exchanges this thread's mode with `mode`, a live one
    unsafe { cuThreadExchangeStreamCaptureMode(&mut mode) }.result()?;
    let result = f();
    // SAFETY: as above, putting the thread's mode back
    unsafe { cuThreadExchangeStreamCaptureMode(&mut mode) }.result()?;
    result
}

#[cfg(test)]
mod tests {

    /// The kernel's registers and spills, not those of a device function
    /// ptxas reports after it (as NVRTC 13.0 reported `load_edge` after an
    /// sm_80 kernel that spilled: the last line said 0 bytes).
    #[test]
    fn usage_reads_the_kernels_own_lines_of_the_report() {
        let log = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k__b128' for 'sm_90'
ptxas info    : Function properties for k__b128
ptxas         .     16 bytes stack frame, 32 bytes spill stores, 24 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 16 bytes cumulative stack size
ptxas info    : Function properties for _Z9load_edgePKti
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
";
        let u = usage_of(log, "k__b128").unwrap();
        assert_eq!((u.registers, u.spill_stores, u.spill_loads), (255, 32, 24));
        assert!(usage_of(log, "other").is_none());
    }
    use super::*;

    #[test]
    fn annotate_quotes_the_offending_source_line() {
        let source = "line one\nfloat x = y;\nline three\n";
        let log = "k.cu(2): error: identifier \"y\" is undefined\n1 error detected";
        let out = annotate(log, source);
        assert!(out.contains("     2 | float x = y;"), "{out}");
        let quoted = "k.cu(2): error: y\n    float x = y;\n";
        assert_eq!(annotate(quoted, source), quoted, "NVRTC already quoted the line");
        assert!(out.contains("1 error detected"));
    }

    #[test]
    fn device_target_builds_for_the_device_unless_arch_specific() {
        assert_eq!(device_target(Arch::Sm80, (9, 0)), "sm_90");
        assert_eq!(device_target(Arch::Sm80, (8, 6)), "sm_86");
        assert_eq!(device_target(Arch::Sm90a, (9, 0)), "sm_90a");
        assert_eq!(device_target(Arch::Sm80, (11, 0)), "compute_80");
        // a device NVRTC has no name for: PTX of the kernel's own arch
        assert_eq!(device_target(Arch::Sm89, (11, 0)), "compute_89");
        assert_eq!(device_target(Arch::Sm120, (12, 1)), "compute_120");
    }
}
