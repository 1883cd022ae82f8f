//! The CUDA generator: deterministic, header-free, and every accepted setting
//! changes the kernel.

mod common;

use common::smem_spec;
use gemm_core::spec::*;
use gemm_core::{check, generate};

/// One edit to a spec, named in the assertions.
type Change = Box<dyn Fn(&mut KernelSpec)>;

#[test]
fn generation_is_deterministic_and_header_free() {
    let a = generate(&smem_spec()).unwrap();
    let b = generate(&smem_spec()).unwrap();
    assert_eq!(a, b);
    assert!(!a.source.contains("#include"));
    assert!(a.source.contains(&format!("extern \"C\" __global__ void\n__launch_bounds__(256)\n{}(", a.kernel_name)));
}

#[test]
fn the_kernel_name_encodes_the_tiling() {
    let g = generate(&smem_spec()).unwrap();
    assert_eq!(g.kernel_name, "k__f32f32f32_rrr__b64x64x16_t256__r4x4n__fma__smem_v4_x1__sm_80");
}

#[test]
fn shared_memory_is_sized_from_the_tiles_and_padding() {
    let mut s = smem_spec();
    assert_eq!(generate(&s).unwrap().smem_bytes, (64 * 16 + 16 * 64) * 4);
    s.swizzle = Swizzle::Pad(4);
    assert_eq!(generate(&s).unwrap().smem_bytes, (64 * 20 + 16 * 68) * 4);
}

/// Each supported setting, changed alone, changes the source and the name.
#[test]
fn every_supported_setting_changes_the_kernel() {
    let base = generate(&smem_spec()).unwrap();
    let variants: Vec<(&str, Change)> = vec![
        ("block tile", Box::new(|s| s.block = Block { m: 128, n: 64, k: Some(32), threads: 512, min_blocks: None })),
        ("block k", Box::new(|s| s.block.k = Some(32))),
        ("thread tile", Box::new(|s| s.thread = Some(ThreadTile { m: 8, n: 2, lanes: Dim::N, sweep: Dim::N }))),
        ("lanes", Box::new(|s| s.thread = Some(ThreadTile { m: 4, n: 4, lanes: Dim::M, sweep: Dim::N }))),
        ("sweep", Box::new(|s| s.thread = Some(ThreadTile { m: 4, n: 4, lanes: Dim::N, sweep: Dim::M }))),
        ("vector", Box::new(|s| s.staging = Staging::Smem { vector: 2, transpose_a: false, buffers: 1 })),
        ("transpose_a", Box::new(|s| s.staging = Staging::Smem { vector: 4, transpose_a: true, buffers: 1 })),
        (
            "direct staging",
            Box::new(|s| {
                s.staging = Staging::Direct;
                s.block.k = None;
                s.edges = Edges::Guarded;
            }),
        ),
        ("alpha", Box::new(|s| s.fused.alpha = true)),
        ("beta", Box::new(|s| s.fused.beta = true)),
        ("bias along n", Box::new(|s| s.fused.bias = Some(Bias { along: Dim::N, elem: Elem::F32 }))),
        ("bias along m", Box::new(|s| s.fused.bias = Some(Bias { along: Dim::M, elem: Elem::Bf16 }))),
        ("relu", Box::new(|s| s.fused.activation = Some(Activation::Relu))),
        ("gelu", Box::new(|s| s.fused.activation = Some(Activation::Gelu))),
        ("gelu_tanh", Box::new(|s| s.fused.activation = Some(Activation::GeluTanh))),
        ("silu", Box::new(|s| s.fused.activation = Some(Activation::Silu))),
        ("padding", Box::new(|s| s.swizzle = Swizzle::Pad(4))),
        ("A layout", Box::new(|s| s.a.layout = Layout::ColMajor)),
        ("B layout", Box::new(|s| s.b.layout = Layout::ColMajor)),
        ("C layout", Box::new(|s| s.c.layout = Layout::ColMajor)),
        ("arch", Box::new(|s| s.arch = Arch::Sm90)),
        ("name", Box::new(|s| s.name = "other".into())),
        ("double buffering", Box::new(|s| s.staging = Staging::Smem { vector: 4, transpose_a: false, buffers: 2 })),
        ("vector epilogue", Box::new(|s| s.epilogue = Epilogue::Vector)),
        ("cp.async", Box::new(|s| s.staging = Staging::CpAsync { stages: 3, vector: 4, transpose_a: false, fragments: 1 })),
        ("cp.async stages", Box::new(|s| s.staging = Staging::CpAsync { stages: 2, vector: 4, transpose_a: false, fragments: 1 })),
        ("grouped raster", Box::new(|s| s.raster = Raster::Grouped(8))),
        ("min_blocks", Box::new(|s| s.block.min_blocks = Some(2))),
        (
            "warp tier",
            Box::new(|s| {
                s.block = Block { m: 128, n: 128, k: Some(16), threads: 256, min_blocks: None };
                s.thread = Some(ThreadTile { m: 8, n: 4, lanes: Dim::N, sweep: Dim::N });
                s.warp = Some(Warp { m: 64, n: 32, m_iters: 1, n_iters: 2 });
            }),
        ),
        ("stream-K schedule", Box::new(|s| s.persistent = Some(Persistent::StreamK))),
        ("guarded edges", Box::new(|s| s.edges = Edges::Guarded)),
        (
            "warp iterations",
            Box::new(|s| {
                s.block = Block { m: 128, n: 128, k: Some(16), threads: 256, min_blocks: None };
                s.thread = Some(ThreadTile { m: 8, n: 4, lanes: Dim::N, sweep: Dim::N });
                s.warp = Some(Warp { m: 64, n: 32, m_iters: 2, n_iters: 1 });
            }),
        ),
    ];
    for (what, change) in variants {
        let mut s = smem_spec();
        change(&mut s);
        let g = generate(&s).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert_ne!(g.source, base.source, "{what} left the source unchanged");
        assert_ne!(g.kernel_name, base.kernel_name, "{what} left the name unchanged");
    }
}

#[test]
fn sweep_m_issues_the_outer_product_a_column_at_a_time() {
    let mut s = smem_spec();
    let rows_first = generate(&s).unwrap().source;
    s.thread = Some(ThreadTile { m: 4, n: 4, lanes: Dim::N, sweep: Dim::M });
    let g = generate(&s).unwrap();
    let fma_loops = |src: &str| {
        let atom = &src[src.find("// atom (fma)").expect("an atom comment")..];
        (atom.find("for (int ii").unwrap(), atom.find("for (int jj").unwrap())
    };
    let (ii, jj) = fma_loops(&rows_first);
    assert!(ii < jj, "by default each A element serves a row of FMAs");
    let (ii, jj) = fma_loops(&g.source);
    assert!(jj < ii, "sweep = m: each B element serves a column of FMAs");
    assert!(g.source.contains("(sweep = m)") && g.kernel_name.contains("_sm"), "{}", g.kernel_name);
}

/// Each legal setting the generator cannot emit yet is an error at that setting.
#[test]
fn unsupported_settings_are_refused_not_ignored() {
    let cases: Vec<(&str, Change)> = vec![
        ("cluster", Box::new(|s| s.cluster = Some(Cluster { m: 2, n: 1, multicast: None, k: 1 }))),
        ("persistent", Box::new(|s| s.persistent = Some(Persistent::Tiles))),
        (
            "persistent",
            Box::new(|s| {
                s.staging = Staging::Direct;
                s.block.k = None;
                s.persistent = Some(Persistent::StreamK);
            }),
        ),
        ("epilogue", Box::new(|s| s.epilogue = Epilogue::Smem)),
        ("swizzle", Box::new(|s| s.swizzle = Swizzle::Xor)),
        ("c", Box::new(|s| s.c.elem = Elem::Bf16)),
        (
            "warp",
            Box::new(|s| {
                s.staging = Staging::Direct;
                s.block = Block { m: 128, n: 128, k: None, threads: 256, min_blocks: None };
                s.thread = Some(ThreadTile { m: 8, n: 4, lanes: Dim::N, sweep: Dim::N });
                s.warp = Some(Warp { m: 64, n: 32, m_iters: 1, n_iters: 2 });
            }),
        ),
    ];
    for (at, change) in cases {
        let mut s = smem_spec();
        change(&mut s);
        let errs = generate(&s).expect_err(at);
        assert!(errs.iter().any(|d| d.at == at && d.msg.contains("not generated yet")), "{at}: {errs:?}");
    }
}

/// A "not generated yet" error names the spec's own path (SIMT, sm_80's
/// tensor cores or Hopper's), the nearest setting that is generated, and the
/// guide's table of every path, in one line a terminal shows whole.
#[test]
fn an_unsupported_setting_names_its_path_and_an_alternative_in_one_short_line() {
    let mut simt = smem_spec();
    simt.persistent = Some(Persistent::Hybrid);
    let mut mma = mma_spec();
    mma.persistent = Some(Persistent::Tiles);
    let mut hopper = hopper_spec();
    hopper.persistent = Some(Persistent::TailSplit);
    hopper.cluster = Some(Cluster { m: 2, n: 1, multicast: None, k: 1 });
    let paths = ["the SIMT path", "the sm_80 tensor-core path", "the sm_90a path"];
    for (i, spec) in [simt, mma, hopper].iter().enumerate() {
        let errs = generate(spec).expect_err(paths[i]);
        let msg = &errs.iter().find(|d| d.at == "persistent").expect("an error at persistent").msg;
        for (j, path) in paths.iter().enumerate() {
            assert_eq!(msg.contains(path), i == j, "{path} in: {msg}");
        }
        assert!(msg.contains("; use ") || msg.contains(": use ") || msg.contains("remove"), "an alternative in: {msg}");
        assert!(msg.contains(gemm_core::support::GUIDE_MATRIX), "{msg}");
        assert!(msg.len() <= 300 && !msg.contains('\n'), "{} characters: {msg}", msg.len());
    }
}

/// wgmma fed by cp.async is one root cause: one error, at the staging,
/// whose advice (TMA stages) is what the rest of the spec was written for.
#[test]
fn an_atom_on_the_staging_of_another_path_is_one_error() {
    let mut s = hopper_spec();
    s.staging = Staging::CpAsync { stages: 4, vector: 8, transpose_a: false, fragments: 1 };
    let errs = generate(&s).expect_err("wgmma with cp.async");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].at, "staging");
    assert!(errs[0].msg.contains("use staging = tma(stages = 4)"), "{}", errs[0].msg);
    s.staging = Staging::tma(4);
    assert!(generate(&s).is_ok(), "the advice works");
    // without a producer but with its threads: the advice adds the specialization
    s.staging = Staging::CpAsync { stages: 4, vector: 8, transpose_a: false, fragments: 1 };
    s.specialize = None;
    let errs = generate(&s).expect_err("wgmma with cp.async, 384 threads");
    assert!(errs[0].msg.contains("use staging = tma(stages = 4) with specialize(consumers = 2)"), "{}", errs[0].msg);
    s.staging = Staging::tma(4);
    s.specialize = Some(Specialize {
        producers: 1,
        consumers: 2,
        producer_regs: None,
        consumer_regs: None,
        pingpong: false,
        arrivals: Arrivals::Warpgroup,
        overlap: false,
    });
    generate(&s).unwrap_or_else(|e| panic!("the advice: {e:?}"));
}

/// A cluster off the Hopper path is one error at the cluster, whatever it
/// asks (multicast, a split along K), since none of it is generated there.
#[test]
fn a_cluster_off_the_hopper_path_is_one_error() {
    for cluster in [
        Cluster { m: 2, n: 1, multicast: Some(Which::B), k: 1 },
        Cluster { m: 1, n: 1, multicast: None, k: 2 },
        Cluster { m: 4, n: 4, multicast: None, k: 1 },
    ] {
        for mut s in [mma_spec(), smem_spec()] {
            s.cluster = Some(cluster);
            let errs = generate(&s).expect_err("a cluster off the Hopper path");
            assert_eq!(errs.len(), 1, "{errs:?}");
            assert!(errs[0].at == "cluster" && errs[0].msg.contains("remove `cluster(..)`"), "{}", errs[0].msg);
            s.cluster = None;
            assert!(generate(&s).is_ok(), "the advice works");
        }
    }
}

#[test]
fn direct_kernels_guard_every_edge() {
    let mut s = smem_spec();
    s.staging = Staging::Direct;
    s.block.k = None;
    s.edges = Edges::Whole;
    let errs = generate(&s).expect_err("a direct fma kernel guards its edges always");
    assert!(errs.iter().any(|d| d.at == "edges"), "{errs:?}");
    s.edges = Edges::Guarded;
    let src = generate(&s).unwrap().source;
    assert!(src.contains("if (row0 >= M || col0 >= N) return;"));
    assert!(src.contains("row0 + i < M ?") && src.contains("col0 + j < N ?"), "{src}");
    assert!(src.contains("if (row0 + i < M && col0 + j < N)"));
    assert_eq!(s.requirements().m_multiple, 1);
}

