//! The tiling rules, one behaviour per test.

mod common;

use common::smem_spec;
use gemm_core::check;
use gemm_core::spec::*;

fn errors_at(spec: &KernelSpec) -> Vec<&'static str> {
    check(spec).into_iter().map(|d| d.at).collect()
}

#[test]
fn the_baseline_is_legal() {
    assert_eq!(check(&smem_spec()), vec![]);
}

#[test]
fn threads_must_be_whole_warps_within_1024() {
    for t in [0, 100, 2048] {
        let mut s = smem_spec();
        s.block.threads = t;
        assert!(errors_at(&s).contains(&"block.threads"), "threads = {t}");
    }
}

#[test]
fn threads_must_match_the_thread_tiling() {
    let mut s = smem_spec();
    s.thread = Some(ThreadTile { m: 8, n: 4, lanes: Dim::N, sweep: Dim::N });
    let d = check(&s);
    assert!(d.iter().any(|d| d.at == "block.threads" && d.msg.contains("use threads = 128")), "{d:?}");
}

#[test]
fn the_thread_tile_must_divide_the_block() {
    let mut s = smem_spec();
    s.thread = Some(ThreadTile { m: 3, n: 4, lanes: Dim::N, sweep: Dim::N });
    assert_eq!(errors_at(&s), vec!["thread.m"]);
}

#[test]
fn warp_tiles_divide_the_block_and_lanes_cover_the_warp() {
    let mut s = smem_spec();
    s.block = Block { m: 128, n: 128, k: Some(8), threads: 256, min_blocks: None };
    s.thread = Some(ThreadTile { m: 8, n: 4, lanes: Dim::N, sweep: Dim::N });
    s.warp = Some(Warp { m: 64, n: 32, m_iters: 1, n_iters: 2 });
    assert_eq!(check(&s), vec![], "8 warps of 64x32, each 32 lanes x 8x4 x 1x2");
    s.warp = Some(Warp { m: 48, n: 32, m_iters: 1, n_iters: 2 });
    assert!(errors_at(&s).contains(&"warp.m"));
    s.warp = Some(Warp { m: 64, n: 32, m_iters: 1, n_iters: 1 });
    assert!(errors_at(&s).contains(&"warp"));
}

#[test]
fn vector_loads_must_divide_rows_and_split_evenly() {
    let mut s = smem_spec();
    s.staging = Staging::Smem { vector: 3, transpose_a: false, buffers: 1 };
    assert!(errors_at(&s).contains(&"staging.vector"));
    s.staging = Staging::Smem { vector: 4, transpose_a: false, buffers: 1 };
    s.block.k = Some(2);
    assert!(errors_at(&s).contains(&"staging.vector"));
}

#[test]
fn fma_reads_f32_and_tensor_cores_read_16_bit_types() {
    let mut s = smem_spec();
    s.a.elem = Elem::F16;
    assert_eq!(errors_at(&s), vec!["a"]);
    let mut s = smem_spec();
    s.atom = Atom::Mma { m: 16, n: 8, k: 16 };
    s.thread = None;
    s.warp = Some(Warp { m: 32, n: 32, m_iters: 1, n_iters: 1 });
    let at = errors_at(&s);
    assert!(at.contains(&"a") && at.contains(&"b"), "{at:?}");
}

/// bf16 on the sm_80 path: 128 x 128 x 32 tiles of four warps of 64 x 64,
/// three stages of 16-byte cp.async copies, the XOR swizzle, f32 C.
fn mma_128x128() -> KernelSpec {
    let mut s = smem_spec();
    (s.a.elem, s.b.elem) = (Elem::Bf16, Elem::Bf16);
    s.block = Block { m: 128, n: 128, k: Some(32), threads: 128, min_blocks: None };
    s.thread = None;
    s.warp = Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 });
    s.atom = Atom::Mma { m: 16, n: 8, k: 16 };
    s.staging = Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 1 };
    s.swizzle = Swizzle::Xor;
    s
}

