//! Quantization to 8-bit floats beside the GEMM: for each group of
//! elements, its largest magnitude (`amax`), the scale `amax / MAX` (448
//! for e4m3, 57344 for e5m2; 1 where the group is all zeros), and each
//! element divided by it and rounded to nearest with saturation
//! (`cvt.rn.satfinite`): `x ~= scale * q`. The groups are the whole tensor
//! ([`per_tensor`], for `scale = tensor`), each row ([`per_row`], for
//! `scale = channel`), or DeepGEMM's 1 x 128 groups of A and 128 x 128
//! blocks of B ([`rows_by_k_block`], [`blocks`], for `scale = block`), the
//! scales written to device buffers in the layouts those kernels read.
//! Small kernels of our own, as the alignment copies are; they need
//! compute capability 8.9 or newer (the 8-bit conversions).

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use gemm_core::spec::{block_scales_a_ld, block_scales_a_len, block_scales_b_len, Arch, Elem, SCALE_BLOCK};

use crate::compile;
use crate::placement;
use crate::{DeviceBuffer, DeviceBufferMut, Element, GemmError};

const THREADS: u32 = 256;
const MAX_BLOCKS: usize = 1024;

/// The largest finite value of an 8-bit type.
pub fn max_finite(elem: Elem) -> Option<f32> {
    match elem {
        Elem::F8E4M3 => Some(448.0),
        Elem::F8E5M2 => Some(57344.0),
        _ => None,
    }
}

/// How the kernels read an element of `elem` into f32.
fn load(elem: Elem) -> &'static str {
    match elem {
        Elem::F32 => "src[i]",
        Elem::Bf16 => "__uint_as_float((unsigned)src[i] << 16)",
        // (f16's exponent bias differs: the conversion instruction)
        _ => "f16_to_f32(src[i])",
    }
}

/// The two kernels for sources of `from` and 8-bit `to`, header-free CUDA.
pub(crate) fn source(from: Elem, to: Elem) -> String {
    let src_ty = gemm_core::cuda::storage_type(from);
    let cvt = if to == Elem::F8E4M3 { "e4m3x2" } else { "e5m2x2" };
    let max = max_finite(to).expect("an 8-bit target");
    let load = load(from);
    format!(
        r#"// Per-tensor quantization of {n} elements of {from_name} to {to_name}.
__device__ __forceinline__ float f16_to_f32(unsigned short h) {{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}}
// two floats to two 8-bit ones, rounded to nearest, saturating: `lo` in the low byte
__device__ __forceinline__ unsigned short to_fp8x2(float lo, float hi) {{
    unsigned short d;
    asm("cvt.rn.satfinite.{cvt}.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
    return d;
}}

// amax: the largest |x| over the grid, into `amax_bits` (zeroed before; as the bits of a
// non-negative float, whose order is the unsigned integers')
extern "C" __global__ void __launch_bounds__({THREADS}) gemm_tiles_amax_{tag}(
    const {src_ty}* __restrict__ src, long long len, unsigned* __restrict__ amax_bits)
{{
    float m = 0.0f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < len; i += (long long)gridDim.x * blockDim.x)
        m = fmaxf(m, fabsf({load}));
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    __shared__ float warps[{warps}];
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {{
        for (int w = 1; w < {warps}; ++w) m = fmaxf(m, warps[w]);
        atomicMax(amax_bits, __float_as_uint(m));
    }}
}}

// the scale amax / {max} (1 for a source of zeros), and each element pair divided by it
extern "C" __global__ void __launch_bounds__({THREADS}) gemm_tiles_quantize_{tag}(
    const {src_ty}* __restrict__ src, long long len, const unsigned* __restrict__ amax_bits,
    unsigned short* __restrict__ dst_pairs, unsigned char* __restrict__ dst_last, float* __restrict__ scale)
{{
    const float amax = __uint_as_float(*amax_bits);
    const float s = amax > 0.0f ? amax / {max:.1}f : 1.0f;
    if (blockIdx.x == 0 && threadIdx.x == 0) *scale = s;
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; 2 * p < len; p += (long long)gridDim.x * blockDim.x) {{
        long long i = 2 * p;
        const float x0 = {load} / s;
        if (i + 1 < len) {{
            ++i;
            dst_pairs[p] = to_fp8x2(x0, {load} / s);
        }} else {{
            *dst_last = (unsigned char)(to_fp8x2(x0, 0.0f) & 0xff);
        }}
    }}
}}

// quantization by groups: block (x, y) quantizes the group of `group_rows` x `group_cols`
// elements at row x * group_rows, column y * group_cols of the row-major [rows, cols]
// source (clipped at its edges) with a scale of its own, amax / {max}, written at
// scale[x * scale_row + y * scale_col]
extern "C" __global__ void __launch_bounds__({THREADS}) gemm_tiles_quantize_groups_{tag}(
    const {src_ty}* __restrict__ src, long long rows, long long cols, int group_rows, int group_cols,
    unsigned char* __restrict__ dst, float* __restrict__ scale, long long scale_row, long long scale_col)
{{
    const long long r0 = (long long)blockIdx.x * group_rows, c0 = (long long)blockIdx.y * group_cols;
    const long long gc = cols - c0 < group_cols ? cols - c0 : group_cols;
    const long long n = (rows - r0 < group_rows ? rows - r0 : group_rows) * gc;
    float m = 0.0f;
    for (long long e = threadIdx.x; e < n; e += blockDim.x) {{
        const long long i = (r0 + e / gc) * cols + c0 + e % gc;
        m = fmaxf(m, fabsf({load}));
    }}
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    __shared__ float warps[{warps}];
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = m;
    __syncthreads();
    for (int w = 0; w < {warps}; ++w) m = fmaxf(m, warps[w]);
    const float s = m > 0.0f ? m / {max:.1}f : 1.0f;
    if (threadIdx.x == 0) scale[blockIdx.x * scale_row + blockIdx.y * scale_col] = s;
    for (long long e = threadIdx.x; e < n; e += blockDim.x) {{
        const long long i = (r0 + e / gc) * cols + c0 + e % gc;
        dst[i] = (unsigned char)(to_fp8x2({load} / s, 0.0f) & 0xff);
    }}
}}
"#,
        n = "`len`",
        from_name = from.rust_name(),
        to_name = to.rust_name(),
        tag = tag(from, to),
        warps = THREADS / 32,
    )
}

