//! The attribute grammar: gives meaning to the nodes of [`crate::ast`].
//!
//! The grammar as users read it: `grammar.md` beside this file, on
//! `#[gemm_kernel]`'s documentation page.

use std::collections::HashMap;

use gemm_core::spec::*;
use gemm_core::tune::Value;
use proc_macro2::Span;

use crate::ast::Node;
use crate::ctxt::Ctxt;
use crate::suggest::{closest, hint};

/// The tiers and policies as written; `None` where an argument was left out.
#[derive(Default)]
pub struct Attr {
    pub block: Option<Block>,
    pub warp: Option<Warp>,
    pub thread: Option<ThreadTile>,
    pub atom: Option<Atom>,
    pub staging: Option<Staging>,
    pub specialize: Option<Specialize>,
    pub swizzle: Option<Swizzle>,
    pub raster: Option<Raster>,
    pub persistent: Option<Persistent>,
    pub cluster: Option<Cluster>,
    pub epilogue: Option<Epilogue>,
    /// The epilogue's math, with the bias's side (its type is the signature's).
    pub fused: FusedAttr,
    pub edges: Option<Edges>,
    pub groups: Option<Groups>,
    pub arch: Option<Arch>,
    /// A tuning space over the settings above.
    pub tune: Option<Tune>,
    /// The top-level arguments written, valid or not.
    pub written: Vec<String>,
    /// Arguments a misspelt name probably meant (`thread` for `thraed`): the
    /// rules say nothing about their absence, which the misspelling explains.
    pub meant: Vec<&'static str>,
}

/// The epilogue's settings as written: the bias's element type comes from the signature.
#[derive(Default)]
pub struct FusedAttr {
    pub alpha: bool,
    pub beta: bool,
    pub bias: Option<Dim>,
    pub activation: Option<Activation>,
    pub scale: Option<Scale>,
    pub gated: bool,
}

/// `tune(..)` as written: each setting's values, and how shapes are keyed.
pub struct Tune {
    pub lists: Vec<(gemm_core::tune::Setting, Vec<Value>)>,
    pub key: gemm_core::tune::TuneKey,
    pub span: Span,
}

const TOP: &[&str] = &[
    "block",
    "warp",
    "thread",
    "atom",
    "staging",
    "specialize",
    "swizzle",
    "raster",
    "persistent",
    "cluster",
    "epilogue",
    "edges",
    "groups",
    "arch",
    "tune",
];

pub fn parse(cx: &mut Ctxt, nodes: &[Node]) -> Attr {
    let mut attr = Attr::default();
    let mut seen: HashMap<String, Span> = HashMap::new();
    for node in nodes {
        let Some(name) = node.name() else {
            cx.error(node.span(), format!("expected a named argument, one of {}", list(TOP)));
            continue;
        };
        let key = name.to_string();
        if !TOP.contains(&key.as_str()) {
            cx.error(name.span(), format!("unknown argument `{key}`{}; expected one of {}", hint(&key, TOP), list(TOP)));
            attr.meant.extend(closest(&key, TOP));
            continue;
        }
        attr.written.push(key.clone());
        if seen.insert(key.clone(), name.span()).is_some() {
            cx.error(name.span(), format!("duplicate argument `{key}`; give each argument once"));
            continue;
        }
        match key.as_str() {
            "block" => attr.block = call(cx, node, "block").and_then(|a| block(cx, &a, node.span())),
            "warp" => attr.warp = call(cx, node, "warp").and_then(|a| warp(cx, &a, node.span())),
            "thread" => attr.thread = call(cx, node, "thread").and_then(|a| thread(cx, &a, node.span())),
            "specialize" => attr.specialize = call(cx, node, "specialize").and_then(|a| specialize(cx, &a, node.span())),
            "cluster" => attr.cluster = call(cx, node, "cluster").and_then(|a| cluster(cx, &a, node.span())),
            "tune" => attr.tune = call(cx, node, "tune").and_then(|a| tune(cx, &a, node.span())),
            // Alone, `persistent` means whole tiles per block.
            "persistent" if matches!(node, Node::Flag(_)) => {
                cx.record("persistent", node.span());
                attr.persistent = Some(Persistent::Tiles);
            }
            _ => {
                let Some(value) = assigned(cx, node, &key) else { continue };
                cx.record(key.as_str(), value.span());
                match key.as_str() {
                    "atom" => attr.atom = atom(cx, value),
                    "staging" => attr.staging = staging(cx, value),
                    "swizzle" => attr.swizzle = swizzle(cx, value),
                    "raster" => attr.raster = raster(cx, value),
                    "persistent" => attr.persistent = persistent(cx, value),
                    "epilogue" => {
                        if let Some((e, f)) = epilogue(cx, value) {
                            attr.epilogue = Some(e);
                            attr.fused = f;
                        }
                    }
                    "edges" => attr.edges = edges(cx, value),
                    "groups" => attr.groups = groups(cx, value),
                    "arch" => attr.arch = arch(cx, value),
                    _ => unreachable!("every name in TOP is handled"),
                }
            }
        }
    }
    attr
}

