//! Tensor-core specs beyond the ladder: every layout of A, B and C under
//! each staging, swizzle and C type, for the NVRTC test (compiles them all)
//! and the GPU test (checks them all against cuBLAS).

use gemm_runtime::spec::*;

fn spec(name: &'static str, elems: [Elem; 3], layouts: [Layout; 3], atom: Atom) -> KernelSpec {
    let op = |i: usize| Operand { elem: elems[i], layout: layouts[i] };
    KernelSpec {
        name: name.into(),
        a: op(0),
        b: op(1),
        c: op(2),
        block: Block { m: 64, n: 64, k: Some(32), threads: 128, min_blocks: None },
        warp: Some(Warp { m: 32, n: 32, m_iters: 1, n_iters: 1 }),
        thread: None,
        atom,
        staging: Staging::Direct,
        specialize: None,
        swizzle: Swizzle::None,
        raster: Raster::Row,
        persistent: None,
        cluster: None,
        epilogue: Epilogue::Direct,
        fused: Fused::default(),
        edges: Edges::Whole,
        groups: None,
        arch: Arch::Sm80,
    }
}

/// Every layout of A, B, C.
fn layouts() -> impl Iterator<Item = [Layout; 3]> {
    let l = [Layout::RowMajor, Layout::ColMajor];
    l.into_iter().flat_map(move |a| l.into_iter().flat_map(move |b| l.into_iter().map(move |c| [a, b, c])))
}

/// mma specs: each of the 8 layouts with each C type (24 kernels), cycling
/// through the stagings (1 and 2 synchronous buffers, 2- to 4-stage
/// cp.async, 4-element copies), the swizzles (none, pad, xor), f16 and bf16
/// operands, warp shapes with an odd number of 8-wide atoms, a grouped
/// raster, vector stores where C is row-major, C through shared memory
/// (`epilogue = smem`) on a sixth of them, and fragments loaded a K
/// step ahead (`fragments = 2`) over K tiles of one to three 16-wide steps,
/// stream-K and the tail split on some of the cp.async pipelines.
pub fn mma() -> Vec<KernelSpec> {
    let stagings = [
        Staging::Smem { vector: 8, transpose_a: false, buffers: 1 },
        Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 1 },
        Staging::Smem { vector: 8, transpose_a: false, buffers: 2 },
        Staging::CpAsync { stages: 2, vector: 4, transpose_a: false, fragments: 1 },
        Staging::CpAsync { stages: 4, vector: 8, transpose_a: false, fragments: 1 },
    ];
    let swizzles = [Swizzle::Pad(8), Swizzle::Xor, Swizzle::None, Swizzle::Xor];
    let mut out = Vec::new();
    for (i, layouts) in layouts().enumerate() {
        for (j, c) in [Elem::Bf16, Elem::F32, Elem::F16].into_iter().enumerate() {
            let n = i * 3 + j;
            let ab = if n % 2 == 0 { Elem::Bf16 } else { Elem::F16 };
            let mut s = spec("mma_combo", [ab, ab, c], layouts, Atom::Mma { m: 16, n: 8, k: 16 });
            s.staging = stagings[n % stagings.len()];
            s.swizzle = swizzles[n % swizzles.len()];
            if n % 3 == 1 {
                // 64x24 warps: three 8-wide atoms, the last loaded by ldmatrix .x2
                // (48-element lines: 4-element copies, and padding, not xor)
                s.block = Block { m: 128, n: 48, k: Some(32), threads: 128, min_blocks: None };
                s.warp = Some(Warp { m: 64, n: 24, m_iters: 1, n_iters: 1 });
                s.staging = match s.staging {
                    Staging::Smem { buffers, .. } => Staging::Smem { vector: 4, transpose_a: false, buffers },
                    Staging::CpAsync { stages, .. } => Staging::CpAsync { stages, vector: 4, transpose_a: false, fragments: 1 },
                    other => other,
                };
                if s.swizzle == Swizzle::Xor {
                    s.swizzle = Swizzle::Pad(8);
                }
            }
            if n % 4 == 2 {
                s.raster = Raster::Grouped(3);
            } else if n % 8 == 0 {
                s.raster = Raster::Hilbert;
            }
            if layouts[2] == Layout::RowMajor && n % 2 == 1 {
                s.epilogue = Epilogue::Vector;
            }
            // C through a tile in shared memory, on each staging, C type and C
            // layout; every other one stores the tile's chunks an element at a time
            if n % 4 == 0 {
                s.epilogue = if n % 8 == 4 { Epilogue::SmemElements } else { Epilogue::Smem };
            }
            // fragments a K step ahead, over one to three K steps a tile (an odd
            // number moves the next tile's first fragments to set 0)
            if let Staging::CpAsync { fragments, .. } = &mut s.staging {
                if n % 3 != 1 {
                    *fragments = 2;
                }
            }
            if matches!(s.staging, Staging::CpAsync { fragments: 2, .. }) {
                match n % 4 {
                    0 => s.block.k = Some(16),
                    3 => {
                        s.block.k = Some(48);
                        if s.swizzle == Swizzle::Xor {
                            s.swizzle = Swizzle::Pad(8);
                        }
                    }
                    _ => {}
                }
            }
            // stream-K on every sixth cp.async pipeline, the tail split on another sixth
            if matches!(s.staging, Staging::CpAsync { .. }) && n % 3 == 2 {
                s.persistent = Some(if n % 6 == 2 { Persistent::StreamK } else { Persistent::TailSplit });
            }
            out.push(s);
        }
    }
    out
}

