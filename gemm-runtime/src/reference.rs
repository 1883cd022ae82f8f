//! cuBLAS as the reference: correctness checks and the speed to beat.

use std::sync::Arc;

use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use gemm_core::spec::{Layout, Operand};

use crate::args::{self, Dims};
use crate::GemmError;

pub struct Cublas {
    blas: CudaBlas,
}

impl Cublas {
    pub fn new(stream: Arc<CudaStream>) -> Result<Self, GemmError> {
        // SAFETY: only tries to dlopen the library.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err(GemmError::NoCublas);
        }
        Ok(Cublas { blas: CudaBlas::new(stream)? })
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
        args::fit_buffers(&[sa, sb, sc], [a.len(), b.len(), c.len()])?;
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
}
