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
}

const USAGE: &str =
    "declare `fn name(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);` (element f32, f16 or bf16; RowMajor or ColMajor)";

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
    if sig.inputs.len() != 3 {
        cx.error(sig.inputs.span(), format!("expected three parameters, A, B and C: {USAGE}"));
        return None;
    }
    let mut params = Vec::new();
    for (arg, (key, kind)) in sig.inputs.iter().zip([("a", "Mat"), ("b", "Mat"), ("c", "MatMut")]) {
        let FnArg::Typed(pt) = arg else {
            cx.error(arg.span(), format!("a kernel takes no `self`: {USAGE}"));
            return None;
        };
        let Pat::Ident(name) = &*pt.pat else {
            cx.error(pt.pat.span(), "expected a parameter name");
            return None;
        };
        cx.record(key, pt.ty.span());
        if let Some(op) = operand(cx, &pt.ty, key, kind) {
            params.push((name.ident.clone(), op, (*pt.ty).clone()));
        }
    }
    (params.len() == 3).then(|| Sig { attrs: f.attrs, vis: f.vis, ident: sig.ident.clone(), params })
}

/// `Mat<f32, RowMajor>` -> (F32, RowMajor); `kind` is `Mat` for inputs, `MatMut` for C.
fn operand(cx: &mut Ctxt, ty: &Type, key: &str, kind: &str) -> Option<Operand> {
    let role = if kind == "Mat" { "an input" } else { "the output" };
    let bad = |cx: &mut Ctxt| {
        cx.error(ty.span(), format!("{key} is {role}: write its type as `{kind}<f32, RowMajor>` (element f32, f16 or bf16; RowMajor or ColMajor)"));
        None
    };
    let Type::Path(path) = ty else { return bad(cx) };
    let Some(last) = path.path.segments.last() else { return bad(cx) };
    if last.ident != kind {
        return bad(cx);
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else { return bad(cx) };
    let names: Vec<String> = args
        .args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(Type::Path(p)) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        })
        .collect();
    let [elem, layout] = names.as_slice() else { return bad(cx) };
    let elem = match elem.as_str() {
        "f32" => Elem::F32,
        "f16" => Elem::F16,
        "bf16" => Elem::Bf16,
        other => {
            let hint = crate::suggest::hint(other, &["f32", "f16", "bf16"]);
            cx.error(args.span(), format!("element type `{other}` of {key} is not supported{hint}; use f32, f16 or bf16"));
            return None;
        }
    };
    let layout = match layout.as_str() {
        "RowMajor" => Layout::RowMajor,
        "ColMajor" => Layout::ColMajor,
        other => {
            let hint = crate::suggest::hint(other, &["RowMajor", "ColMajor"]);
            cx.error(args.span(), format!("layout `{other}` of {key} is not a layout{hint}; use RowMajor or ColMajor"));
            return None;
        }
    };
    Some(Operand { elem, layout })
}
