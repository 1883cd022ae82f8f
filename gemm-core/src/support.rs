//! What the CUDA generator can emit today. A legal spec outside this set is a
//! compile error that says so, never a setting silently ignored.

use crate::check::Diag;
use crate::spec::*;

/// Every part of `spec` the generator cannot honour yet.
pub fn unsupported(spec: &KernelSpec) -> Vec<Diag> {
    let mut out = Vec::new();
    if !crate::check::in_bounds(spec) {
        // (the rules refuse its numbers first; what follows would work out overflowing sizes)
        return out;
    }
    // The first error says what is supported on the spec's path; the others name their setting only.
    let supported = supported_for(spec.atom);
    let mut no = |at: &'static str, what: String| {
        let msg = if out.is_empty() { format!("{what} is not generated yet; {supported}") } else { format!("{what} is not generated yet") };
        out.push(Diag::new(at, msg))
    };
    let simt = matches!(spec.atom, Atom::Fma);
    let wgmma = matches!(spec.atom, Atom::Wgmma { .. });
    let tma = matches!(spec.staging, Staging::Tma { .. });
    if wgmma && !tma {
        no("staging", format!("atom = wgmma with staging = {} (wgmma reads TMA tiles: staging = tma(..))", spec.staging.name()));
    }
    if tma && !wgmma {
        no("atom", format!("staging = tma with atom = {} (TMA tiles feed atom = wgmma(..))", spec.atom.name()));
    }
    let direct = spec.staging == Staging::Direct;
    if spec.warp.is_some() && direct && simt {
        no("warp", "the warp tier with staging = direct and atom = fma".into());
    }
    if simt && matches!(spec.staging, Staging::CpAsync { .. }) && !crate::cuda::cp_async_rounds_regular(spec) {
        no(
            "block.threads",
            format!("cp.async copies with {} threads, a count that neither divides nor is a multiple of a tile's row of copies", spec.block.threads),
        );
    }
    match spec.specialize {
        Some(_) if !tma => no("specialize", format!("warp specialization with staging = {} (it feeds TMA stages)", spec.staging.name())),
        Some(sp) if sp.producers != 1 => {
            no("specialize.producers", format!("{} producer warpgroups (one thread of one issues every copy)", sp.producers))
        }
        _ => {}
    }
    match spec.swizzle {
        // the rules ask TMA staging for a TMA swizzle, and a TMA swizzle for TMA staging
        _ if tma => {}
        Swizzle::Xor if simt => no("swizzle", "swizzle = xor with atom = fma".into()),
        _ => {}
    }
    match spec.persistent {
        None => {}
        Some(Persistent::StreamK) if !direct && simt => {}
        Some(Persistent::StreamK) if matches!(spec.staging, Staging::CpAsync { .. }) => {}
        Some(Persistent::StreamK) if tma && spec.specialize.is_none() => {
            no("persistent", "persistent = stream_k with staging = tma and no specialize(..) (stream-K feeds TMA stages from a producer)".into())
        }
        Some(Persistent::StreamK) if tma && spec.cluster.is_some() => no("persistent", "persistent = stream_k with a cluster".into()),
        Some(Persistent::StreamK) if tma => {}
        Some(Persistent::StreamK) if !simt => no(
            "persistent",
            format!(
                "persistent = stream_k with atom = {} and staging = {} (tensor-core atoms take it with cp_async)",
                spec.atom.name(),
                spec.staging.name()
            ),
        ),
        Some(Persistent::StreamK) => no("persistent", "persistent = stream_k with staging = direct".into()),
        // the hybrid's whole waves are the persistent walk's: a producer's ring
        Some(Persistent::Hybrid | Persistent::TailSplit) if tma && spec.specialize.is_some() && spec.cluster.is_none() => {}
        Some(p @ (Persistent::Hybrid | Persistent::TailSplit)) => {
            let name = if p == Persistent::Hybrid { "hybrid" } else { "tail_split" };
            no("persistent", format!("persistent = {name} without staging = tma and specialize(..), or with a cluster"))
        }
        Some(Persistent::Tiles) if tma && spec.specialize.is_some() => {}
        Some(Persistent::Tiles) => no("persistent", "persistent = tiles without staging = tma and specialize(..)".into()),
    }
    if spec.specialize.is_some_and(|sp| sp.pingpong) && spec.persistent != Some(Persistent::Tiles) {
        no("specialize.pingpong", "pingpong consumers without persistent = tiles".into());
    }
    if spec.cluster.is_some() && spec.specialize.is_none() {
        no("cluster", "a thread block cluster without specialize(..) (clusters are generated for specialized TMA kernels)".into());
    }
    match spec.epilogue {
        Epilogue::Direct => {}
        Epilogue::Vector if !(direct && simt) => {}
        Epilogue::Vector => no("epilogue", "epilogue = vector with staging = direct (its edges are guarded)".into()),
        Epilogue::Smem | Epilogue::SmemElements if matches!(spec.atom, Atom::Mma { .. } | Atom::Wgmma { .. }) => {}
        Epilogue::Smem => no("epilogue", format!("epilogue = smem with atom = {}", spec.atom.name())),
        Epilogue::SmemElements => no("epilogue", format!("epilogue = smem_elements with atom = {}", spec.atom.name())),
        // the rules ask epilogue = tma for TMA staging
        Epilogue::Tma => {}
        e => no("epilogue", format!("epilogue = {e:?}").to_lowercase()),
    }
    if spec.c.elem != Elem::F32 && simt {
        no("c", format!("C in {} with atom = fma", spec.c.elem.rust_name()));
    }
    out
}

