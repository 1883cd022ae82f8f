//! Tuning spaces: a kernel written once with lists for some of its settings
//! (`tune(block.m = [64, 128], stages = [3, 4])` in `#[gemm_kernel]`, or
//! block tiles whole, `tune(block = [block(m = 128, n = 256), block(m =
//! 256, n = 128)])`, each with its warp tile where it names one:
//! `block(m = 64, n = 32, warp(m = 64, n = 32))`), expanded into the product of those lists over the
//! written spec. Every
//! point goes through the same rules as a spec written by hand; the legal
//! ones are what the launcher times, the others are counted by the rule
//! that refused them.
//!
//! Where a point changes the tiling, what follows from it follows: unless
//! `block.threads` is itself in the space, each point's threads (and a
//! specialized kernel's consumers) are the ones its block and warp tiles
//! need (where `block` sets the block tile without naming its warp tile, the
//! warp tiles keep their count along each side); a SIMT warp's iterations follow its warp and thread tiles (the
//! squarest split); a warp tile as wide (or tall) as the block tile stays so unless
//! its own side is listed, a wgmma atom as wide as the warpgroup tile
//! stays as wide, and consumers that had all the registers the producer
//! left keep having all of them. A point that splits K over a cluster
//! (`cluster.k`) takes one tile a cluster, so it leaves the persistent walk
//! unless `schedule` is listed, and its producer keeps at least
//! [`SPLIT_PRODUCER_REGS`]. A cluster shaped along m or n (`cluster.m`,
//! `cluster.n`) multicasts the operand its shape shares.

use std::collections::BTreeMap;

use crate::check::Diag;
use crate::spec::*;

/// A setting a tuning space may list values for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    /// The block tile's m and n together ([`block_value`]), with its warp
    /// (warpgroup) tile where the value names one ([`block_warp_value`]);
    /// else the warp tiles keep their count along each side.
    Block,
    BlockM,
    BlockN,
    BlockK,
    Threads,
    MinBlocks,
    WarpM,
    WarpN,
    MItersWarp,
    NItersWarp,
    ThreadM,
    ThreadN,
    Stages,
    /// `tma(prefetch = ..)`'s K steps.
    Prefetch,
    Vector,
    Fragments,
    Consumers,
    ConsumerRegs,
    Grouped,
    /// The schedule, by its index in [`SCHEDULES`].
    Schedule,
    /// `cluster(k = ..)`: the blocks that split each tile's K steps (1: a
    /// tile's whole K in one block).
    ClusterK,
    /// `cluster(m = ..)` and `cluster(n = ..)`: the blocks of a cluster
    /// along each side, their tiles sharing one operand by multicast.
    ClusterM,
    ClusterN,
}

/// The schedules `tune(schedule = [..])` takes, by name: a block per C
/// tile, a persistent grid walking tiles, stream-K and its hybrids, the
/// persistent walk on a queue (last: a point's index stays what it was).
pub const SCHEDULES: [(&str, Option<Persistent>); 6] = [
    ("tiles", None),
    ("persistent", Some(Persistent::Tiles)),
    ("stream_k", Some(Persistent::StreamK)),
    ("hybrid", Some(Persistent::Hybrid)),
    ("tail_split", Some(Persistent::TailSplit)),
    ("queue", Some(Persistent::Queue)),
];

/// Every setting by the name `tune(..)` takes, in the order the help lists them.
pub const SETTINGS: &[(&str, Setting)] = &[
    ("block", Setting::Block),
    ("block.m", Setting::BlockM),
    ("block.n", Setting::BlockN),
    ("block.k", Setting::BlockK),
    ("block.threads", Setting::Threads),
    ("block.min_blocks", Setting::MinBlocks),
    ("warp.m", Setting::WarpM),
    ("warp.n", Setting::WarpN),
    ("warp.m_iters", Setting::MItersWarp),
    ("warp.n_iters", Setting::NItersWarp),
    ("thread.m", Setting::ThreadM),
    ("thread.n", Setting::ThreadN),
    ("stages", Setting::Stages),
    ("prefetch", Setting::Prefetch),
    ("vector", Setting::Vector),
    ("fragments", Setting::Fragments),
    ("consumers", Setting::Consumers),
    ("consumer_regs", Setting::ConsumerRegs),
    ("grouped", Setting::Grouped),
    ("schedule", Setting::Schedule),
    ("cluster.k", Setting::ClusterK),
    ("cluster.m", Setting::ClusterM),
    ("cluster.n", Setting::ClusterN),
];

impl Setting {
    pub fn name(self) -> &'static str {
        SETTINGS.iter().find(|(_, s)| *s == self).map_or("?", |(n, _)| n)
    }

    /// A value of this setting as `tune(..)` writes it.
    pub fn value_text(self, v: Value) -> String {
        match self {
            Setting::Block => match (block_of(v), warp_of(v)) {
                ((m, n), None) => format!("block(m = {m}, n = {n})"),
                ((m, n), Some((wm, wn))) => format!("block(m = {m}, n = {n}, warp(m = {wm}, n = {wn}))"),
            },
            Setting::Schedule => SCHEDULES.get(v as usize).map_or(v.to_string(), |(name, _)| name.to_string()),
            _ => v.to_string(),
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        SETTINGS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
    }
}

