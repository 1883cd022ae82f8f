//! The epilogue's run-time arguments: A's and B's scales, `alpha`, `beta`
//! and the bias vector, each given exactly where the kernel's spec declares
//! it; and a grouped batch's rows (`groups = masked | contiguous`), which
//! the launch passes beside them.

use cudarc::driver::DevicePtr;
use gemm_core::spec::{Dim, Groups, KernelSpec, Scale};

use crate::args::{Dims, Element};
use crate::GemmError;

/// What a launch passes to the fused epilogue. Build it as
/// `EpilogueArgs::new().alpha(2.0).beta(0.5).bias(&bias)`; the macro's
/// launchers do so from their parameters.
pub struct EpilogueArgs<'a, T = f32> {
    /// A's and B's scales (`scale = tensor`, `channel` or `block`), f32 device buffers.
    pub scales: Option<(&'a dyn DevicePtr<f32>, &'a dyn DevicePtr<f32>)>,
    pub alpha: Option<f32>,
    pub beta: Option<f32>,
    pub bias: Option<&'a dyn DevicePtr<T>>,
    /// `groups = ..`: the rows each problem of the batch holds (masked) or
    /// where each group's rows end (contiguous), i32 on the device.
    pub groups: Option<&'a dyn DevicePtr<i32>>,
    /// A persistent kernel's grid at most this many blocks (whole clusters),
    /// leaving the other SMs to kernels on other streams: a collective run
    /// beside the GEMM, for one. `None`: what the device holds at once.
    pub max_blocks: Option<u32>,
}

// by hand: a derive would ask T: Clone, which the bias's reference does not need
impl<T> Clone for EpilogueArgs<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for EpilogueArgs<'_, T> {}

impl EpilogueArgs<'static, f32> {
    /// No arguments: `C = A * B`.
    pub fn new() -> Self {
        EpilogueArgs { scales: None, alpha: None, beta: None, bias: None, groups: None, max_blocks: None }
    }
}

impl Default for EpilogueArgs<'static, f32> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a, T> EpilogueArgs<'a, T> {
    pub fn alpha(self, alpha: f32) -> Self {
        EpilogueArgs { alpha: Some(alpha), ..self }
    }

    pub fn beta(self, beta: f32) -> Self {
        EpilogueArgs { beta: Some(beta), ..self }
    }

