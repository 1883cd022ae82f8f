//! The tiling rules. Each returns every violation it finds, as a [`Diag`] that
//! names the offending argument and says what would be valid.

use crate::spec::*;

/// One violated rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    /// The argument at fault, as a dotted path of the attribute grammar
    /// (`block.m`, `staging.vector`, `atom`) or a signature parameter (`a`, `b`, `c`).
    /// The macro points the compile error at that argument.
    pub at: &'static str,
    /// The rule in a few words ("shared memory", "the thread count"), for
    /// summaries that count errors by rule, such as `tune(..)`'s pruning.
    pub rule: &'static str,
    pub msg: String,
    /// The value the message proposes, where it proposes one: applied to the
    /// spec, it clears this error and breaks no other rule ([`check`] made sure).
    pub fix: Option<Fix>,
    /// Values a rule would propose, before [`check`] tries them.
    proposals: Vec<Proposal>,
}

/// A setting and the value proposed for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fix {
    /// `block.threads`, `block.m`, `block.n`, `block.k`, `warp.m`, `warp.n`,
    /// `staging.vector`, `staging.stages`, `swizzle` (a pad) or `atom.n` (wgmma's).
    pub path: &'static str,
    pub value: u32,
}

/// A proposed fix and how to say it: `{}` stands for the value.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Proposal {
    fix: Fix,
    say: String,
}

impl Diag {
    pub(crate) fn new(at: &'static str, msg: impl Into<String>) -> Self {
        Diag { at, rule: "", msg: msg.into(), fix: None, proposals: Vec::new() }
    }

    /// A problem (`msg`) and a value that should fix it, said as `say` with
    /// `{}` for the value; [`check`] proposes it only if it works.
    fn proposing(at: &'static str, msg: impl Into<String>, path: &'static str, value: u32, say: impl Into<String>) -> Self {
        let proposal = Proposal { fix: Fix { path, value }, say: say.into() };
        Diag { proposals: vec![proposal], ..Diag::new(at, msg) }
    }

    /// The same error, said to break `rule`.
    pub(crate) fn by(self, rule: &'static str) -> Self {
        Diag { rule, ..self }
    }
}

/// `spec` with `fix` applied; `None` where the setting is not in the spec.
pub fn apply(spec: &KernelSpec, fix: Fix) -> Option<KernelSpec> {
    let mut s = spec.clone();
    let v = fix.value;
    match (fix.path, &mut s.staging) {
        ("block.threads", _) => s.block.threads = v,
        ("block.m", _) => s.block.m = v,
        ("block.n", _) => s.block.n = v,
        ("block.k", _) if s.block.k.is_some() => s.block.k = Some(v),
        ("warp.m", _) if s.warp.is_some() => s.warp.as_mut()?.m = v,
        ("warp.n", _) if s.warp.is_some() => s.warp.as_mut()?.n = v,
        ("staging.vector", Staging::Smem { vector, .. } | Staging::CpAsync { vector, .. }) => *vector = v,
        ("staging.stages", Staging::CpAsync { stages, .. } | Staging::Tma { stages, .. }) => *stages = v,
        ("swizzle", _) if matches!(s.swizzle, Swizzle::Pad(_)) => s.swizzle = Swizzle::Pad(v),
        ("atom.n", _) if matches!(s.atom, Atom::Wgmma { .. }) => {
            if let Atom::Wgmma { n, .. } = &mut s.atom {
                *n = v;
            }
        }
        _ => return None,
    }
    Some(s)
}

/// The values a search for a working fix tries for `path`.
fn candidates(path: &str) -> Vec<u32> {
    match path {
        "block.threads" => (1..=32).map(|w| w * 32).collect(),
        "block.m" | "block.n" | "block.k" | "warp.m" | "warp.n" | "atom.n" => (1..=32).map(|i| i * 8).collect(),
        "staging.vector" => vec![1, 2, 4, 8],
        "staging.stages" => (2..=8).collect(),
        "swizzle" => (1..=16).collect(),
        _ => Vec::new(),
    }
}

/// Registers per thread reserved for addresses, loop counters and operands; the
/// rest of the 255 may hold accumulators.
pub const REGISTER_RESERVE: u32 = 31;
pub const MAX_REGISTERS: u32 = 255;

/// Checks every rule that applies to `spec`; an empty result means legal.
/// Errors at one argument come as one message, and a value it proposes
/// clears it without breaking another rule: a proposal that would is
/// replaced by the nearest value that works, or by the conflict.
pub fn check(spec: &KernelSpec) -> Vec<Diag> {
    let raw = rules(spec);
    let sites: Vec<&'static str> = raw.iter().map(|d| d.at).collect();
    let mut merged: Vec<Diag> = Vec::new();
    for d in raw {
        match merged.iter_mut().find(|m| m.at == d.at) {
            // (on lines of their own: a terminal's first line stays one problem and its advice)
            Some(m) if m.msg != d.msg => {
                m.msg = format!("{}\nand {}", m.msg, d.msg);
                m.proposals.extend(d.proposals);
            }
            Some(_) => {}
            None => merged.push(d),
        }
    }
    for d in &mut merged {
        settle(spec, d, &sites);
    }
    // one error per root cause: an error that another's fix clears (loads
    // that do not split over a wrong thread count) goes with that fix, and
    // so does one that the type or arch another error asks for clears (f32
    // operands' vectors under a tensor-core atom, sm_80's shared memory
    // under wgmma)
    let after = |at: &'static str, s: KernelSpec| {
        let after: Vec<&'static str> = rules(&s).into_iter().map(|e| e.at).collect();
        sites.iter().copied().filter(move |site| *site != at && !after.contains(site))
    };
    let by_fix: Vec<&'static str> =
        merged.iter().filter_map(|d| d.fix.and_then(|f| Some((d.at, apply(spec, f)?)))).flat_map(|(at, s)| after(at, s)).collect();
    // (a root's own error stays: two roots never clear each other)
    let roots: Vec<(&'static str, KernelSpec)> =
        merged.iter().filter(|d| d.fix.is_none()).filter_map(|d| Some((d.at, rerooted(spec, d.at)?))).collect();
    let by_root: Vec<&'static str> =
        roots.iter().flat_map(|(at, s)| after(at, s.clone())).filter(|site| !roots.iter().any(|(r, _)| r == site)).collect();
    merged.retain(|d| (d.fix.is_some() || !by_fix.contains(&d.at)) && !by_root.contains(&d.at));
    merged
}

/// `spec` with the type or arch at `at` that the error there asks for,
/// where it asks for one: an operand (`a`, `b`) of the type its atom takes;
/// the arch its instructions need.
fn rerooted(spec: &KernelSpec, at: &str) -> Option<KernelSpec> {
    if at != "arch" {
        return retyped(spec, at);
    }
    let arch = if spec.min_arch() == Arch::Sm90a && spec.arch != Arch::Sm90a {
        Arch::Sm90a
    } else if matches!(spec.atom, Atom::Mma { .. }) && spec.a.elem.is_fp8() && spec.arch.capability() < (8, 9) {
        Arch::Sm89
    } else {
        return None;
    };
    Some(KernelSpec { arch, ..spec.clone() })
}

/// `spec` with operand `at` (`a` or `b`) of the element type its atom
/// takes, where it has another: f32 for `fma`; for a tensor-core atom the
/// other operand's type where the atom takes that, else bf16.
fn retyped(spec: &KernelSpec, at: &str) -> Option<KernelSpec> {
    let takes = |e: Elem| match spec.atom {
        Atom::Fma => e == Elem::F32,
        Atom::Wmma { .. } => matches!(e, Elem::F16 | Elem::Bf16),
        Atom::Mma { .. } | Atom::Wgmma { .. } => e != Elem::F32,
    };
    let (op, other) = match at {
        "a" => (spec.a, spec.b),
        "b" => (spec.b, spec.a),
        _ => return None,
    };
    if takes(op.elem) {
        return None;
    }
    let elem = match spec.atom {
        Atom::Fma => Elem::F32,
        _ if takes(other.elem) => other.elem,
        _ => Elem::Bf16,
    };
    let mut s = spec.clone();
    let target = if at == "a" { &mut s.a } else { &mut s.b };
    target.elem = elem;
    Some(s)
}

/// Picks the first proposal of `d` that works, else the working value
/// nearest the first one, else says what breaks; writes it into the message.
fn settle(spec: &KernelSpec, d: &mut Diag, sites: &[&'static str]) {
    let Some(first) = d.proposals.first().cloned() else { return };
    // what is wrong after `fix`: at this argument, at the fixed one, or
    // anywhere that was right before
    let breaks = |fix: Fix| -> Option<Vec<Diag>> {
        let fixed = apply(spec, fix)?;
        Some(rules(&fixed).into_iter().filter(|e| e.at == d.at || e.at == fix.path || !sites.contains(&e.at)).collect())
    };
    let works = |fix: Fix| breaks(fix).is_some_and(|b| b.is_empty());
    let chosen = d.proposals.iter().find(|p| works(p.fix)).cloned().or_else(|| {
        let mut near = candidates(first.fix.path);
        near.sort_by_key(|&c| c.abs_diff(first.fix.value));
        near.into_iter().map(|value| Proposal { fix: Fix { value, ..first.fix }, say: first.say.clone() }).find(|p| works(p.fix))
    });
    match chosen {
        Some(p) => {
            d.msg = advised(&d.msg, &p.say.replace("{}", &p.fix.value.to_string()));
            d.fix = Some(p.fix);
        }
        None => {
            let conflict = breaks(first.fix).and_then(|b| b.into_iter().next());
            // `block m`, `warp n`, but `vector` and `stages` as their calls name them
            let setting = match first.fix.path.strip_prefix("staging.") {
                Some(name) => name.to_string(),
                None => first.fix.path.replace('.', " "),
            };
            // the conflict's problem, without its own advice
            let problem = |c: &Diag| c.msg.split("; ").next().unwrap_or(&c.msg).to_string();
            d.msg = match conflict {
                Some(c) => advised(&d.msg, &format!("{setting} = {} would break another rule: {}", first.fix.value, problem(&c))),
                None => advised(&d.msg, &format!("no nearby value of {setting} satisfies every rule")),
            };
        }
    }
}

/// `msg` with `advice` after its first line's problem (the lines after it
/// are further problems at the same argument, which the advice also fixes).
fn advised(msg: &str, advice: &str) -> String {
    match msg.split_once('\n') {
        Some((first, rest)) => format!("{first}; {advice}\n{rest}"),
        None => format!("{msg}; {advice}"),
    }
}

/// Every argument some rule finds at fault, before [`check`] merges the
/// errors at one argument and leaves out those another error's fix clears.
pub fn violated(spec: &KernelSpec) -> Vec<&'static str> {
    rules(spec).into_iter().map(|d| d.at).collect()
}

