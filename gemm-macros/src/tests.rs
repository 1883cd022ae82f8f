//! Parser and expansion tests, on token streams (no compiler in the loop).

use gemm_core::spec::*;
use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::ast::AttrArgs;
use crate::attr::{self, Attr};
use crate::ctxt::Ctxt;

fn parse(tokens: TokenStream) -> (Attr, Vec<String>) {
    let args: AttrArgs = syn::parse2(tokens).expect("the attribute tokenizes");
    let mut cx = Ctxt::new(Span::call_site());
    let attr = attr::parse(&mut cx, &args.0);
    let errors = cx.into_compile_errors().map(|e| e.to_string()).into_iter().collect();
    (attr, errors)
}

#[test]
fn the_whole_hopper_vocabulary_parses() {
    let (a, errors) = parse(quote! {
        block(m = 128, n = 256, k = 64, threads = 384),
        warp(m = 64, n = 256),
        atom = wgmma(m64n256k16),
        staging = tma(stages = 4),
        specialize(producers = 1, consumers = 2, producer_regs = 40, consumer_regs = 232),
        swizzle = b128,
        raster = hilbert,
        persistent,
        cluster(m = 2, n = 1, multicast = b),
        epilogue = tma,
        arch = sm_90a,
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.block, Some(Block { m: 128, n: 256, k: Some(64), threads: 384, min_blocks: None }));
    assert_eq!(a.warp, Some(Warp { m: 64, n: 256, m_iters: 1, n_iters: 1 }));
    assert_eq!(a.atom, Some(Atom::Wgmma { m: 64, n: 256, k: 16, zeroed: false, promote: false }));
    assert_eq!(a.staging, Some(Staging::tma(4)));
    assert_eq!(
        a.specialize,
        Some(Specialize {
            producers: 1,
            consumers: 2,
            producer_regs: Some(40),
            consumer_regs: Some(232),
            pingpong: false,
            arrivals: Arrivals::Warpgroup,
            overlap: false,
        })
    );
    assert_eq!(a.swizzle, Some(Swizzle::B128));
    assert_eq!(a.raster, Some(Raster::Hilbert));
    assert_eq!(a.persistent, Some(Persistent::Tiles));
    assert_eq!(a.cluster, Some(Cluster { m: 2, n: 1, multicast: Some(Which::B), k: 1 }));
    assert_eq!(a.epilogue, Some(Epilogue::Tma));
    assert_eq!(a.arch, Some(Arch::Sm90a));
    // a ring that prefetches ahead of a dependent launch's wait
    let (a, errors) = parse(quote! { staging = tma(stages = 3, prefetch = 2) });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.staging, Some(Staging::Tma { stages: 3, cp_async: None, prefetch: 2, evict_first: Default::default(), by_class: false }));
    // loads of A that leave the L2 first; a value that names no operands is an error that lists them
    let (a, errors) = parse(quote! { staging = tma(stages = 3, prefetch = 2, evict_first = a) });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        a.staging,
        Some(Staging::Tma { stages: 3, cp_async: None, prefetch: 2, evict_first: EvictFirst { a: true, b: false }, by_class: false })
    );
    let (a, errors) = parse(quote! { staging = tma(stages = 3, evict_first = ab) });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        a.staging,
        Some(Staging::Tma { stages: 3, cp_async: None, prefetch: 0, evict_first: EvictFirst { a: true, b: true }, by_class: false })
    );
    let (_, errors) = parse(quote! { staging = tma(stages = 3, evict_first = c) });
    assert!(errors.iter().any(|e| e.contains("`evict_first` in `tma(..)` is one of `a`, `b`, `ab`")), "{errors:?}");
    // a cluster that splits K
    let (a, errors) = parse(quote! { cluster(m = 1, n = 1, k = 2) });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.cluster, Some(Cluster { m: 1, n: 1, multicast: None, k: 2 }));
}