/// mma.sync on 8-bit floats (m16n8k32, sm_89): A row-major and B
/// column-major (K-major, as ldmatrix needs them), every pair of e4m3 and
/// e5m2, each C type and layout, through both stagings (one and two
/// synchronous buffers, 2- to 4-stage cp.async, copies of 4 to 16 bytes),
/// each swizzle, warps with an odd number of 8-wide atoms (the last loaded
/// by ldmatrix .x2), fragments a K step ahead over one to three 32-wide
/// steps a tile, C through shared memory, per-tensor and per-channel
/// scales, the fused math, guarded edges on most and stream-K on some; then
/// block scales (`mma_fp8_block_scaled`).
pub fn mma_fp8() -> Vec<KernelSpec> {
    use Elem::{F8E4M3 as E4, F8E5M2 as E5};
    let stagings = [
        Staging::CpAsync { stages: 3, vector: 16, transpose_a: false, fragments: 2 },
        Staging::Smem { vector: 16, transpose_a: false, buffers: 2 },
        Staging::CpAsync { stages: 2, vector: 8, transpose_a: false, fragments: 1 },
        Staging::Smem { vector: 4, transpose_a: false, buffers: 1 },
        Staging::CpAsync { stages: 4, vector: 4, transpose_a: false, fragments: 2 },
    ];
    let swizzles = [Swizzle::Xor, Swizzle::Pad(16), Swizzle::None];
    let pairs = [(E4, E4), (E5, E5), (E4, E5), (E5, E4)];
    let mut out = Vec::new();
    for (i, c) in [Elem::Bf16, Elem::F32, Elem::F16].into_iter().enumerate() {
        for (j, (a, b)) in pairs.into_iter().enumerate() {
            let n = i * pairs.len() + j;
            let c_layout = if n % 3 == 2 { Layout::ColMajor } else { Layout::RowMajor };
            let mut s = spec("mma_fp8_combo", [a, b, c], [Layout::RowMajor, Layout::ColMajor, c_layout], Atom::Mma { m: 16, n: 8, k: 32 });
            s.arch = Arch::Sm89;
            s.block.k = Some(64);
            s.staging = stagings[n % stagings.len()];
            s.swizzle = swizzles[n % swizzles.len()];
            if n % 4 == 1 {
                // 64x24 warps: three 8-wide atoms, the last loaded by ldmatrix .x2
                s.block = Block { m: 128, n: 48, k: Some(64), threads: 128, min_blocks: None };
                s.warp = Some(Warp { m: 64, n: 24, m_iters: 1, n_iters: 1 });
            }
            if let Staging::CpAsync { fragments: 2, .. } = s.staging {
                // one K step a tile, or three (an odd number moves the next tile's first fragments)
                s.block.k = Some([32, 64, 96][n % 3]);
                if s.block.k == Some(96) && s.swizzle == Swizzle::Xor {
                    s.swizzle = Swizzle::Pad(16);
                }
            }
            if c_layout == Layout::RowMajor && n % 2 == 1 {
                s.epilogue = Epilogue::Vector;
            }
            if n.is_multiple_of(5) {
                s.epilogue = Epilogue::Smem;
            }
            s.fused.scale = match n % 3 {
                0 => Some(Scale::Tensor),
                1 => Some(Scale::Channel),
                _ => None,
            };
            if n % 4 == 3 {
                s.fused = Fused {
                    alpha: true,
                    beta: true,
                    bias: Some(Bias { along: if n % 8 == 3 { Dim::N } else { Dim::M }, elem: Elem::Bf16 }),
                    activation: Some(Activation::GeluTanh),
                    ..s.fused
                };
            }
            s.edges = if n % 6 == 5 { Edges::Whole } else { Edges::Guarded };
            // the widest copies that split both tiles evenly (B's 48 x 64 is 1.5 rounds of 16 bytes)
            let (t, k) = (s.block.threads, s.block.k.unwrap_or(0));
            if let Staging::CpAsync { vector, .. } | Staging::Smem { vector, .. } = &mut s.staging {
                while *vector > 4 && [s.block.m, s.block.n].iter().any(|side| (side * k) % (*vector * t) != 0) {
                    *vector /= 2;
                }
            }
            if matches!(s.staging, Staging::CpAsync { .. }) && n % 4 == 2 {
                s.persistent = Some(Persistent::StreamK);
            }
            out.push(s);
        }
    }
    out.extend(mma_fp8_block_scaled());
    out
}