fn list(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// The arguments of `name(..)`, after recording where it was written.
fn call<'a>(cx: &mut Ctxt, node: &'a Node, name: &str) -> Option<Args<'a>> {
    match node {
        Node::Call(_, args, span) => {
            cx.record(name, *span);
            Some(Args { path: name.to_string(), label: name.to_string(), nodes: args })
        }
        _ => {
            cx.error(node.span(), format!("`{name}` takes its settings in parentheses: `{name}(..)`"));
            None
        }
    }
}

/// The value of `name = value`.
fn assigned<'a>(cx: &mut Ctxt, node: &'a Node, name: &str) -> Option<&'a Node> {
    match node {
        Node::Assign(_, v) => Some(v),
        _ => {
            cx.error(node.span(), format!("`{name}` takes a value: `{name} = ..`"));
            None
        }
    }
}

/// Named settings inside a call: `m = 128, transpose_a`.
struct Args<'a> {
    /// Where the settings are recorded: `block` gives `block.m`.
    path: String,
    /// The call's name in messages: `smem` for `staging = smem(..)`.
    label: String,
    nodes: &'a [Node],
}

/// The named settings of a call, checked against what it accepts.
struct Fields<'a> {
    label: String,
    found: HashMap<&'static str, &'a Node>,
    /// Settings a misspelt name probably meant: not reported missing.
    meant: Vec<&'static str>,
    span: Span,
}

