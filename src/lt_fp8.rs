//! cuBLASLt's fp8 GEMM, the reference fp8 kernels are timed beside and
//! compared with: cudarc's safe cuBLASLt API has no 8-bit types, so this
//! goes through its raw bindings. cuBLASLt takes fp8 "TN" only, as wgmma
//! does: A row-major (K-major) and B column-major (`C = A * W^T` with W
//! stored [N, K]); per-tensor scales are device pointers (one f32 for A,
//! one for B), and its default mode promotes the tensor cores' partial sums
//! into full f32 now and then, where fast accumulation leaves them in the
//! tensor cores. Where the library has them (12.9 and later), it also takes
//! DeepGEMM's block scales: A's per row and 128-wide K block
//! (`VEC128_32F`), B's per 128 x 128 block (`BLK128x128_32F`), in the
//! layouts `gemm_runtime::quantize` writes (M a multiple of 4, and K's
//! blocks of B's scales a multiple of 4, where the two agree).

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys;
use gemm_runtime::cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use gemm_runtime::spec::Elem;
use gemm_runtime::{Dims, Element, GemmError};

/// The workspace cuBLASLt may use, as cudarc's safe API gives it on Hopper.
const WORKSPACE: usize = 32 << 20;

/// cuBLASLt's objects, each destroyed once when dropped (on an error
/// half-way through planning too).
struct Handle(sys::cublasLtHandle_t);
struct Desc(sys::cublasLtMatmulDesc_t);
struct Layout(sys::cublasLtMatrixLayout_t);
struct Pref(sys::cublasLtMatmulPreference_t);

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: created by cublasLtCreate, destroyed here alone
        let _ = unsafe { lt::destroy_handle(self.0) };
    }
}
impl Drop for Desc {
    fn drop(&mut self) {
        // SAFETY: as above, for the matmul descriptor
        let _ = unsafe { lt::destroy_matmul_desc(self.0) };
    }
}
impl Drop for Layout {
    fn drop(&mut self) {
        // SAFETY: as above, for a matrix layout
        let _ = unsafe { lt::destroy_matrix_layout(self.0) };
    }
}
impl Drop for Pref {
    fn drop(&mut self) {
        // SAFETY: as above, for the preference
        let _ = unsafe { lt::destroy_matmul_pref(self.0) };
    }
}

/// A cuBLASLt fp8 GEMM planned for one shape and types: its descriptors
/// and algorithm, found once, so that timing it times the GEMM alone.
pub struct LtFp8 {
    stream: Arc<CudaStream>,
    workspace: CudaSlice<u8>,
    algo: sys::cublasLtMatmulAlgo_t,
    dims: Dims,
    // (dropped in this order: the layouts and descriptor before the handle)
    layouts: [Layout; 3],
    desc: Desc,
    handle: Handle,
}

fn lt_err(what: &str) -> impl Fn(lt::CublasError) -> GemmError + '_ {
    move |e| GemmError::Unsupported(format!("cuBLASLt fp8 ({what}): {e:?}"))
}

fn data_type(e: Elem) -> sys::cudaDataType {
    match e {
        Elem::F8E4M3 => sys::cudaDataType::CUDA_R_8F_E4M3,
        Elem::F8E5M2 => sys::cudaDataType::CUDA_R_8F_E5M2,
        Elem::Bf16 => sys::cudaDataType::CUDA_R_16BF,
        Elem::F16 => sys::cudaDataType::CUDA_R_16F,
        Elem::F32 => sys::cudaDataType::CUDA_R_32F,
    }
}

impl LtFp8 {
    /// Plans `C (m x n, row-major, TC) = scale_a * scale_b * A (m x k,
    /// row-major, TA) * B (k x n, column-major, TB)` at `dims` (leading
    /// dimensions as `dims` has them; one problem). `fast_accum`: the
    /// tensor cores' sums alone, never promoted.
    pub fn new<TA: Element, TB: Element, TC: Element>(
        stream: &Arc<CudaStream>,
        dims: Dims,
        scales: (&CudaSlice<f32>, &CudaSlice<f32>),
        fast_accum: bool,
    ) -> Result<Self, GemmError> {
        Self::plan::<TA, TB, TC>(stream, dims, scales, fast_accum, false)
    }

