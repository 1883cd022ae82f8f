//! Variants of a spec, written as settings on the command line
//! (`gemm-lab variants`): `pad=8`, `sweep=m`, `raster=grouped(8)`, ...

use gemm_runtime::gemm_core::tune::{expand, Setting};
use gemm_runtime::spec::*;

/// `kernel` with `source`, a hand edit of its CUDA that defines the kernel
/// of the same name and parameters, in place of its generated source,
/// launched with `smem_bytes` of dynamic shared memory and `threads` a
/// block (the spec's where `None`). Tools build a handful of these: leaking the strings is simpler
/// than teaching `Kernel` to own an edited source.
pub fn hand_edited(
    kernel: &gemm_runtime::Kernel,
    source: String,
    smem_bytes: Option<u32>,
    threads: Option<u32>,
) -> Result<gemm_runtime::Kernel, String> {
    if !source.contains(&*kernel.name) {
        return Err(format!("the source has no kernel named {}", kernel.name));
    }
    let source: &'static str = Box::leak(source.into_boxed_str());
    let name: &'static str = Box::leak(kernel.name.to_string().into_boxed_str());
    Ok(gemm_runtime::Kernel::from_parts(
        kernel.spec.clone(),
        source,
        name,
        threads.unwrap_or(kernel.threads),
        smem_bytes.unwrap_or(kernel.smem_bytes),
    ))
}

/// Applies a variant, settings joined by commas, to `spec`.
pub fn apply_all(spec: &mut KernelSpec, variant: &str) -> Result<(), String> {
    variant.split(',').try_for_each(|setting| apply(spec, setting))
}

/// `MxN` as two numbers.
fn pair(value: &str) -> Option<(u32, u32)> {
    let (m, n) = value.split_once('x')?;
    Some((m.parse().ok()?, n.parse().ok()?))
}

