//! cuBLAS as the reference: correctness checks and the speed to beat.

use std::sync::Arc;

use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cudaDataType_t};
use cudarc::cublas::{result, CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use gemm_core::spec::{Elem, Layout, Operand};

use crate::args::{self, Dims, Element};
use crate::GemmError;

pub struct Cublas {
    blas: CudaBlas,
    stream: Arc<CudaStream>,
}

impl Cublas {
    pub fn new(stream: Arc<CudaStream>) -> Result<Self, GemmError> {
        // SAFETY: only tries to dlopen the library.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err(GemmError::NoCublas);
        }
        Ok(Cublas { blas: CudaBlas::new(stream.clone())?, stream })
    }

    /// `C = A * B` in f32 (cuBLAS's default math: no TF32), for any of the
    /// layouts; cuBLAS is column-major, so a row-major C is computed as
    /// `C^T = B^T * A^T`.
    pub fn sgemm(
        &self,
        layouts: [Layout; 3],
        a: &impl DevicePtr<f32>,
        b: &impl DevicePtr<f32>,
        c: &mut impl DevicePtrMut<f32>,
        dims: Dims,
    ) -> Result<(), GemmError> {
        let op = |l| Operand { elem: gemm_core::spec::Elem::F32, layout: l };
        let [sa, sb, sc] = args::shapes(op(layouts[0]), op(layouts[1]), op(layouts[2]), dims);
        args::fit_buffers(&[sa, sb, sc], [a.len(), b.len(), c.len()], args::Batch::single())?;
        args::fit_i32(&[sa, sb, sc])?;
        // An operand stored in C's order is used as is; the other is transposed.
        let trans = |l: Layout| if l == sc.layout { CUBLAS_OP_N } else { CUBLAS_OP_T };
        let (m, n, k) = (dims.m as i32, dims.n as i32, dims.k as i32);
        let cfg = |first: &crate::Shape, second: &crate::Shape, rows, cols| GemmConfig {
            transa: trans(first.layout),
            transb: trans(second.layout),
            m: rows,
            n: cols,
            k,
            alpha: 1.0f32,
            lda: first.ld as i32,
            ldb: second.ld as i32,
            beta: 0.0,
            ldc: sc.ld as i32,
        };
        // SAFETY: every buffer was checked above to hold its matrix, and every
        // size to fit cuBLAS's ints.
        unsafe {
            match sc.layout {
                Layout::ColMajor => self.blas.gemm(cfg(&sa, &sb, m, n), a, b, c),
                Layout::RowMajor => self.blas.gemm(cfg(&sb, &sa, n, m), b, a, c),
            }
        }?;
        Ok(())
    }

    /// `C = A * B` for any element types a kernel takes, through
    /// `cublasGemmEx` with f32 accumulation (`CUBLAS_COMPUTE_32F`, which for
    /// f32 operands is plain f32, no TF32) and C in its own type, rounded by
    /// cuBLAS; any of the layouts, as in [`Self::sgemm`]; every problem of a
    /// batch (`cublasGemmStridedBatchedEx`).
    pub fn gemm<TA: Element, TB: Element, TC: Element>(
        &self,
        layouts: [Layout; 3],
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
    ) -> Result<(), GemmError> {
        self.gemm_scaled(layouts, a, b, c, dims, 1.0, 0.0)
    }

    /// `C = alpha * A * B + beta * C`, as [`Self::gemm`] (cuBLAS's own alpha and beta).
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_scaled<TA: Element, TB: Element, TC: Element>(
        &self,
        layouts: [Layout; 3],
        a: &impl DevicePtr<TA>,
        b: &impl DevicePtr<TB>,
        c: &mut impl DevicePtrMut<TC>,
        dims: Dims,
        alpha: f32,
        beta: f32,
    ) -> Result<(), GemmError> {
        let [ea, eb, ec] = [TA::ELEM, TB::ELEM, TC::ELEM];
        let ops = [Operand { elem: ea, layout: layouts[0] }, Operand { elem: eb, layout: layouts[1] }, Operand { elem: ec, layout: layouts[2] }];
        let [sa, sb, sc] = args::shapes(ops[0], ops[1], ops[2], dims);
        args::fit_buffers(&[sa, sb, sc], [a.len(), b.len(), c.len()], dims.batch)?;
        args::fit_i32(&[sa, sb, sc])?;
        let batch = dims.batch;
        if batch.count > i32::MAX as usize {
            return Err(GemmError::Batch(format!("cuBLAS takes at most {} problems in a batch", i32::MAX)));
        }
        if ea.is_fp8() || eb.is_fp8() || ec.is_fp8() {
            return Err(GemmError::Unsupported(
                "cuBLAS's GEMM takes no 8-bit floats: check an fp8 kernel against the product of its dequantized operands".into(),
            ));
        }
        let data_type = |e: Elem| match e {
            Elem::F32 => cudaDataType_t::CUDA_R_32F,
            Elem::F16 => cudaDataType_t::CUDA_R_16F,
            Elem::Bf16 => cudaDataType_t::CUDA_R_16BF,
            Elem::F8E4M3 | Elem::F8E5M2 => unreachable!("refused above"),
        };
        let trans = |l: Layout| if l == sc.layout { CUBLAS_OP_N } else { CUBLAS_OP_T };
        let stream = &self.stream;
        let (pa, _ra) = a.device_ptr(stream);
        let (pb, _rb) = b.device_ptr(stream);
        let (pc, _rc) = c.device_ptr_mut(stream);
        // cuBLAS is column-major: a row-major C is computed as C^T = B^T * A^T.
        let ((first, fp, ft, fs), (second, sp, st, ss), rows, cols) = match sc.layout {
            Layout::ColMajor => ((sa, pa, ea, batch.stride_a), (sb, pb, eb, batch.stride_b), dims.m, dims.n),
            Layout::RowMajor => ((sb, pb, eb, batch.stride_b), (sa, pa, ea, batch.stride_a), dims.n, dims.m),
        };
        // SAFETY: every buffer was checked above to hold its matrix in every
        // problem of the batch, every size to fit cuBLAS's ints; alpha and
        // beta are f32 as COMPUTE_32F needs.
        unsafe {
            if batch.count == 1 {
                // the plain call for one problem: what the benchmarks time cuBLAS by
                result::gemm_ex(
                    *self.blas.handle(),
                    trans(first.layout),
                    trans(second.layout),
                    rows as i32,
                    cols as i32,
                    dims.k as i32,
                    (&alpha) as *const f32 as *const _,
                    fp as *const _,
                    data_type(ft),
                    first.ld as i32,
                    sp as *const _,
                    data_type(st),
                    second.ld as i32,
                    (&beta) as *const f32 as *const _,
                    pc as *mut _,
                    data_type(ec),
                    sc.ld as i32,
                    cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            } else {
                result::gemm_strided_batched_ex(
                    *self.blas.handle(),
                    trans(first.layout),
                    trans(second.layout),
                    rows as i32,
                    cols as i32,
                    dims.k as i32,
                    (&alpha) as *const f32 as *const _,
                    fp as *const _,
                    data_type(ft),
                    first.ld as i32,
                    fs as i64,
                    sp as *const _,
                    data_type(st),
                    second.ld as i32,
                    ss as i64,
                    (&beta) as *const f32 as *const _,
                    pc as *mut _,
                    data_type(ec),
                    sc.ld as i32,
                    batch.stride_c as i64,
                    batch.count as i32,
                    cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
        }?;
        Ok(())
    }

    /// cuBLAS's grouped GEMM (`cublasGemmGroupedBatchedEx`, one call for
    /// every expert) on a mixture-of-experts layer in bf16: for each group g
    /// with rows, `C[c_starts[g]..][..n] = A[a_starts[g]..][..k] * W_g^T` over
    /// its `rows[g]` rows, A and C row-major, W `[G, n, k]` (each expert's
    /// `[n, k]`), f32 accumulation. The API takes the sizes in host memory and
    /// the matrices as device arrays of pointers, copied here on every call
    /// (cudarc 0.19's safe `grouped_gemm` passes host arrays of them, which
    /// the API does not take).
    #[allow(clippy::too_many_arguments)]
    pub fn grouped_bf16(
        &self,
        a: &impl DevicePtr<half::bf16>,
        w: &impl DevicePtr<half::bf16>,
        c: &mut impl DevicePtrMut<half::bf16>,
        rows: &[usize],
        (a_starts, c_starts): (&[usize], &[usize]),
        (n, k): (usize, usize),
    ) -> Result<(), GemmError> {
        let groups: Vec<usize> = (0..rows.len()).filter(|&g| rows[g] > 0).collect();
        if groups.is_empty() {
            return Ok(());
        }
        let fits = |start: usize, len: usize, per: usize, buffer: usize| start.saturating_add(len).saturating_mul(per) <= buffer;
        for &g in &groups {
            let ok = fits(a_starts[g], rows[g], k, a.len()) && fits(g, 1, n * k, w.len()) && fits(c_starts[g], rows[g], n, c.len());
            if !ok || [rows[g], n, k].iter().any(|&x| x > i32::MAX as usize) {
                return Err(GemmError::Unsupported(format!("cuBLAS's grouped GEMM: group {g}'s {} rows lie past A, W or C", rows[g])));
            }
        }
        let stream = &self.stream;
        let (pa, _ra) = a.device_ptr(stream);
        let (pw, _rw) = w.device_ptr(stream);
        let (pc, _rc) = c.device_ptr_mut(stream);
        let bytes = 2u64;
        // column-major, as cuBLAS is: C_g^T (n x rows) = W_g (n x k, stored k x n) * A_g^T (k x rows)
        let ptrs = |base: u64, at: &dyn Fn(usize) -> usize| -> Vec<u64> { groups.iter().map(|&g| base + at(g) as u64 * bytes).collect() };
        let w_ptrs = stream.clone_htod(&ptrs(pw, &|g| g * n * k))?;
        let a_ptrs = stream.clone_htod(&ptrs(pa, &|g| a_starts[g] * k))?;
        let c_ptrs = stream.clone_htod(&ptrs(pc, &|g| c_starts[g] * n))?;
        let count = groups.len();
        let int = |x: usize| x as i32;
        let (ms, ns, ks) = (vec![int(n); count], groups.iter().map(|&g| int(rows[g])).collect::<Vec<_>>(), vec![int(k); count]);
        let (lds, ldc) = (vec![int(k); count], vec![int(n); count]);
        let (alphas, betas) = (vec![1.0f32; count], vec![0.0f32; count]);
        let (ta, tb) = (vec![CUBLAS_OP_T; count], vec![CUBLAS_OP_N; count]);
        let sizes = vec![1i32; count];
        let bf16 = cudaDataType_t::CUDA_R_16BF;
        let (dw, _gw) = w_ptrs.device_ptr(stream);
        let (da, _ga) = a_ptrs.device_ptr(stream);
        let (dc, _gc) = c_ptrs.device_ptr(stream);
        // SAFETY: every group's matrices were checked above to lie inside A, W and C; the pointer
        // arrays live on the device until the call's work is done (freed in stream order); the
        // host arrays hold one entry a group.
        unsafe {
            cudarc::cublas::sys::cublasGemmGroupedBatchedEx(
                *self.blas.handle(),
                ta.as_ptr(),
                tb.as_ptr(),
                ms.as_ptr(),
                ns.as_ptr(),
                ks.as_ptr(),
                alphas.as_ptr() as *const _,
                dw as *const *const _,
                bf16,
                lds.as_ptr(),
                da as *const *const _,
                bf16,
                lds.as_ptr(),
                betas.as_ptr() as *const _,
                dc as *const *mut _,
                bf16,
                ldc.as_ptr(),
                count as i32,
                sizes.as_ptr(),
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
            )
            .result()?;
        }
        Ok(())
    }
}
