//! TMA tensor maps for kernels with `staging = tma`: one per operand, built
//! on the host for each launch (an encode is a few hundred nanoseconds of
//! host work and depends on the buffer's address, sizes and strides, so a
//! cache keyed by all of them would save little), passed to the kernel by
//! value as a `__grid_constant__` parameter.

use cudarc::driver::sys::{self, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave, CUtensorMapL2promotion, CUtensorMapSwizzle};
use cudarc::driver::DeviceRepr;
use gemm_core::spec::{Elem, KernelSpec, Layout, Which, EDGE_BOX_LINES};

use crate::args::Shape;
use crate::GemmError;

/// An encoded `CUtensorMap`: 128 opaque bytes, 64-byte aligned, as the
/// generated kernel's `TensorMap` parameter declares it.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct TensorMap(pub [u64; 16]);

// SAFETY: plain bytes, laid out as the kernel's parameter (128 bytes, 64-aligned).
unsafe impl DeviceRepr for TensorMap {}

/// The tensor map of operand `which` (shape `shape`, at device address
/// `ptr`) for `spec`'s tiles: 3-D, the contiguous dimension first, then
/// the other, then the batch (`count` problems `stride` elements apart;
/// one where the batch shares the operand, `stride = 0`). The box is one
/// swizzle row by the tile's lines (by [`EDGE_BOX_LINES`] where `edge`, for
/// the tiles that cross M's or N's edge); what lies outside the matrix
/// reads as zeros.
pub fn operand_map(
    spec: &KernelSpec,
    which: Which,
    ptr: u64,
    shape: &Shape,
    count: usize,
    stride: usize,
    edge: bool,
) -> Result<TensorMap, GemmError> {
    let op = if which == Which::A { spec.a } else { spec.b };
    let tile = spec.tma_tile(which);
    let lines = if edge { EDGE_BOX_LINES } else { tile.outer };
    encode(op.elem, ptr, shape, (count, stride), [tile.inner, lines], tile.swizzle)
}

/// The tensor map of C for `epilogue = tma`: boxes of one line of up to
/// 128 bytes by the C tile's lines, in the swizzle the kernel writes its C
/// tile in (`KernelSpec::c_tile_swizzle`); the TMA store leaves out what
/// lies past C's edges.
pub fn c_map(spec: &KernelSpec, ptr: u64, shape: &Shape, count: usize, stride: usize) -> Result<TensorMap, GemmError> {
    let lines = spec.c_tile().map_or(0, |t| t.lines);
    encode(spec.c.elem, ptr, shape, (count, stride), [spec.c_tile_box(), lines], spec.c_tile_swizzle())
}

/// The tensor map of a dense row-major matrix of `rows` x `cols` elements
/// of `elem` at `ptr` with boxes of `box_dims` (columns first) in a
/// `swizzle`-byte swizzle (0: none), for kernels written by hand beside
/// the generated ones (the read benchmarks).
pub fn matrix_map(elem: Elem, ptr: u64, (rows, cols): (usize, usize), box_dims: [u32; 2], swizzle: u32) -> Result<TensorMap, GemmError> {
    strided_map(elem, ptr, (rows, cols), cols, box_dims, swizzle)
}

/// [`matrix_map`] of a row-major matrix whose rows lie `ld` elements apart
/// (`ld * elem` bytes a multiple of 16, as TMA asks).
pub fn strided_map(elem: Elem, ptr: u64, (rows, cols): (usize, usize), ld: usize, box_dims: [u32; 2], swizzle: u32) -> Result<TensorMap, GemmError> {
    let shape = Shape { name: 'W', rows, cols, layout: Layout::RowMajor, ld };
    encode(elem, ptr, &shape, (1, 0), box_dims, swizzle)
}

