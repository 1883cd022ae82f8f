//! What the CUDA generator can emit today. A legal spec outside this set is a
//! compile error that says so, never a setting silently ignored.

use crate::check::Diag;
use crate::spec::*;

/// Where the guide lists what each path generates, for messages to point at.
pub const GUIDE_MATRIX: &str = "docs/src/kernel/generated.md";

/// An atom fed by the staging of another path: wgmma reads TMA stages, and
/// TMA stages feed wgmma alone. One root cause, said once, at the setting
/// whose change fixes it.
pub fn path_mismatch(spec: &KernelSpec) -> Option<Diag> {
    let wgmma = matches!(spec.atom, Atom::Wgmma { .. });
    let tma = matches!(spec.staging, Staging::Tma { .. });
    // a warpgroup a warp tile: the thread count that follows (without producers)
    let groups = spec.warp.filter(|w| w.m > 0 && w.n > 0).map(|w| (spec.block.m / w.m) * (spec.block.n / w.n));
    let threads = spec.block.threads;
    if wgmma && !tma {
        let stages = match spec.staging {
            Staging::CpAsync { stages, .. } => stages.max(2),
            _ => 4,
        };
        // what else TMA stages ask of the threads: a producer warpgroup where there is room for one
        let with = match groups {
            Some(g) if spec.specialize.is_none() && threads == (g + 1) * 128 => format!(" with specialize(consumers = {g})"),
            Some(g) if spec.specialize.is_none() && threads != g * 128 && g > 0 => format!(" with threads = {}", g * 128),
            _ => String::new(),
        };
        return Some(
            Diag::new(
                "staging",
                format!(
                    "atom = wgmma reads its tiles from TMA stages, not staging = {}; use staging = tma(stages = {stages}){with}",
                    spec.staging.name()
                ),
            )
            .by("the atom's path"),
        );
    }
    if tma && !wgmma {
        let n = spec.warp.map_or(128, |w| w.n.clamp(8, 256) / 8 * 8);
        let with = match groups {
            Some(g) if g > 0 && g * 128 != threads => format!(" with threads = {}", g * 128),
            _ => String::new(),
        };
        return Some(
            Diag::new(
                "atom",
                format!(
                    "staging = tma feeds atom = wgmma(..) alone, not atom = {}; use atom = wgmma(m64n{n}k16){with}, or staging = cp_async(..) for {}",
                    spec.atom.name(),
                    spec.atom.name()
                ),
            )
            .by("the atom's path"),
        );
    }
    None
}