/// An operand of a type its atom does not take is the one root cause: the
/// settings sized by that type (16-byte copies of 8 bf16 elements, too wide
/// for f32) are right for the type the atom takes, and are not errors too.
#[test]
fn an_operand_type_the_atom_does_not_take_is_one_error() {
    let mut s = mma_128x128();
    s.a.elem = Elem::F32;
    assert_eq!(errors_at(&s), vec!["a"], "{:?}", check(&s));
    s.a.elem = Elem::Bf16;
    assert_eq!(check(&s), vec![], "as the message says: bf16");
    // an e4m3 A under wmma, beside a bf16 B: one error at A, not a second
    // at B for the pair of widths
    s.a.elem = Elem::F8E4M3;
    s.atom = Atom::Wmma { m: 16, n: 16, k: 16 };
    s.swizzle = Swizzle::Pad(8);
    assert_eq!(errors_at(&s), vec!["a"], "{:?}", check(&s));
    // an error of its own stays: threads the tiling does not need
    s.atom = Atom::Mma { m: 16, n: 8, k: 16 };
    s.swizzle = Swizzle::Xor;
    s.a.elem = Elem::F32;
    s.block.threads = 256;
    assert_eq!(errors_at(&s), vec!["block.threads", "a"], "{:?}", check(&s));
}

/// A TMA swizzle where no TMA stages the tiles is one problem: the K row
/// it would need is moot, and the advice names what the path takes.
#[test]
fn a_tma_swizzle_off_tma_staging_is_one_problem() {
    let mut s = mma_128x128();
    s.swizzle = Swizzle::B128;
    let d = check(&s);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(!d[0].msg.contains('\n') && d[0].msg.contains("use it with staging = tma(..), or swizzle = xor"), "{}", d[0].msg);
    s.swizzle = Swizzle::Xor;
    assert_eq!(check(&s), vec![], "the advice works");
}

/// 8-bit A (`a`) and B (`b`), K-major, into a bf16 C by `mma(m16n8k32)`
/// over a 3-stage cp.async pipeline of 16-byte copies, the xor swizzle.
fn fp8_mma_spec(a: Elem, b: Elem, block: Block, warp: Warp) -> KernelSpec {
    let mut s = smem_spec();
    (s.a.elem, s.b.elem, s.c.elem) = (a, b, Elem::Bf16);
    (s.a.layout, s.b.layout) = (Layout::RowMajor, Layout::ColMajor);
    s.atom = Atom::Mma { m: 16, n: 8, k: 32 };
    (s.thread, s.block, s.warp) = (None, block, Some(warp));
    s.staging = Staging::CpAsync { stages: 3, vector: 16, transpose_a: false, fragments: 2 };
    s.swizzle = Swizzle::Xor;
    s
}