/// Changes one setting of `spec`, as `key=value`.
pub fn apply(spec: &mut KernelSpec, setting: &str) -> Result<(), String> {
    let (key, value) = setting.split_once('=').ok_or_else(|| format!("`{setting}`: expected key=value"))?;
    let bad = || format!("`{setting}`: unknown value for `{key}`");
    match key {
        "pad" if value == "none" => spec.swizzle = Swizzle::None,
        "pad" => spec.swizzle = Swizzle::Pad(value.parse().map_err(|_| bad())?),
        "sweep" => {
            let t = spec.thread.as_mut().ok_or_else(|| format!("`{setting}`: this step has no thread tier"))?;
            t.sweep = match value {
                "m" => Dim::M,
                "n" => Dim::N,
                _ => return Err(bad()),
            };
        }
        "raster" if value == "row" => spec.raster = Raster::Row,
        "raster" if value == "hilbert" => spec.raster = Raster::Hilbert,
        "cluster" if value == "none" => spec.cluster = None,
        "cluster" => {
            // MxN, then the operand it multicasts, if any: 2x1b, 1x2a, 2x2
            let (shape, multicast) = match value.strip_suffix('a').or_else(|| value.strip_suffix('b')) {
                Some(shape) => (shape, Some(if value.ends_with('a') { Which::A } else { Which::B })),
                None => (value, None),
            };
            let (m, n) = shape.split_once('x').ok_or_else(bad)?;
            spec.cluster = Some(Cluster { m: m.parse().map_err(|_| bad())?, n: n.parse().map_err(|_| bad())?, multicast, k: 1 });
        }
        "raster" => {
            let g = value.strip_prefix("grouped(").and_then(|v| v.strip_suffix(')')).ok_or_else(bad)?;
            spec.raster = Raster::Grouped(g.parse().map_err(|_| bad())?);
        }
        "stages" => match &mut spec.staging {
            Staging::CpAsync { stages, .. } | Staging::Tma { stages, .. } => *stages = value.parse().map_err(|_| bad())?,
            _ => return Err(format!("`{setting}`: this step's staging is not a cp.async or TMA pipeline")),
        },
        // TMA's stages filled by the producer warpgroup's cp.async copies of this many elements (none: by TMA),
        // of A's or B's stages alone where an operand follows (4b: B's, TMA loading A's)
        "cp_async" => match &mut spec.staging {
            Staging::Tma { cp_async, .. } if value == "none" => *cp_async = None,
            Staging::Tma { cp_async, .. } => {
                let (v, only) = match value.strip_suffix('a').or_else(|| value.strip_suffix('b')) {
                    Some(v) => (v, Some(if value.ends_with('a') { Which::A } else { Which::B })),
                    None => (value, None),
                };
                *cp_async = Some(RingCopies { vector: v.parse().map_err(|_| bad())?, only });
            }
            _ => return Err(format!("`{setting}`: this step's staging is not TMA's")),
        },
        // A, B and C read and written where they lie by class of lines (the launcher's variant for
        // lines 8 bytes aligned, on hopper_autotuned's tiling alone)
        "by_class" => match &mut spec.staging {
            Staging::Tma { by_class, .. } => *by_class = value.parse().map_err(|_| bad())?,
            _ => return Err(format!("`{setting}`: this step's staging is not TMA's")),
        },
        // the K tile (under a TMA swizzle, a whole number of swizzle rows)
        "k" => spec.block.k = Some(value.parse().map_err(|_| bad())?),
        // the block's and the warp's tiles (MxN) and the block's threads, as they are: the spec
        // is checked once every setting is in, so that a tiling can change in several at once
        "tile" => (spec.block.m, spec.block.n) = pair(value).ok_or_else(bad)?,
        "warp_tile" => {
            let (m, n) = pair(value).ok_or_else(bad)?;
            let w = spec.warp.as_mut().ok_or_else(|| format!("`{setting}`: this step has no warp tier"))?;
            (w.m, w.n) = (m, n);
        }
        "threads" => spec.block.threads = value.parse().map_err(|_| bad())?,
        "fragments" => match &mut spec.staging {
            Staging::CpAsync { fragments, .. } => *fragments = value.parse().map_err(|_| bad())?,
            _ => return Err(format!("`{setting}`: this step's staging is not a cp.async pipeline")),
        },
        "edges" => {
            spec.edges = match value {
                "whole" => Edges::Whole,
                "guarded" => Edges::Guarded,
                _ => return Err(bad()),
            }
        }
        "epilogue" => {
            spec.epilogue = match value {
                "direct" => Epilogue::Direct,
                "vector" => Epilogue::Vector,
                "smem" => Epilogue::Smem,
                "smem_elements" => Epilogue::SmemElements,
                "tma" => Epilogue::Tma,
                _ => return Err(bad()),
            }
        }
        "regs" => {
            // setmaxnreg's producer/consumer registers: 40/232
            let sp = spec.specialize.as_mut().ok_or_else(|| format!("`{setting}`: this step has no producer and consumers"))?;
            let (p, c) = value.split_once('/').ok_or_else(bad)?;
            (sp.producer_regs, sp.consumer_regs) = (Some(p.parse().map_err(|_| bad())?), Some(c.parse().map_err(|_| bad())?));
        }
        // the ladder's "before" forms: every thread's arrivals on the ring's barriers, zeroed accumulators
        "arrivals" => {
            let sp = spec.specialize.as_mut().ok_or_else(|| format!("`{setting}`: this step has no producer and consumers"))?;
            sp.arrivals = match value {
                "thread" => Arrivals::Thread,
                "warpgroup" => Arrivals::Warpgroup,
                _ => return Err(bad()),
            };
        }
        // each consumer's two wgmma atoms along n, each one's epilogue beside the other's wgmmas:
        // the warpgroup's columns in two atoms (true), or in one (false)
        "overlap" => {
            let on: bool = value.parse().map_err(|_| bad())?;
            let sp = spec.specialize.as_mut().ok_or_else(|| format!("`{setting}`: this step has no producer and consumers"))?;
            sp.overlap = on;
            let warp_n = spec.warp.map(|w| w.n).ok_or_else(|| format!("`{setting}`: this step has no warpgroup tier"))?;
            match &mut spec.atom {
                Atom::Wgmma { n, .. } => *n = if on { warp_n / 2 } else { warp_n },
                _ => return Err(format!("`{setting}`: this step's atom is not wgmma")),
            }
        }
        "zeroed" => match &mut spec.atom {
            Atom::Wgmma { zeroed, .. } => *zeroed = value.parse().map_err(|_| bad())?,
            _ => return Err(format!("`{setting}`: this step's atom is not wgmma")),
        },
        "schedule" => {
            spec.persistent = match value {
                "tiles" => None,
                "persistent" => Some(Persistent::Tiles),
                "queue" => Some(Persistent::Queue),
                "stream_k" => Some(Persistent::StreamK),
                "hybrid" => Some(Persistent::Hybrid),
                "tail_split" => Some(Persistent::TailSplit),
                _ => return Err(bad()),
            }
        }
        // (a space's whole block tiles are packed numbers: here the tiles go by their sides)
        "block" => return Err(format!("`{setting}`: give the block tile as tile=MxN, and its warp tile as warp_tile=MxN")),
        // a setting a tuning space lists (block.n, warp.m, consumers, ...): what
        // follows from it follows, as in a space's point (gemm_core::tune)
        _ if Setting::from_name(key).is_some() => {
            let value = value.parse().map_err(|_| bad())?;
            let point = expand(spec, &[(Setting::from_name(key).unwrap(), vec![value])]).remove(0);
            if let Some(refused) = point.refused.first() {
                return Err(format!("`{setting}`: {}", refused.msg));
            }
            *spec = point.spec;
        }
        _ => {
            return Err(format!(
                "`{setting}`: unknown setting `{key}`; expected pad, sweep, raster, cluster, stages, cp_async, by_class, k, fragments, epilogue, \
                 edges, regs, arrivals, zeroed, schedule or a setting of tune(..) (block.n, warp.m, consumers, ...)"
            ))
        }
    }
    Ok(())
}