    /// The bias vector, in the element type the spec declares.
    pub fn bias<U>(self, bias: &'a dyn DevicePtr<U>) -> EpilogueArgs<'a, U> {
        EpilogueArgs { scales: self.scales, alpha: self.alpha, beta: self.beta, bias: Some(bias), groups: self.groups, max_blocks: self.max_blocks }
    }

    /// The device array of i32 the spec's `groups` read, one per problem
    /// of the batch: under `groups = masked` the rows each holds (at most
    /// m; a negative count holds none), under `groups = contiguous` where
    /// each group's rows of A and C end. Read on the device at launch, so
    /// that a CUDA graph replays whatever the buffer holds then.
    pub fn groups(self, array: &'a dyn DevicePtr<i32>) -> Self {
        EpilogueArgs { groups: Some(array), ..self }
    }

    /// At most `blocks` blocks for a persistent kernel's grid (rounded down
    /// to whole clusters, at least one), so that a kernel on another stream
    /// finds SMs free while this one runs. Only persistent kernels take it.
    pub fn max_blocks(self, blocks: u32) -> Self {
        EpilogueArgs { max_blocks: Some(blocks), ..self }
    }

    /// A's and B's scales: device buffers of f32 that the kernel reads at
    /// launch (so that a CUDA graph replays whatever they hold then), laid
    /// out as the spec's [`Scale`] says.
    pub fn scales(self, a: &'a dyn DevicePtr<f32>, b: &'a dyn DevicePtr<f32>) -> Self {
        EpilogueArgs { scales: Some((a, b)), ..self }
    }
}

impl<T: Element> EpilogueArgs<'_, T> {
    /// Each argument is given where the spec declares it and only there, in
    /// its type, and the bias holds every batch's vector.
    pub(crate) fn check(&self, spec: &KernelSpec, kernel: &str, dims: &Dims) -> Result<(), GemmError> {
        let f = spec.fused;
        let err = |what: String| Err(GemmError::EpilogueArgs { kernel: kernel.to_string(), what });
        match (f.scale.is_some(), self.scales) {
            (true, None) => return err(format!("computes {}: give A's and B's scales", spec.formula())),
            (false, Some(_)) => {
                return err(format!(
                    "computes {}, with no scales; leave them out or declare `scale = tensor | channel | block` in the spec's epilogue",
                    spec.formula()
                ))
            }
            _ => {}
        }
        if let (Some(scale), Some((a, b))) = (f.scale, self.scales) {
            let (need_a, need_b) = scale.batch_lens(dims.m, dims.n, dims.k, (dims.batch.count, dims.batch.stride_a, dims.batch.stride_b));
            let what = match scale {
                Scale::Tensor => "one f32 for A and one for B".to_string(),
                Scale::Channel => format!("A's m = {} row scales and B's n = {} column scales", dims.m, dims.n),
                Scale::Block if dims.batch.count > 1 => format!(
                    "A's scales per row and 128-wide K block and B's per 128 x 128 block, each problem's after the one before where its operand is not shared ({need_a} and {need_b} f32s)"
                ),
                Scale::Block => format!(
                    "A's scales per row and 128-wide K block ({need_a} f32s: ceil(k / 128) x m rounded up to 4) and B's per 128 x 128 block ({need_b}: ceil(n / 128) x ceil(k / 128))"
                ),
            };
            if a.len() < need_a || b.len() < need_b {
                return err(format!("reads {what}, but the scale buffers hold {} and {}", a.len(), b.len()));
            }
            if scale == Scale::Channel && dims.batch.count > 1 {
                return err(format!(
                    "scale = {} reads one problem's scales: launch a batch of {} one problem at a time",
                    scale.name(),
                    dims.batch.count
                ));
            }
        }
        match (self.max_blocks, spec.persistent) {
            (Some(0), _) => return err("max_blocks(0) leaves the grid no block: give at least 1".to_string()),
            (Some(b), None) => {
                return err(format!(
                    "max_blocks({b}) caps a persistent grid, but this kernel runs a block per C tile: leave it out, or declare `persistent`"
                ))
            }
            _ => {}
        }
        match (spec.groups, self.groups) {
            (Some(Groups::Indexed), None) => return err("groups = indexed: give `row_groups`, one i32 per row of A and C".to_string()),
            (Some(g), None) => return err(format!("groups = {}: give `{}`, one i32 per problem of the batch", g.name(), g.array())),
            (None, Some(_)) => {
                return err("reads no groups: declare `groups = masked | contiguous | indexed` in the spec, or leave the array out".to_string())
            }
            (Some(Groups::Indexed), Some(array)) if array.len() < dims.m => {
                return err(format!("reads `row_groups` for each of A's and C's m = {} rows, but its buffer holds {}", dims.m, array.len()))
            }
            (Some(g), Some(array)) if g != Groups::Indexed && array.len() < dims.batch.count => {
                return err(format!(
                    "reads `{}` for each of the batch's {} problems, but its buffer holds {}",
                    g.array(),
                    dims.batch.count,
                    array.len()
                ))
            }
            (Some(g), Some(_)) if g.one_a_and_c() && (dims.batch.stride_a != 0 || dims.batch.stride_c != 0) => {
                return err(format!(
                    "groups = {}: the groups' rows lie one after another in one A and one C, so their batch strides are 0, not {} and {}",
                    g.name(),
                    dims.batch.stride_a,
                    dims.batch.stride_c
                ))
            }
            _ => {}
        }
        for (name, declared, given) in [("alpha", f.alpha, self.alpha.is_some()), ("beta", f.beta, self.beta.is_some())] {
            match (declared, given) {
                (true, false) => return err(format!("computes {}: give `{name}`", spec.formula())),
                (false, true) => {
                    return err(format!("computes {}, with no `{name}`; leave it out or declare it in the spec's epilogue", spec.formula()))
                }
                _ => {}
            }
        }
        if let Some(v) = self.alpha.iter().chain(&self.beta).find(|v| !v.is_finite()) {
            return err(format!("takes finite alpha and beta, not {v}"));
        }
        match (f.bias, self.bias) {
            (Some(_), None) => err(format!("computes {}: give the bias vector", spec.formula())),
            (None, Some(_)) => {
                err(format!("computes {}, with no bias; leave it out or declare `bias = n` or `bias = m` in the spec", spec.formula()))
            }
            (Some(b), Some(buf)) => {
                if b.elem != T::ELEM {
                    return err(format!("adds a bias of {} but was given a buffer of {}", b.elem.rust_name(), T::ELEM.rust_name()));
                }
                let (len, side) = if b.along == Dim::N { (dims.n, "n") } else { (dims.m, "m") };
                let batch = dims.batch;
                let needed = (batch.count.max(1) - 1).saturating_mul(batch.stride_bias).saturating_add(len);
                if buf.len() < needed {
                    return err(format!(
                        "adds a bias of {side} = {len} values (per problem, {} problem(s) {} apart): it needs {needed} elements, but its buffer holds {}",
                        batch.count,
                        batch.stride_bias,
                        buf.len()
                    ));
                }
                Ok(())
            }
            (None, None) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_specs;
    use cudarc::driver::{CudaStream, DeviceSlice, SyncOnDrop};

    /// A device array of `len` i32 as the checks see it: only its length
    /// (the checks never touch the device).
    struct Array(usize);
    impl DeviceSlice<i32> for Array {
        fn len(&self) -> usize {
            self.0
        }
        fn stream(&self) -> &std::sync::Arc<CudaStream> {
            unreachable!("the checks read lengths only")
        }
    }
    impl DevicePtr<i32> for Array {
        fn device_ptr<'a>(&'a self, _stream: &'a CudaStream) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'a>) {
            (0, SyncOnDrop::Sync(None))
        }
    }

    fn grouped(groups: Groups) -> KernelSpec {
        KernelSpec { epilogue: gemm_core::spec::Epilogue::Vector, groups: Some(groups), ..test_specs::tma_store() }
    }

    fn message(r: Result<(), GemmError>) -> String {
        match r {
            Err(GemmError::EpilogueArgs { what, .. }) => what,
            other => panic!("expected an EpilogueArgs error, got {other:?}"),
        }
    }

    /// A grouped launch takes its array, one i32 a problem, and only a
    /// grouped spec takes one; the contiguous layout's A and C are one
    /// matrix each (batch strides 0).
    #[test]
    fn grouped_launches_take_one_i32_a_problem_and_contiguous_ones_one_a_and_c() {
        let masked = grouped(Groups::Masked);
        assert!(gemm_core::check(&masked).is_empty(), "{:?}", gemm_core::check(&masked));
        let batch = Dims::new(256, 256, 64).batched(4, 256 * 64, 256 * 64, 256 * 256);
        let (enough, short) = (Array(4), Array(3));
        assert!(EpilogueArgs::new().groups(&enough).check(&masked, "k", &batch).is_ok());
        assert!(message(EpilogueArgs::new().check(&masked, "k", &batch)).contains("give `group_rows`"));
        assert!(message(EpilogueArgs::new().groups(&short).check(&masked, "k", &batch)).contains("holds 3"));
        let plain = test_specs::tma_store();
        assert!(message(EpilogueArgs::new().groups(&enough).check(&plain, "k", &batch)).contains("reads no groups"));
        let contiguous = grouped(Groups::Contiguous);
        assert!(gemm_core::check(&contiguous).is_empty(), "{:?}", gemm_core::check(&contiguous));
        let one_a_and_c = Dims::new(1000, 256, 64).batched(4, 0, 256 * 64, 0);
        assert!(EpilogueArgs::new().groups(&enough).check(&contiguous, "k", &one_a_and_c).is_ok());
        assert!(message(EpilogueArgs::new().groups(&enough).check(&contiguous, "k", &batch)).contains("batch strides are 0"));
        assert!(message(EpilogueArgs::new().check(&contiguous, "k", &one_a_and_c)).contains("give `group_ends`"));
    }

    /// A cap on the grid is for persistent kernels, and at least a block.
    #[test]
    fn max_blocks_caps_persistent_grids_only_and_leaves_at_least_one_block() {
        let persistent = test_specs::tma_store();
        assert!(persistent.persistent.is_some(), "the spec walks tiles");
        let dims = Dims::new(256, 256, 64);
        assert!(EpilogueArgs::new().max_blocks(100).check(&persistent, "k", &dims).is_ok());
        assert!(message(EpilogueArgs::new().max_blocks(0).check(&persistent, "k", &dims)).contains("at least 1"));
        let per_tile = KernelSpec { persistent: None, ..persistent };
        assert!(message(EpilogueArgs::new().max_blocks(100).check(&per_tile, "k", &dims)).contains("a block per C tile"));
    }

    /// The indexed (aligned) form takes one i32 a row of A and C, not a
    /// problem, and one A and one C as the contiguous layout does.
    #[test]
    fn indexed_groups_take_one_i32_a_row() {
        let indexed = grouped(Groups::Indexed);
        assert!(gemm_core::check(&indexed).is_empty(), "{:?}", gemm_core::check(&indexed));
        let dims = Dims::new(1000, 256, 64).batched(4, 0, 256 * 64, 0);
        assert!(EpilogueArgs::new().groups(&Array(1000)).check(&indexed, "k", &dims).is_ok());
        assert!(message(EpilogueArgs::new().groups(&Array(999)).check(&indexed, "k", &dims)).contains("m = 1000 rows, but its buffer holds 999"));
        assert!(message(EpilogueArgs::new().check(&indexed, "k", &dims)).contains("give `row_groups`, one i32 per row"));
        let strided = Dims::new(250, 256, 64).batched(4, 250 * 64, 256 * 64, 0);
        assert!(message(EpilogueArgs::new().groups(&Array(1000)).check(&indexed, "k", &strided)).contains("batch strides are 0"));
    }
}