/// mma.sync multiplies 8-bit floats on sm_89 and sm_120 (the GPUs whose SMs
/// have it), K-major, 32 along K an atom, copied 4 bytes or more at a
/// time; wmma not at all.
#[test]
fn mma_takes_8_bit_floats_on_sm_89_and_newer_at_k_32() {
    let block = Block { m: 64, n: 64, k: Some(64), threads: 128, min_blocks: None };
    let mut s = fp8_mma_spec(Elem::F8E4M3, Elem::F8E5M2, block, Warp { m: 32, n: 32, m_iters: 1, n_iters: 1 });
    assert_eq!(s.min_arch(), Arch::Sm89);
    for arch in [Arch::Sm89, Arch::Sm120] {
        assert_eq!(check(&KernelSpec { arch, ..s.clone() }), vec![], "{arch}");
    }
    // too old, or (Hopper, datacenter Blackwell) emulated: wgmma is their 8-bit path
    for arch in [Arch::Sm80, Arch::Sm86, Arch::Sm90, Arch::Sm90a, Arch::Sm100] {
        assert_eq!(errors_at(&KernelSpec { arch, ..s.clone() }), vec!["arch"], "{arch}");
    }
    s.arch = Arch::Sm89;
    let at = |f: &dyn Fn(&mut KernelSpec)| {
        let mut t = s.clone();
        f(&mut t);
        errors_at(&t)
    };
    assert_eq!(at(&|t| t.atom = Atom::Mma { m: 16, n: 8, k: 16 }), vec!["atom"]);
    assert!(at(&|t| t.a.layout = Layout::ColMajor).contains(&"a"));
    assert!(at(&|t| t.b.layout = Layout::RowMajor).contains(&"b"));
    assert!(at(&|t| t.staging = Staging::Smem { vector: 2, transpose_a: false, buffers: 2 }).contains(&"staging.vector"));
    assert_eq!(at(&|t| t.staging = Staging::Smem { vector: 4, transpose_a: false, buffers: 2 }), Vec::<&str>::new());
    // one error for one cause: cp.async's copies under 4 bytes are its own rule's, staging = direct the atom's
    let mut narrow = s.clone();
    narrow.staging = Staging::CpAsync { stages: 3, vector: 2, transpose_a: false, fragments: 1 };
    assert_eq!(check(&narrow).len(), 1, "{:?}", check(&narrow));
    assert!(!at(&|t| t.staging = Staging::Direct).contains(&"staging.vector"));
    // a K step's fragments are 32 bytes a line, as m16n8k16's: 8 registers of A and 8 of B a set
    assert_eq!(s.fragment_registers(), 2 * (32 * 32 + 32 * 32) / 128);
    let mut w = s.clone();
    w.atom = Atom::Wmma { m: 16, n: 16, k: 16 };
    w.fused.scale = None;
    assert!(errors_at(&w).contains(&"a"));
}

/// Block scales on mma.sync: a K tile of 128 is one K block, summed apart,
/// so a thread holds two sets of sums (the register rule counts both), a
/// warp's columns lie in one 128-column block of B, and the K loop is a
/// cp.async pipeline's.
#[test]
fn block_scales_on_mma_sync_sum_each_k_block_apart() {
    let block = Block { m: 128, n: 128, k: Some(128), threads: 256, min_blocks: None };
    let mut s = fp8_mma_spec(Elem::F8E4M3, Elem::F8E4M3, block, Warp { m: 32, n: 64, m_iters: 1, n_iters: 1 });
    (s.edges, s.arch) = (Edges::Guarded, Arch::Sm89);
    s.fused.scale = Some(Scale::Block);
    assert_eq!(check(&s), vec![]);
    assert!(s.promoted());
    assert_eq!(s.accumulators_per_thread(), 2 * 32 * 64 / 32, "the accumulators and one K block's sums");
    let at = |f: &dyn Fn(&mut KernelSpec)| {
        let mut t = s.clone();
        f(&mut t);
        check(&t)
    };
    // 64 x 64 warps: 128 accumulators and 128 sums
    let wide = at(&|t| {
        t.block.threads = 128;
        t.warp = Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 });
    });
    assert_eq!(wide.iter().map(|d| d.at).collect::<Vec<_>>(), vec!["warp"], "{wide:?}");
    assert!(wide[0].msg.contains("256 f32 accumulators (half of them promoted sums)"), "{}", wide[0].msg);
    let ats = |f: &dyn Fn(&mut KernelSpec)| at(f).into_iter().map(|d| d.at).collect::<Vec<_>>();
    assert_eq!(ats(&|t| t.block.k = Some(64)), vec!["block.k"]);
    assert_eq!(
        ats(&|t| {
            (t.block.m, t.block.n) = (64, 192);
            t.warp = Some(Warp { m: 32, n: 48, m_iters: 1, n_iters: 1 });
        }),
        vec!["warp.n"]
    );
    assert_eq!(ats(&|t| t.staging = Staging::Smem { vector: 16, transpose_a: false, buffers: 2 }), vec!["staging"]);
    assert_eq!(ats(&|t| t.persistent = Some(Persistent::StreamK)), vec!["persistent"]);
    // 16-bit operands have no scales by block
    assert_eq!(
        ats(&|t| {
            (t.a.elem, t.b.elem, t.block.k, t.atom) = (Elem::Bf16, Elem::Bf16, Some(64), Atom::Mma { m: 16, n: 8, k: 16 });
            (t.arch, t.staging) = (Arch::Sm80, Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 2 });
        }),
        vec!["epilogue.scale"]
    );
}

