//! The layers' GEMMs: bf16, each weight stored as `torch.nn.Linear` keeps
//! it (`[out, in]`: B column-major, `y = x W^T`), on `linear_overlap`'s
//! Hopper tiling (examples/linear.rs), any size; for each combination of
//! bias and GELU a layer takes, two grids ([`Grid`]).

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use gemm_runtime::{bf16, gemm_kernel, Bias, ColMajor, Dims, EpilogueArgs, GemmError, Mat, MatMut, RowMajor};

/// For one epilogue, its persistent kernel (one block an SM, each walking
/// its tiles; the next tile's first K steps beside this one's epilogue)
/// and its kernel of a block a tile (the 4-stage ring and a C tile do not
/// both fit without the persistent overlap: 3 stages).
macro_rules! linear_kernels {
    ($(#[doc = $doc:literal])* $persistent:ident, $per_tile:ident, epilogue = [$($ep:tt)+] $(, $arg:ident: $ty:ty)?) => {
        $(#[doc = $doc])*
        #[gemm_kernel(
            block(m = 128, n = 256, k = 64, threads = 384),
            warp(m = 64, n = 256),
            atom = wgmma(m64n128k16),
            staging = tma(stages = 4),
            specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
            swizzle = b128,
            raster = grouped(8),
            persistent = tiles,
            epilogue = $($ep)+,
            edges = guarded,
        )]
        pub fn $persistent(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor> $(, $arg: $ty)?);

        $(#[doc = $doc])*
        ///
        /// A block a tile: beside a collective, whose CTAs take SMs as blocks end.
        #[gemm_kernel(
            block(m = 128, n = 256, k = 64, threads = 384),
            warp(m = 64, n = 256),
            atom = wgmma(m64n128k16),
            staging = tma(stages = 3),
            specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
            swizzle = b128,
            raster = grouped(8),
            epilogue = $($ep)+,
            edges = guarded,
        )]
        pub fn $per_tile(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor> $(, $arg: $ty)?);
    };
}

linear_kernels!(
    /// `x W^T`: a row-parallel layer's partial sum on every rank but the first.
    linear, linear_per_tile, epilogue = [tma]
);
linear_kernels!(
    /// `x W^T + b`: a column-parallel layer with a bias, and the first rank's
    /// partial sum of a row-parallel one (the bias the sum takes once).
    linear_bias, linear_bias_per_tile, epilogue = [tma(bias = n)], bias: Bias<bf16>
);
linear_kernels!(
    /// `gelu(x W^T)`, the exact GELU as PyTorch's `GELU()`.
    linear_gelu, linear_gelu_per_tile, epilogue = [tma(activation = gelu)]
);
linear_kernels!(
    /// `gelu(x W^T + b)`: the MLP's column-parallel layer.
    linear_bias_gelu, linear_bias_gelu_per_tile, epilogue = [tma(bias = n, activation = gelu)], bias: Bias<bf16>
);

/// The tile height of the kernels above: chunks of tokens are cut at
/// multiples of it.
pub const TILE_M: usize = 128;

/// How a GEMM's blocks take its C tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Grid {
    /// One block an SM, each walking a fixed share of the tiles: the
    /// fastest where the GEMM has the GPU to itself.
    Persistent,
    /// A block a tile: where a collective runs beside the GEMM. A
    /// persistent grid holds every SM until its end, so the collective's
    /// CTAs (which spin until their peers on the other GPUs run) wait for
    /// it on one GPU while they hold SMs on another; blocks of a tile end
    /// every few microseconds and let the collective in
    /// (docs/src/tensor-parallel.md).
    PerTile,
}

/// One rank's GEMM: `y = act(x W^T + b)` for `dims` (W `[n, k]`), on the
/// kernel for the bias, activation and grid given.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rank_linear(
    s: &CudaStream,
    x: &impl DevicePtr<bf16>,
    w: &CudaSlice<bf16>,
    y: &mut impl DevicePtrMut<bf16>,
    bias: Option<&CudaSlice<bf16>>,
    gelu: bool,
    dims: Dims,
    grid: Grid,
) -> Result<(), GemmError> {
    let ep = EpilogueArgs::new();
    match (grid, bias, gelu) {
        (Grid::Persistent, Some(b), true) => linear_bias_gelu::KERNEL.launch_with(s, x, w, y, dims, ep.bias(b)),
        (Grid::Persistent, Some(b), false) => linear_bias::KERNEL.launch_with(s, x, w, y, dims, ep.bias(b)),
        (Grid::Persistent, None, true) => linear_gelu::KERNEL.launch_with(s, x, w, y, dims, ep),
        (Grid::Persistent, None, false) => linear::KERNEL.launch_with(s, x, w, y, dims, ep),
        (Grid::PerTile, Some(b), true) => linear_bias_gelu_per_tile::KERNEL.launch_with(s, x, w, y, dims, ep.bias(b)),
        (Grid::PerTile, Some(b), false) => linear_bias_per_tile::KERNEL.launch_with(s, x, w, y, dims, ep.bias(b)),
        (Grid::PerTile, None, true) => linear_gelu_per_tile::KERNEL.launch_with(s, x, w, y, dims, ep),
        (Grid::PerTile, None, false) => linear_per_tile::KERNEL.launch_with(s, x, w, y, dims, ep),
    }
}
