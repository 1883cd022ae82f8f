//! Launches of empty products, as BLAS and PyTorch take them: no rows, no
//! columns or no problems leave nothing to write, and a product over
//! K = 0 is a zero matrix, so C gets the epilogue of zeros (`beta * C`,
//! the bias, the activation: the bias alone for a linear layer of no
//! inputs). The kernel itself writes it, run over a K tile of zeros, so
//! that C gets the epilogue every other launch gets, element for element.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaStream, DevicePtr, DeviceSlice, SyncOnDrop};
use gemm_core::spec::{KernelSpec, Layout, Operand, Scale};

use crate::args::{batched_span, check, fit_buffers, fit_i32, fit_lines, spec_shapes, Dims};
use crate::scratch::Scratch;
use crate::GemmError;

/// What a launch of these sizes computes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Empty {
    /// A product with elements, over some K: the kernel runs as written.
    No,
    /// No rows, no columns or no problems: nothing to write.
    Nothing,
    /// C = the epilogue of a zero product: the kernel over [`ZeroK`]'s operands.
    ZeroK(ZeroK),
}

/// Zeros standing in for A and B under K = 0: one K tile of the kernel's
/// (a K every tiling takes), lines padded to 128 bytes so that no copy or
/// variant is needed for them, one problem's shared by the batch where the
/// caller's was.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ZeroK {
    pub dims: Dims,
    /// A's and B's elements, the batch's.
    pub lens: [usize; 2],
    /// A's and B's block scales (zeros too) for a kernel that reads them by K block.
    pub scales: Option<(usize, usize)>,
}

/// What `dims` asks of `spec`'s kernel. The caller's leading dimensions and
/// buffers are checked as for any launch (A and B hold nothing at K = 0),
/// so that an empty launch refuses what a full one would.
pub(crate) fn of(spec: &KernelSpec, d: Dims, lens: [usize; 3]) -> Result<Empty, GemmError> {
    if !d.is_empty() {
        return Ok(Empty::No);
    }
    let nothing = d.m == 0 || d.n == 0 || d.batch.count == 0;
    let shapes = spec_shapes(spec, d);
    fit_lines(&shapes)?;
    if d.batch.count > 0 {
        fit_buffers(&shapes, lens, d.batch)?;
    }
    if nothing {
        return Ok(Empty::Nothing);
    }
    fit_i32(&shapes)?;
    let z = zero_k(spec, d);
    // what the kernel refuses at the zeros' sizes (the batch, the tiles) is refused before they are
    // allocated; C's alignment is the launch's to mend, by a variant or a copy
    match check(spec, z.dims, [z.lens[0], z.lens[1], lens[2]], [0; 3]) {
        Ok(_) | Err(GemmError::Misaligned { .. }) => Ok(Empty::ZeroK(z)),
        Err(e) => Err(e),
    }
}

fn zero_k(spec: &KernelSpec, d: Dims) -> ZeroK {
    let kz = spec.block.k.unwrap_or(spec.atom.shape().2) as usize;
    let b = d.batch;
    // (lines and problems on 128-byte boundaries: TMA and every vector copy take them where
    // they lie; each problem's zeros apart where the caller's operands were)
    let pitch = |op: Operand, x: usize| x.next_multiple_of(128 / op.elem.bytes() as usize);
    let ld = |op: Operand, rows: usize, cols: usize| match op.layout {
        Layout::RowMajor => pitch(op, cols),
        Layout::ColMajor => pitch(op, rows),
    };
    let lines = Dims { k: kz, lda: Some(ld(spec.a, d.m, kz)), ldb: Some(ld(spec.b, kz, d.n)), ..d };
    // (sides and lines within an int: no span overflows, and the batch's saturates)
    let [sa, sb, _] = spec_shapes(spec, lines);
    let stride = |op: Operand, given: usize, span: usize| if given == 0 { 0 } else { pitch(op, span) };
    let (stride_a, stride_b) = (stride(spec.a, b.stride_a, sa.span()), stride(spec.b, b.stride_b, sb.span()));
    let dims = lines.batched(b.count, stride_a, stride_b, b.stride_c);
    let lens = [batched_span(sa.span(), b.count, stride_a), batched_span(sb.span(), b.count, stride_b)];
    let scales = match spec.fused.scale {
        Some(s @ Scale::Block) => Some(s.batch_lens(d.m, d.n, kz, (b.count, stride_a, stride_b))),
        _ => None,
    };
    ZeroK { dims, lens, scales }
}

/// `len` zeros of `T` in memory ordered on a stream, to pass where a
/// launch takes a buffer: every element type's zero is all bits zero.
pub(crate) struct Zeros<T> {
    scratch: Scratch,
    len: usize,
    /// The stream a buffer's placement is judged by: the caller's C's, on the launch's GPU.
    owner: Arc<CudaStream>,
    elem: PhantomData<T>,
}

impl<T> Zeros<T> {
    pub(crate) fn new(stream: &CudaStream, owner: Arc<CudaStream>, len: usize) -> Result<Self, GemmError> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let scratch = Scratch::new(stream, bytes)?;
        // SAFETY: the allocation holds `bytes` (at least 1), ordered on this stream.
        unsafe { result::memset_d8_async(scratch.ptr(), 0, bytes, stream.cu_stream()) }?;
        Ok(Zeros { scratch, len, owner, elem: PhantomData })
    }
}