/// The source, the 8-bit destination and the scales on `stream`'s GPU.
fn on_stream_gpu<T, Q>(
    stream: &CudaStream,
    src: &impl DeviceBuffer<T>,
    dst: &impl DeviceBufferMut<Q>,
    scales: &impl DeviceBufferMut<f32>,
) -> Result<(), GemmError> {
    placement::check(stream, "the source", src)?;
    placement::check(stream, "the destination", dst)?;
    placement::check(stream, "the scales", scales)
}

fn tag(from: Elem, to: Elem) -> String {
    format!("{}_{}", from.rust_name().to_lowercase(), to.rust_name().to_lowercase())
}

/// Quantizes `len` elements of `src` (f32, f16 or bf16) into `dst` (8-bit)
/// with one scale for the tensor, written to `scale[0]`: `src ~= scale * dst`.
/// `dst` must start 2-byte aligned (its elements are written in pairs).
pub fn per_tensor<T: Element, Q: Element>(
    stream: &Arc<CudaStream>,
    src: &impl DeviceBuffer<T>,
    len: usize,
    dst: &mut impl DeviceBufferMut<Q>,
    scale: &mut impl DeviceBufferMut<f32>,
) -> Result<(), GemmError> {
    let [amax_kernel, quantize_kernel] =
        prepare::<T, Q, 2>(stream, ["gemm_tiles_amax", "gemm_tiles_quantize"], (src.len(), len), dst.len(), (scale.len(), 1))?;
    if len == 0 {
        return Ok(());
    }
    on_stream_gpu(stream, src, dst, scale)?;
    let (s, _rs) = src.device_ptr(stream);
    let (d, _rd) = dst.device_ptr_mut(stream);
    if d % 2 != 0 {
        return Err(GemmError::Copy("quantize: the 8-bit destination must start 2-byte aligned".into()));
    }
    let (sc, _rsc) = scale.device_ptr_mut(stream);
    let amax = stream.alloc_zeros::<u32>(1)?;
    let (a, _ra) = amax.device_ptr(stream);
    let blocks = len.div_ceil(2 * THREADS as usize).clamp(1, MAX_BLOCKS) as u32;
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
    let n = len as i64;
    let last = d + (len as u64 - 1);
    // SAFETY: src holds len elements of T, dst len bytes (pairs from its 2-byte aligned start,
    // the last odd one alone), scale one f32, amax one u32, as the kernels' parameters say
    unsafe {
        stream.launch_builder(&amax_kernel).arg(&s).arg(&n).arg(&a).launch(cfg)?;
        stream.launch_builder(&quantize_kernel).arg(&s).arg(&n).arg(&a).arg(&d).arg(&last).arg(&sc).launch(cfg)?;
    }
    Ok(())
}