/// A value a setting takes in a space: a whole number, a schedule's index
/// in [`SCHEDULES`], or a block tile packed by [`block_value`] or
/// [`block_warp_value`].
pub type Value = u64;

/// A value of [`Setting::Block`]: the block tile's m (bits 48-63) and n
/// (32-47), its warp tiles keeping their count along each side.
pub const fn block_value(m: u32, n: u32) -> Value {
    ((m as u64 & 0xffff) << 48) | ((n as u64 & 0xffff) << 32)
}

/// A value of [`Setting::Block`] naming the warp (warpgroup) tile too: its
/// m (bits 16-31) and n (0-15), neither zero.
pub const fn block_warp_value(m: u32, n: u32, warp_m: u32, warp_n: u32) -> Value {
    block_value(m, n) | ((warp_m as u64 & 0xffff) << 16) | (warp_n as u64 & 0xffff)
}

/// The block tile's (m, n) of a [`Setting::Block`] value.
pub const fn block_of(v: Value) -> (u32, u32) {
    ((v >> 48) as u32 & 0xffff, (v >> 32) as u32 & 0xffff)
}

/// The warp tile's (m, n) a [`Setting::Block`] value names, if it names one.
pub const fn warp_of(v: Value) -> Option<(u32, u32)> {
    match ((v >> 16) as u32 & 0xffff, v as u32 & 0xffff) {
        (0, _) | (_, 0) => None,
        w => Some(w),
    }
}

/// The settings that `block` sets with the block tile: a space lists
/// either it or them.
pub const BLOCK_SETS: [Setting; 4] = [Setting::BlockM, Setting::BlockN, Setting::WarpM, Setting::WarpN];

/// How the launcher groups shapes: one tuning per group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TuneKey {
    /// Each (m, n, k) on its own.
    Exact,
    /// Each of m, n, k rounded up to a power of two: 4000 and 4096 share.
    Pow2,
    /// Each of m, n, k rounded up to the next eighth of an octave (past 16:
    /// 2048, 2304, .., 3840, 4096, 4608, ..): 4000 and 4096 share, 3072
    /// and 4096 do not. A persistent schedule's best choice follows how
    /// many tiles its last wave holds, which a power of two lumps together:
    /// on the H100 `hopper_tuned` ran 3072 x 3072 x 12288 at 76% of cuBLAS
    /// with the choice tuned at 4096 x 4096 x 11008, where its own is 92%.
    #[default]
    Eighths,
}

impl TuneKey {
    /// The group of a shape (and its batch count, which changes the grid).
    pub fn of(self, m: usize, n: usize, k: usize, batch: usize) -> [usize; 4] {
        match self {
            TuneKey::Exact => [m, n, k, batch],
            TuneKey::Pow2 => [m, n, k, batch].map(usize::next_power_of_two),
            TuneKey::Eighths => [eighth(m), eighth(n), eighth(k), batch.next_power_of_two()],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TuneKey::Exact => "exact",
            TuneKey::Pow2 => "pow2",
            TuneKey::Eighths => "eighths",
        }
    }
}

/// `x` rounded up to the next of eight steps between powers of two (to a
/// power of two up to 16).
fn eighth(x: usize) -> usize {
    let p = x.next_power_of_two();
    if p <= 16 {
        return p;
    }
    let step = p / 16;
    x.div_ceil(step) * step
}

/// Why a list for `setting` would change nothing in `base`, if it would
/// not (every point the same kernel, timed again and again): `tune(..)`
/// refuses such a list.
pub fn inert(setting: Setting, base: &KernelSpec) -> Option<String> {
    let staging = base.staging.name();
    let needs = |what: &str| Some(format!("`{}` sets {what}, which this kernel does not have (staging = {staging})", setting.name()));
    match (setting, base.staging) {
        (Setting::Stages, Staging::CpAsync { .. } | Staging::Tma { .. }) => None,
        (Setting::Stages, _) => needs("the depth of cp_async(..) or tma(..) staging"),
        (Setting::Prefetch, Staging::Tma { .. }) => None,
        (Setting::Prefetch, _) => needs("tma(prefetch = ..)"),
        (Setting::Vector, Staging::CpAsync { .. } | Staging::Smem { .. }) => None,
        (Setting::Vector, _) => needs("the vector of smem(..) or cp_async(..) staging"),
        (Setting::Fragments, Staging::CpAsync { .. }) => None,
        (Setting::Fragments, _) => needs("cp_async(fragments = ..)"),
        (Setting::Consumers | Setting::ConsumerRegs, _) if base.specialize.is_none() => {
            Some(format!("`{}` sets specialize(..), which this kernel does not have", setting.name()))
        }
        (Setting::ThreadM | Setting::ThreadN, _) if base.thread.is_none() => {
            Some(format!("`{}` sets the thread tier, which this kernel does not have", setting.name()))
        }
        (Setting::WarpM | Setting::WarpN | Setting::MItersWarp | Setting::NItersWarp, _) if base.warp.is_none() => {
            Some(format!("`{}` sets the warp tier, which this kernel does not have", setting.name()))
        }
        _ => None,
    }
}