/// What the generator supports on the path of `atom` (SIMT, sm_80's
/// tensor cores, or Hopper's), as the first "not generated yet" error of a
/// spec states it: the settings that would be valid there.
fn supported_for(atom: Atom) -> String {
    let path = match atom {
        Atom::Fma => SIMT,
        Atom::Mma { .. } | Atom::Wmma { .. } => SM80,
        Atom::Wgmma { .. } => SM90,
    };
    format!("the generator supports {path}; raster = row, grouped(n) or hilbert and a fused epilogue (alpha, beta, bias, activation) on every path")
}

/// The SIMT path.
const SIMT: &str = "f32 SIMT kernels (atom = fma; block, warp and thread tiers; \
staging = direct (no warp tier), smem(vector, transpose_a, buffers = 1 or 2) or cp_async(stages, vector, transpose_a); swizzle = none or pad(n); \
persistent = stream_k with staged tiles; epilogue = direct, or vector with staged tiles; C in f32; edges = guarded with staged tiles)";

/// sm_80's tensor cores.
const SM80: &str = "sm_80 tensor-core kernels \
(atom = mma(m16n8k16) or wmma; f16 or bf16 operands; block and warp tiers; staging = smem(vector, buffers = 1 or 2) or cp_async(stages, vector, fragments = 1, or 2 for mma), \
or direct for wmma; swizzle = none, pad(n) or xor (mma); persistent = stream_k with cp_async; epilogue = direct, or vector, smem or smem_elements for mma; \
C in f32, f16 or bf16 (f32 for wmma); edges = guarded with staged tiles)";

/// Hopper's.
const SM90: &str =
    "sm_90a kernels (atom = wgmma(m64nNk16) with staging = tma(stages, prefetch where a block owns its tile) and swizzle = b32, b64 or b128; \
every warpgroup alike or specialize(producers = 1, consumers, producer_regs, consumer_regs, pingpong), the latter also persistent = tiles \
(pingpong with it), stream_k, hybrid or tail_split and cluster(m, n, multicast = a | b) (not with those three), or cluster(k) \
splitting each tile's K without them; epilogue = direct, vector, smem, smem_elements or tma (a TMA store); edges = guarded)";
