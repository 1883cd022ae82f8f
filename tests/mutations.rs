//! Specs a user might get wrong: every ladder step, tuned point and combo
//! changed at random in one to four places (numbers from 0 to past what
//! any rule allows, other enums, other element types and layouts), each
//! answered by the rules' errors or by the generator's source, never by a
//! panic. The macro runs the same rules and generator, and a panic there
//! is "proc macro panicked" at no argument. No GPU, no NVRTC: thousands of
//! specs a second. Then a sample of the legal ones through NVRTC: what the
//! rules accept compiles.

use gemm_runtime::gemm_core::{check, generate};
use gemm_runtime::spec::*;
use rand::{rngs::StdRng, Rng, SeedableRng};

/// Numbers from degenerate to past every limit, the legal ones among them.
const NUMBERS: [u32; 22] = [0, 1, 2, 3, 4, 6, 7, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 192, 256, 512, 1024, 65536];

fn number(rng: &mut StdRng) -> u32 {
    NUMBERS[rng.random_range(0..NUMBERS.len())]
}

fn pick<T: Copy>(rng: &mut StdRng, options: &[T]) -> T {
    options[rng.random_range(0..options.len())]
}

/// One random change to `s`.
fn mutate(rng: &mut StdRng, s: &mut KernelSpec) {
    let elems = [Elem::F32, Elem::F16, Elem::Bf16, Elem::F8E4M3, Elem::F8E5M2];
    let layouts = [Layout::RowMajor, Layout::ColMajor];
    match rng.random_range(0..24) {
        0 => s.block.m = number(rng),
        1 => s.block.n = number(rng),
        2 => s.block.k = if rng.random_bool(0.1) { None } else { Some(number(rng)) },
        3 => s.block.threads = number(rng),
        4 => s.block.min_blocks = if rng.random_bool(0.5) { None } else { Some(number(rng)) },
        5 => {
            let w = s.warp.get_or_insert(Warp { m: 32, n: 32, m_iters: 1, n_iters: 1 });
            match rng.random_range(0..4) {
                0 => w.m = number(rng),
                1 => w.n = number(rng),
                2 => w.m_iters = number(rng),
                _ => w.n_iters = number(rng),
            }
        }
        6 => {
            if let Some(t) = s.thread.as_mut() {
                if rng.random_bool(0.5) {
                    t.m = number(rng)
                } else {
                    t.n = number(rng)
                }
            }
        }
        7 => {
            s.atom = match rng.random_range(0..4) {
                0 => Atom::Fma,
                1 => Atom::Mma { m: 16, n: 8, k: pick(rng, &[8, 16, 32]) },
                2 => Atom::Wmma { m: 16, n: 16, k: 16 },
                _ => Atom::Wgmma { m: 64, n: number(rng), k: pick(rng, &[8, 16, 32]), zeroed: rng.random_bool(0.2), promote: rng.random_bool(0.2) },
            }
        }
        8 => {
            if let Atom::Wgmma { n, .. } | Atom::Mma { n, .. } = &mut s.atom {
                *n = number(rng);
            }
        }
        9 => {
            s.staging = match rng.random_range(0..4) {
                0 => Staging::Direct,
                1 => Staging::Smem { vector: pick(rng, &[1, 2, 4, 8, 3]), transpose_a: rng.random_bool(0.3), buffers: pick(rng, &[0, 1, 2, 3]) },
                2 => Staging::CpAsync {
                    stages: number(rng),
                    vector: pick(rng, &[1, 2, 4, 8, 16, 3]),
                    transpose_a: rng.random_bool(0.2),
                    fragments: pick(rng, &[0, 1, 2, 3]),
                },
                _ => Staging::Tma {
                    stages: number(rng),
                    cp_async: rng.random_bool(0.2).then(|| RingCopies { vector: pick(rng, &[2, 4, 8, 3]), only: None }),
                    prefetch: pick(rng, &[0, 1, 2, 8]),
                    evict_first: EvictFirst::default(),
                    by_class: rng.random_bool(0.1),
                },
            }
        }
        10 => match &mut s.staging {
            Staging::CpAsync { stages, .. } | Staging::Tma { stages, .. } => *stages = number(rng),
            Staging::Smem { buffers, .. } => *buffers = number(rng),
            Staging::Direct => {}
        },
        11 => {
            let sp = s.specialize.get_or_insert(Specialize {
                producers: 1,
                consumers: 2,
                producer_regs: None,
                consumer_regs: None,
                pingpong: false,
                arrivals: Arrivals::Warpgroup,
                overlap: false,
            });
            match rng.random_range(0..7) {
                0 => sp.producers = number(rng),
                1 => sp.consumers = number(rng),
                2 => sp.producer_regs = Some(number(rng)),
                3 => sp.consumer_regs = Some(number(rng)),
                4 => sp.pingpong = !sp.pingpong,
                5 => sp.overlap = !sp.overlap,
                _ => sp.arrivals = pick(rng, &[Arrivals::Warpgroup, Arrivals::Thread]),
            }
        }
        12 => s.specialize = None,
        13 => {
            let pad = number(rng);
            s.swizzle = pick(rng, &[Swizzle::None, Swizzle::Pad(pad), Swizzle::Xor, Swizzle::B32, Swizzle::B64, Swizzle::B128])
        }
        14 => {
            let band = number(rng);
            s.raster = pick(rng, &[Raster::Row, Raster::Grouped(band), Raster::Hilbert])
        }
        15 => {
            s.persistent = pick(
                rng,
                &[
                    None,
                    Some(Persistent::Tiles),
                    Some(Persistent::Queue),
                    Some(Persistent::StreamK),
                    Some(Persistent::Hybrid),
                    Some(Persistent::TailSplit),
                ],
            )
        }
        16 => {
            s.cluster = rng.random_bool(0.8).then(|| Cluster {
                m: pick(rng, &[0, 1, 2, 4, 3]),
                n: pick(rng, &[0, 1, 2, 4]),
                k: pick(rng, &[0, 1, 2, 4, 16]),
                multicast: pick(rng, &[None, Some(Which::A), Some(Which::B)]),
            })
        }
        17 => {
            s.epilogue = pick(rng, &[Epilogue::Direct, Epilogue::Vector, Epilogue::Smem, Epilogue::SmemElements, Epilogue::Tma, Epilogue::Stmatrix])
        }
        18 => {
            let f = &mut s.fused;
            match rng.random_range(0..5) {
                0 => f.gated = !f.gated,
                1 => f.scale = pick(rng, &[None, Some(Scale::Tensor), Some(Scale::Channel), Some(Scale::Block)]),
                2 => f.bias = rng.random_bool(0.7).then(|| Bias { along: pick(rng, &[Dim::M, Dim::N]), elem: pick(rng, &elems) }),
                3 => f.activation = pick(rng, &[None, Some(Activation::Relu), Some(Activation::Silu), Some(Activation::GeluTanh)]),
                _ => (f.alpha, f.beta) = (rng.random_bool(0.5), rng.random_bool(0.5)),
            }
        }
        19 => s.edges = pick(rng, &[Edges::Whole, Edges::Guarded]),
        20 => s.groups = pick(rng, &[None, Some(Groups::Masked), Some(Groups::Contiguous), Some(Groups::Indexed)]),
        21 => s.arch = pick(rng, &[Arch::Sm80, Arch::Sm86, Arch::Sm89, Arch::Sm90, Arch::Sm90a, Arch::Sm100, Arch::Sm120]),
        22 => {
            let op = pick(rng, &[0, 1, 2]);
            let o = [&mut s.a, &mut s.b, &mut s.c].into_iter().nth(op).unwrap();
            if rng.random_bool(0.5) {
                o.elem = pick(rng, &elems)
            } else {
                o.layout = pick(rng, &layouts)
            }
        }
        _ => {
            // the same number on the block's, warp's and atom's side along n, so that
            // tilings whose tiers agree reach the generator's sizing
            let n = number(rng);
            s.block.n = n;
            if let Some(w) = s.warp.as_mut() {
                w.n = n;
            }
            if let Atom::Wgmma { n: an, .. } = &mut s.atom {
                *an = n;
            }
        }
    }
}