/// How [`by_groups`] lays out one group's scale: groups of `rows` x `cols`
/// elements, group `(x, y)`'s scale at `x * scale_row + y * scale_col`.
struct Groups {
    rows: usize,
    cols: usize,
    scale_row: usize,
    scale_col: usize,
}

/// Quantizes the row-major `[rows, cols]` matrix `src` (f32, f16 or bf16)
/// into `dst` (8-bit, the same layout) with one scale per row, in
/// `scales[0..rows]`: `src[r][c] ~= scales[r] * dst[r][c]`. What
/// `scale = channel` reads: A `[m, k]` row-major gives A's row scales, and
/// B stored `[n, k]` (column-major, `W`) B's column scales.
pub fn per_row<T: Element, Q: Element>(
    stream: &Arc<CudaStream>,
    src: &impl DeviceBuffer<T>,
    (rows, cols): (usize, usize),
    dst: &mut impl DeviceBufferMut<Q>,
    scales: &mut impl DeviceBufferMut<f32>,
) -> Result<(), GemmError> {
    by_groups(stream, src, (rows, cols), dst, scales, Groups { rows: 1, cols: cols.max(1), scale_row: 1, scale_col: 0 }, rows)
}

/// Quantizes A, row-major `[m, k]`, by DeepGEMM's 1 x 128 groups: one scale
/// per row and 128-wide K block, written where `scale = block` reads them
/// (K block after K block, rows contiguous, m rounded up to 4:
/// [`spec::block_scales_a_len`](gemm_core::spec::block_scales_a_len); the
/// padding rows' scales are left as they are).
pub fn rows_by_k_block<T: Element, Q: Element>(
    stream: &Arc<CudaStream>,
    src: &impl DeviceBuffer<T>,
    (m, k): (usize, usize),
    dst: &mut impl DeviceBufferMut<Q>,
    scales: &mut impl DeviceBufferMut<f32>,
) -> Result<(), GemmError> {
    let b = SCALE_BLOCK as usize;
    let groups = Groups { rows: 1, cols: b, scale_row: 1, scale_col: block_scales_a_ld(m) };
    by_groups(stream, src, (m, k), dst, scales, groups, block_scales_a_len(m, k))
}

/// Quantizes B stored `[n, k]` (column-major B, `W` of `C = A * W^T`) by
/// 128 x 128 blocks: one scale per block, written where `scale = block`
/// reads them (`[ceil(n / 128)][ceil(k / 128)]`,
/// [`spec::block_scales_b_len`](gemm_core::spec::block_scales_b_len)).
pub fn blocks<T: Element, Q: Element>(
    stream: &Arc<CudaStream>,
    src: &impl DeviceBuffer<T>,
    (n, k): (usize, usize),
    dst: &mut impl DeviceBufferMut<Q>,
    scales: &mut impl DeviceBufferMut<f32>,
) -> Result<(), GemmError> {
    let b = SCALE_BLOCK as usize;
    let groups = Groups { rows: b, cols: b, scale_row: k.div_ceil(b), scale_col: 1 };
    by_groups(stream, src, (n, k), dst, scales, groups, block_scales_b_len(n, k))
}

/// What every quantizer checks (the types, `len` elements in `src` and
/// `dst`, `scales_need` f32s of scales, a device with the 8-bit
/// conversions), then its kernels `names` loaded for the stream's device.
fn prepare<T: Element, Q: Element, const N: usize>(
    stream: &Arc<CudaStream>,
    names: [&str; N],
    (src_len, len): (usize, usize),
    dst_len: usize,
    (scales_len, scales_need): (usize, usize),
) -> Result<[CudaFunction; N], GemmError> {
    let (from, to) = (T::ELEM, Q::ELEM);
    if max_finite(to).is_none() || from.is_fp8() {
        return Err(GemmError::Unsupported(format!(
            "quantizes f32, f16 or bf16 into F8E4M3 or F8E5M2, not {} into {}",
            from.rust_name(),
            to.rust_name()
        )));
    }
    if src_len < len || dst_len < len || scales_len < scales_need {
        return Err(GemmError::Copy(format!(
            "quantize: {len} elements from a buffer of {src_len} into one of {dst_len}, and {scales_need} scales into a buffer of {scales_len}"
        )));
    }
    let ctx = stream.context();
    let cap = ctx.compute_capability()?;
    if cap < (8, 9) {
        return Err(GemmError::Unsupported(format!("8-bit conversions need compute capability 8.9 or newer; the device is {}.{}", cap.0, cap.1)));
    }
    let target = compile::device_target(Arch::Sm90, cap);
    let code = source(from, to);
    let mut loaded = Vec::with_capacity(N);
    for name in names {
        loaded.push(compile::load(ctx, &code, &format!("{name}_{}", tag(from, to)), target, 0)?);
    }
    Ok(loaded.try_into().unwrap_or_else(|_| unreachable!("one function a name")))
}