/// `scale = block` on mma.sync: each K tile (one K block of scales) summed
/// apart, so warp tiles of 64 accumulators; fragments one step ahead or
/// not, two and three stages, each C type, every edge guarded.
fn mma_fp8_block_scaled() -> Vec<KernelSpec> {
    use Elem::{F8E4M3 as E4, F8E5M2 as E5};
    let rows = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    let tiles = [
        // 8 warps of 32 x 64
        (E4, Elem::Bf16, Block { m: 128, n: 128, k: Some(128), threads: 256, min_blocks: None }, Warp { m: 32, n: 64, m_iters: 1, n_iters: 1 }),
        // 4 warps of 64 x 32
        (E5, Elem::F32, Block { m: 128, n: 64, k: Some(128), threads: 128, min_blocks: None }, Warp { m: 64, n: 32, m_iters: 1, n_iters: 1 }),
        // 4 warps of 16 x 128: one 16-row atom each
        (E4, Elem::F16, Block { m: 64, n: 128, k: Some(128), threads: 128, min_blocks: None }, Warp { m: 16, n: 128, m_iters: 1, n_iters: 1 }),
    ];
    let stagings = [
        Staging::CpAsync { stages: 3, vector: 16, transpose_a: false, fragments: 2 },
        Staging::CpAsync { stages: 2, vector: 8, transpose_a: false, fragments: 2 },
        // (16 x 128 warps' B fragments a step ahead spill: 72 registers of fragments beside 128 of sums)
        Staging::CpAsync { stages: 2, vector: 16, transpose_a: false, fragments: 1 },
    ];
    let epilogues = [Epilogue::Vector, Epilogue::Smem, Epilogue::Direct];
    let swizzles = [Swizzle::Xor, Swizzle::Pad(16), Swizzle::Xor];
    tiles
        .into_iter()
        .enumerate()
        .map(|(i, (ab, c, block, warp))| {
            let mut s = spec("mma_fp8_block_combo", [ab, ab, c], rows, Atom::Mma { m: 16, n: 8, k: 32 });
            (s.arch, s.block, s.warp, s.staging) = (Arch::Sm89, block, Some(warp), stagings[i]);
            (s.swizzle, s.epilogue, s.edges) = (swizzles[i], epilogues[i], Edges::Guarded);
            s.fused.scale = Some(Scale::Block);
            s
        })
        .collect()
}

/// wmma specs: each of the 8 layouts of A and B (C row- or column-major by
/// turns) straight from global memory and through both stagings, with each
/// atom shape the layouts allow, f16 and bf16 operands, stream-K on a
/// quarter of the cp.async pipelines and the tail split on another.
pub fn wmma() -> Vec<KernelSpec> {
    let mut out = Vec::new();
    for (i, layouts) in layouts().enumerate() {
        let ab = if i % 2 == 0 { Elem::F16 } else { Elem::Bf16 };
        let shape = match (layouts[0], layouts[1]) {
            (Layout::RowMajor, Layout::ColMajor) if i % 4 == 1 => Atom::Wmma { m: 32, n: 8, k: 16 },
            (Layout::RowMajor, _) if i % 4 == 0 => Atom::Wmma { m: 8, n: 32, k: 16 },
            _ => Atom::Wmma { m: 16, n: 16, k: 16 },
        };
        let base = spec("wmma_combo", [ab, ab, Elem::F32], layouts, shape);
        let mut direct = base.clone();
        direct.block.k = None;
        let mut smem = base.clone();
        smem.staging = Staging::Smem { vector: 8, transpose_a: false, buffers: 1 + (i as u32 % 2) };
        smem.swizzle = Swizzle::Pad(8);
        let mut cp = base;
        cp.staging = Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 1 };
        cp.raster = Raster::Grouped(2);
        if i % 2 == 1 {
            cp.persistent = Some(if i % 4 == 1 { Persistent::StreamK } else { Persistent::TailSplit });
        }
        out.extend([direct, smem, cp]);
    }
    out
}

/// The paths a fused epilogue and guarded edges run on: SIMT through shared
/// memory, SIMT cp.async under stream-K, mma through shared memory, mma
/// cp.async (fragments a step ahead), mma stream-K.
fn paths(layouts: [Layout; 3], c: Elem, ab: Elem) -> Vec<KernelSpec> {
    let f32_op = |l| Operand { elem: Elem::F32, layout: l };
    let simt = KernelSpec {
        a: f32_op(layouts[0]),
        b: f32_op(layouts[1]),
        c: f32_op(layouts[2]),
        block: Block { m: 64, n: 64, k: Some(16), threads: 256, min_blocks: None },
        warp: None,
        thread: Some(ThreadTile { m: 4, n: 4, lanes: Dim::N, sweep: Dim::N }),
        atom: Atom::Fma,
        staging: Staging::Smem { vector: 4, transpose_a: false, buffers: 2 },
        swizzle: Swizzle::Pad(4),
        ..spec("simt_epilogue", [Elem::F32; 3], layouts, Atom::Fma)
    };
    let simt_stream_k = KernelSpec {
        staging: Staging::CpAsync { stages: 3, vector: 4, transpose_a: true, fragments: 1 },
        persistent: Some(Persistent::StreamK),
        raster: Raster::Grouped(2),
        ..simt.clone()
    };
    let mma = spec("mma_epilogue", [ab, ab, c], layouts, Atom::Mma { m: 16, n: 8, k: 16 });
    let mma_smem = KernelSpec { staging: Staging::Smem { vector: 8, transpose_a: false, buffers: 2 }, swizzle: Swizzle::Pad(8), ..mma.clone() };
    let mma_cp = KernelSpec { staging: Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 2 }, swizzle: Swizzle::Xor, ..mma };
    let mma_stream_k = KernelSpec { persistent: Some(Persistent::StreamK), raster: Raster::Grouped(2), ..mma_cp.clone() };
    vec![simt, simt_stream_k, mma_smem, mma_cp, mma_stream_k]
}

