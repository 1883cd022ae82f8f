//! The epilogue every atom shares: f32 accumulators, at their (row, column)
//! of C, through the fused math the spec asks for (`alpha * acc`, plus
//! `beta * C` and the bias, then the activation) to C in its type, rounded
//! to nearest even.
//! An atom hands over runs of neighbouring accumulators; a run along C's
//! contiguous side goes out as one vector store under `epilogue = vector`.
//! Under `edges = guarded` a run that crosses an edge of C is stored an
//! element at a time, each checked.
//!
//! Under `epilogue = smem` the runs go to the block's C tile in shared
//! memory instead ([`Output::into_tile`]), laid out as C is, and
//! [`copy_out`] then stores the tile to C in 16-byte chunks, a warp's
//! chunks side by side along C's rows.

use super::layout::{offset, sum, wide_offset};
use super::ptx::ptx_type;
use super::writer::Writer;
use crate::spec::{Activation, CTile, Dim, Edges, Elem, Epilogue, Groups, KernelSpec, Layout, Scale};

/// Device functions the fused math calls: conversions of 16-bit C (for
/// `beta`) and bias values to f32, and the activation.
pub fn helpers(w: &mut Writer, spec: &KernelSpec) {
    let f = spec.fused;
    let mut widen: Vec<Elem> = Vec::new();
    if f.beta {
        widen.push(spec.c.elem);
    }
    if let Some(b) = f.bias {
        widen.push(b.elem);
    }
    if widen.contains(&Elem::Bf16) {
        w.line("// bf16 -> f32 is exact: the bf16 bits are the f32's upper half");
        w.block("__device__ __forceinline__ float bf16_to_f32(unsigned short h)", |w| {
            w.line("return __uint_as_float((unsigned)h << 16);");
        });
    }
    if widen.contains(&Elem::F16) {
        w.line("// f16 -> f32 is exact");
        w.block("__device__ __forceinline__ float f16_to_f32(unsigned short h)", |w| {
            w.line("float f;");
            w.line("asm(\"cvt.f32.f16 %0, %1;\\n\" : \"=f\"(f) : \"h\"(h));");
            w.line("return f;");
        });
    }
    if let Some(a) = f.activation {
        // A bf16 C rounds away 2^-9 of each value: there tanh's own hardware
        // op (one MUFU where the sigmoid takes two) is close enough; on the
        // H100 it took `linear_hopper`'s fused epilogue from 6.0% to 4.4-4.9%.
        let tanh_op = a == Activation::GeluTanh && spec.c.elem == Elem::Bf16;
        // And Phi's tail by 2^p(|x|), p a polynomial of degree 5 (see
        // PHI_TAIL_LOG2), in place of erff, which took three times the
        // epilogue's instructions (on the H100 the fused bias and GELU cost
        // `linear_hopper` 11.6% with erff, 4.6% with gelu_tanh): seven
        // instructions and one MUFU an element by the machine code (gelu_tanh:
        // five and one), where Abramowitz and Stegun's 7.1.28 (erf = 1 - 1 /
        // p(u)^16) took twelve and one.
        let erf_fast = a == Activation::Gelu && spec.c.elem == Elem::Bf16;
        if tanh_op {
            tanh_helper(w);
        } else if matches!(a, Activation::GeluTanh | Activation::Silu) {
            fast_ops(w, &[EX2, RCP]);
        } else if erf_fast {
            fast_ops(w, &[EX2]);
        }
        let (comment, body): (&str, String) = match a {
            Activation::Relu => ("relu: max(x, 0)", "return x > 0.0f ? x : 0.0f;".into()),
            Activation::Gelu if erf_fast => (
                "gelu: x * Phi(x) (PyTorch's GELU()), Phi's tail t = Phi(-|x|) = 2^p(|x|), p fitted to log2 Phi(-|x|):\n\
                 // within 2.5e-4 of t for |x| <= 5.5 (an eighth of bf16 C's rounding), falling to 0 beyond;\n\
                 // Phi(x) = 1 - t for x >= 0 and t below, so x Phi(x) = max(x, 0) - |x| t: no cancellation for negative x",
                phi_tail_body(),
            ),
            Activation::Gelu => {
                ("gelu: x * Phi(x), the normal CDF by erf (PyTorch's GELU())", "return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));".into())
            }
            // The constants fold sqrt(8 / pi) and log2(e) into one polynomial:
            // -2u log2(e) = x (c1 + c3 x^2).
            Activation::GeluTanh if tanh_op => (
                "gelu_tanh: the tanh approximation of gelu (PyTorch's GELU(approximate='tanh'), cuBLASLt's GELU),\n\
                 // 0.5 x (1 + tanh u), u = sqrt(2 / pi) (x + 0.044715 x^3), tanh by one hardware op\n\
                 // (error 2^-11, under bf16 C's rounding)",
                "const float hx = 0.5f * x;\n\
                 return fmaf(hx, tanh_approx(x * fmaf(x * x, 0.035677408f, 0.79788456f)), hx);"
                    .into(),
            ),
            Activation::GeluTanh => (
                "gelu_tanh: the tanh approximation of gelu (PyTorch's GELU(approximate='tanh'), cuBLASLt's GELU),\n\
                 // 0.5 x (1 + tanh u) = x * sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715 x^3): no cancellation\n\
                 // for negative x, and two fast hardware ops where tanhf cost the epilogue of a\n\
                 // 1-block-per-SM kernel 8% of its time",
                "return x * rcp_approx(1.0f + ex2_approx(x * fmaf(x * x, -0.10294324f, -2.3022082f)));".into(),
            ),
            Activation::Silu => ("silu: x * sigmoid(x)", "return x * rcp_approx(1.0f + ex2_approx(x * -1.44269504f));".into()),
        };
        w.line(format!("// activation, {comment}"));
        w.block(format!("__device__ __forceinline__ float {}(float x)", a.name()), |w| body.lines().for_each(|l| w.line(l.trim_start())));
    }
    if f.any() {
        w.line("");
    }
}

/// log2 Phi(-a), a = |x|, as a polynomial c0 + c1 a + ... + c5 a^5, the
/// normal tail of the exact GELU into a bf16 C: fitted (Lawson's weighted
/// least squares, converging on the least maximum error) to log2 Phi(-a)
/// over [0, 5.5], so that 2^p is within 2.5e-4 of Phi(-a), relative, there
/// (gelu within 2.5e-4 of its value wherever that is over 1e-6; bf16
/// rounds away up to 2^-9); of odd degree with c5 < 0, p falls to -inf beyond.
pub const PHI_TAIL_LOG2: [f32; 6] = [-1.000359, -1.146261, -4.6968094e-1, -4.4599064e-2, 4.8697796e-3, -2.3325147e-4];

/// The exact GELU's body for a bf16 C: `PHI_TAIL_LOG2` by Horner's rule, one
/// FMA a coefficient, then one 2^x.
fn phi_tail_body() -> String {
    let c = PHI_TAIL_LOG2.map(|c| format!("{c:e}f"));
    let mut body = format!("const float ax = fabsf(x);\nfloat p = fmaf(ax, {}, {});\n", c[5], c[4]);
    for c in c[..4].iter().rev() {
        body += &format!("p = fmaf(ax, p, {c});\n");
    }
    body + "return fmaf(-ax, ex2_approx(p), fmaxf(x, 0.0f));"
}

/// `epilogue = smem_elements` with a 16-bit C: the C tile goes out in
/// 16-byte chunks aligned to C's own lines ([`copy_out`]).
fn realigned(spec: &KernelSpec) -> bool {
    spec.epilogue == Epilogue::SmemElements && spec.c.elem.bytes() == 2 && spec.c_tile().is_some()
}

/// 2^x and 1/x, the helpers' names and PTX ops.
const EX2: (&str, &str) = ("ex2_approx", "ex2.approx.ftz.f32");
const RCP: (&str, &str) = ("rcp_approx", "rcp.approx.ftz.f32");