/// Every part of `spec` the generator cannot honour yet: each error names
/// the missing combination and the nearest one generated, in one line.
pub fn unsupported(spec: &KernelSpec) -> Vec<Diag> {
    let mut out = Vec::new();
    if !crate::check::in_bounds(spec) || path_mismatch(spec).is_some() {
        // (the rules refuse its numbers first; what follows would work out overflowing sizes)
        return out;
    }
    let path = path_name(spec.atom);
    let mut no = |at: &'static str, what: String, instead: &str| {
        out.push(
            Diag::new(at, format!("{what} is not generated yet on the {path} path; {instead} (every path's settings: {GUIDE_MATRIX})"))
                .by("not generated yet"),
        )
    };
    let simt = matches!(spec.atom, Atom::Fma);
    let tma = matches!(spec.staging, Staging::Tma { .. });
    let direct = spec.staging == Staging::Direct;
    if spec.warp.is_some() && direct && simt {
        no("warp", "the warp tier with staging = direct".into(), "stage the tiles with smem(..), or remove `warp(..)`");
    }
    if simt && matches!(spec.staging, Staging::CpAsync { .. }) && !crate::cuda::cp_async_rounds_regular(spec) {
        no(
            "block.threads",
            format!("cp.async copies by {} threads, which neither divide nor are a multiple of a tile's row of copies", spec.block.threads),
            "use a power of two threads, or staging = smem(..)",
        );
    }
    match spec.specialize {
        Some(_) if !tma => no(
            "specialize",
            format!("specialize(..) with staging = {}", spec.staging.name()),
            "specialized producers issue TMA: use staging = tma(..)",
        ),
        Some(sp) if sp.producers != 1 => {
            no("specialize.producers", format!("producers = {}", sp.producers), "one thread issues every copy: use producers = 1")
        }
        _ => {}
    }
    match spec.swizzle {
        // the rules ask TMA staging for a TMA swizzle, and a TMA swizzle for TMA staging
        _ if tma => {}
        Swizzle::Xor if simt => no("swizzle", "swizzle = xor with atom = fma".into(), "use swizzle = pad(4)"),
        _ => {}
    }
    match spec.persistent {
        None => {}
        Some(Persistent::StreamK) if !direct && simt => {}
        Some(Persistent::StreamK) if matches!(spec.staging, Staging::CpAsync { .. }) => {}
        Some(Persistent::StreamK) if tma && spec.specialize.is_none() => no(
            "persistent",
            "persistent = stream_k without specialize(..)".into(),
            "stream-K feeds TMA stages from a producer: add specialize(consumers = ..)",
        ),
        Some(Persistent::StreamK) if tma && spec.cluster.is_some() => {
            no("persistent", "persistent = stream_k in a cluster".into(), "remove `cluster(..)`, or use persistent = tiles")
        }
        Some(Persistent::StreamK) if tma => {}
        Some(Persistent::StreamK) if !simt => {
            no("persistent", format!("persistent = stream_k with staging = {}", spec.staging.name()), "use staging = cp_async(..)")
        }
        Some(Persistent::StreamK) => no("persistent", "persistent = stream_k with staging = direct".into(), "use staging = smem(..) or cp_async(..)"),
        // the hybrid's whole waves are the persistent walk's: a producer's ring
        Some(Persistent::Hybrid | Persistent::TailSplit) if tma && spec.specialize.is_some() && spec.cluster.is_none() => {}
        // a cp.async pipeline of mma.sync tiles: stream-K's producer, walked in the tail split's order
        Some(Persistent::TailSplit) if !simt && matches!(spec.staging, Staging::CpAsync { .. }) => {}
        Some(Persistent::TailSplit) if !tma && !simt => no(
            "persistent",
            format!("persistent = tail_split with staging = {}", spec.staging.name()),
            "its producer streams copies across tiles: use staging = cp_async(..)",
        ),
        Some(Persistent::TailSplit) if simt => no("persistent", "persistent = tail_split with atom = fma".into(), "use persistent = stream_k"),
        Some(p @ (Persistent::Hybrid | Persistent::TailSplit)) => {
            let name = if p == Persistent::Hybrid { "hybrid" } else { "tail_split" };
            let instead = if spec.cluster.is_some() && tma {
                "remove `cluster(..)`, or use persistent = tiles"
            } else {
                "it shares a producer's TMA ring: use staging = tma(..) with specialize(..)"
            };
            let with = if spec.cluster.is_some() && tma { "in a cluster" } else { "without staging = tma and specialize(..)" };
            no("persistent", format!("persistent = {name} {with}"), instead)
        }
        Some(Persistent::Tiles) if tma && spec.specialize.is_some() => {}
        Some(Persistent::Queue) if tma && spec.specialize.is_some() && spec.cluster.is_none() && spec.groups.is_none() => {}
        Some(Persistent::Queue) if tma && spec.specialize.is_some() => {
            let with =
                if spec.cluster.is_some() { "in a cluster".to_string() } else { format!("with groups = {}", spec.groups.map_or("", |g| g.name())) };
            let instead = if spec.cluster.is_some() { "remove `cluster(..)`, or use persistent = tiles" } else { "use persistent = tiles" };
            no("persistent", format!("persistent = queue {with}"), instead)
        }
        Some(Persistent::Queue) => no(
            "persistent",
            "persistent = queue without staging = tma and specialize(..)".into(),
            if tma { "add specialize(consumers = ..)" } else { "use staging = tma(..) with specialize(..)" },
        ),
        Some(Persistent::Tiles) => no(
            "persistent",
            "persistent = tiles without staging = tma and specialize(..)".into(),
            if tma {
                "add specialize(consumers = ..)"
            } else if simt {
                "use persistent = stream_k"
            } else {
                "use persistent = stream_k with staging = cp_async(..)"
            },
        ),
    }
    if spec.specialize.is_some_and(|sp| sp.pingpong) && spec.persistent != Some(Persistent::Tiles) {
        let instead = if spec.persistent == Some(Persistent::Queue) { "use persistent = tiles" } else { "add `persistent`" };
        no("specialize.pingpong", "pingpong without persistent = tiles".into(), &format!("{instead}, or remove pingpong"));
    }
    match spec.cluster {
        // (its size, multicast and split along K are the Hopper path's rules: none of them here)
        Some(_) if !matches!(spec.atom, Atom::Wgmma { .. }) => {
            no("cluster", "a cluster".into(), "remove `cluster(..)` (clusters are generated with atom = wgmma, staging = tma(..) and specialize(..))")
        }
        Some(_) if spec.specialize.is_none() => {
            no("cluster", "a cluster without specialize(..)".into(), "add specialize(consumers = ..), or remove `cluster(..)`")
        }
        _ => {}
    }
    match spec.epilogue {
        Epilogue::Direct => {}
        Epilogue::Vector if !(direct && simt) => {}
        Epilogue::Vector => no("epilogue", "epilogue = vector with staging = direct".into(), "use epilogue = direct, or staging = smem(..)"),
        Epilogue::Smem | Epilogue::SmemElements if matches!(spec.atom, Atom::Mma { .. } | Atom::Wgmma { .. }) => {}
        Epilogue::Smem | Epilogue::SmemElements => {
            let name = if spec.epilogue == Epilogue::Smem { "smem" } else { "smem_elements" };
            let instead = if simt { "use epilogue = vector" } else { "use epilogue = direct, or atom = mma(m16n8k16)" };
            no("epilogue", format!("epilogue = {name} with atom = {}", spec.atom.name()), instead)
        }
        // the rules ask epilogue = tma for TMA staging
        Epilogue::Tma => {}
        e => no("epilogue", format!("epilogue = {e:?}").to_lowercase(), "use epilogue = direct"),
    }
    if spec.c.elem != Elem::F32 && simt {
        no("c", format!("C in {} with atom = fma", spec.c.elem.rust_name()), "use f32, or atom = mma(m16n8k16) for a 16-bit C");
    }
    out
}

/// The name of `atom`'s path, as the guide's matrix heads its columns.
pub fn path_name(atom: Atom) -> &'static str {
    match atom {
        Atom::Fma => "SIMT",
        Atom::Mma { .. } | Atom::Wmma { .. } => "sm_80 tensor-core",
        Atom::Wgmma { .. } => "sm_90a",
    }
}
