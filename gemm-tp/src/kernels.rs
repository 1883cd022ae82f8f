//! The layers' GEMMs: bf16, each weight stored as `torch.nn.Linear` keeps
//! it (`[out, in]`: B column-major, `y = x W^T`), on `linear_overlap`'s
//! Hopper tiling (examples/linear.rs), any size; for each combination of
//! bias and GELU a layer takes, two walks of its tiles: fixed shares, and
//! a queue (for GEMMs beside a collective).

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use gemm_runtime::{bf16, gemm_kernel, Bias, ColMajor, Dims, EpilogueArgs, GemmError, Mat, MatMut, RowMajor};

/// For one epilogue, its two persistent kernels (one block an SM, each
/// walking tiles, the next tile's first K steps beside this one's
/// epilogue): each block a fixed share of the tiles (`persistent =
/// tiles`), or each taking them from a queue (`persistent = queue`).
macro_rules! linear_kernels {
    ($(#[doc = $doc:literal])* $persistent:ident, $queued:ident, epilogue = [$($ep:tt)+] $(, $arg:ident: $ty:ty)?) => {
        linear_kernel!($(#[doc = $doc])* $persistent, tiles, [$($ep)+] $(, $arg: $ty)?);
        linear_kernel!(
            $(#[doc = $doc])*
            ///
            /// Its tiles from a queue: beside a collective, whose CTAs hold SMs for a while.
            $queued, queue, [$($ep)+] $(, $arg: $ty)?
        );
    };
}

/// One kernel of [`linear_kernels`]: `linear_overlap`'s tiling on the walk `$walk`.
macro_rules! linear_kernel {
    ($(#[doc = $doc:literal])* $name:ident, $walk:ident, [$($ep:tt)+] $(, $arg:ident: $ty:ty)?) => {
        $(#[doc = $doc])*
        #[gemm_kernel(
            block(m = 128, n = 256, k = 64, threads = 384),
            warp(m = 64, n = 256),
            atom = wgmma(m64n128k16),
            staging = tma(stages = 4),
            specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
            swizzle = b128,
            raster = grouped(8),
            persistent = $walk,
            epilogue = $($ep)+,
            edges = guarded,
        )]
        pub fn $name(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor> $(, $arg: $ty)?);
    };
}

linear_kernels!(
    /// `x W^T`: a row-parallel layer's partial sum on every rank but the first.
    linear, linear_queued, epilogue = [tma]
);
linear_kernels!(
    /// `x W^T + b`: a column-parallel layer with a bias, and the first rank's
    /// partial sum of a row-parallel one (the bias the sum takes once).
    linear_bias, linear_bias_queued, epilogue = [tma(bias = n)], bias: Bias<bf16>
);
linear_kernels!(
    /// `gelu(x W^T)`, the exact GELU as PyTorch's `GELU()`.
    linear_gelu, linear_gelu_queued, epilogue = [tma(activation = gelu)]
);
linear_kernels!(
    /// `gelu(x W^T + b)`: the MLP's column-parallel layer.
    linear_bias_gelu, linear_bias_gelu_queued, epilogue = [tma(bias = n, activation = gelu)], bias: Bias<bf16>
);

/// The tile height of the kernels above: chunks of tokens are cut at
/// multiples of it.
pub const TILE_M: usize = 128;

/// The tile width of the kernels above: how many tiles a chunk's row of
/// tiles holds, which its waves follow.
pub const TILE_N: usize = 256;

/// How a GEMM's blocks take its C tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Grid {
    /// One block an SM, each walking a fixed share of the tiles: where
    /// the GEMM has the GPU to itself.
    Persistent,
    /// One block an SM, each taking its next tile from a queue: where a
    /// collective runs beside the GEMM. The collective's CTAs (the comm
    /// stream's priority places them first) hold SMs while they run; the
    /// GEMM's blocks that wait for those SMs start late and take fewer
    /// tiles, where a fixed share would hold the GEMM's end back
    /// (docs/src/tensor-parallel.md).
    Queue,
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
        (Grid::Queue, Some(b), true) => linear_bias_gelu_queued::KERNEL.launch_with(s, x, w, y, dims, ep.bias(b)),
        (Grid::Queue, Some(b), false) => linear_bias_queued::KERNEL.launch_with(s, x, w, y, dims, ep.bias(b)),
        (Grid::Queue, None, true) => linear_gelu_queued::KERNEL.launch_with(s, x, w, y, dims, ep),
        (Grid::Queue, None, false) => linear_queued::KERNEL.launch_with(s, x, w, y, dims, ep),
    }
}