/// A producer warpgroup and two consumers, `setmaxnreg` to `producer_regs`
/// and `consumer_regs`, the elected arrivals, no ping-pong or overlap.
fn two_consumers(producer_regs: u32, consumer_regs: u32) -> Specialize {
    Specialize {
        producers: 1,
        consumers: 2,
        producer_regs: Some(producer_regs),
        consumer_regs: Some(consumer_regs),
        pingpong: false,
        arrivals: Arrivals::Warpgroup,
        overlap: false,
    }
}

/// A bf16 wgmma kernel on sm_90a: 128 x `n` blocks of `threads`, a
/// warpgroup 64 x `n`, the 128-byte swizzle, staged by `staging`.
fn wgmma_spec(n: u32, threads: u32, staging: Staging) -> KernelSpec {
    let mut s = smem_spec();
    s.a.elem = Elem::Bf16;
    s.b.elem = Elem::Bf16;
    s.block = Block { m: 128, n, k: Some(64), threads, min_blocks: None };
    s.thread = None;
    s.warp = Some(Warp { m: 64, n, m_iters: 1, n_iters: 1 });
    s.atom = Atom::Wgmma { m: 64, n, k: 16, zeroed: false, promote: false };
    s.staging = staging;
    s.swizzle = Swizzle::B128;
    s.arch = Arch::Sm90a;
    s
}

#[test]
fn hopper_features_need_sm_90a() {
    let mut s = wgmma_spec(128, 256, Staging::tma(4));
    assert_eq!(check(&s), vec![], "seed 002's 128x128 wgmma kernel is legal");
    s.arch = Arch::Sm90;
    assert_eq!(errors_at(&s), vec!["arch"]);
    // on sm_80, tiles that fit sm_90a's shared memory and not sm_80's are
    // the arch's one error, not a second at the stages
    let mut s = wgmma_spec(256, 256, Staging::tma(4));
    assert_eq!(check(&s), vec![]);
    s.arch = Arch::Sm80;
    assert_eq!(errors_at(&s), vec!["arch"], "{:?}", check(&s));
    // and one the arch it needs leaves stays: stages past sm_90a's too
    s.staging = Staging::tma(6);
    assert_eq!(errors_at(&s), vec!["arch", "staging.stages"], "{:?}", check(&s));
}

/// Stages past shared memory: the fix proposed is the deepest pipeline
/// that fits, counting a TMA store's C tile that goes out in parts (five
/// stages of 128 x 256 tiles beside TMA stores: four fit, with the C tile
/// in two parts).
#[test]
fn too_many_stages_propose_the_deepest_pipeline_that_fits() {
    let mut s = wgmma_spec(256, 384, Staging::tma(5));
    s.c.elem = Elem::Bf16;
    s.specialize = Some(two_consumers(24, 240));
    s.persistent = Some(Persistent::Tiles);
    s.epilogue = Epilogue::Tma;
    let d = check(&s);
    let fix = d.iter().find(|d| d.at == "staging.stages").and_then(|d| d.fix).unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!((fix.path, fix.value), ("staging.stages", 4), "{d:?}");
    s.staging = Staging::tma(4);
    assert_eq!(check(&s), vec![]);
    assert_eq!(s.c_tile().map(|t| t.parts), Some(2));
}