impl<'a> Args<'a> {
    fn fields(&self, cx: &mut Ctxt, allowed: &[&'static str], span: Span) -> Fields<'a> {
        let mut found = HashMap::new();
        let mut meant = Vec::new();
        for node in self.nodes {
            let Some(name) = node.name() else {
                cx.error(node.span(), format!("expected `name = value` in `{}(..)`; one of {}", self.label, list(allowed)));
                continue;
            };
            let key = name.to_string();
            let Some(&k) = allowed.iter().find(|a| **a == key) else {
                cx.error(
                    name.span(),
                    format!("unknown argument `{key}` in `{}(..)`{}; expected one of {}", self.label, hint(&key, allowed), list(allowed)),
                );
                meant.extend(closest(&key, allowed));
                continue;
            };
            if found.insert(k, node).is_some() {
                cx.error(name.span(), format!("duplicate argument `{key}` in `{}(..)`", self.label));
                continue;
            }
            let span = match node {
                Node::Assign(_, v) => v.span(),
                other => other.span(),
            };
            cx.record(format!("{}.{key}", self.path), span);
        }
        Fields { label: self.label.clone(), found, meant, span }
    }
}

impl Fields<'_> {
    /// `name = <integer>`, if written.
    fn int(&self, cx: &mut Ctxt, name: &str) -> Option<u32> {
        match self.found.get(name)? {
            Node::Assign(_, v) => match **v {
                Node::Int(i, _) => Some(i),
                ref other => {
                    cx.error(other.span(), format!("`{name}` in `{}(..)` takes a number", self.label));
                    None
                }
            },
            other => {
                cx.error(other.span(), format!("`{name}` in `{}(..)` takes a number: `{name} = ..`", self.label));
                None
            }
        }
    }

    /// `name = <integer>`, which must be written.
    fn required(&self, cx: &mut Ctxt, name: &str) -> Option<u32> {
        if !self.found.contains_key(name) {
            if !self.meant.contains(&name) {
                cx.error(self.span, format!("missing `{name} = ..` in `{}(..)`", self.label));
            }
            return None;
        }
        self.int(cx, name)
    }

    /// A bare flag such as `transpose_a`.
    fn flag(&self, cx: &mut Ctxt, name: &str) -> bool {
        match self.found.get(name) {
            None => false,
            Some(Node::Flag(_)) => true,
            Some(other) => {
                cx.error(other.span(), format!("`{name}` is a flag: write it alone"));
                false
            }
        }
    }

    /// `name = <identifier>` from `choices`.
    fn choice(&self, cx: &mut Ctxt, name: &str, choices: &[&str]) -> Option<String> {
        match self.found.get(name)? {
            Node::Assign(_, v) => match &**v {
                Node::Flag(i) if choices.contains(&i.to_string().as_str()) => Some(i.to_string()),
                other => {
                    let said = match other {
                        Node::Flag(i) => hint(&i.to_string(), choices),
                        _ => String::new(),
                    };
                    cx.error(other.span(), format!("`{name}` in `{}(..)` is one of {}{said}", self.label, list(choices)));
                    None
                }
            },
            other => {
                cx.error(other.span(), format!("`{name}` takes a value: `{name} = ..`"));
                None
            }
        }
    }
}

fn block(cx: &mut Ctxt, args: &Args, span: Span) -> Option<Block> {
    let f = args.fields(cx, &["m", "n", "k", "threads", "min_blocks"], span);
    let (m, n, threads) = (f.required(cx, "m"), f.required(cx, "n"), f.required(cx, "threads"));
    let (k, min_blocks) = (f.int(cx, "k"), f.int(cx, "min_blocks"));
    Some(Block { m: m?, n: n?, k, threads: threads?, min_blocks })
}

fn warp(cx: &mut Ctxt, args: &Args, span: Span) -> Option<Warp> {
    let f = args.fields(cx, &["m", "n", "m_iters", "n_iters"], span);
    let (m, n) = (f.required(cx, "m"), f.required(cx, "n"));
    let m_iters = f.int(cx, "m_iters").unwrap_or(1);
    let n_iters = f.int(cx, "n_iters").unwrap_or(1);
    Some(Warp { m: m?, n: n?, m_iters, n_iters })
}

fn thread(cx: &mut Ctxt, args: &Args, span: Span) -> Option<ThreadTile> {
    let f = args.fields(cx, &["m", "n", "lanes", "sweep"], span);
    let (m, n) = (f.required(cx, "m"), f.required(cx, "n"));
    let dim = |cx: &mut Ctxt, key| match f.choice(cx, key, &["m", "n"]).as_deref() {
        Some("m") => Dim::M,
        _ => Dim::N,
    };
    let (lanes, sweep) = (dim(cx, "lanes"), dim(cx, "sweep"));
    Some(ThreadTile { m: m?, n: n?, lanes, sweep })
}

fn specialize(cx: &mut Ctxt, args: &Args, span: Span) -> Option<Specialize> {
    let f = args.fields(cx, &["producers", "consumers", "producer_regs", "consumer_regs", "pingpong", "arrivals", "overlap"], span);
    let consumers = f.required(cx, "consumers")?;
    let arrivals = match f.choice(cx, "arrivals", &["warpgroup", "thread"]).as_deref() {
        Some("thread") => Arrivals::Thread,
        _ => Arrivals::Warpgroup,
    };
    Some(Specialize {
        producers: f.int(cx, "producers").unwrap_or(1),
        consumers,
        producer_regs: f.int(cx, "producer_regs"),
        consumer_regs: f.int(cx, "consumer_regs"),
        pingpong: f.flag(cx, "pingpong"),
        arrivals,
        overlap: f.flag(cx, "overlap"),
    })
}

fn cluster(cx: &mut Ctxt, args: &Args, span: Span) -> Option<Cluster> {
    let f = args.fields(cx, &["m", "n", "k", "multicast"], span);
    let m = f.int(cx, "m").unwrap_or(1);
    let n = f.int(cx, "n").unwrap_or(1);
    let k = f.int(cx, "k").unwrap_or(1);
    let multicast = match f.choice(cx, "multicast", &["a", "b"]).as_deref() {
        Some("a") => Some(Which::A),
        Some("b") => Some(Which::B),
        _ => None,
    };
    Some(Cluster { m, n, k, multicast })
}

/// A value that is a bare word from `choices`.
fn word(cx: &mut Ctxt, value: &Node, what: &str, choices: &[&str]) -> Option<String> {
    match value {
        Node::Flag(i) if choices.contains(&i.to_string().as_str()) => Some(i.to_string()),
        other => {
            // `pad(N)` is offered as `pad`
            let names: Vec<&str> = choices.iter().map(|c| c.split('(').next().unwrap_or(c)).collect();
            let said = match other {
                Node::Flag(i) | Node::Call(i, ..) => hint(&i.to_string(), &names),
                _ => String::new(),
            };
            cx.error(other.span(), format!("unknown {what}{said}; expected one of {}", list(choices)));
            None
        }
    }
}

/// The single number in `name(N)`.
fn one_int(cx: &mut Ctxt, args: &[Node], span: Span, usage: &str) -> Option<u32> {
    match args {
        [Node::Int(v, _)] => Some(*v),
        _ => {
            cx.error(span, format!("expected one number: `{usage}`"));
            None
        }
    }
}

fn atom(cx: &mut Ctxt, value: &Node) -> Option<Atom> {
    const USAGE: &str = "`fma`, `mma(m16n8k16)`, `wmma(m16n16k16)` or `wgmma(m64nNk16)`";
    match value {
        Node::Flag(i) if i == "fma" => Some(Atom::Fma),
        Node::Call(kind, args, span) if ["mma", "wmma", "wgmma"].iter().any(|k| kind == k) => {
            let (shape, zeroed, promote) = match args.as_slice() {
                [Node::Flag(s)] => (parse_shape(&s.to_string()), false, false),
                // the accumulators zeroed before each tile, every wgmma adding (the ladder's "before" of seed 002's kernel 9);
                // or each stage's sums promoted into them in f32
                [Node::Flag(s), Node::Flag(z)] if kind == "wgmma" && z == "zeroed" => (parse_shape(&s.to_string()), true, false),
                [Node::Flag(s), Node::Flag(z)] if kind == "wgmma" && z == "promote" => (parse_shape(&s.to_string()), false, true),
                [Node::Flag(_), other] if kind == "wgmma" => {
                    cx.error(
                        other.span(),
                        "after wgmma's shape, one flag: `zeroed` (accumulators zeroed before each tile) or `promote` (each stage's sums added in f32)",
                    );
                    return None;
                }
                [Node::Flag(_), Node::Flag(z)] if z == "zeroed" => {
                    cx.error(
                        z.span(),
                        format!("`zeroed` is wgmma's, whose first wgmma of a tile may write the accumulators; {kind} always adds to them"),
                    );
                    return None;
                }
                _ => (None, false, false),
            };
            let Some((m, n, k)) = shape else {
                cx.error(*span, format!("expected a shape such as `{kind}(m16n8k16)`: the atom's M, N and K"));
                return None;
            };
            Some(match kind.to_string().as_str() {
                "mma" => Atom::Mma { m, n, k },
                "wmma" => Atom::Wmma { m, n, k },
                _ => Atom::Wgmma { m, n, k, zeroed, promote },
            })
        }
        other => {
            let said = match other {
                Node::Flag(i) | Node::Call(i, ..) => hint(&i.to_string(), &["fma", "mma", "wmma", "wgmma"]),
                _ => String::new(),
            };
            cx.error(other.span(), format!("unknown atom{said}; expected {USAGE}"));
            None
        }
    }
}

/// `m16n8k16` -> (16, 8, 16).
fn parse_shape(s: &str) -> Option<(u32, u32, u32)> {
    let rest = s.strip_prefix('m')?;
    let (m, rest) = rest.split_once('n')?;
    let (n, k) = rest.split_once('k')?;
    Some((m.parse().ok()?, n.parse().ok()?, k.parse().ok()?))
}

fn staging(cx: &mut Ctxt, value: &Node) -> Option<Staging> {
    const KINDS: &[&str] = &["direct", "smem", "cp_async", "tma"];
    let (kind, args, span) = match value {
        Node::Flag(i) => (i.to_string(), &[][..], i.span()),
        Node::Call(i, args, span) => (i.to_string(), args.as_slice(), *span),
        other => {
            cx.error(other.span(), format!("unknown staging; expected one of {}", list(KINDS)));
            return None;
        }
    };
    let args = Args { path: "staging".into(), label: kind.clone(), nodes: args };
    let fields = |cx: &mut Ctxt, allowed: &[&'static str]| args.fields(cx, allowed, span);
    match kind.as_str() {
        "direct" if args.nodes.is_empty() => Some(Staging::Direct),
        "direct" => {
            cx.error(span, "`direct` takes no settings");
            None
        }
        "smem" => {
            let f = fields(cx, &["vector", "transpose_a", "buffers"]);
            Some(Staging::Smem {
                vector: f.int(cx, "vector").unwrap_or(1),
                transpose_a: f.flag(cx, "transpose_a"),
                buffers: f.int(cx, "buffers").unwrap_or(1),
            })
        }
        "cp_async" => {
            let f = fields(cx, &["stages", "vector", "transpose_a", "fragments"]);
            let stages = f.required(cx, "stages")?;
            let vector = f.required(cx, "vector")?;
            let fragments = f.int(cx, "fragments").unwrap_or(1);
            Some(Staging::CpAsync { stages, vector, transpose_a: f.flag(cx, "transpose_a"), fragments })
        }
        "tma" => {
            let f = fields(cx, &["stages", "prefetch", "evict_first"]);
            let prefetch = f.int(cx, "prefetch").unwrap_or(0);
            let evict_first = match f.choice(cx, "evict_first", &["a", "b", "ab"]).as_deref() {
                Some("a") => EvictFirst { a: true, b: false },
                Some("b") => EvictFirst { a: false, b: true },
                Some(_) => EvictFirst { a: true, b: true },
                None => EvictFirst::default(),
            };
            Some(Staging::Tma { stages: f.required(cx, "stages")?, cp_async: None, prefetch, evict_first, by_class: false })
        }
        _ => {
            cx.error(span, format!("unknown staging `{kind}`{}; expected one of {}", hint(&kind, KINDS), list(KINDS)));
            None
        }
    }
}

fn swizzle(cx: &mut Ctxt, value: &Node) -> Option<Swizzle> {
    if let Node::Call(i, args, span) = value {
        if i == "pad" {
            return one_int(cx, args, *span, "pad(N)").map(Swizzle::Pad);
        }
    }
    Some(match word(cx, value, "swizzle", &["none", "pad(N)", "xor", "b32", "b64", "b128"])?.as_str() {
        "none" => Swizzle::None,
        "xor" => Swizzle::Xor,
        "b32" => Swizzle::B32,
        "b64" => Swizzle::B64,
        _ => Swizzle::B128,
    })
}

fn raster(cx: &mut Ctxt, value: &Node) -> Option<Raster> {
    if let Node::Call(i, args, span) = value {
        if i == "grouped" {
            return one_int(cx, args, *span, "grouped(N)").map(Raster::Grouped);
        }
    }
    Some(match word(cx, value, "raster", &["row", "grouped(N)", "hilbert"])?.as_str() {
        "row" => Raster::Row,
        _ => Raster::Hilbert,
    })
}

fn persistent(cx: &mut Ctxt, value: &Node) -> Option<Persistent> {
    Some(match word(cx, value, "persistent", &["tiles", "queue", "stream_k", "hybrid", "tail_split"])?.as_str() {
        "tiles" => Persistent::Tiles,
        "queue" => Persistent::Queue,
        "hybrid" => Persistent::Hybrid,
        "tail_split" => Persistent::TailSplit,
        _ => Persistent::StreamK,
    })
}

fn epilogue(cx: &mut Ctxt, value: &Node) -> Option<(Epilogue, FusedAttr)> {
    const STORES: &[&str] = &["direct", "vector", "smem", "smem_elements", "tma", "stmatrix"];
    let (store, fused) = match value {
        Node::Call(i, args, span) => {
            let label = i.to_string();
            let args = Args { path: "epilogue".into(), label: label.clone(), nodes: args };
            let f = args.fields(cx, &["alpha", "beta", "bias", "activation", "scale", "gated"], *span);
            let activations = ["relu", "gelu", "gelu_tanh", "silu"];
            let fused = FusedAttr {
                alpha: f.flag(cx, "alpha"),
                beta: f.flag(cx, "beta"),
                bias: f.choice(cx, "bias", &["n", "m"]).map(|d| if d == "n" { Dim::N } else { Dim::M }),
                activation: f.choice(cx, "activation", &activations).map(|a| match a.as_str() {
                    "relu" => Activation::Relu,
                    "gelu" => Activation::Gelu,
                    "gelu_tanh" => Activation::GeluTanh,
                    _ => Activation::Silu,
                }),
                scale: f.choice(cx, "scale", &["tensor", "channel", "block"]).map(|s| match s.as_str() {
                    "tensor" => Scale::Tensor,
                    "channel" => Scale::Channel,
                    _ => Scale::Block,
                }),
                gated: f.flag(cx, "gated"),
            };
            if !STORES.contains(&label.as_str()) {
                cx.error(i.span(), format!("unknown epilogue `{label}`{}; expected one of {}", hint(&label, STORES), list(STORES)));
                return None;
            }
            (label, fused)
        }
        other => (word(cx, other, "epilogue", STORES)?, FusedAttr::default()),
    };
    let store = match store.as_str() {
        "direct" => Epilogue::Direct,
        "vector" => Epilogue::Vector,
        "smem" => Epilogue::Smem,
        "smem_elements" => Epilogue::SmemElements,
        "tma" => Epilogue::Tma,
        _ => Epilogue::Stmatrix,
    };
    Some((store, fused))
}

fn edges(cx: &mut Ctxt, value: &Node) -> Option<Edges> {
    Some(match word(cx, value, "edges", &["whole", "guarded"])?.as_str() {
        "whole" => Edges::Whole,
        _ => Edges::Guarded,
    })
}

fn groups(cx: &mut Ctxt, value: &Node) -> Option<Groups> {
    Some(match word(cx, value, "groups", &["masked", "contiguous", "indexed"])?.as_str() {
        "masked" => Groups::Masked,
        "contiguous" => Groups::Contiguous,
        _ => Groups::Indexed,
    })
}

fn arch(cx: &mut Ctxt, value: &Node) -> Option<Arch> {
    Some(match word(cx, value, "arch", &["sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120"])?.as_str() {
        "sm_80" => Arch::Sm80,
        "sm_86" => Arch::Sm86,
        "sm_89" => Arch::Sm89,
        "sm_90" => Arch::Sm90,
        "sm_90a" => Arch::Sm90a,
        "sm_100" => Arch::Sm100,
        _ => Arch::Sm120,
    })
}

/// `tune(setting = [values], .., key = ..)`: each setting once, by its
/// path, with a list of at least one value.
fn tune(cx: &mut Ctxt, args: &Args, span: Span) -> Option<Tune> {
    use gemm_core::tune::{Setting, TuneKey, SETTINGS};
    let names: Vec<&str> = SETTINGS.iter().map(|(n, _)| *n).chain(["key"]).collect();
    let mut out = Tune { lists: Vec::new(), key: TuneKey::default(), span };
    let mut ok = true;
    let mut seen: Vec<String> = Vec::new();
    for node in args.nodes {
        let Some((path, at)) = node.path() else {
            cx.error(node.span(), format!("expected `setting = [values]` in `tune(..)`; settings: {}", list(&names)));
            ok = false;
            continue;
        };
        if seen.contains(&path) {
            cx.error(at, format!("duplicate setting `{path}` in `tune(..)`"));
            ok = false;
            continue;
        }
        seen.push(path.clone());
        let value = match node {
            Node::Assign(_, v) | Node::Path(_, v) => v.as_ref(),
            _ => {
                cx.error(node.span(), format!("`{path}` in `tune(..)` takes a list of values: `{path} = [..]`"));
                ok = false;
                continue;
            }
        };
        if path == "key" {
            match word(cx, value, "key", &["eighths", "pow2", "exact"]).as_deref() {
                Some("exact") => out.key = TuneKey::Exact,
                Some("pow2") => out.key = TuneKey::Pow2,
                Some(_) => out.key = TuneKey::Eighths,
                None => ok = false,
            }
            continue;
        }
        let Some(setting) = Setting::from_name(&path) else {
            // the nearest setting where one is near; the whole list only where none is
            let advice = match hint(&path, &names) {
                h if h.is_empty() => format!("; settings: {}", list(&names)),
                h => h,
            };
            cx.error(at, format!("unknown setting `{path}` in `tune(..)`{advice}"));
            ok = false;
            continue;
        };
        if setting == Setting::Schedule {
            // schedules by name, kept as their index in SCHEDULES
            let names: Vec<&str> = gemm_core::tune::SCHEDULES.iter().map(|(n, _)| *n).collect();
            let Node::List(items, _) = value else {
                cx.error(value.span(), format!("`schedule` in `tune(..)` takes a list of schedules: `schedule = [{}]`", names.join(", ")));
                ok = false;
                continue;
            };
            let picked: Vec<Option<Value>> =
                items.iter().map(|i| word(cx, i, "schedule", &names).and_then(|w| names.iter().position(|n| *n == w)).map(|p| p as Value)).collect();
            match picked.into_iter().collect::<Option<Vec<Value>>>() {
                Some(v) if !v.is_empty() => ok &= push_list(cx, &mut out, &path, setting, value, v),
                Some(_) => {
                    cx.error(value.span(), format!("`schedule` in `tune(..)` takes a list of schedules: `schedule = [{}]`", names.join(", ")));
                    ok = false;
                }
                None => ok = false,
            }
            continue;
        }
        if setting == Setting::Block {
            // whole block tiles, each as `block(..)` is written: `block(m = .., n = ..)`
            let form = "`block` in `tune(..)` takes a list of block tiles, each with its warp tile or not: \
                        `block = [block(m = 128, n = 256), block(m = 64, n = 32, warp(m = 64, n = 32))]`";
            let picked: Option<Vec<Value>> = match value {
                Node::List(items, _) if !items.is_empty() => items.iter().map(|i| block_tile(cx, i, form)).collect(),
                _ => {
                    cx.error(value.span(), form);
                    None
                }
            };
            match picked {
                Some(v) => ok &= push_list(cx, &mut out, &path, setting, value, v),
                None => ok = false,
            }
            continue;
        }
        let values: Option<Vec<Value>> = match value {
            Node::List(items, _) if !items.is_empty() => {
                items.iter().map(|i| if let Node::Int(v, _) = i { Some(Value::from(*v)) } else { None }).collect()
            }
            _ => None,
        };
        match values {
            Some(v) => ok &= push_list(cx, &mut out, &path, setting, value, v),
            None => {
                cx.error(value.span(), format!("`{path}` in `tune(..)` takes whole numbers in brackets: `{path} = [..]`"));
                ok = false;
            }
        }
    }
    if out.lists.is_empty() && ok {
        cx.error(span, "`tune(..)` needs at least one setting with its values, such as `tune(block.m = [64, 128])`");
        ok = false;
    }
    // `block` sets the block tile's sides and the warp tiles with them: listed with one of those, the
    // later would undo the earlier
    let listed = |s: Setting| out.lists.iter().any(|(l, _)| *l == s);
    let both: Vec<&str> = gemm_core::tune::BLOCK_SETS.iter().filter(|s| listed(**s)).map(|s| s.name()).collect();
    if listed(Setting::Block) && !both.is_empty() {
        let at = cx.span_of("tune.block");
        cx.error(at, format!("`block` sets block.m, block.n and the warp tiles with them: list either `block` or {}", both.join(", ")));
        ok = false;
    }
    // every point is checked as the crate builds and every legal one compiled and timed on a first launch
    let points = out.lists.iter().try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()));
    if points.is_none_or(|n| n > gemm_core::tune::MAX_POINTS) {
        let count = points.map_or("more than usize holds".to_string(), |n| n.to_string());
        cx.error(
            span,
            format!(
                "`tune(..)` spans {count} points, past the {} a space may hold (each legal point is compiled and timed on a \
                 first launch): list fewer values",
                gemm_core::tune::MAX_POINTS
            ),
        );
        ok = false;
    }
    ok.then_some(out)
}