/// Every rule, each violation on its own, proposals untried; each group of
/// rules names the errors it finds.
fn rules(spec: &KernelSpec) -> Vec<Diag> {
    let mut out = Vec::new();
    let group = |out: &mut Vec<Diag>, rule: &'static str, f: fn(&KernelSpec, &mut Vec<Diag>)| {
        let start = out.len();
        f(spec, out);
        for d in &mut out[start..] {
            d.rule = match (rule, d.at) {
                ("the tiers", "block.threads") => "the thread count the tiling needs",
                ("resources", _) if d.msg.contains("shared memory") => "shared memory",
                ("resources", _) => "registers",
                _ => rule,
            };
        }
    };
    // (the rules below multiply the settings together: out of range, they would overflow)
    group(&mut out, "a size past any kernel", bounds);
    if !out.is_empty() {
        return out;
    }
    group(&mut out, "the thread count", threads);
    group(&mut out, "the tiers", tiers);
    group(&mut out, "the atom", atom);
    group(&mut out, "the tensor-core atoms", tensor);
    group(&mut out, "the staging", staging);
    group(&mut out, "the swizzle", swizzle);
    group(&mut out, "the epilogue", epilogue);
    group(&mut out, "block scales", block_scales);
    group(&mut out, "grouped problems", groups);
    group(&mut out, "the edges", edges);
    group(&mut out, "the raster", raster);
    group(&mut out, "resources", resources);
    group(&mut out, "the Hopper features", hopper);
    out
}

/// Each number of the spec within what a kernel could use: tiles, threads,
/// stages and the rest far past any that fits the hardware are refused
/// here, by their size alone, before the rules that multiply them.
fn bounds(spec: &KernelSpec, out: &mut Vec<Diag>) {
    // loose bounds: the rules below refuse most values past the hardware with messages of
    // their own; these keep the products they work out (shared memory, registers) in 32 bits
    const TILE: u32 = 1024;
    let b = &spec.block;
    let mut within = |at: &'static str, what: &str, v: u32, most: u32, why: &str| {
        if v > most {
            out.push(Diag::new(at, format!("{what} = {v} is past what any kernel can use: at most {most} ({why})")));
        }
    };
    let tile_why = "a tile's side, past what shared memory and registers hold";
    within("block.m", "block m", b.m, TILE, tile_why);
    within("block.n", "block n", b.n, TILE, tile_why);
    within("block.k", "block k", b.k.unwrap_or(0), TILE, tile_why);
    within("block.threads", "block threads", b.threads, 4096, "the threads of a block");
    within("block.min_blocks", "min_blocks", b.min_blocks.unwrap_or(0), 64, "the blocks an SM holds");
    if let Some(w) = spec.warp {
        within("warp.m", "warp m", w.m, TILE, tile_why);
        within("warp.n", "warp n", w.n, TILE, tile_why);
        within("warp.m_iters", "warp m_iters", w.m_iters, 64, "a warp's steps over its tile");
        within("warp.n_iters", "warp n_iters", w.n_iters, 64, "a warp's steps over its tile");
    }
    if let Some(t) = spec.thread {
        within("thread.m", "thread m", t.m, 64, "a thread's accumulators");
        within("thread.n", "thread n", t.n, 64, "a thread's accumulators");
    }
    let (vector, stages, fragments, prefetch) = match spec.staging {
        Staging::Smem { vector, buffers, .. } => (vector, buffers, 1, 0),
        Staging::CpAsync { stages, vector, fragments, .. } => (vector, stages, fragments, 0),
        Staging::Tma { stages, prefetch, .. } => (1, stages, 1, prefetch),
        Staging::Direct => (1, 1, 1, 0),
    };
    within("staging.vector", "vector", vector, 64, "elements a copy moves");
    within("staging.stages", "stages", stages, 64, "tiles in shared memory");
    within("staging", "fragments", fragments, 64, "K steps of fragments in registers");
    within("staging.prefetch", "prefetch", prefetch, 64, "K steps asked of the L2");
    if let Some(sp) = spec.specialize {
        within("specialize.producers", "producers", sp.producers, 8, "warpgroups of a block");
        within("specialize.consumers", "consumers", sp.consumers, 8, "warpgroups of a block");
        within("specialize", "producer_regs", sp.producer_regs.unwrap_or(0), 4096, "registers a thread");
        within("specialize", "consumer_regs", sp.consumer_regs.unwrap_or(0), 4096, "registers a thread");
    }
    if let Swizzle::Pad(p) = spec.swizzle {
        within("swizzle", "pad", p, 256, "elements a shared-memory row is padded by");
    }
    if let Raster::Grouped(g) = spec.raster {
        within("raster", "grouped", g, 65535, "tiles in a band");
    }
    if let Some(c) = spec.cluster {
        for (what, v) in [("cluster m", c.m), ("cluster n", c.n), ("cluster k", c.k)] {
            within("cluster", what, v, 16, "blocks in a cluster");
        }
        if let Some((what, _)) = [("cluster m", c.m), ("cluster n", c.n), ("cluster k", c.k)].into_iter().find(|&(_, v)| v == 0) {
            out.push(Diag::new("cluster", format!("{what} = 0: a cluster holds at least one block along each side")));
        }
    }
}

/// Whether every number of `spec` lies within [`bounds`], so that what is
/// worked out from them cannot overflow.
pub(crate) fn in_bounds(spec: &KernelSpec) -> bool {
    let mut out = Vec::new();
    bounds(spec, &mut out);
    out.is_empty()
}

/// Smallest multiple of `of` that is >= `x` (for "use a multiple of" hints).
fn round_up(x: u32, of: u32) -> u32 {
    x.div_ceil(of.max(1)) * of.max(1)
}

fn threads(spec: &KernelSpec, out: &mut Vec<Diag>) {
    let t = spec.block.threads;
    if t == 0 || !t.is_multiple_of(32) || t > 1024 {
        out.push(Diag::proposing(
            "block.threads",
            format!("block threads = {t} must be a multiple of 32 (a whole number of warps) between 32 and 1024"),
            "block.threads",
            round_up(t.clamp(1, 1024), 32),
            "try {}",
        ));
    }
    if matches!(spec.atom, Atom::Wgmma { .. }) && !t.is_multiple_of(128) {
        out.push(Diag::new("block.threads", format!("block threads = {t}: wgmma is issued by warpgroups of 128 threads; use a multiple of 128")));
    }
}

/// `outer` is a multiple of `inner`, each (its name in messages, its value);
/// `grow` names the setting of `outer` that a fix may round up, if any.
fn divides(out: &mut Vec<Diag>, at: &'static str, outer: (&str, u32), inner: (&str, u32), grow: Option<&'static str>) -> bool {
    if inner.1 == 0 {
        out.push(Diag::new(at, format!("{} = 0 must be at least 1", inner.0)));
        return false;
    }
    if !outer.1.is_multiple_of(inner.1) {
        let problem = format!("{} = {} is not divisible by {} = {}", outer.0, outer.1, inner.0, inner.1);
        let or_divisor = format!("or a divisor of {} for {}", outer.1, inner.0);
        out.push(match grow {
            Some(path) => Diag::proposing(
                at,
                problem,
                path,
                round_up(outer.1, inner.1),
                format!("use a multiple of {} for {}, such as {{}}, {or_divisor}", inner.1, outer.0),
            ),
            None => Diag::new(at, format!("{problem}; use a multiple of {} for {}, {or_divisor}", inner.1, outer.0)),
        });
        return false;
    }
    true
}

/// Block -> warp -> thread: each tier tiles the one above exactly, and the
/// thread count follows from the tiling.
fn tiers(spec: &KernelSpec, out: &mut Vec<Diag>) {
    let b = spec.block;
    for (at, name, v) in [("block.m", "block m", b.m), ("block.n", "block n", b.n)] {
        if v == 0 {
            out.push(Diag::new(at, format!("{name} = 0 must be at least 1")));
            return;
        }
    }
    let mut threads_needed = None;
    if let Some(w) = spec.warp {
        let ok_m = divides(out, "warp.m", ("block m", b.m), ("warp m", w.m), Some("block.m"));
        let ok_n = divides(out, "warp.n", ("block n", b.n), ("warp n", w.n), Some("block.n"));
        if ok_m && ok_n {
            // The tiling gives the computing warps (warpgroups for wgmma); warp
            // specialization adds its producer warpgroups.
            let (unit, unit_threads) = if matches!(spec.atom, Atom::Wgmma { .. }) { ("warpgroups", 128) } else { ("warps", 32) };
            let units = (b.m / w.m) * (b.n / w.n);
            let mut why = format!("({}/{}) x ({}/{}) {unit}", b.m, w.m, b.n, w.n);
            let mut need = units * unit_threads;
            if let Some(sp) = spec.specialize {
                if sp.pingpong {
                    // each consumer takes whole tiles: one warpgroup's tile, several warpgroups
                    if units != 1 {
                        out.push(Diag::new(
                            "specialize.pingpong",
                            format!("pingpong consumers take whole block tiles, one warpgroup's each, but the tiling gives {why} = {units}; make the warp tile the block tile"),
                        ));
                    }
                    if sp.consumers < 2 {
                        out.push(Diag::new("specialize.pingpong", "pingpong takes turns between consumers: use consumers = 2 or more"));
                    }
                    why = format!("{} consumer warpgroup(s) taking tiles in turn", sp.consumers);
                    need = sp.consumers * 128;
                } else if sp.consumers != units {
                    out.push(Diag::new(
                        "specialize.consumers",
                        format!("consumers = {} but the tiling gives {why} = {units} consumer {unit}; use consumers = {units}", sp.consumers),
                    ));
                }
                why += &format!(" + {} producer warpgroup(s)", sp.producers);
                need += sp.producers * 128;
            }
            threads_needed = Some((need, why));
            if let Some(t) = spec.thread.filter(|_| matches!(spec.atom, Atom::Fma)) {
                let lanes_cover = 32 * t.m * t.n * w.m_iters * w.n_iters;
                if w.m * w.n != lanes_cover {
                    out.push(Diag::new(
                        "warp",
                        format!(
                            "warp tile {}x{} = {} elements is not covered exactly by 32 lanes x thread tile {}x{} x iterations {}x{} = {}; choose iterations with m_iters x n_iters = {}",
                            w.m, w.n, w.m * w.n, t.m, t.n, w.m_iters, w.n_iters, lanes_cover,
                            (w.m * w.n) as f64 / (32 * t.m * t.n) as f64
                        ),
                    ));
                } else {
                    divides(out, "thread.m", ("warp m / m_iters", w.m / w.m_iters.max(1)), ("thread m", t.m), None);
                    divides(out, "thread.n", ("warp n / n_iters", w.n / w.n_iters.max(1)), ("thread n", t.n), None);
                }
            }
        }
    } else if let Some(t) = spec.thread {
        let ok_m = divides(out, "thread.m", ("block m", b.m), ("thread m", t.m), Some("block.m"));
        let ok_n = divides(out, "thread.n", ("block n", b.n), ("thread n", t.n), Some("block.n"));
        if ok_m && ok_n {
            threads_needed = Some(((b.m / t.m) * (b.n / t.n), format!("({}/{}) x ({}/{}) thread tiles", b.m, t.m, b.n, t.n)));
        }
    }
    if let Some((need, why)) = threads_needed {
        if need != b.threads {
            out.push(Diag::proposing(
                "block.threads",
                format!("block threads = {} but the tiling needs {why} = {need} threads", b.threads),
                "block.threads",
                need,
                "use threads = {}",
            ));
        }
    }
    if spec.thread.is_none() && matches!(spec.atom, Atom::Fma) {
        out.push(Diag::new("thread", "atom = fma needs a thread tier: add `thread(m = .., n = ..)`"));
    }
    if spec.thread.is_some() && !matches!(spec.atom, Atom::Fma) {
        out.push(Diag::new(
            "thread",
            format!("a thread tier applies to atom = fma only; atom = {} owns its fragments: remove `thread(..)`", spec.atom.name()),
        ));
    }
    if spec.warp.is_none() && !matches!(spec.atom, Atom::Fma) {
        out.push(Diag::new("warp", format!("atom = {} needs a warp tier: add `warp(m = .., n = ..)`", spec.atom.name())));
    }
}

