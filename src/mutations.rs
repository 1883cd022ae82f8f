//! Specs changed at random: every ladder step, combination and a sample of
//! every tuned kernel's points, changed in a few places (numbers from 0 to
//! past what any rule allows, other enums, other element types and
//! layouts). `tests/mutations.rs` checks that the rules or the generator
//! answer each, and that the legal ones compile; `tests/gpu.rs` runs the
//! legal ones against the reference.

use gemm_runtime::spec::*;
use rand::{rngs::StdRng, Rng};

/// Numbers from degenerate to past every limit, the legal ones among them.
const NUMBERS: [u32; 22] = [0, 1, 2, 3, 4, 6, 7, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 192, 256, 512, 1024, 65536];

fn number(rng: &mut StdRng) -> u32 {
    NUMBERS[rng.random_range(0..NUMBERS.len())]
}

fn pick<T: Copy>(rng: &mut StdRng, options: &[T]) -> T {
    options[rng.random_range(0..options.len())]
}

/// One random change to `s`.
pub fn mutate(rng: &mut StdRng, s: &mut KernelSpec) {
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
pub fn bases() -> Vec<KernelSpec> {
    let mut bases: Vec<KernelSpec> = crate::steps::all().map(|s| s.kernel.spec.clone()).collect();
    use crate::combos;
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
    let tuned = crate::tuned::ALL.iter().copied();
    for t in tuned.chain([&crate::decode::decode_mma::KERNEL, &crate::decode::decode_cluster::KERNEL]) {
        bases.extend(t.points().iter().step_by(7).cloned());
    }
    bases
}

/// A legal kernel among `bases` changed in one to three places: its spec
/// passes the rules, the generator writes it, and `keep` takes it.
pub fn random_legal(rng: &mut StdRng, bases: &[KernelSpec], keep: impl Fn(&KernelSpec) -> bool) -> gemm_runtime::Kernel {
    loop {
        let mut s = bases[rng.random_range(0..bases.len())].clone();
        for _ in 0..rng.random_range(1..=3) {
            mutate(rng, &mut s);
        }
        if !keep(&s) || !gemm_runtime::gemm_core::check(&s).is_empty() {
            continue;
        }
        if let Ok(k) = gemm_runtime::Kernel::from_spec(s) {
            return k;
        }
    }
}
