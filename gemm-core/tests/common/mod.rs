use gemm_core::spec::*;

/// The smem-tiling step's spec: a legal, generated baseline to vary.
pub fn smem_spec() -> KernelSpec {
    let op = Operand { elem: Elem::F32, layout: Layout::RowMajor };
    KernelSpec {
        name: "k".into(),
        a: op,
        b: op,
        c: op,
        block: Block { m: 64, n: 64, k: Some(16), threads: 256, min_blocks: None },
        warp: None,
        thread: Some(ThreadTile { m: 4, n: 4, lanes: Dim::N, sweep: Dim::N }),
        atom: Atom::Fma,
        staging: Staging::Smem { vector: 4, transpose_a: false, buffers: 1 },
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