/// Every thread's arrivals (`arrivals = thread`) are kept for a ring that
/// TMA fills: the launcher's variant whose producer fills the stages by
/// cp.async breaks the rule, so a launch that needs it copies the operand
/// instead. (The other cases are compile-fail cases.)
#[test]
fn thread_arrivals_refuse_stages_filled_by_cp_async() {
    let mut s = wgmma_spec(256, 384, Staging::tma(3));
    s.specialize = Some(Specialize { arrivals: Arrivals::Thread, ..two_consumers(40, 232) });
    s.persistent = Some(Persistent::Tiles);
    assert_eq!(check(&s), vec![]);
    s.staging = Staging::Tma { stages: 3, cp_async: Some(RingCopies::both(4)), prefetch: 0, evict_first: Default::default(), by_class: false };
    assert_eq!(errors_at(&s), vec!["specialize.arrivals"], "{:?}", check(&s));
}

/// `specialize(.., overlap)` takes the launcher's variant whose producer
/// fills the stages by cp.async (its consumers are the same), and refuses
/// a C that is not stored by TMA, as the element-storing variant for a
/// misaligned C is (the launcher then turns overlap off). (The other cases
/// are compile-fail cases.)
#[test]
fn overlap_takes_stages_filled_by_cp_async_but_no_c_stored_another_way() {
    let mut s = wgmma_spec(256, 384, Staging::tma(4));
    s.atom = Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false };
    s.c.elem = Elem::Bf16;
    s.specialize = Some(Specialize { overlap: true, ..two_consumers(24, 240) });
    s.persistent = Some(Persistent::Tiles);
    s.epilogue = Epilogue::Tma;
    assert_eq!(check(&s), vec![]);
    let mut ring = KernelSpec {
        staging: Staging::Tma { stages: 3, cp_async: Some(RingCopies::both(4)), prefetch: 0, evict_first: Default::default(), by_class: false },
        ..s.clone()
    };
    ring.specialize = ring.specialize.map(|sp| Specialize { producer_regs: Some(40), consumer_regs: Some(232), ..sp });
    assert_eq!(check(&ring), vec![]);
    s.epilogue = Epilogue::SmemElements;
    s.staging = Staging::tma(3);
    assert_eq!(errors_at(&s), vec!["specialize.overlap"], "{:?}", check(&s));
}

/// TMA's stages filled by cp.async: copies of 4, 8 or 16 bytes, by a
/// producer warpgroup with registers for them, in no cluster that
/// multicasts (which shares TMA's copies).
#[test]
fn stages_filled_by_cp_async_need_a_producer_warpgroup_and_no_multicast() {
    let mut s = wgmma_spec(
        256,
        384,
        Staging::Tma { stages: 3, cp_async: Some(RingCopies::both(4)), prefetch: 0, evict_first: Default::default(), by_class: false },
    );
    s.specialize = Some(two_consumers(40, 232));
    assert_eq!(check(&s), vec![], "tma_store's tiling filled by 8-byte copies is legal");
    s.staging = Staging::Tma { stages: 3, cp_async: Some(RingCopies::both(1)), prefetch: 0, evict_first: Default::default(), by_class: false };
    assert_eq!(errors_at(&s), vec!["staging"], "2-byte copies");
    s.staging = Staging::Tma { stages: 3, cp_async: Some(RingCopies::both(8)), prefetch: 0, evict_first: Default::default(), by_class: false };
    assert_eq!(check(&s), vec![], "16-byte copies");
    let sp = s.specialize.unwrap();
    s.specialize = Some(Specialize { producer_regs: Some(24), consumer_regs: Some(240), ..sp });
    assert_eq!(errors_at(&s), vec!["specialize"], "a producer of 24 registers");
    s.specialize = Some(sp);
    s.cluster = Some(Cluster { m: 2, n: 1, multicast: Some(Which::B), k: 1 });
    assert_eq!(errors_at(&s), vec!["cluster"]);
    s.cluster = None;
    s.specialize = None;
    s.block.threads = 256;
    assert!(errors_at(&s).contains(&"staging"), "no producer warpgroup");
}