#[test]
fn cp_async_copies_transposed_operands_element_by_element_and_the_rest_by_vector() {
    let mut s = smem_spec();
    s.staging = Staging::CpAsync { stages: 3, vector: 4, transpose_a: true, fragments: 1 };
    let src = generate(&s).unwrap().source;
    // A row-major into [k][m]: 4-byte copies; B row-major into [k][n]: 16-byte copies.
    assert!(src.contains("cp_async_4(a_dst"), "{src}");
    assert!(src.contains("cp_async_16(b_dst"), "{src}");
    assert!(src.contains("cp_async_wait<1>()"), "three stages wait for all but one group");
    s.staging = Staging::CpAsync { stages: 3, vector: 4, transpose_a: false, fragments: 1 };
    let src = generate(&s).unwrap().source;
    assert!(src.contains("cp_async_16(a_dst") && !src.contains("cp_async_4("), "{src}");
    // Every stage of both tiles is in shared memory.
    assert_eq!(generate(&s).unwrap().smem_bytes, 3 * (64 * 16 + 16 * 64) * 4);
}

/// Fragments a cp.async pipeline loads a k ahead go by `ld.volatile`, which
/// ptxas leaves among the FMAs where the source puts them; synchronous
/// staging keeps plain loads (the ladder's steps as measured).
#[test]
fn cp_async_fragment_loads_are_volatile_and_synchronous_ones_plain() {
    let mut s = smem_spec();
    s.staging = Staging::CpAsync { stages: 3, vector: 4, transpose_a: true, fragments: 1 };
    let src = generate(&s).unwrap().source;
    assert!(src.contains("ld.volatile.shared.v4.f32"), "{src}");
    assert!(src.contains("= lds128(&a_rd[") && src.contains("= lds128(&b_rd["), "{src}");
    assert!(!src.contains("*reinterpret_cast<const float4*>(&a_rd") && !src.contains("*reinterpret_cast<const float4*>(&b_rd"), "{src}");
    s.staging = Staging::Smem { vector: 4, transpose_a: true, buffers: 2 };
    let src = generate(&s).unwrap().source;
    assert!(!src.contains("lds128") && !src.contains("ld.volatile"), "{src}");
    assert!(src.contains("*reinterpret_cast<const float4*>(&b_rd["), "{src}");
}

/// Under stream-K a cp.async pipeline is filled once per block, before its
/// units, and its producer moves to the next C tile inside the main loop;
/// shared-memory staging starts afresh in each unit.
#[test]
fn stream_k_cp_async_pipelines_run_through_the_whole_share() {
    let mut s = smem_spec();
    s.staging = Staging::CpAsync { stages: 3, vector: 4, transpose_a: true, fragments: 1 };
    s.persistent = Some(Persistent::StreamK);
    for raster in [Raster::Row, Raster::Grouped(4)] {
        s.raster = raster;
        let src = generate(&s).unwrap().source;
        let units = src.find("for (long long it = first; it < last;)").expect("the unit loop");
        let fill = src.find("// pipeline fill").expect("the pipeline fill");
        assert!(fill < units, "the pipeline fills before the first unit: {src}");
        assert!(!src[units..].contains("// the previous unit is done with shared memory"), "{src}");
        let main_loop = &src[src.find("for (int kt = 0; kt < tiles; ++kt)").unwrap()..];
        assert!(main_loop.contains("if (copies_left > 0)") && main_loop.contains("aim();"), "{src}");
        // The producer finds a tile's origin by the same raster as the units.
        let aim = &src[src.find("const auto aim = [&]()").unwrap()..fill];
        assert_eq!(aim.contains("band"), raster != Raster::Row, "{aim}");
    }
    s.staging = Staging::Smem { vector: 4, transpose_a: true, buffers: 2 };
    let src = generate(&s).unwrap().source;
    let units = src.find("for (long long it = first; it < last;)").unwrap();
    assert!(src[units..].contains("// the previous unit is done with shared memory"), "{src}");
    assert!(!src.contains("copies_left"), "{src}");
}

/// A legal mma spec: bf16, row-major, 64x64x32 blocks of 4 warps of 32x32,
/// a 3-stage cp.async pipeline.
fn mma_spec() -> KernelSpec {
    let op = Operand { elem: Elem::Bf16, layout: Layout::RowMajor };
    KernelSpec {
        a: op,
        b: op,
        c: op,
        block: Block { m: 64, n: 64, k: Some(32), threads: 128, min_blocks: None },
        warp: Some(Warp { m: 32, n: 32, m_iters: 1, n_iters: 1 }),
        thread: None,
        atom: Atom::Mma { m: 16, n: 8, k: 16 },
        staging: Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 1 },
        ..smem_spec()
    }
}

/// The body is written once and run on the kernel's parameters where the
/// launch is one problem, on pointers moved to `blockIdx.z`'s problem in a
/// batch (the bias too), on the SIMT path and the sm_80 tensor path alike.
#[test]
fn one_problem_runs_the_body_on_the_parameters_and_a_batch_on_moved_pointers() {
    let mut mma = mma_spec();
    mma.fused.bias = Some(Bias { along: Dim::N, elem: Elem::F32 });
    for (s, types, args) in [
        (smem_spec(), "const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C", "A, B, C"),
        (
            mma,
            "const unsigned short* __restrict__ A, const unsigned short* __restrict__ B, unsigned short* __restrict__ C, const float* __restrict__ bias",
            "A, B, C, bias",
        ),
    ] {
        let src = generate(&s).unwrap().source;
        assert!(src.contains(&format!("const auto body = [&]({types}) {{")), "{src}");
        assert!(src.contains(&format!("if (gridDim.z == 1) body({args});")), "{src}");
        let moved: Vec<String> = args.split(", ").map(|p| format!("{p} + blockIdx.z * batch_{}", p.to_lowercase())).collect();
        assert!(src.contains(&format!("else body({});", moved.join(", "))), "{src}");
        assert!(!src.contains("A += blockIdx.z"), "{src}");
    }
}

#[test]
fn ldmatrix_transposes_exactly_the_operands_that_run_along_m_or_n() {
    let trans_of = |a: Layout, b: Layout| {
        let mut s = mma_spec();
        s.a.layout = a;
        s.b.layout = b;
        let src = generate(&s).unwrap().source;
        let a_trans = src.contains("ldmatrix_x4_trans(a_frag");
        let b_trans = src.contains("ldmatrix_x4_trans(b_frag");
        assert!(src.contains("ldmatrix_x4(a_frag") != a_trans && src.contains("ldmatrix_x4(b_frag") != b_trans);
        (a_trans, b_trans)
    };
    // A row-major and B column-major run along k: plain ldmatrix for both.
    assert_eq!(trans_of(Layout::RowMajor, Layout::ColMajor), (false, false));
    assert_eq!(trans_of(Layout::RowMajor, Layout::RowMajor), (false, true));
    assert_eq!(trans_of(Layout::ColMajor, Layout::ColMajor), (true, false));
    assert_eq!(trans_of(Layout::ColMajor, Layout::RowMajor), (true, true));
}

#[test]
fn copies_and_fragment_loads_share_one_layout_function_per_tile() {
    for swizzle in [Swizzle::None, Swizzle::Pad(8), Swizzle::Xor] {
        let src = generate(&KernelSpec { swizzle, ..mma_spec() }).unwrap().source;
        for p in ["a", "b"] {
            assert_eq!(src.matches(&format!("int {p}_at(int line, int e)")).count(), 1, "{swizzle:?}");
            // (cp.async's destinations are shared byte addresses)
            assert!(src.contains(&format!("{p}_dst[r] = {p}s_addr + 2 * {p}_at(line, e);")), "the copies place {p} through {p}_at");
            assert!(src.contains(&format!("{p}_at({p}_line")), "ldmatrix reads {p} through {p}_at");
        }
        assert_eq!(src.contains("^"), swizzle == Swizzle::Xor, "only xor permutes chunks");
    }
}

#[test]
fn sixteen_bit_c_is_rounded_by_cvt_and_f32_c_is_stored_as_is() {
    let bf16 = generate(&mma_spec()).unwrap().source;
    assert!(bf16.contains("cvt.rn.bf16.f32") && bf16.contains("C[") && bf16.contains("to_bf16("));
    let f32c = generate(&KernelSpec { c: Operand { elem: Elem::F32, layout: Layout::RowMajor }, ..mma_spec() }).unwrap().source;
    assert!(!f32c.contains("cvt.rn"));
    let vector = generate(&KernelSpec { epilogue: Epilogue::Vector, ..mma_spec() }).unwrap().source;
    assert!(vector.contains("to_bf16x2("), "paired stores pack two values");
}

#[test]
fn every_tensor_core_setting_changes_the_kernel() {
    let base = generate(&mma_spec()).unwrap();
    let changes: Vec<(&str, Change)> = vec![
        ("xor", Box::new(|s| s.swizzle = Swizzle::Xor)),
        ("pad", Box::new(|s| s.swizzle = Swizzle::Pad(8))),
        ("stages", Box::new(|s| s.staging = Staging::CpAsync { stages: 4, vector: 8, transpose_a: false, fragments: 1 })),
        ("vector", Box::new(|s| s.staging = Staging::CpAsync { stages: 3, vector: 4, transpose_a: false, fragments: 1 })),
        ("fragments", Box::new(|s| s.staging = Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 2 })),
        ("smem", Box::new(|s| s.staging = Staging::Smem { vector: 8, transpose_a: false, buffers: 1 })),
        ("double buffer", Box::new(|s| s.staging = Staging::Smem { vector: 8, transpose_a: false, buffers: 2 })),
        ("raster", Box::new(|s| s.raster = Raster::Grouped(4))),
        ("epilogue", Box::new(|s| s.epilogue = Epilogue::Vector)),
        ("c type", Box::new(|s| s.c.elem = Elem::F16)),
        ("a type", Box::new(|s| (s.a.elem, s.b.elem) = (Elem::F16, Elem::F16))),
        ("wmma", Box::new(|s| s.atom = Atom::Wmma { m: 16, n: 16, k: 16 })),
        ("gated", Box::new(|s| s.fused = Fused { activation: Some(Activation::Silu), gated: true, ..Fused::default() })),
        (
            "masked groups",
            Box::new(|s| {
                s.groups = Some(Groups::Masked);
                s.edges = Edges::Guarded;
            }),
        ),
        (
            "indexed groups",
            Box::new(|s| {
                s.groups = Some(Groups::Indexed);
                s.edges = Edges::Guarded;
            }),
        ),
    ];
    for (what, change) in changes {
        let mut s = mma_spec();
        change(&mut s);
        if matches!(s.atom, Atom::Wmma { .. }) {
            s.c.elem = Elem::F32;
        }
        let g = generate(&s).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert_ne!(g.source, base.source, "{what} left the source unchanged");
        assert_ne!(g.kernel_name, base.kernel_name, "{what} left the name unchanged");
    }
}

#[test]
fn two_fragment_sets_load_a_k_step_ahead_and_wait_for_the_next_tile_before_the_last_step() {
    let with = |fragments: u32, k: u32| {
        let mut s = mma_spec();
        s.block.k = Some(k);
        s.staging = Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments };
        generate(&s).unwrap().source
    };
    let one = with(1, 32);
    assert!(one.contains("unsigned a_frag[2][4], b_frag[4][2];"), "one set, declared in each step");
    let two = with(2, 32);
    assert!(two.contains("unsigned a_frag[2][2][4], b_frag[2][4][2];"), "two sets of 2x4 atoms' fragments");
    // tile 0's first fragments load before the loop; the loop loads each next step's
    let before_loop = &two[..two.find("for (int kt = 0").unwrap()];
    assert!(before_loop.contains("a_frag[0][im]") && before_loop.contains("__syncthreads()"));
    let body = &two[two.find("for (int kt = 0").unwrap()..];
    // the barrier for the next tile sits before the last step's mmas, after its loads
    let barrier = body.find("__syncthreads()").unwrap();
    let next_first = body.find("if (kt + 1 < tiles)").unwrap();
    let last_mma = body.rfind("mma_m16n8k16(acc[im][jn], a_frag[1]").unwrap();
    assert!(body.find("ldmatrix_x4(a_frag[1]").unwrap() < barrier && barrier < next_first && next_first < last_mma);
    assert_eq!(body.matches("__syncthreads()").count(), 1, "one barrier a tile");
    assert!(!two.contains("a_frag[0][im][r] = a_frag[1][im][r]"), "an even number of steps alternates sets");
    // three steps a tile: the next tile's first fragments land in set 1 and move to set 0
    let odd = with(2, 48);
    assert!(odd.contains("a_frag[0][im][r] = a_frag[1][im][r];") && odd.contains("b_frag[0][jn][r] = b_frag[1][jn][r];"));
}