/// Settings [`random_variant`] draws from: the keys [`apply`] takes, with
/// values on and off each step's own.
#[rustfmt::skip]
pub const DRAWN: &[&str] = &[
    "pad=none", "pad=4", "pad=8",
    "raster=row", "raster=hilbert", "raster=grouped(4)", "raster=grouped(8)",
    "cluster=none", "cluster=2x1", "cluster=1x2", "cluster=2x1a", "cluster=2x1b", "cluster=1x2a", "cluster=1x2b", "cluster=2x2",
    "stages=2", "stages=3", "stages=4", "stages=5", "stages=6",
    "cp_async=none", "cp_async=8", "cp_async=4", "cp_async=2", "cp_async=4a", "cp_async=8b",
    "k=16", "k=32", "k=64", "k=128",
    "fragments=1", "fragments=2",
    "edges=whole", "edges=guarded",
    "epilogue=direct", "epilogue=vector", "epilogue=smem", "epilogue=smem_elements", "epilogue=tma",
    "schedule=tiles", "schedule=persistent", "schedule=queue", "schedule=stream_k", "schedule=hybrid", "schedule=tail_split",
    "zeroed=true", "zeroed=false",
    "arrivals=thread", "arrivals=warpgroup",
    "sweep=m", "sweep=n",
    "overlap=true", "overlap=false",
    "regs=40/232", "regs=24/240",
    "block.m=64", "block.m=128", "block.m=256",
    "block.n=16", "block.n=32", "block.n=64", "block.n=128", "block.n=256",
    "block.k=32", "block.k=64",
    "warp.m=32", "warp.m=64",
    "warp.n=32", "warp.n=64", "warp.n=128",
    "thread.m=4", "thread.m=8",
    "thread.n=4", "thread.n=8",
    "vector=2", "vector=4", "vector=8",
    "consumers=1", "consumers=2",
    "grouped=8",
    "prefetch=2",
    "block.threads=128", "block.threads=256",
    "block.min_blocks=2",
    "warp.m_iters=2",
    "warp.n_iters=2",
];