#[test]
fn shared_memory_and_registers_are_bounded() {
    let mut s = smem_spec();
    s.block = Block { m: 256, n: 256, k: Some(128), threads: 1024, min_blocks: None };
    s.thread = Some(ThreadTile { m: 8, n: 8, lanes: Dim::N, sweep: Dim::N });
    assert!(errors_at(&s).contains(&"block.k"), "256 KB of tiles on sm_80: a K tile of 64 fits");
    let mut s = smem_spec();
    s.block = Block { m: 256, n: 256, k: Some(16), threads: 256, min_blocks: None };
    s.thread = Some(ThreadTile { m: 16, n: 16, lanes: Dim::N, sweep: Dim::N });
    assert!(errors_at(&s).contains(&"thread"), "256 accumulators");
}

#[test]
fn padding_must_keep_vector_alignment() {
    let mut s = smem_spec();
    s.swizzle = Swizzle::Pad(2);
    assert_eq!(errors_at(&s), vec!["swizzle"]);
    s.swizzle = Swizzle::Pad(4);
    assert_eq!(check(&s), vec![]);
}

#[test]
fn every_error_is_collected_not_just_the_first() {
    let mut s = smem_spec();
    s.block.threads = 100;
    s.a.elem = Elem::F16;
    s.swizzle = Swizzle::Pad(0);
    assert!(check(&s).len() >= 3, "{:?}", check(&s));
}

#[test]
fn messages_say_what_would_be_valid() {
    let mut s = smem_spec();
    s.block.m = 100;
    s.thread = Some(ThreadTile { m: 8, n: 4, lanes: Dim::N, sweep: Dim::N });
    let d = check(&s).into_iter().find(|d| d.at == "thread.m").expect("an error at thread.m");
    assert_eq!(
        d.msg,
        "block m = 100 is not divisible by thread m = 8; use a multiple of 8 for block m, such as 128, or a divisor of 100 for thread m"
    );
}

#[test]
fn cp_async_copies_at_least_4_bytes() {
    let mut s = smem_spec();
    s.staging = Staging::CpAsync { stages: 2, vector: 4, transpose_a: true, fragments: 1 };
    assert!(errors_at(&s).is_empty(), "{:?}", check(&s));
    // 16-bit operands: one element is 2 bytes, too small for cp.async.
    s.a.elem = Elem::F16;
    s.b.elem = Elem::F16;
    s.atom = Atom::Mma { m: 16, n: 8, k: 16 };
    s.staging = Staging::CpAsync { stages: 2, vector: 1, transpose_a: false, fragments: 1 };
    assert!(errors_at(&s).contains(&"staging.vector"));
    s.staging = Staging::CpAsync { stages: 2, vector: 8, transpose_a: true, fragments: 1 };
    assert!(errors_at(&s).contains(&"staging.transpose_a"));
}

/// `tma(prefetch = ..)` asks the L2 for the start of the tile a block
/// begins with, through the operands' pointers: not where a block walks
/// many tiles, shares its tiles by multicast, or fills its stages by
/// cp.async (the narrow variant drops it).
#[test]
fn a_prefetch_takes_the_one_tile_a_block_owns() {
    let mut s = wgmma_spec(64, 384, Staging::Tma { stages: 4, cp_async: None, prefetch: 2, evict_first: Default::default(), by_class: false });
    s.specialize = Some(two_consumers(24, 240));
    assert_eq!(check(&s), vec![]);
    let split = KernelSpec { cluster: Some(Cluster { m: 1, n: 1, k: 2, multicast: None }), ..s.clone() };
    assert_eq!(check(&split), vec![], "a cluster split along K: each rank prefetches its own part");
    for (what, bad) in [
        ("persistent", KernelSpec { persistent: Some(Persistent::Tiles), ..s.clone() }),
        ("stream-K", KernelSpec { persistent: Some(Persistent::StreamK), ..s.clone() }),
        ("multicast", KernelSpec { cluster: Some(Cluster { m: 2, n: 1, k: 1, multicast: Some(Which::B) }), ..s.clone() }),
        (
            "stages filled by cp.async",
            KernelSpec {
                staging: Staging::Tma {
                    stages: 4,
                    cp_async: Some(RingCopies::both(4)),
                    prefetch: 2,
                    evict_first: Default::default(),
                    by_class: false,
                },
                ..s.clone()
            },
        ),
    ] {
        assert!(errors_at(&bad).contains(&"staging.prefetch"), "{what}: {:?}", check(&bad));
    }
}