/// The registers a point that splits K over a cluster leaves its producer
/// where the spec leaves it fewer (`setmaxnreg`): at 24, ptxas spilled up
/// to 100 bytes in its K loop (the part's bounds beside an edge tile's
/// out-of-line loads), at 40 4 bytes, at 48 none (`fp8_block_scaled` on
/// 64 x 64 tiles split in two, NVRTC 13.0). The consumers' registers then
/// follow as the module says.
pub const SPLIT_PRODUCER_REGS: u32 = 48;

/// The most points a `tune(..)` space may span: every one is checked as
/// the crate builds, and every legal one compiled with NVRTC and timed on
/// a shape's first launch (the largest spaces here hold a few hundred).
pub const MAX_POINTS: usize = 4096;

/// A point of a space: its spec, the values it takes from the lists, and
/// why the rules refused it (empty: legal).
pub struct Point {
    pub spec: KernelSpec,
    pub chosen: Vec<(Setting, Value)>,
    pub refused: Vec<Diag>,
}

/// Every point of `lists` (settings with their values) over `base`, in
/// order: the first setting's first value first, the last setting varying
/// fastest. The base's own values are not added: list them to keep them.
pub fn expand(base: &KernelSpec, lists: &[(Setting, Vec<Value>)]) -> Vec<Point> {
    let mut points = Vec::new();
    let total: usize = lists.iter().map(|(_, v)| v.len()).product();
    for mut i in 0..total {
        let mut chosen = Vec::with_capacity(lists.len());
        for (setting, values) in lists.iter().rev() {
            chosen.push((*setting, values[i % values.len()]));
            i /= values.len();
        }
        chosen.reverse();
        let spec = point(base, &chosen);
        let refused = crate::diagnose(&spec);
        points.push(Point { spec, chosen, refused });
    }
    points
}

/// What a cluster of its shape multicasts: as written where the spec has
/// a cluster (no multicast stays none) and the shape has two blocks along
/// the side that shares it (B along m, A along n); else, and where the spec
/// has no cluster, B where the shape spans m, else A where it spans n.
fn shared(c: Cluster, written: Option<Option<Which>>) -> Option<Which> {
    match written {
        Some(None) => return None,
        Some(Some(Which::B)) if c.m > 1 => return Some(Which::B),
        Some(Some(Which::A)) if c.n > 1 => return Some(Which::A),
        _ => {}
    }
    match (c.k, c.m, c.n) {
        (k, _, _) if k > 1 => None,
        (_, m, _) if m > 1 => Some(Which::B),
        (_, _, n) if n > 1 => Some(Which::A),
        _ => None,
    }
}