/// A spec a user might write: one of the steps ([`crate::steps::all`]), with one to four settings
/// of [`DRAWN`] (those it takes), now and then one operand in the other
/// layout and, on the tensor cores, other element types; drawn until the
/// rules accept one and the generator writes it (`None` after 200
/// draws). With what was changed, for messages.
pub fn random_variant(rng: &mut impl rand::Rng) -> Option<(String, gemm_runtime::Kernel)> {
    // (not the fp8 ladder's: their scales and 8-bit operands have tests of their own)
    let steps: Vec<_> = crate::steps::all().filter(|s| !s.kernel.spec.a.elem.is_fp8()).collect();
    for _ in 0..200 {
        let step = steps[rng.random_range(0..steps.len())];
        let mut spec = step.kernel.spec.clone();
        let mut applied = Vec::new();
        for _ in 0..rng.random_range(1..=4) {
            let setting = DRAWN[rng.random_range(0..DRAWN.len())];
            // a setting the step cannot take (no thread tier, no TMA stages) is left out
            if apply(&mut spec, setting).is_ok() {
                applied.push(setting.to_string());
            }
        }
        if rng.random_bool(0.3) {
            let which = rng.random_range(0..3);
            let op = [&mut spec.a, &mut spec.b, &mut spec.c].into_iter().nth(which).unwrap();
            op.layout = if op.layout == Layout::RowMajor { Layout::ColMajor } else { Layout::RowMajor };
            applied.push(format!("{} {:?}", ["A", "B", "C"][which], op.layout));
        }
        if rng.random_bool(0.2) && spec.a.elem != Elem::F32 {
            // 16-bit operands of the other type, or C in another
            if rng.random_bool(0.5) {
                let other = if spec.a.elem == Elem::Bf16 { Elem::F16 } else { Elem::Bf16 };
                (spec.a.elem, spec.b.elem) = (other, other);
                applied.push(format!("A and B {other:?}"));
            } else {
                spec.c.elem = [Elem::F32, Elem::F16, Elem::Bf16][rng.random_range(0..3)];
                applied.push(format!("C {:?}", spec.c.elem));
            }
        }
        if !gemm_runtime::gemm_core::check(&spec).is_empty() {
            continue;
        }
        // (a legal spec the generator does not write yet is an error of its own: drawn again)
        if let Ok(kernel) = gemm_runtime::Kernel::from_spec(spec) {
            return Some((format!("{} with {}", step.name, applied.join(", ")), kernel));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::step;

    #[test]
    fn each_setting_changes_what_it_names() {
        let mut s = step("autotuned").unwrap().kernel.spec.clone();
        let mut h = crate::steps::tma_store::KERNEL.spec.clone();
        apply_all(&mut h, "raster=hilbert,cluster=2x1b").unwrap();
        assert_eq!((h.raster, h.cluster), (Raster::Hilbert, Some(Cluster { m: 2, n: 1, multicast: Some(Which::B), k: 1 })));
        apply_all(&mut h, "cluster=1x2,schedule=tiles").unwrap();
        assert_eq!((h.cluster, h.persistent), (Some(Cluster { m: 1, n: 2, multicast: None, k: 1 }), None));
        apply_all(&mut h, "cluster=none,schedule=persistent").unwrap();
        assert_eq!((h.cluster, h.persistent), (None, Some(Persistent::Tiles)));
        apply_all(&mut h, "cp_async=4").unwrap();
        assert!(matches!(h.staging, Staging::Tma { cp_async: Some(RingCopies { vector: 4, only: None }), .. }));
        apply_all(&mut h, "cp_async=2b").unwrap();
        assert!(matches!(h.staging, Staging::Tma { cp_async: Some(RingCopies { vector: 2, only: Some(Which::B) }), .. }));
        apply_all(&mut h, "cp_async=none").unwrap();
        assert!(matches!(h.staging, Staging::Tma { cp_async: None, .. }));
        apply_all(&mut h, "regs=40/232").unwrap();
        let sp = h.specialize.unwrap();
        assert_eq!((sp.producer_regs, sp.consumer_regs), (Some(40), Some(232)));
        apply_all(&mut h, "arrivals=thread,zeroed=true").unwrap();
        assert_eq!(h.specialize.unwrap().arrivals, Arrivals::Thread);
        assert!(matches!(h.atom, Atom::Wgmma { zeroed: true, .. }));
        apply_all(&mut s, "pad=4,sweep=m,raster=grouped(8),stages=5,schedule=tiles").unwrap();
        assert_eq!(s.swizzle, Swizzle::Pad(4));
        assert_eq!(s.thread.unwrap().sweep, Dim::M);
        assert_eq!(s.raster, Raster::Grouped(8));
        assert!(matches!(s.staging, Staging::CpAsync { stages: 5, fragments: 1, .. }));
        apply(&mut s, "fragments=2").unwrap();
        assert!(matches!(s.staging, Staging::CpAsync { fragments: 2, .. }));
        assert_eq!(s.persistent, None);
        apply(&mut s, "pad=none").unwrap();
        assert_eq!(s.swizzle, Swizzle::None);
        apply(&mut s, "epilogue=direct").unwrap();
        assert_eq!(s.epilogue, Epilogue::Direct);
        apply(&mut s, "epilogue=smem").unwrap();
        assert_eq!(s.epilogue, Epilogue::Smem);
        let mut t = step("mma_autotuned").unwrap().kernel.spec.clone();
        apply_all(&mut t, "tile=192x192,warp_tile=48x64,threads=384").unwrap();
        assert_eq!((t.block.m, t.block.n, t.block.threads, t.warp.unwrap().m, t.warp.unwrap().n), (192, 192, 384, 48, 64));
        assert!(gemm_runtime::gemm_core::check(&t).is_empty(), "{:?}", gemm_runtime::gemm_core::check(&t));
        assert!(apply(&mut t, "tile=192").unwrap_err().contains("unknown value"));
        // a tuning space's setting, with what follows from it
        apply(&mut h, "block.n=128").unwrap();
        assert_eq!((h.block.n, h.atom), (128, Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: true, promote: false })); // zeroed, as set above
        assert!(apply(&mut h, "block.n=100").unwrap_err().contains("block.n=100"));
    }

    #[test]
    fn a_setting_the_step_cannot_take_is_an_error_that_says_why() {
        let mut s = step("warptiling").unwrap().kernel.spec.clone();
        assert!(apply(&mut s, "stages=3").unwrap_err().contains("not a cp.async or TMA pipeline"));
        assert!(apply(&mut s, "fragments=2").unwrap_err().contains("not a cp.async pipeline"));
        assert!(apply(&mut s, "sweep=k").unwrap_err().contains("unknown value"));
        assert!(apply(&mut s, "raster=grouped(x)").unwrap_err().contains("unknown value"));
        assert!(apply(&mut s, "tiles").unwrap_err().contains("key=value"));
        assert!(apply(&mut s, "swizzle=xor").unwrap_err().contains("expected pad, sweep"));
        let mut naive = step("naive").unwrap().kernel.spec.clone();
        naive.thread = None;
        assert!(apply(&mut naive, "sweep=m").unwrap_err().contains("no thread tier"));
        assert!(apply(&mut s, "regs=40/232").unwrap_err().contains("no producer and consumers"));
        let mut h = crate::steps::tma_store::KERNEL.spec.clone();
        assert!(apply(&mut h, "regs=40").unwrap_err().contains("unknown value"));
        assert!(apply(&mut h, "block=4194336").unwrap_err().contains("tile=MxN"));
    }
}
