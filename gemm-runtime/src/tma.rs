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

/// The tensor map of C for `epilogue = tma`: boxes of one 128-byte line by
/// the C tile's lines, in the 128-byte swizzle the kernel writes its C tile
/// in; the TMA store leaves out what lies past C's edges.
pub fn c_map(spec: &KernelSpec, ptr: u64, shape: &Shape, count: usize, stride: usize) -> Result<TensorMap, GemmError> {
    let lines = spec.c_tile().map_or(0, |t| t.lines);
    encode(spec.c.elem, ptr, shape, (count, stride), [spec.c_tile_box(), lines], 128)
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
    let boxes = [box_dims[0], box_dims[1], 1];
    let elem_strides = [1u32; 3];
    let dtype = match elem {
        Elem::Bf16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        Elem::F16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        Elem::F32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
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
        return Err(GemmError::TensorMap {
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
        });
    }
    // SAFETY: written by the driver on success.
    let map = unsafe { map.assume_init() };
    Ok(TensorMap(map.opaque))
}
