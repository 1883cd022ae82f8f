//! Advice that works: every value an error message proposes, applied to the
//! spec, clears that error and breaks no rule that held before; errors at one
//! argument come as one message, and an error that another's fix clears is
//! left to that fix; budgets name the largest value that fits.

mod common;

use common::smem_spec;
use gemm_core::check::{apply, check, violated};
use gemm_core::spec::*;

/// A tiny deterministic generator (xorshift), so the walk is the same every run.
struct Walk(u64);

impl Walk {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<T: Copy>(&mut self, of: &[T]) -> T {
        of[(self.next() % of.len() as u64) as usize]
    }
}

/// Legal starting points: a SIMT spec with a warp tier, a cp.async one, an mma one.
fn bases() -> Vec<KernelSpec> {
    let simt = smem_spec();
    let mut warps = smem_spec();
    warps.block = Block { m: 128, n: 128, k: Some(8), threads: 256, min_blocks: None };
    warps.thread = Some(ThreadTile { m: 8, n: 4, lanes: Dim::N, sweep: Dim::N });
    warps.warp = Some(Warp { m: 64, n: 32, m_iters: 1, n_iters: 2 });
    warps.staging = Staging::CpAsync { stages: 3, vector: 4, transpose_a: false, fragments: 1 };
    let mma = mma_spec();
    for s in [&simt, &warps, &mma] {
        assert_eq!(check(s), vec![], "{s:?} is legal");
    }
    vec![simt, warps, mma]
}

/// A bf16 mma spec of 128 x 128 x 32 tiles, 4 warps of 64 x 64, 4 cp.async stages.
fn mma_spec() -> KernelSpec {
    let op = Operand { elem: Elem::Bf16, layout: Layout::RowMajor };
    KernelSpec {
        a: op,
        b: op,
        c: op,
        block: Block { m: 128, n: 128, k: Some(32), threads: 128, min_blocks: None },
        warp: Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 }),
        thread: None,
        atom: Atom::Mma { m: 16, n: 8, k: 16 },
        staging: Staging::CpAsync { stages: 4, vector: 8, transpose_a: false, fragments: 1 },
        swizzle: Swizzle::Pad(8),
        ..smem_spec()
    }
}

/// Breaks one to three numeric settings of `spec` at random.
fn perturb(walk: &mut Walk, spec: &KernelSpec) -> KernelSpec {
    let mut s = spec.clone();
    for _ in 0..1 + walk.next() % 3 {
        match walk.next() % 6 {
            0 => s.block.threads = walk.pick(&[0, 32, 64, 96, 100, 128, 200, 256, 512, 1024, 2048]),
            1 => s.block.m = walk.pick(&[16, 30, 32, 48, 64, 128, 256, 512]),
            2 => s.block.n = walk.pick(&[16, 32, 40, 64, 128, 256, 512]),
            3 => s.block.k = s.block.k.map(|_| walk.pick(&[4, 6, 8, 12, 16, 32, 48, 64, 128, 256])),
            4 => match &mut s.staging {
                Staging::Smem { vector, .. } | Staging::CpAsync { vector, .. } => *vector = walk.pick(&[1, 2, 3, 4, 8, 16]),
                _ => {}
            },
            _ => match &mut s.staging {
                Staging::CpAsync { stages, .. } => *stages = walk.pick(&[1, 2, 3, 4, 6, 8, 12]),
                _ => s.swizzle = Swizzle::Pad(walk.pick(&[1, 2, 3, 4, 5, 8])),
            },
        }
    }
    s
}

#[test]
fn every_proposed_value_clears_its_error_and_breaks_no_other_rule() {
    let mut walk = Walk(0x9e37_79b9_7f4a_7c15);
    let (mut invalid, mut proposals) = (0, 0);
    for base in bases() {
        for _ in 0..400 {
            let spec = perturb(&mut walk, &base);
            let before = check(&spec);
            if before.is_empty() {
                continue;
            }
            invalid += 1;
            // what was wrong before, the errors folded into their causes included
            let sites = violated(&spec);
            for d in &before {
                let Some(fix) = d.fix else { continue };
                proposals += 1;
                let fixed = apply(&spec, fix).expect("a fix names a setting of the spec");
                for e in check(&fixed) {
                    assert!(
                        e.at != d.at && e.at != fix.path && sites.contains(&e.at),
                        "{spec:?}\nproposed {fix:?} for `{}`: {}\nbut then `{}`: {}",
                        d.at,
                        d.msg,
                        e.at,
                        e.msg
                    );
                }
            }
        }
    }
    // the walk exercises the advice, not just legal specs
    assert!(invalid > 500 && proposals > 200, "{invalid} invalid specs, {proposals} proposals");
}

#[test]
fn two_rules_at_one_argument_give_one_message_with_a_value_for_both() {
    // 100 threads: not whole warps, and not the 64 that 8x8 tiles of 8x8 threads need
    let mut s = smem_spec();
    s.block = Block { m: 64, n: 64, k: Some(8), threads: 100, min_blocks: None };
    s.thread = Some(ThreadTile { m: 8, n: 8, lanes: Dim::N, sweep: Dim::N });
    let d = check(&s);
    let at_threads: Vec<_> = d.iter().filter(|d| d.at == "block.threads").collect();
    assert_eq!(at_threads.len(), 1, "{d:?}");
    assert!(at_threads[0].msg.contains("use threads = 64") && !at_threads[0].msg.contains("try 128"), "{}", at_threads[0].msg);
}