fn atom(spec: &KernelSpec, out: &mut Vec<Diag>) {
    // (whatever A and B are: the epilogue reads and writes C and the bias in 16 or 32 bits)
    if spec.c.elem.is_fp8() {
        out.push(Diag::new("c", format!("C in {}: the accumulators are f32, and C is f32, f16 or bf16", spec.c.elem.rust_name())));
    }
    if let Some(bias) = spec.fused.bias.filter(|b| b.elem.is_fp8()) {
        out.push(Diag::new(
            "bias",
            format!("a bias of {}: the bias is added in f32, from f32, f16 or bf16; write `Bias<bf16>` (or f32, f16)", bias.elem.rust_name()),
        ));
    }
    let (am, an, ak) = spec.atom.shape();
    let sixteen_bit = |e: Elem| matches!(e, Elem::F16 | Elem::Bf16);
    let wgmma = matches!(spec.atom, Atom::Wgmma { .. });
    match spec.atom {
        Atom::Fma => {
            for (at, op) in [("a", spec.a), ("b", spec.b)] {
                if op.elem != Elem::F32 {
                    let instead = if op.elem.is_fp8() { "atom = wgmma(m64nNk32) on sm_90a" } else { "a tensor-core atom such as mma(m16n8k16)" };
                    out.push(Diag::new(
                        at,
                        format!(
                            "atom = fma computes in f32 and reads f32 operands, but {at} is {}; use f32, or for {} {instead} with a warp tier in place of the thread tier",
                            op.elem.rust_name(),
                            op.elem.rust_name()
                        ),
                    ));
                }
            }
        }
        Atom::Mma { .. } | Atom::Wmma { .. } | Atom::Wgmma { .. } => {
            let mma = matches!(spec.atom, Atom::Mma { .. });
            for (at, op) in [("a", spec.a), ("b", spec.b)] {
                if op.elem.is_fp8() && !wgmma && !mma {
                    out.push(Diag::new(
                        at,
                        format!(
                            "{at} is {}: 8-bit floats are multiplied by mma.sync on sm_89 and sm_120, or by wgmma on sm_90a; use atom = mma(m16n8k32), or f16/bf16 operands for atom = {}",
                            op.elem.rust_name(),
                            spec.atom.name()
                        ),
                    ));
                } else if !sixteen_bit(op.elem) && !op.elem.is_fp8() {
                    let which = if wgmma || mma { "f16, bf16 or 8-bit float" } else { "f16 or bf16" };
                    out.push(Diag::new(
                        at,
                        format!(
                            "atom = {} multiplies {which} operands (accumulating in f32), but {at} is {}; use f16 or bf16, or atom = fma for f32",
                            spec.atom.name(),
                            op.elem.rust_name()
                        ),
                    ));
                }
            }
            let (a, b) = (spec.a.elem, spec.b.elem);
            if sixteen_bit(a) && sixteen_bit(b) && a != b {
                out.push(Diag::new("b", "a and b must have the same element type for a tensor-core atom"));
            }
            if (sixteen_bit(a) && b.is_fp8()) || (a.is_fp8() && sixteen_bit(b)) {
                out.push(Diag::new(
                    "b",
                    format!(
                        "a is {} and b {}: the tensor cores multiply two 16-bit operands or two 8-bit ones; quantize both, or neither",
                        a.rust_name(),
                        b.rust_name()
                    ),
                ));
            }
            if a.is_fp8() || b.is_fp8() {
                fp8(spec, out);
            }
        }
    }
    match spec.atom {
        Atom::Mma { .. } if spec.a.elem.is_fp8() && (am, an, ak) != (16, 8, 32) => {
            out.push(Diag::new("atom", format!("mma shape m{am}n{an}k{ak}: mma.sync multiplies 8-bit floats 32 along K; use mma(m16n8k32)")))
        }
        Atom::Mma { .. } if !spec.a.elem.is_fp8() && (am, an, ak) != (16, 8, 16) => {
            out.push(Diag::new("atom", format!("mma shape m{am}n{an}k{ak} is not supported for f16/bf16; use mma(m16n8k16)")))
        }
        Atom::Wmma { .. } if ![(16, 16, 16), (32, 8, 16), (8, 32, 16)].contains(&(am, an, ak)) => {
            out.push(Diag::new("atom", format!("wmma shape {am}x{an}x{ak} does not exist for f16/bf16; use 16x16x16, 32x8x16 or 8x32x16")))
        }
        Atom::Wgmma { .. } => {
            // K is 32 bytes of each operand's lines: 16 of 16-bit elements, 32 of 8-bit ones
            let (k, types) = if spec.a.elem.is_fp8() { (32, "8-bit floats") } else { (16, "f16/bf16") };
            if am != 64 || ak != k {
                out.push(Diag::new(
                    "atom",
                    format!("wgmma m{am}n{an}k{ak}: a warpgroup computes M = 64 and K = {k} for {types}; use wgmma(m64n{an}k{k})"),
                ));
            }
            if !(8..=256).contains(&an) || an % 8 != 0 {
                out.push(Diag::new(
                    "atom",
                    format!("wgmma N = {an} must be a multiple of 8 between 8 and 256; try n{}", round_up(an.clamp(8, 256), 8)),
                ));
            }
            if let Atom::Wgmma { promote: true, .. } = spec.atom {
                if !spec.a.elem.is_fp8() {
                    out.push(Diag::new(
                        "atom",
                        format!(
                            "`promote` adds 8-bit products' sums into f32; the tensor cores already sum {} products in f32: remove it",
                            spec.a.elem.rust_name()
                        ),
                    ));
                }
            }
        }
        _ => {}
    }
    // The atom tiles the warp tile, and its K the block's K step.
    if !matches!(spec.atom, Atom::Fma) {
        if let Some(w) = spec.warp {
            let per_m = if matches!(spec.atom, Atom::Wgmma { .. }) { "warpgroup m" } else { "warp m" };
            divides(out, "warp.m", (per_m, w.m), ("atom m", am), Some("warp.m"));
            if let Atom::Wgmma { .. } = spec.atom {
                // a warpgroup's N is the atom's to choose (8 to 256): the fix is the atom
                if an > 0 && !w.n.is_multiple_of(an) {
                    let fit = (1..=32).rev().map(|i| i * 8).find(|&d| w.n.is_multiple_of(d)).unwrap_or(8);
                    // (the proposal keeps the K that the operands' type takes: 32 bytes of each line)
                    let k = if spec.a.elem.is_fp8() { 32 } else { 16 };
                    out.push(Diag::proposing(
                        "atom",
                        format!("atom n = {an} does not tile warp n = {}", w.n),
                        "atom.n",
                        fit,
                        format!("use wgmma(m64n{{}}k{k})"),
                    ));
                }
            } else {
                divides(out, "warp.n", ("warp n", w.n), ("atom n", an), Some("warp.n"));
            }
        }
        if let Some(k) = spec.block.k {
            divides(out, "block.k", ("block k", k), ("atom k", ak), Some("block.k"));
        }
    }
    if spec.min_arch() == Arch::Sm90a && spec.arch != Arch::Sm90a {
        out.push(Diag::new(
            "arch",
            format!(
                "arch = {} cannot run this kernel: it uses {}, which need {}; use arch = {}",
                spec.arch,
                hopper_features(spec).join(", "),
                spec.min_arch(),
                spec.min_arch()
            ),
        ));
    }
}

/// What 8-bit operands need: wgmma and ldmatrix read them K-major only (no
/// transpose for 8-bit types); mma.sync multiplies them on sm_89 and
/// sm_120, and its copies move 4 bytes or more. (C and the bias stay 16
/// or 32 bits whatever A and B are: [`atom`].)
fn fp8(spec: &KernelSpec, out: &mut Vec<Diag>) {
    if matches!(spec.atom, Atom::Mma { .. }) {
        // Hopper's and datacenter Blackwell's SMs have no 8-bit mma.sync: ptxas converts each
        // operand to f16 and sums f16 mmas (HMMA, F2FP and FADD in the SASS, and spills), which ran
        // `mma_fp8_sm89` at 328 TFLOP/s on an H200 against 420 for its bf16 twin
        match spec.arch {
            a if a.capability() < (8, 9) => out.push(Diag::new(
                "arch",
                format!("arch = {a}: mma.sync multiplies 8-bit floats on Ada (sm_89) and consumer Blackwell (sm_120); use arch = sm_89"),
            )),
            a @ (Arch::Sm90 | Arch::Sm90a | Arch::Sm100) => out.push(Diag::new(
                "arch",
                format!(
                    "arch = {a}: Hopper and datacenter Blackwell emulate 8-bit mma.sync with f16 mmas; use atom = wgmma(m64nNk32) with arch = sm_90a, or arch = sm_89 or sm_120 for the GPUs that run it"
                ),
            )),
            _ => {}
        }
        // (cp.async's own rule refuses its copies under 4 bytes, the vector rule a width that is no power of two)
        if let Staging::Smem { vector: v @ (1 | 2), .. } = spec.staging {
            out.push(Diag::new(
                "staging.vector",
                format!(
                    "vector = {v}: 8-bit operands are copied 4, 8 or 16 bytes at a time; use vector = 16 (or 4, 8 where the lines are less aligned)"
                ),
            ));
        }
    }
    if spec.a.elem.is_fp8() && spec.a.layout != Layout::RowMajor {
        out.push(Diag::new(
            "a",
            format!(
                "an 8-bit A is read K-major (ldmatrix and wgmma transpose 16-bit elements only), but a is column-major; write `Mat<{}, RowMajor>` and store A row-major",
                spec.a.elem.rust_name()
            ),
        ));
    }
    if spec.b.elem.is_fp8() && spec.b.layout != Layout::ColMajor {
        out.push(Diag::new(
            "b",
            format!(
                "an 8-bit B is read K-major (ldmatrix and wgmma transpose 16-bit elements only), but b is row-major; write `Mat<{}, ColMajor>`: C = A * W^T with W stored [N, K]",
                spec.b.elem.rust_name()
            ),
        ));
    }
}

