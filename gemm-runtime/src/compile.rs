//! NVRTC compilation, the on-disk cache of its output (`disk_cache`), and
//! the per-process cache of loaded kernels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUfunction_attribute_enum as Attr;
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
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
    if !nvrtc_present() {
        return Err(GemmError::NoNvrtc);
    }
    COMPILATIONS.fetch_add(1, Ordering::SeqCst);
    COMPILATIONS_HERE.with(|c| c.set(c.get() + 1));
    let opts = CompileOptions { arch: Some(arch), options: vec!["--std=c++17".into()], name: Some(format!("{kernel}.cu")), ..Default::default() };
    cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| {
        let log = match e {
            CompileError::CompileError { log, .. } => annotate(&log.to_string_lossy(), source),
            other => format!("{other:?}"),
        };
        GemmError::Compile { kernel: kernel.into(), arch: arch.into(), log }
    })
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
    // asked of the library once per process; unknown (no library) compiles
    // uncached, and compile says why it cannot
    static NVRTC: OnceLock<String> = OnceLock::new();
    let nvrtc = NVRTC.get_or_init(|| nvrtc_version().unwrap_or_default());
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
            Arch::Sm100 => "compute_100",
            _ => "compute_90",
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
    let ptx = compile_cached(source, kernel, target, disk_cache())?;
    let module = ctx.load_module(ptx)?;
    let f = module.load_function(kernel)?;
    if smem_bytes > 48 * 1024 {
        f.set_attribute(Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem_bytes as i32)?;
    }
    *slot = Some(f.clone());
    Ok(f)
}

#[cfg(test)]
mod tests {
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
    }
}