/// `base` with `chosen` applied, and what follows from them.
fn point(base: &KernelSpec, chosen: &[(Setting, Value)]) -> KernelSpec {
    let mut s = base.clone();
    let mut warp = s.warp.unwrap_or(Warp { m: 0, n: 0, m_iters: 1, n_iters: 1 });
    let mut thread = s.thread;
    let mut threads_given = false;
    for &(setting, value) in chosen {
        // every setting but `block` takes a whole number the attribute parsed as u32
        let v = value as u32;
        match setting {
            Setting::Block => {
                let (m, n) = block_of(value);
                match (warp_of(value), base.warp.filter(|w| w.m > 0 && w.n > 0)) {
                    (Some((wm, wn)), _) => (warp.m, warp.n) = (wm, wn),
                    // the warp (warpgroup) tiles keep their count along each side
                    (None, Some(w0)) => {
                        warp.m = m * w0.m / base.block.m.max(1);
                        warp.n = n * w0.n / base.block.n.max(1);
                    }
                    (None, None) => {}
                }
                (s.block.m, s.block.n) = (m, n);
            }
            Setting::BlockM => s.block.m = v,
            Setting::BlockN => s.block.n = v,
            Setting::BlockK => s.block.k = Some(v),
            Setting::Threads => {
                s.block.threads = v;
                threads_given = true;
            }
            Setting::MinBlocks => s.block.min_blocks = Some(v),
            Setting::WarpM => warp.m = v,
            Setting::WarpN => warp.n = v,
            Setting::MItersWarp => warp.m_iters = v,
            Setting::NItersWarp => warp.n_iters = v,
            Setting::ThreadM => thread = thread.map(|t| ThreadTile { m: v, ..t }),
            Setting::ThreadN => thread = thread.map(|t| ThreadTile { n: v, ..t }),
            Setting::Stages => match &mut s.staging {
                Staging::CpAsync { stages, .. } | Staging::Tma { stages, .. } => *stages = v,
                _ => {}
            },
            Setting::Prefetch => {
                if let Staging::Tma { prefetch, .. } = &mut s.staging {
                    *prefetch = v;
                }
            }
            Setting::Vector => match &mut s.staging {
                Staging::CpAsync { vector, .. } | Staging::Smem { vector, .. } => *vector = v,
                _ => {}
            },
            Setting::Fragments => {
                if let Staging::CpAsync { fragments, .. } = &mut s.staging {
                    *fragments = v;
                }
            }
            Setting::Consumers => {
                if let Some(sp) = &mut s.specialize {
                    sp.consumers = v;
                }
            }
            Setting::ConsumerRegs => {
                if let Some(sp) = &mut s.specialize {
                    sp.consumer_regs = Some(v);
                }
            }
            Setting::Grouped => s.raster = Raster::Grouped(v),
            Setting::Schedule => {
                if let Some((_, p)) = SCHEDULES.get(v as usize) {
                    s.persistent = *p;
                }
            }
            Setting::ClusterM | Setting::ClusterN => {
                let c = s.cluster.unwrap_or(Cluster { m: 1, n: 1, k: 1, multicast: None });
                s.cluster = Some(if setting == Setting::ClusterM { Cluster { m: v, ..c } } else { Cluster { n: v, ..c } });
            }
            Setting::ClusterK => {
                s.cluster = match s.cluster {
                    Some(c) => Some(Cluster { k: v, ..c }),
                    None if v == 1 => None,
                    None => Some(Cluster { m: 1, n: 1, k: v, multicast: None }),
                };
                // a split along K takes one tile a cluster: its points leave the persistent walk,
                // unless the schedule is listed too
                if v > 1 && !chosen.iter().any(|c| c.0 == Setting::Schedule) {
                    s.persistent = None;
                }
                // and its producer, which streams one part of the tile's K steps, keeps the
                // registers it needs for that ([`SPLIT_PRODUCER_REGS`])
                if let Some(sp) = s.specialize.as_mut().filter(|sp| v > 1 && sp.producer_regs.is_some_and(|r| r < SPLIT_PRODUCER_REGS)) {
                    sp.producer_regs = Some(SPLIT_PRODUCER_REGS);
                }
            }
        }
    }
    // a cluster shaped along m or n shares what its shape lets it share
    // ([`shared`]); one block is no cluster
    if chosen.iter().any(|c| matches!(c.0, Setting::ClusterM | Setting::ClusterN)) {
        let written = base.cluster.map(|c| c.multicast);
        s.cluster = s.cluster.map(|c| Cluster { multicast: shared(c, written), ..c }).filter(|c| (c.m, c.n, c.k) != (1, 1, 1));
    }
    // a SIMT warp's iterations follow its tiles, where the base's followed its own
    if let (Some(w0), Some(t0), Some(t)) = (base.warp, base.thread, thread) {
        let listed = chosen.iter().any(|c| matches!(c.0, Setting::MItersWarp | Setting::NItersWarp));
        if !listed && base.atom == Atom::Fma && (w0.m_iters, w0.n_iters) == simt_iterations(w0.m, w0.n, t0.m, t0.n) {
            (warp.m_iters, warp.n_iters) = simt_iterations(warp.m, warp.n, t.m, t.n);
        }
    }
    let named = chosen.iter().any(|&(setting, v)| setting == Setting::Block && warp_of(v).is_some());
    if let Some(w0) = base.warp.filter(|_| !named) {
        // a warp tile as wide (or tall) as the block stays so, unless listed
        if w0.n == base.block.n && !chosen.iter().any(|c| c.0 == Setting::WarpN) {
            warp.n = s.block.n;
        }
        if w0.m == base.block.m && !chosen.iter().any(|c| c.0 == Setting::WarpM) {
            warp.m = s.block.m;
        }
    }
    // a block tile that names its warp tile gives the kernel a warp tier (the rules judge it)
    if s.warp.is_some() || named {
        // a wgmma atom as wide as the warpgroup tile stays as wide
        if let (Atom::Wgmma { m, n, k, zeroed, promote }, Some(w0)) = (s.atom, base.warp) {
            if n == w0.n {
                s.atom = Atom::Wgmma { m, n: warp.n, k, zeroed, promote };
            }
        }
        s.warp = Some(warp);
    }
    s.thread = thread;
    if !threads_given {
        let consumers_given = chosen.iter().any(|c| c.0 == Setting::Consumers);
        derive_threads(&mut s, base, consumers_given);
    }
    s
}

