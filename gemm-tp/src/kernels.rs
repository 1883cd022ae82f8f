//! The layers' GEMMs: bf16, each weight stored as `torch.nn.Linear` keeps
//! it (`[out, in]`: B column-major, `y = x W^T`), on `linear_overlap`'s
//! Hopper tiling (examples/linear.rs), any size; for each combination of
//! bias and GELU a layer takes, three walks of its tiles: fixed shares,
//! fixed shares with the last wave split along K (where that wave is at
//! most half full), and a queue (for GEMMs beside a collective).

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use gemm_runtime::{bf16, gemm_kernel, Bias, ColMajor, Dims, EpilogueArgs, GemmError, Kernel, Mat, MatMut, RowMajor};

/// For one epilogue, its three persistent kernels (one block an SM, each
/// walking tiles): each block a fixed share of the tiles (`persistent =
/// tiles`), the same with the last wave's tiles split along K
/// (`persistent = tail_split`), or each block taking its tiles from a
/// queue (`persistent = queue`). The whole-tile walks issue the next
/// tile's first K steps beside this one's epilogue (`overlap`, each
/// consumer's columns in two atoms); the tail split, which cannot, takes
/// its columns in one.
macro_rules! linear_kernels {
    ($(#[doc = $doc:literal])* $persistent:ident, $tail:ident, $queued:ident, epilogue = [$($ep:tt)+] $(, $arg:ident: $ty:ty)?) => {
        linear_kernel!($(#[doc = $doc])* $persistent, tiles, m64n128k16, [, overlap], [$($ep)+] $(, $arg: $ty)?);
        linear_kernel!(
            $(#[doc = $doc])*
            ///
            /// Its last wave split along K: where that wave is at most half full ([`tail_split_pays`]).
            $tail, tail_split, m64n256k16, [], [$($ep)+] $(, $arg: $ty)?
        );
        linear_kernel!(
            $(#[doc = $doc])*
            ///
            /// Its tiles from a queue: beside a collective, whose CTAs hold SMs for a while.
            $queued, queue, m64n128k16, [, overlap], [$($ep)+] $(, $arg: $ty)?
        );
    };
}

/// One kernel of [`linear_kernels`]: `linear_overlap`'s tiling on the walk
/// `$walk`, its wgmma atom `$atom`, with `overlap` or without.
macro_rules! linear_kernel {
    ($(#[doc = $doc:literal])* $name:ident, $walk:ident, $atom:ident, [$($overlap:tt)*], [$($ep:tt)+] $(, $arg:ident: $ty:ty)?) => {
        $(#[doc = $doc])*
        #[gemm_kernel(
            block(m = 128, n = 256, k = 64, threads = 384),
            warp(m = 64, n = 256),
            atom = wgmma($atom),
            staging = tma(stages = 4),
            specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240 $($overlap)*),
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
    linear, linear_tail_split, linear_queued, epilogue = [tma]
);
linear_kernels!(
    /// `x W^T + b`: a column-parallel layer with a bias, and the first rank's
    /// partial sum of a row-parallel one (the bias the sum takes once).
    linear_bias, linear_bias_tail_split, linear_bias_queued, epilogue = [tma(bias = n)], bias: Bias<bf16>
);
linear_kernels!(
    /// `gelu(x W^T)`, the exact GELU as PyTorch's `GELU()`.
    linear_gelu, linear_gelu_tail_split, linear_gelu_queued, epilogue = [tma(activation = gelu)]
);
linear_kernels!(
    /// `gelu(x W^T + b)`: the MLP's column-parallel layer.
    linear_bias_gelu, linear_bias_gelu_tail_split, linear_bias_gelu_queued, epilogue = [tma(bias = n, activation = gelu)], bias: Bias<bf16>
);

/// Whether a GEMM of `tiles` C tiles, on fixed shares over `sms` SMs, runs
/// faster with its last wave's tiles split along K: where it has a whole
/// wave before it and that wave is at most half full. On an H200, over 28
/// GEMMs of the tensor-parallel MLP's ranks (512 to 3072 tokens, two and
/// four ranks), the split ran faster in all 12 such GEMMs (by 4-19%) and
/// slower in all 16 others (by up to 10%; docs/src/performance/tensor-parallel.md).
pub fn tail_split_pays(tiles: usize, sms: usize) -> bool {
    let last = tiles % sms.max(1);
    tiles > sms && last > 0 && 2 * last <= sms
}

/// The tile height of the kernels above: chunks of tokens are cut at
/// multiples of it.
pub const TILE_M: usize = 128;

/// The tile width of the kernels above: how many tiles a chunk's row of
/// tiles holds, which its waves follow.
pub const TILE_N: usize = 256;

/// How a GEMM's blocks take its C tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// One block an SM, each walking a fixed share of the tiles (the last
    /// wave split along K where that pays): where the GEMM has the GPU to
    /// itself.
    Persistent,
    /// One block an SM, each taking its next tile from a queue: where a
    /// collective runs beside the GEMM. The collective's CTAs (the comm
    /// stream's priority places them first) hold SMs while they run; the
    /// GEMM's blocks that wait for those SMs start late and take fewer
    /// tiles, where a fixed share would hold the GEMM's end back
    /// (docs/src/tensor-parallel.md).
    Queue,
}

impl Grid {
    /// The grid of chunk `c`'s GEMMs in a chunked block: the first chunk's
    /// run with nothing beside them, every later one's beside the chunk
    /// before's collective.
    pub fn of_chunk(c: usize) -> Grid {
        if c > 0 {
            Grid::Queue
        } else {
            Grid::Persistent
        }
    }
}

/// One rank's GEMM: `y = act(x W^T + b)` for `dims` (W `[n, k]`, one
/// problem), on the kernel for the bias, activation and grid given; on
/// fixed shares, the tail-split walk where [`tail_split_pays`] on this
/// GPU's SMs. The kernel the layers launch for a rank: the lab's tools time
/// it through this.
#[allow(clippy::too_many_arguments)]
pub fn rank_linear(
    s: &CudaStream,
    x: &impl DevicePtr<bf16>,
    w: &CudaSlice<bf16>,
    y: &mut impl DevicePtrMut<bf16>,
    bias: Option<&CudaSlice<bf16>>,
    gelu: bool,
    dims: Dims,
    grid: Grid,
) -> Result<(), GemmError> {
    // (fixed shares, their tail split, the queue)
    let [fixed, tail, queued]: [&Kernel; 3] = match (bias.is_some(), gelu) {
        (true, true) => [&linear_bias_gelu::KERNEL, &linear_bias_gelu_tail_split::KERNEL, &linear_bias_gelu_queued::KERNEL],
        (true, false) => [&linear_bias::KERNEL, &linear_bias_tail_split::KERNEL, &linear_bias_queued::KERNEL],
        (false, true) => [&linear_gelu::KERNEL, &linear_gelu_tail_split::KERNEL, &linear_gelu_queued::KERNEL],
        (false, false) => [&linear::KERNEL, &linear_tail_split::KERNEL, &linear_queued::KERNEL],
    };
    let kernel = match grid {
        Grid::Queue => queued,
        Grid::Persistent => {
            let sms = s.context().attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize;
            if tail_split_pays(dims.m.div_ceil(TILE_M) * dims.n.div_ceil(TILE_N), sms) {
                tail
            } else {
                fixed
            }
        }
    };
    let ep = EpilogueArgs::new();
    match bias {
        Some(b) => kernel.launch_with(s, x, w, y, dims, ep.bias(b)),
        None => kernel.launch_with(s, x, w, y, dims, ep),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_runtime::spec::Persistent;

    /// The measured cases on 132 SMs: a last wave of 0.45, 0.39, 0.27 and
    /// 0.15 of the SMs split; of 0.52, 0.55, 0.70 and 0.88 not, nor a GEMM of
    /// less than a wave or of whole waves.
    #[test]
    fn the_last_wave_is_split_where_it_is_at_most_half_full() {
        for tiles in [192, 448, 168, 3584] {
            assert!(tail_split_pays(tiles, 132), "{tiles} tiles");
        }
        for tiles in [336, 224, 512, 112, 64, 132, 396, 2048] {
            assert!(!tail_split_pays(tiles, 132), "{tiles} tiles");
        }
    }

    /// Each epilogue's three kernels differ in their walk alone (and the
    /// tail split in taking its columns in one atom, without overlap).
    #[test]
    fn each_epilogue_has_a_kernel_for_each_walk() {
        let triples: [[&Kernel; 3]; 4] = [
            [&linear::KERNEL, &linear_tail_split::KERNEL, &linear_queued::KERNEL],
            [&linear_bias::KERNEL, &linear_bias_tail_split::KERNEL, &linear_bias_queued::KERNEL],
            [&linear_gelu::KERNEL, &linear_gelu_tail_split::KERNEL, &linear_gelu_queued::KERNEL],
            [&linear_bias_gelu::KERNEL, &linear_bias_gelu_tail_split::KERNEL, &linear_bias_gelu_queued::KERNEL],
        ];
        for [fixed, tail, queued] in triples {
            assert_eq!(fixed.spec.persistent, Some(Persistent::Tiles));
            assert_eq!(tail.spec.persistent, Some(Persistent::TailSplit));
            assert_eq!(queued.spec.persistent, Some(Persistent::Queue));
            assert!(fixed.spec.specialize.unwrap().overlap && queued.spec.specialize.unwrap().overlap);
            assert!(!tail.spec.specialize.unwrap().overlap);
            for k in [tail, queued] {
                assert_eq!(k.spec.fused, fixed.spec.fused);
                assert_eq!((k.spec.block, k.spec.staging, k.spec.raster), (fixed.spec.block, fixed.spec.staging, fixed.spec.raster));
            }
        }
    }
}