/// The ladder's "before" forms: every thread's arrivals, zeroed accumulators.
#[test]
fn thread_arrivals_and_zeroed_accumulators_parse() {
    let (a, errors) = parse(quote! {
        atom = wgmma(m64n256k16, zeroed),
        specialize(consumers = 2, arrivals = thread),
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.atom, Some(Atom::Wgmma { m: 64, n: 256, k: 16, zeroed: true, promote: false }));
    assert_eq!(a.specialize.map(|s| s.arrivals), Some(Arrivals::Thread));
    let (_, errors) = parse(quote! { specialize(consumers = 2, arrivals = threads) });
    assert!(errors.iter().any(|e| e.contains("`arrivals` in `specialize(..)` is one of")), "{errors:?}");
}

/// `specialize(.., overlap)`: a flag, off where not named.
#[test]
fn overlap_is_a_flag_of_specialize() {
    let (a, errors) = parse(quote! { specialize(consumers = 2, overlap) });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.specialize.map(|s| s.overlap), Some(true));
    let (a, _) = parse(quote! { specialize(consumers = 2) });
    assert_eq!(a.specialize.map(|s| s.overlap), Some(false));
}

#[test]
fn simt_and_ampere_settings_parse() {
    let (a, errors) = parse(quote! {
        block(m = 128, n = 128, k = 8, threads = 256),
        warp(m = 64, n = 32, m_iters = 1, n_iters = 2),
        thread(m = 8, n = 4, lanes = m, sweep = m),
        atom = fma,
        staging = smem(vector = 4, transpose_a, buffers = 2),
        swizzle = pad(4),
        raster = grouped(8),
        persistent = stream_k,
        epilogue = vector,
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.thread, Some(ThreadTile { m: 8, n: 4, lanes: Dim::M, sweep: Dim::M }));
    assert_eq!(a.staging, Some(Staging::Smem { vector: 4, transpose_a: true, buffers: 2 }));
    assert_eq!(a.swizzle, Some(Swizzle::Pad(4)));
    assert_eq!(a.raster, Some(Raster::Grouped(8)));
    assert_eq!(a.persistent, Some(Persistent::StreamK));
    let (_, errors) = parse(quote!(thread(m = 8, n = 4, sweep = k)));
    assert!(errors.iter().any(|e| e.contains("`sweep` in `thread(..)` is one of `m`, `n`")), "{errors:?}");
    let (_, errors) = parse(quote!(persistent = streamk));
    assert!(errors.iter().any(|e| e.contains("expected one of `tiles`, `queue`, `stream_k`")), "{errors:?}");
    // the persistent walk on a queue of tiles
    let (a, errors) = parse(quote!(persistent = queue));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.persistent, Some(Persistent::Queue));
    let (a, errors) = parse(quote!(atom = mma(m16n8k16), staging = cp_async(stages = 3, vector = 8), swizzle = xor));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.atom, Some(Atom::Mma { m: 16, n: 8, k: 16 }));
    assert_eq!(a.staging, Some(Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 1 }));
    assert_eq!(a.swizzle, Some(Swizzle::Xor));
}

#[test]
fn defaults_fill_what_is_left_out() {
    let (a, errors) = parse(quote!(thread(m = 2, n = 2), staging = smem));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.thread, Some(ThreadTile { m: 2, n: 2, lanes: Dim::N, sweep: Dim::N }));
    assert_eq!(a.staging, Some(Staging::Smem { vector: 1, transpose_a: false, buffers: 1 }));
}

#[test]
fn unknown_duplicate_and_malformed_arguments_are_all_reported() {
    let (_, errors) = parse(quote! {
        blok(m = 1), atom = fma, atom = fma, block(m = 32, n = x, threads = 32, m = 2), swizzle = pad(1, 2),
    });
    let all = errors.join("\n");
    for expected in [
        "unknown argument `blok`",
        "duplicate argument `atom`",
        "`n` in `block(..)` takes a number",
        "duplicate argument `m` in `block(..)`",
        "expected one number: `pad(N)`",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in {all}");
    }
}