#[test]
fn tensor_core_stream_k_walks_units_around_one_pipeline_and_hands_over_every_accumulator() {
    for (atom, regs) in [(Atom::Mma { m: 16, n: 8, k: 16 }, 4), (Atom::Wmma { m: 16, n: 16, k: 16 }, 8)] {
        let mut s = mma_spec();
        s.atom = atom;
        s.c.elem = Elem::F32;
        s.persistent = Some(Persistent::StreamK);
        let src = generate(&s).unwrap().source;
        assert!(src.contains("float* __restrict__ partials, unsigned* __restrict__ flags)"));
        let units = src.find("for (long long it = first; it < last;)").expect("a loop over units");
        // the copies' producer and the pipeline fill come once, before the units
        assert!(src.find("const auto aim = [&]()").unwrap() < units && src.find("cp_async_commit();").unwrap() < units);
        assert_eq!(src.matches("__syncthreads();  // everyone's have").count(), 1);
        // every accumulator register goes into the partial sum and comes back out
        assert!(src.contains(&format!("for (int r = 0; r < {regs}; ++r)")));
        assert!(src.contains("__stcg(&mine[im * ") && src.contains("acc[im][jn][r] += __ldcg(&theirs[im * "));
    }
    // two fragment sets: each unit loads its own first fragments after a barrier
    let mut s = mma_spec();
    s.persistent = Some(Persistent::StreamK);
    s.staging = Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 2 };
    let src = generate(&s).unwrap().source;
    let unit = &src[src.find("for (long long it = first").unwrap()..src.find("for (int kt = 0").unwrap()];
    assert!(unit.contains("float acc[") && unit.contains("__syncthreads();") && unit.contains("ldmatrix_x4(a_frag[0]"));
}

/// A stream-K unit of a kernel with shared-memory staging, whose loads
/// name A and B, reads its own problem of the batch: in the unit's scope
/// A and B are moved past the problems before it, after the unit's tile
/// (and so its problem) is worked out.
#[test]
fn stream_k_units_with_shared_memory_staging_read_their_own_problem() {
    let mut s = smem_spec();
    s.persistent = Some(Persistent::StreamK);
    for buffers in [1, 2] {
        s.staging = Staging::Smem { vector: 4, transpose_a: false, buffers };
        let src = generate(&s).unwrap().source;
        assert_in_order(
            &src,
            &[
                "const int batch = tile / (tiles_m * tiles_n);",
                "const float* const a_unit = A + batch * batch_a;",
                "const float* const b_unit = B + batch * batch_b;",
                "const float* const A = a_unit;",
                "const float* const B = b_unit;",
                "__syncthreads();  // the previous unit is done with shared memory",
            ],
        );
    }
}

/// A stream-K unit keeps nothing of its tile in registers through its K
/// loop: the tile, its first K step and its origin are worked out after it.
/// Guarded, a launch at sizes that are tile multiples runs a loop without
/// checks in every block, any other size the loop with a branch per tile in
/// every block.
#[test]
fn stream_k_units_work_out_their_tile_after_the_k_loop() {
    let mut s = smem_spec();
    s.staging = Staging::CpAsync { stages: 3, vector: 4, transpose_a: true, fragments: 1 };
    s.persistent = Some(Persistent::StreamK);
    for edges in [Edges::Whole, Edges::Guarded] {
        s.edges = edges;
        let src = generate(&s).unwrap().source;
        let units = src.find("for (long long it = first; it < last;)").unwrap();
        let k_loop = units + src[units..].find("for (int kt = 0; kt < tiles; ++kt)").unwrap();
        let tile = units + src[units..].find("const int tile = (int)((it - tiles) / k_tiles);").unwrap();
        let origin = units + src[units..].find("const int block_m = ").unwrap();
        assert!(k_loop < tile && tile < origin, "{src}");
        let guarded = edges == Edges::Guarded;
        assert_eq!(src.contains("const bool all_whole = M % 64 == 0 && N % 64 == 0 && K % 16 == 0;\n    if (all_whole) {"), guarded, "{src}");
        // the producer keeps no origin: the checked copies work it out
        assert_eq!(src.contains("copy_origin(copy_m, copy_n);"), guarded);
        assert!(!src.contains("int copy_m = 0"));
    }
}

/// The mma epilogue loads each bias value a lane needs once, before its
/// stores, and reads no bias inside them.
#[test]
fn the_mma_epilogue_loads_the_bias_once_ahead_of_its_stores() {
    for (along, index) in [(Dim::N, "bias_ahead[jn][1]"), (Dim::M, "bias_ahead[im][h]")] {
        let mut s = mma_spec();
        s.fused = Fused { bias: Some(Bias { along, elem: Elem::Bf16 }), activation: Some(Activation::GeluTanh), ..Fused::default() };
        s.edges = Edges::Guarded;
        let src = generate(&s).unwrap().source;
        assert_eq!(src.matches("bf16_to_f32(bias[").count(), 1, "{src}");
        assert!(src.contains(index), "{src}");
    }
}

/// Where C is bf16, whose rounding hides their error, the GELUs take fast
/// forms: gelu_tanh tanh's one hardware op (elsewhere the sigmoid's exp2
/// and reciprocal), the exact gelu Phi's tail as 2 to a fitted polynomial,
/// one 2^x (elsewhere erff).
#[test]
fn the_gelus_take_fast_forms_only_for_a_bf16_c() {
    let tanh_fast = ["tanh.approx.f32", "return fmaf(hx, tanh_approx(x * fmaf(x * x, 0.035677408f, 0.79788456f)), hx);"];
    let erf_fast = ["float p = fmaf(ax, -2.3325147e-4f, 4.8697796e-3f);", "return fmaf(-ax, ex2_approx(p), fmaxf(x, 0.0f));"];
    for (activation, fast, slow) in [(Activation::GeluTanh, tanh_fast, "rcp_approx(1.0f + ex2_approx("), (Activation::Gelu, erf_fast, "erff(")] {
        for elem in [Elem::Bf16, Elem::F16, Elem::F32] {
            let mut s = mma_spec();
            s.c.elem = elem;
            s.fused = Fused { activation: Some(activation), ..Fused::default() };
            let src = generate(&s).unwrap().source;
            let bf16 = elem == Elem::Bf16;
            assert!(fast.iter().all(|f| src.contains(f) == bf16), "{activation:?} into {elem:?}: {src}");
            assert_eq!(src.contains(slow), !bf16, "{activation:?} into {elem:?}: {src}");
        }
    }
}

/// wmma's accumulators go through a per-warp scratch tile in shared memory
/// when the epilogue must know where each value lies; the scratch comes
/// after the staged tiles, 128-byte aligned.
#[test]
fn a_fused_or_guarded_wmma_epilogue_goes_through_a_scratch_tile() {
    let mut s = mma_spec();
    s.atom = Atom::Wmma { m: 16, n: 16, k: 16 };
    s.c.elem = Elem::F32;
    s.swizzle = Swizzle::Pad(8);
    let plain = generate(&s).unwrap();
    assert!(!plain.source.contains("c_scratch"));
    for change in [|s: &mut KernelSpec| s.fused.alpha = true, |s: &mut KernelSpec| s.edges = Edges::Guarded] {
        let mut t = s.clone();
        change(&mut t);
        let g = generate(&t).unwrap();
        assert!(g.source.contains("wmma_store(c_scratch, acc[im][jn], 16);"), "{}", g.source);
        // 4 warps of one 16x16 f32 tile each, after the staged tiles
        assert_eq!(g.smem_bytes, plain.smem_bytes.next_multiple_of(128) + 4 * 16 * 16 * 4);
    }
}

/// Guarded copies read nothing past an operand: on the tensor-core path a
/// copy across the end of a line that another line follows asks cp.async
/// for the elements inside (its other bytes lie in the operand), one across
/// the operand's last line loads what lies inside and stores it, one
/// wholly outside stores zeros; the SIMT path's copies across an edge all
/// load; synchronous staging checks every copy the same way.
#[test]
fn guarded_copies_across_an_edge_load_what_lies_inside() {
    let mut s = mma_spec();
    s.edges = Edges::Guarded;
    let src = generate(&s).unwrap().source;
    assert!(src.contains("void copy_edge_16(unsigned dst, const unsigned short* src, int n, bool follows)"), "{src}");
    assert!(src.contains("else if (n > 0 && follows) {\n        cp_async_16_zfill(dst, src, n * 2);"), "{src}");
    assert!(src.contains("const uint4 v = n > 0 ? load_edge(src, n) : uint4{};"), "{src}");
    assert!(src.contains("__device__ __forceinline__ uint4 load_edge("), "inlined: a call would spill the loop");
    // each copy's line: A's rows along M, B's (row-major) along K
    assert!(src.contains(", n, block_m + line + 1 < M);"), "{src}");
    assert!(src.contains("(kt + 2) * 32 + line + 1 < K);"), "{src}");
    let mut simt = smem_spec();
    simt.staging = Staging::CpAsync { stages: 3, vector: 4, transpose_a: false, fragments: 1 };
    simt.edges = Edges::Guarded;
    let src = generate(&simt).unwrap().source;
    // the SIMT pipeline's copies take the same form, 4-byte elements
    assert!(src.contains("void copy_edge_16(unsigned dst, const float* src, int n, bool follows)"), "{src}");
    assert!(src.contains("else if (n > 0 && follows) {\n        cp_async_16_zfill(dst, src, n * 4);"), "{src}");
    assert!(src.contains("__device__ __forceinline__ float4 load_edge("), "{src}");
    assert!(src.contains(" + 1 < M);") && src.contains(" + 1 < K);"), "{src}");
    s.staging = Staging::Smem { vector: 8, transpose_a: false, buffers: 2 };
    let src = generate(&s).unwrap().source;
    assert!(src.contains("n == 8 ? *reinterpret_cast<const uint4*>(") && src.contains(": load_edge("), "{src}");
    let mut s = smem_spec();
    s.edges = Edges::Guarded;
    let src = generate(&s).unwrap().source;
    assert!(src.contains("float4 load_edge(const float* p, int n)"), "{src}");
}

/// `epilogue = smem`: the lanes store into the block's C tile, laid out as
/// C, and the tile goes out in 16-byte chunks. The tile takes the stages'
/// place (the block's shared memory is the larger of the two), except under
/// stream-K, where it lies past the stages; its lines are 16-byte aligned
/// and apart by 8 (row-major; 4 or 8 column-major) past a bank row.
#[test]
fn an_smem_epilogue_stores_into_a_c_tile_that_goes_out_in_16_byte_chunks() {
    let mut s = mma_spec();
    s.epilogue = Epilogue::Smem;
    let g = generate(&s).unwrap();
    let staged = s.staged_bytes();
    assert_eq!(g.smem_bytes, staged);
    assert!(g.source.contains("unsigned short* const c_tile = reinterpret_cast<unsigned short*>(smem_raw);"), "{}", g.source);
    assert!(g.source.contains("*reinterpret_cast<unsigned*>(&c_tile[(t_row + "), "{}", g.source);
    assert!(g
        .source
        .contains("*reinterpret_cast<uint4*>(&C[(long long)row * ldc + col]) = *reinterpret_cast<const uint4*>(&c_tile[line * 72 + e]);"));
    assert!(!g.source.contains("&C[(c_row"), "no lane stores to C itself");
    // the C tile for each layout and type: ld, and 16-byte aligned lines
    for (layout, elem, ld) in
        [(Layout::RowMajor, Elem::Bf16, 72), (Layout::RowMajor, Elem::F32, 72), (Layout::ColMajor, Elem::Bf16, 72), (Layout::ColMajor, Elem::F32, 68)]
    {
        let mut t = s.clone();
        t.c = Operand { elem, layout };
        let tile = t.c_tile().unwrap();
        assert_eq!((tile.lines, tile.line, tile.ld), (64, 64, ld));
        assert_eq!(ld * elem.bytes() % 16, 0);
        assert!(generate(&t).is_ok());
    }
    // an f32 tile larger than two stages sets the block's shared memory
    let mut t = s.clone();
    t.c.elem = Elem::F32;
    t.staging = Staging::CpAsync { stages: 2, vector: 8, transpose_a: false, fragments: 1 };
    assert_eq!(generate(&t).unwrap().smem_bytes, 64 * 72 * 4);
    // under stream-K the tile lies past the stages, which stay in flight
    s.persistent = Some(Persistent::StreamK);
    let g = generate(&s).unwrap();
    let offset = staged.next_multiple_of(128);
    // and past it the schedule's ticket, padded to 16 bytes
    assert_eq!(g.smem_bytes, offset + 64 * 72 * 2 + 16);
    assert!(g.source.contains(&format!("reinterpret_cast<unsigned short*>(smem_raw + {offset});")));
    assert!(!g.source.contains("cp_async_wait<0>();"));
}