/// `groups = masked`: each problem of a batch stops at rows of its own,
/// read on the device; a block skips the tiles past them and guards the
/// rest, so its tiles are whole tiles a block, walked alike by every role.
fn groups(spec: &KernelSpec, out: &mut Vec<Diag>) {
    let Some(groups) = spec.groups else { return };
    let sm80 = matches!(spec.staging, Staging::CpAsync { .. }) && matches!(spec.atom, Atom::Mma { .. });
    if !matches!(spec.staging, Staging::Tma { .. }) && !sm80 {
        out.push(Diag::new(
            "groups",
            format!(
                "groups = {} is generated on the Hopper path (TMA stages, atom = wgmma(..)) and on the sm_80 path (cp_async stages, atom = mma(..))",
                groups.name()
            ),
        ));
        return;
    }
    // a contiguous group's tiles start at any row, where copies and stores along M would be misaligned
    if sm80 && groups == Groups::Contiguous {
        for (name, ty, operand) in [("a", "Mat", spec.a), ("c", "MatMut", spec.c)] {
            if operand.layout == Layout::ColMajor {
                out.push(Diag::new(
                    name,
                    format!(
                        "groups = contiguous on the sm_80 path starts a group's tiles at any row, where a column-major {}'s vectors along M would be misaligned: write `{ty}<{}, RowMajor>`, or pad each group to the block's m and write groups = indexed",
                        name.to_uppercase(),
                        operand.elem.rust_name()
                    ),
                ));
            }
        }
    }
    if sm80 {
        // a grid of a block per tile: each block skips or places its own tile
        if spec.persistent.is_some() {
            out.push(Diag::new(
                "persistent",
                format!("groups = {} on the sm_80 path runs a block per tile, each placing its own in its group: remove `persistent`", groups.name()),
            ));
        }
    } else if spec.persistent.is_none() {
        // (a grid of a block per tile would do for the masked layout, but no GPU test has run it)
        out.push(Diag::new(
            "groups",
            format!("groups = {} is generated on the persistent walk of whole tiles so far, which skips or places each tile by rows only the device knows: add persistent = tiles", groups.name()),
        ));
    }
    if !sm80 && spec.persistent.is_some_and(Persistent::splits_k) {
        out.push(Diag::new(
            "persistent",
            format!("groups = {} places tiles within each problem's rows, which shares of K would cross: use persistent = tiles", groups.name()),
        ));
    }
    if spec.cluster.is_some() {
        out.push(Diag::new(
            "cluster",
            format!(
                "groups = {} places each block's tiles within its problem's rows, which a cluster's blocks share: remove `cluster`",
                groups.name()
            ),
        ));
    }
    if spec.specialize.is_some_and(|sp| sp.pingpong) {
        out.push(Diag::new(
            "specialize.pingpong",
            format!(
                "groups = {} places tiles by rows only the device knows, which ping-pong consumers take in turns: remove `pingpong`",
                groups.name()
            ),
        ));
    }
    // (a promoted consumer's overlap checks its walk itself: see promoted_overlap)
    if spec.overlaps_halves() {
        out.push(Diag::new(
            "specialize.overlap",
            format!("groups = {} places tiles by rows only the device knows, and overlapped consumers start the next tile's K steps before knowing where it lies: remove `overlap`", groups.name()),
        ));
    }
    if spec.edges != Edges::Guarded {
        out.push(Diag::new(
            "groups",
            format!("groups = {} stops each problem at rows of its own, which tiles then cross: add edges = guarded", groups.name()),
        ));
    }
    // (contiguous groups' row-major C: a tile across a group's last row goes out by the threads)
    if spec.epilogue == Epilogue::Tma && (groups != Groups::Contiguous || spec.c.layout != Layout::RowMajor) {
        out.push(Diag::new(
            "epilogue",
            format!(
                "groups = {} leaves C's rows past each problem's unwritten, where a TMA store writes whole tiles: use epilogue = vector or smem (epilogue = tma takes contiguous groups with a row-major C)",
                groups.name()
            ),
        ));
    }
}

/// `scale = block` (DeepGEMM's 1 x 128 scales of A, 128 x 128 of B): each
/// stage is one K block, whose sums a consumer scales as it promotes them,
/// and each warpgroup's columns lie in one 128-column block of B.
fn block_scales(spec: &KernelSpec, out: &mut Vec<Diag>) {
    if spec.fused.scale != Some(Scale::Block) {
        return;
    }
    let b = SCALE_BLOCK;
    let mma = matches!(spec.atom, Atom::Mma { .. });
    if !(mma || matches!(spec.atom, Atom::Wgmma { .. })) || !spec.a.elem.is_fp8() {
        out.push(Diag::new(
            "epilogue.scale",
            format!(
                "scale = block scales each {b}-wide K block's tensor-core sums of 8-bit operands, but this kernel multiplies {} by atom = {}; use scale = tensor or channel, or F8E4M3 operands on atom = wgmma(m64nNk32) or mma(m16n8k32)",
                spec.a.elem.rust_name(),
                spec.atom.name()
            ),
        ));
        return;
    }
    if let Some(k) = spec.block.k.filter(|&k| k != b) {
        out.push(Diag::proposing(
            "block.k",
            format!("scale = block promotes each {b}-wide K block's sums: a K tile (a stage) is one K block, but block k = {k}"),
            "block.k",
            b,
            format!("use k = {b}"),
        ));
    }
    // (a wider warpgroup tile's two sets of sums would not fit a thread's registers; a warp
    // reads one scale of B a K block)
    if let Some(w) = spec.warp.filter(|w| !b.is_multiple_of(w.n)) {
        let who = if mma { "warp" } else { "warpgroup" };
        // the widest divisor of the scale block that tiles the block's columns; [`check`] says
        // what else it breaks (the warp count), where it breaks something
        let fit = (1..=b / 8).rev().map(|i| i * 8).find(|d| b.is_multiple_of(*d) && spec.block.n.is_multiple_of(*d)).unwrap_or(8);
        out.push(Diag::proposing(
            "warp.n",
            format!("scale = block: a {who}'s columns lie in one {b}-column block of B's scales, but warp n = {}", w.n),
            "warp.n",
            fit,
            format!("use a divisor of {b}, such as n = {{}}"),
        ));
    }
    if spec.persistent.is_some_and(Persistent::splits_k) {
        out.push(Diag::new("persistent", "scale = block is generated for whole tiles a block, not shares of K: use persistent = tiles"));
    }
    if mma {
        // (each K tile's scales are read beside a cp.async pipeline's loop, the one the sm_89 kernels run)
        if !matches!(spec.staging, Staging::CpAsync { .. }) {
            out.push(Diag::new(
                "staging",
                "scale = block on atom = mma is generated over cp.async stages: use staging = cp_async(stages = 3, vector = 16)",
            ));
        }
        return;
    }
    // (the stages bring the scales in beside the tiles)
    if !matches!(spec.staging, Staging::Tma { cp_async: None, by_class: false, .. }) {
        out.push(Diag::new("staging", "scale = block loads each K block's scales with its stage, by TMA: use staging = tma(stages = ..)"));
    }
}

/// How a promoted kernel's accumulators divide, for the register rules' messages.
fn promoted_share(spec: &KernelSpec) -> &'static str {
    match (spec.promoted(), spec.paired_sums(), spec.sums_by_atom_row()) {
        (true, true, _) => " (two thirds of them two stages' sums)",
        (true, false, true) => " (one atom row's promoted sums among them)",
        (true, false, false) => " (half of them promoted sums)",
        _ => "",
    }
}

/// What the tensor-core atoms need of the tiers, the staging, the shared
/// layout and C.
fn tensor(spec: &KernelSpec, out: &mut Vec<Diag>) {
    let atom = spec.atom.name();
    let (am, an, _) = spec.atom.shape();
    match spec.atom {
        Atom::Fma => return,
        Atom::Wgmma { .. } => {}
        Atom::Mma { .. } | Atom::Wmma { .. } => {
            if let Some(w) = spec.warp.filter(|w| w.m_iters != 1 || w.n_iters != 1) {
                out.push(Diag::new(
                    "warp",
                    format!(
                        "m_iters = {}, n_iters = {}: iterations step thread tiles of atom = fma; a tensor-core warp covers its {}x{} tile with {}x{} atoms ({} x {}); remove them",
                        w.m_iters, w.n_iters, w.m, w.n, am, an, w.m / am.max(1), w.n / an.max(1)
                    ),
                ));
            }
        }
    }
    if matches!(spec.atom, Atom::Mma { .. }) && spec.staging == Staging::Direct {
        let v = spec.a.elem.max_vector();
        out.push(Diag::new(
            "staging",
            format!("atom = mma loads its fragments from shared memory with ldmatrix: stage the tiles with smem(vector = {v}) or cp_async(stages = .., vector = {v})"),
        ));
    }
    if spec.staging.transpose_a() {
        out.push(Diag::new(
            "staging.transpose_a",
            format!("transpose_a lays A out for atom = fma; atom = {atom} keeps each operand's global layout in shared memory and transposes as it loads fragments: remove it"),
        ));
    }
    if let Atom::Wmma { .. } = spec.atom {
        if spec.c.elem != Elem::F32 {
            out.push(Diag::new(
                "c",
                format!(
                    "atom = wmma stores its f32 accumulators with wmma.store, so C must be f32, not {}; use atom = mma(m16n8k16) for a 16-bit C",
                    spec.c.elem.rust_name()
                ),
            ));
        }
        if spec.epilogue != Epilogue::Direct {
            out.push(Diag::new("epilogue", "atom = wmma stores whole fragments with wmma.store; use epilogue = direct"));
        }
        // wmma.load takes 32-byte aligned fragments: an 8-wide side of the
        // atom may only step along a strided dimension.
        if an == 8 && spec.b.layout == Layout::RowMajor {
            out.push(Diag::new(
                "b",
                format!("wmma {am}x{an}x16 steps 8 columns (16 bytes) along a row-major B, but wmma.load needs 32-byte aligned fragments; make B column-major or use wmma(m16n16k16)"),
            ));
        }
        if am == 8 && spec.a.layout == Layout::ColMajor {
            out.push(Diag::new(
                "a",
                format!("wmma {am}x{an}x16 steps 8 rows (16 bytes) along a column-major A, but wmma.load needs 32-byte aligned fragments; make A row-major or use wmma(m16n16k16)"),
            ));
        }
    }
    if let Atom::Mma { .. } = spec.atom {
        if spec.epilogue == Epilogue::Vector && spec.c.layout == Layout::ColMajor {
            out.push(Diag::new(
                "epilogue",
                "epilogue = vector stores the pairs of neighbours along n that an mma accumulator holds, but C is column-major; use epilogue = direct or a row-major C",
            ));
        }
    }
    if spec.staging == Staging::Direct {
        return;
    }
    // ldmatrix reads, and wmma.load strides by, 16-byte rows of shared memory.
    let bytes = spec.a.elem.bytes();
    if let Swizzle::Pad(p) = spec.swizzle {
        if !(p * bytes).is_multiple_of(16) {
            let step = 16 / bytes;
            out.push(Diag::new(
                "swizzle",
                format!(
                    "pad({p}) moves each shared-memory row {} bytes off the 16-byte alignment that {} needs; use pad({step}) or another multiple of {step}",
                    p * bytes,
                    if matches!(spec.atom, Atom::Wmma { .. }) { "wmma.load" } else { "ldmatrix" }
                ),
            ));
        }
    }
    if spec.swizzle == Swizzle::Xor {
        if matches!(spec.atom, Atom::Wmma { .. }) {
            out.push(Diag::new(
                "swizzle",
                "swizzle = xor permutes 16-byte chunks, which wmma.load cannot follow; use pad(8) with atom = wmma, or atom = mma",
            ));
        }
        for (name, t) in [("A", spec.smem_a()), ("B", spec.smem_b())] {
            let chunks = t.len * bytes / 16;
            if !(chunks == 2 || chunks == 4 || (chunks >= 8 && chunks.is_multiple_of(8))) || !(t.len * bytes).is_multiple_of(16) {
                out.push(Diag::new(
                    "swizzle",
                    format!(
                        "swizzle = xor permutes the 16-byte chunks of each shared-memory line, which needs 2, 4 or a multiple of 8 chunks a line; the {name} tile's lines are {} elements ({} bytes); choose a tile side of 16, 32 or a multiple of 64 elements, or pad(8)",
                        t.len,
                        t.len * bytes
                    ),
                ));
            }
        }
    }
}

