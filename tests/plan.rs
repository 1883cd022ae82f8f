//! A launch's checks on arguments of every size, no GPU needed: what the
//! launcher works out before it launches (sizes, leading dimensions,
//! buffer lengths, batches, alignment and which operands it copies).

use gemm_runtime::internal::realign::{plan, Machine};
use gemm_runtime::{Dims, Plan};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// Every step's, grouped kernel's, combination's and tuned point's plan for arguments drawn from extreme values (0, 1, odd,
/// around 2^31 and 2^32, usize's largest) in every size, leading
/// dimension, batch count and stride, buffer length and address: an
/// answer, `Ok` or an `Err`, never a panic; a plan only where the
/// buffers hold what the sizes ask, and `Plan::Empty` for an empty product.
#[test]
fn plans_for_extreme_arguments_are_answers_never_panics() {
    const VALUES: [usize; 12] = [0, 1, 2, 7, 8, 65, 4096, (1 << 31) - 1, 1 << 31, (1 << 32) + 1, usize::MAX / 2, usize::MAX];
    // (`GEMM_TILES_TEST_SEED=N` draws others)
    let seed = 20261127 + std::env::var("GEMM_TILES_TEST_SEED").map_or(0, |v| v.parse::<u64>().expect("GEMM_TILES_TEST_SEED is a number"));
    let mut rng = StdRng::seed_from_u64(seed);
    let pick = |rng: &mut StdRng| if rng.random_bool(0.5) { VALUES[rng.random_range(0..VALUES.len())] } else { rng.random_range(1..5000) };
    use gemm_ladder::grouped::*;
    // the ladders' steps and the grouped kernels (whose misaligned C goes to a variant)
    let grouped = [
        &grouped_masked::KERNEL,
        &grouped_contiguous::KERNEL,
        &grouped_indexed::KERNEL,
        &grouped_swiglu::KERNEL,
        &grouped_masked_swiglu::KERNEL,
        &grouped_fp8_swiglu::KERNEL,
        &grouped_contiguous_sm80::KERNEL,
    ];
    // and every combination of paths, types, layouts, epilogues and scales, and each tuned space's points
    let combos: Vec<_> = gemm_ladder::combos::fused()
        .into_iter()
        .chain(gemm_ladder::combos::guarded())
        .chain(gemm_ladder::combos::hopper())
        .chain(gemm_ladder::combos::hopper_fp8())
        .chain(gemm_ladder::combos::mma_fp8())
        .chain(gemm_ladder::tuned::ALL.iter().flat_map(|t| t.points().to_vec()))
        .collect();
    let specs: Vec<_> = gemm_ladder::steps::all().map(|s| &s.kernel.spec).chain(grouped.map(|k| &k.spec)).chain(&combos).collect();
    let (mut planned, mut refused) = (0, 0);
    for _ in 0..100_000 {
        let spec = specs[rng.random_range(0..specs.len())];
        let mut dims = Dims::new(pick(&mut rng), pick(&mut rng), pick(&mut rng));
        if rng.random_bool(0.5) {
            dims = dims.with_ld(pick(&mut rng), pick(&mut rng), pick(&mut rng));
        }
        if rng.random_bool(0.3) {
            dims = dims.batched(pick(&mut rng), pick(&mut rng), pick(&mut rng), pick(&mut rng));
        }
        // buffers as long as the sizes ask (every problem's), now and then a little short, or drawn
        let shapes = gemm_runtime::internal::spec_shapes(spec, dims);
        let b = dims.batch;
        let strides = [b.stride_a, b.stride_b, b.stride_c];
        let lens = [0, 1, 2].map(|i| match rng.random_range(0..3) {
            0 => pick(&mut rng),
            _ => (b.count.max(1) - 1).saturating_mul(strides[i]).saturating_add(shapes[i].span()).saturating_sub(rng.random_range(0..2)),
        });
        let addrs = [(); 3].map(|_| if rng.random_bool(0.5) { 1 << 40 } else { (1u64 << 40) + rng.random_range(0..64) });
        // (a device of any size: one SM to thousands, memory from slow to fast)
        let machine = Machine { sms: rng.random_range(1..2000), memory_bytes_per_s: rng.random_range(1e10..1e14) };
        let answer = std::panic::catch_unwind(|| plan(spec, dims, lens, addrs, machine));
        let Ok(answer) = answer else { panic!("{}: plan panicked on {dims:?}, lens {lens:?}, addresses {addrs:?}", spec.name) };
        match answer {
            Ok(p) => {
                // an empty product plans as one, and only it
                assert_eq!(p == Plan::Empty, dims.is_empty(), "{}: {dims:?} planned {p:?}", spec.name);
                // the sizes fit in the buffers given (a batch of no problems asks none)
                for (s, len) in shapes.iter().zip(lens).filter(|_| b.count > 0) {
                    assert!(s.span() <= len, "{}: planned {dims:?} with {} in {len} elements", spec.name, s.span());
                }
                planned += 1;
            }
            Err(_) => refused += 1,
        }
    }
    assert!(planned > 100 && refused > 100, "{planned} planned, {refused} refused");
}