/// The tensor map of A's scales under `scale = block` at `ptr`: a row of
/// `m` f32s a K block (`ceil(k / 128)` of them), rows
/// [`block_scales_a_ld`](gemm_core::spec::block_scales_a_ld)`(m)` apart, in boxes of `rows` (a block tile's);
/// `count` problems' scales one after another (1: one problem's, or a batch's shared A's).
pub fn scale_map(ptr: u64, m: usize, k: usize, rows: u32, count: usize) -> Result<TensorMap, GemmError> {
    if !ptr.is_multiple_of(16) {
        return Err(GemmError::TensorMap {
            operand: 'A',
            what: format!("A's block scales at {ptr:#x}: TMA reads them from a 16-byte aligned start"),
        });
    }
    let blocks = k.div_ceil(gemm_core::spec::SCALE_BLOCK as usize);
    let ld = gemm_core::spec::block_scales_a_ld(m);
    let shape = Shape { name: 'A', rows: blocks, cols: m, layout: Layout::RowMajor, ld };
    encode(Elem::F32, ptr, &shape, (count, blocks * ld), [rows, 1], 0)
}

/// Encodes a 3-D tensor map of `shape` (elements of `elem` at `ptr`; the
/// batch of `count` problems `stride` elements apart as the third
/// dimension) with boxes of `box_dims` (contiguous side first) in a
/// `swizzle`-byte swizzle.
fn encode(elem: Elem, ptr: u64, shape: &Shape, (count, stride): (usize, usize), box_dims: [u32; 2], swizzle: u32) -> Result<TensorMap, GemmError> {
    let bytes = elem.bytes() as u64;
    let (inner, outer) = match shape.layout {
        Layout::RowMajor => (shape.cols, shape.rows),
        Layout::ColMajor => (shape.rows, shape.cols),
    };
    let ld = shape.ld as u64 * bytes;
    // a problem's own span, for the batch stride of one problem (any multiple of 16 will do)
    let (batches, batch_bytes) = if count > 1 && stride > 0 { (count as u64, stride as u64 * bytes) } else { (1, ld * outer as u64) };
    let dims = [inner as u64, outer as u64, batches];
    let strides = [ld, batch_bytes];
    encode_dims(elem, ptr, dims, strides, box_dims, swizzle).map_err(|result| GemmError::TensorMap {
        operand: shape.name,
        what: format!(
            "{result:?} for a {}x{} {} matrix at {ptr:#x} (leading dimension {}, {} problem(s)) with boxes of {}x{}",
            shape.rows,
            shape.cols,
            elem.rust_name(),
            shape.ld,
            batches,
            box_dims[0],
            box_dims[1]
        ),
    })
}

/// Encodes a 3-D tensor map of `dims` elements of `elem` at `ptr` (the
/// innermost first), `strides` bytes apart along the outer two, with
/// boxes of `box_dims` (by one along the third) in a `swizzle`-byte
/// swizzle (0: none); the driver's result where it refuses.
fn encode_dims(elem: Elem, ptr: u64, dims: [u64; 3], strides: [u64; 2], box_dims: [u32; 2], swizzle: u32) -> Result<TensorMap, sys::CUresult> {
    let boxes = [box_dims[0], box_dims[1], 1];
    let elem_strides = [1u32; 3];
    let dtype = match elem {
        Elem::Bf16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        Elem::F16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        Elem::F32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        // TMA moves bytes: an 8-bit float is a byte to it
        Elem::F8E4M3 | Elem::F8E5M2 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
    };
    let swizzle = match swizzle {
        128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        64 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        32 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        _ => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
    };
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::uninit();
    // SAFETY: every array holds the rank's 3 entries (strides the 2 beyond
    // the first); the driver writes the 128-byte map.
    let result = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            dtype,
            3,
            ptr as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if result != sys::CUresult::CUDA_SUCCESS {
        return Err(result);
    }
    // SAFETY: written by the driver on success.
    let map = unsafe { map.assume_init() };
    Ok(TensorMap(map.opaque))
}

/// The `by_class` variant's parameter (the generated kernel's
/// `LineClasses`): each operand's tensor maps a class of lines at a time,
/// and where each starts. Laid out as the kernel declares it.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct LineClasses {
    pub a: [TensorMap; 16],
    pub b: [TensorMap; 4],
    pub c: [TensorMap; 16],
    pub sa: [i32; 16],
    pub sb: [i32; 4],
    pub sc: [i32; 16],
    pub c_end: [i32; 16],
    pub k_steps: [i32; 16],
    pub rows: [i32; 16],
    pub m_tiles: i32,
}

// SAFETY: plain bytes, laid out as the kernel's `LineClasses` parameter.
unsafe impl DeviceRepr for LineClasses {}

