//! The layers' GEMMs: bf16, each weight stored as `torch.nn.Linear` keeps
//! it (`[out, in]`: B column-major, `y = x W^T`), on `linear_overlap`'s
//! Hopper tiling (examples/linear.rs), any size; one kernel for each
//! combination of bias and GELU a layer takes.

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use gemm_runtime::{bf16, gemm_kernel, Bias, ColMajor, Dims, EpilogueArgs, GemmError, Mat, MatMut, RowMajor};

/// `x W^T`: a row-parallel layer's partial sum on every rank but the first.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma,
    edges = guarded,
)]
pub fn linear(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor>);

/// `x W^T + b`: a column-parallel layer with a bias, and the first rank's
/// partial sum of a row-parallel one (the bias the sum takes once).
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma(bias = n),
    edges = guarded,
)]
pub fn linear_bias(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

/// `gelu(x W^T)`, the exact GELU as PyTorch's `GELU()`.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma(activation = gelu),
    edges = guarded,
)]
pub fn linear_gelu(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor>);

/// `gelu(x W^T + b)`: the MLP's column-parallel layer.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n128k16),
    staging = tma(stages = 4),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240, overlap),
    swizzle = b128,
    raster = grouped(8),
    persistent = tiles,
    epilogue = tma(bias = n, activation = gelu),
    edges = guarded,
)]
pub fn linear_bias_gelu(x: Mat<bf16, RowMajor>, w: Mat<bf16, ColMajor>, y: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

/// The tile height of the kernels above: chunks of tokens are cut at
/// multiples of it.
pub const TILE_M: usize = 128;

/// One rank's GEMM: `y = act(x W^T + b)` for `dims` (W `[n, k]`), on the
/// kernel for the bias and activation given; its persistent grid at most
/// `max_blocks` blocks where given (SMs left to a collective beside it).
#[allow(clippy::too_many_arguments)]
pub(crate) fn rank_linear(
    s: &CudaStream,
    x: &impl DevicePtr<bf16>,
    w: &CudaSlice<bf16>,
    y: &mut impl DevicePtrMut<bf16>,
    bias: Option<&CudaSlice<bf16>>,
    gelu: bool,
    dims: Dims,
    max_blocks: Option<u32>,
) -> Result<(), GemmError> {
    let ep = EpilogueArgs::new();
    let ep = match max_blocks {
        Some(b) => ep.max_blocks(b),
        None => ep,
    };
    match (bias, gelu) {
        (Some(b), true) => linear_bias_gelu::KERNEL.launch_with(s, x, w, y, dims, ep.bias(b)),
        (Some(b), false) => linear_bias::KERNEL.launch_with(s, x, w, y, dims, ep.bias(b)),
        (None, true) => linear_gelu::KERNEL.launch_with(s, x, w, y, dims, ep),
        (None, false) => linear::KERNEL.launch_with(s, x, w, y, dims, ep),
    }
}