/// 2^x and 1/x as single hardware ops (MUFU): without the range fix-ups of
/// `__expf` and `__fdividef`, which doubled a sigmoid's instructions. Both
/// flush subnormals; an infinite 2^x gives 1/x = 0, the sigmoid's limit.
fn fast_ops(w: &mut Writer, ops: &[(&str, &str)]) {
    let what = match ops {
        [_, _] => "2^x and 1/x, each one hardware op",
        [(name, _)] if *name == EX2.0 => "2^x, one hardware op",
        _ => "1/x, one hardware op",
    };
    w.line(format!("// {what} (approximate: held to f32 C's tolerance by the GPU tests)"));
    for &(name, op) in ops {
        w.block(format!("__device__ __forceinline__ float {name}(float x)"), |w| {
            w.line("float y;");
            w.line(format!("asm(\"{op} %0, %1;\\n\" : \"=f\"(y) : \"f\"(x));"));
            w.line("return y;");
        });
    }
}

/// tanh as one hardware op (MUFU.TANH, sm_75 and later), maximum relative
/// error 2^-11 (PTX ISA).
fn tanh_helper(w: &mut Writer) {
    w.line("// tanh, one hardware op (approximate: 2^-11, below bf16 C's rounding)");
    w.block("__device__ __forceinline__ float tanh_approx(float x)", |w| {
        w.line("float y;");
        w.line("asm(\"tanh.approx.f32 %0, %1;\\n\" : \"=f\"(y) : \"f\"(x));");
        w.line("return y;");
    });
}

/// `value` (an element of `elem` in memory) widened to f32 by the helpers above.
fn to_f32(elem: Elem, value: &str) -> String {
    match elem {
        Elem::F32 => value.to_string(),
        Elem::Bf16 => format!("bf16_to_f32({value})"),
        Elem::F16 => format!("f16_to_f32({value})"),
        Elem::F8E4M3 | Elem::F8E5M2 => unreachable!("checked: C and the bias are f32, f16 or bf16"),
    }
}

/// One accumulator on its way to C: its expression and, where the kernel
/// loaded the bias ahead of the stores ([`Output::bias_ahead`]), the
/// register that holds its bias value.
pub struct Value {
    pub acc: String,
    pub bias: Option<String>,
}

impl Value {
    /// An accumulator whose bias value (if any) is loaded where it is stored.
    pub fn acc(acc: impl Into<String>) -> Self {
        Value { acc: acc.into(), bias: None }
    }
}

/// Where an atom's accumulators go: C (and the bias) through these pointers,
/// or, under `epilogue = smem`, the block's C tile.
#[derive(Clone, Copy)]
pub struct Output<'a> {
    spec: &'a KernelSpec,
    c: &'a str,
    bias: &'a str,
    tile: Option<CTile>,
    /// A C tile that goes out in bands: the band's variable and its lines,
    /// the buffer's line `l` being the block's line `l + band * lines`.
    band: Option<(&'a str, u32)>,
}

impl<'a> Output<'a> {
    /// Stores through the kernel's own `C` and `bias` (moved to the block's batch).
    pub fn new(spec: &'a KernelSpec) -> Self {
        Output { spec, c: "C", bias: "bias", tile: None, band: None }
    }

    /// The same stores into the block's C tile in shared memory, `c_tile`
    /// (`epilogue = smem`), the fused math done on the way in.
    pub fn into_tile(self, tile: CTile) -> Self {
        Output { tile: Some(tile), ..self }
    }

    /// The same stores into band `var` (of `lines` lines) of a C tile that
    /// goes out in bands ([`CTile::bands`]).
    pub fn in_band(self, var: &'a str, lines: u32) -> Self {
        Output { band: Some((var, lines)), ..self }
    }

    /// Where a block's problem is known only inside its schedule (a
    /// stream-K unit, a TMA kernel's tile): C and the bias of problem
    /// `batch` (in scope) get pointers of their own; `of` names the unit
    /// of work in the comment.
    pub fn for_batch(spec: &'a KernelSpec, w: &mut Writer, of: &str) -> Self {
        if spec.fused.bias.is_some() {
            w.line(format!("// this {of}'s batch of C and of the bias"));
            w.declare("C_batch", "auto* const C_batch = C + batch * batch_c;");
            w.declare("bias_batch", "auto* const bias_batch = bias + batch * batch_bias;");
        } else {
            w.line(format!("// this {of}'s batch of C"));
            w.declare("C_batch", "auto* const C_batch = C + batch * batch_c;");
        }
        Output { spec, c: "C_batch", bias: "bias_batch", tile: None, band: None }
    }

    /// The band of the C tile these stores go to, if it goes out in bands.
    pub fn band(&self) -> Option<(&'a str, u32)> {
        self.band
    }

    /// The pointer C is stored through.
    pub fn c(&self) -> &str {
        self.c
    }

    /// A comment naming what the epilogue computes.
    pub fn describe(&self, w: &mut Writer, how: &str) {
        let s = self.spec;
        let round = if s.c.elem == Elem::F32 { String::new() } else { format!(", rounded to {} (nearest even)", s.c.elem.rust_name()) };
        let guard = if s.edges == Edges::Guarded { "; nothing is stored past C's edges" } else { "" };
        w.line(format!("// epilogue ({how}): {}{round}{guard}", s.formula()));
    }