/// `tma(evict_first = ..)` hints the loads of an operand each block reads
/// alone: not one a cluster multicasts, whose boxes every block of the
/// share reads; the other operand may be hinted beside a multicast.
#[test]
fn evict_first_names_no_multicast_operand() {
    let mut s =
        wgmma_spec(64, 384, Staging::Tma { stages: 4, cp_async: None, prefetch: 0, evict_first: EvictFirst { a: true, b: true }, by_class: false });
    s.specialize = Some(two_consumers(24, 240));
    assert_eq!(check(&s), vec![]);
    s.cluster = Some(Cluster { m: 2, n: 1, k: 1, multicast: Some(Which::B) });
    assert!(errors_at(&s).contains(&"staging.evict_first"), "{:?}", check(&s));
    s.staging = Staging::Tma { stages: 4, cp_async: None, prefetch: 0, evict_first: EvictFirst { a: true, b: false }, by_class: false };
    assert!(!errors_at(&s).contains(&"staging.evict_first"), "{:?}", check(&s));
}

/// `cluster(k = ..)` splits one block tile's K over the cluster's blocks:
/// legal on the Hopper producer-consumer path, one tile a cluster, without
/// cluster tiles along m or n or multicast; the partial sums it keeps in
/// rank 0's shared memory count against the budget.
#[test]
fn a_cluster_split_along_k_shares_one_tile_on_the_producer_consumer_path() {
    let mut s = wgmma_spec(64, 384, Staging::tma(4));
    s.specialize = Some(two_consumers(24, 240));
    s.cluster = Some(Cluster { m: 1, n: 1, k: 2, multicast: None });
    assert_eq!(check(&s), vec![], "two blocks on a 128 x 64 tile");
    assert_eq!(s.cluster_size(), 2);
    assert_eq!(s.k_split_bytes(), 128 * 64 * 4, "a block tile of floats for rank 1");
    for (what, bad) in [
        ("persistent", KernelSpec { persistent: Some(Persistent::Tiles), ..s.clone() }),
        ("cluster tiles along m", KernelSpec { cluster: Some(Cluster { m: 2, n: 1, k: 2, multicast: None }), ..s.clone() }),
        ("multicast", KernelSpec { cluster: Some(Cluster { m: 1, n: 1, k: 2, multicast: Some(Which::B) }), ..s.clone() }),
        ("no producer", KernelSpec { specialize: None, block: Block { threads: 256, ..s.block }, ..s.clone() }),
        ("ping-pong", KernelSpec { specialize: Some(Specialize { pingpong: true, ..two_consumers(24, 240) }), ..s.clone() }),
        (
            "stages filled by cp.async",
            KernelSpec {
                staging: Staging::Tma {
                    stages: 4,
                    cp_async: Some(RingCopies::both(4)),
                    prefetch: 0,
                    evict_first: Default::default(),
                    by_class: false,
                },
                ..s.clone()
            },
        ),
    ] {
        assert!(errors_at(&bad).contains(&"cluster.k"), "{what}: {:?}", check(&bad));
    }
    // nine blocks pass the portable cluster size; 128 x 256 tiles' partial sums pass the shared memory
    let nine = KernelSpec { cluster: Some(Cluster { m: 1, n: 1, k: 9, multicast: None }), ..s.clone() };
    assert!(errors_at(&nine).contains(&"cluster"), "{:?}", check(&nine));
    let mut wide = wgmma_spec(256, 384, Staging::tma(4));
    wide.specialize = Some(two_consumers(24, 240));
    wide.cluster = s.cluster;
    assert!(!check(&wide).is_empty(), "128 KB of partial sums beside four stages of 128 x 256");
}