impl<T> DeviceSlice<T> for Zeros<T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.owner
    }
}

impl<T> DevicePtr<T> for Zeros<T> {
    fn device_ptr<'a>(&'a self, _stream: &'a CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        // (written and read on the launch's stream alone: nothing to record)
        (self.scratch.ptr(), SyncOnDrop::Record(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_specs;

    fn zero_k_of(spec: &KernelSpec, d: Dims) -> ZeroK {
        match of(spec, d, [0, 0, usize::MAX]).unwrap() {
            Empty::ZeroK(z) => z,
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn no_rows_columns_or_problems_write_nothing_and_any_other_size_runs_the_kernel() {
        let spec = test_specs::tma_store();
        // (the buffers hold what the sizes ask: A and C nothing at m = 0, B its 64 x 64)
        for (d, lens) in [
            (Dims::new(0, 64, 64), [0, 4096, 0]),
            (Dims::new(64, 0, 64), [4096, 0, 0]),
            (Dims::new(0, 0, 0), [0; 3]),
            (Dims::new(64, 64, 64).batched(0, 4096, 4096, 4096), [0; 3]),
        ] {
            assert_eq!(of(&spec, d, lens).unwrap(), Empty::Nothing, "{d:?}");
        }
        let short = of(&spec, Dims::new(0, 64, 64), [0, 4095, 0]).unwrap_err();
        assert!(matches!(short, GemmError::BufferTooSmall { operand: 'B', .. }), "{short}");
        assert_eq!(of(&spec, Dims::new(1, 1, 1), [1; 3]).unwrap(), Empty::No);
    }

    #[test]
    fn an_empty_launch_still_refuses_what_any_launch_would() {
        let spec = test_specs::tma_store();
        let ld = of(&spec, Dims::new(0, 64, 64).with_ld(64, 64, 63), [0; 3]).unwrap_err();
        assert!(matches!(ld, GemmError::LeadingDim { operand: 'C', .. }), "{ld}");
        let short = of(&spec, Dims::new(8, 8, 0), [0, 0, 63]).unwrap_err();
        assert!(matches!(short, GemmError::BufferTooSmall { operand: 'C', needed: 64, .. }), "{short}");
        // A and B hold nothing over K = 0: empty buffers are theirs
        assert!(matches!(of(&spec, Dims::new(8, 8, 0), [0, 0, 64]).unwrap(), Empty::ZeroK(_)));
        // what the kernel refuses at any K, before any zeros are allocated: problems writing one C
        let overlap = of(&spec, Dims::new(8, 8, 0).batched(2, 0, 0, 0), [0, 0, 64]).unwrap_err();
        assert!(matches!(overlap, GemmError::Batch(_)), "{overlap}");
        let wide = of(&spec, Dims::new(8, 1 << 31, 0), [0, 0, usize::MAX]).unwrap_err();
        assert!(matches!(wide, GemmError::IndexOverflow { .. }), "{wide}");
    }

    #[test]
    fn zeros_over_k_0_are_one_k_tile_on_128_byte_lines_in_the_kernels_layouts() {
        let spec = test_specs::tma_store(); // A row-major, B column-major, block k 64
        let z = zero_k_of(&spec, Dims::new(100, 30, 0));
        assert_eq!((z.dims.m, z.dims.n, z.dims.k, z.dims.lda, z.dims.ldb), (100, 30, 64, Some(64), Some(64)));
        assert_eq!(z.lens, [99 * 64 + 64, 29 * 64 + 64]);
        assert_eq!(z.scales, None);
        let shapes = spec_shapes(&spec, z.dims);
        assert!(fit_buffers(&shapes, [z.lens[0], z.lens[1], 100 * 30], z.dims.batch).is_ok());
    }

    #[test]
    fn a_batch_over_k_0_shares_zeros_where_the_caller_shared_an_operand() {
        let spec = test_specs::tma_store();
        let z = zero_k_of(&spec, Dims::new(8, 16, 0).batched(3, 0, 5, 8 * 16));
        assert_eq!((z.dims.batch.count, z.dims.batch.stride_a, z.dims.batch.stride_c), (3, 0, 128));
        // B: 16 columns of 64, 15 * 64 + 64 = 1024 elements a problem, 128-byte aligned apart
        assert_eq!(z.dims.batch.stride_b, 1024);
        assert_eq!(z.lens, [7 * 64 + 64, 2 * 1024 + 1024]);
    }

    #[test]
    fn block_scaled_zeros_come_with_a_k_blocks_scales() {
        use gemm_core::spec::{Elem, Fused};
        let e4m3 = Operand { elem: Elem::F8E4M3, layout: Layout::RowMajor };
        let fused = Fused { scale: Some(Scale::Block), ..Fused::default() };
        let tile = gemm_core::spec::Block { k: Some(128), ..test_specs::tma_store().block };
        let spec = KernelSpec { a: e4m3, b: Operand { layout: Layout::ColMajor, ..e4m3 }, block: tile, fused, ..test_specs::tma_store() };
        let z = zero_k_of(&spec, Dims::new(200, 300, 0));
        // one K block: 200 rows (a multiple of 4) and 3 x 1 of B's 128 x 128 blocks
        assert_eq!((z.dims.k, z.dims.lda, z.dims.ldb), (128, Some(128), Some(128)));
        assert_eq!(z.scales, Some((200, 3)));
    }
}
