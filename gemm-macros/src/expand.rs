//! parse -> check -> generate -> expand: the typed launcher and the kernel's data.

use gemm_core::spec::*;
use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::ast::AttrArgs;
use crate::ctxt::Ctxt;
use crate::{attr, sig};

pub fn gemm_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::new(Span::call_site());
    let mut written_types = TokenStream::new();
    let mut meant = Vec::new();
    let mut tune = None;
    let spec_and_sig = match syn::parse2::<AttrArgs>(args) {
        Ok(args) => {
            let mut attr = attr::parse(&mut cx, &args.0);
            tune = attr.tune.take();
            meant = attr.meant.clone();
            let sig = sig::parse(&mut cx, item);
            if let Some(sig) = &sig {
                let tys = sig.params.iter().map(|p| &p.2).chain(sig.bias.iter().map(|b| &b.2));
                written_types = quote! { const _: ::core::marker::PhantomData<(#(#tys,)*)> = ::core::marker::PhantomData; };
            }
            build(&mut cx, attr, sig)
        }
        Err(e) => {
            cx.syn_error(e);
            None
        }
    };
    if let (Some(t), Some((spec, sig))) = (&tune, &spec_and_sig) {
        let out = tuned(&mut cx, spec, sig, t);
        return match cx.into_compile_errors() {
            Some(errors) => quote! { #errors #written_types },
            None => out.expect("no errors means the space was expanded"),
        };
    }
    let out = spec_and_sig.and_then(|(spec, sig)| match gemm_core::generate(&spec) {
        Ok(generated) if !cx.has_errors() => Some(expand(&spec, &sig, &generated)),
        Ok(_) => None,
        Err(diags) => {
            // a rule about an argument a misspelt name meant (`thread` for
            // `thraed`) repeats that error: leave it out
            for d in diags.into_iter().filter(|d| !meant.iter().any(|m| d.at.split('.').next() == Some(*m))) {
                let span = cx.span_of(d.at);
                cx.error(span, d.msg);
            }
            None
        }
    });
    match cx.into_compile_errors() {
        // The signature's types stay referenced, so a failed kernel brings no
        // unused-import warnings on top of its errors.
        Some(errors) => quote! { #errors #written_types },
        None => out.expect("no errors means the kernel was generated"),
    }
}

/// The spec, once everything it needs was written.
fn build(cx: &mut Ctxt, a: attr::Attr, sig: Option<sig::Sig>) -> Option<(KernelSpec, sig::Sig)> {
    let whole = cx.whole();
    for (name, usage) in [
        ("block", "`block(m = .., n = .., threads = ..)`"),
        ("atom", "`atom = ..` (fma, mma(m16n8k16), wmma(m16n16k16), wgmma(m64nNk16) or wgmma(m64nNk16, zeroed))"),
        ("staging", "`staging = ..` (direct, smem(..), cp_async(..), tma(..))"),
    ] {
        // One written but invalid was reported where it was written, and
        // one misspelt where the misspelling is.
        if !a.written.iter().any(|w| w == name) && !a.meant.contains(&name) {
            cx.error(whole, format!("missing {usage}"));
        }
    }
    let sig = sig?;
    let [a_op, b_op, c_op] = [sig.params[0].1, sig.params[1].1, sig.params[2].1];
    // the bias's side is the attribute's, its element type the signature's
    let bias = match (a.fused.bias, &sig.bias) {
        (Some(along), Some((_, elem, _))) => Some(Bias { along, elem: *elem }),
        (None, None) => None,
        (Some(along), None) => {
            let side = if along == Dim::N { "one value per column of C, n values" } else { "one value per row of C, m values" };
            let span = cx.span_of("epilogue.bias");
            cx.error(
                span,
                format!(
                    "a bias ({side}) needs its vector in the signature: add a fourth parameter such as `bias: Bias<f32>` (element f32, f16 or bf16)"
                ),
            );
            return None;
        }
        (None, Some(_)) => {
            let span = cx.span_of("bias");
            cx.error(
                span,
                format!(
                    "a bias parameter needs the epilogue to add it: add `bias = n` (one value per column of C) or `bias = m` (per row) to `epilogue = {e}(..)`; direct, vector, smem, smem_elements and tma all take one",
                    e = a.epilogue.unwrap_or(Epilogue::Direct).name()
                ),
            );
            return None;
        }
    };
    let (atom, staging) = (a.atom?, a.staging?);
    // a direct fma kernel checks each row and column anyway
    let edges = a.edges.unwrap_or(if atom == Atom::Fma && staging == Staging::Direct { Edges::Guarded } else { Edges::Whole });
    let mut spec = KernelSpec {
        name: sig.ident.to_string().into(),
        a: a_op,
        b: b_op,
        c: c_op,
        block: a.block?,
        warp: a.warp,
        thread: a.thread,
        atom,
        staging,
        specialize: a.specialize,
        swizzle: a.swizzle.unwrap_or(Swizzle::None),
        raster: a.raster.unwrap_or(Raster::Row),
        persistent: a.persistent,
        cluster: a.cluster,
        epilogue: a.epilogue.unwrap_or(Epilogue::Direct),
        fused: Fused { alpha: a.fused.alpha, beta: a.fused.beta, bias, activation: a.fused.activation, scale: a.fused.scale, gated: a.fused.gated },
        edges,
        groups: a.groups,
        arch: Arch::Sm80,
    };
    spec.arch = a.arch.unwrap_or_else(|| spec.min_arch());
    Some((spec, sig))
}

/// A tuned kernel: the space's points through the rules, the legal ones as
/// the launcher's candidates; an error where none is legal, a warning
/// (the only kind of note a stable proc macro can leave) counting the rest
/// by rule.
fn tuned(cx: &mut Ctxt, base: &KernelSpec, sig: &sig::Sig, t: &attr::Tune) -> Option<TokenStream> {
    if cx.has_errors() {
        return None;
    }
    for (setting, _) in &t.lists {
        if let Some(why) = gemm_core::tune::inert(*setting, base) {
            cx.error(
                cx.span_of(&format!("tune.{}", setting.name())),
                format!("{why}: every point would be the same kernel; drop it from `tune(..)`"),
            );
        }
    }
    if cx.has_errors() {
        return None;
    }
    let points = gemm_core::tune::expand(base, &t.lists);
    let pruned = gemm_core::tune::pruned(&points);
    let total = points.len();
    // "3 by shared memory (at `staging.stages`)": the rule, and the setting it blames
    let by_rule = pruned.iter().map(|((rule, at), n)| format!("{n} by {rule} (at `{at}`)")).collect::<Vec<_>>().join(", ");
    // legal points that make the same kernel as an earlier one (a block tile naming the warp tile
    // its count would give) are timed once
    let mut legal: Vec<&KernelSpec> = Vec::new();
    let mut repeats = 0;
    for spec in points.iter().filter(|p| p.refused.is_empty()).map(|p| &p.spec) {
        if legal.contains(&spec) {
            repeats += 1;
        } else {
            legal.push(spec);
        }
    }
    if legal.is_empty() {
        let first = points.first().and_then(|p| p.refused.first()).map_or(String::new(), |d| format!("\nthe first point's first refusal: {}", d.msg));
        cx.error(t.span, format!("no point of the {total} in `tune(..)` is legal (refused {by_rule}){first}"));
        return None;
    }
    // values of a list that no legal point takes would vanish unnoticed: name them
    let vanished = gemm_core::tune::vanished(&points, &t.lists)
        .iter()
        .map(|(setting, values)| {
            let values: Vec<String> = values.iter().map(|v| setting.value_text(*v)).collect();
            format!("{} = {}", setting.name(), values.join(" or "))
        })
        .collect::<Vec<_>>();
    let unused = if vanished.is_empty() { String::new() } else { format!("; no legal point has {}", vanished.join(", ")) };
    let same = match repeats {
        0 => String::new(),
        1 => "; 1 legal point makes the same kernel as another and is timed once".to_string(),
        n => format!("; {n} legal points make the same kernels as others and are timed once"),
    };
    let summary = if pruned.is_empty() {
        format!("all {total} points of the space are legal{same}")
    } else {
        let legal = legal.len() + repeats;
        let are = if legal == 1 { "is" } else { "are" };
        format!("{legal} of the {total} points of the space {are} legal; pruned {by_rule}{unused}{same}")
    };
    let note = if pruned.is_empty() && repeats == 0 {
        quote!()
    } else {
        let warning = format!("tune(..): {summary} (a note, not an error)");
        let used = syn::Ident::new("tune_space", t.span);
        // the item's own lint levels (`#[allow(deprecated)]` silences the note)
        let lints = sig.attrs.iter().filter(|a| a.path().is_ident("allow"));
        quote! {
            #(#lints)*
            const _: () = {
                #[deprecated(note = #warning)]
                #[allow(non_camel_case_types)]
                struct tune_space;
                let _ = #used;
            };
        }
    };
    let sig::Sig { attrs, vis, ident, params, bias } = sig;
    let [a, b, c] = [&params[0].0, &params[1].0, &params[2].0];
    let [ta, tb, tc] = [params[0].1.elem, params[1].1.elem, params[2].1.elem].map(elem_type);
    let written = params.iter().map(|p| &p.2).chain(bias.iter().map(|b| &b.2));
    let (extra_params, ep, doc_epilogue) = epilogue_params(base, bias);
    let specs = legal.iter().map(|s| spec_tokens(s));
    let count = legal.len();
    let name = ident.to_string();
    let key = match t.key {
        gemm_core::tune::TuneKey::Exact => quote!(::gemm_runtime::gemm_core::tune::TuneKey::Exact),
        gemm_core::tune::TuneKey::Pow2 => quote!(::gemm_runtime::gemm_core::tune::TuneKey::Pow2),
        gemm_core::tune::TuneKey::Eighths => quote!(::gemm_runtime::gemm_core::tune::TuneKey::Eighths),
    };
    let computes = format!(" Computes `{}`.", base.formula());
    let doc_space = format!(" Tuned: {summary}.");
    let doc_key = format!(
        " The first launch for a new shape group (key `{}`) on a device times every point on the given buffers and keeps the fastest, in the process and on disk beside the kernel cache; `GEMM_TILES_TUNE=off` runs the first point.",
        t.key.name()
    );
    Some(quote! {
        #note
        #(#attrs)*
        #[doc = ""]
        #[doc = #computes]
        #(#[doc = #doc_epilogue])*
        #[doc = #doc_space]
        #[doc = #doc_key]
        #[allow(clippy::too_many_arguments)]
        #vis fn #ident(
            stream: &::gemm_runtime::cudarc::driver::CudaStream,
            #a: &impl ::gemm_runtime::DeviceBuffer<#ta>,
            #b: &impl ::gemm_runtime::DeviceBuffer<#tb>,
            #c: &mut impl ::gemm_runtime::DeviceBufferMut<#tc>,
            #(#extra_params,)*
            dims: ::gemm_runtime::Dims,
        ) -> ::std::result::Result<(), ::gemm_runtime::GemmError> {
            let _: ::core::marker::PhantomData<(#(#written,)*)> = ::core::marker::PhantomData;
            #ident::KERNEL.launch_with(stream, #a, #b, #c, dims, #ep)
        }

        #[doc = " The tuned kernel behind the launcher of the same name: its space's legal points and the tuner."]
        #vis mod #ident {
            /// The legal points of the space, in its order (the first runs under `GEMM_TILES_TUNE=off`).
            pub static POINTS: [::gemm_runtime::spec::KernelSpec; #count] = [#(#specs),*];
            /// How many points the rules kept, and which refused the others.
            pub const SPACE: &str = #summary;
            /// The launchable, tuned kernel.
            pub static KERNEL: ::gemm_runtime::Tuned = ::gemm_runtime::Tuned::new(#name, &POINTS, #key);
        }
    })
}

/// The launcher's epilogue parameters, the `EpilogueArgs` built from them
/// and their doc lines, as `spec` declares them.
fn epilogue_params(spec: &KernelSpec, bias: &Option<(syn::Ident, Elem, syn::Type)>) -> (Vec<TokenStream>, TokenStream, Vec<String>) {
    let f = spec.fused;
    let mut extra_params = Vec::new();
    let mut doc_epilogue = Vec::new();
    let mut ep = quote!(::gemm_runtime::EpilogueArgs::new());
    if let Some(groups) = spec.groups {
        let array = syn::Ident::new(groups.array(), proc_macro2::Span::call_site());
        extra_params.push(quote!(#array: &impl ::gemm_runtime::DeviceBuffer<i32>));
        ep = quote!(#ep.groups(#array));
        doc_epilogue.push(match groups {
            Groups::Masked => " `group_rows`: a device buffer of i32, the rows each problem of the batch holds (at most m; the rest of its rows are not written).".to_string(),
            Groups::Contiguous => " `group_ends`: a device buffer of i32, where each group's rows of A and C end (group g's start where g - 1's end); rows past the last end are not written.".to_string(),
            Groups::Indexed => " `row_groups`: a device buffer of i32, each row's group of A and C (-1 for a padding row, which is not written); each group's rows from a multiple of the block's m.".to_string(),
        });
    }
    if let Some(scale) = f.scale {
        extra_params.push(quote!(scale_a: &impl ::gemm_runtime::DeviceBuffer<f32>));
        extra_params.push(quote!(scale_b: &impl ::gemm_runtime::DeviceBuffer<f32>));
        ep = quote!(#ep.scales(scale_a, scale_b));
        doc_epilogue.push(
            match scale {
                Scale::Tensor => " `scale_a`, `scale_b`: device buffers whose first f32 scales A and B (read at launch).",
                Scale::Channel => " `scale_a`, `scale_b`: device buffers of f32 scales, one per row of A (m) and one per column of B (n).",
                Scale::Block => {
                    " `scale_a`, `scale_b`: device buffers of f32 scales, A's per row and 128-wide K block (`spec::block_scales_a_len`), B's per 128 x 128 block (`spec::block_scales_b_len`); a batch's, each problem's after the one before's (one problem's for an operand the batch shares: `Scale::batch_lens`)."
                }
            }
            .to_string(),
        );
    }
    if let Some((bias_name, elem, _)) = bias {
        let tx = elem_type(*elem);
        extra_params.push(quote!(#bias_name: &impl ::gemm_runtime::DeviceBuffer<#tx>));
        ep = quote!(#ep.bias(#bias_name));
        let along = if f.bias.is_some_and(|b| b.along == Dim::M) { "m: one value per row of C" } else { "n: one value per column of C" };
        doc_epilogue.push(format!(" `{bias_name}`: the bias vector, length {along}."));
    }
    if f.alpha {
        extra_params.push(quote!(alpha: f32));
        ep = quote!(#ep.alpha(alpha));
    }
    if f.beta {
        extra_params.push(quote!(beta: f32));
        ep = quote!(#ep.beta(beta));
        doc_epilogue.push(" With `beta == 0.0`, C is not read (it may hold anything).".to_string());
    }
    (extra_params, ep, doc_epilogue)
}

fn expand(spec: &KernelSpec, sig: &sig::Sig, g: &gemm_core::Generated) -> TokenStream {
    let sig::Sig { attrs, vis, ident, params, bias } = sig;
    let [a, b, c] = [&params[0].0, &params[1].0, &params[2].0];
    let [ta, tb, tc] = [params[0].1.elem, params[1].1.elem, params[2].1.elem].map(elem_type);
    let written = params.iter().map(|p| &p.2).chain(bias.iter().map(|b| &b.2));
    let spec_value = spec_tokens(spec);
    let (source, name, threads, smem, arch) = (&g.source, &g.kernel_name, g.threads, g.smem_bytes, arch_tokens(g.arch));
    let req = spec.requirements();
    let doc_tiling = format!(" CUDA kernel `{name}`: {threads} threads, {smem} bytes of shared memory, target {}.", g.arch);
    let doc_req = if req.m_multiple * req.n_multiple * req.k_multiple == 1 {
        " Accepts any m, n, k (partial tiles at the edges are guarded).".to_string()
    } else {
        format!(
            " Requires m % {} == 0, n % {} == 0, k % {} == 0 (write `edges = guarded` for any size).",
            req.m_multiple, req.n_multiple, req.k_multiple
        )
    };
    let doc_align = format!(
        " A and B: {}-byte aligned, leading dimensions multiples of {}; C: {}-byte aligned, leading dimension a multiple of {}.",
        req.align, req.vector, req.c_align, req.c_vector
    );
    // the epilogue's arguments, as the spec declares them
    let (extra_params, ep, doc_epilogue) = epilogue_params(spec, bias);
    let computes = format!(" Computes `{}`.", spec.formula());
    quote! {
        #(#attrs)*
        #[doc = ""]
        #[doc = #computes]
        #(#[doc = #doc_epilogue])*
        #[doc = #doc_tiling]
        #[doc = #doc_req]
        #[doc = #doc_align]
        #[doc = " Compiles on first use (once per process and device), checks the arguments, launches on `stream`."]
        #[allow(clippy::too_many_arguments)]
        #vis fn #ident(
            stream: &::gemm_runtime::cudarc::driver::CudaStream,
            #a: &impl ::gemm_runtime::DeviceBuffer<#ta>,
            #b: &impl ::gemm_runtime::DeviceBuffer<#tb>,
            #c: &mut impl ::gemm_runtime::DeviceBufferMut<#tc>,
            #(#extra_params,)*
            dims: ::gemm_runtime::Dims,
        ) -> ::std::result::Result<(), ::gemm_runtime::GemmError> {
            // The signature's types as written, so they resolve like any other.
            let _: ::core::marker::PhantomData<(#(#written,)*)> = ::core::marker::PhantomData;
            #ident::KERNEL.launch_with(stream, #a, #b, #c, dims, #ep)
        }

        #[doc = " The generated kernel behind the launcher of the same name: its spec, CUDA source and launch shape."]
        #vis mod #ident {
            /// The kernel description, as data.
            pub const SPEC: ::gemm_runtime::spec::KernelSpec = #spec_value;
            /// The generated CUDA C++ source (header-free).
            pub const CUDA: &str = #source;
            /// The `extern "C"` kernel name in [`CUDA`]; it encodes the tiling.
            pub const KERNEL_NAME: &str = #name;
            /// Threads per block.
            pub const THREADS: u32 = #threads;
            /// Dynamic shared memory per block, in bytes.
            pub const SMEM_BYTES: u32 = #smem;
            /// The oldest architecture the kernel runs on.
            pub const ARCH: ::gemm_runtime::spec::Arch = #arch;
            /// The launchable kernel.
            pub static KERNEL: ::gemm_runtime::Kernel =
                ::gemm_runtime::Kernel::from_parts(SPEC, CUDA, KERNEL_NAME, THREADS, SMEM_BYTES);
        }
    }
}

fn elem_type(e: Elem) -> TokenStream {
    match e {
        Elem::F32 => quote!(f32),
        Elem::F16 => quote!(::gemm_runtime::half::f16),
        Elem::Bf16 => quote!(::gemm_runtime::half::bf16),
        Elem::F8E4M3 => quote!(::gemm_runtime::float8::F8E4M3),
        Elem::F8E5M2 => quote!(::gemm_runtime::float8::F8E5M2),
    }
}

/// The variant name of an element type.
fn elem_tokens(e: Elem) -> TokenStream {
    match e {
        Elem::F32 => quote!(F32),
        Elem::F16 => quote!(F16),
        Elem::Bf16 => quote!(Bf16),
        Elem::F8E4M3 => quote!(F8E4M3),
        Elem::F8E5M2 => quote!(F8E5M2),
    }
}

fn arch_tokens(a: Arch) -> TokenStream {
    match a {
        Arch::Sm80 => quote!(::gemm_runtime::spec::Arch::Sm80),
        Arch::Sm86 => quote!(::gemm_runtime::spec::Arch::Sm86),
        Arch::Sm89 => quote!(::gemm_runtime::spec::Arch::Sm89),
        Arch::Sm90 => quote!(::gemm_runtime::spec::Arch::Sm90),
        Arch::Sm90a => quote!(::gemm_runtime::spec::Arch::Sm90a),
        Arch::Sm100 => quote!(::gemm_runtime::spec::Arch::Sm100),
        Arch::Sm120 => quote!(::gemm_runtime::spec::Arch::Sm120),
    }
}

fn which_tokens(p: &TokenStream, which: Which) -> TokenStream {
    match which {
        Which::A => quote!(#p::Which::A),
        Which::B => quote!(#p::Which::B),
    }
}

fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> TokenStream) -> TokenStream {
    match v {
        Some(v) => {
            let t = f(v);
            quote!(::std::option::Option::Some(#t))
        }
        None => quote!(::std::option::Option::None),
    }
}

/// The spec as a constant expression of `gemm_runtime::spec` types.
fn spec_tokens(s: &KernelSpec) -> TokenStream {
    let p = quote!(::gemm_runtime::spec);
    let operand = |o: Operand| {
        let elem = elem_tokens(o.elem);
        let layout = match o.layout {
            Layout::RowMajor => quote!(RowMajor),
            Layout::ColMajor => quote!(ColMajor),
        };
        quote!(#p::Operand { elem: #p::Elem::#elem, layout: #p::Layout::#layout })
    };
    let name = s.name.as_ref();
    let (a, b, c) = (operand(s.a), operand(s.b), operand(s.c));
    let Block { m, n, k, threads, min_blocks } = s.block;
    let k = opt(k, |k| quote!(#k));
    let min_blocks = opt(min_blocks, |o| quote!(#o));
    let warp = opt(s.warp, |Warp { m, n, m_iters, n_iters }| quote!(#p::Warp { m: #m, n: #n, m_iters: #m_iters, n_iters: #n_iters }));
    let dim = |d| match d {
        Dim::M => quote!(#p::Dim::M),
        Dim::N => quote!(#p::Dim::N),
    };
    let thread = opt(s.thread, |ThreadTile { m, n, lanes, sweep }| {
        let (lanes, sweep) = (dim(lanes), dim(sweep));
        quote!(#p::ThreadTile { m: #m, n: #n, lanes: #lanes, sweep: #sweep })
    });
    let atom = match s.atom {
        Atom::Fma => quote!(#p::Atom::Fma),
        Atom::Mma { m, n, k } => quote!(#p::Atom::Mma { m: #m, n: #n, k: #k }),
        Atom::Wmma { m, n, k } => quote!(#p::Atom::Wmma { m: #m, n: #n, k: #k }),
        Atom::Wgmma { m, n, k, zeroed, promote } => quote!(#p::Atom::Wgmma { m: #m, n: #n, k: #k, zeroed: #zeroed, promote: #promote }),
    };
    let staging = match s.staging {
        Staging::Direct => quote!(#p::Staging::Direct),
        Staging::Smem { vector, transpose_a, buffers } => {
            quote!(#p::Staging::Smem { vector: #vector, transpose_a: #transpose_a, buffers: #buffers })
        }
        Staging::CpAsync { stages, vector, transpose_a, fragments } => {
            quote!(#p::Staging::CpAsync { stages: #stages, vector: #vector, transpose_a: #transpose_a, fragments: #fragments })
        }
        Staging::Tma { stages, cp_async, prefetch, evict_first: EvictFirst { a, b }, by_class } => {
            let cp_async = opt(cp_async, |RingCopies { vector, only }| {
                let only = opt(only, |w| which_tokens(&p, w));
                quote!(#p::RingCopies { vector: #vector, only: #only })
            });
            let evict_first = quote!(#p::EvictFirst { a: #a, b: #b });
            quote!(#p::Staging::Tma { stages: #stages, cp_async: #cp_async, prefetch: #prefetch, evict_first: #evict_first, by_class: #by_class })
        }
    };
    let specialize = opt(s.specialize, |Specialize { producers, consumers, producer_regs, consumer_regs, pingpong, arrivals, overlap }| {
        let pr = opt(producer_regs, |r| quote!(#r));
        let cr = opt(consumer_regs, |r| quote!(#r));
        let arrivals = match arrivals {
            Arrivals::Warpgroup => quote!(#p::Arrivals::Warpgroup),
            Arrivals::Thread => quote!(#p::Arrivals::Thread),
        };
        quote!(#p::Specialize {
            producers: #producers,
            consumers: #consumers,
            producer_regs: #pr,
            consumer_regs: #cr,
            pingpong: #pingpong,
            arrivals: #arrivals,
            overlap: #overlap,
        })
    });
    let swizzle = match s.swizzle {
        Swizzle::None => quote!(#p::Swizzle::None),
        Swizzle::Pad(n) => quote!(#p::Swizzle::Pad(#n)),
        Swizzle::Xor => quote!(#p::Swizzle::Xor),
        Swizzle::B32 => quote!(#p::Swizzle::B32),
        Swizzle::B64 => quote!(#p::Swizzle::B64),
        Swizzle::B128 => quote!(#p::Swizzle::B128),
    };
    let raster = match s.raster {
        Raster::Row => quote!(#p::Raster::Row),
        Raster::Grouped(g) => quote!(#p::Raster::Grouped(#g)),
        Raster::Hilbert => quote!(#p::Raster::Hilbert),
    };
    let persistent = opt(s.persistent, |ps| match ps {
        Persistent::Tiles => quote!(#p::Persistent::Tiles),
        Persistent::Queue => quote!(#p::Persistent::Queue),
        Persistent::StreamK => quote!(#p::Persistent::StreamK),
        Persistent::Hybrid => quote!(#p::Persistent::Hybrid),
        Persistent::TailSplit => quote!(#p::Persistent::TailSplit),
    });
    let cluster = opt(s.cluster, |Cluster { m, n, k, multicast }| {
        let mc = opt(multicast, |w| which_tokens(&p, w));
        quote!(#p::Cluster { m: #m, n: #n, k: #k, multicast: #mc })
    });
    let epilogue = match s.epilogue {
        Epilogue::Direct => quote!(#p::Epilogue::Direct),
        Epilogue::Vector => quote!(#p::Epilogue::Vector),
        Epilogue::Smem => quote!(#p::Epilogue::Smem),
        Epilogue::SmemElements => quote!(#p::Epilogue::SmemElements),
        Epilogue::Tma => quote!(#p::Epilogue::Tma),
        Epilogue::Stmatrix => quote!(#p::Epilogue::Stmatrix),
    };
    let Fused { alpha, beta, bias, activation, scale, gated } = s.fused;
    let scale = opt(scale, |s| match s {
        Scale::Tensor => quote!(#p::Scale::Tensor),
        Scale::Channel => quote!(#p::Scale::Channel),
        Scale::Block => quote!(#p::Scale::Block),
    });
    let bias = opt(bias, |Bias { along, elem }| {
        let (along, elem) = (dim(along), elem_tokens(elem));
        quote!(#p::Bias { along: #along, elem: #p::Elem::#elem })
    });
    let activation = opt(activation, |a| match a {
        Activation::Relu => quote!(#p::Activation::Relu),
        Activation::Gelu => quote!(#p::Activation::Gelu),
        Activation::GeluTanh => quote!(#p::Activation::GeluTanh),
        Activation::Silu => quote!(#p::Activation::Silu),
    });
    let edges = match s.edges {
        Edges::Whole => quote!(#p::Edges::Whole),
        Edges::Guarded => quote!(#p::Edges::Guarded),
    };
    let arch = arch_tokens(s.arch);
    let groups = opt(s.groups, |g| match g {
        Groups::Masked => quote!(#p::Groups::Masked),
        Groups::Contiguous => quote!(#p::Groups::Contiguous),
        Groups::Indexed => quote!(#p::Groups::Indexed),
    });
    quote! {
        #p::KernelSpec {
            name: ::std::borrow::Cow::Borrowed(#name),
            a: #a,
            b: #b,
            c: #c,
            block: #p::Block { m: #m, n: #n, k: #k, threads: #threads, min_blocks: #min_blocks },
            warp: #warp,
            thread: #thread,
            atom: #atom,
            staging: #staging,
            specialize: #specialize,
            swizzle: #swizzle,
            raster: #raster,
            persistent: #persistent,
            cluster: #cluster,
            epilogue: #epilogue,
            fused: #p::Fused { alpha: #alpha, beta: #beta, bias: #bias, activation: #activation, scale: #scale, gated: #gated },
            edges: #edges,
            groups: #groups,
            arch: #arch,
        }
    }
}