    /// Under a bias, loads the values a thread's accumulators need into the
    /// registers `bias_ahead[..]` once, before the stores: the bias element
    /// is `index` (a row of C for a bias along m, a column along n) for each
    /// value of `loops` (variable, extent). Past C's edge a value is the
    /// last element's (it is never stored). Returns the registers' name, or
    /// `None` without a bias or where a thread would hold more than
    /// [`BIAS_AHEAD_MAX`] values: those load each where it is used. Where
    /// the stores loaded the bias themselves, each `(im, jn, h)` store
    /// loaded it again, and the edge check's two branches once more each:
    /// three loads an element.
    pub fn bias_ahead(&self, w: &mut Writer, index: &str, loops: &[(&'static str, u32)]) -> Option<&'static str> {
        let b = self.spec.fused.bias?;
        if loops.iter().map(|l| l.1).product::<u32>() > BIAS_AHEAD_MAX {
            return None;
        }
        let name = "bias_ahead";
        let dims: String = loops.iter().map(|l| format!("[{}]", l.1)).collect();
        let at: String = loops.iter().map(|l| format!("[{}]", l.0)).collect();
        let along = if b.along == Dim::N { "a column" } else { "a row" };
        w.line(format!("// the bias values this thread's accumulators take ({along} of C each), loaded once"));
        w.line(format!("float {name}{dims};"));
        let line = format!("{name}{at} = {};", self.bias_value(index, true));
        w.unrolled_nest(loops, &line);
        Some(name)
    }

    /// Under a 16-bit bias along n with more values than [`Self::bias_ahead`]
    /// takes (a 64x256 wgmma consumer's 64 columns), loads them ahead packed:
    /// `bias_pairs[..]`, a 4-byte register a pair of neighbouring columns
    /// from column `col` (even) on, for each value of `loops`. Where the
    /// block's columns lie inside C (if guarded) and the bias is 4-byte
    /// aligned, a pair is one load; else each value is clamped to C's last
    /// column. Returns the registers' name, or `None` where this does not
    /// apply. Loaded where the stores use them, clamped an element at a
    /// time, they cost nine instructions a value on the H100, a third of
    /// `linear_hopper`'s epilogue; and with the pairs' branch inside the
    /// stores' loop ptxas ran both sides, predicated.
    pub fn bias_pairs_ahead(&self, w: &mut Writer, col: &str, loops: &[(&'static str, u32)]) -> Option<&'static str> {
        self.spec.fused.bias.filter(|b| b.along == Dim::N && b.elem != Elem::F32)?;
        if loops.iter().map(|l| l.1).product::<u32>() > BIAS_AHEAD_MAX {
            return None;
        }
        let name = "bias_pairs";
        let dims: String = loops.iter().map(|l| format!("[{}]", l.1)).collect();
        let at: String = loops.iter().map(|l| format!("[{}]", l.0)).collect();
        let inside = match self.spec.edges {
            Edges::Guarded => format!("block_n + {} <= N && ", self.spec.block.n),
            Edges::Whole => String::new(),
        };
        let bias = self.bias;
        w.line("// the bias values this thread's accumulators take, loaded once: packed, a pair of");
        w.line("// neighbouring columns (from an even one) a register");
        w.line(format!("unsigned {name}{dims};"));
        w.block(format!("if ({inside}reinterpret_cast<unsigned long long>({bias}) % 4 == 0)"), |w| {
            w.line("// a pair in one load: the block's columns lie inside C and the bias is 4-byte aligned");
            w.unrolled_nest(loops, &format!("{name}{at} = *reinterpret_cast<const unsigned*>(&{bias}[{col}]);"));
        });
        w.block("else", |w| {
            w.line("// each value clamped to C's last column (past it, never stored)");
            let at_col = |c: &str| self.bias_index(c);
            let line = format!("{name}{at} = {bias}[{}] | (unsigned){bias}[{}] << 16;", at_col(col), at_col(&format!("{col} + 1")));
            w.unrolled_nest(loops, &line);
        });
        Some(name)
    }

    /// The value of column `col` + `e` (0 or 1) of a pair [`Self::bias_pairs_ahead`] loaded into `reg`.
    pub fn bias_from_pair(&self, reg: &str, e: usize) -> String {
        let Some(b) = self.spec.fused.bias else { unreachable!("a bias pair of a spec with a bias") };
        let half = if e == 0 { format!("(unsigned short)({reg} & 0xffff)") } else { format!("(unsigned short)({reg} >> 16)") };
        to_f32(b.elem, &half)
    }

    /// Stores `values` (f32 accumulators), neighbours along `along` from
    /// (`row`, `col`) on.
    pub fn store(&self, w: &mut Writer, row: &str, col: &str, along: Dim, values: &[Value]) {
        self.store_at(w, (row, col), None, along, values)
    }

    /// Stores `values` as [`Self::store`] does, from (`at.0`, `at.1`) of C
    /// on; under `epilogue = smem` into the C tile, from `in_tile` on (the
    /// same element, in the tile's coordinates).
    pub fn store_at(&self, w: &mut Writer, at: (&str, &str), in_tile: Option<(&str, &str)>, along: Dim, values: &[Value]) {
        let (row, col) = at;
        let n = values.len();
        let at = |i: usize| neighbour(row, col, along, i);
        // The tile holds every element, so only reading C (beta) needs the checks there.
        let checked = self.spec.edges == Edges::Guarded && (self.tile.is_none() || self.spec.fused.beta);
        if !checked {
            return self.run(w, (row, col), in_tile, along, values);
        }
        let (last_row, last_col) = at(n - 1);
        let inside = format!("{last_row} < M && {last_col} < N");
        if n == 1 {
            return w.block(format!("if ({inside})"), |w| self.run(w, (row, col), in_tile, along, values));
        }
        w.block(format!("if ({inside})"), |w| self.run(w, (row, col), in_tile, along, values));
        // (a gated pair stays whole: N is even, its gate column even)
        let step = if self.spec.fused.gated { 2 } else { 1 };
        w.block("else", |w| {
            let what = if step == 2 { "gated pairs" } else { "elements" };
            w.line(format!("// across an edge of C: the {what} inside it, one at a time"));
            for (i, v) in values.chunks(step).enumerate() {
                let (r, c) = at(i * step);
                let t = in_tile.map(|(tr, tc)| neighbour(tr, tc, along, i * step));
                let t = t.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
                w.block(format!("if ({r} < M && {c} < N)"), |w| self.run(w, (&r, &c), t, along, v));
            }
        });
    }

    /// The stores of one run, unchecked: to C at `at`, or to the C tile at `in_tile`.
    fn run(&self, w: &mut Writer, at: (&str, &str), in_tile: Option<(&str, &str)>, along: Dim, values: &[Value]) {
        let s = self.spec;
        let gated = s.fused.gated;
        debug_assert!(!gated || (along == Dim::N && values.len().is_multiple_of(2)), "gated pairs lie along n");
        // the elements of C stored: one a gated pair, at half the pair's column
        let n = if gated { values.len() / 2 } else { values.len() };
        let elem = |i: usize| neighbour(at.0, at.1, along, i);
        let c_at = |i: usize| {
            let (r, c) = if gated { neighbour(at.0, &format!("(({}) >> 1)", at.1), along, i) } else { elem(i) };
            format!("{}[{}]", self.c, wide_offset(s.c.layout, "ldc", &r, &c))
        };
        let dest = |i: usize| match (self.tile, in_tile) {
            (Some(t), Some((tr, tc))) => {
                // (a gated tile, as C, holds a column for each pair of the product's)
                let (r, c) = if gated { neighbour(tr, &format!("(({tc}) >> 1)"), along, i) } else { neighbour(tr, tc, along, i) };
                let (line, e) = if s.c.layout == Layout::RowMajor { (r.clone(), c.clone()) } else { (c.clone(), r.clone()) };
                if s.epilogue == Epilogue::Tma {
                    // the TMA store's swizzled boxes: a line of the tile, an element along it
                    return format!("c_tile[c_tile_at({line}, {e})]");
                }
                if realigned(s) {
                    // (the shift of C's own line: in a band, the block's line past the band's first)
                    let shift = match self.band {
                        Some((var, lines)) => format!("tile_shift({line} + {var} * {lines})"),
                        None => format!("tile_shift({line})"),
                    };
                    return format!("c_tile[{} + {shift}]", offset(s.c.layout, &t.ld.to_string(), &r, &c));
                }
                format!("c_tile[{}]", offset(s.c.layout, &t.ld.to_string(), &r, &c))
            }
            (Some(_), None) => unreachable!("a store into the C tile names its place there"),
            _ => c_at(i),
        };
        let contiguous = (along == Dim::N) == (s.c.layout == Layout::RowMajor);
        // the tile's runs are aligned as the kernel lays them out, C's as the launch checks
        // (a line of a realigned tile keeps 4-byte alignment only: see tile_shift)
        // (a gated C's elements are stored one at a time: C is aligned to its element only)
        let vector = (s.epilogue == Epilogue::Vector || self.tile.is_some()) && contiguous && !gated && (n == 2 || n == 4 && !realigned(s));
        let fused = s.fused.any();
        // the values to store: the accumulators as they are, or the fused math's results
        let vals: Vec<String> = match (fused, gated) {
            (_, true) => (0..n).map(|i| format!("g{i}")).collect(),
            (true, _) => (0..n).map(|i| format!("v{i}")).collect(),
            _ => values.iter().map(|v| v.acc.clone()).collect(),
        };
        let body = |w: &mut Writer| {
            if fused {
                self.fused_values(w, &elem, &c_at, values);
            }
            if gated {
                let gate = |i: usize| s.fused.activation.map_or(format!("v{i}"), |a| format!("{}(v{i})", a.name()));
                for j in 0..n {
                    w.line(format!("const float g{j} = {} * v{};  // the gate times the up-projection", gate(2 * j), 2 * j + 1));
                }
            }
            if vector {
                let first = dest(0);
                match (s.c.elem, n) {
                    (Elem::F32, _) => w.line(format!("*reinterpret_cast<float{n}*>(&{first}) = float{n}{{{}}};", vals.join(", "))),
                    (e, 2) => w.line(format!("*reinterpret_cast<unsigned*>(&{first}) = to_{t}x2({}, {});", vals[0], vals[1], t = ptx_type(e))),
                    (e, _) => w.line(format!(
                        "*reinterpret_cast<uint2*>(&{first}) = uint2{{to_{t}x2({}, {}), to_{t}x2({}, {})}};",
                        vals[0],
                        vals[1],
                        vals[2],
                        vals[3],
                        t = ptx_type(e)
                    )),
                }
            } else {
                for (i, v) in vals.iter().enumerate() {
                    let v = if s.c.elem == Elem::F32 { v.clone() } else { format!("to_{}({v})", ptx_type(s.c.elem)) };
                    w.line(format!("{} = {v};", dest(i)));
                }
            }
        };
        // the fused math names its values: a scope keeps them to this run
        if fused {
            w.block("", |w| body(w));
        } else {
            body(w);
        }
    }

    /// The bias element `index` (a row of C for a bias along m, a column
    /// along n) as f32. Guarded, an index past C's edge reads the last
    /// element instead: its value reaches no store (nothing past the edge
    /// is stored), and a load that always runs is one ptxas may repeat
    /// where it needs the register (conditional ones it kept, and spilled:
    /// 200 bytes in a 128x128 ping-pong consumer).
    fn bias_value(&self, index: &str, clamped: bool) -> String {
        let Some(b) = self.spec.fused.bias else { unreachable!("a bias value of a spec with a bias") };
        let at = if clamped { self.bias_index(index) } else { index.to_string() };
        to_f32(b.elem, &format!("{}[{at}]", self.bias))
    }

    /// Bias element `index`, guarded: clamped to C's last row or column.
    fn bias_index(&self, index: &str) -> String {
        let Some(b) = self.spec.fused.bias else { unreachable!("a bias index of a spec with a bias") };
        let extent = if b.along == Dim::N { "N" } else { "M" };
        match self.spec.edges {
            Edges::Guarded => format!("{index} < {extent} ? {index} : {extent} - 1"),
            Edges::Whole => index.to_string(),
        }
    }

    /// `v0 ..` from the accumulators: alpha, beta * C, the bias, the activation.
    fn fused_values(&self, w: &mut Writer, elem: &dyn Fn(usize) -> (String, String), c_at: &dyn Fn(usize) -> String, acc: &[Value]) {
        let s = self.spec;
        let f = s.fused;
        // the scales are read here, after any wait for the kernel before (which may have written them);
        // under scale = block the K loop has applied them
        let alpha = if f.alpha { "alpha * " } else { "" };
        let guarded = s.edges == Edges::Guarded;
        match f.scale {
            Some(Scale::Tensor) => {
                let and = if f.alpha { ", and alpha" } else { "" };
                w.line(format!("const float scale = {alpha}__ldg(scale_a) * __ldg(scale_b);  // A's and B's scales{and}"));
            }
            Some(Scale::Channel) => w.line("// A's row scale times B's column scale"),
            _ => {}
        }
        for (i, a) in acc.iter().enumerate() {
            let v = match f.scale {
                Some(Scale::Tensor) => format!("scale * {}", a.acc),
                Some(Scale::Channel) => {
                    // (guarded, a row or column past C's edge reads the last one: it reaches no store)
                    let (r, c) = elem(i);
                    let (r, c) = if guarded { (format!("{r} < M ? {r} : M - 1"), format!("{c} < N ? {c} : N - 1")) } else { (r, c) };
                    format!("{alpha}__ldg(scale_a + ({r})) * __ldg(scale_b + ({c})) * {}", a.acc)
                }
                _ => format!("{alpha}{}", a.acc),
            };
            w.line(format!("float v{i} = {v};"));
        }
        if f.beta {
            // C is read only where beta asks for it: with beta = 0 it may hold anything
            w.block("if (beta != 0.0f)", |w| {
                for i in 0..acc.len() {
                    w.line(format!("v{i} = fmaf(beta, {}, v{i});", to_f32(s.c.elem, &c_at(i))));
                }
            });
        }
        if let Some(b) = f.bias {
            for (i, a) in acc.iter().enumerate() {
                let (r, c) = elem(i);
                let at = if b.along == Dim::N { c } else { r };
                // stores into the C tile go unchecked (the tile holds every
                // element); straight to C a guarded store is checked first
                let value = a.bias.clone().unwrap_or_else(|| self.bias_value(&at, self.tile.is_some()));
                w.line(format!("v{i} += {value};"));
            }
        }
        // (gated, only the gate takes the activation: see `run`)
        if let Some(a) = f.activation.filter(|_| !f.gated) {
            for i in 0..acc.len() {
                w.line(format!("v{i} = {}(v{i});", a.name()));
            }
        }
    }
}

/// The most bias values a thread loads ahead of its stores: beside a
/// 64x256 wgmma consumer's 128 accumulators, its 64 spilled (264 bytes).
pub const BIAS_AHEAD_MAX: u32 = 32;

/// `epilogue = smem`, after the atoms' stores into the C tile: the tile to
/// C in 16-byte chunks. Thread `t` takes chunks `t`, `t + threads`, ...
/// in order along the tile's lines, so a warp's stores lie side by side in
/// C's rows (or columns) instead of scattered over 8 of them, as each mma
/// lane's own pairs are. Guarded, a chunk across an edge of C goes an
/// element at a time. Under `smem_elements` (C at any alignment) a 16-bit
/// C goes out in 16-byte chunks aligned to C's own lines instead of the
/// tile's ([`copy_out_realigned`]); an f32 C an element a thread, a warp's
/// stores side by side (a thread storing its own 16-byte chunk's elements
/// one by one would touch 16 sectors with each store).
///
/// In a band ([`Output::in_band`]) the buffer holds that band's lines of
/// the block's tile.
pub fn copy_out(w: &mut Writer, spec: &KernelSpec, out: &Output, team: &Team) {
    let Some(t) = out.tile else { unreachable!("copy_out follows stores into the C tile") };
    // the lines the buffer holds, and the block's line its first is (bands lie along a row-major C's rows)
    let (lines, block_m) = match out.band {
        Some((var, lines)) => (lines, format!("block_m + {var} * {lines}")),
        None => (t.lines, "block_m".to_string()),
    };
    if realigned(spec) {
        return copy_out_realigned(w, spec, out, team, t, (lines, &block_m));
    }
    let elements = spec.epilogue == Epilogue::SmemElements;
    // elements a thread takes a round: 16 bytes, or under smem_elements (f32) one
    let vector = if elements { 1 } else { 16 / spec.c.elem.bytes() };
    let per_line = t.line / vector;
    let chunks = lines * per_line;
    let row_major = spec.c.layout == Layout::RowMajor;
    w.line(format!("{}  // the C tile is whole", team.sync));
    let along = if row_major { "row" } else { "column" };
    let aligned = if elements { " (C at any alignment)" } else { "" };
    w.line(format!("// the C tile to C: {chunks} chunks of {vector} elements ({per_line} to a {along}), each thread one a round{aligned}"));
    // C's first column of the block and its columns: a gated C's a column for each pair of the product's
    let (block_n, n) = if spec.fused.gated { ("block_n / 2", "N / 2") } else { ("block_n", "N") };
    let body = |w: &mut Writer| {
        w.line(format!("const int line = i / {per_line};"));
        if vector == 1 {
            w.line(format!("const int e = i % {per_line};"));
        } else {
            w.line(format!("const int e = (i % {per_line}) * {vector};"));
        }
        let (row, col) = if row_major {
            (format!("{block_m} + line"), format!("{block_n} + e"))
        } else {
            ("block_m + e".to_string(), format!("{block_n} + line"))
        };
        w.line(format!("const int row = {row}, col = {col};"));
        let from = format!("c_tile[line * {} + e]", t.ld);
        let c = |r: &str, c: &str| format!("{}[{}]", out.c, wide_offset(spec.c.layout, "ldc", r, c));
        let guarded = spec.edges == Edges::Guarded;
        let (whole, line_inside, along, extent) = if row_major {
            (format!("row < M && col + {vector} <= {n}"), "row < M".to_string(), "col", n.to_string())
        } else {
            (format!("col < {n} && row + {vector} <= M"), format!("col < {n}"), "row", "M".to_string())
        };
        if elements && vector == 1 {
            let store = format!("{} = {from};", c("row", "col"));
            return if guarded { w.block(format!("if (row < M && col < {n})"), |w| w.line(store)) } else { w.line(store) };
        }
        let chunk = format!("*reinterpret_cast<uint4*>(&{}) = *reinterpret_cast<const uint4*>(&{from});", c("row", "col"));
        if !guarded {
            return w.line(chunk);
        }
        w.block(format!("if ({whole})"), |w| w.line(chunk));
        w.block(format!("else if ({line_inside})"), |w| {
            w.line("// across an edge of C: the elements inside it");
            let (r, cc) = if row_major { ("row", "col + q") } else { ("row + q", "col") };
            w.block(format!("for (int q = 0; q < {vector} && {along} + q < {extent}; ++q)"), |w| {
                w.line(format!("{} = c_tile[line * {} + e + q];", c(r, cc), t.ld));
            });
        });
    };
    chunk_rounds(w, team, chunks, body);
}

/// Thread `t` of `team` takes chunks `t`, `t + threads`, ... of `chunks`,
/// each emitted by `body` with its index `i` in scope.
fn chunk_rounds(w: &mut Writer, team: &Team, chunks: u32, body: impl Fn(&mut Writer)) {
    let threads = team.threads;
    let rounds = chunks.div_ceil(threads);
    let round = |w: &mut Writer| {
        w.line(format!("const int i = {}{};", team.thread, if rounds > 1 { format!(" + r * {threads}") } else { String::new() }));
        if chunks.is_multiple_of(threads) {
            body(w);
        } else {
            w.block(format!("if (i < {chunks})"), &body);
        }
    };
    if rounds <= UNROLL_OUT {
        return w.unrolled("r", rounds, round);
    }
    // Fully unrolled (16 rounds in `mma_autotuned`), the rounds' registers
    // made ptxas spill inside the K loop.
    w.line(format!("#pragma unroll {UNROLL_OUT}"));
    w.block(format!("for (int r = 0; r < {rounds}; ++r)"), round);
}

/// `epilogue = smem_elements` with a 16-bit C, after the atoms' stores into
/// the C tile: the tile to C in 16-byte chunks aligned to C's own lines, at
/// any alignment of C. A line of C starts `s` elements (0 to 7) past a
/// 16-byte boundary, so its chunk `j` holds the line's elements `8 j - s`
/// to `8 j - s + 7`. The stores into the tile put each line `s & 6`
/// elements along ([`tile_shift`]), so that chunk `j` starts at the tile
/// line's element `8 j - (s & 1)`: one aligned 16-byte read of the tile
/// where `s` is even, two joined by a fixed half-word shift where it is
/// odd, and one 16-byte store. (Read at `8 j - s` instead, the chunks took
/// runtime selects of 8 words each.) Two passes: first the chunks
/// inside the tile's line (`j` = 1 to line / 8 - 1, and 0 where `s` is 0),
/// thread `t` taking chunk slots `t`, `t + threads`, ... of line / 8 a
/// line, so that a warp's stores lie side by side (a warp a line, for
/// lines of 256);
/// then each line's first and last chunks, which reach past the tile's
/// line (a line of one chunk, wholly: it has no first pass), an element
/// a thread, a chunk's eight on eight threads side by side (one chunk a
/// thread, looping over its elements, a warp's stores went to 32 lines
/// at once). Interleaved, every warp's
/// round waited on a line end's element loop: on the H100 that ran the LM
/// head at 72% of its aligned neighbour against 81% for the 16-bit pairs
/// it replaced (BENCHMARKS.md). Guarded, a chunk across C's edge goes an
/// element at a time too.
fn copy_out_realigned(w: &mut Writer, spec: &KernelSpec, out: &Output, team: &Team, t: CTile, (lines, block_m): (u32, &str)) {
    // the tile's lines start on 16-byte boundaries, hold whole chunks and have room for
    // their shifts (`KernelSpec::c_tile`)
    debug_assert!(t.ld.is_multiple_of(8) && t.line.is_multiple_of(8) && t.ld >= t.line + 8, "{t:?}");
    let per = t.line / 8;
    let row_major = spec.c.layout == Layout::RowMajor;
    let ty = super::ptx::storage_type(spec.c.elem);
    let guarded = spec.edges == Edges::Guarded;
    let (line_len, ld) = (t.line, t.ld);
    w.line(format!("{}  // the C tile is whole", team.sync));
    let along = if row_major { "row" } else { "column" };
    let (origin, start, extent, inside) = if row_major {
        ((format!("{block_m} + line"), "block_n"), "block_n", "N", format!("{block_m} + line < M"))
    } else {
        (("block_m".to_string(), "block_n + line"), "block_m", "M", "block_n + line < N".to_string())
    };
    // where chunk j of the line goes: `to + e`, from the tile line's element e
    let chunk_origin = |w: &mut Writer| {
        w.line(format!("{ty}* const to = &{}[{}];", out.c, wide_offset(spec.c.layout, "ldc", &origin.0, origin.1)));
        w.line(format!("// C's {along} starts s elements past a 16-byte boundary; its chunk j starts e elements into it,"));
        w.line("// which the tile's line holds s & 6 elements further along (tile_shift)");
        w.line("const int s = (int)((reinterpret_cast<unsigned long long>(to) >> 1) & 7);");
        w.line("const int e = j * 8 - s;");
    };
    let elements = |w: &mut Writer| {
        let edge = if guarded { format!(" && {start} + q < {extent}") } else { String::new() };
        w.block(format!("for (int q = e < 0 ? 0 : e; q < e + 8 && q < {line_len}{edge}; ++q)"), |w| {
            w.line(format!("to[q] = c_tile[line * {ld} + (s & 6) + q];"));
        });
    };
    let checked = |w: &mut Writer, store: &dyn Fn(&mut Writer)| {
        if guarded {
            w.block(format!("if ({inside})"), store);
        } else {
            store(w);
        }
    };
    if per > 1 {
        w.line(format!("// the C tile to C in 16-byte chunks aligned to each {along} of C (C at any alignment): first those inside a {along}"));
        w.line(format!("// (chunks 1 to {}, and 0 where the {along} starts on a boundary), each thread one a round", per - 1));
        let body = |w: &mut Writer| {
            w.line(format!("const int line = i / {per}, j = i % {per};"));
            checked(w, &|w: &mut Writer| {
                chunk_origin(w);
                let chunk = |w: &mut Writer| {
                    w.line("// the chunk lies at the tile line's element 8 j - (s & 1): the tile's chunk j, or its last");
                    w.line("// element of chunk j - 1 and the first seven of chunk j");
                    w.line(format!("const uint4* const from = reinterpret_cast<const uint4*>(&c_tile[line * {ld}]) + j;"));
                    w.block("if ((s & 1) == 0)", |w| w.line("*reinterpret_cast<uint4*>(to + e) = from[0];"));
                    w.block("else", |w| {
                        w.line("const uint4 lo = from[-1], hi = from[0];");
                        w.line("*reinterpret_cast<uint4*>(to + e) = make_uint4((lo.w >> 16) | (hi.x << 16), (hi.x >> 16) | (hi.y << 16), (hi.y >> 16) | (hi.z << 16), (hi.z >> 16) | (hi.w << 16));");
                    });
                };
                w.block("if (e >= 0)", |w| {
                    if !guarded {
                        return chunk(w);
                    }
                    w.block(format!("if ({start} + e + 8 <= {extent})"), chunk);
                    w.block("else", |w| {
                        w.line("// across C's edge: element by element");
                        elements(w);
                    });
                });
            });
        };
        // (one round is written in place: a scope of its own keeps its names from the next pass's)
        match (lines * per).div_ceil(team.threads) {
            1 => w.block("", |w| chunk_rounds(w, team, lines * per, body)),
            _ => chunk_rounds(w, team, lines * per, body),
        }
    }
    w.line(format!("// then each {along}'s first and last chunks (past the tile's line on one side): an element a thread, the"));
    w.line("// eight places of a chunk on eight threads side by side, so that a warp's stores fill whole sectors");
    let ends = |w: &mut Writer| {
        w.line(format!("const int line = i >> 4, j = ((i >> 3) & 1) * {};", t.line / 8));
        checked(w, &|w: &mut Writer| {
            chunk_origin(w);
            w.line("const int q = e + (i & 7);");
            let edge = if guarded { format!(" && {start} + q < {extent}") } else { String::new() };
            // (a line that starts on a boundary had its first chunk whole, above, where lines hold more
            // than one; a line of one chunk has no first pass, and goes here whole)
            let past = if per > 1 { "s > 0 && " } else { "" };
            w.block(format!("if ({past}q >= 0 && q < {line_len}{edge})"), |w| {
                w.line(format!("to[q] = c_tile[line * {ld} + (s & 6) + q];"));
            });
        });
    };
    chunk_rounds(w, team, lines * 16, ends);
}

/// `epilogue = smem_elements` with a 16-bit C: `tile_shift(line)`, how far
/// along the C tile holds its line `line`. C's line starts `s` elements (0
/// to 7) past a 16-byte boundary; the tile's line starts `s & 6` elements
/// along (an even shift keeps the atoms' 4-byte pairs whole), so that
/// [`copy_out`] reads each of C's 16-byte chunks as one chunk of the tile,
/// or two shifted by one element. Nothing without such a tile.
pub fn tile_shift(w: &mut Writer, spec: &KernelSpec, out: &Output) {
    if !realigned(spec) {
        return;
    }
    let origin = if spec.c.layout == Layout::RowMajor { ("block_m + line", "block_n") } else { ("block_m", "block_n + line") };
    let line_start = format!("&{}[{}]", out.c, wide_offset(spec.c.layout, "ldc", origin.0, origin.1));
    w.line("// how far along the tile holds each line of C: s & 6 elements, s where C's line starts past");
    w.line("// a 16-byte boundary, so that C's 16-byte chunks read whole from the tile (or two, shifted by one)");
    w.line(format!("const auto tile_shift = [&](int line) {{ return (int)((reinterpret_cast<unsigned long long>({line_start}) >> 1) & 6); }};"));
}

/// The threads that share a C tile: every thread of the block, or the
/// consumer warpgroups of a specialized kernel (the producer never comes
/// to their barriers).
pub struct Team {
    /// The statement that waits for all of them.
    pub sync: &'static str,
    /// This thread's index among them (an expression).
    pub thread: String,
    /// The first of them: the thread that issues a TMA store.
    pub leader: String,
    pub threads: u32,
}

impl Team {
    /// Every thread of a block of `threads`.
    pub fn block(threads: u32) -> Self {
        Team { sync: "__syncthreads();", thread: "threadIdx.x".into(), leader: "threadIdx.x == 0".into(), threads }
    }
}

/// `epilogue = tma`: where element `e` of line `l` of the C tile lies, in
/// boxes of lines of up to 128 bytes in the swizzle of their width, as the
/// TMA store reads them: 16-byte chunks of a box's line XOR the line's
/// 128-byte row of the box mod the chunks a line holds (128-byte lines: the
/// line's index mod 8; 64-byte: half of it mod 4; 32-byte: a quarter of it
/// mod 2; 16-byte lines are not swizzled). A warp's pairs along 8 lines
/// land in 8 different chunks of the banks.
pub fn c_tile_at_fn(w: &mut Writer, spec: &KernelSpec) {
    let Some(t) = spec.c_tile() else { return };
    let (per_box, chunk) = (spec.c_tile_box(), 16 / spec.c.elem.bytes());
    let bytes = per_box * spec.c.elem.bytes();
    let swizzle = spec.c_tile_swizzle();
    w.line(format!(
        "// the C tile for the TMA store: {} box(es) of {} lines of {per_box} elements ({bytes} bytes), each line's",
        t.line / per_box / t.parts,
        t.lines
    ));
    let chunk_at = if swizzle == 0 {
        // (a line is one chunk)
        w.line(format!("// 16-byte chunk ({chunk} elements) as it is: lines of 16 bytes take no swizzle"));
        String::new()
    } else {
        let (row, chunks) = (128 / bytes, bytes / 16);
        let line = if row == 1 { "line".to_string() } else { format!("(line / {row})") };
        let which = if row == 1 { "the line's index mod 8".to_string() } else { format!("the line's index / {row} mod {chunks}") };
        w.line(format!("// 16-byte chunks ({chunk} elements) swizzled by {which} (the {swizzle}-byte swizzle)"));
        format!("((((e % {per_box}) / {chunk}) ^ ({line} % {chunks})) * {chunk}) + ")
    };
    w.block("__device__ __forceinline__ int c_tile_at(int line, int e)", |w| {
        w.line(format!("return (e / {per_box}) * {} + line * {per_box} + {chunk_at}e % {chunk};", t.lines * per_box));
    });
    w.line("");
}

/// `epilogue = tma`, after the stores into the C tile: each writer makes
/// its stores visible to the copy engine, and once all have, the team's
/// leader sends the boxes to C by TMA stores, one bulk group it waits on
/// before the C tile is written again. A TMA store is to leave out what
/// lies past C's edges, but along C's contiguous side it wrote past the
/// edge into the padding of the line (up to the next 16-byte boundary) on
/// the H100. So under guarded edges a tile goes out by TMA where its
/// lines end inside C or C's lines end on a 16-byte boundary (the edge
/// across the lines is clipped line by line: the GPU tests' guard lines
/// past C's last stay untouched), and element by element, each checked,
/// where a line's end falls inside a 16-byte chunk of C.
///
/// Under `groups = contiguous` C is one matrix whose rows the groups
/// share out, and a tile's rows past its group's last (`M` in the tile)
/// are the next group's: such a tile goes out by the threads, in 16-byte
/// chunks where its lines allow, its group's rows only. A gated C holds a
/// column for each pair of the product's: the tile's lines start at
/// `block_n / 2`, C's end at `N / 2`.
///
/// Under `part` (its variable and width) the buffer holds part `part` of a
/// C tile that goes out in parts, `width` elements of each line from `part *
/// width` on.
pub fn tma_store_out(w: &mut Writer, spec: &KernelSpec, out: &Output, team: &Team, part: Option<(&str, u32)>) {
    let Some(t) = spec.c_tile() else { unreachable!("a TMA store follows stores into the C tile") };
    let per_box = spec.c_tile_box();
    let box_elems = t.lines * per_box;
    let row_major = spec.c.layout == Layout::RowMajor;
    // C's columns: a gated C's a column for each pair of the product's
    let (block_n, n, bn) = if spec.fused.gated { ("block_n / 2", "N / 2", spec.block.n / 2) } else { ("block_n", "N", spec.block.n) };
    let (first, second) = if row_major { (block_n, "block_m") } else { ("block_m", block_n) };
    // where the buffer's lines start along C's, and how long they are
    let (first, line) = match part {
        Some((var, width)) => (format!("{first} + {var} * {width}"), width),
        None => (first.to_string(), t.line),
    };
    // (contiguous groups' C is one matrix, the batch's problems its rows)
    let groups = spec.groups == Some(Groups::Contiguous);
    let batch = if groups { "0" } else { "batch" };
    let whole = if part.is_some() { "the part is whole" } else { "the C tile is whole" };
    w.line("fence_proxy_async();  // this thread's stores into the C tile, seen by the copy engine");
    w.line(format!("{}  // {whole}", team.sync));
    let stores = |w: &mut Writer| {
        w.block(format!("if ({})", team.leader), |w| {
            let what = if part.is_some() { "this part of the C tile" } else { "the C tile" };
            w.line(format!("// {what} to C: {} TMA store(s) of a box of {} x {per_box}", line / per_box, t.lines));
            for b in 0..line / per_box {
                let src = if b == 0 { "c_tile_addr".to_string() } else { format!("c_tile_addr + {}", b * box_elems * spec.c.elem.bytes()) };
                let c0 = if b == 0 { first.clone() } else { format!("{first} + {}", b * per_box) };
                w.line(format!("tma_store(tmap_c, {src}, {c0}, {second}, {batch});"));
            }
            w.line("bulk_commit();");
        });
    };
    if spec.edges != Edges::Guarded {
        return stores(w);
    }
    // C's contiguous side: its extent, and the tile's along it
    let (extent, origin, side) = if row_major { (n, block_n, bn) } else { ("M", "block_m", spec.block.m) };
    let chunk = 16 / spec.c.elem.bytes();
    let lines_end = format!("{origin} + {side} <= {extent} || {extent} % {chunk} == 0");
    let c_at = |row: &str, col: &str| format!("{}[{}]", out.c, wide_offset(spec.c.layout, "ldc", row, col));
    let by_element = |w: &mut Writer| {
        w.block(format!("for (int i = {}; i < {}; i += {})", team.thread, t.lines * line, team.threads), |w| {
            w.line(format!("const int line = i / {line}, e = i % {line};"));
            let along = format!("{first} + e");
            let (row, col) = if row_major { ("block_m + line", along.as_str()) } else { (along.as_str(), "block_n + line") };
            w.line(format!("const int row = {row}, col = {col};"));
            w.block(format!("if (row < M && col < {n})"), |w| {
                w.line(format!("{} = c_tile[c_tile_at(line, e)];", c_at("row", "col")));
            });
        });
    };
    if groups {
        // (the rules: a row-major C)
        w.line(format!(
            "// by TMA where the tile's rows are its group's (M: the group's end) and its lines end inside C or C's lines end on a 16-byte boundary ({chunk} elements)"
        ));
        w.block(format!("if (block_m + {} <= M && ({lines_end}))", spec.block.m), stores);
        w.block(format!("else if ({lines_end})"), |w| {
            w.line("// across the group's last row: the group's rows, by the threads in 16-byte chunks");
            let per_line = line / chunk;
            w.block(format!("for (int i = {}; i < {}; i += {})", team.thread, t.lines * per_line, team.threads), |w| {
                w.line(format!("const int line = i / {per_line}, e = (i % {per_line}) * {chunk};"));
                w.line(format!("const int row = block_m + line, col = {first} + e;"));
                w.block(format!("if (row < M && col < {n})"), |w| {
                    w.line(format!(
                        "*reinterpret_cast<uint4*>(&{}) = *reinterpret_cast<const uint4*>(&c_tile[c_tile_at(line, e)]);",
                        c_at("row", "col")
                    ));
                });
            });
        });
    } else {
        w.line(format!("// by TMA where the tile's lines end inside C or C's lines end on a 16-byte boundary ({chunk} elements)"));
        w.block(format!("if ({lines_end})"), stores);
    }
    w.block("else", |w| {
        w.line("// across the end of C's lines, inside a 16-byte chunk: element by element, each checked");
        by_element(w);
    });
}

/// Rounds of [`copy_out`] unrolled at a time.
const UNROLL_OUT: u32 = 4;

/// (row, column) of the `i`-th neighbour along `along` from (`row`, `col`).
fn neighbour(row: &str, col: &str, along: Dim, i: usize) -> (String, String) {
    let i = (i > 0).then(|| i.to_string());
    match along {
        Dim::N => (row.to_string(), sum(col, &[i])),
        Dim::M => (sum(row, &[i]), col.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::*;

    /// A bf16 C tile of 64 x 128 stored under `smem_elements`.
    fn spec(layout: Layout, edges: Edges) -> KernelSpec {
        let bf16 = |layout| Operand { elem: Elem::Bf16, layout };
        KernelSpec {
            name: "t".into(),
            a: bf16(Layout::RowMajor),
            b: bf16(Layout::ColMajor),
            c: bf16(layout),
            block: Block { m: 64, n: 128, k: Some(64), threads: 256, min_blocks: None },
            warp: Some(Warp { m: 32, n: 64, m_iters: 1, n_iters: 1 }),
            thread: None,
            atom: Atom::Mma { m: 16, n: 8, k: 16 },
            staging: Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 1 },
            specialize: None,
            swizzle: Swizzle::Xor,
            raster: Raster::Row,
            persistent: None,
            cluster: None,
            epilogue: Epilogue::SmemElements,
            fused: Fused::default(),
            edges,
            groups: None,
            arch: Arch::Sm80,
        }
    }

    /// `copy_out` under `smem_elements` compiled as plain C++ by the host
    /// compiler and run thread by thread (it has no barrier past its first
    /// line) over C tiles at every alignment of C's lines (odd leading
    /// dimensions and offsets, either layout), whole and across C's edges:
    /// every element of C the tile covers holds the tile's value, and
    /// nothing else in C's buffer is written.
    #[test]
    fn a_c_tile_goes_to_c_at_any_alignment_and_nowhere_else() {
        // (M, N, ldc past a line's length, offset into the buffer, block_m, block_n)
        let guarded = [(100, 300, 1, 1, 64, 256), (200, 300, 7, 3, 0, 128), (70, 130, 3, 5, 64, 0), (64, 128, 8, 0, 0, 0), (90, 200, 3, 7, 0, 128)];
        let whole = [(128, 256, 3, 1, 64, 128), (64, 128, 3, 6, 0, 0), (64, 128, 8, 0, 0, 0)];
        // a row-major C also in two bands of 32 rows, each through a buffer of its own height
        // (as a Hopper kernel's C tile goes out where the whole would leave its stages too little room)
        for (layout, bands) in [(Layout::RowMajor, 1), (Layout::RowMajor, 2), (Layout::ColMajor, 1)] {
            for (edges, cases) in [(Edges::Guarded, &guarded[..]), (Edges::Whole, &whole[..])] {
                let s = spec(layout, edges);
                let tile = CTile { bands, ..s.c_tile().unwrap() };
                let band_lines = tile.lines / bands;
                let mut w = Writer::default();
                w.block(
                    "static void store_tile(unsigned short* C, int M, int N, int ldc, int block_m, int block_n, int band, const unsigned short* c_tile)",
                    |w| {
                        let out = Output::new(&s).into_tile(tile);
                        let out = if bands > 1 { out.in_band("band", band_lines) } else { out };
                        copy_out(w, &s, &out, &Team::block(256));
                    },
                );
                let (tile_m, tile_n) = (s.block.m, s.block.n);
                let mut body = String::new();
                for (i, &(m, n, extra, offset, bm, bn)) in cases.iter().enumerate() {
                    // column-major C: its lines are columns, m long
                    let (lines, ldc) = if layout == Layout::RowMajor { (m, n + extra) } else { (n, m + extra) };
                    let size = offset + lines * ldc + 64;
                    let (rc, cc) = if layout == Layout::RowMajor { ("line_at", "along") } else { ("along", "line_at") };
                    body += &format!(
                        "  {{ unsigned short* buf = (unsigned short*)aligned_alloc(64, {size} * 2 + 64);\n\
                         for (int i = 0; i < {size}; ++i) buf[i] = 0xDEAD;\n\
                         unsigned short* tile = (unsigned short*)aligned_alloc(64, {} * 2);\n\
                         for (int i = 0; i < {}; ++i) tile[i] = (unsigned short)((i * 7 + 1) & 0x7fff);\n\
                         for (int band = 0; band < {bands}; ++band)\n\
                           for (unsigned t = 0; t < 256; ++t) {{ threadIdx.x = t; store_tile(buf + {offset}, {m}, {n}, {ldc}, {bm}, {bn}, band, tile); }}\n\
                         int bad = 0;\n\
                         for (int i = 0; i < {size}; ++i) {{\n\
                           int p = i - {offset}; int line_at = p / {ldc}, along = p % {ldc};\n\
                           int r = {rc}, c = {cc};\n\
                           bool in_c = p >= 0 && line_at < {lines} && r < {m} && c < {n};\n\
                           bool in_tile = r >= {bm} && r < {bm} + {tile_m} && c >= {bn} && c < {bn} + {tile_n};\n\
                           // (in bands, every band from the same buffer: the tile's line modulo a band's)\n\
                           int tl = ({tile_line}) % {band_lines}, te = {tile_e};\n\
                           // the tile holds its line (s & 6) elements along, s where C's line starts past 16 bytes\n\
                           unsigned long long line_start = (unsigned long long)(buf + {offset} + {line_start});\n\
                           int shift = (int)((line_start >> 1) & 6);\n\
                           unsigned short want = in_c && in_tile ? tile[tl * {ld} + shift + te] : 0xDEAD;\n\
                           if (buf[i] != want) ++bad; }}\n\
                         std::printf(\"case {i}: %d\\n\", bad); free(buf); free(tile); }}\n",
                        tile.lines * tile.ld,
                        tile.lines * tile.ld,
                        ld = tile.ld,
                        tile_line = if layout == Layout::RowMajor { format!("r - {bm}") } else { format!("c - {bn}") },
                        tile_e = if layout == Layout::RowMajor { format!("c - {bn}") } else { format!("r - {bm}") },
                        line_start = if layout == Layout::RowMajor { format!("r * {ldc} + {bn}") } else { format!("{bm} + c * {ldc}") },
                    );
                }
                let shim = "#include <cstdio>\n#include <cstdlib>\nstruct uint4 { unsigned x, y, z, w; };\n\
                    static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }\n\
                    #define __device__\n#define __forceinline__ inline\nstruct Dim3 { unsigned x, y, z; };\nstatic Dim3 threadIdx;\n\
                    static void __syncthreads() {}\n";
                let program = format!("{shim}{}\nint main() {{\n{body}}}\n", w.finish());
                let what = format!("{layout:?} {edges:?} in {bands} band(s)");
                let text = crate::cuda::host::run_cpp(&format!("c-tile-{layout:?}-{edges:?}-{bands}"), &program);
                assert_eq!(text.lines().count(), cases.len(), "{what}: {text}");
                for line in text.lines() {
                    assert!(line.ends_with(": 0"), "{what}, {line} elements wrong");
                }
            }
        }
    }

    /// x Phi(x) as the generated exact GELU computes it for a bf16 C, in f32
    /// (the host's exp2 for the hardware's 2^x, whose error is 2^-22).
    fn gelu_by_the_tail(x: f32) -> f32 {
        let ax = x.abs();
        let p = PHI_TAIL_LOG2[..5].iter().rev().fold(PHI_TAIL_LOG2[5], |p, &c| ax.mul_add(p, c));
        (-ax).mul_add(p.exp2(), x.max(0.0))
    }

    /// Phi(-a) at a = 2ih for i = 0..=n/2, integrated by Simpson's rule from
    /// a = nh down (the tail past it by Mills' ratio, phi(a) / a).
    fn phi_tail_table(h: f64, n: usize) -> Vec<f64> {
        let phi = |a: f64| (-0.5 * a * a).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let end = n as f64 * h;
        let mut tail = vec![phi(end) / end];
        for i in (0..n).step_by(2).rev() {
            let a = i as f64 * h;
            tail.push(tail.last().unwrap() + h / 3.0 * (phi(a) + 4.0 * phi(a + h) + phi(a + 2.0 * h)));
        }
        tail.reverse();
        tail
    }

    /// The fitted tail's promise: within 2.5e-4 of Phi(-a) up to a = 5.5,
    /// so gelu within that (and f32's rounding) of its value wherever the
    /// value passes 1e-6; past 5.5 the tail falls, monotonically, to 0.
    #[test]
    fn the_exact_gelus_fitted_tail_stays_within_its_bound() {
        let h = 1.0 / 4096.0;
        let table = phi_tail_table(h, 12 * 4096);
        let (mut worst_tail, mut worst_gelu) = (0.0f64, 0.0f64);
        for (i, &t) in table.iter().enumerate() {
            let a = 2.0 * h * i as f64;
            for x in [a, -a] {
                let exact = x * if x >= 0.0 { 1.0 - t } else { t };
                let ours = f64::from(gelu_by_the_tail(x as f32));
                if exact.abs() > 1e-6 {
                    worst_gelu = worst_gelu.max((ours / exact - 1.0).abs());
                } else {
                    assert!((ours - exact).abs() < 1e-7, "gelu({x}) = {ours}, exactly {exact}");
                }
            }
            if a <= 5.5 {
                let p = PHI_TAIL_LOG2.iter().rev().fold(0.0f64, |p, &c| a * p + f64::from(c));
                worst_tail = worst_tail.max((p.exp2() / t - 1.0).abs());
            }
        }
        assert!(worst_tail < 2.5e-4, "Phi's tail off by {worst_tail:e} (relative) up to 5.5");
        assert!(worst_gelu < 2.6e-4, "gelu off by {worst_gelu:e} (relative) where over 1e-6");
        let mut last = 1.0f32;
        for a in (0..20_000).map(|i| 5.5 + i as f32 * 0.5) {
            let t = (-gelu_by_the_tail(-a) / a).max(0.0);
            assert!(t <= last, "the tail rose at {a}: {t} after {last}");
            last = t;
        }
        assert_eq!(last, 0.0);
    }

    /// `epilogue = tma`: the C tile's `c_tile_at`, compiled as host C++, puts
    /// every element of tiles 8 to 256 columns wide (bf16 and f32, one box
    /// and several) where the TMA store reads it: the box's line in the
    /// copy engine's swizzle of its width (the 16-byte chunk's bits 4-6 of
    /// the byte address XOR bits 7-9, two or one of them for 64- and
    /// 32-byte lines, none for 16-byte lines), each place once; and a
    /// warp's stores of bf16 pairs along 8 lines (4 lanes a line) hit 32
    /// different banks.
    #[test]
    fn a_tma_stores_c_tile_lies_in_the_swizzle_of_its_box_width_without_bank_conflicts() {
        for (elem, n, box_bytes) in [
            (Elem::Bf16, 256, 128),
            (Elem::Bf16, 64, 128),
            (Elem::Bf16, 96, 64),
            (Elem::Bf16, 32, 64),
            (Elem::Bf16, 16, 32),
            (Elem::Bf16, 8, 16),
            (Elem::F32, 8, 32),
            (Elem::F32, 32, 128),
        ] {
            let mut s = spec(Layout::RowMajor, Edges::Guarded);
            (s.c.elem, s.block.n, s.epilogue) = (elem, n, Epilogue::Tma);
            assert_eq!(s.c_tile_box() * elem.bytes(), box_bytes, "{elem:?} x {n}");
            assert_eq!(s.c_tile_swizzle(), if box_bytes == 16 { 0 } else { box_bytes });
            let mut w = Writer::default();
            c_tile_at_fn(&mut w, &s);
            let program = format!(
                r#"#include <cstdio>
#define __device__
#define __forceinline__ inline
{}
int main() {{
    const int lines = {lines}, line = {n}, bytes = {bytes}, box = {box_bytes}, per_box = box / bytes, swizzle = {swizzle};
    static int seen[1 << 16];
    for (int l = 0; l < lines; ++l)
        for (int e = 0; e < line; ++e) {{
            const int at = c_tile_at(l, e);
            const int raw = l * box + (e % per_box) * bytes;
            const int rows = swizzle / 16 - 1;  // the chunk bits the row's bits XOR
            const int hw = (e / per_box) * lines * box + (swizzle ? raw ^ (((raw >> 7) & rows) << 4) : raw);
            if (at * bytes != hw) {{ std::printf("at %d %d: %d, the swizzle's %d\n", l, e, at * bytes, hw); return 0; }}
            if (seen[at]++) {{ std::printf("twice %d\n", at); return 0; }}
        }}
    if (bytes == 2)
        for (int l0 = 0; l0 < lines; l0 += 8)
            for (int c0 = 0; c0 < line; c0 += 8) {{
                unsigned banks = 0;
                for (int lane = 0; lane < 32; ++lane) banks |= 1u << (c_tile_at(l0 + lane / 4, c0 + lane % 4 * 2) * 2 / 4 % 32);
                if (banks != 0xffffffffu) {{ std::printf("conflicts at %d %d\n", l0, c0); return 0; }}
            }}
    std::printf("ok\n");
}}
"#,
                w.finish(),
                lines = s.block.m,
                bytes = elem.bytes(),
                swizzle = s.c_tile_swizzle(),
            );
            let out = crate::cuda::host::run_cpp(&format!("c-tile-{n}-{}", elem.bytes()), &program);
            assert_eq!(out.trim(), "ok", "{elem:?} x {n}");
        }
    }
}
