//! The function signature: operand names, element types and layouts.
//!
//! `fn name(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);`

use gemm_core::spec::{Elem, Layout, Operand};
use proc_macro2::TokenStream;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, GenericArgument, Ident, Pat, PathArguments, Type, Visibility};

use crate::ctxt::Ctxt;

pub struct Sig {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ident: Ident,
    /// A, B and C: the name each was given, what it holds, and its type as written.
    pub params: Vec<(Ident, Operand, Type)>,
    /// The bias vector, where a fourth parameter declares one: its name, element type and type as written.
    pub bias: Option<(Ident, Elem, Type)>,
}

const USAGE: &str = "declare `fn name(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);` (element f32, f16 or bf16; \
RowMajor or ColMajor), with a fourth parameter `bias: Bias<f32>` where the epilogue adds a bias";

pub fn parse(cx: &mut Ctxt, item: TokenStream) -> Option<Sig> {
    let f: syn::ForeignItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => {
            cx.error(e.span(), format!("#[gemm_kernel] goes on a function signature without a body: {USAGE}"));
            return None;
        }
    };
    let sig = &f.sig;
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        cx.error(ty.span(), "a kernel signature returns nothing; its launcher returns `Result<(), GemmError>`");
    }
    if !sig.generics.params.is_empty() {
        cx.error(sig.generics.span(), "a kernel signature takes no generics: element types and layouts are written out");
    }
    if !matches!(sig.inputs.len(), 3 | 4) {
        cx.error(sig.inputs.span(), format!("expected three parameters, A, B and C, and a bias where the epilogue adds one: {USAGE}"));
        return None;
    }
    let mut params = Vec::new();
    let mut bias = None;
    for (arg, (key, kind)) in sig.inputs.iter().zip([("a", "Mat"), ("b", "Mat"), ("c", "MatMut"), ("bias", "Bias")]) {
        let FnArg::Typed(pt) = arg else {
            cx.error(arg.span(), format!("a kernel takes no `self`: {USAGE}"));
            return None;
        };
        let Pat::Ident(name) = &*pt.pat else {
            cx.error(pt.pat.span(), "expected a parameter name");
            return None;
        };
        cx.record(key, pt.ty.span());
        if kind == "Bias" {
            bias = Some((name.ident.clone(), vector(cx, &pt.ty)?, (*pt.ty).clone()));
        } else if let Some(op) = operand(cx, &pt.ty, key, kind) {
            params.push((name.ident.clone(), op, (*pt.ty).clone()));
        }
    }
    (params.len() == 3).then(|| Sig { attrs: f.attrs, vis: f.vis, ident: sig.ident.clone(), params, bias })
}

/// The generic arguments of `kind<..>` as the last segments of their paths,
/// each with its span (an error about one points at it); `None` if `ty` is
/// not a `kind<..>`.
fn generic_names(ty: &Type, kind: &str) -> Option<Vec<(String, proc_macro2::Span)>> {
    let Type::Path(path) = ungrouped(ty) else { return None };
    let last = path.path.segments.last()?;
    if last.ident != kind {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    let names = args
        .args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => match ungrouped(t) {
                Type::Path(p) => p.path.segments.last().map(|s| (s.ident.to_string(), p.span())),
                _ => None,
            },
            _ => None,
        })
        .collect();
    Some(names)
}

/// `ty` out of the invisible groups a `macro_rules!` `$t:ty` wraps it in
/// (and out of parentheses).
fn ungrouped(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => ungrouped(&g.elem),
        Type::Paren(p) => ungrouped(&p.elem),
        t => t,
    }
}

/// An element type name of a signature.
fn elem(cx: &mut Ctxt, name: &str, key: &str, span: proc_macro2::Span) -> Option<Elem> {
    const NAMES: [&str; 5] = ["f32", "f16", "bf16", "F8E4M3", "F8E5M2"];
    match name {
        "f32" => Some(Elem::F32),
        "f16" => Some(Elem::F16),
        "bf16" => Some(Elem::Bf16),
        "F8E4M3" => Some(Elem::F8E4M3),
        "F8E5M2" => Some(Elem::F8E5M2),
        other => {
            let hint = crate::suggest::hint(other, &NAMES);
            cx.error(span, format!("element type `{other}` of {key} is not supported{hint}; use f32, f16, bf16, F8E4M3 or F8E5M2"));
            None
        }
    }
}

/// `Bias<bf16>` -> Bf16: the fourth parameter, a vector added in the epilogue.
fn vector(cx: &mut Ctxt, ty: &Type) -> Option<Elem> {
    match generic_names(ty, "Bias") {
        Some(names) if names.len() == 1 => elem(cx, &names[0].0, "the bias", names[0].1),
        _ => {
            cx.error(ty.span(), "the fourth parameter is the epilogue's bias vector: write its type as `Bias<f32>` (element f32, f16 or bf16)");
            None
        }
    }
}

/// `Mat<f32, RowMajor>` -> (F32, RowMajor); `kind` is `Mat` for inputs, `MatMut` for C.
fn operand(cx: &mut Ctxt, ty: &Type, key: &str, kind: &str) -> Option<Operand> {
    let role = if kind == "Mat" { "an input" } else { "the output" };
    let bad = |cx: &mut Ctxt| {
        cx.error(ty.span(), format!("{key} is {role}: write its type as `{kind}<f32, RowMajor>` (element f32, f16 or bf16; RowMajor or ColMajor)"));
        None
    };
    let Some(names) = generic_names(ty, kind) else { return bad(cx) };
    let [(elem_name, elem_span), (layout, span)] = names.as_slice() else { return bad(cx) };
    let (elem, span) = (elem(cx, elem_name, key, *elem_span)?, *span);
    let layout = match layout.as_str() {
        "RowMajor" => Layout::RowMajor,
        "ColMajor" => Layout::ColMajor,
        other => {
            let hint = crate::suggest::hint(other, &["RowMajor", "ColMajor"]);
            cx.error(span, format!("layout `{other}` of {key} is not a layout{hint}; use RowMajor or ColMajor"));
            return None;
        }
    };
    Some(Operand { elem, layout })
}