/// wmma kernels (f32 C, wmma's only) staged straight from global memory,
/// through a cp.async pipeline, and under stream-K.
fn wmma_paths(layouts: [Layout; 3], ab: Elem) -> Vec<KernelSpec> {
    let cp = KernelSpec {
        staging: Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 1 },
        swizzle: Swizzle::Pad(8),
        ..spec("wmma_epilogue", [ab, ab, Elem::F32], layouts, Atom::Wmma { m: 16, n: 16, k: 16 })
    };
    let direct = KernelSpec { block: Block { k: None, ..cp.block }, staging: Staging::Direct, swizzle: Swizzle::None, ..cp.clone() };
    let stream_k = KernelSpec { persistent: Some(Persistent::StreamK), raster: Raster::Hilbert, ..cp.clone() };
    vec![direct, cp, stream_k]
}

/// Fused epilogues on every path, wmma's included: each activation, the
/// bias along n and along m in each type, alpha and beta, every layout, each
/// C type of mma, vector stores where C is row-major, some mma kernels
/// through a C tile in shared memory, mma kernels gated where beta is not read
/// (some of those through a C tile too).
pub fn fused() -> Vec<KernelSpec> {
    let activations = [None, Some(Activation::Relu), Some(Activation::Gelu), Some(Activation::GeluTanh), Some(Activation::Silu)];
    let mut out = Vec::new();
    for (i, layouts) in layouts().enumerate() {
        let c = [Elem::Bf16, Elem::F32, Elem::F16][i % 3];
        let ab = if i % 2 == 0 { Elem::Bf16 } else { Elem::F16 };
        for (j, mut s) in paths(layouts, c, ab).into_iter().chain(wmma_paths(layouts, ab)).enumerate() {
            let n = i * 5 + j;
            s.fused = Fused {
                alpha: n % 2 == 0,
                beta: n % 3 != 1,
                bias: (n % 4 != 3).then(|| Bias { along: if n % 2 == 0 { Dim::N } else { Dim::M }, elem: [Elem::F32, Elem::Bf16, Elem::F16][n % 3] }),
                activation: activations[n % activations.len()],
                scale: match n % 5 {
                    1 => Some(Scale::Tensor),
                    3 => Some(Scale::Channel),
                    _ => None,
                },
                // where beta is not read, mma's pairs go through the gate
                gated: n % 3 == 1 && matches!(s.atom, Atom::Mma { .. }),
            };
            if layouts[2] == Layout::RowMajor && n % 2 == 0 && !matches!(s.atom, Atom::Wmma { .. }) {
                s.epilogue = Epilogue::Vector;
            } else if n % 3 == 0 && matches!(s.atom, Atom::Mma { .. }) {
                s.epilogue = if n % 2 == 1 { Epilogue::SmemElements } else { Epilogue::Smem };
            } else if s.fused.gated && n % 2 == 1 {
                // gated pairs through a C tile of n / 2 columns
                s.epilogue = Epilogue::Smem;
            }
            out.push(s);
        }
    }
    out
}

/// Guarded edges on every path that stages its tiles (synchronously or by
/// cp.async; SIMT, mma and wmma): every layout, each C type of mma, some
/// with a fused epilogue, some mma through a C tile in shared memory.
pub fn guarded() -> Vec<KernelSpec> {
    let mut out = Vec::new();
    for (i, layouts) in layouts().enumerate() {
        let c = [Elem::F32, Elem::Bf16, Elem::F16][i % 3];
        for (j, mut s) in paths(layouts, c, Elem::Bf16).into_iter().chain(wmma_paths(layouts, Elem::F16)).enumerate() {
            match &mut s.staging {
                Staging::Direct => continue,
                // synchronous staging, one buffer on every other layout
                Staging::Smem { buffers, .. } if i % 2 == 0 => *buffers = 1,
                // SIMT stream-K with synchronous staging on every other layout
                Staging::CpAsync { vector, .. } if i % 2 == 1 && s.persistent.is_some() && s.atom == Atom::Fma => {
                    s.staging = Staging::Smem { vector: *vector, transpose_a: true, buffers: 2 };
                }
                _ => {}
            }
            s.name = "guarded".into();
            s.edges = Edges::Guarded;
            let wmma = matches!(s.atom, Atom::Wmma { .. });
            if layouts[2] == Layout::RowMajor && !wmma {
                s.epilogue = Epilogue::Vector;
            }
            // mma through a C tile in shared memory on every other path and layout
            if matches!(s.atom, Atom::Mma { .. }) && (i + j) % 2 == 1 {
                s.epilogue = Epilogue::Smem;
            }
            if (i + j) % 3 == 0 {
                let bias = Bias { along: Dim::N, elem: if wmma { Elem::F16 } else { c } };
                s.fused = Fused { alpha: true, beta: true, bias: Some(bias), activation: Some(Activation::Relu), scale: None, gated: false };
            }
            out.push(s);
        }
    }
    out
}