/// A two-consumer Hopper spec (seed 002's kernel 5): a legal baseline for
/// the sm_90a generator.
fn hopper_spec() -> KernelSpec {
    let bf16 = |layout| Operand { elem: Elem::Bf16, layout };
    KernelSpec {
        name: "h".into(),
        a: bf16(Layout::RowMajor),
        b: bf16(Layout::ColMajor),
        c: bf16(Layout::RowMajor),
        block: Block { m: 128, n: 256, k: Some(64), threads: 384, min_blocks: None },
        warp: Some(Warp { m: 64, n: 256, m_iters: 1, n_iters: 1 }),
        thread: None,
        atom: Atom::Wgmma { m: 64, n: 256, k: 16, zeroed: false, promote: false },
        staging: Staging::tma(4),
        specialize: Some(Specialize {
            producers: 1,
            consumers: 2,
            producer_regs: Some(24),
            consumer_regs: Some(240),
            pingpong: false,
            arrivals: Arrivals::Warpgroup,
            overlap: false,
        }),
        swizzle: Swizzle::B128,
        raster: Raster::Row,
        persistent: None,
        cluster: None,
        epilogue: Epilogue::Vector,
        fused: Fused::default(),
        edges: Edges::Guarded,
        groups: None,
        arch: Arch::Sm90a,
    }
}

/// Warp specialization: warpgroup 0 gives registers back and one of its
/// threads waits on each stage's empty barrier before its copies; the
/// consumers take registers, wait on the full barrier, and each releases
/// the stage with one arrival; one block per SM in the launch bounds.
#[test]
fn a_specialized_kernel_has_a_producer_and_consumers_around_a_ring_of_stages() {
    let g = generate(&hopper_spec()).unwrap();
    let src = &g.source;
    assert!(src.contains("__launch_bounds__(384, 1)"), "{src}");
    let producer = src.find("if (threadIdx.x < 128)").expect("a producer branch");
    let consumer = src[producer..].find("else {").map(|i| producer + i).expect("a consumer branch");
    let (p, c) = (&src[producer..consumer], &src[consumer..]);
    assert!(p.contains("regs_dec<24>()") && p.contains("mbar_wait(empty + 8 * stage, ((kt / 4) & 1) ^ 1)"), "{p}");
    assert!(p.contains("mbar_expect_bytes(bar, 49152)") && p.matches("tma_load(").count() == 2, "{p}");
    assert!(c.contains("regs_inc<240>()") && c.contains("mbar_wait(full + 8 * stage, (kt / 4) & 1)"), "{c}");
    // the previous stage is released once its wgmmas are done, this one's in flight
    assert!(c.contains("wgmma_wait<1>();"), "{c}");
    assert!(c.contains("if (kt > 0 && threadIdx.x % 128 == 0) mbar_arrive(empty + 8 * ((kt - 1) % 4));"), "{c}");
    assert!(src.contains("mbar_init(empty + 8 * s, 2)"), "one release per consumer warpgroup");
    // 4 stages of 16 KB of A and 32 KB of B, the 1024-byte alignment slack, 8 barriers
    assert_eq!(g.smem_bytes, 4 * (16384 + 32768) + 1024 + 64);
}

/// `arrivals = thread` (the CUDA barrier API's form, the ladder's steps
/// before `fast_barriers`): every consumer thread arrives on both of a
/// stage's barriers and the producer on "empty" too, each waiting on its
/// own token, 257 arrivals a phase; the consumers' first arrivals on
/// "empty" start the ring empty. No parity wait is left.
#[test]
fn thread_arrivals_have_every_consumer_thread_arrive_and_wait_on_its_token() {
    let mut s = hopper_spec();
    s.persistent = Some(Persistent::Tiles);
    s.specialize = Some(Specialize { arrivals: Arrivals::Thread, ..s.specialize.unwrap() });
    let src = generate(&s).unwrap().source;
    assert!(src.contains("mbar_init(full + 8 * s, 257)") && src.contains("mbar_init(empty + 8 * s, 257)"), "{src}");
    let producer = src.find("if (threadIdx.x < 128)").expect("a producer branch");
    let consumer = src[producer..].find("else {").map(|i| producer + i).expect("a consumer branch");
    let (p, c) = (&src[producer..consumer], &src[consumer..]);
    assert!(p.contains("mbar_arrive_wait(empty + 8 * stage);") && p.contains("mbar_expect_bytes(bar, 49152)"), "{p}");
    assert!(c.contains("for (int s = 0; s < 4; ++s) mbar_arrive(empty + 8 * s);"), "{c}");
    assert!(c.contains("mbar_arrive_wait(full + 8 * stage);"), "{c}");
    assert!(c.contains("if (kt > 0) mbar_arrive(empty + 8 * ((it - 1) % 4));"), "{c}");
    assert!(!src.contains("mbar_wait("), "no parity waits, nor their helper: {src}");
    // the default: one elected arrival, parity waits
    let fast = generate(&hopper_spec()).unwrap().source;
    assert!(!fast.contains("mbar_arrive_wait") && fast.contains("mbar_init(full + 8 * s, 1)"), "{fast}");
    assert!(fast.contains("void mbar_wait(unsigned bar, unsigned parity)"), "{fast}");
}

/// `wgmma(.., zeroed)` (the ladder's steps before `micro`): each tile's
/// accumulators are zeroed and every wgmma adds to them; by default a
/// tile's first K step's wgmmas write them (accumulate only past it).
#[test]
fn zeroed_accumulators_are_cleared_before_each_tile_and_every_wgmma_adds() {
    let mut s = hopper_spec();
    s.atom = Atom::Wgmma { m: 64, n: 256, k: 16, zeroed: true, promote: false };
    let src = generate(&s).unwrap().source;
    assert!(src.contains("acc[0][0][q][e] = 0.0f;"), "{src}");
    assert!(src.contains("wgmma_m64n256k16(acc[0][0], ") && src.contains(", 1);"), "{src}");
    assert!(!src.contains("kt > 0 || ks > 0"), "{src}");
    let first = generate(&hopper_spec()).unwrap().source;
    assert!(first.contains("kt > 0 || ks > 0") && !first.contains("= 0.0f;"), "{first}");
}

/// The stages filled by cp.async (the variant for A or B lines TMA cannot
/// read): the whole producer warpgroup copies each stage into TMA's
/// swizzled layout (storing a copy across an edge itself) and arrives for
/// its stores and once more as its copies land (`.noinc`: 256 arrivals a
/// full barrier), a consumer fences the async proxy before its wgmmas read the
/// stage, and the kernel takes no tensor map of A or B; an M-major A is
/// copied along M, its lines along K.
#[test]
fn stages_filled_by_cp_async_take_the_layout_tma_would_and_arrive_from_every_producer_thread() {
    let mut s = hopper_spec();
    s.staging = Staging::Tma { stages: 4, cp_async: Some(RingCopies::both(4)), prefetch: 0, evict_first: Default::default(), by_class: false };
    s.specialize = Some(ring_producer());
    let src = generate(&s).unwrap().source;
    assert!(!src.contains("tma_load(") && !src.contains("TensorMap tmap"), "{src}");
    assert!(src.contains("mbar_init(full + 8 * s, 256);"), "{src}");
    assert!(src.contains("cp.async.mbarrier.arrive.noinc.shared::cta.b64"), "{src}");
    let producer = src.find("if (threadIdx.x < 128)").expect("a producer branch");
    let consumer = src[producer..].find("else {").map(|i| producer + i).expect("a consumer branch");
    let (p, c) = (&src[producer..consumer], &src[consumer..]);
    assert!(!p.contains("threadIdx.x == 0"), "every producer thread copies: {p}");
    assert!(p.contains("ring_copy_a(a_smem + stage * 16384, A + a_batch * batch_a, lda, block_m, k0, M, K);"), "{p}");
    assert!(p.contains("ring_copy_b(b_smem + stage * 32768, B + b_batch * batch_b, ldb, block_n, k0, N, K);"), "{p}");
    assert!(p.contains("ring_arrive(bar);"), "{p}");
    let wait = c.find("mbar_wait(full + 8 * stage, (kt / 4) & 1);").expect("a wait on the full barrier");
    assert_eq!(c[wait..].lines().nth(1).map(str::trim), Some("fence_proxy_async();  // written by cp.async, read by wgmma"));
    // A: 128 lines of 64 elements, 16 copies of 8 bytes a thread, each 8 lines on from the one
    // before, chunks XORed by the line's place among 8: the same XOR for every copy
    for line in [
        "const int l = threadIdx.x % 128 / 16;  // the first line",
        "const int c = threadIdx.x % 16 * 4;",
        "off ^= ((off >> 7) & 7) << 4;",
        "for (int i = 0; i < 16; ++i, p += 8 * (long long)ld) {",
        // whole copies where the tile lies inside A, and each reading what lies inside where it does not
        "if (line0 + 128 <= lines && c0 + 64 <= len) {",
        "cp_async_8(box + off + i * 1024, p);",
        "if (n == 4) cp_async_8(box + off + i * 1024, p);",
        "else ring_part_8(box + off + i * 1024, p, n);",
    ] {
        assert!(src.contains(line), "{line}\n{src}");
    }
    // an M-major A: lines along K (k0 onwards, up to K), elements along M from block_m
    s.a.layout = Layout::ColMajor;
    let src = generate(&s).unwrap().source;
    assert!(src.contains("ring_copy_a(a_smem + stage * 16384, A + a_batch * batch_a, lda, k0, block_m, K, M);"), "{src}");
    // boxes of 64 elements along M, two of them, each 64 lines of K; a thread copies every 4th line,
    // each line's chunks XORed by its own place
    assert!(src.contains("const unsigned box = dst + (c / 64) * 8192;"), "{src}");
    assert!(src.contains("unsigned off = (l + 4 * i) * 128 + byte;"), "{src}");
}

/// A producer warpgroup with the registers cp.async copies take, two consumers.
fn ring_producer() -> Specialize {
    Specialize {
        producers: 1,
        consumers: 2,
        producer_regs: Some(40),
        consumer_regs: Some(232),
        pingpong: false,
        arrivals: Arrivals::Warpgroup,
        overlap: false,
    }
}

/// The stages of one operand filled by cp.async, TMA loading the other's
/// (the variant for a B whose lines TMA cannot read beside an A it can, or
/// A's copy): the kernel takes A's tensor map alone, the full barrier
/// expects the 128 copiers' arrivals and thread 0's with A's bytes, which
/// thread 0 loads out of line each K step before the warpgroup copies B.
#[test]
fn stages_of_one_operand_filled_by_cp_async_beside_tma_loads_of_the_other() {
    let mut s = hopper_spec();
    s.staging = Staging::Tma {
        stages: 4,
        cp_async: Some(RingCopies { vector: 4, only: Some(Which::B) }),
        prefetch: 0,
        evict_first: Default::default(),
        by_class: false,
    };
    s.specialize = Some(ring_producer());
    assert!(gemm_core::check(&s).is_empty(), "{:?}", gemm_core::check(&s));
    assert_eq!(s.tma_maps(), ["a"]);
    assert_eq!(s.requirements().operands, [(8, 16), (4, 8)]);
    assert!(s.kernel_name().contains("_cp4b_"), "{}", s.kernel_name());
    let src = generate(&s).unwrap().source;
    assert!(src.contains("const __grid_constant__ TensorMap tmap_a)") && !src.contains("tmap_b"), "{src}");
    assert!(src.contains("mbar_init(full + 8 * s, 257);"), "{src}");
    // each operand's own alignment: TMA's rows for A, the copies' for B
    assert!(src.contains("// Requires: A 16-byte aligned, leading dimensions multiples of 8."), "{src}");
    assert!(src.contains("// Requires: B 8-byte aligned, leading dimensions multiples of 4."), "{src}");
    assert!(src.contains("__device__ __noinline__ void ring_tma_a(") && src.contains("mbar_expect_bytes(bar, 16384);"), "{src}");
    assert!(!src.contains("void ring_copy_a(") && src.contains("void ring_copy_b("), "{src}");
    let producer = src.find("if (threadIdx.x < 128)").expect("a producer branch");
    let consumer = src[producer..].find("else {").map(|i| producer + i).expect("a consumer branch");
    let p = &src[producer..consumer];
    let tma = p.find("if (threadIdx.x == 0) ring_tma_a(bar, a_smem + stage * 16384, k0, block_m, a_batch, tmap_a);").expect("A's loads");
    let copies = p.find("ring_copy_b(b_smem + stage * 32768, B + b_batch * batch_b, ldb, block_n, k0, N, K);").expect("B's copies");
    let arrive = p.find("ring_arrive(bar);").expect("the copiers' arrival");
    assert!(tma < copies && copies < arrive, "{p}");
}