/// The threads (and consumers) the tiling needs, where the base's own
/// were the ones its tiling needed: a base that chose otherwise keeps its
/// choice, and the rules judge it. Listed consumers (`consumers_given`)
/// stay as listed, the threads following them: a count the tiles do not
/// make is the rules' to refuse, not to be replaced by the tiles' own
/// (which made points of two listed counts the same kernel).
fn derive_threads(s: &mut KernelSpec, base: &KernelSpec, consumers_given: bool) {
    let need = |spec: &KernelSpec| -> Option<(u32, Option<u32>)> {
        let b = spec.block;
        match (spec.atom, spec.warp, spec.thread) {
            (_, Some(w), _) if w.m == 0 || w.n == 0 || !b.m.is_multiple_of(w.m) || !b.n.is_multiple_of(w.n) => None,
            (Atom::Wgmma { .. }, Some(w), _) => {
                // (saturating: settings far out of range stay so, for the rules to refuse)
                let groups = (b.m / w.m).saturating_mul(b.n / w.n);
                let warpgroups = |n: u32| Some(128u32.saturating_mul(n));
                match spec.specialize {
                    // ping-pong consumers take whole tiles: their count is the spec's own, as a listed one is
                    Some(sp) if sp.pingpong || consumers_given => {
                        warpgroups(sp.consumers.saturating_add(sp.producers)).map(|t| (t, Some(sp.consumers)))
                    }
                    Some(sp) => warpgroups(groups.saturating_add(sp.producers)).map(|t| (t, Some(groups))),
                    None => warpgroups(groups).map(|t| (t, None)),
                }
            }
            (Atom::Fma, Some(w), Some(t)) if t.m.saturating_mul(t.n).saturating_mul(w.m_iters).saturating_mul(w.n_iters) > 0 => {
                // each warp: 32 lanes of thread tiles over its iterations
                let per_warp = w.m.saturating_mul(w.n) / t.m.saturating_mul(t.n).saturating_mul(w.m_iters).saturating_mul(w.n_iters);
                (per_warp == 32).then_some(((b.m / w.m).saturating_mul(b.n / w.n).saturating_mul(32), None))
            }
            (Atom::Fma, None, Some(t)) if t.m.saturating_mul(t.n) > 0 => Some((b.m.saturating_mul(b.n) / t.m.saturating_mul(t.n), None)),
            (Atom::Mma { .. } | Atom::Wmma { .. }, Some(w), _) => Some(((b.m / w.m).saturating_mul(b.n / w.n).saturating_mul(32), None)),
            _ => None,
        }
    };
    let followed = need(base).is_some_and(|(t, c)| t == base.block.threads && c == base.specialize.map(|sp| sp.consumers));
    if let (true, Some((threads, consumers))) = (followed, need(s)) {
        s.block.threads = threads;
        if let (Some(sp), Some(c)) = (&mut s.specialize, consumers) {
            sp.consumers = c;
            // consumers that had every register the producer left keep having them
            if let Some(b) = base.specialize {
                if b.consumer_regs.is_some() && b.consumer_regs == all_registers(b) {
                    sp.consumer_regs = all_registers(*sp);
                }
            }
        }
    }
}

/// The registers each consumer gets when the producer keeps its own and
/// the consumers share the rest of what the block holds (at most 240, a
/// multiple of 8, as `setmaxnreg` takes them). The block holds what its
/// threads were launched with, the register cap of one block per SM
/// ([`crate::spec::KernelSpec::register_cap`]), not the SM's whole 64K.
fn all_registers(sp: Specialize) -> Option<u32> {
    let producer = sp.producer_regs? * sp.producers;
    let warpgroups = (sp.producers + sp.consumers).max(1);
    let cap = (65536 / (128 * warpgroups) / 8 * 8).min(255);
    Some(((warpgroups * cap).saturating_sub(producer) / sp.consumers.max(1)).min(240) / 8 * 8)
}

/// The iterations (m x n) in which a SIMT warp of 32 lanes covers a
/// `wm x wn` warp tile with `tm x tn` thread tiles: of the splits of
/// `wm * wn / (32 * tm * tn)` whose steps each divide the lanes' room along
/// their side, the one whose per-step sub-tile is squarest; (0, 0) where
/// there is none, which the rules then refuse.
pub fn simt_iterations(wm: u32, wn: u32, tm: u32, tn: u32) -> (u32, u32) {
    let iters = (wm * wn) / (32 * tm * tn).max(1);
    let (room_m, room_n) = (wm / tm.max(1), wn / tn.max(1));
    (1..=iters)
        .filter(|mi| iters.is_multiple_of(*mi))
        .map(|mi| (mi, iters / mi))
        .filter(|&(mi, ni)| room_m.is_multiple_of(mi) && room_n.is_multiple_of(ni) && (room_m / mi) * (room_n / ni) == 32)
        .min_by_key(|&(mi, ni)| ((room_m / mi) as i64 - (room_n / ni) as i64).abs())
        .unwrap_or((0, 0))
}

/// How many points each rule refused, by the argument it points at (the
/// first refusal of each point).
pub fn pruned(points: &[Point]) -> BTreeMap<(&'static str, &'static str), usize> {
    let mut out = BTreeMap::new();
    for p in points {
        if let Some(d) = p.refused.first() {
            *out.entry((d.rule, d.at)).or_insert(0) += 1;
        }
    }
    out
}

