//! Compiled kernels on disk, so a second process compiles nothing.
//!
//! An entry holds the PTX NVRTC made from one source for one target, keyed by
//! the source, the `--gpu-architecture` target and the NVRTC version, and
//! for a real GPU target (`sm_..`) the machine code beside it (`.cubin`). The
//! file name is a hash of the three; the entry repeats all three in full and
//! a read checks them, so a hash collision, a half-written file or any other
//! damage reads as a miss: the kernel is compiled again and the entry
//! rewritten, never an error and never another kernel's code.
//!
//! Where: `$GEMM_TILES_CACHE` if set (`off` or empty turns the cache off),
//! else the platform's cache folder: `$XDG_CACHE_HOME/gemm-tiles` or
//! `~/.cache/gemm-tiles` on Linux, `~/Library/Caches/gemm-tiles` on macOS,
//! `%LOCALAPPDATA%\gemm-tiles` on Windows.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that moves the cache or (`off`) turns it off.
pub const ENV: &str = "GEMM_TILES_CACHE";

const MAGIC: &str = "gemm-tiles kernel cache, format 1";

/// A folder of cached PTX.
#[derive(Clone, Debug)]
pub struct DiskCache {
    dir: PathBuf,
}

/// What identifies a compiled kernel.
pub struct Entry<'a> {
    pub source: &'a str,
    pub target: &'a str,
    /// NVRTC's version, "major.minor".
    pub nvrtc: &'a str,
}

impl DiskCache {
    /// A cache in `dir` (created on the first store).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        DiskCache { dir: dir.into() }
    }

    /// The cache the environment asks for: `$GEMM_TILES_CACHE`, else the
    /// platform's cache folder; `None` when turned off or there is no home.
    pub fn from_env() -> Option<Self> {
        match std::env::var_os(ENV) {
            Some(v) if v.is_empty() || v == "off" => None,
            Some(v) => Some(Self::at(v)),
            None => platform_dir().map(|d| Self::at(d.join("gemm-tiles"))),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `entry` lives.
    pub fn path(&self, entry: &Entry) -> PathBuf {
        // FNV-1a: stable across processes and Rust versions, unlike std's hasher
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for part in [entry.source, "\0", entry.target, "\0", entry.nvrtc] {
            for b in part.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        self.dir.join(format!("{h:016x}.ptx"))
    }

    /// The PTX stored for `entry`, if a whole, matching entry is there.
    pub fn get(&self, entry: &Entry) -> Option<String> {
        let text = std::fs::read_to_string(self.path(entry)).ok()?;
        let rest = text.strip_prefix(&header(entry))?;
        let (source, ptx) = rest.split_at_checked(entry.source.len())?;
        let ptx = ptx.strip_prefix("\n")?.strip_suffix("\n// end\n")?;
        (source == entry.source && ptx.contains(".entry")).then(|| ptx.to_string())
    }

    /// Stores `ptx` for `entry`; written to a temporary file and renamed into
    /// place, so a reader never sees half an entry. Failures are ignored: the
    /// cache only saves time.
    pub fn put(&self, entry: &Entry, ptx: &str) {
        let text = format!("{}{}\n{ptx}\n// end\n", header(entry), entry.source);
        write_whole(&self.dir, &self.path(entry), text.as_bytes());
    }
}

impl DiskCache {
    /// Where `entry`'s machine code lives (beside its PTX).
    fn cubin_path(&self, entry: &Entry) -> PathBuf {
        self.path(entry).with_extension("cubin")
    }

    /// The machine code stored for `entry`, if a whole, matching entry is
    /// there: the same header and source as a PTX entry, then the ELF image.
    pub fn get_cubin(&self, entry: &Entry) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.cubin_path(entry)).ok()?;
        let rest = bytes.strip_prefix(header(entry).as_bytes())?;
        let rest = rest.strip_prefix(entry.source.as_bytes())?;
        let image = rest.strip_prefix(b"\n")?.strip_suffix(b"\n// end\n")?;
        image.starts_with(b"\x7fELF").then(|| image.to_vec())
    }

    /// Stores `cubin` for `entry`, as [`Self::put`] stores PTX.
    pub fn put_cubin(&self, entry: &Entry, cubin: &[u8]) {
        let mut bytes = format!("{}{}\n", header(entry), entry.source).into_bytes();
        bytes.extend_from_slice(cubin);
        bytes.extend_from_slice(b"\n// end\n");
        write_whole(&self.dir, &self.cubin_path(entry), &bytes);
    }
}