/// A 2x1 cluster multicasting B: the kernel declares its cluster, the
/// blocks meet after setting up their barriers and before leaving, each
/// loads half of B's tile (128 lines at rank_m * 128) into both blocks, a
/// stage is freed by the 2 consumers of both blocks (4 arrivals, each
/// consumer arriving on both blocks' barriers), and the raster places
/// 256x256 cluster tiles.
#[test]
fn a_cluster_shares_b_by_multicast_and_frees_a_stage_once_both_blocks_are_done() {
    let mut spec = hopper_spec();
    spec.cluster = Some(Cluster { m: 2, n: 1, multicast: Some(Which::B), k: 1 });
    spec.persistent = Some(Persistent::Tiles);
    let g = generate(&spec).unwrap();
    let src = &g.source;
    assert!(src.contains("__cluster_dims__(2, 1, 1)"), "{src}");
    assert_eq!(src.matches("cluster_sync();").count(), 2, "{src}");
    assert!(src.contains("mbar_init(empty + 8 * s, 4)"), "{src}");
    assert!(src.contains("const unsigned short share_mask = 0x3 << (rank_n * 2);") && src.contains("const int share_part = rank_m;"), "{src}");
    assert!(
        src.contains(
            "tma_load_multicast(b_smem + stage * 32768 + share_part * 16384, tmap_b, k0, block_n + share_part * 128, b_batch, bar, share_mask);"
        ),
        "{src}"
    );
    assert!(src.contains("tma_load(a_smem + stage * 16384, tmap_a, k0, block_m, a_batch, bar);"), "{src}");
    assert!(src.contains("mbar_wait(empty + 8 * stage, ((it / 4) & 1) ^ 1);  // every consumer of the cluster has released it"), "{src}");
    assert!(src.contains("if (kt > 0 && threadIdx.x % 128 < 2) mbar_arrive_cluster(empty + 8 * ((it - 1) % 4), threadIdx.x % 128);"), "{src}");
    assert!(src.contains("const int tiles_m = (M + 256 - 1) / 256;  // cluster tiles"), "{src}");
    assert!(src.contains("for (int t = blockIdx.x / 2; t < tiles_m * tiles_n * batches; t += gridDim.x / 2)"), "{src}");
    assert!(src.contains("const int block_m = cluster_m + (int)(cluster_rank() % 2) * 128;"), "{src}");
    // B's tensor map boxes are half the tile's lines; the grid is one row of whole clusters
    assert_eq!(spec.tma_tile(Which::B).outer, 128);
    assert_eq!(gemm_core::grid(&KernelSpec { persistent: None, ..spec.clone() }, 1000, 600), (4 * 3 * 2, 1, 1));
}

/// Without specialization every warpgroup computes and thread 0 refills the
/// stage the block just finished, after a barrier.
#[test]
fn alike_warpgroups_refill_a_stage_after_a_block_barrier() {
    let mut s = hopper_spec();
    s.specialize = None;
    s.block = Block { m: 128, n: 128, k: Some(64), threads: 256, min_blocks: None };
    s.warp = Some(Warp { m: 64, n: 128, m_iters: 1, n_iters: 1 });
    s.atom = Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false };
    let src = generate(&s).unwrap().source;
    assert!(src.contains("__launch_bounds__(256)\n") && !src.contains("regs_"), "{src}");
    let refill = "__syncthreads();  // every warpgroup is done with the stage\n        if (threadIdx.x == 0 && kt + 4 < k_tiles) {";
    assert!(src.contains(refill), "{src}");
    assert!(src.contains("mbar_init(empty + 8 * s, 1)"));
}

/// K-major operands (A row-major, B column-major) step 32 bytes along their
/// 128-byte swizzle rows per K step; an N-major B (row-major) is a box of
/// 64 columns by K lines per 64 columns, its descriptor's LBO the box's
/// bytes, 16 lines (2048 bytes) per K step, and wgmma's transpose bit set.
#[test]
fn wgmma_descriptors_follow_each_operands_major_side() {
    let src = generate(&hopper_spec()).unwrap().source;
    assert!(src.contains("wgmma_desc(a_smem + stage * 16384 + group_m * 128 + ks * 32, 16, 1024)"), "{src}");
    assert!(src.contains("wgmma_desc(b_smem + stage * 32768 + group_n * 128 + ks * 32, 16, 1024)"), "{src}");
    assert!(src.contains("1, 1, 0, 0;"), "neither operand transposed");
    let mut s = hopper_spec();
    s.b.layout = Layout::RowMajor;
    let src = generate(&s).unwrap().source;
    assert!(src.contains("wgmma_desc(b_smem + stage * 32768 + (group_n / 64) * 8192 + ks * 2048, 8192, 1024)"), "{src}");
    assert!(src.contains("1, 1, 0, 1;"), "B read N-major");
    for (i, c0) in ["block_n", "block_n + 64", "block_n + 128", "block_n + 192"].into_iter().enumerate() {
        let load = format!(
            "tma_load(b_smem + stage * 32768{}, tmap_b, {c0}, k0, b_batch, bar);",
            if i == 0 { String::new() } else { format!(" + {}", i * 8192) }
        );
        assert!(src.contains(&load), "{load}\n{src}");
    }
}

/// `persistent = tiles`: producer and consumers walk the same tiles
/// (`gridDim.x` apart, over every problem) with one count of stages that
/// runs on from tile to tile, and the consumers hand the last stage of a
/// tile back before its epilogue, so the producer fills the next tile's
/// stages while C is stored.
#[test]
fn a_persistent_kernel_walks_tiles_with_one_count_of_stages() {
    let mut s = hopper_spec();
    s.persistent = Some(Persistent::Tiles);
    let src = generate(&s).unwrap().source;
    assert!(src.contains("    int batches,\n"), "the batch count is a parameter: {src}");
    let walk = "for (int t = blockIdx.x; t < tiles_m * tiles_n * batches; t += gridDim.x) {";
    assert_eq!(src.matches(walk).count(), 2, "producer and consumers walk the tiles: {src}");
    // the producer's two (a whole tile's copies and an edge tile's) and the consumers'
    assert_eq!(src.matches("for (int kt = 0; kt < k_tiles; ++kt, ++it) {").count(), 3, "{src}");
    assert!(src.contains("mbar_wait(empty + 8 * stage, ((it / 4) & 1) ^ 1);"), "{src}");
    assert!(src.contains("mbar_wait(full + 8 * stage, (it / 4) & 1);"), "{src}");
    let last = src.find("wgmma_wait<0>();").unwrap();
    let release = src.find("if (threadIdx.x % 128 == 0) mbar_arrive(empty + 8 * ((it - 1) % 4));").expect("the last stage released");
    let epilogue = src.find("// epilogue").unwrap();
    assert!(last < release && release < epilogue, "released after its wgmmas, before the epilogue");
    assert!(src.contains("auto* const C_batch = C + batch * batch_c;"), "each tile's problem: {src}");
}

/// `epilogue = smem` under specialization: the C tile lies past the stages
/// (the producer may be filling them for the next tile), and only the
/// consumers meet at its barriers (`bar.sync 1` over their threads; the
/// producer never comes), each sending out chunks by its index among them.
#[test]
fn a_specialized_c_tile_lies_past_the_stages_and_syncs_the_consumers_alone() {
    let mut s = hopper_spec();
    s.staging = Staging::tma(3);
    s.persistent = Some(Persistent::Tiles);
    s.epilogue = Epilogue::Smem;
    let g = generate(&s).unwrap();
    let src = &g.source;
    assert!(src.contains("asm volatile(\"bar.sync 1, 256;\\n\" ::: \"memory\");"), "{src}");
    assert!(src.contains("reinterpret_cast<unsigned short*>(smem_raw + (a_smem - smem_base) + 147456);"), "{src}");
    assert!(src.contains("consumers_sync();  // the previous tile's C has gone out of the C tile"), "{src}");
    assert!(src.contains("consumers_sync();  // the C tile is whole") && !src.contains("__syncthreads();  // the C tile"), "{src}");
    assert!(src.contains("const int i = (threadIdx.x - 128) + r * 256;"), "{src}");
    // 3 stages, the C tile (128 rows of 256, 264 apart), the alignment slack, 6 barriers
    assert_eq!(g.smem_bytes, 3 * 49152 + 128 * 264 * 2 + 1024 + 48);
}

/// Each of `lines` is in `src`, in that order.
fn assert_in_order(src: &str, lines: &[&str]) {
    let at: Vec<usize> = lines.iter().map(|l| src.find(l).unwrap_or_else(|| panic!("{l}\n{src}"))).collect();
    assert!(at.windows(2).all(|p| p[0] < p[1]), "{lines:?} in that order: {at:?}");
}

/// A guarded TMA kernel loads a tile more than a quarter of whose lines of
/// A or of B lie past M's or N's edge by `edge_loads` (tested once a tile
/// in a specialized producer, which inlines it), that operand in boxes
/// of 8 lines up to the last that holds one of the matrix's, expecting
/// those boxes' bytes; a tile inside, or nearly, loads each whole box.
/// Kernels without guarded edges, or that multicast an operand, load whole
/// boxes always.
#[test]
fn a_tile_mostly_past_m_or_n_loads_only_the_8_line_boxes_that_hold_lines() {
    let s = hopper_spec();
    assert_eq!(s.tma_maps(), ["a", "b", "a_edge", "b_edge"]);
    // which sizes read the edge maps: a last tile of 1 to 96 lines of A's 128, 1 to 192 of B's 256
    assert_eq!([4096, 4095, 4097, 4096 + 96, 4096 + 97].map(|m| s.edge_map_read(Which::A, m)), [false, false, true, true, false]);
    assert_eq!([11008, 11007, 4097, 4096 + 192, 4096 + 193].map(|n| s.edge_map_read(Which::B, n)), [false, false, true, true, false]);
    let src = generate(&s).unwrap().source;
    assert!(src.contains("const __grid_constant__ TensorMap tmap_a_edge, const __grid_constant__ TensorMap tmap_b_edge)"), "{src}");
    assert_in_order(
        &src,
        &[
            "__device__ __forceinline__ void edge_loads(",
            "const bool a_whole = M - block_m > 96;",
            "const int a_lines = max(0, min(M - block_m, 128));",
            "const bool b_whole = N - block_n > 192;",
            "const int b_lines = max(0, min(N - block_n, 256));",
            // 8 lines of one 128-byte swizzle row: 1024 bytes a box
            "mbar_expect_bytes(bar, (a_whole ? 16384 : (a_lines + 7) / 8 * 1024) + (b_whole ? 32768 : (b_lines + 7) / 8 * 1024));",
            "tma_load(a_dst, tmap_a, k0, block_m, a_batch, bar);",
            "#pragma unroll 1",
            "for (int p = 0; p < a_lines; p += 8)",
            "tma_load(a_dst + p * 128, tmap_a_edge, k0, block_m + p, a_batch, bar);",
            "tma_load(b_dst, tmap_b, k0, block_n, b_batch, bar);",
            "tma_load(b_dst + p * 128, tmap_b_edge, k0, block_n + p, b_batch, bar);",
            "if (M - block_m > 96 && N - block_n > 192)",
            "mbar_expect_bytes(bar, 49152);",
            "edge_loads(bar, ",
        ],
    );
    // a K tile of two swizzle rows: each 8-line box once per row
    let deep = KernelSpec { block: Block { k: Some(128), ..s.block }, staging: Staging::tma(2), ..s.clone() };
    let src = generate(&deep).unwrap().source;
    assert!(
        src.contains("mbar_expect_bytes(bar, (a_whole ? 32768 : (a_lines + 7) / 8 * 2048) + (b_whole ? 65536 : (b_lines + 7) / 8 * 2048));"),
        "{src}"
    );
    assert!(src.contains("tma_load(a_dst + 16384 + p * 128, tmap_a_edge, k0 + 64, block_m + p, a_batch, bar);"), "{src}");
    for other in [
        KernelSpec { edges: Edges::Whole, ..s.clone() },
        KernelSpec { cluster: Some(Cluster { m: 2, n: 1, multicast: Some(Which::B), k: 1 }), ..s.clone() },
    ] {
        assert_eq!(other.tma_maps(), ["a", "b"]);
        let src = generate(&other).unwrap().source;
        assert!(!src.contains("edge_loads") && !src.contains("tmap_a_edge"), "{src}");
    }
}

/// `hopper_spec` with 64 x 64 consumers and each tile's K split over a
/// cluster of two.
fn split_k_spec() -> KernelSpec {
    let mut s = hopper_spec();
    s.block.n = 64;
    s.warp = Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 });
    s.atom = Atom::Wgmma { m: 64, n: 64, k: 16, zeroed: false, promote: false };
    s.cluster = Some(Cluster { m: 1, n: 1, k: 2, multicast: None });
    assert_eq!(check(&s), vec![]);
    s
}