/// The values of each list that no legal point takes (`stages = [2, 4, 6]`
/// where 4 and 6 never fit): a tuner that silently never tries them would
/// hide it.
pub fn vanished(points: &[Point], lists: &[(Setting, Vec<Value>)]) -> Vec<(Setting, Vec<Value>)> {
    lists
        .iter()
        .filter_map(|(setting, values)| {
            let gone: Vec<Value> =
                values.iter().copied().filter(|v| !points.iter().any(|p| p.refused.is_empty() && p.chosen.contains(&(*setting, *v)))).collect();
            (!gone.is_empty()).then_some((*setting, gone))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mma_base() -> KernelSpec {
        let bf16 = |layout| Operand { elem: Elem::Bf16, layout };
        KernelSpec {
            name: "t".into(),
            a: bf16(Layout::RowMajor),
            b: bf16(Layout::RowMajor),
            c: bf16(Layout::RowMajor),
            block: Block { m: 128, n: 128, k: Some(32), threads: 256, min_blocks: None },
            warp: Some(Warp { m: 64, n: 32, m_iters: 1, n_iters: 1 }),
            thread: None,
            atom: Atom::Mma { m: 16, n: 8, k: 16 },
            staging: Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 1 },
            specialize: None,
            swizzle: Swizzle::Xor,
            raster: Raster::Grouped(8),
            persistent: None,
            cluster: None,
            epilogue: Epilogue::Direct,
            fused: Fused::default(),
            edges: Edges::Whole,
            groups: None,
            arch: Arch::Sm80,
        }
    }

    /// A list for a setting the kernel lacks (a TMA prefetch on cp.async
    /// stages, consumers without specialization, a thread tier on a
    /// tensor-core warp) is inert; one it has is not.
    #[test]
    fn a_setting_the_kernel_lacks_is_inert() {
        let base = mma_base();
        for s in [Setting::Prefetch, Setting::Consumers, Setting::ConsumerRegs, Setting::ThreadM] {
            assert!(inert(s, &base).is_some_and(|why| why.contains(s.name())), "{s:?}");
        }
        for s in [Setting::Stages, Setting::Vector, Setting::Fragments, Setting::BlockM, Setting::Schedule] {
            assert_eq!(inert(s, &base), None, "{s:?}");
        }
        assert_eq!(inert(Setting::WarpN, &base), None);
        let no_warp = KernelSpec { warp: None, ..base.clone() };
        assert!(inert(Setting::WarpN, &no_warp).is_some_and(|why| why.contains("warp tier")));
        let tma = KernelSpec { staging: Staging::tma(3), ..base };
        assert_eq!(inert(Setting::Prefetch, &tma), None);
        assert!(inert(Setting::Vector, &tma).is_some() && inert(Setting::Fragments, &tma).is_some());
    }

    /// The product in order (last setting fastest), each point's threads
    /// following its tiles, and refusals counted by rule.
    #[test]
    fn a_space_expands_to_its_product_with_threads_following_the_tiles() {
        let lists = vec![(Setting::BlockM, vec![64, 128, 512]), (Setting::Stages, vec![3, 4])];
        let points = expand(&mma_base(), &lists);
        let got: Vec<(u32, u32)> = points.iter().map(|p| (p.spec.block.m, p.spec.block.threads)).collect();
        assert_eq!(got, [(64, 128), (64, 128), (128, 256), (128, 256), (512, 1024), (512, 1024)]);
        assert!(matches!(points[1].spec.staging, Staging::CpAsync { stages: 4, .. }));
        assert!(points[..4].iter().all(|p| p.refused.is_empty()), "{:?}", points[0].refused);
        // 512 rows: 1024 threads and too much shared memory
        assert!(!points[4].refused.is_empty());
        assert_eq!(pruned(&points).values().sum::<usize>(), 2);
    }

    /// A specialized wgmma kernel for sm_90a: 128 x 256 tiles of two
    /// consumers of 64 x 256, three TMA stages, 24 / 240 registers.
    fn wgmma_base() -> KernelSpec {
        let mut base = mma_base();
        (base.c.elem, base.b.layout, base.swizzle, base.arch) = (Elem::Bf16, Layout::ColMajor, Swizzle::B128, Arch::Sm90a);
        base.block = Block { m: 128, n: 256, k: Some(64), threads: 384, min_blocks: None };
        base.warp = Some(Warp { m: 64, n: 256, m_iters: 1, n_iters: 1 });
        base.atom = Atom::Wgmma { m: 64, n: 256, k: 16, zeroed: false, promote: false };
        base.staging = Staging::tma(3);
        base.specialize = Some(Specialize {
            producers: 1,
            consumers: 2,
            producer_regs: Some(24),
            consumer_regs: Some(240),
            pingpong: false,
            arrivals: Arrivals::Warpgroup,
            overlap: false,
        });
        base
    }

    /// A specialized wgmma kernel: the consumers, threads and the atom's
    /// width follow the warpgroup tile.
    #[test]
    fn a_specialized_point_takes_the_consumers_and_atom_its_tiles_need() {
        let base = wgmma_base();
        let points = expand(&base, &[(Setting::BlockN, vec![128]), (Setting::WarpN, vec![128]), (Setting::WarpM, vec![64, 128])]);
        let p = &points[0].spec;
        assert_eq!(
            (p.block.threads, p.specialize.unwrap().consumers, p.atom),
            (384, 2, Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false })
        );
        assert!(points[0].refused.is_empty(), "{:?}", points[0].refused);
        let q = &points[1].spec;
        assert_eq!((q.block.threads, q.specialize.unwrap().consumers), (256, 1));
        // listed consumers stay as listed (threads follow them), and the rules refuse a count the
        // tiles do not make: two consumers of 64 x 256 are the 128 x 256 tile, one is not
        let points = expand(&base, &[(Setting::Consumers, vec![1, 2])]);
        let got: Vec<(u32, u32, bool)> =
            points.iter().map(|p| (p.spec.specialize.unwrap().consumers, p.spec.block.threads, p.refused.is_empty())).collect();
        assert_eq!(got, [(1, 256, false), (2, 384, true)]);
        // schedules by their index in SCHEDULES: a block per tile, persistent, stream-K
        let points = expand(&base, &[(Setting::Schedule, vec![0, 1, 2])]);
        let got: Vec<Option<Persistent>> = points.iter().map(|p| p.spec.persistent).collect();
        assert_eq!(got, vec![None, Some(Persistent::Tiles), Some(Persistent::StreamK)]);
        assert!(points.iter().all(|p| p.refused.is_empty()), "every schedule runs this tiling");
        // the block tile's sides together: its two warpgroups stay two, stacked along m
        let points = expand(&base, &[(Setting::Block, vec![block_value(128, 256), block_value(256, 128), block_value(64, 256)])]);
        let tiles: Vec<(u32, u32, u32, u32, u32)> =
            points.iter().map(|p| (p.spec.block.m, p.spec.block.n, p.spec.warp.unwrap().m, p.spec.warp.unwrap().n, p.spec.block.threads)).collect();
        assert_eq!(tiles, [(128, 256, 64, 256, 384), (256, 128, 128, 128, 384), (64, 256, 32, 256, 384)]);
        assert_eq!(points[1].spec.atom, Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false });
        assert!(points[..2].iter().all(|p| p.refused.is_empty()), "{:?}", points[1].refused);
        // warpgroups of 32 rows: no wgmma atom is that short
        assert!(!points[2].refused.is_empty());
        assert_eq!(block_of(block_value(256, 128)), (256, 128));
        // a block tile naming its warpgroup tile takes it, threads and the atom's width following:
        // one consumer of 64 x 64, or two of 64 x 128 (where the count would have made them 32 rows)
        let values = vec![block_warp_value(64, 64, 64, 64), block_warp_value(128, 128, 64, 128), block_warp_value(64, 256, 32, 256)];
        let points = expand(&base, &[(Setting::Block, values.clone())]);
        let tiles: Vec<(u32, u32, u32, u32, u32, bool)> = points
            .iter()
            .map(|p| (p.spec.block.m, p.spec.block.n, p.spec.warp.unwrap().m, p.spec.warp.unwrap().n, p.spec.block.threads, p.refused.is_empty()))
            .collect();
        assert_eq!(tiles, [(64, 64, 64, 64, 256, true), (128, 128, 64, 128, 384, true), (64, 256, 32, 256, 384, false)]);
        assert_eq!(points[0].spec.atom, Atom::Wgmma { m: 64, n: 64, k: 16, zeroed: false, promote: false });
        assert_eq!(values.iter().map(|v| (block_of(*v), warp_of(*v))).collect::<Vec<_>>()[1], ((128, 128), Some((64, 128))));
        assert_eq!(warp_of(block_value(128, 128)), None);
    }

    /// `cluster.m` and `cluster.n` shape a cluster whose blocks share an
    /// operand: B among blocks stacked along m, A among blocks side by
    /// side, the spec's own multicast where it has a cluster and the shape
    /// allows it; one block along each side is no cluster.
    #[test]
    fn a_cluster_along_m_or_n_shares_what_its_shape_lets_it() {
        let mut base = wgmma_base();
        base.persistent = Some(Persistent::Tiles);
        let points = expand(&base, &[(Setting::ClusterM, vec![1, 2]), (Setting::ClusterN, vec![1, 2])]);
        let got: Vec<Option<(u32, u32, Option<Which>)>> = points.iter().map(|p| p.spec.cluster.map(|c| (c.m, c.n, c.multicast))).collect();
        assert_eq!(got, [None, Some((1, 2, Some(Which::A))), Some((2, 1, Some(Which::B))), Some((2, 2, Some(Which::B)))]);
        assert!(points[..3].iter().all(|p| p.refused.is_empty()), "{:?}", points.iter().map(|p| &p.refused).collect::<Vec<_>>());
        // the spec's cluster multicasts A: kept where two blocks lie along n
        base.cluster = Some(Cluster { m: 1, n: 2, k: 1, multicast: Some(Which::A) });
        let points = expand(&base, &[(Setting::ClusterM, vec![1, 2])]);
        let got: Vec<Option<Which>> = points.iter().map(|p| p.spec.cluster.and_then(|c| c.multicast)).collect();
        assert_eq!(got, [Some(Which::A), Some(Which::A)]);
        // a cluster written without multicast stays without
        base.cluster = Some(Cluster { m: 2, n: 1, k: 1, multicast: None });
        let points = expand(&base, &[(Setting::ClusterN, vec![1, 2])]);
        assert!(points.iter().all(|p| p.spec.cluster.is_some_and(|c| c.multicast.is_none())));
        assert_eq!(Setting::from_name("cluster.m"), Some(Setting::ClusterM));
    }

    /// `cluster.k`: 1 keeps a tile's K in one block; more splits it over a
    /// cluster of that many blocks, which takes one tile a cluster, so the
    /// point leaves the persistent walk unless the schedule is listed (and
    /// the rules then refuse the pair), and its producer keeps the
    /// registers a split needs.
    #[test]
    fn a_split_along_k_leaves_the_persistent_walk_unless_the_schedule_is_listed() {
        // 64 x 64 tiles of one consumer, four stages
        let mut base = wgmma_base();
        base.block = Block { m: 64, n: 64, k: Some(64), threads: 256, min_blocks: None };
        base.warp = Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 });
        base.atom = Atom::Wgmma { m: 64, n: 64, k: 16, zeroed: false, promote: false };
        base.staging = Staging::tma(4);
        base.specialize = base.specialize.map(|sp| Specialize { consumers: 1, ..sp });
        base.persistent = Some(Persistent::Tiles);
        let points = expand(&base, &[(Setting::ClusterK, vec![1, 2, 4])]);
        // the split's producer keeps SPLIT_PRODUCER_REGS, its consumer what it had
        let regs: Vec<(Option<u32>, Option<u32>)> =
            points.iter().map(|p| p.spec.specialize.map(|sp| (sp.producer_regs, sp.consumer_regs)).unwrap()).collect();
        assert_eq!(regs, [(Some(24), Some(240)), (Some(SPLIT_PRODUCER_REGS), Some(240)), (Some(SPLIT_PRODUCER_REGS), Some(240))]);
        let got: Vec<(Option<Cluster>, Option<Persistent>)> = points.iter().map(|p| (p.spec.cluster, p.spec.persistent)).collect();
        let split = |k| Some(Cluster { m: 1, n: 1, k, multicast: None });
        assert_eq!(got, [(None, Some(Persistent::Tiles)), (split(2), None), (split(4), None)]);
        assert!(points.iter().all(|p| p.refused.is_empty()), "{:?}", points.iter().map(|p| &p.refused).collect::<Vec<_>>());
        // the schedule listed: the split keeps it, and the rules refuse a persistent one
        let points = expand(&base, &[(Setting::Schedule, vec![0, 1]), (Setting::ClusterK, vec![2])]);
        let got: Vec<(Option<Persistent>, bool)> = points.iter().map(|p| (p.spec.persistent, p.refused.is_empty())).collect();
        assert_eq!(got, [(None, true), (Some(Persistent::Tiles), false)]);
        assert_eq!(Setting::from_name("cluster.k"), Some(Setting::ClusterK));
    }

    #[test]
    fn simt_iterations_cover_the_warp_with_32_lanes() {
        assert_eq!(simt_iterations(64, 64, 8, 4), (1, 4), "64x64 warp, 8x4 thread tiles: 8 x 16 lane positions");
        assert_eq!(simt_iterations(32, 32, 8, 4), (1, 1));
        assert_eq!(simt_iterations(96, 32, 8, 4), (3, 1), "12 x 8 lane positions in 3 steps down m");
        assert_eq!(simt_iterations(16, 16, 4, 4), (0, 0), "16 thread tiles: not enough for 32 lanes");
    }

    #[test]
    fn keys_group_shapes_by_power_of_two_eighths_or_exactly() {
        assert_eq!(TuneKey::Pow2.of(4000, 4096, 4097, 1), [4096, 4096, 8192, 1]);
        assert_eq!(TuneKey::Eighths.of(4000, 4096, 4097, 3), [4096, 4096, 4608, 4]);
        assert_eq!(TuneKey::Eighths.of(3072, 3072, 12288, 1), [3072, 3072, 12288, 1]);
        assert_eq!(TuneKey::Eighths.of(4096, 4096, 11008, 1), [4096, 4096, 11264, 1]);
        assert_eq!(TuneKey::Eighths.of(1, 15, 17, 1), [1, 16, 18, 1]);
        assert_eq!(TuneKey::default(), TuneKey::Eighths);
        assert_eq!(TuneKey::Exact.of(4000, 4096, 4097, 3), [4000, 4096, 4097, 3]);
        assert_eq!(Setting::from_name("warp.n"), Some(Setting::WarpN));
        assert_eq!(Setting::WarpN.name(), "warp.n");
        assert_eq!(Setting::from_name("warp.x"), None);
    }
}