/// sm_90a specs (wgmma with TMA staging): each of the 8 layouts with each
/// C type (24 kernels), f16 and bf16, alternating every warpgroup alike
/// (one stage, then three, two warpgroups along m or n) and a producer with
/// one or two consumers (`setmaxnreg` on some), on a persistent grid on
/// some; C through a tile in shared memory on some, sent out by TMA stores
/// on others; wgmma n from 64 to 256, the
/// 128-, 64- and 32-byte swizzles; vector stores where C is row-major;
/// edges guarded on every other kernel, and a fused epilogue (alpha, beta,
/// a bias along either side, an activation) on every third; gated pairs on
/// some of the two-consumer ones, stored to C or through a C tile.
pub fn hopper() -> Vec<KernelSpec> {
    let activations = [Some(Activation::Relu), Some(Activation::GeluTanh), Some(Activation::Silu), Some(Activation::Gelu)];
    let mut out = Vec::new();
    for (i, layouts) in layouts().enumerate() {
        for (j, c) in [Elem::Bf16, Elem::F32, Elem::F16].into_iter().enumerate() {
            let n = i * 3 + j;
            let ab = if n % 2 == 0 { Elem::Bf16 } else { Elem::F16 };
            let mut s = spec("wgmma_combo", [ab, ab, c], layouts, Atom::Wgmma { m: 64, n: 64, k: 16, zeroed: false, promote: false });
            s.arch = Arch::Sm90a;
            s.swizzle = [Swizzle::B128, Swizzle::B64, Swizzle::B128, Swizzle::B32][n % 4];
            let k = s.swizzle.tma_bytes().unwrap() / 2;
            // (block m, n, warpgroup m, n, wgmma n, stages, specialization)
            let (bm, bn, wm, wn, an, stages, consumers) = match n % 4 {
                0 => (64, 128, 64, 128, 128, 1, None),
                1 => (128, 64, 64, 64, 64, 3, None),
                2 => (128, 128, 128, 128, 128, 4, Some(1)),
                _ => (128, 256, 64, 256, 256, 3, Some(2)),
            };
            s.block = Block { m: bm, n: bn, k: Some(k), threads: 0, min_blocks: None };
            s.warp = Some(Warp { m: wm, n: wn, m_iters: 1, n_iters: 1 });
            s.atom = Atom::Wgmma { m: 64, n: an, k: 16, zeroed: false, promote: false };
            s.staging = Staging::tma(stages);
            s.specialize = consumers.map(|c| Specialize {
                producers: 1,
                consumers: c,
                producer_regs: (c == 2).then_some(40),
                consumer_regs: (c == 2).then_some(232),
                pingpong: false,
                arrivals: Arrivals::Warpgroup,
                overlap: false,
            });
            s.block.threads = 128 * ((bm / wm) * (bn / wn) + u32::from(consumers.is_some()));
            // a persistent grid on every one-consumer kernel and every other two-consumer one
            if n % 4 == 2 || (n % 4 == 3 && i % 2 == 1) {
                s.persistent = Some(Persistent::Tiles);
            }
            if layouts[2] == Layout::RowMajor && n % 2 == 1 {
                s.epilogue = Epilogue::Vector;
            }
            // C through a tile in shared memory where it fits beside the stages
            if n % 3 == 2 && n % 4 != 3 {
                s.epilogue = if n % 4 == 0 { Epilogue::SmemElements } else { Epilogue::Smem };
            } else if (n % 3 == 1 || n % 12 == 0) && n % 4 != 3 {
                // or TMA stores of it (fused on two)
                s.epilogue = Epilogue::Tma;
            }
            // clusters on the specialized kernels, each way of sharing an operand;
            // stream-K or the hybrid on the others
            if consumers.is_some() && i % 4 != 3 {
                let (m, n, multicast) = [(2, 1, Which::B), (1, 2, Which::A), (2, 2, Which::B)][i % 4];
                s.cluster = Some(Cluster { m, n, multicast: Some(multicast), k: 1 });
                if consumers == Some(1) && i >= 4 {
                    // ping-pong in a cluster: both blocks' consumers take their turns in step
                    // (a clustered producer needs more than 24 registers: ptxas spilled them)
                    s.specialize = Some(Specialize {
                        producers: 1,
                        consumers: 2,
                        producer_regs: Some(40),
                        consumer_regs: Some(232),
                        pingpong: true,
                        arrivals: Arrivals::Warpgroup,
                        overlap: false,
                    });
                    s.block.threads = 384;
                }
            } else if consumers == Some(1) {
                // ping-pong: two consumers taking the 128x128 tiles in turn
                s.specialize = Some(Specialize {
                    producers: 1,
                    consumers: 2,
                    producer_regs: Some(24),
                    consumer_regs: Some(240),
                    pingpong: true,
                    arrivals: Arrivals::Warpgroup,
                    overlap: false,
                });
                s.block.threads = 384;
                s.staging = Staging::tma(2);
            } else if consumers.is_some() {
                // stream-K, or the hybrid: whole waves, then the tiles left shared
                s.persistent = Some(if i >= 4 { Persistent::Hybrid } else { Persistent::StreamK });
            }
            // the Hilbert raster on a clustered kernel and on some that are not
            if n % 5 == 0 {
                s.raster = Raster::Hilbert;
            }
            if n % 2 == 0 {
                s.edges = Edges::Guarded;
            }
            if n % 3 == 0 {
                let bias = Bias { along: if n % 2 == 0 { Dim::N } else { Dim::M }, elem: [Elem::F32, Elem::Bf16, Elem::F16][n % 3] };
                s.fused = Fused { alpha: true, beta: true, bias: Some(bias), activation: activations[n % 4], scale: None, gated: false };
            } else if n % 4 == 3 {
                // gated (SwiGLU, GeGLU), on clusters, stream-K and the hybrid
                let bias = (n % 8 == 7).then_some(Bias { along: Dim::N, elem: [Elem::F32, Elem::Bf16][n % 2] });
                s.fused = Fused { alpha: n % 3 == 1, bias, activation: activations[(n / 4) % 4], gated: true, ..Fused::default() };
                // on some, through a C tile of n / 2 columns
                if i % 2 == 1 {
                    s.epilogue = Epilogue::Smem;
                }
            }
            out.push(s);
        }
    }
    out
}

