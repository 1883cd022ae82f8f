//! The epilogue's run-time arguments: A's and B's scales, `alpha`, `beta`
//! and the bias vector, each given exactly where the kernel's spec declares it.

use cudarc::driver::DevicePtr;
use gemm_core::spec::{Dim, KernelSpec};

use crate::args::{Dims, Element};
use crate::GemmError;

/// What a launch passes to the fused epilogue. Build it as
/// `EpilogueArgs::new().alpha(2.0).beta(0.5).bias(&bias)`; the macro's
/// launchers do so from their parameters.
pub struct EpilogueArgs<'a, T = f32> {
    /// Device buffers whose first f32 scales A and B (`scale = tensor`).
    pub scales: Option<(&'a dyn DevicePtr<f32>, &'a dyn DevicePtr<f32>)>,
    pub alpha: Option<f32>,
    pub beta: Option<f32>,
    pub bias: Option<&'a dyn DevicePtr<T>>,
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
        EpilogueArgs { scales: None, alpha: None, beta: None, bias: None }
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
        EpilogueArgs { scales: self.scales, alpha: self.alpha, beta: self.beta, bias: Some(bias) }
    }

    /// A's and B's scales: device buffers whose first f32 the kernel reads
    /// at launch (so that a CUDA graph replays whatever they hold then).
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
                return err(format!("computes {}, with no scales; leave them out or declare `scale = tensor` in the spec's epilogue", spec.formula()))
            }
            (true, Some((a, b))) if a.len() == 0 || b.len() == 0 => return err("reads one f32 from each scale buffer, but one is empty".into()),
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
