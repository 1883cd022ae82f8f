//! Legal specs the runtime's unit tests start from (each varies what it
//! tests with struct update syntax).

use gemm_core::spec::*;

/// An sm_80 mma kernel: bf16 row-major operands, 128x128x32 blocks of 8
/// warps of 64x32, a 3-stage cp.async pipeline, C through a C tile,
/// guarded edges.
pub fn mma() -> KernelSpec {
    let bf16 = Operand { elem: Elem::Bf16, layout: Layout::RowMajor };
    KernelSpec {
        name: "t".into(),
        a: bf16,
        b: bf16,
        c: bf16,
        block: Block { m: 128, n: 128, k: Some(32), threads: 256, min_blocks: None },
        warp: Some(Warp { m: 64, n: 32, m_iters: 1, n_iters: 1 }),
        thread: None,
        atom: Atom::Mma { m: 16, n: 8, k: 16 },
        staging: Staging::CpAsync { stages: 3, vector: 8, transpose_a: false, fragments: 1 },
        specialize: None,
        swizzle: Swizzle::Xor,
        raster: Raster::Row,
        persistent: None,
        cluster: None,
        epilogue: Epilogue::Smem,
        fused: Fused::default(),
        edges: Edges::Guarded,
        groups: None,
        arch: Arch::Sm80,
    }
}

/// [`mma`] on 64x64 blocks of 4 warps of 32x32.
pub fn mma_64() -> KernelSpec {
    KernelSpec {
        block: Block { m: 64, n: 64, k: Some(32), threads: 128, min_blocks: None },
        warp: Some(Warp { m: 32, n: 32, m_iters: 1, n_iters: 1 }),
        ..mma()
    }
}

/// The Hopper ladder's `tma_store` tiling: B column-major, 128x256 tiles,
/// TMA staging, a producer and two consumer warpgroups, a persistent grid,
/// C out by TMA stores.
pub fn tma_store() -> KernelSpec {
    KernelSpec {
        b: Operand { elem: Elem::Bf16, layout: Layout::ColMajor },
        block: Block { m: 128, n: 256, k: Some(64), threads: 384, min_blocks: None },
        warp: Some(Warp { m: 64, n: 256, m_iters: 1, n_iters: 1 }),
        atom: Atom::Wgmma { m: 64, n: 256, k: 16, zeroed: false, promote: false },
        staging: Staging::tma(3),
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
        raster: Raster::Grouped(8),
        persistent: Some(Persistent::Tiles),
        epilogue: Epilogue::Tma,
        groups: None,
        arch: Arch::Sm90a,
        ..mma()
    }
}

#[test]
fn the_test_specs_are_legal() {
    for spec in [mma(), mma_64(), tma_store()] {
        assert!(gemm_core::check(&spec).is_empty(), "{:?}", gemm_core::check(&spec));
    }
}