/// Adds a setting's list to the space, each value once: a value listed twice
/// would be compiled and timed twice (an error at the second).
fn push_list(cx: &mut Ctxt, out: &mut Tune, path: &str, setting: gemm_core::tune::Setting, list: &Node, values: Vec<Value>) -> bool {
    if let Node::List(items, _) = list {
        if let Some(i) = (0..values.len()).find(|&i| values[..i].contains(&values[i])) {
            cx.error(items[i].span(), format!("`{path}` lists {} twice", setting.value_text(values[i])));
            return false;
        }
    }
    cx.record(format!("tune.{path}"), list.span());
    out.lists.push((setting, values));
    true
}

/// One block tile of `tune(block = [..])`: `block(m = .., n = ..)`, or
/// `block(m = .., n = .., warp(m = .., n = ..))` naming its warp tile,
/// packed as [`gemm_core::tune::block_value`] or
/// [`gemm_core::tune::block_warp_value`]; `None` (with an error at it)
/// otherwise.
fn block_tile(cx: &mut Ctxt, node: &Node, form: &str) -> Option<Value> {
    let Node::Call(name, args, at) = node else {
        cx.error(node.span(), form);
        return None;
    };
    if name != "block" {
        cx.error(*at, form);
        return None;
    }
    let mut warp = None;
    let mut sides = Vec::new();
    for arg in args {
        match arg {
            Node::Call(w, wargs, wat) if w == "warp" => {
                if warp.is_some() {
                    cx.error(*wat, "`warp(..)` given twice in a block tile");
                    return None;
                }
                warp = Some(tile_sides(cx, &wargs.iter().collect::<Vec<_>>(), *wat, "a warp tile")?);
            }
            _ => sides.push(arg),
        }
    }
    let (m, n) = tile_sides(cx, &sides, *at, "a block tile")?;
    Some(match warp {
        Some((wm, wn)) => gemm_core::tune::block_warp_value(m, n, wm, wn),
        None => gemm_core::tune::block_value(m, n),
    })
}