/// One block of the groups kernel per group of `g`, each with its scale.
fn by_groups<T: Element, Q: Element>(
    stream: &Arc<CudaStream>,
    src: &impl DeviceBuffer<T>,
    (rows, cols): (usize, usize),
    dst: &mut impl DeviceBufferMut<Q>,
    scales: &mut impl DeviceBufferMut<f32>,
    g: Groups,
    scales_len: usize,
) -> Result<(), GemmError> {
    let len = rows
        .checked_mul(cols)
        .filter(|&l| l <= i64::MAX as usize)
        .ok_or_else(|| GemmError::Copy(format!("quantize: {rows} x {cols} elements overflow")))?;
    let [function] = prepare::<T, Q, 1>(stream, ["gemm_tiles_quantize_groups"], (src.len(), len), dst.len(), (scales.len(), scales_len))?;
    if len == 0 {
        return Ok(());
    }
    let (x, y) = (rows.div_ceil(g.rows), cols.div_ceil(g.cols));
    if x > i32::MAX as usize || y > 65535 {
        return Err(GemmError::Unsupported(format!(
            "quantize: {x} x {y} groups of {} x {}: at most 2^31 - 1 down the rows and 65535 along them",
            g.rows, g.cols
        )));
    }
    on_stream_gpu(stream, src, dst, scales)?;
    let cfg = LaunchConfig { grid_dim: (x as u32, y as u32, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
    let (s, _rs) = src.device_ptr(stream);
    let (d, _rd) = dst.device_ptr_mut(stream);
    let (sc, _rsc) = scales.device_ptr_mut(stream);
    let (rows, cols) = (rows as i64, cols as i64);
    let (group_rows, group_cols) = (g.rows as i32, g.cols as i32);
    let (scale_row, scale_col) = (g.scale_row as i64, g.scale_col as i64);
    // SAFETY: src and dst hold rows x cols elements (checked), scales every group's index
    // (x - 1) * scale_row + (y - 1) * scale_col < scales_len (checked: each layout's length)
    unsafe {
        stream
            .launch_builder(&function)
            .arg(&s)
            .arg(&rows)
            .arg(&cols)
            .arg(&group_rows)
            .arg(&group_cols)
            .arg(&d)
            .arg(&sc)
            .arg(&scale_row)
            .arg(&scale_col)
            .launch(cfg)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every source type into each 8-bit type compiles with NVRTC for sm_90
    /// and uses the saturating conversion.
    #[test]
    fn the_quantize_kernels_compile_with_nvrtc() {
        for from in [Elem::F32, Elem::F16, Elem::Bf16] {
            for to in [Elem::F8E4M3, Elem::F8E5M2] {
                let code = source(from, to);
                let name = format!("gemm_tiles_quantize_{}", tag(from, to));
                let ptx = compile::compile(&code, &name, "sm_90").unwrap_or_else(|e| panic!("{from:?} -> {to:?}: {e}"));
                let text = ptx.to_src();
                assert!(
                    text.contains("cvt.rn.satfinite.") && text.contains(&format!(".entry gemm_tiles_amax_{}", tag(from, to))),
                    "{from:?} -> {to:?}"
                );
                let groups = format!("gemm_tiles_quantize_groups_{}", tag(from, to));
                assert!(compile::compile(&code, &groups, "sm_90").is_ok_and(|p| p.to_src().contains("cvt.rn.satfinite.")), "{groups}");
            }
        }
    }

    #[test]
    fn the_largest_finite_values_are_the_types_own() {
        assert_eq!(max_finite(Elem::F8E4M3), Some(448.0));
        assert_eq!(max_finite(Elem::F8E5M2), Some(57344.0));
        assert_eq!(float8::F8E4M3::from_f32(448.0).to_f32(), 448.0);
        assert_eq!(float8::F8E5M2::from_f32(57344.0).to_f32(), 57344.0);
        assert_eq!(max_finite(Elem::Bf16), None);
    }
}