/// The ladder's "before" forms beyond its one layout: every consumer
/// thread's arrivals on the ring's barriers (`arrivals = thread`) and
/// accumulators zeroed before each tile, on [`hopper`]'s two-consumer
/// tilings of its first clusters (the cluster dropped: the rules keep
/// those arrivals within a block) on a persistent grid: other layouts,
/// swizzles, C types, C tiles and fused epilogues than the ladder's.
pub fn hopper_before() -> Vec<KernelSpec> {
    hopper()
        .into_iter()
        .filter(|s| s.cluster.is_some() && s.specialize.is_some_and(|sp| !sp.pingpong && sp.consumers == 2))
        .take(3)
        .map(|mut s| {
            s.name = "wgmma_before".into();
            s.cluster = None;
            s.persistent = Some(Persistent::Tiles);
            s.specialize = s.specialize.map(|sp| Specialize { arrivals: Arrivals::Thread, ..sp });
            if let Atom::Wgmma { zeroed, .. } = &mut s.atom {
                *zeroed = true;
            }
            s
        })
        .collect()
}

/// Consumers whose two wgmma atoms along n go out a half at a time, each
/// beside the other's wgmmas (`specialize(.., overlap)`), on the persistent
/// walk of 128 x 256 tiles: the linear layer's form (B N-major, bias along
/// n and gelu_tanh, four stages), `hopper_autotuned`'s (B K-major, plain),
/// an f32 C (three stages) with alpha, beta and a bias along m, and f16
/// operands with A M-major and SiLU.
pub fn hopper_overlap() -> Vec<KernelSpec> {
    use Layout::{ColMajor as C, RowMajor as R};
    let cases = [
        (
            [Elem::Bf16, Elem::Bf16, Elem::Bf16],
            [R, R, R],
            4,
            Fused { bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }), activation: Some(Activation::GeluTanh), ..Fused::default() },
        ),
        ([Elem::Bf16, Elem::Bf16, Elem::Bf16], [R, C, R], 4, Fused::default()),
        (
            [Elem::Bf16, Elem::Bf16, Elem::F32],
            [R, C, R],
            3,
            Fused {
                alpha: true,
                beta: true,
                bias: Some(Bias { along: Dim::M, elem: Elem::F32 }),
                activation: Some(Activation::Relu),
                scale: None,
                gated: false,
            },
        ),
        (
            [Elem::F16, Elem::F16, Elem::F16],
            [C, R, R],
            4,
            Fused { bias: Some(Bias { along: Dim::N, elem: Elem::F16 }), activation: Some(Activation::Silu), ..Fused::default() },
        ),
    ];
    cases
        .into_iter()
        .map(|(elems, layouts, stages, fused)| {
            let mut s = spec("wgmma_overlap", elems, layouts, Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false });
            s.arch = Arch::Sm90a;
            s.block = Block { m: 128, n: 256, k: Some(64), threads: 384, min_blocks: None };
            s.warp = Some(Warp { m: 64, n: 256, m_iters: 1, n_iters: 1 });
            s.staging = Staging::tma(stages);
            s.specialize = Some(Specialize {
                producers: 1,
                consumers: 2,
                producer_regs: Some(24),
                consumer_regs: Some(240),
                pingpong: false,
                arrivals: Arrivals::Warpgroup,
                overlap: true,
            });
            s.swizzle = Swizzle::B128;
            s.raster = Raster::Grouped(8);
            s.persistent = Some(Persistent::Tiles);
            s.epilogue = Epilogue::Tma;
            s.fused = fused;
            s.edges = Edges::Guarded;
            s
        })
        .collect()
}

/// The persistent walks of whole tiles on a queue (`persistent = queue`):
/// [`hopper_overlap`]'s consumers (their halves beside each other's
/// wgmmas, the next tile read from the queue early) and
/// [`hopper_before`]'s (every thread's arrivals, one tile at a time) but
/// the gated one (its C holds n / 2 columns: other sizes), edges guarded.
pub fn hopper_queue() -> Vec<KernelSpec> {
    hopper_overlap()
        .into_iter()
        .chain(hopper_before().into_iter().filter(|s| !s.fused.gated))
        .map(|mut s| {
            s.name = "wgmma_queue".into();
            s.persistent = Some(Persistent::Queue);
            s.edges = Edges::Guarded;
            s
        })
        .collect()
}

/// [`hopper`]'s kernels with a K tile two swizzle rows deep, where it fits
/// in shared memory (and no cluster shares an operand): a K-major tile
/// loads as two runs of boxes side by side along K, an M/N-major one as
/// boxes twice as deep.
pub fn hopper_deep_k() -> Vec<KernelSpec> {
    hopper()
        .into_iter()
        .filter(|s| s.cluster.is_none_or(|c| c.multicast.is_none()))
        .filter_map(|mut s| {
            s.name = "wgmma_deep_k".into();
            s.block.k = s.block.k.map(|k| 2 * k);
            gemm_runtime::gemm_core::check(&s).is_empty().then_some(s)
        })
        .collect()
}