/// Writes `bytes` to `path` (in `dir`, created if need be) through a
/// temporary file of this write's own, renamed into place: a reader sees the
/// old file or the new one whole, and writers of one entry in other threads
/// or processes never write into each other's file. Failures are ignored:
/// the caches only save time.
pub(crate) fn write_whole(dir: &Path, path: &Path, bytes: &[u8]) {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}-{}", std::process::id(), WRITES.fetch_add(1, Ordering::Relaxed)));
    let tmp = PathBuf::from(tmp);
    let written = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&tmp, bytes)).and_then(|_| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

fn header(entry: &Entry) -> String {
    format!("// {MAGIC}\n// nvrtc {}\n// target {}\n// source, {} bytes, then the PTX:\n", entry.nvrtc, entry.target, entry.source.len())
}

fn platform_dir() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(windows) {
        env("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        env("HOME").map(|h| h.join("Library/Caches"))
    } else {
        env("XDG_CACHE_HOME").or_else(|| env("HOME").map(|h| h.join(".cache")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gemm-tiles-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    const PTX: &str = ".version 9.0\n.visible .entry k()\n{\n\tret;\n}";

    #[test]
    fn an_entry_reads_back_only_for_its_own_source_target_and_nvrtc() {
        let cache = DiskCache::at(temp_dir("match"));
        let e = Entry { source: "extern \"C\" __global__ void k() {}", target: "sm_90", nvrtc: "13.0" };
        assert_eq!(cache.get(&e), None);
        cache.put(&e, PTX);
        assert_eq!(cache.get(&e).as_deref(), Some(PTX));
        for other in [Entry { target: "sm_80", ..e }, Entry { nvrtc: "12.9", ..e }, Entry { source: "// other", ..e }] {
            assert_eq!(cache.get(&other), None);
        }
        let _ = std::fs::remove_dir_all(cache.dir());
    }

    /// Machine code reads back whole for its own entry only; a cut or
    /// foreign file is a miss.
    #[test]
    fn machine_code_reads_back_for_its_entry_and_damage_is_a_miss() {
        let cache = DiskCache::at(temp_dir("cubin"));
        let e = Entry { source: "extern \"C\" __global__ void k() {}", target: "sm_90a", nvrtc: "13.0" };
        let image = b"\x7fELF\x02\x01\x01\x00 some machine code \x00\xff";
        assert_eq!(cache.get_cubin(&e), None);
        cache.put_cubin(&e, image);
        assert_eq!(cache.get_cubin(&e).as_deref(), Some(&image[..]));
        assert_eq!(cache.get_cubin(&Entry { target: "sm_90", ..e }), None);
        let path = cache.cubin_path(&e);
        let whole = std::fs::read(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() - 3]).unwrap();
        assert_eq!(cache.get_cubin(&e), None, "cut short");
        cache.put_cubin(&e, b"not an ELF image");
        assert_eq!(cache.get_cubin(&e), None, "not machine code");
        let _ = std::fs::remove_dir_all(cache.dir());
    }

    /// Threads storing one entry at once (as parallel compilations of one
    /// source may) leave it whole, and no temporary file behind.
    #[test]
    fn writers_of_one_entry_at_once_leave_it_whole() {
        let cache = DiskCache::at(temp_dir("race"));
        let e = Entry { source: "extern \"C\" __global__ void k() {}", target: "sm_90", nvrtc: "13.0" };
        let image = vec![0x7f, b'E', b'L', b'F', 7, 7, 7, 7];
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..50 {
                        cache.put(&e, PTX);
                        cache.put_cubin(&e, &image);
                    }
                });
            }
        });
        assert_eq!(cache.get(&e).as_deref(), Some(PTX));
        assert_eq!(cache.get_cubin(&e), Some(image));
        let files = std::fs::read_dir(cache.dir()).unwrap().count();
        assert_eq!(files, 2, "the entry's PTX and machine code, no temporary file");
        let _ = std::fs::remove_dir_all(cache.dir());
    }

    #[test]
    fn a_damaged_entry_is_a_miss_and_is_rewritten() {
        let cache = DiskCache::at(temp_dir("damaged"));
        let e = Entry { source: "extern \"C\" __global__ void k() {}", target: "sm_90", nvrtc: "13.0" };
        cache.put(&e, PTX);
        let path = cache.path(&e);
        let whole = std::fs::read_to_string(&path).unwrap();
        // cut short, garbage, another source under this entry's name
        for bad in [&whole[..whole.len() / 2], "\u{0}\u{1}garbage", &whole.replace("void k()", "void j()")] {
            std::fs::write(&path, bad).unwrap();
            assert_eq!(cache.get(&e), None, "{bad:?}");
        }
        std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap(); // not UTF-8
        assert_eq!(cache.get(&e), None);
        cache.put(&e, PTX);
        assert_eq!(cache.get(&e).as_deref(), Some(PTX));
        let _ = std::fs::remove_dir_all(cache.dir());
    }
}