fn hopper_features(spec: &KernelSpec) -> Vec<&'static str> {
    let mut f = Vec::new();
    if matches!(spec.atom, Atom::Wgmma { .. }) {
        f.push("wgmma");
    }
    if matches!(spec.staging, Staging::Tma { .. }) {
        f.push("TMA staging");
    }
    if matches!(spec.epilogue, Epilogue::Tma) {
        f.push("a TMA store");
    }
    if spec.cluster.is_some() {
        f.push("clusters");
    }
    if spec.specialize.is_some_and(|s| s.producer_regs.is_some() || s.consumer_regs.is_some()) {
        f.push("setmaxnreg");
    }
    f
}

/// A Hopper cluster's own rules: its size, its split along K, its multicast.
fn cluster(spec: &KernelSpec, c: Cluster, out: &mut Vec<Diag>) {
    if c.m == 0 || c.n == 0 || c.k == 0 || c.m * c.n * c.k > 8 {
        let shape = if c.k > 1 { format!("{}x{}x{}", c.m, c.n, c.k) } else { format!("{}x{}", c.m, c.n) };
        out.push(Diag::new("cluster", format!("cluster {shape} must hold between 1 and 8 blocks (the portable cluster size)")));
    }
    if c.k > 1 {
        k_split(spec, c, out);
    }
    match c.multicast {
        // Blocks in one cluster column (same n) share B; in one row (same m), A.
        Some(Which::B) if c.m < 2 => out.push(Diag::new(
            "cluster.multicast",
            format!("multicast = b shares B among blocks stacked along m, but cluster m = {}; use cluster(m = 2, ..) or multicast = a", c.m),
        )),
        Some(Which::A) if c.n < 2 => out.push(Diag::new(
            "cluster.multicast",
            format!("multicast = a shares A among blocks side by side along n, but cluster n = {}; use cluster(n = 2, ..) or multicast = b", c.n),
        )),
        Some(_) if !matches!(spec.staging, Staging::Tma { .. }) => {
            out.push(Diag::new("cluster.multicast", "multicast is a TMA feature; use staging = tma(..)"))
        }
        Some(which) => multicast_parts(spec, which, out),
        None => {}
    }
}

/// `cluster(k = ..)`: blocks that share one block tile along K, the
/// others' partial sums passed to rank 0 in its shared memory. Built for
/// the Hopper path's producer and consumers, one tile a cluster.
fn k_split(spec: &KernelSpec, c: Cluster, out: &mut Vec<Diag>) {
    if c.m != 1 || c.n != 1 || c.multicast.is_some() {
        out.push(Diag::new(
            "cluster.k",
            format!("a cluster split along K shares one block tile: use cluster(m = 1, n = 1, k = {}) without multicast", c.k),
        ));
    }
    if !matches!(spec.staging, Staging::Tma { cp_async: None, .. }) || !matches!(spec.atom, Atom::Wgmma { .. }) {
        out.push(Diag::new("cluster.k", "a cluster split along K is built for staging = tma(..) with atom = wgmma(..)"));
    }
    match spec.specialize {
        Some(sp) if !sp.pingpong && !sp.overlap && sp.arrivals == Arrivals::Warpgroup => {}
        _ => out.push(Diag::new(
            "cluster.k",
            "a cluster split along K needs a producer warpgroup and consumers that share each tile: specialize(producers = 1, consumers = ..), without pingpong or overlap",
        )),
    }
    if spec.persistent.is_some() {
        out.push(Diag::new("cluster.k", "a cluster split along K takes one tile a cluster: drop `persistent`"));
    }
}

/// `tma(prefetch = P)`: before a dependent launch's wait the block asks the
/// L2 for its own tile's first K steps, so the tile must be the block's
/// alone and known at its start. Generated where TMA fills the stages (the
/// cp.async variant for misaligned lines drops it).
fn prefetch(spec: &KernelSpec, out: &mut Vec<Diag>) {
    if let Staging::Tma { cp_async: Some(_), .. } = spec.staging {
        out.push(Diag::new("staging.prefetch", "prefetch is generated for stages that TMA fills, not cp.async: drop cp_async or prefetch"));
    }
    if spec.persistent.is_some() {
        out.push(Diag::new(
            "staging.prefetch",
            "prefetch fetches the K steps of the one tile a block starts with: drop `persistent` (its blocks walk many tiles) or prefetch",
        ));
    }
    if spec.cluster.is_some_and(|c| c.multicast.is_some()) {
        out.push(Diag::new(
            "staging.prefetch",
            "prefetch fetches a block's own tiles, which under multicast a cluster shares: drop the multicast or prefetch",
        ));
    }
}

/// `tma(evict_first = ..)` hints the loads of an operand each block reads
/// alone; a multicast operand's boxes feed every block of the cluster.
fn evict_first(spec: &KernelSpec, first: EvictFirst, out: &mut Vec<Diag>) {
    if let Some(which) = spec.cluster.and_then(|c| c.multicast).filter(|&w| first.of(w)) {
        out.push(Diag::new(
            "staging.evict_first",
            format!("{which:?} is multicast, its boxes shared by the cluster's blocks, not read by one alone: drop the multicast or {which:?} from evict_first"),
        ));
    }
}

/// Each block of a multicast share loads an equal part of the shared
/// tile, a whole number of swizzle periods (8 lines) from the tile's start,
/// so that every part lands in the swizzle the whole tile would have.
fn multicast_parts(spec: &KernelSpec, which: Which, out: &mut Vec<Diag>) {
    let share = spec.multicast_share(which);
    let t = spec.tma_tile(which);
    let (name, side, mn) = match which {
        Which::A => ("A", "block.m", spec.block.m),
        Which::B => ("B", "block.n", spec.block.n),
    };
    if t.k_major && !mn.is_multiple_of(8 * share) {
        out.push(Diag::new(
            "cluster.multicast",
            format!(
                "the {share} blocks sharing {name} would load {mn} / {share} of its {side} lines each, not a multiple of 8 (the swizzle's period); \
                 use a {side} that is a multiple of {}",
                8 * share
            ),
        ));
    }
    if !t.k_major && !t.boxes.is_multiple_of(share) {
        out.push(Diag::new(
            "cluster.multicast",
            format!(
                "the {share} blocks sharing {name} would split its {} boxes of {} elements along {side} unevenly; use a {side} that is a multiple of {}",
                t.boxes,
                t.inner,
                t.inner * share
            ),
        ));
    }
}

fn staging(spec: &KernelSpec, out: &mut Vec<Diag>) {
    let b = spec.block;
    if spec.by_class() && !spec.by_class_fits() {
        // (the launcher's variant only; no attribute asks for it)
        out.push(Diag::new("staging", "the by-class variant is written for hopper_autotuned's tiling alone (KernelSpec::by_class_fits)"));
    }
    match (spec.staging, b.k) {
        (Staging::Direct, Some(k)) => {
            out.push(Diag::new(
                "block.k",
                format!("block k = {k} has no meaning with staging = direct (no K tile is staged); remove it, or stage through shared memory"),
            ));
            return;
        }
        (Staging::Direct, None) => return,
        (s, None) => {
            out.push(Diag::new("block", format!("staging = {} moves K tiles: give the block its K step, `block(.., k = ..)`", s.name())));
            return;
        }
        (_, Some(0)) => {
            out.push(Diag::new("block.k", "block k = 0 must be at least 1"));
            return;
        }
        _ => {}
    }
    let k = b.k.unwrap_or(1);
    match spec.staging {
        Staging::Smem { buffers, .. } if !(1..=2).contains(&buffers) => out.push(Diag::new(
            "staging.buffers",
            format!("buffers = {buffers}: synchronous staging holds 1 tile or 2 (double buffering); for deeper pipelines use cp_async(stages = ..) or tma(stages = ..)"),
        )),
        Staging::CpAsync { stages, .. } if stages < 2 => out.push(Diag::new(
            "staging.stages",
            format!("stages = {stages}: a pipeline needs at least 2 stages so that one loads while another computes"),
        )),
        _ => {}
    }
    match (spec.staging, spec.atom) {
        (Staging::CpAsync { fragments, .. }, _) if !(1..=2).contains(&fragments) => out.push(Diag::new(
            "staging.fragments",
            format!("fragments = {fragments}: registers hold 1 set of fragments (loaded right before their K step's math) or 2 (loaded a step ahead)"),
        )),
        (Staging::CpAsync { fragments: 2, .. }, Atom::Fma | Atom::Wmma { .. }) => out.push(Diag::new(
            "staging.fragments",
            format!(
                "fragments = 2 (fragments loaded a K step ahead) is generated for atom = mma only, not atom = {}: remove it, or use atom = mma(m16n8k16)",
                spec.atom.name()
            ),
        )),
        _ => {}
    }
    let v = spec.staging.vector();
    if v > 1 || matches!(spec.staging, Staging::Smem { .. } | Staging::CpAsync { .. }) {
        let elem = spec.a.elem;
        if v == 0 || !v.is_power_of_two() || v > elem.max_vector() {
            out.push(Diag::new(
                "staging.vector",
                format!("vector = {v}: a vector load moves {} {} elements (at most 16 bytes)", widths(elem.max_vector()), elem.rust_name()),
            ));
            return;
        }
        // Each operand tile is read as vectors along its contiguous dimension.
        let (a_inner, a_name) = match spec.a.layout {
            Layout::RowMajor => (k, "block k (A is row-major, contiguous along k)"),
            Layout::ColMajor => (b.m, "block m (A is column-major, contiguous along m)"),
        };
        let (b_inner, b_name) = match spec.b.layout {
            Layout::RowMajor => (b.n, "block n (B is row-major, contiguous along n)"),
            Layout::ColMajor => (k, "block k (B is column-major, contiguous along k)"),
        };
        for (inner, name) in [(a_inner, a_name), (b_inner, b_name)] {
            if inner % v != 0 {
                // the widest vector that divides the side
                let widest = (0..=3).map(|i| 1u32 << i).filter(|w| *w <= v && inner % w == 0).max().unwrap_or(1);
                out.push(Diag::proposing(
                    "staging.vector",
                    format!("vector = {v} does not divide {name} = {inner}"),
                    "staging.vector",
                    widest,
                    format!("use vector = {{}}, which divides {inner}"),
                ));
            }
        }
        if let Staging::CpAsync { .. } = spec.staging {
            cp_async_sizes(spec, v, out);
        }
        // Global loads split evenly across the block's threads.
        let t = b.threads.max(1);
        let uneven: Vec<(&str, u32)> = [("A", b.m * k), ("B", k * b.n)].into_iter().filter(|(_, e)| e % (v * t) != 0).collect();
        if !uneven.is_empty() {
            let tiles: Vec<String> = uneven.iter().map(|(what, elems)| format!("the {what} tile ({elems} elements)")).collect();
            let problem = format!(
                "{} cannot be loaded {v} elements at a time by {t} threads in whole rounds: a tile must be a multiple of {v} x {t} = {}",
                tiles.join(" and "),
                v * t
            );
            // a narrower vector where one splits evenly, else the tile or the threads
            match (1..v).rev().filter(|w| w.is_power_of_two()).find(|w| uneven.iter().all(|(_, e)| e % (w * t) == 0)) {
                Some(w) => out.push(Diag::proposing("staging.vector", problem, "staging.vector", w, "use vector = {}")),
                None => out.push(Diag::new("staging.vector", format!("{problem}; change the tile or the threads"))),
            }
        } else if spec.tensor_core() {
            copies_a_thread(spec, v, [a_inner, b_inner], out);
        }
    }
}