/// `cluster(k = 2)`: each block streams its part of the tile's K steps
/// through its own ring (stages counted from its part's start); after the
/// K loop rank 1 stores its accumulators into rank 0's shared memory past
/// the ring's barriers and leaves at the cluster's barrier, and rank 0 adds
/// them and goes on to the epilogue. Accumulators start at zero: a rank
/// may hold no K step.
#[test]
fn a_cluster_split_along_k_streams_each_part_and_adds_rank_1s_sum_through_shared_memory() {
    let s = split_k_spec();
    let src = generate(&s).unwrap().source;
    let part = s.k_split_offset();
    assert_in_order(
        &src,
        &[
            "__cluster_dims__(2, 1, 1)",
            "const int rank_k = rank / 1;",
            "const int k_first = rank_k * k_tiles / 2;",
            "const int k_count = (rank_k + 1) * k_tiles / 2 - k_first;",
            "const int tile = blockIdx.x / 2;",
            "for (int kt = 0; kt < k_count; ++kt)",
            "const int k0 = (k_first + kt) * 64;",
            "acc[0][0][q][e] = 0.0f;",
            "wgmma_wait<0>();",
            &format!("const unsigned sums = a_smem + {part} + (threadIdx.x - 128) * 4;"),
            "if (rank_k != 0)",
            "st_cluster_f32(sums + ((rank_k - 1) * 32 + q * 4 + e) * 1024, 0, acc[0][0][q][e]);",
            "cluster_sync();  // every rank's sum is in rank 0's shared memory",
            "if (rank_k != 0) return;",
            "acc[0][0][q][e] += ld_shared_f32(sums + ((r - 1) * 32 + q * 4 + e) * 1024);",
            "// epilogue",
        ],
    );
    // the partial sums lie past the ring's barriers, inside the block's shared memory
    assert!(part >= s.staged_bytes() + 16 * 4 && part + s.k_split_bytes() <= s.smem_bytes() - 1023, "{part} of {}", s.smem_bytes());
    assert!(s.kernel_name().contains("__cl1x1k2"), "{}", s.kernel_name());
}

/// `tma(prefetch = 2)`: before the wait for the kernel before, every
/// thread of the block asks the L2 for lines of its tile's first two K
/// steps (of its rank's part under a cluster split), of both operands,
/// rows and K clipped to the matrices; the producer lets the next
/// dependent launch start once its K loop has issued every copy.
#[test]
fn a_prefetch_asks_the_l2_for_the_first_k_steps_before_the_wait_and_lets_the_next_launch_start_after_the_last_copy() {
    let mut s = split_k_spec();
    s.staging = Staging::Tma { stages: 4, cp_async: None, prefetch: 2, evict_first: Default::default(), by_class: false };
    assert_eq!(check(&s), vec![]);
    let src = generate(&s).unwrap().source;
    assert_in_order(
        &src,
        &[
            "__device__ __forceinline__ void griddep_launch()",
            "asm volatile(\"prefetch.global.L2 [%0];\\n\" :: \"l\"(at));",
            "const int rank_k = rank / 1;",
            "const int k_first = rank_k * k_tiles / 2;",
            "const int k_count = (rank_k + 1) * k_tiles / 2 - k_first;",
            "// prefetch: the first 2 K steps of this block's tiles into the L2 while the kernel before ends",
            "const int k_begin = k_first * 64;",
            "const int k_end = min(K, k_begin + min(2, k_count) * 64);",
            "prefetch_lines((const char*)(A + a_batch * batch_a + (long long)block_m * lda + k_begin), (long long)lda * 2, max(0, min(128, M - block_m)), (k_end - k_begin) * 2);",
            "prefetch_lines((const char*)(B + b_batch * batch_b + (long long)block_n * ldb + k_begin), (long long)ldb * 2, max(0, min(64, N - block_n)), (k_end - k_begin) * 2);",
            "griddep_wait();",
            "for (int kt = 0; kt < k_count; ++kt)",
            "griddep_launch();  // this block's copies are all issued: the next dependent launch may start",
            "// block tier: walk K a tile at a time",
        ],
    );
    assert!(s.kernel_name().contains("_pf2"), "{}", s.kernel_name());
    // an M-major A: a line a K step, along the tile's M
    s.a.layout = Layout::ColMajor;
    s.cluster = None;
    let src = generate(&s).unwrap().source;
    assert!(
        src.contains("prefetch_lines((const char*)(A + a_batch * batch_a + (long long)k_begin * lda + block_m), (long long)lda * 2, k_end - k_begin, max(0, min(128, M - block_m)) * 2);"),
        "{src}"
    );
    // without prefetch, neither
    s.staging = Staging::tma(4);
    let src = generate(&s).unwrap().source;
    assert!(!src.contains("prefetch") && !src.contains("griddep_launch"), "{src}");
}

/// `tma(evict_first = a)`: A's boxes go through `tma_load_first`, whose
/// copy carries the L2's evict-first policy; B's through the plain
/// `tma_load`, at a tile inside and at M's or N's edge alike. Without it
/// no load carries a hint, and the helper is not emitted.
#[test]
fn evict_first_hints_the_named_operands_loads_alone() {
    let mut s = hopper_spec();
    s.staging = Staging::Tma { stages: 3, cp_async: None, prefetch: 0, evict_first: EvictFirst { a: true, b: false }, by_class: false };
    assert_eq!(check(&s), vec![]);
    assert!(s.kernel_name().contains("_tma_s3_efa_"), "{}", s.kernel_name());
    let src = generate(&s).unwrap().source;
    assert!(src.contains("createpolicy.fractional.L2::evict_first.b64 first, 1.0;"), "{src}");
    assert!(src.contains(".mbarrier::complete_tx::bytes.L2::cache_hint\""), "{src}");
    assert!(src.contains("staging tma (3 stages, A's loads leaving the L2 first) fed by 1 producer warpgroup(s)"), "{src}");
    for line in [
        "tma_load_first(a_smem + stage * 16384, tmap_a, k0, block_m, a_batch, bar);",
        "tma_load(b_smem + stage * 32768, tmap_b, k0, block_n, b_batch, bar);",
        "tma_load_first(a_dst, tmap_a, k0, block_m, a_batch, bar);",
        "tma_load_first(a_dst + p * 128, tmap_a_edge, k0, block_m + p, a_batch, bar);",
        "tma_load(b_dst + p * 128, tmap_b_edge, k0, block_n + p, b_batch, bar);",
    ] {
        assert!(src.contains(line), "{line}\n{src}");
    }
    assert!(!src.contains("tma_load_first(b"), "{src}");
    s.staging = Staging::Tma { stages: 3, cp_async: None, prefetch: 0, evict_first: EvictFirst { a: false, b: true }, by_class: false };
    assert!(s.kernel_name().contains("_tma_s3_efb_"), "{}", s.kernel_name());
    let src = generate(&s).unwrap().source;
    assert!(src.contains("tma_load_first(b_smem + stage * 32768, tmap_b, k0, block_n, b_batch, bar);") && !src.contains("tma_load_first(a"), "{src}");
    s.staging = Staging::tma(3);
    let src = generate(&s).unwrap().source;
    assert!(!src.contains("tma_load_first") && !src.contains("cache_hint"), "{src}");
}

/// `epilogue = tma`: the consumers write the C tile in the TMA store's
/// swizzled boxes, fence their stores for the copy engine and meet; the
/// first consumer thread stores each box and commits them as a group,
/// waits for the group to have read the tile before the next tile's
/// writes, and for all of it to be written before the block exits.
#[test]
fn a_tma_store_epilogue_fences_meets_and_stores_each_box_from_one_thread() {
    let mut s = hopper_spec();
    s.staging = Staging::tma(3);
    s.persistent = Some(Persistent::Tiles);
    s.epilogue = Epilogue::Tma;
    let src = generate(&s).unwrap().source;
    assert!(src.contains("const __grid_constant__ TensorMap tmap_c)"), "{src}");
    assert!(src.contains("return (e / 64) * 8192 + line * 64 + ((((e % 64) / 8) ^ (line % 8)) * 8) + e % 8;"), "{src}");
    let order = [
        "if (threadIdx.x == 128) bulk_wait_read<0>();",
        "c_tile[c_tile_at(t_row + h * 8, t_col + q * 8)]",
        "fence_proxy_async();",
        "consumers_sync();  // the C tile is whole",
        "tma_store(tmap_c, c_tile_addr, block_n, block_m, batch);",
        "tma_store(tmap_c, c_tile_addr + 49152, block_n + 192, block_m, batch);",
        "bulk_commit();",
        "if (threadIdx.x == 128) bulk_wait<0>();",
    ];
    assert_in_order(&src, &order);
    // guarded: by TMA unless the tile's lines run past the end of C's inside
    // a 16-byte chunk (bf16: 8 elements); then element by element
    assert!(src.contains("if (block_n + 256 <= N || N % 8 == 0) {"), "{src}");
    assert!(src.contains("C_batch[(long long)row * ldc + col] = c_tile[c_tile_at(line, e)];"), "{src}");
    // a column-major C's lines run along M
    s.c.layout = Layout::ColMajor;
    let src = generate(&s).unwrap().source;
    assert!(src.contains("if (block_m + 128 <= M || M % 8 == 0) {"), "{src}");
}

/// Where the whole C tile would leave the stages too little shared memory
/// (four stages of 128 x 256 tiles), the TMA store's C tile goes out in two
/// parts of 128 columns through a buffer of one part: each part written,
/// stored by TMA from its own columns on, and the next written only once
/// the TMA stores have read the buffer. Three stages keep the whole tile;
/// a column-major C, whose parts would split the consumers' rows, does not
/// go in parts (and four stages do not fit).
#[test]
fn a_c_tile_the_stages_leave_no_room_for_goes_out_in_parts() {
    let mut s = hopper_spec();
    s.persistent = Some(Persistent::Tiles);
    s.epilogue = Epilogue::Tma;
    assert_eq!(s.c_tile().map(|t| t.parts), Some(2));
    assert!(check(&s).is_empty(), "{:?}", check(&s));
    let src = generate(&s).unwrap().source;
    let order = [
        "// a buffer for a part of the block's C tile, past the stages: 128 rows of 128, in the TMA store's boxes",
        "for (int part = 0; part < 2; ++part) {",
        "if (threadIdx.x == 128) bulk_wait_read<0>();  // the previous part's TMA stores have read the buffer",
        "= to_bf16x2(acc[0][0][q + 16 * part][2 * h], acc[0][0][q + 16 * part][2 * h + 1]);",
        "consumers_sync();  // the part is whole",
        "tma_store(tmap_c, c_tile_addr + 16384, block_n + part * 128 + 64, block_m, batch);",
        "const int row = block_m + line, col = block_n + part * 128 + e;",
    ];
    assert_in_order(&src, &order);
    assert!(s.smem_bytes() <= s.arch.smem_limit() && s.epilogue_scratch_bytes() == 32768);
    s.staging = Staging::tma(3);
    assert_eq!(s.c_tile().map(|t| t.parts), Some(1));
    assert!(!generate(&s).unwrap().source.contains("for (int part"));
    s.staging = Staging::tma(4);
    s.c.layout = Layout::ColMajor;
    assert_eq!(s.c_tile().map(|t| t.parts), Some(1));
    assert!(!check(&s).is_empty());
}

/// The Hilbert raster's device function, compiled as plain C++ by the host
/// compiler and run over grids of many shapes (square, long, thin, odd):
/// every step lands on a distinct cell of the grid, and each step moves to
/// a neighbouring cell (at most one diagonal), so tiles in flight together
/// lie close.
#[test]
fn the_hilbert_raster_visits_every_tile_once_moving_to_a_neighbour_each_step() {
    let mut spec = hopper_spec();
    spec.raster = Raster::Hilbert;
    let src = generate(&spec).unwrap().source;
    let start = src.find("__device__ __forceinline__ int sign(").expect("the curve's helpers");
    let body = src[start..].find("void hilbert_cell(").unwrap() + start;
    let end = src[body..].find("\n}\n").unwrap() + body + 3;
    let grids = [(1, 1), (1, 9), (9, 1), (2, 3), (3, 2), (5, 7), (8, 8), (16, 32), (31, 17), (33, 16), (7, 100), (100, 7), (64, 2), (24, 11)];
    let calls: String = grids.iter().map(|(w, h)| format!("    walk({w}, {h});\n")).collect();
    let program = format!(
        "#include <cstdio>\n#define __device__\n#define __forceinline__ inline\n{}\nstatic void walk(int w, int h) {{\n    for (int d = 0; d < w * h; ++d) {{ int x, y; hilbert_cell(d, w, h, x, y); std::printf(\"%d %d\\n\", x, y); }}\n}}\nint main() {{\n{calls}}}\n",
        &src[start..end]
    );
    let dir = std::env::temp_dir().join(format!("gemm-hilbert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hilbert.cpp"), program).unwrap();
    let built = std::process::Command::new("c++").arg("-O1").arg("-o").arg(dir.join("hilbert")).arg(dir.join("hilbert.cpp")).status();
    assert!(built.expect("a host C++ compiler (c++)").success(), "the curve's device code compiles as C++");
    let out = std::process::Command::new(dir.join("hilbert")).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut cells = text.lines().map(|l| {
        let mut v = l.split(' ').map(|x| x.parse::<i64>().unwrap());
        (v.next().unwrap(), v.next().unwrap())
    });
    for (w, h) in grids {
        let walk: Vec<(i64, i64)> = cells.by_ref().take((w * h) as usize).collect();
        let mut seen = std::collections::HashSet::new();
        for (i, &(x, y)) in walk.iter().enumerate() {
            assert!((0..w).contains(&x) && (0..h).contains(&y), "{w}x{h}: step {i} at ({x}, {y}), outside the grid");
            assert!(seen.insert((x, y)), "{w}x{h}: ({x}, {y}) visited twice");
            if i > 0 {
                let (px, py) = walk[i - 1];
                assert!((x - px).abs() <= 1 && (y - py).abs() <= 1, "{w}x{h}: step {i} jumps from ({px}, {py}) to ({x}, {y})");
            }
        }
        assert_eq!(walk[0], (0, 0), "{w}x{h}: the curve starts at a corner");
    }
}