/// C tiles narrower than a 128-byte line stored by TMA (boxes of their own
/// width, in its swizzle), from `tma_store`'s spec: bf16 tiles of 32, 16
/// and 8 columns and an f32 one of 8, a gated tile of 32 (C lines of 16),
/// and 64 columns under `overlap` (each half of 32 its own store).
/// (`hopper_fp8` has e4m3 tiles of 32 columns.)
pub fn hopper_narrow_tma_store() -> Vec<KernelSpec> {
    let narrow = |n: u32, elem: Elem, fused: Fused, overlap: bool| {
        let mut s = crate::steps::tma_store::SPEC.clone();
        s.name = "wgmma_narrow_tma_store".into();
        (s.c.elem, s.block.n, s.fused) = (elem, n, fused);
        s.warp = Some(Warp { m: 64, n, m_iters: 1, n_iters: 1 });
        s.atom = Atom::Wgmma { m: 64, n: if overlap { n / 2 } else { n }, k: 16, zeroed: false, promote: false };
        s.specialize = s.specialize.map(|sp| Specialize { overlap, ..sp });
        s
    };
    let gated = Fused { activation: Some(Activation::Silu), gated: true, ..Fused::default() };
    vec![
        narrow(32, Elem::Bf16, Fused::default(), false),
        narrow(16, Elem::Bf16, Fused::default(), false),
        narrow(8, Elem::Bf16, Fused::default(), false),
        narrow(8, Elem::F32, Fused::default(), false),
        narrow(32, Elem::Bf16, gated, false),
        narrow(64, Elem::Bf16, Fused::default(), true),
    ]
}

