//! CUDA C++ generation: header-free, deterministic source for one kernel spec.
//!
//! Every kernel has one skeleton (the raster picks a C tile, staging fills
//! shared memory, the K loop loads the atom's fragments and does its math,
//! the epilogue stores C); `simt` emits it for atom = fma, `tensor` for the
//! tensor-core atoms. They share the raster (`schedule`), the stream-K
//! schedule (`stream_k`), the copy plans (`copy`), the PTX helpers (`ptx`), the shared layouts (`swizzle`) and the
//! header (`header`).

mod copy;
mod epilogue;
mod header;
#[cfg(test)]
mod host;
mod layout;
mod params;
mod ptx;
mod schedule;
mod simt;
mod stream_k;
mod swizzle;
mod tensor;
mod writer;

use crate::spec::{Atom, KernelSpec};

pub use copy::cp_async_rounds_regular;
pub use ptx::storage_type;

/// The CUDA source of `spec`, which must have passed [`crate::diagnose`]
/// (the generator assumes every rule holds).
pub fn emit(spec: &KernelSpec) -> String {
    match spec.atom {
        Atom::Fma => simt::emit(spec),
        _ => tensor::emit(spec),
    }
}

/// The launch grid for an `m x n` C: one block per C tile, x along N and y
/// along M (every raster generated today maps the block index itself). A
/// clustered kernel's grid is one row of clusters, one per cluster tile
/// (`cluster.m x cluster.n` C tiles), which the kernel's raster places.
pub fn grid(spec: &KernelSpec, m: u32, n: u32) -> (u32, u32, u32) {
    if let Some(c) = spec.cluster {
        let tiles = n.div_ceil(spec.block.n * c.n) as u64 * m.div_ceil(spec.block.m * c.m) as u64;
        return ((tiles * u64::from(spec.cluster_size())).min(u32::MAX.into()) as u32, 1, 1);
    }
    (n.div_ceil(spec.block.n), m.div_ceil(spec.block.m), 1)
}

/// The grid of a block per C tile for a batch of `batches` problems of
/// `m x n`: [`grid`]'s, the batch along z; but grouped problems whose
/// tiles place themselves in one A and C (`groups = indexed | contiguous`)
/// take a grid one deep, and contiguous groups a row of tiles more a group
/// (each group's last tile may be partial).
pub fn block_grid(spec: &KernelSpec, m: usize, n: usize, batches: usize) -> (u32, u32, usize) {
    let clamp = |v: usize| v.min(u32::MAX as usize) as u32;
    let rows = match spec.groups {
        Some(crate::spec::Groups::Contiguous) => m.saturating_add(batches.saturating_mul(spec.block.m as usize)),
        _ => m,
    };
    let (x, y, _) = grid(spec, clamp(rows), clamp(n));
    let z = if spec.groups.is_some_and(crate::spec::Groups::one_a_and_c) { 1 } else { batches };
    (x, y, z)
}