/// Stream-K on the producer/consumer ring: the ticket's share before the
/// roles, the producer walking every K step of the share a unit at a time,
/// the consumers a unit at a time, both counting the ring's stages in an
/// int through the whole share, and
/// the fix-up among the consumers alone (their thread index, their barrier).
#[test]
fn stream_k_on_tma_stages_keeps_the_fix_up_among_the_consumers() {
    let mut spec = hopper_spec();
    spec.persistent = Some(Persistent::StreamK);
    spec.epilogue = Epilogue::Tma;
    spec.staging = Staging::tma(3);
    let g = generate(&spec).unwrap();
    let src = &g.source;
    let roles = src.find("// roles:").expect("roles");
    assert!(src[..roles].contains("const unsigned me = gridDim.x - 1 - ticket;"), "{src}");
    assert_eq!(src.matches("const int k_tiles =").count(), 1, "k_tiles defined once");
    assert!(src.contains("for (int kt = k_step; kt < k_step + tiles; ++kt, ++filled)"), "{src}");
    assert!(src.contains("mbar_wait(empty + 8 * stage, ((filled / 3) & 1) ^ 1);"), "{src}");
    assert!(src.contains("mbar_wait(full + 8 * stage, (used / 3) & 1);"), "{src}");
    assert!(src.contains("float* const mine = partials + (long long)me * slot + (threadIdx.x - 128);"), "{src}");
    assert!(src.contains("for (unsigned b = me + 1 + (threadIdx.x - 128); b < b_end; b += 256)"), "{src}");
    assert!(src.contains("consumers_sync();  // every flag seen: every sum is complete"), "{src}");
    assert!(!src[roles..].contains("__syncthreads"), "no block-wide barrier once the roles split");
    assert!(src.contains("if (threadIdx.x == 128) st_release(&flags[me], 1u);"), "{src}");
}

/// Ping-pong consumers: each walks every other tile of the block's walk,
/// sets the ring's count from its turn, waits for the previous turn to be
/// done with the ring and says when its own is; one release per stage;
/// a C tile and a barrier of its own.
#[test]
fn pingpong_consumers_take_turns_with_the_ring_and_store_their_own_tiles() {
    let mut spec = hopper_spec();
    spec.block = Block { m: 128, n: 128, k: Some(64), threads: 384, min_blocks: None };
    spec.warp = Some(Warp { m: 128, n: 128, m_iters: 1, n_iters: 1 });
    spec.atom = Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false };
    spec.staging = Staging::tma(5);
    spec.specialize = Some(Specialize {
        producers: 1,
        consumers: 2,
        producer_regs: Some(24),
        consumer_regs: Some(240),
        pingpong: true,
        arrivals: Arrivals::Warpgroup,
        overlap: false,
    });
    spec.persistent = Some(Persistent::Tiles);
    spec.epilogue = Epilogue::Tma;
    let g = generate(&spec).unwrap_or_else(|e| panic!("{e:?}"));
    let src = &g.source;
    assert!(
        src.contains("for (int t = blockIdx.x + gridDim.x * group, turn = group; t < tiles_m * tiles_n * batches; t += gridDim.x * 2, turn += 2)"),
        "{src}"
    );
    assert!(
        src.contains("it = turn * k_tiles;") && src.contains("if (turn > 0) mbar_wait(turns + 8 * ((turn - 1) % 2), ((turn - 1) / 2) & 1);"),
        "{src}"
    );
    assert!(src.contains("if (threadIdx.x % 128 == 0) mbar_arrive(turns + 8 * group);"), "{src}");
    assert!(src.contains("mbar_init(empty + 8 * s, 1)") && src.contains("for (int c = 0; c < 2; ++c) mbar_init(turns + 8 * c, 1);"), "{src}");
    assert!(src.contains("const unsigned c_tile_addr = a_smem + 163840 + group * 32768;"), "{src}");
    assert!(src.contains("bar.sync %0, 128;"), "a barrier of each consumer's own");
    // 5 stages of 32 KB, two C tiles of 32 KB, the slack, 10 stage barriers and 2 turn barriers
    assert_eq!(g.smem_bytes, 5 * 32768 + 2 * 32768 + 1024 + 80 + 16);
    // a tiling of two warpgroups a tile is no ping-pong
    let mut shared = spec.clone();
    shared.warp = Some(Warp { m: 64, n: 128, m_iters: 1, n_iters: 1 });
    assert!(generate(&shared).unwrap_err().iter().any(|d| d.at == "specialize.pingpong"));
}

/// `epilogue = smem_elements` keeps the C tile of `smem` and stores a
/// 16-bit C in 16-byte chunks aligned to C's own lines (whatever C's
/// alignment): first the chunks inside each line, each from one aligned
/// read of the tile or two shifted into place, then the lines' two ends,
/// an element a thread, as are chunks across C's edges. An f32 C goes an element a thread.
/// (`copy_out`'s own test runs these stores on the host at every alignment.)
#[test]
fn smem_elements_stores_16_byte_chunks_aligned_to_cs_own_lines_from_a_tile_shifted_to_match() {
    let mut s = hopper_spec();
    // three stages leave room for the C tile
    s.staging = Staging::tma(3);
    s.epilogue = Epilogue::SmemElements;
    let src = generate(&s).unwrap().source;
    for line in [
        "const auto tile_shift = [&](int line) { return (int)((reinterpret_cast<unsigned long long>(&C_batch[(long long)(block_m + line) * ldc + block_n]) >> 1) & 6); };",
        "+ tile_shift(t_row + h * 8)]) = to_bf16x2(",
        "// the C tile to C in 16-byte chunks aligned to each row of C (C at any alignment): first those inside a row",
        "const int line = i / 32, j = i % 32;",
        // chunk 0 lies inside a row that starts on a 16-byte boundary
        "if (e >= 0) {",
        "if (block_m + line < M) {",
        "unsigned short* const to = &C_batch[(long long)(block_m + line) * ldc + block_n];",
        "const int s = (int)((reinterpret_cast<unsigned long long>(to) >> 1) & 7);",
        "if (block_n + e + 8 <= N) {",
        // the ends: a chunk's eight places on eight threads side by side, none where chunk 0 went whole
        "const int line = i >> 4, j = ((i >> 3) & 1) * 32;",
        "if (s > 0 && q >= 0 && q < 256 && block_n + q < N) {",
        "const uint4* const from = reinterpret_cast<const uint4*>(&c_tile[line * 264]) + j;",
        "*reinterpret_cast<uint4*>(to + e) = from[0];",
        "*reinterpret_cast<uint4*>(to + e) = make_uint4((lo.w >> 16) | (hi.x << 16), (hi.x >> 16) | (hi.y << 16), (hi.y >> 16) | (hi.z << 16), (hi.z >> 16) | (hi.w << 16));",
        "for (int q = e < 0 ? 0 : e; q < e + 8 && q < 256 && block_n + q < N; ++q) {",
        "to[q] = c_tile[line * 264 + (s & 6) + q];",
    ] {
        assert!(src.contains(line), "{line}\n{src}");
    }
    assert_eq!((s.requirements().c_vector, s.requirements().c_align), (1, 2));
    // column-major C: lines are columns
    s.c.layout = Layout::ColMajor;
    let src = generate(&s).unwrap().source;
    assert!(src.contains("unsigned short* const to = &C_batch[block_m + (long long)(block_n + line) * ldc];"), "{src}");
    assert!(src.contains("if (block_n + line < N) {"), "{src}");
    // f32 (a 128x128 tile, which fits beside the stages): one element a thread
    s.c = Operand { elem: Elem::F32, layout: Layout::RowMajor };
    s.block.n = 128;
    s.warp = Some(Warp { m: 64, n: 128, m_iters: 1, n_iters: 1 });
    s.atom = Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false };
    let src = generate(&s).unwrap().source;
    assert!(src.contains("chunks of 1 elements") && src.contains("C_batch[(long long)row * ldc + col] = c_tile["), "{src}");
    assert!(!src.contains("tile_shift"), "{src}");
}

/// Where the whole C tile of `smem_elements` would leave a Hopper spec's
/// stages too little shared memory, it goes out in bands of whole wgmma
/// atoms' rows, band after band through one buffer: the warpgroups whose
/// atoms lie in a band store them from the band's first row (C's line
/// shifted as C's own, the block's row), every consumer copies the band
/// out at its own rows of C, and they meet before the next band.
#[test]
fn smem_elements_goes_out_in_bands_where_the_whole_tile_leaves_the_stages_too_little_room() {
    let mut s = hopper_spec();
    s.epilogue = Epilogue::SmemElements;
    let t = s.c_tile().unwrap();
    assert_eq!((t.lines, t.ld, t.bands, t.parts), (128, 264, 2, 1), "{t:?}");
    assert!(s.smem_bytes() <= s.arch.smem_limit(), "four stages and a band fit: {}", s.smem_bytes());
    let g = generate(&s).unwrap();
    for line in [
        "// a buffer for a band of the block's C tile, past the stages: 64 rows of 256, 264 apart",
        "// the C tile goes out in 2 bands of 64 rows, each through the same buffer",
        "for (int c_band = 0; c_band < 2; ++c_band) {",
        "consumers_sync();  // every consumer has copied the previous band out of the buffer",
        "if (group_m / 64 == c_band) {",
        "&c_tile[((t_row - c_band * 64) + h * 8) * 264 + (t_col + q * 8) + tile_shift((t_row - c_band * 64) + h * 8 + c_band * 64)]",
        "unsigned short* const to = &C_batch[(long long)(block_m + c_band * 64 + line) * ldc + block_n];",
        "if (block_m + c_band * 64 + line < M) {",
    ] {
        assert!(g.source.contains(line), "{line}\n{}", g.source);
    }
    // three stages leave room for the whole tile
    s.staging = Staging::tma(3);
    assert_eq!(s.c_tile().unwrap().bands, 1);
    // two atoms a warpgroup (256 x 128 tiles): four bands of 64 rows, a warpgroup's atom each
    let mut tall = hopper_spec();
    tall.epilogue = Epilogue::SmemElements;
    tall.block.m = 256;
    tall.block.n = 128;
    tall.warp = Some(Warp { m: 128, n: 128, m_iters: 1, n_iters: 1 });
    tall.atom = Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false };
    assert_eq!(tall.c_tile().map(|t| t.bands), Some(4));
    let g = generate(&tall).unwrap();
    assert!(g.source.contains("if ((group_m + im * 64) / 64 == c_band) {"), "{}", g.source);
}

/// A guarded bias reads in bounds whatever the tile (an index past C's
/// edge reads the last element, whose value is never stored). A thread's
/// bias values are loaded ahead as f32 where they are 32 or fewer; more
/// (a 64x256 wgmma consumer's 64) go packed where the bias is 16-bit, two
/// columns a register, a pair in one load where the block lies inside C
/// and the bias is aligned; an f32 bias then loads each where it is used.
#[test]
fn bias_values_load_in_bounds_and_ahead_only_where_few() {
    let mut s = hopper_spec();
    s.staging = Staging::tma(3);
    s.epilogue = Epilogue::Smem;
    s.fused = Fused {
        alpha: false,
        beta: false,
        bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }),
        activation: Some(Activation::GeluTanh),
        scale: None,
        gated: false,
    };
    let wide = generate(&s).unwrap().source;
    assert!(wide.contains("unsigned bias_pairs[1][32];"), "64 values in 32 registers\n{wide}");
    assert!(wide.contains("if (block_n + 256 <= N && reinterpret_cast<unsigned long long>(bias_batch) % 4 == 0) {"), "{wide}");
    assert!(wide.contains("bias_pairs[0][q] = *reinterpret_cast<const unsigned*>(&bias_batch[c_col + q * 8]);"), "{wide}");
    assert!(wide.contains("bias_pairs[0][q] = bias_batch[c_col + q * 8 < N ? c_col + q * 8 : N - 1] | "), "clamped past the edge\n{wide}");
    assert!(wide.contains("v1 += bf16_to_f32((unsigned short)(bias_pairs[0][q] >> 16));"), "{wide}");
    s.fused.bias = Some(Bias { along: Dim::N, elem: Elem::F32 });
    let wide = generate(&s).unwrap().source;
    assert!(!wide.contains("float bias_ahead") && !wide.contains("bias_pairs"), "64 f32 values are not loaded ahead\n{wide}");
    assert!(wide.contains(" < N ? ") && wide.contains(" : N - 1]"), "clamped loads\n{wide}");
    // a 64x128 consumer tile: 32 f32 values, loaded ahead, clamped too
    s.block.n = 128;
    s.warp = Some(Warp { m: 64, n: 128, m_iters: 1, n_iters: 1 });
    s.atom = Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false };
    let narrow = generate(&s).unwrap().source;
    assert!(narrow.contains("float bias_ahead[1][16][2];"), "{narrow}");
    assert!(narrow.contains(" : N - 1]"), "{narrow}");
    assert!(!narrow.contains(": 0.0f;"), "no zero for a value never stored\n{narrow}");
}