/// 8-bit operands on the Hopper path (wgmma m64nNk32, A row-major, B
/// column-major): every C type, e4m3, e5m2 and the two mixed, tiles of one
/// and two consumers and none, each epilogue store, the fused math, both
/// edge modes, scales per tensor, per channel and by block, sums promoted
/// (some with the next tile's first stage beside the epilogue, `overlap`),
/// block scales on tiles split along K over a cluster (one of them 64 x
/// 32, its C out by TMA in 64-byte lines).
/// From `fp8_tma_store`'s spec, a setting or two changed each.
pub fn hopper_fp8() -> Vec<KernelSpec> {
    use gemm_runtime::spec::Fused;
    let base = crate::fp8::fp8_tma_store::SPEC;
    let pairs = [(Elem::F8E4M3, Elem::F8E4M3), (Elem::F8E5M2, Elem::F8E5M2), (Elem::F8E4M3, Elem::F8E5M2), (Elem::F8E5M2, Elem::F8E4M3)];
    let mut out = Vec::new();
    for (i, c) in [Elem::Bf16, Elem::F32, Elem::F16].into_iter().enumerate() {
        for (j, (a, b)) in pairs.into_iter().enumerate() {
            let n = i * pairs.len() + j;
            let mut s = base.clone();
            s.name = "wgmma_fp8_combo".into();
            (s.a.elem, s.b.elem, s.c.elem) = (a, b, c);
            match n % 3 {
                // two consumers of 64 x 256, persistent (the base)
                0 => {}
                // one consumer of 128 x 128 (two atoms down M), a block a tile
                1 => {
                    s.block = Block { m: 128, n: 128, k: Some(128), threads: 256, min_blocks: None };
                    s.warp = Some(Warp { m: 128, n: 128, m_iters: 1, n_iters: 1 });
                    s.atom = Atom::Wgmma { m: 64, n: 128, k: 32, zeroed: false, promote: false };
                    s.specialize = s.specialize.map(|sp| Specialize { consumers: 1, producer_regs: None, consumer_regs: None, ..sp });
                    s.persistent = None;
                    s.staging = Staging::tma(3);
                }
                // every warpgroup alike, 64 x 128 tiles, K of 64 in the 64-byte swizzle
                _ => {
                    s.block = Block { m: 64, n: 128, k: Some(64), threads: 128, min_blocks: None };
                    s.warp = Some(Warp { m: 64, n: 128, m_iters: 1, n_iters: 1 });
                    s.atom = Atom::Wgmma { m: 64, n: 128, k: 32, zeroed: false, promote: false };
                    s.specialize = None;
                    s.persistent = None;
                    s.swizzle = Swizzle::B64;
                    s.staging = Staging::tma(2);
                }
            }
            s.epilogue = match n % 4 {
                0 if s.specialize.is_some() => Epilogue::Tma,
                1 => Epilogue::Vector,
                // (the 128 x 256 tiles' C tile past four stages outgrows shared memory)
                2 if !n.is_multiple_of(3) => Epilogue::Smem,
                _ => Epilogue::Direct,
            };
            // per-tensor scales on most, the base's, per-channel on some; the fused math on every other
            s.fused.scale = match n % 4 {
                3 => None,
                1 => Some(Scale::Channel),
                _ => Some(Scale::Tensor),
            };
            if n % 2 == 1 {
                s.fused = Fused {
                    alpha: true,
                    beta: true,
                    bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }),
                    activation: Some(Activation::GeluTanh),
                    ..s.fused
                };
            }
            s.edges = if n % 5 == 4 { Edges::Whole } else { Edges::Guarded };
            out.push(s);
        }
    }
    // sums promoted into f32 each stage: an f32 C (whose error shows the promotion), e5m2 with
    // the fused math, and a block per tile
    let promoted = crate::fp8::fp8_promoted::SPEC;
    let mut wide = promoted.clone();
    (wide.name, wide.c.elem, wide.epilogue) = ("wgmma_fp8_promoted".into(), Elem::F32, Epilogue::Vector);
    let mut fused = promoted.clone();
    (fused.name, fused.a.elem, fused.b.elem, fused.persistent) = ("wgmma_fp8_promoted".into(), Elem::F8E5M2, Elem::F8E5M2, None);
    fused.fused =
        Fused { alpha: true, beta: true, bias: Some(Bias { along: Dim::M, elem: Elem::F32 }), activation: Some(Activation::Silu), ..fused.fused };
    out.extend([wide, fused]);
    // DeepGEMM's block scales: the ladder's kernel, into an f32 C, with the fused math on e5m2
    // and no persistent walk, on every warpgroup alike (the K loop's own wait for each stage)
    let block = crate::fp8::fp8_block_scaled::SPEC;
    let mut wide = block.clone();
    (wide.name, wide.c.elem, wide.epilogue) = ("wgmma_fp8_block".into(), Elem::F32, Epilogue::Vector);
    let mut fused = block.clone();
    (fused.name, fused.a.elem, fused.b.elem, fused.persistent) = ("wgmma_fp8_block".into(), Elem::F8E5M2, Elem::F8E5M2, None);
    fused.fused =
        Fused { alpha: true, beta: true, bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }), activation: Some(Activation::Relu), ..fused.fused };
    let mut alike = block.clone();
    alike.name = "wgmma_fp8_block_alike".into();
    alike.block = Block { m: 64, n: 128, k: Some(128), threads: 128, min_blocks: None };
    (alike.specialize, alike.persistent, alike.staging, alike.epilogue) = (None, None, Staging::tma(3), Epilogue::Direct);
    // 64-column warpgroups: two to a 128-column block of B's scales
    let mut narrow = block.clone();
    narrow.name = "wgmma_fp8_block_n64".into();
    narrow.warp = Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 });
    narrow.block = Block { m: 64, n: 128, k: Some(128), threads: 384, min_blocks: None };
    narrow.atom = Atom::Wgmma { m: 64, n: 64, k: 32, zeroed: false, promote: false };
    (narrow.staging, narrow.epilogue) = (Staging::tma(4), Epilogue::Vector);
    // the next tile's first stage beside this tile's epilogue (`overlap`): promoted per tensor
    // into an f32 C, and block-scaled on 64-column warpgroups
    let ahead = |s: &KernelSpec, name: &'static str| {
        let mut s = s.clone();
        s.name = name.into();
        s.specialize = s.specialize.map(|sp| Specialize { overlap: true, ..sp });
        s
    };
    // each tile's K split over a cluster: two blocks of a lone consumer's 64 x 64 (B's scales read by
    // the consumer), four of them (ranks with no K step at small K), and two blocks of two consumers
    // of 64 x 64 into an f32 C (B's scales copied by the producer)
    let split = |s: &KernelSpec, name: &'static str, k: u32| {
        let mut s = s.clone();
        s.name = name.into();
        s.persistent = None;
        s.cluster = Some(Cluster { m: 1, n: 1, k, multicast: None });
        s.specialize = s.specialize.map(|sp| Specialize { producer_regs: Some(gemm_runtime::gemm_core::tune::SPLIT_PRODUCER_REGS), ..sp });
        s
    };
    let mut lone = block.clone();
    lone.block = Block { m: 64, n: 64, k: Some(128), threads: 256, min_blocks: None };
    lone.warp = Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 });
    lone.atom = Atom::Wgmma { m: 64, n: 64, k: 32, zeroed: false, promote: false };
    lone.specialize = lone.specialize.map(|sp| Specialize { consumers: 1, ..sp });
    lone.staging = Staging::tma(8);
    let mut pair = block.clone();
    pair.block = Block { m: 128, n: 64, k: Some(128), threads: 384, min_blocks: None };
    pair.warp = Some(Warp { m: 64, n: 64, m_iters: 1, n_iters: 1 });
    pair.atom = Atom::Wgmma { m: 64, n: 64, k: 32, zeroed: false, promote: false };
    pair.specialize = pair.specialize.map(|sp| Specialize { consumer_regs: Some(224), ..sp });
    (pair.staging, pair.c.elem, pair.epilogue) = (Staging::tma(4), Elem::F32, Epilogue::Vector);
    // (and 64 x 32, whose C tile goes out by TMA in boxes of 64-byte lines)
    let mut thin = lone.clone();
    thin.block.n = 32;
    thin.warp = Some(Warp { m: 64, n: 32, m_iters: 1, n_iters: 1 });
    thin.atom = Atom::Wgmma { m: 64, n: 32, k: 32, zeroed: false, promote: false };
    let splits = [
        split(&lone, "wgmma_fp8_block_k2", 2),
        split(&lone, "wgmma_fp8_block_k4", 4),
        split(&pair, "wgmma_fp8_block_pair_k2", 2),
        split(&thin, "wgmma_fp8_block_n32_k2", 2),
    ];
    let mut promoted_wide = promoted.clone();
    (promoted_wide.c.elem, promoted_wide.epilogue) = (Elem::F32, Epilogue::Vector);
    let overlapped = [ahead(&promoted_wide, "wgmma_fp8_promoted_ov"), ahead(&narrow, "wgmma_fp8_block_n64_ov")];
    out.extend([block, wide, fused, alike, narrow, crate::fp8::fp8_channel::SPEC]);
    out.extend(overlapped);
    out.extend(splits);
    out
}