/// One class of an operand's lines for [`line_classes`]: lines `class`,
/// `class + step`, ... of `lines` lines of `len` elements `ld` apart from
/// `ptr`, as a tensor from the first of them rounded down to `align`
/// bytes, in boxes of 64 elements by `box_lines`; the elements the map
/// starts before its lines, and the map. `whole`: the tensor ends on the
/// lines' last whole 16 bytes (TMA stores write whole 16-byte granules).
struct Class {
    elem: Elem,
    name: char,
    ptr: u64,
    ld: usize,
    len: usize,
    lines: usize,
    step: usize,
    align: u64,
    box_lines: u32,
    whole: bool,
}

impl Class {
    fn map(&self, class: usize) -> Result<(i32, TensorMap), GemmError> {
        let bytes = self.elem.bytes() as u64;
        let first = self.ptr + (class * self.ld) as u64 * bytes;
        let base = first & !(self.align - 1);
        let shift = (first - base) / bytes;
        let len = self.len as u64 + shift;
        let len = if self.whole { len & !(16 / bytes - 1) } else { len };
        let count = self.lines.saturating_sub(class).div_ceil(self.step) as u64;
        let stride = (self.step * self.ld) as u64 * bytes;
        encode_dims(self.elem, base, [len, count, 1], [stride, stride * count], [64, self.box_lines], 128).map(|m| (shift as i32, m)).map_err(
            |result| GemmError::TensorMap {
                operand: self.name,
                what: format!(
                    "{result:?} for lines {class}, {class} + {step}, ... of {} lines of {} elements {} apart at {:#x} (class {class} of {step})",
                    self.lines,
                    self.len,
                    self.ld,
                    self.ptr,
                    step = self.step
                ),
            },
        )
    }
}

/// The `by_class` variant's maps for a row-major A (`lda`), column-major B
/// (`ldb`) and row-major C (`ldc`) at `ptrs` for an `m x n x k` product:
/// A's lines by class mod 16 from 128-byte boundaries, B's columns mod 4
/// from 32-byte ones, C's lines mod 16 from 16-byte ones to their last
/// whole 16 bytes. A's and B's lines must lie 8 bytes aligned (their
/// shifts a multiple of 4 elements), and `m >= 16`, `n >= 8`: every class
/// holds lines, and C's hold 16 bytes (the launcher's choice of the
/// variant sees to both).
pub fn line_classes(elem: Elem, ptrs: [u64; 3], [lda, ldb, ldc]: [usize; 3], (m, n, k): (usize, usize, usize)) -> Result<LineClasses, GemmError> {
    let zero = TensorMap([0; 16]);
    let mut p = LineClasses {
        a: [zero; 16],
        b: [zero; 4],
        c: [zero; 16],
        sa: [0; 16],
        sb: [0; 4],
        sc: [0; 16],
        c_end: [0; 16],
        k_steps: [0; 16],
        rows: [0; 16],
        m_tiles: 0,
    };
    let a = Class { elem, name: 'A', ptr: ptrs[0], ld: lda, len: k, lines: m, step: 16, align: 128, box_lines: 256, whole: false };
    let b = Class { elem, name: 'B', ptr: ptrs[1], ld: ldb, len: k, lines: n, step: 4, align: 32, box_lines: 32, whole: false };
    let c = Class { elem, name: 'C', ptr: ptrs[2], ld: ldc, len: n, lines: m, step: 16, align: 16, box_lines: 64, whole: true };
    for d in 0..4 {
        (p.sb[d], p.b[d]) = b.map(d)?;
    }
    for cls in 0..16 {
        (p.sa[cls], p.a[cls]) = a.map(cls)?;
        (p.sc[cls], p.c[cls]) = c.map(cls)?;
        p.c_end[cls] = ((n as i32 + p.sc[cls]) & !7) - p.sc[cls];
        // B's window runs up to 12 elements past A's (its residual shift): enough steps that the
        // last step's elements from beyond its box lie past K
        let res_most = (0..4).map(|d| (p.sb[d] - p.sa[cls]).rem_euclid(16)).max().unwrap_or(0);
        p.k_steps[cls] = (k + (p.sa[cls] + res_most) as usize).div_ceil(64) as i32;
        p.rows[cls] = m.saturating_sub(cls).div_ceil(16) as i32;
    }
    p.m_tiles = m.div_ceil(16).div_ceil(256) as i32;
    Ok(p)
}