/// A K tile two swizzle rows deep (block k = 128 under the 128-byte
/// swizzle): each K-major operand loads as two boxes side by side along K
/// (k0 and k0 + 64), the second a whole tile's bytes past the first, and
/// wgmma's K steps 4 to 7 read the second box; the stage's bytes count
/// both. A multicast tile stays one swizzle row deep (a rule).
#[test]
fn a_k_tile_of_two_swizzle_rows_loads_two_boxes_along_k() {
    let mut spec = hopper_spec();
    spec.block = Block { m: 128, n: 128, k: Some(128), threads: 384, min_blocks: None };
    spec.warp = Some(Warp { m: 64, n: 128, m_iters: 1, n_iters: 1 });
    spec.atom = Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false };
    spec.staging = Staging::tma(3);
    let src = generate(&spec).unwrap().source;
    for line in [
        "mbar_expect_bytes(bar, 65536);",
        "tma_load(a_smem + stage * 32768, tmap_a, k0, block_m, a_batch, bar);",
        "tma_load(a_smem + stage * 32768 + 16384, tmap_a, k0 + 64, block_m, a_batch, bar);",
        "tma_load(b_smem + stage * 32768 + 16384, tmap_b, k0 + 64, block_n, b_batch, bar);",
        "wgmma_desc(a_smem + stage * 32768 + group_m * 128 + (ks % 4) * 32 + (ks / 4) * 16384, 16, 1024)",
    ] {
        assert!(src.contains(line), "{line}\n{src}");
    }
    assert!(gemm_core::check(&spec).is_empty());
    // three swizzle rows' worth is no whole number of boxes
    spec.block.k = Some(96);
    assert!(gemm_core::check(&spec).iter().any(|d| d.at == "swizzle"));
    // nor may a multicast operand's tile be deeper than one row
    spec.block.k = Some(128);
    spec.cluster = Some(Cluster { m: 2, n: 1, multicast: Some(Which::B), k: 1 });
    assert!(gemm_core::check(&spec).iter().any(|d| d.at == "swizzle"));
}

/// `specialize(.., overlap)`: each consumer's two atoms along n commit as
/// groups of their own; after the K loop the first half goes out (through
/// half the C tile's buffer) while the second half's last group may run,
/// then the next tile's first K step for the first half is issued before
/// the second half goes out, and the next K loop skips what is in flight.
#[test]
fn overlap_sends_each_half_out_beside_the_other_halfs_wgmmas() {
    let mut s = hopper_spec();
    s.atom = Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false };
    s.persistent = Some(Persistent::Tiles);
    s.epilogue = Epilogue::Tma;
    s.fused = Fused { bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }), activation: Some(Activation::GeluTanh), ..Fused::default() };
    s.specialize = Some(Specialize { overlap: true, ..s.specialize.unwrap() });
    assert_eq!(s.c_tile().map(|t| t.parts), Some(2));
    let src = generate(&s).unwrap().source;
    let consumer = src.find("regs_inc<240>()").expect("the consumers");
    let c = &src[consumer..];
    let at = |what: &str| c.find(what).unwrap_or_else(|| panic!("{what} in {c}"));
    // the accumulators outlive a tile: the next tile's first wgmmas go into them early
    assert!(at("float acc[1][2][16][4];") < at("for (int t = blockIdx.x;"), "{c}");
    assert!(c.contains("wgmma_m64n128k16(acc[0][0], ") && c.contains("wgmma_m64n128k16(acc[0][1], "), "{c}");
    assert!(
        c.contains("const bool issued = kt < ahead;") && c.contains("if (issued) wgmma_wait<1>();") && c.contains("else wgmma_wait<2>();"),
        "{c}"
    );
    // half 0 out, the second half's last group may run
    let half0 = at("wgmma_wait<1>();  // the first half is whole");
    let (store0, whole) =
        (at("tma_store(tmap_c, c_tile_addr, block_n + 0 * 128, block_m, batch);"), at("wgmma_wait<0>();  // the second half is whole"));
    assert!(half0 < store0 && store0 < whole, "{c}");
    // then the next tile's first K steps for half 0 (three of four stages), then half 1 out
    let ahead = at("ahead = t + gridDim.x < tiles_m * tiles_n * batches ? (k_tiles < 3 ? k_tiles : 3) : 0;");
    let early = at("for (int kt = 0; kt < ahead; ++kt)");
    let store1 = at("tma_store(tmap_c, c_tile_addr, block_n + 1 * 128, block_m, batch);");
    assert!(whole < ahead && ahead < early && early < store1, "{c}");
    assert!(at("the first half's TMA stores have read the buffer") < store1, "{c}");
    // both halves' bias pairs loaded before the wait (their latency beside the last wgmmas), GELU on each half's way
    assert!(at("unsigned bias_pairs[2][16];") < half0 && c.contains("bias_pairs[1][q]"), "{c}");
    assert_eq!(c.matches("= gelu_tanh(v0);").count(), 2, "{c}");
    // without overlap (three stages: the whole C tile): one group a K step
    let sp = Specialize { overlap: false, ..s.specialize.unwrap() };
    let plain = generate(&KernelSpec { specialize: Some(sp), staging: Staging::tma(3), ..s.clone() }).unwrap().source;
    assert!(!plain.contains("bool ahead") && plain.contains("wgmma_wait<1>();  // the groups before the last 1"), "{plain}");
}

/// Per-tensor scales (`scale = tensor`): two device pointers after the
/// batch strides, read once per group of stores, after any wait for the
/// kernel before, multiplying the product (with alpha) before the rest of
/// the fused math.
#[test]
fn per_tensor_scales_multiply_the_product_before_the_fused_math() {
    let mut s = hopper_spec();
    s.fused = Fused { alpha: true, bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }), scale: Some(Scale::Tensor), ..Fused::default() };
    let g = generate(&s).unwrap();
    assert!(g.source.contains("const float* __restrict__ scale_a, const float* __restrict__ scale_b"), "the parameters");
    assert!(g.source.contains("const float scale = alpha * __ldg(scale_a) * __ldg(scale_b);"), "{}", g.source);
    assert!(g.source.contains("float v0 = scale * acc"), "the product scaled first");
    assert!(g.kernel_name.contains("__scale_t__alpha"), "{}", g.kernel_name);
    assert_eq!(s.formula(), "C = alpha * scale_a * scale_b * A * B + bias[col]");
    // without alpha, the scales alone
    s.fused.alpha = false;
    assert!(generate(&s).unwrap().source.contains("const float scale = __ldg(scale_a) * __ldg(scale_b);"));
}

/// TMA stages under an mma atom are one error at the atom, and its advice
/// (the wgmma that tiles the warp, with the threads its warpgroups take)
/// generates.
#[test]
fn tma_staging_under_mma_is_one_error_whose_advice_generates() {
    let mut s = hopper_spec();
    s.specialize = None;
    s.block.threads = 128;
    s.atom = Atom::Mma { m: 16, n: 8, k: 16 };
    let errs = generate(&s).expect_err("TMA under mma");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].at, "atom");
    assert!(errs[0].msg.contains("use atom = wgmma(m64n256k16) with threads = 256"), "{}", errs[0].msg);
    s.atom = Atom::Wgmma { m: 64, n: 256, k: 16, zeroed: false, promote: false };
    s.block.threads = 256;
    generate(&s).unwrap_or_else(|e| panic!("the advice: {e:?}"));
}

/// `gated`: each accumulator pair along n (the gate at an even column, its
/// up-projection beside it) goes through the bias, the activation on the
/// gate alone, and out as one element of C at half the pair's column;
/// guarded, the pair is checked whole. The rules take it on mma and wgmma
/// with C's elements stored straight, through a C tile, or by TMA stores
/// of a row-major C's half-width lines (from `block_n / 2`), and refuse
/// beta, SIMT and a column-major C's TMA boxes.
#[test]
fn a_gated_epilogue_stores_silu_of_the_gate_times_up_at_half_the_column() {
    let mut s = hopper_spec();
    s.staging = Staging::tma(3);
    s.epilogue = Epilogue::Vector;
    s.edges = Edges::Guarded;
    s.fused = Fused { bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }), activation: Some(Activation::Silu), gated: true, ..Fused::default() };
    assert!(gemm_core::check(&s).is_empty(), "{:?}", gemm_core::check(&s));
    assert!(s.kernel_name().contains("__silu__gated"), "{}", s.kernel_name());
    let src = generate(&s).unwrap().source;
    assert!(src.contains("const float g0 = silu(v0) * v1;"), "{src}");
    assert!(!src.contains("v0 = silu(v0);"), "the up-projection takes no activation\n{src}");
    assert!(src.contains("C_batch[(long long)(c_row + h * 8) * ldc + (((c_col + q * 8) >> 1))] = to_bf16(g0);"), "{src}");
    assert!(src.contains("C: M x N / 2 bf16"), "{src}");
    assert!(!src.contains("to_bf16x2(g0"), "C is aligned to its element only\n{src}");
    let mut beta = s.clone();
    beta.fused.beta = true;
    assert!(gemm_core::check(&beta).iter().any(|d| d.msg.contains("remove `beta`")));
    let mut tile = s.clone();
    tile.epilogue = Epilogue::Tma;
    assert!(gemm_core::check(&tile).is_empty(), "{:?}", gemm_core::check(&tile));
    let src = generate(&tile).unwrap().source;
    assert!(src.contains("c_tile[c_tile_at(t_row + h * 8, ((t_col + q * 8) >> 1))] = to_bf16(g0);"), "{src}");
    assert!(src.contains("tma_store(tmap_c, c_tile_addr, block_n / 2, block_m, batch);"), "{src}");
    assert!(src.contains("if (block_n / 2 + 128 <= N / 2 || N / 2 % 8 == 0)"), "{src}");
    tile.c.layout = Layout::ColMajor;
    assert!(gemm_core::check(&tile).iter().any(|d| d.at == "epilogue" && d.msg.contains("`gated`")));
}

/// `groups = contiguous` under `epilogue = tma`: a tile within its group
/// goes out by TMA stores at problem 0 of C's map (C is one matrix), a tile
/// across its group's last row (`M` in the tile) by the threads, in
/// 16-byte chunks of its group's rows, or element by element where C's
/// lines also end inside a chunk. The other layouts' problems end at rows
/// a TMA store would write past: refused.
#[test]
fn contiguous_groups_store_whole_tiles_by_tma_and_tiles_across_a_groups_end_by_the_threads() {
    let mut s = hopper_spec();
    s.staging = Staging::tma(3);
    s.persistent = Some(Persistent::Tiles);
    s.epilogue = Epilogue::Tma;
    s.edges = Edges::Guarded;
    s.groups = Some(Groups::Contiguous);
    assert!(gemm_core::check(&s).is_empty(), "{:?}", gemm_core::check(&s));
    let src = generate(&s).unwrap().source;
    let tma = src.find("if (block_m + 128 <= M && (block_n + 256 <= N || N % 8 == 0))").expect(&src);
    let chunks = src.find("else if (block_n + 256 <= N || N % 8 == 0)").expect(&src);
    let elements = src[chunks..].find("else {").map(|i| chunks + i).expect(&src);
    assert!(tma < chunks && src[tma..chunks].contains("tma_store(tmap_c, c_tile_addr, block_n, block_m, 0);"), "{src}");
    let by_chunks = &src[chunks..elements];
    assert!(
        by_chunks.contains("if (row < M && col < N)") && by_chunks.contains("*reinterpret_cast<uint4*>(&C_batch[(long long)row * ldc + col])"),
        "{by_chunks}"
    );
    assert!(src[elements..].contains("C_batch[(long long)row * ldc + col] = c_tile[c_tile_at(line, e)];"), "{src}");
    for other in [Groups::Masked, Groups::Indexed] {
        let mut t = s.clone();
        t.groups = Some(other);
        assert!(gemm_core::check(&t).iter().any(|d| d.at == "epilogue" && d.msg.contains("a TMA store writes whole tiles")), "{other:?}");
    }
    let mut col = s.clone();
    col.c.layout = Layout::ColMajor;
    assert!(gemm_core::check(&col).iter().any(|d| d.at == "epilogue" && d.msg.contains("row-major C")), "{:?}", gemm_core::check(&col));
}