/// The specs the tests change: every ladder step, the combinations, a
/// sample of every tuned kernel's points and of two decode kernels'.
fn bases() -> Vec<KernelSpec> {
    let mut bases: Vec<KernelSpec> = gemm_ladder::steps::all().map(|s| s.kernel.spec.clone()).collect();
    use gemm_ladder::combos;
    for specs in [
        combos::hopper(),
        combos::hopper_fp8(),
        combos::hopper_overlap(),
        combos::hopper_narrow_tma_store(),
        combos::mma(),
        combos::mma_fp8(),
        combos::fused(),
        combos::guarded(),
    ] {
        bases.extend(specs);
    }
    let tuned = gemm_ladder::tuned::ALL.iter().copied();
    for t in tuned.chain([&gemm_ladder::decode::decode_mma::KERNEL, &gemm_ladder::decode::decode_cluster::KERNEL]) {
        bases.extend(t.points().iter().step_by(7).cloned());
    }
    bases
}

/// The tests' draws: `default`, or `GEMM_TILES_TEST_SEED` added to it.
fn rng(default: u64) -> StdRng {
    let seed = default + std::env::var("GEMM_TILES_TEST_SEED").map_or(0, |v| v.parse::<u64>().expect("GEMM_TILES_TEST_SEED is a number"));
    StdRng::seed_from_u64(seed)
}