#[test]
fn a_valid_kernel_expands_to_a_launcher_and_its_module() {
    let out = crate::expand::gemm_kernel(
        quote!(block(m = 32, n = 32, threads = 1024), thread(m = 1, n = 1), atom = fma, staging = direct),
        quote!(
            pub fn k(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);
        ),
    )
    .to_string();
    assert!(out.contains("pub fn k"), "{out}");
    assert!(out.contains("pub mod k"), "{out}");
    for item in ["SPEC", "CUDA", "KERNEL_NAME", "THREADS", "SMEM_BYTES", "ARCH", "KERNEL"] {
        assert!(out.contains(&format!(" {item} ")) || out.contains(&format!(" {item}:")), "no {item}");
    }
    assert!(!out.contains("compile_error"), "{out}");
}

#[test]
fn a_bad_signature_is_an_error_at_the_parameter() {
    let out = crate::expand::gemm_kernel(
        quote!(block(m = 32, n = 32, threads = 1024), thread(m = 1, n = 1), atom = fma, staging = direct),
        quote!(
            fn k(a: Mat<f64, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);
        ),
    )
    .to_string();
    assert!(out.contains("compile_error"), "{out}");
    assert!(out.contains("element type `f64` of a is not supported"), "{out}");
}

/// A kernel declared inside a `macro_rules!` gets its parameter types as
/// `$t:ty` fragments: tokens in an invisible group, read as the types inside.
#[test]
fn types_from_a_macro_rules_fragment_read_as_written() {
    use proc_macro2::{Delimiter, Group};
    let grouped = |t: TokenStream| Group::new(Delimiter::None, t);
    let (a, b, c, bias) = (
        grouped(quote!(Mat<bf16, RowMajor>)),
        grouped(quote!(Mat<bf16, ColMajor>)),
        grouped(quote!(MatMut<bf16, RowMajor>)),
        grouped(quote!(Bias<bf16>)),
    );
    let out = crate::expand::gemm_kernel(
        quote!(
            block(m = 128, n = 256, k = 64, threads = 384),
            warp(m = 64, n = 256),
            atom = wgmma(m64n128k16),
            staging = tma(stages = 3),
            specialize(producers = 1, consumers = 2),
            swizzle = b128,
            epilogue = tma(bias = n)
        ),
        quote!(pub fn k(x: #a, w: #b, y: #c, bias: #bias);),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("pub fn k"), "{out}");
}

/// `tune(..)` takes settings by path with lists of values, and a key; a
/// space of more points than a build checks and a first launch times is
/// an error.
#[test]
fn a_tuning_space_parses_with_its_key() {
    use gemm_core::tune::{Setting, TuneKey};
    let (a, errors) = parse(quote! {
        block(m = 128, n = 128, k = 32, threads = 256),
        tune(block.m = [64, 128], warp.n = [32], stages = [2, 3, 4], key = exact),
    });
    assert!(errors.is_empty(), "{errors:?}");
    let t = a.tune.expect("a space");
    assert_eq!(t.lists, vec![(Setting::BlockM, vec![64, 128]), (Setting::WarpN, vec![32]), (Setting::Stages, vec![2, 3, 4])]);
    assert_eq!(t.key, TuneKey::Exact);
    for (key, expected) in [(quote!(, key = pow2), TuneKey::Pow2), (quote!(, key = eighths), TuneKey::Eighths), (quote!(), TuneKey::Eighths)] {
        let (a, errors) = parse(quote! { tune(stages = [3] #key) });
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(a.tune.expect("a space").key, expected);
    }
    let (_, errors) = parse(quote! { tune(stages = [3], key = octaves) });
    assert!(errors.iter().any(|e| e.contains("expected one of `eighths`, `pow2`, `exact`")), "{errors:?}");
    let (_, errors) = parse(quote! { tune(stages = [3], stages = [4]) });
    assert!(errors.iter().any(|e| e.contains("duplicate setting `stages`")), "{errors:?}");
    // a value listed twice would be compiled and timed twice
    for (twice, says) in [
        (quote! { tune(stages = [3, 4, 3]) }, "`stages` lists 3 twice"),
        (quote! { tune(schedule = [tiles, persistent, tiles]) }, "`schedule` lists tiles twice"),
        (quote! { tune(block = [block(m = 64, n = 64), block(n = 64, m = 64)]) }, "`block` lists block(m = 64, n = 64) twice"),
    ] {
        let (_, errors) = parse(twice.clone());
        assert!(errors.iter().any(|e| e.contains(says)), "{twice}: {errors:?}");
    }
    let (_, errors) = parse(quote! { tune(key = pow2) });
    assert!(errors.iter().any(|e| e.contains("needs at least one setting")), "{errors:?}");
    // a space past the points a build checks and a first launch times: 6^5 of them
    let six = quote!([1, 2, 3, 4, 5, 6]);
    let (_, errors) = parse(quote! { tune(block.m = #six, block.n = #six, block.k = #six, stages = #six, warp.m = #six) });
    assert!(errors.iter().any(|e| e.contains("`tune(..)` spans 7776 points, past the 4096")), "{errors:?}");
}

/// `tune(schedule = [..])` takes schedules by name (kept as their index in
/// `SCHEDULES`); a misspelt one is an error naming the choices, and a
/// number is no schedule.
#[test]
fn a_tuning_space_lists_schedules_by_name() {
    use gemm_core::tune::{Setting, SCHEDULES};
    let (a, errors) = parse(quote! { tune(schedule = [persistent, stream_k]) });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.tune.expect("a space").lists, vec![(Setting::Schedule, vec![1, 2])]);
    assert_eq!(SCHEDULES[1].0, "persistent");
    // the queue, last of them
    let (a, errors) = parse(quote! { tune(schedule = [persistent, queue]) });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.tune.expect("a space").lists, vec![(Setting::Schedule, vec![1, 5])]);
    assert_eq!(SCHEDULES[5], ("queue", Some(Persistent::Queue)));
    let (_, errors) = parse(quote! { tune(schedule = [persistant]) });
    assert!(errors.iter().any(|e| e.contains("unknown schedule (did you mean `persistent`?)")), "{errors:?}");
    let (_, errors) = parse(quote! { tune(schedule = [1]) });
    assert!(errors.iter().any(|e| e.contains("unknown schedule")), "{errors:?}");
}

/// `tune(block = [..])` takes whole block tiles as `block(m = .., n = ..)`
/// is written, each naming its warp tile or not, and refuses a space that
/// also lists a side or warp tile it sets.
#[test]
fn tune_takes_whole_block_tiles() {
    use gemm_core::tune::{block_value, block_warp_value, Setting};
    let (a, errors) = parse(quote! {
        tune(block = [block(m = 128, n = 256), block(n = 128, m = 256), block(m = 64, warp(n = 32, m = 64), n = 32)], stages = [3, 4])
    });
    assert!(errors.is_empty(), "{errors:?}");
    let lists = a.tune.expect("a space").lists;
    assert_eq!(lists[0], (Setting::Block, vec![block_value(128, 256), block_value(256, 128), block_warp_value(64, 32, 64, 32)]));
    assert_eq!(Setting::Block.value_text(lists[0].1[2]), "block(m = 64, n = 32, warp(m = 64, n = 32))");
    for (bad, says) in [
        (quote! { tune(block = [128, 256]) }, "takes a list of block tiles"),
        (quote! { tune(block = [block(m = 128)]) }, "needs both `m` and `n`"),
        (quote! { tune(block = [block(m = 128, n = 256, k = 64)]) }, "takes `m`, `n` and `warp(m = .., n = ..)` only"),
        (quote! { tune(block = [block(m = 128, n = 256, warp(m = 64))]) }, "a warp tile in `tune(block = [..])` needs both `m` and `n`"),
        (
            quote! { tune(block = [block(m = 128, n = 256, warp(m = 64, n = 64, k = 16))]) },
            "a warp tile in `tune(block = [..])` takes `m` and `n` only",
        ),
        (quote! { tune(block = [block(m = 128, n = 256, warp(m = 64, n = 64), warp(m = 64, n = 64))]) }, "`warp(..)` given twice"),
        (quote! { tune(block = [block(m = 128, n = 256, warp(m = 64, n = 0))]) }, "`n` of a warp tile takes 1 to 65535"),
        (quote! { tune(block = [warp(m = 64, n = 256)]) }, "takes a list of block tiles"),
        (quote! { tune(block = [block(m = 0, n = 256)]) }, "1 to 65535"),
        (quote! { tune(block = [block(m = 128, m = 256, n = 128)]) }, "`m` given twice"),
        (quote! { tune(block = [block(m = 128, n = 256)], warp.n = [128]) }, "list either `block` or warp.n"),
    ] {
        let (_, errors) = parse(bad.clone());
        assert!(errors.iter().any(|e| e.contains(says)), "{bad}: {errors:?}");
    }
}

/// Every number of [`five_kernels`]' attributes, replaced in turn by 0, 1,
/// 3, 7, u32's largest and past it, -1 and 2.5: the macro answers each
/// with a kernel or compile errors, never a panic (which the compiler
/// would report as "proc macro panicked", at no argument).
#[test]
fn degenerate_numbers_are_errors_never_panics() {
    let replacements = ["0", "1", "3", "7", "4294967295", "4294967296", "-1", "2.5"];
    let mut tried = 0;
    let mut panicked = Vec::new();
    for (attr, item) in five_kernels() {
        let numbers = standalone_numbers(attr);
        assert!(numbers.len() >= 8, "{attr}");
        // as written, each is a kernel: the changes reach the rules past the parser
        let base = crate::expand::gemm_kernel(attr.parse().unwrap(), item.parse().unwrap()).to_string();
        assert!(!base.contains("compile_error"), "{attr}: {base}");
        for range in numbers {
            for r in replacements {
                let changed = format!("{}{r}{}", &attr[..range.start], &attr[range.end..]);
                let (args, sig) = (changed.parse::<TokenStream>().unwrap(), item.parse::<TokenStream>().unwrap());
                let out = std::panic::catch_unwind(|| crate::expand::gemm_kernel(args, sig).to_string());
                if out.is_err() {
                    panicked.push(changed);
                }
                tried += 1;
            }
        }
    }
    assert!(tried > 300, "{tried}");
    assert!(panicked.is_empty(), "the macro panicked on {} of {tried}:\n{}", panicked.len(), panicked.join("\n"));
}

/// Five kernels' attributes and signatures, each a kernel as written:
/// SIMT; sm_80's mma and wmma (a fused epilogue); Hopper's, a cluster
/// split along K and a tuning space among them.
fn five_kernels() -> [(&'static str, &'static str); 5] {
    [
        (
            "block(m = 128, n = 256, k = 16, threads = 256), warp(m = 32, n = 128, m_iters = 1, n_iters = 4), thread(m = 8, n = 4), \
             atom = fma, staging = cp_async(stages = 4, vector = 4), swizzle = pad(8), raster = grouped(8), persistent = stream_k, edges = guarded",
            "pub fn k(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);",
        ),
        (
            "block(m = 128, n = 128, k = 32, threads = 256), warp(m = 64, n = 32), atom = mma(m16n8k16), \
             staging = cp_async(stages = 3, vector = 8, fragments = 2), swizzle = xor, epilogue = smem, edges = guarded",
            "pub fn k(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);",
        ),
        (
            "block(m = 128, n = 256, k = 64, threads = 384), warp(m = 64, n = 256), atom = wgmma(m64n256k16), \
             staging = tma(stages = 4), specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240), \
             swizzle = b128, raster = grouped(16), persistent, cluster(m = 2, n = 1, multicast = b), epilogue = tma, edges = guarded",
            "pub fn k(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);",
        ),
        (
            "block(m = 64, n = 64, threads = 128, min_blocks = 2), warp(m = 32, n = 32, m_iters = 1, n_iters = 1), atom = wmma(m16n16k16), \
             staging = direct, epilogue = direct(alpha, beta, bias = n, activation = gelu)",
            "pub fn k(a: Mat<f16, RowMajor>, b: Mat<f16, ColMajor>, c: MatMut<f32, RowMajor>, bias: Bias<f32>);",
        ),
        (
            "block(m = 64, n = 8, k = 256, threads = 256), warp(m = 64, n = 8), atom = wgmma(m64n8k16), staging = tma(stages = 4, evict_first = a), \
             specialize(producers = 1, consumers = 1), swizzle = b128, cluster(m = 1, n = 1, k = 2), edges = guarded, \
             tune(block.m = [64, 128], block.n = [8, 16], block.k = [128, 256], stages = [3, 4], prefetch = [0, 2], key = exact)",
            "pub fn k(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, ColMajor>);",
        ),
    ]
}

/// Each of the five kernels' attributes with one of its words or marks
/// left out, or repeated (where the rest still forms token trees): a
/// kernel or compile errors, never a panic.
#[test]
fn attributes_missing_or_repeating_a_token_are_errors_never_panics() {
    let mut tried = 0;
    for (attr, item) in five_kernels() {
        // words, numbers and single marks
        let mut tokens = Vec::new();
        let mut rest = attr;
        while let Some(c) = rest.chars().next() {
            let len = if c.is_alphanumeric() || c == '_' {
                rest.find(|x: char| !(x.is_alphanumeric() || x == '_' || x == '.')).unwrap_or(rest.len())
            } else {
                c.len_utf8()
            };
            if !c.is_whitespace() {
                tokens.push((attr.len() - rest.len(), len));
            }
            rest = &rest[len..];
        }
        for &(at, len) in &tokens {
            for changed in [format!("{}{}", &attr[..at], &attr[at + len..]), format!("{}{}", &attr[..at + len], &attr[at..])] {
                let Ok(args) = changed.parse::<TokenStream>() else { continue };
                let sig = item.parse::<TokenStream>().unwrap();
                let out = std::panic::catch_unwind(|| crate::expand::gemm_kernel(args, sig).to_string());
                assert!(out.is_ok(), "the macro panicked on `{changed}`");
                tried += 1;
            }
        }
    }
    assert!(tried > 400, "{tried}");
}

/// Every pair of numbers of [`five_kernels`]' attributes set at once to
/// large values (1024, 4096, 65535) or one of them to 0: what the rules
/// multiply stays in range, and the macro answers with a kernel or
/// errors, never a panic.
#[test]
fn pairs_of_large_numbers_are_errors_never_panics() {
    let mut panicked = Vec::new();
    for (attr, item) in five_kernels() {
        let numbers = standalone_numbers(attr);
        for x in 0..numbers.len() {
            for y in x + 1..numbers.len() {
                let values = [
                    ("1024", "1024"),
                    ("64", "1024"),
                    ("1024", "64"),
                    ("4096", "4096"),
                    ("65535", "64"),
                    ("64", "65535"),
                    ("0", "1024"),
                    ("1024", "0"),
                ];
                for (vx, vy) in values {
                    let (a, b) = (&numbers[x], &numbers[y]);
                    let changed = format!("{}{vx}{}{vy}{}", &attr[..a.start], &attr[a.end..b.start], &attr[b.end..]);
                    let (args, sig) = (changed.parse::<TokenStream>().unwrap(), item.parse::<TokenStream>().unwrap());
                    if std::panic::catch_unwind(|| crate::expand::gemm_kernel(args, sig).to_string()).is_err() {
                        panicked.push(changed);
                    }
                }
            }
        }
    }
    assert!(panicked.is_empty(), "the macro panicked on {}:\n{}", panicked.len(), panicked.join("\n"));
}

/// Where the numbers that stand alone lie in `attr` (`= 128`, `(8)`), not
/// those inside names (`m64n256k16`, `b128`).
fn standalone_numbers(attr: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = attr.as_bytes();
    let mut numbers = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric() && bytes[i - 1] != b'_') {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            numbers.push(start..i);
        } else {
            i += 1;
        }
    }
    numbers
}