#[test]
fn a_vector_width_that_would_break_the_load_split_is_not_proposed() {
    // k = 6: vector = 2 divides it, but 256 threads cannot load the 384
    // elements of A 2 (or 1) at a time in whole rounds: no width works, and
    // the message says what 2 would break instead of proposing it
    let mut s = smem_spec();
    s.block = Block { m: 64, n: 64, k: Some(6), threads: 256, min_blocks: None };
    s.thread = Some(ThreadTile { m: 4, n: 4, lanes: Dim::N, sweep: Dim::N });
    s.staging = Staging::Smem { vector: 4, transpose_a: false, buffers: 1 };
    let d = check(&s);
    let v = d.iter().find(|d| d.at == "staging.vector").expect("a vector error");
    assert_eq!(v.fix, None, "{}", v.msg);
    assert!(v.msg.contains("vector = 2 would break another rule: the A tile (384 elements)"), "{}", v.msg);
    // with 64 threads (8x8 thread tiles of 8x8) vector = 2 works and is proposed
    s.block.threads = 64;
    s.thread = Some(ThreadTile { m: 8, n: 8, lanes: Dim::N, sweep: Dim::N });
    let d = check(&s);
    let v = d.iter().find(|d| d.at == "staging.vector").expect("a vector error");
    assert_eq!(v.fix.map(|f| f.value), Some(2), "{}", v.msg);
}

#[test]
fn a_pipeline_over_shared_memory_says_how_many_stages_fit_at_the_stages() {
    let mut s = smem_spec();
    s.block = Block { m: 256, n: 256, k: Some(32), threads: 256, min_blocks: None };
    s.thread = Some(ThreadTile { m: 16, n: 16, lanes: Dim::N, sweep: Dim::N });
    s.staging = Staging::CpAsync { stages: 4, vector: 4, transpose_a: false, fragments: 1 };
    // 64 KB a stage: 2 fit in sm_80's 163 KB; the error is at the stages, the setting to change
    let d = check(&s);
    let smem = d.iter().find(|d| d.at == "staging.stages").expect("a shared-memory error at the stages");
    assert!(smem.msg.contains("at most 2 stages fit at this tile size: use stages = 2"), "{}", smem.msg);
}

#[test]
fn the_issues_case_gets_advice_at_each_argument_that_does_not_contradict() {
    // block(m = 30, n = 32, threads = 100) with 8x8 thread tiles: one message
    // at threads (whole warps), one at the block side 8 does not divide
    let mut s = smem_spec();
    s.block = Block { m: 30, n: 32, k: Some(8), threads: 100, min_blocks: None };
    s.thread = Some(ThreadTile { m: 8, n: 8, lanes: Dim::N, sweep: Dim::N });
    let d = check(&s);
    for site in ["block.threads", "thread.m"] {
        assert_eq!(d.iter().filter(|d| d.at == site).count(), 1, "one message at {site}: {d:#?}");
    }
    let threads = d.iter().find(|d| d.at == "block.threads").unwrap();
    assert!(!threads.msg.contains("use threads = 256"), "{}", threads.msg);
}

#[test]
fn tiles_over_shared_memory_that_no_stage_count_fits_propose_a_halved_k_tile() {
    // one buffer of 256 x 128 and 128 x 256 f32 tiles (256 KB): no stage count helps,
    // a K tile of 64 fits (128 KB) and keeps every other rule
    let mut s = smem_spec();
    s.block = Block { m: 256, n: 256, k: Some(128), threads: 1024, min_blocks: None };
    s.thread = Some(ThreadTile { m: 8, n: 8, lanes: Dim::N, sweep: Dim::N });
    s.staging = Staging::Smem { vector: 4, transpose_a: false, buffers: 1 };
    let d = check(&s);
    let k = d.iter().find(|d| d.at == "block.k").expect("a shared-memory error at the K tile");
    assert_eq!(k.fix.map(|f| f.value), Some(64), "{}", k.msg);
    assert!(k.msg.contains("a K tile of 64 fits: use k = 64"), "{}", k.msg);
    assert_eq!(check(&apply(&s, k.fix.unwrap()).unwrap()), vec![]);
    // a pipeline of two stages (128 x 256 and 256 x 128 bf16 tiles, 256 KB): fewer stages
    // would not pipeline, so the K tile is halved
    let mut mma = mma_spec();
    mma.block.k = Some(256);
    mma.staging = Staging::CpAsync { stages: 2, vector: 8, transpose_a: false, fragments: 1 };
    let d = check(&mma);
    let k = d.iter().find(|d| d.at == "block.k").expect("a shared-memory error at the K tile");
    assert!(k.msg.contains("a K tile of 128 fits: use k = 128"), "{}", k.msg);
    assert_eq!(check(&apply(&mma, k.fix.unwrap()).unwrap()), vec![]);
}