#[test]
fn specs_changed_at_random_get_errors_or_source_never_a_panic() {
    let bases = bases();
    let mut rng = rng(20261130);
    // the panics' own messages stay off the test's output
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let (mut legal, mut panicked) = (0, Vec::new());
    for _ in 0..30_000 {
        let mut s = bases[rng.random_range(0..bases.len())].clone();
        for _ in 0..rng.random_range(1..=4) {
            mutate(&mut rng, &mut s);
        }
        let spec = s.clone();
        match std::panic::catch_unwind(move || (check(&spec).is_empty(), generate(&spec).is_ok())) {
            Ok((true, true)) => legal += 1,
            Ok(_) => {}
            Err(e) => {
                let why = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                panicked.push(format!("{why}: {s:?}"));
            }
        }
    }
    std::panic::set_hook(hook);
    assert!(
        panicked.is_empty(),
        "{} of 30000 specs panicked, the first:\n{}",
        panicked.len(),
        panicked.iter().take(3).cloned().collect::<Vec<_>>().join("\n\n")
    );
    // (most changes break a rule; some must still make kernels, or the test checks only the rules)
    assert!(legal > 500, "only {legal} of the changed specs were legal");
}

/// Legal specs among the changed ones, 48 kernels of their own (1500
/// compiled on 2026-12-03 found one warning, an unused variable of A's
/// block scales under grouped rows), compile with NVRTC, ptxas included,
/// for their arch, without a warning.
#[test]
fn legal_specs_changed_at_random_compile_with_nvrtc_without_a_warning() {
    use gemm_runtime::internal::compile::compile_with_log;
    let bases = bases();
    let mut rng = rng(20261203);
    let (mut legal, mut names) = (Vec::new(), std::collections::HashSet::new());
    while legal.len() < 48 {
        let mut s = bases[rng.random_range(0..bases.len())].clone();
        for _ in 0..rng.random_range(1..=3) {
            mutate(&mut rng, &mut s);
        }
        if !check(&s).is_empty() {
            continue;
        }
        if let Ok(k) = gemm_runtime::Kernel::from_spec(s) {
            if names.insert(k.name.to_string()) {
                legal.push(k);
            }
        }
    }
    // (compiled side by side: NVRTC takes a second or more for some)
    let queue = std::sync::Mutex::new(legal.into_iter());
    let failed = std::sync::Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get()).min(16);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let Some(k) = queue.lock().unwrap().next() else { break };
                match compile_with_log(&k.source, &k.name, k.spec.arch.nvrtc_name()) {
                    Ok((_, log)) if log.contains("warning") => failed.lock().unwrap().push(format!("{}: NVRTC warns:\n{log}", k.name)),
                    Ok(_) => {}
                    Err(e) => failed.lock().unwrap().push(format!("{}: {e}", k.name)),
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    assert!(failed.is_empty(), "{} of 48 legal changed specs did not compile cleanly, the first:\n{}", failed.len(), failed[0]);
}