    /// Why [`LtFp8::block_scaled`] refuses `dims`, if it does.
    pub fn block_scaled_refuses(dims: Dims) -> Option<String> {
        // where the two layouts are known to agree: A's scales m a line with m a multiple of 4
        // (ours are padded to 4), B's K blocks a line, a multiple of 4 (cuBLASLt's padding)
        (!dims.m.is_multiple_of(4) || !dims.k.div_ceil(128).is_multiple_of(4)).then(|| {
            format!(
                "the cuBLASLt block-scaled reference takes m a multiple of 4 and ceil(k / 128) a multiple of 4 (where its scale layouts are this crate's), not m = {} and k = {}",
                dims.m, dims.k
            )
        })
    }

    /// [`Self::new`] with block scales: `scales.0` A's per row and 128-wide
    /// K block (`[ceil(k/128)][m]`, m a multiple of 4), `scales.1` B's per
    /// 128 x 128 block (`[ceil(n/128)][ceil(k/128)]`), sums promoted (the
    /// library takes no fast accumulation with block scales). An `Err`
    /// where the library has no such mode, or where its layouts and this
    /// crate's are not known to agree (m or ceil(k / 128) not a multiple of 4).
    pub fn block_scaled<TA: Element, TB: Element, TC: Element>(
        stream: &Arc<CudaStream>,
        dims: Dims,
        scales: (&CudaSlice<f32>, &CudaSlice<f32>),
    ) -> Result<Self, GemmError> {
        if let Some(why) = Self::block_scaled_refuses(dims) {
            return Err(GemmError::Unsupported(why));
        }
        Self::plan::<TA, TB, TC>(stream, dims, scales, false, true)
    }

    fn plan<TA: Element, TB: Element, TC: Element>(
        stream: &Arc<CudaStream>,
        dims: Dims,
        scales: (&CudaSlice<f32>, &CudaSlice<f32>),
        fast_accum: bool,
        block: bool,
    ) -> Result<Self, GemmError> {
        if dims.batch.count != 1 {
            return Err(GemmError::Unsupported("the cuBLASLt fp8 reference takes one problem".into()));
        }
        let handle = Handle(lt::create_handle().map_err(lt_err("handle"))?);
        // SAFETY: a plain allocation of bytes cuBLASLt writes before it reads
        let workspace = unsafe { stream.alloc::<u8>(WORKSPACE)? };
        let (m, n, k) = (dims.m as u64, dims.n as u64, dims.k as u64);
        let (lda, ldb, ldc) = (dims.lda.unwrap_or(dims.k), dims.ldb.unwrap_or(dims.k), dims.ldc.unwrap_or(dims.n));
        // cuBLASLt is column-major: the row-major C is C^T (n x m) = B^T A^T, so its "A" is our B
        // (k x n column-major, transposed: n x k) and its "B" our A (row-major m x k is column-major k x m)
        let desc =
            Desc(lt::create_matmul_desc(sys::cublasComputeType_t::CUBLAS_COMPUTE_32F, sys::cudaDataType::CUDA_R_32F).map_err(lt_err("descriptor"))?);
        let (sa, _ra) = scales.0.device_ptr(stream);
        let (sb, _rb) = scales.1.device_ptr(stream);
        let set = |attr: sys::cublasLtMatmulDescAttributes_t, value: *const c_void, size: usize| {
            // SAFETY: `desc` is live; each value is the attribute's documented type and size
            unsafe { lt::set_matmul_desc_attribute(desc.0, attr, value, size) }.map_err(lt_err("attribute"))
        };
        let transposed = cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_T;
        let as_is = cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
        let fast = i8::from(fast_accum);
        set(sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA, &transposed as *const _ as *const c_void, size_of_val(&transposed))?;
        set(sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSB, &as_is as *const _ as *const c_void, size_of_val(&as_is))?;
        // its A is our B: our B's scale goes on its A
        set(sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb as *const _ as *const c_void, size_of_val(&sb))?;
        set(sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa as *const _ as *const c_void, size_of_val(&sa))?;
        set(sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast as *const _ as *const c_void, size_of_val(&fast))?;
        if block {
            // its A (our B) by 128 x 128 blocks, its B (our A) by 128-wide K blocks; int32 attributes
            let (blocks, rows) = (
                sys::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F as i32,
                sys::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F as i32,
            );
            set(sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &blocks as *const _ as *const c_void, size_of_val(&blocks))?;
            set(sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &rows as *const _ as *const c_void, size_of_val(&rows))?;
        }
        let layout = |e: Elem, rows: u64, cols: u64, ld: usize| {
            lt::create_matrix_layout(data_type(e), rows, cols, ld as i64).map(Layout).map_err(lt_err("layout"))
        };
        let layouts = [layout(TB::ELEM, k, n, ldb)?, layout(TA::ELEM, k, m, lda)?, layout(TC::ELEM, n, m, ldc)?];
        let pref = Pref(lt::create_matmul_pref().map_err(lt_err("preference"))?);
        let size = WORKSPACE;
        // SAFETY: `pref` is live; the attribute is a usize
        unsafe {
            lt::set_matmul_pref_attribute(
                pref.0,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                &size as *const _ as *const c_void,
                size_of_val(&size),
            )
        }
        .map_err(lt_err("preference"))?;
        // SAFETY: every descriptor is live and describes these buffers
        let heuristic = unsafe { lt::get_matmul_algo_heuristic(handle.0, desc.0, layouts[0].0, layouts[1].0, layouts[2].0, layouts[2].0, pref.0) };
        let algo = heuristic.map_err(lt_err("no algorithm for these types and layouts"))?.algo;
        Ok(LtFp8 { stream: stream.clone(), workspace, algo, dims, layouts, desc, handle })
    }

