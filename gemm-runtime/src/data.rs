//! Test data and comparisons: random normal inputs, poisoned outputs, relative error.

/// `len` samples of N(0, 1) from a fixed seed (xorshift64* and Box-Muller):
/// the same data on every machine, no zeros or constants.
pub fn random_normal(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let bits = state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        (bits as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut out = Vec::with_capacity(len + 1);
    while out.len() < len {
        let (u1, u2) = (uniform(), uniform());
        let r = (-2.0 * u1.ln()).sqrt();
        let t = std::f64::consts::TAU * u2;
        out.push((r * t.cos()) as f32);
        out.push((r * t.sin()) as f32);
    }
    out.truncate(len);
    out
}

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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_normal_has_zero_mean_and_unit_variance() {
        let v = random_normal(100_000, 7);
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.02, "mean {mean}");
        assert!((var - 1.0).abs() < 0.03, "variance {var}");
        assert_ne!(random_normal(8, 1), random_normal(8, 2));
    }

    #[test]
    fn relative_error_rejects_poisoned_elements() {
        assert!(relative_error(&[1.0, POISON], &[1.0, 2.0]).is_err());
        assert_eq!(relative_error(&[1.0, 2.0], &[1.0, 2.0]), Ok(0.0));
        assert!(relative_error(&[1.0, 3.0], &[1.0, 2.0]).unwrap() > 0.4);
    }
}