/// The `m = .., n = ..` of a tile in `tune(block = [..])` (`what`: "a block
/// tile" or "a warp tile"), each 1 to 65535; `None` (with an error) otherwise.
fn tile_sides(cx: &mut Ctxt, args: &[&Node], at: Span, what: &str) -> Option<(u32, u32)> {
    let example = if what == "a block tile" { "block(m = 64, n = 128)" } else { "warp(m = 64, n = 32)" };
    let (mut m, mut n) = (None, None);
    for &arg in args {
        match arg {
            Node::Assign(side, v) if side == "m" || side == "n" => {
                let Node::Int(v, vs) = v.as_ref() else {
                    cx.error(v.span(), format!("`{side}` of {what} takes a whole number"));
                    return None;
                };
                if *v == 0 || *v > 0xffff {
                    cx.error(*vs, format!("`{side}` of {what} takes 1 to 65535, not {v}"));
                    return None;
                }
                let slot = if side == "m" { &mut m } else { &mut n };
                if slot.replace(*v).is_some() {
                    cx.error(side.span(), format!("`{side}` given twice in {what}"));
                    return None;
                }
            }
            _ => {
                let takes = if what == "a block tile" { "`m`, `n` and `warp(m = .., n = ..)`" } else { "`m` and `n`" };
                cx.error(arg.span(), format!("{what} in `tune(block = [..])` takes {takes} only"));
                return None;
            }
        }
    }
    match (m, n) {
        (Some(m), Some(n)) => Some((m, n)),
        _ => {
            cx.error(at, format!("{what} in `tune(block = [..])` needs both `m` and `n`, as in `{example}`"));
            None
        }
    }
}
