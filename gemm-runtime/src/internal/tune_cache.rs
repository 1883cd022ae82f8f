//! Tuning choices on disk, beside the compiled kernels (`disk_cache`), so a
//! second process tunes nothing.
//!
//! An entry is one choice: which point of a tuned kernel's space won for
//! one key (a group of shapes) on one device. It is keyed by the device,
//! the space (every point's kernel name, in order), the key and NVRTC's
//! version; the file name is a hash of those, and the file repeats them in
//! full, so a collision or a damaged file reads as a miss (the kernel is
//! tuned again and the entry rewritten), never as another kernel's choice.
//! Writes go to a file of their own and are renamed into place: two
//! processes tuning at once each leave a whole entry, the last one stays.

use std::path::{Path, PathBuf};

// format 2: choices timed on operands out of the L2 (format 1's, on operands it held, are made again)
const MAGIC: &str = "gemm-tiles tuning choice, format 2";

/// What a choice is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChoiceKey {
    /// The device's name and compute capability, e.g. "NVIDIA H100 80GB HBM3 sm_90".
    pub device: String,
    /// Every point's kernel name, in the space's order, joined by newlines.
    pub space: String,
    /// The shape group: m, n, k and the batch count as the space's key rounds them.
    pub shape: [usize; 4],
    /// NVRTC's version, "major.minor".
    pub nvrtc: String,
}

impl ChoiceKey {
    fn text(&self) -> String {
        let [m, n, k, b] = self.shape;
        format!("// {MAGIC}\n// device {}\n// nvrtc {}\n// shape {m} {n} {k} {b}\n// space\n{}\n// choice ", self.device, self.nvrtc, self.space)
    }
}

/// A folder of tuning choices.
#[derive(Clone, Debug)]
pub struct TuneCache {
    dir: PathBuf,
}

impl TuneCache {
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        TuneCache { dir: dir.into() }
    }

    /// The kernel cache's folder (`$GEMM_TILES_CACHE`, else the platform's);
    /// `None` where that cache is off.
    pub fn from_env() -> Option<Self> {
        crate::disk_cache::DiskCache::from_env().map(|c| Self::at(c.dir()))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, key: &ChoiceKey) -> PathBuf {
        // FNV-1a, as the kernel cache: stable across processes
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in key.text().bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.dir.join(format!("{h:016x}.tuned"))
    }

    /// The point chosen for `key`, with its kernel name, if a whole entry
    /// for exactly this key is there.
    pub fn get(&self, key: &ChoiceKey) -> Option<(usize, String)> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let rest = text.strip_prefix(&key.text())?;
        let line = rest.strip_suffix("\n// end\n")?;
        let (index, name) = line.split_once(' ')?;
        let index: usize = index.parse().ok()?;
        // the name must be the space's point at that index
        (key.space.lines().nth(index) == Some(name)).then(|| (index, name.to_string()))
    }

    /// Stores the choice of point `index` (kernel `name`) for `key`.
    /// Failures are ignored: the cache only saves time.
    pub fn put(&self, key: &ChoiceKey, index: usize, name: &str) {
        let text = format!("{}{index} {name}\n// end\n", key.text());
        crate::disk_cache::write_whole(&self.dir, &self.path(key), text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gemm-tiles-tune-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn key() -> ChoiceKey {
        ChoiceKey {
            device: "NVIDIA H100 80GB HBM3 sm_90".into(),
            space: "k__b64x128\nk__b128x128\nk__b128x256".into(),
            shape: [4096, 4096, 4096, 1],
            nvrtc: "13.0".into(),
        }
    }

    #[test]
    fn a_choice_reads_back_for_its_own_key_only() {
        let cache = TuneCache::at(temp_dir("match"));
        let k = key();
        assert_eq!(cache.get(&k), None, "a miss before anything is stored");
        cache.put(&k, 1, "k__b128x128");
        assert_eq!(cache.get(&k), Some((1, "k__b128x128".to_string())));
        let others = [
            ChoiceKey { device: "NVIDIA A100 sm_80".into(), ..key() },
            ChoiceKey { space: "k__b64x128\nk__b128x128".into(), ..key() },
            ChoiceKey { shape: [2048, 4096, 4096, 1], ..key() },
            ChoiceKey { nvrtc: "12.9".into(), ..key() },
        ];
        for other in &others {
            assert_eq!(cache.get(other), None, "{other:?}");
        }
        let _ = std::fs::remove_dir_all(cache.dir());
    }

    #[test]
    fn a_damaged_entry_is_a_miss_and_is_rewritten() {
        let cache = TuneCache::at(temp_dir("damaged"));
        let k = key();
        cache.put(&k, 2, "k__b128x256");
        let path = cache.path(&k);
        let whole = std::fs::read_to_string(&path).unwrap();
        // cut short, garbage, an index past the space, a name that is not the point's
        for bad in [
            whole[..whole.len() - 4].to_string(),
            "\u{0}garbage".to_string(),
            whole.replace("2 k__b128x256", "7 k__b128x256"),
            whole.replace("2 k__b128x256", "2 k__b64x128"),
        ] {
            std::fs::write(&path, &bad).unwrap();
            assert_eq!(cache.get(&k), None, "{bad:?}");
        }
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert_eq!(cache.get(&k), None);
        cache.put(&k, 2, "k__b128x256");
        assert_eq!(cache.get(&k), Some((2, "k__b128x256".to_string())));
        let _ = std::fs::remove_dir_all(cache.dir());
    }

    /// Many writers at once (threads here; processes write the same way,
    /// each to a file of its own, renamed into place): every read in
    /// between and after finds a whole entry or none, never a torn one.
    #[test]
    fn writers_at_once_leave_a_whole_entry() {
        let cache = TuneCache::at(temp_dir("race"));
        let k = key();
        let names = ["k__b64x128", "k__b128x128", "k__b128x256"];
        std::thread::scope(|s| {
            for t in 0..8 {
                let (cache, k) = (&cache, &k);
                s.spawn(move || {
                    for i in 0..50 {
                        let index = (t + i) % 3;
                        cache.put(k, index, names[index]);
                        if let Some((j, name)) = cache.get(k) {
                            assert_eq!(name, names[j]);
                        }
                    }
                });
            }
        });
        let (j, name) = cache.get(&k).expect("a whole entry");
        assert_eq!(name, names[j]);
        let leftovers = std::fs::read_dir(cache.dir()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary files left behind");
        let _ = std::fs::remove_dir_all(cache.dir());
    }
}