/// Copies of A's and B's tiles a thread issues a stage on the tensor-core
/// path, past which the rules refuse the tiling. Each holds its source
/// offset and its shared address in registers across the K loop, beside
/// the accumulators: past 64 (128 registers) ptxas spilled them by the
/// kilobyte (0.4 to 18 KB of spill loads a thread at 68 to 256 copies, the
/// narrowed variants of `mma_tuned` and `decode_mma`), and at 96 it built
/// `mma_tuned`'s 64 x 128 tile on 64 threads, in 4-byte copies over three
/// stages, at 32 registers a thread with 40 KB of spills, a kernel that
/// summed wrong and faulted on misaligned addresses (NVRTC 13.0, H200,
/// 2026-12-03). A launch whose operands would need such narrower copies
/// copies them instead (`realign`).
pub const MAX_COPIES_A_THREAD: u32 = 64;

/// The tensor-core path's copies a thread a stage ([`MAX_COPIES_A_THREAD`]),
/// for tiles that split evenly in `v`-element copies along their
/// contiguous sides `sides` (A's, B's).
fn copies_a_thread(spec: &KernelSpec, v: u32, sides: [u32; 2], out: &mut Vec<Diag>) {
    let b = &spec.block;
    let (k, t) = (b.k.unwrap_or(1), b.threads.max(1));
    let copies = |v: u32| (b.m * k + k * b.n) / (v * t);
    let n = copies(v);
    if n <= MAX_COPIES_A_THREAD {
        return;
    }
    let problem = format!(
        "the A and B tiles ({} x {k} and {k} x {}) in {v}-element copies by {} threads are {n} copies a thread a stage, \
         each holding an offset and an address in registers across the K loop: at most {MAX_COPIES_A_THREAD}",
        b.m, b.n, b.threads
    );
    // a wider vector where the operands' sides and the rounds take it
    let fits = |w: u32| sides.iter().all(|s| s % w == 0) && [b.m * k, k * b.n].iter().all(|e| e % (w * t) == 0) && copies(w) <= MAX_COPIES_A_THREAD;
    let wider = (v.trailing_zeros() + 1..=spec.a.elem.max_vector().trailing_zeros()).map(|i| 1u32 << i).find(|&w| fits(w));
    match wider {
        Some(w) => out.push(Diag::proposing("staging.vector", problem, "staging.vector", w, "use vector = {}")),
        None => out.push(Diag::new("staging.vector", format!("{problem}; use more threads or a smaller block k"))),
    }
}

/// The vector widths up to `max`, as the vector rule lists them: "1, 2 or 4",
/// "1, 2, 4 or 8".
fn widths(max: u32) -> String {
    let all: Vec<String> = (0..=max.trailing_zeros()).map(|i| (1u32 << i).to_string()).collect();
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => all.join(""),
    }
}

/// `cp.async` copies 4, 8 or 16 bytes. (A SIMT operand whose shared layout
/// transposes its global one is copied 4 bytes at a time: f32 elements, the
/// only ones SIMT kernels take; tensor-core kernels never transpose a copy.)
fn cp_async_sizes(spec: &KernelSpec, v: u32, out: &mut Vec<Diag>) {
    let elem = spec.a.elem;
    let bytes = v * elem.bytes();
    if bytes < 4 {
        out.push(Diag::new(
            "staging.vector",
            format!(
                "vector = {v} of {} is {bytes} bytes, but cp.async copies 4, 8 or 16 bytes; use vector = {} or more",
                elem.rust_name(),
                4 / elem.bytes()
            ),
        ));
    }
}

/// TMA's stages filled by the producer warpgroup's cp.async copies of `v`
/// elements (the launcher's variant for lines TMA cannot read).
fn ring_copies(spec: &KernelSpec, ring: RingCopies, out: &mut Vec<Diag>) {
    let v = ring.vector;
    let elem = spec.a.elem;
    let bytes = v * elem.bytes();
    if !v.is_power_of_two() || !(4..=16).contains(&bytes) {
        out.push(Diag::new(
            "staging",
            format!("cp_async = {v}: cp.async copies 4, 8 or 16 bytes, {} to {} {} elements", 4 / elem.bytes(), 16 / elem.bytes(), elem.rust_name()),
        ));
        return;
    }
    match spec.specialize {
        None => out.push(Diag::new("staging", "stages filled by cp.async are filled by a producer warpgroup: add specialize(producers = 1, ..)")),
        Some(sp) if sp.producer_regs.is_some_and(|r| r < RING_PRODUCER_REGS) => out.push(Diag::new(
            "specialize",
            format!(
                "producer_regs = {}: a producer warpgroup that copies by cp.async needs {RING_PRODUCER_REGS} registers a thread",
                sp.producer_regs.unwrap_or(0)
            ),
        )),
        Some(_) => {}
    }
    if spec.cluster.is_some_and(|c| c.multicast.is_some()) {
        out.push(Diag::new("cluster", "multicast shares TMA's copies among a cluster's blocks; stages filled by cp.async are each block's own"));
    }
    let k = spec.block.k.unwrap_or(0);
    for (name, mn, _) in [("A", spec.block.m, Which::A), ("B", spec.block.n, Which::B)].into_iter().filter(|&(.., w)| ring.fills(w)) {
        let copies = mn * k / v;
        if !copies.is_multiple_of(128) || !k.is_multiple_of(v) || !mn.is_multiple_of(v) {
            out.push(Diag::new(
                "staging",
                format!("{name}'s tile ({mn} x {k}) cannot be copied {v} elements at a time by the producer warpgroup's 128 threads in whole rounds"),
            ));
        }
    }
}

/// Registers a thread of a producer warpgroup that copies by cp.async needs.
pub const RING_PRODUCER_REGS: u32 = 40;

fn swizzle(spec: &KernelSpec, out: &mut Vec<Diag>) {
    let staged = !matches!(spec.staging, Staging::Direct);
    match spec.swizzle {
        Swizzle::None => {}
        _ if !staged => {
            out.push(Diag::new("swizzle", "swizzle lays out shared memory, but staging = direct uses none; remove it or stage through shared memory"))
        }
        Swizzle::Pad(0) => out.push(Diag::new("swizzle", "pad(0) pads nothing; use swizzle = none or pad(1) and more")),
        Swizzle::Pad(p) => {
            let v = spec.staging.vector();
            // (a vector of 0 is the vector rule's error)
            if v != 0 && p % v != 0 {
                // Vector stores into shared memory need each padded row to stay aligned.
                out.push(Diag::proposing(
                    "swizzle",
                    format!("pad({p}) breaks the {v}-element alignment of shared-memory rows that vector = {v} stores"),
                    "swizzle",
                    round_up(p, v),
                    format!("use a multiple of {v}, such as pad({{}})"),
                ));
            }
        }
        Swizzle::Xor => {}
        // (one error: the row a TMA swizzle needs is moot where no TMA lays the tile out)
        s if !matches!(spec.staging, Staging::Tma { .. }) => {
            // (xor is ldmatrix's: neither the SIMT loads nor wmma.load follow it)
            let instead = if matches!(spec.atom, Atom::Mma { .. }) { "xor (or pad(..))" } else { "pad(..)" };
            out.push(Diag::new(
                "swizzle",
                format!(
                    "swizzle = b{} is the TMA copy engine's layout; use it with staging = tma(..), or swizzle = {instead} with staging = {}",
                    s.tma_bytes().unwrap_or(0),
                    spec.staging.name()
                ),
            ));
        }
        s => {
            let width = s.tma_bytes().unwrap_or(0);
            let k = spec.block.k.unwrap_or(0);
            let row = k * spec.a.elem.bytes();
            // a K-major tile wider than a swizzle row loads as boxes side by side along K
            let shared = spec.cluster.is_some_and(|c| c.multicast.is_some());
            if row == 0 || !row.is_multiple_of(width) || (row != width && shared) {
                let whole = if shared { "(under a cluster's multicast) a K tile row of" } else { "a K tile row a multiple of" };
                out.push(Diag::new(
                    "swizzle",
                    format!(
                        "a {width}B swizzle needs {whole} {width} bytes, but block k = {k} x {} bytes = {row} bytes; use block k = {}",
                        spec.a.elem.bytes(),
                        width / spec.a.elem.bytes()
                    ),
                ));
            }
        }
    }
}

fn raster(spec: &KernelSpec, out: &mut Vec<Diag>) {
    if spec.raster == Raster::Grouped(0) {
        out.push(Diag::new("raster", "grouped(0) groups no tiles; use grouped(N) with N >= 1 M tiles per band, or raster = row"));
    }
}

fn epilogue(spec: &KernelSpec, out: &mut Vec<Diag>) {
    gated(spec, out);
    if spec.epilogue != Epilogue::Vector || !matches!(spec.atom, Atom::Fma) {
        return;
    }
    let Some(t) = spec.thread else { return };
    let (side, v, layout) = match spec.c.layout {
        Layout::RowMajor => ("thread n", t.n, "row-major"),
        Layout::ColMajor => ("thread m", t.m, "column-major"),
    };
    if v % 4 != 0 {
        out.push(Diag::new(
            "epilogue",
            format!("epilogue = vector stores 4 neighbouring accumulators along C's contiguous side, but {side} = {v} for a {layout} C; use a multiple of 4 or epilogue = direct"),
        ));
    }
}

/// `gated`: a thread holds each gate beside its up-projection, an mma or
/// wgmma accumulator pair along n, and stores their product to C, or to a
/// C tile of n / 2 columns (`epilogue = smem`).
fn gated(spec: &KernelSpec, out: &mut Vec<Diag>) {
    if !spec.fused.gated {
        return;
    }
    if !matches!(spec.atom, Atom::Mma { .. } | Atom::Wgmma { .. }) {
        out.push(Diag::new(
            "atom",
            format!(
                "`gated` pairs the accumulators of neighbouring columns, as mma and wgmma hold them, but atom = {}: use atom = mma(..) or wgmma(..)",
                spec.atom.name()
            ),
        ));
    }
    // (smem_elements' realigned lines are laid out for the product's width; a TMA store's boxes
    // take a row-major C's half-width lines)
    let tma_rows = spec.epilogue == Epilogue::Tma && spec.c.layout == Layout::RowMajor;
    if !matches!(spec.epilogue, Epilogue::Direct | Epilogue::Vector | Epilogue::Smem) && !tma_rows {
        out.push(Diag::new(
            "epilogue",
            format!(
                "`gated` stores each pair's product, an element of n / 2, where epilogue = {} lays its C tile out for the product's n: use epilogue = vector(..), direct(..) or smem(..), or tma(..) with a row-major C",
                spec.epilogue.name()
            ),
        ));
    }
    if spec.fused.beta {
        out.push(Diag::new("epilogue", "`gated` writes a C of n / 2 columns, which `beta` would read before the gate halves them: remove `beta`"));
    }
}