    /// Runs the planned GEMM: `c` takes `a * b` (scaled), beta = 0.
    pub fn run<TA: Element, TB: Element, TC: Element>(
        &mut self,
        a: &CudaSlice<TA>,
        b: &CudaSlice<TB>,
        c: &mut CudaSlice<TC>,
    ) -> Result<(), GemmError> {
        let shapes = gemm_runtime::internal::args_shapes(
            gemm_runtime::spec::Operand { elem: TA::ELEM, layout: gemm_runtime::spec::Layout::RowMajor },
            gemm_runtime::spec::Operand { elem: TB::ELEM, layout: gemm_runtime::spec::Layout::ColMajor },
            gemm_runtime::spec::Operand { elem: TC::ELEM, layout: gemm_runtime::spec::Layout::RowMajor },
            self.dims,
        );
        for (shape, len, name) in [(shapes[0], a.len(), 'A'), (shapes[1], b.len(), 'B'), (shapes[2], c.len(), 'C')] {
            if shape.span() > len {
                return Err(GemmError::BufferTooSmall { operand: name, rows: shape.rows, cols: shape.cols, ld: shape.ld, needed: shape.span(), len });
            }
        }
        let s = &self.stream;
        let (pa, _ra) = a.device_ptr(s);
        let (pb, _rb) = b.device_ptr(s);
        let (pc, _rc) = c.device_ptr_mut(s);
        let (pw, _rw) = self.workspace.device_ptr_mut(s);
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: the descriptors were made for these shapes and types, every buffer
        // was checked to hold its matrix, the workspace is WORKSPACE bytes
        unsafe {
            lt::matmul(
                self.handle.0,
                self.desc.0,
                &alpha as *const f32 as *const c_void,
                &beta as *const f32 as *const c_void,
                pb as *const c_void,
                self.layouts[0].0,
                pa as *const c_void,
                self.layouts[1].0,
                pc as *const c_void,
                self.layouts[2].0,
                pc as *mut c_void,
                self.layouts[2].0,
                &self.algo,
                pw as *mut c_void,
                WORKSPACE,
                s.cu_stream() as sys::cudaStream_t,
            )
        }
        .map_err(lt_err("matmul"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block-scaled reference takes shapes where cuBLASLt's scale
    /// layouts are this crate's, and says why it refuses the others.
    #[test]
    fn the_block_scaled_reference_refuses_shapes_whose_scale_layouts_differ() {
        assert_eq!(LtFp8::block_scaled_refuses(Dims::new(128, 4096, 7168)), None);
        assert_eq!(LtFp8::block_scaled_refuses(Dims::new(64, 2112, 512)), None);
        // 14 K blocks, and M of 130
        for dims in [Dims::new(128, 4096, 1792), Dims::new(130, 4096, 7168)] {
            let why = LtFp8::block_scaled_refuses(dims).expect("refused");
            assert!(why.contains(&format!("m = {} and k = {}", dims.m, dims.k)), "{why}");
        }
    }
}