/// Numbers far past any kernel (a tile side past 1024, u32's largest) are
/// refused by their size alone, at their argument, and alone: the rules
/// that multiply settings together never see them.
#[test]
fn numbers_past_any_kernel_are_refused_alone_at_their_argument() {
    let mut s = smem_spec();
    s.block.m = u32::MAX;
    let errs = check(&s);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].at, "block.m");
    assert!(errs[0].msg.contains("at most 1024"), "{}", errs[0].msg);
    let mut s = smem_spec();
    s.swizzle = Swizzle::Pad(1 << 20);
    assert_eq!(errors_at(&s), vec!["swizzle"]);
    let mut s = smem_spec();
    s.cluster = Some(Cluster { m: 1, n: 1, multicast: None, k: 0 });
    let errs = check(&s);
    assert!(errs.iter().any(|d| d.at == "cluster" && d.msg.contains("cluster k = 0")), "{errs:?}");
}

/// The by-class variant (the launcher's, for lines 8 bytes aligned) is
/// written for one tiling: asked of another, it is refused at `staging`;
/// on that tiling it is legal, and its name says so.
#[test]
fn the_by_class_variant_takes_hopper_autotuned_s_tiling_alone() {
    let by_class = |stages| Staging::Tma { stages, cp_async: None, prefetch: 0, evict_first: Default::default(), by_class: true };
    let mut s = wgmma_spec(256, 384, by_class(4));
    s.specialize = Some(two_consumers(24, 240));
    s.persistent = Some(Persistent::Tiles);
    s.c.elem = Elem::Bf16;
    s.b.layout = Layout::ColMajor;
    assert!(s.by_class_fits());
    assert_eq!(check(&s), vec![]);
    assert!(s.kernel_name().contains("_s4_byclass"), "{}", s.kernel_name());
    // not persistent, or f32 C, or consumers short of registers: refused
    for other in [
        KernelSpec { persistent: None, ..s.clone() },
        KernelSpec { c: Operand { elem: Elem::F32, ..s.c }, ..s.clone() },
        KernelSpec { specialize: Some(two_consumers(40, 216)), ..s.clone() },
    ] {
        assert!(!other.by_class_fits());
        assert!(errors_at(&other).contains(&"staging"), "{:?}", check(&other));
    }
}

/// The atom proposed where its N does not tile the warpgroup's keeps the K
/// the operands' type takes (32 on 8-bit floats, where a proposal of
/// `k16` would be refused in turn), and applied it clears the error.
#[test]
fn an_atom_narrower_than_the_warp_is_told_the_atom_of_its_element_type() {
    for (elem, k) in [(Elem::Bf16, 16), (Elem::F8E4M3, 32)] {
        let mut s = wgmma_spec(256, 384, Staging::tma(3));
        s.specialize = Some(two_consumers(24, 240));
        (s.a.elem, s.b.elem) = (elem, elem);
        if elem.is_fp8() {
            s.block.k = Some(128);
            (s.a.layout, s.b.layout) = (Layout::RowMajor, Layout::ColMajor);
        }
        s.atom = Atom::Wgmma { m: 64, n: 192, k, zeroed: false, promote: false };
        let errors = check(&s);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].msg.ends_with(&format!("use wgmma(m64n256k{k})")), "{}", errors[0].msg);
        let fixed = gemm_core::check::apply(&s, errors[0].fix.expect("a fix")).unwrap();
        assert_eq!(check(&fixed), vec![], "{fixed:?}");
    }
}