fn edges(spec: &KernelSpec, out: &mut Vec<Diag>) {
    if spec.atom == Atom::Fma && spec.staging == Staging::Direct && spec.edges == Edges::Whole {
        out.push(Diag::new(
            "edges",
            "an fma kernel with staging = direct guards its edges always (each thread checks its row and column); write edges = guarded or leave it out",
        ));
    }
    if matches!(spec.atom, Atom::Wmma { .. }) && spec.staging == Staging::Direct && spec.edges == Edges::Guarded {
        out.push(Diag::new(
            "edges",
            "atom = wmma with staging = direct loads whole fragments straight from global memory, where nothing can check the edges; \
             stage through cp_async to guard them, or write edges = whole",
        ));
    }
}

/// The largest of k / 2, k / 4, ... (at least 8) whose staged tiles fit
/// `limit` bytes of shared memory; `None` where the spec has no K tile or
/// none of them fits. [`check`] proposes it only where every rule holds.
fn shallower_k(spec: &KernelSpec, limit: u32) -> Option<u32> {
    let k = spec.block.k?;
    std::iter::successors(Some(k / 2), |&k| Some(k / 2))
        .take_while(|&k| k >= 8)
        .find(|&k| apply(spec, Fix { path: "block.k", value: k }).is_some_and(|s| s.smem_bytes() <= limit))
}

/// The most stages, fewer than the spec's, whose tiles fit `limit` bytes of
/// shared memory (found by the spec's own count: a TMA store's C tile goes
/// out in parts where stages need its room); 0 where none does.
fn stages_that_fit(spec: &KernelSpec, limit: u32) -> u32 {
    (1..spec.staging.smem_tiles())
        .rev()
        .find(|&n| apply(spec, Fix { path: "staging.stages", value: n }).is_some_and(|s| s.smem_bytes() <= limit))
        .unwrap_or(0)
}

/// What to write so that `spec`'s shared memory fits `limit` bytes, a
/// device's (GPUs of compute capability 8.6, 8.9 and 12.0 give a block 99
/// KB, where the A100 that `arch = sm_80` is checked against gives 163 KB):
/// the most stages that fit, else a halved K tile, each only where the spec
/// so changed breaks no rule. `None` if neither does.
pub fn fit_shared_memory(spec: &KernelSpec, limit: u32) -> Option<String> {
    let pipelined = matches!(spec.staging, Staging::CpAsync { .. } | Staging::Tma { .. });
    let stages = Some(stages_that_fit(spec, limit)).filter(|&n| pipelined && n >= 2);
    let fixes = [
        stages.map(|n| (Fix { path: "staging.stages", value: n }, format!("stages = {n}"))),
        shallower_k(spec, limit).map(|k| (Fix { path: "block.k", value: k }, format!("block(k = {k})"))),
    ];
    fixes
        .into_iter()
        .flatten()
        .find(|(fix, _)| apply(spec, *fix).is_some_and(|s| s.smem_bytes() <= limit && check(&s).is_empty()))
        .map(|(_, setting)| setting)
}

fn resources(spec: &KernelSpec, out: &mut Vec<Diag>) {
    let smem = spec.smem_bytes();
    let limit = spec.arch.smem_limit();
    if smem > limit {
        let tiles = spec.staging.smem_tiles();
        let (staged, scratch) = (spec.staged_bytes(), spec.epilogue_scratch_bytes());
        let tiles_text =
            format!("{tiles} tile(s) of A {}x{} and B {}x{}", spec.block.m, spec.block.k.unwrap_or(0), spec.block.k.unwrap_or(0), spec.block.n);
        let over = format!("over the {limit} bytes a block may use on {}", spec.arch);
        let what = match spec.epilogue {
            _ if spec.c_tile().is_none() => "the epilogue's scratch tiles",
            Epilogue::Tma => "the C tile of epilogue = tma",
            _ => "the C tile of epilogue = smem",
        };
        // the C tile of epilogue = smem takes the stages' place after the K loop
        let in_place = scratch > 0 && spec.epilogue_scratch_offset() == 0;
        let problem = if scratch == 0 {
            format!("the staged tiles need {smem} bytes of shared memory ({tiles_text}), {over}")
        } else if in_place {
            format!("the staged tiles ({tiles_text}, {staged} bytes) and {what} in their place ({scratch} bytes) need {smem} bytes of shared memory, {over}")
        } else {
            format!(
                "the staged tiles ({tiles_text}, {staged} bytes) and {what} past them ({scratch} bytes) need {smem} bytes of shared memory, {over}"
            )
        };
        // a pipeline says how deep it can go at this tile size, beside the scratch
        let fit = stages_that_fit(spec, limit);
        match spec.staging {
            _ if in_place && scratch > limit => {
                out.push(Diag::new("block", format!("{problem}; shrink the block tile, or use epilogue = vector or direct")))
            }
            // fewer stages fit: the error is at the stages, which is what to change
            Staging::CpAsync { .. } | Staging::Tma { .. } if fit >= 2 => out.push(Diag::proposing(
                "staging.stages",
                problem,
                "staging.stages",
                fit,
                "at most {} stages fit at this tile size: use stages = {}, or shrink the tiles",
            )),
            _ => match shallower_k(spec, limit) {
                // a K tile halved (once or more) keeps the C tile, the warps and the stages
                Some(k) => out.push(Diag::proposing("block.k", problem, "block.k", k, "a K tile of {} fits: use k = {}, or shrink the tiles")),
                None => out.push(Diag::new("block", format!("{problem}; shrink the tiles{}", if tiles > 1 { " or the buffers" } else { "" }))),
            },
        }
    }
    if let Some(o) = spec.block.min_blocks {
        let sm = spec.arch.smem_per_sm();
        let most = spec.arch.threads_per_sm();
        if o == 0 || o * spec.block.threads > most {
            out.push(Diag::new(
                "block.min_blocks",
                match most / spec.block.threads.max(1) {
                    1 => {
                        format!("min_blocks = {o}: an SM holds one block of {} threads ({most} threads at most on {})", spec.block.threads, spec.arch)
                    }
                    fit => format!(
                        "min_blocks = {o}: an SM holds 1 to {fit} blocks of {} threads ({most} threads at most on {})",
                        spec.block.threads, spec.arch
                    ),
                },
            ));
        } else if o * smem > sm {
            out.push(Diag::new(
                "block.min_blocks",
                format!("min_blocks = {o} blocks of {smem} bytes of shared memory need {} bytes, over the {sm} of an SM on {}", o * smem, spec.arch),
            ));
        }
    }
    // ptxas compiles a specialized kernel for one block per SM (`register_cap`), but under
    // setmaxnreg it gives the consumers' code the registers they take (`consumer_regs`, whose
    // own rule holds their accumulators): what must fit the cap is one wgmma's accumulators
    // (a promoted 64 x 192 consumer's 192 compile without spills at 384 threads, where one
    // m64n256 wgmma's 128 fail in ptxas at 512)
    let total = spec.accumulators_per_thread();
    let setmaxnreg = matches!(spec.atom, Atom::Wgmma { .. }) && spec.specialize.is_some_and(|sp| sp.consumer_regs.is_some());
    let past_setmaxnreg = setmaxnreg && total + REGISTER_RESERVE > MAX_REGISTERS + 1;
    let acc = if setmaxnreg && !past_setmaxnreg { spec.atom.shape().1 / 2 } else { total };
    let frags = spec.fragment_registers();
    // past what setmaxnreg gives a thread, the limit is the thread's own
    let cap = if past_setmaxnreg { MAX_REGISTERS } else { spec.register_cap() };
    let budget = cap.saturating_sub(REGISTER_RESERVE);
    if acc + frags > budget {
        let (at, why) = match spec.block.min_blocks {
            _ if past_setmaxnreg => ("warp", format!("a consumer thread takes at most {MAX_REGISTERS} registers by setmaxnreg")),
            _ if spec.specialize.is_some() && cap < MAX_REGISTERS => (
                "block.threads",
                format!("ptxas compiles a specialized kernel's {} threads for one block per SM: {cap} registers each", spec.block.threads),
            ),
            Some(o) if cap < MAX_REGISTERS => ("block.min_blocks", format!("min_blocks = {o} caps each thread at {cap} registers")),
            _ => (if spec.warp.is_some() { "warp" } else { "thread" }, format!("a thread has {MAX_REGISTERS} registers")),
        };
        let (held, shrink) = if spec.tensor_core() {
            (
                if spec.promoted() && acc == total && frags == 0 {
                    format!("{acc} f32 accumulators{}", promoted_share(spec))
                } else if spec.promoted() && acc == total {
                    format!("{acc} f32 accumulators{} and {frags} registers of operand fragments", promoted_share(spec))
                } else {
                    format!("{acc} f32 accumulators and {frags} registers of operand fragments")
                },
                if spec.specialize.is_some() {
                    "use fewer consumer warpgroups or a smaller warpgroup tile"
                } else if spec.staging.fragment_sets() > 1 && acc + frags / spec.staging.fragment_sets() <= budget {
                    "shrink the warp tile (or use more warps) or min_blocks, or load one set of fragments (fragments = 1)"
                } else {
                    "shrink the warp tile (or use more warps) or min_blocks"
                },
            )
        } else {
            (format!("{acc} accumulators"), "shrink the thread tile, the warp iterations or min_blocks")
        };
        out.push(Diag::new(
            at,
            format!(
                "each thread would hold {held}, but {why} and {REGISTER_RESERVE} of them hold addresses and operands: at most {budget}; {shrink}"
            ),
        ));
    }
}

/// `arrivals = thread` (every thread arrives on the TMA ring's barriers
/// and waits on its token) is the form the ladder's early steps keep; the
/// schedules and roles built since take the elected arrivals alone.
fn thread_arrivals(spec: &KernelSpec, sp: Specialize, out: &mut Vec<Diag>) {
    let other = if !matches!(spec.staging, Staging::Tma { cp_async: None, .. }) {
        Some("a ring filled by TMA (staging = tma(..))".to_string())
    } else if sp.pingpong {
        Some("consumers that share each tile, not pingpong".to_string())
    } else if spec.cluster.is_some() {
        Some("a block without a cluster, whose barriers its own threads alone arrive on".to_string())
    } else if spec.persistent.is_some_and(Persistent::splits_k) {
        Some("whole tiles (persistent = tiles or none), not tiles shared along K".to_string())
    } else {
        None
    };
    if let Some(needs) = other {
        out.push(Diag::new(
            "specialize.arrivals",
            format!("arrivals = thread (every thread arrives and waits on its token) is kept for {needs}; use arrivals = warpgroup"),
        ));
    }
}

