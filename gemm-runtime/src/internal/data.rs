//! Comparisons of test results: poisoned outputs, relative error, tolerances.
//! (The random inputs are the ladder crate's: `gemm_ladder::measure::random_normal`.)

/// The value an output buffer is filled with before a kernel runs: any element
/// the kernel fails to write stays NaN and fails the comparison.
pub const POISON: f32 = f32::NAN;

/// `||out - reference|| / ||reference||`, or an error naming the first element
/// that is not finite (unwritten, or a NaN the kernel produced).
pub fn relative_error(out: &[f32], reference: &[f32]) -> Result<f64, String> {
    if out.len() != reference.len() {
        return Err(format!("lengths differ: {} vs {}", out.len(), reference.len()));
    }
    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for (i, (&o, &r)) in out.iter().zip(reference).enumerate() {
        if !o.is_finite() {
            return Err(format!("element {i} is {o} (reference {r}): unwritten or not finite"));
        }
        diff += (o as f64 - r as f64).powi(2);
        norm += (r as f64).powi(2);
    }
    Ok((diff / norm.max(f64::MIN_POSITIVE)).sqrt())
}

/// f32 kernels against cuBLAS sgemm differ by summation order only, around
/// 1e-6 at K = 4096; a wrong index or a race lands near 1.
pub const F32_TOLERANCE: f64 = 1e-4;

/// The largest relative error against cuBLAS (`||C - C_cublas|| / ||C_cublas||`)
/// a correct kernel shows for C in `elem`, with f32 accumulation on both sides.
///
/// With 16-bit operands every product is exact in f32, so the two f32 sums
/// differ by summation order only (as for f32 operands: about 1e-6). A
/// 16-bit C then rounds each sum: two nearly equal sums round to the same
/// value or to neighbours one unit in the last place (ulp) apart, and only
/// near a rounding boundary: a correct kernel shows about 1e-4 (bf16). The
/// bound, 2^-8 for bf16 and 2^-11 for f16, is about one ulp relative: what C
/// would show if nearly every element were a unit off. A wrong index, a race
/// or an unwritten tile lands near 1.
pub fn tolerance(elem: gemm_core::spec::Elem) -> f64 {
    match elem {
        gemm_core::spec::Elem::F32 => F32_TOLERANCE,
        gemm_core::spec::Elem::F16 => 2f64.powi(-11),
        gemm_core::spec::Elem::Bf16 => 2f64.powi(-8),
        // (never C's type: the rules keep 8-bit floats to A and B)
        gemm_core::spec::Elem::F8E4M3 => 2f64.powi(-3),
        gemm_core::spec::Elem::F8E5M2 => 2f64.powi(-2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_error_rejects_poisoned_elements() {
        assert!(relative_error(&[1.0, POISON], &[1.0, 2.0]).is_err());
        assert_eq!(relative_error(&[1.0, 2.0], &[1.0, 2.0]), Ok(0.0));
        assert!(relative_error(&[1.0, 3.0], &[1.0, 2.0]).unwrap() > 0.4);
    }
}
