//! The epilogue every atom shares: f32 accumulators, at their (row, column)
//! of C, through the fused math the spec asks for (`alpha * acc`, plus
//! `beta * C` and the bias, then the activation) to C in its type, rounded
//! to nearest even.
//! An atom hands over runs of neighbouring accumulators; a run along C's
//! contiguous side goes out as one vector store under `epilogue = vector`.
//! Under `edges = guarded` a run that crosses an edge of C is stored an
//! element at a time, each checked.

use super::layout::{offset, sum};
use super::ptx::ptx_type;
use super::writer::Writer;
use crate::spec::{Activation, Dim, Edges, Elem, Epilogue, KernelSpec, Layout};

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
        let (comment, body) = match a {
            Activation::Relu => ("relu: max(x, 0)", "return x > 0.0f ? x : 0.0f;"),
            Activation::Gelu => {
                ("gelu: x * Phi(x), the normal CDF by erf (PyTorch's GELU())", "return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));")
            }
            Activation::GeluTanh => (
                "gelu_tanh: the tanh approximation of gelu (PyTorch's GELU(approximate='tanh'), cuBLASLt's GELU),\n\
                 // 0.5 x (1 + tanh u) written as x * sigmoid(2u): one fast exp and a division, where tanhf\n\
                 // cost the epilogue of a 1-block-per-SM kernel 8% of its time (both agree to f32 rounding)",
                "return __fdividef(x, 1.0f + __expf(-1.5957691216057308f * (x + 0.044715f * x * x * x)));",
            ),
            Activation::Silu => ("silu: x * sigmoid(x)", "return x / (1.0f + __expf(-x));"),
        };
        w.line(format!("// activation, {comment}"));
        w.block(format!("__device__ __forceinline__ float {}(float x)", a.name()), |w| w.line(body));
    }
    if f.any() {
        w.line("");
    }
}

/// `value` (an element of `elem` in memory) widened to f32 by the helpers above.
fn to_f32(elem: Elem, value: &str) -> String {
    match elem {
        Elem::F32 => value.to_string(),
        Elem::Bf16 => format!("bf16_to_f32({value})"),
        Elem::F16 => format!("f16_to_f32({value})"),
    }
}

/// Where an atom's accumulators go: C (and the bias) through these pointers.
pub struct Output<'a> {
    spec: &'a KernelSpec,
    c: &'a str,
    bias: &'a str,
}

impl<'a> Output<'a> {
    /// Stores through the kernel's own `C` and `bias` (moved to the block's batch).
    pub fn new(spec: &'a KernelSpec) -> Self {
        Output { spec, c: "C", bias: "bias" }
    }

    /// Under stream-K a unit's batch is known only inside the unit: C and the
    /// bias of batch `batch` (in scope) get pointers of their own.
    pub fn for_unit(spec: &'a KernelSpec, w: &mut Writer) -> Self {
        if spec.fused.bias.is_some() {
            w.line("// this unit's batch of C and of the bias");
            w.line("auto* const C_batch = C + batch * batch_c;");
            w.line("auto* const bias_batch = bias + batch * batch_bias;");
        } else {
            w.line("// this unit's batch of C");
            w.line("auto* const C_batch = C + batch * batch_c;");
        }
        Output { spec, c: "C_batch", bias: "bias_batch" }
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

    /// Stores `values` (f32 expressions), neighbours along `along` from
    /// (`row`, `col`) on.
    pub fn store(&self, w: &mut Writer, row: &str, col: &str, along: Dim, values: &[String]) {
        let n = values.len();
        let at = |i: usize| neighbour(row, col, along, i);
        if self.spec.edges != Edges::Guarded {
            return self.run(w, row, col, along, values);
        }
        let (last_row, last_col) = at(n - 1);
        let inside = format!("{last_row} < M && {last_col} < N");
        if n == 1 {
            return w.block(format!("if ({inside})"), |w| self.run(w, row, col, along, values));
        }
        w.block(format!("if ({inside})"), |w| self.run(w, row, col, along, values));
        w.block("else", |w| {
            w.line("// across an edge of C: the elements inside it, one at a time");
            for (i, v) in values.iter().enumerate() {
                let (r, c) = at(i);
                w.block(format!("if ({r} < M && {c} < N)"), |w| self.run(w, &r, &c, along, std::slice::from_ref(v)));
            }
        });
    }

    /// The stores of one run, unchecked.
    fn run(&self, w: &mut Writer, row: &str, col: &str, along: Dim, values: &[String]) {
        let s = self.spec;
        let n = values.len();
        let elem = |i: usize| neighbour(row, col, along, i);
        let c_at = |i: usize| {
            let (r, c) = elem(i);
            format!("{}[{}]", self.c, offset(s.c.layout, "ldc", &r, &c))
        };
        let contiguous = (along == Dim::N) == (s.c.layout == Layout::RowMajor);
        let vector = s.epilogue == Epilogue::Vector && contiguous && matches!(n, 2 | 4);
        let fused = s.fused.any();
        // the values to store: the accumulators as they are, or the fused math's results
        let vals: Vec<String> = if fused { (0..n).map(|i| format!("v{i}")).collect() } else { values.to_vec() };
        let body = |w: &mut Writer| {
            if fused {
                self.fused_values(w, &elem, &c_at, values);
            }
            if vector {
                let first = c_at(0);
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
                    w.line(format!("{} = {v};", c_at(i)));
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

    /// `v0 ..` from the accumulators: alpha, beta * C, the bias, the activation.
    fn fused_values(&self, w: &mut Writer, elem: &dyn Fn(usize) -> (String, String), c_at: &dyn Fn(usize) -> String, acc: &[String]) {
        let s = self.spec;
        let f = s.fused;
        for (i, a) in acc.iter().enumerate() {
            w.line(format!("float v{i} = {};", if f.alpha { format!("alpha * {a}") } else { a.clone() }));
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
            for i in 0..acc.len() {
                let (r, c) = elem(i);
                let at = if b.along == Dim::N { c } else { r };
                w.line(format!("v{i} += {};", to_f32(b.elem, &format!("{}[{at}]", self.bias))));
            }
        }
        if let Some(a) = f.activation {
            for i in 0..acc.len() {
                w.line(format!("v{i} = {}(v{i});", a.name()));
            }
        }
    }
}

/// (row, column) of the `i`-th neighbour along `along` from (`row`, `col`).
fn neighbour(row: &str, col: &str, along: Dim, i: usize) -> (String, String) {
    let i = (i > 0).then(|| i.to_string());
    match along {
        Dim::N => (row.to_string(), sum(col, &[i])),
        Dim::M => (sum(row, &[i]), col.to_string()),
    }
}