/// `specialize(.., overlap)`: a consumer's two wgmma atoms along n, each
/// half of C's tile out through half the C tile's buffer while the other
/// half's wgmmas run, the next tile's first wgmmas issued before the
/// second half's epilogue. Built for the cooperative persistent walk of
/// whole tiles and a row-major C stored by TMA, the form the H100's
/// fused linear layer gained by (BENCHMARKS.md).
fn overlap(spec: &KernelSpec, sp: Specialize, out: &mut Vec<Diag>) {
    if spec.promoted() {
        return promoted_overlap(spec, sp, out);
    }
    let two_halves = match (spec.atom, spec.warp) {
        (Atom::Wgmma { n, zeroed, .. }, Some(w)) => w.m == 64 && w.n == 2 * n && w.n == spec.block.n && !zeroed,
        _ => false,
    };
    let other = if !two_halves {
        Some("consumers whose columns span the block's width in two wgmma atoms along n and one 64-row atom along m (warp(m = 64, n = the block's n) with wgmma(m64nNk16), N half of it), not zeroed")
    } else if let Some(needs) = overlap_walk(spec, sp) {
        Some(needs)
    } else if spec.epilogue != Epilogue::Tma || spec.c.layout != Layout::RowMajor {
        Some("a row-major C stored by TMA (epilogue = tma), whose C tile goes out in two halves along its lines")
    } else {
        None
    };
    if let Some(needs) = other {
        out.push(Diag::new("specialize.overlap", format!("overlap (each half's epilogue beside the other half's wgmmas) needs {needs}")));
    }
}

/// What either form of `specialize(.., overlap)` needs of its walk and
/// consumers, which issue the next tile's first wgmmas before this tile's
/// epilogue: the first unmet, if any.
fn overlap_walk(spec: &KernelSpec, sp: Specialize) -> Option<&'static str> {
    if sp.pingpong {
        Some("consumers that share each tile, not pingpong")
    } else if sp.arrivals == Arrivals::Thread {
        Some("the elected arrivals (arrivals = warpgroup)")
    } else if !spec.persistent.is_some_and(Persistent::whole_tiles) {
        Some("the persistent walk of whole tiles (persistent = tiles or queue), whose next tile's first wgmmas it issues early")
    } else if spec.cluster.is_some() {
        Some("a block without a cluster")
    } else {
        None
    }
}

/// `specialize(.., overlap)` on a promoted consumer: the next tile's first
/// stage goes into the second set of sums beside this tile's epilogue, on a
/// persistent walk that knows its next tile (the plain one, or contiguous
/// groups'), every consumer sharing each tile.
fn promoted_overlap(spec: &KernelSpec, sp: Specialize, out: &mut Vec<Diag>) {
    let what = if spec.fused.scale == Some(Scale::Block) { "scale = block" } else { "`promote`" };
    let other = if let Some(needs) = overlap_walk(spec, sp) {
        Some(needs)
    } else if matches!(spec.groups, Some(Groups::Masked | Groups::Indexed)) {
        Some("a walk that knows its next tile: no groups, or groups = contiguous (masked and indexed walks skip tiles the producer never loads)")
    } else {
        None
    };
    if let Some(needs) = other {
        out.push(Diag::new(
            "specialize.overlap",
            format!("overlap under {what} (the next tile's first stage beside this tile's epilogue) needs {needs}"),
        ));
    }
}

fn hopper(spec: &KernelSpec, out: &mut Vec<Diag>) {
    if let Staging::Tma { cp_async: Some(r), .. } = spec.staging {
        ring_copies(spec, r, out);
    }
    if let Staging::Tma { prefetch: 1.., .. } = spec.staging {
        prefetch(spec, out);
    }
    if let Staging::Tma { evict_first: first, .. } = spec.staging {
        evict_first(spec, first, out);
    }
    if let Staging::Tma { stages, .. } = spec.staging {
        if spec.swizzle.tma_bytes().is_none() {
            let e = 128 / spec.a.elem.bytes();
            out.push(Diag::new(
                "swizzle",
                format!("staging = tma lays its tiles out in the copy engine's swizzle, which wgmma's descriptors read: use swizzle = b128 (with block k = {e}), b64 or b32"),
            ));
        }
        if stages == 0 {
            out.push(Diag::new("staging.stages", "stages = 0 stages nothing; use 1 or more"));
        }
        if spec.specialize.is_some() && stages < 2 {
            out.push(Diag::proposing(
                "staging.stages",
                format!("stages = {stages}: a producer runs ahead of its consumers only through a ring of 2 or more stages"),
                "staging.stages",
                2,
                "use stages = {} or more",
            ));
        }
        // An M- or N-major operand is copied and read in chunks one swizzle
        // row wide (a column-major A's always divide wgmma's 64 rows).
        if let (Some(bytes), Atom::Wgmma { n, .. }) = (spec.swizzle.tma_bytes(), spec.atom) {
            let chunk = bytes / spec.a.elem.bytes();
            if spec.b.layout == Layout::RowMajor && !n.is_multiple_of(chunk) {
                out.push(Diag::new(
                    "atom",
                    format!(
                        "a row-major B is N-major: TMA and wgmma take it in chunks of {chunk} columns ({bytes} bytes, the swizzle's row), but wgmma n = {n}; use a multiple of {chunk}, a narrower swizzle, or a column-major B"
                    ),
                ));
            }
        }
    }
    if spec.epilogue == Epilogue::Tma {
        if !matches!(spec.staging, Staging::Tma { .. }) {
            out.push(Diag::new(
                "epilogue",
                "epilogue = tma stores C with the TMA copy engine, which this path does not set up; use staging = tma(..), or epilogue = smem",
            ));
        }
        // the tile's side along C's lines, and how many of its columns make one of C's
        // (a gated C holds a column for each pair of the product's)
        let (side_len, side, per) = match spec.c.layout {
            Layout::RowMajor if spec.fused.gated => (spec.block.n, "block n (C is row-major and gated: its lines are half of it)", 2),
            Layout::RowMajor => (spec.block.n, "block n (C is row-major)", 1),
            Layout::ColMajor => (spec.block.m, "block m (C is column-major)", 1),
        };
        // (a box's line is a whole number of 16-byte chunks: c_tile_box is 0 where none fits)
        if spec.c_tile_box() == 0 {
            let halves = spec.overlaps_halves();
            let chunk = 16 / spec.c.elem.bytes();
            out.push(Diag::new(
                "epilogue",
                format!(
                    "epilogue = tma stores C in boxes of whole 16-byte lines ({chunk} {} elements{}), but {side} = {side_len}; use a multiple of {}, or epilogue = smem",
                    spec.c.elem.rust_name(),
                    if halves { ", each half of the tile apart under overlap" } else { "" },
                    chunk * per * if halves { 2 } else { 1 }
                ),
            ));
        }
    }
    if let (Some(sp), Atom::Wgmma { .. }) = (spec.specialize, spec.atom) {
        let acc = spec.accumulators_per_thread();
        let promoted = promoted_share(spec);
        let need = round_up(acc + REGISTER_RESERVE, 8);
        // (past setmaxnreg's 256 only a smaller tile helps, which the accumulators' own rule says)
        if let Some(r) = sp.consumer_regs.filter(|r| acc + REGISTER_RESERVE > *r && need <= 256) {
            out.push(Diag::new(
                "specialize.consumer_regs",
                format!(
                    "consumer_regs = {r}, but each consumer thread holds {acc} f32 accumulators{promoted} and needs {REGISTER_RESERVE} more for addresses and descriptors; use consumer_regs = {need} or more, or a smaller warp tile"
                ),
            ));
        }
    }
    if let Staging::Tma { .. } = spec.staging {
        let k = spec.block.k.unwrap_or(0);
        for (at, name, v) in [("block.m", "block m", spec.block.m), ("block.n", "block n", spec.block.n), ("block.k", "block k", k)] {
            if v > 256 {
                out.push(Diag::new(at, format!("{name} = {v}: a TMA box side is at most 256 elements")));
            }
        }
        if !(k * spec.a.elem.bytes()).is_multiple_of(16) {
            out.push(Diag::new(
                "block.k",
                format!("a TMA box's inner side must be a multiple of 16 bytes; block k = {k} is {} bytes", k * spec.a.elem.bytes()),
            ));
        }
    }
    match spec.cluster {
        Some(c) if matches!(spec.atom, Atom::Wgmma { .. }) => cluster(spec, c, out),
        // (off the Hopper path a cluster is not generated: `support` says so, alone)
        _ => {}
    }
    if let Some(sp) = spec.specialize {
        if !matches!(spec.staging, Staging::Tma { .. } | Staging::CpAsync { .. }) {
            out.push(Diag::new(
                "specialize",
                "warp specialization needs an asynchronous pipeline for producers to feed: use staging = tma(..) or cp_async(..)",
            ));
        }
        if sp.consumers == 0 || sp.producers == 0 {
            out.push(Diag::new("specialize", "warp specialization needs at least one producer and one consumer warpgroup"));
        }
        if sp.arrivals == Arrivals::Thread {
            thread_arrivals(spec, sp, out);
        }
        if sp.overlap {
            overlap(spec, sp, out);
        }
        for (at, r) in [("specialize.producer_regs", sp.producer_regs), ("specialize.consumer_regs", sp.consumer_regs)] {
            if let Some(r) = r {
                if !(24..=256).contains(&r) || r % 8 != 0 {
                    out.push(Diag::new(at, format!("setmaxnreg takes a multiple of 8 between 24 and 256, not {r}")));
                }
            }
        }
        // a producer's setmaxnreg.dec gives registers back: ptxas refuses a count past the most any
        // code of the kernel runs with, the consumers' consumer_regs where given (C7406)
        if let Some(p) = sp.producer_regs {
            let (most, what) = match sp.consumer_regs {
                Some(c) => (c, format!("the consumers' consumer_regs = {c}")),
                None => (
                    spec.register_cap(),
                    format!("the {} registers each of the {} threads is launched with", spec.register_cap(), spec.block.threads),
                ),
            };
            if p > most {
                out.push(Diag::new(
                    "specialize.producer_regs",
                    format!("producer_regs = {p}: a producer gives registers back, to at most {what}; use producer_regs = {} or less", most / 8 * 8),
                ));
            }
        }
        // setmaxnreg moves registers within the block: a warpgroup that asks
        // for more waits until others have given back enough, so what all ask
        // for must fit what the block was launched with, or it waits forever
        let total = 128 * (sp.producers * sp.producer_regs.unwrap_or(0) + sp.consumers * sp.consumer_regs.unwrap_or(0));
        let held = spec.block.threads * spec.register_cap();
        if total > held {
            let room = (held / 128).saturating_sub(sp.producers * sp.producer_regs.unwrap_or(0)) / sp.consumers.max(1) / 8 * 8;
            out.push(Diag::new(
                "specialize",
                format!(
                    "the warpgroups would ask for {total} registers, over the {held} the block holds ({} threads launched with {} each); setmaxnreg would wait for them forever: use consumer_regs = {room} or less, or lower producer_regs",
                    spec.block.threads,
                    spec.register_cap()
                ),
            ));
        }
    }
}
