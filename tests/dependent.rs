//! Dependent launches (`Kernel::launch_dependent`): a kernel that starts
//! while the stream's previous kernel finishes must wait for it before it
//! reads what that kernel wrote, or writes what it reads. Ignored where
//! there is no GPU; `.gpu/run-tests` runs them on the GPU host.

use gemm_ladder::decode::{decode_cluster, decode_split, decode_swapped};
use gemm_ladder::measure::{random_normal, Bench, DevMat};
use gemm_ladder::steps::hopper_autotuned;
use gemm_runtime::spec::{Elem, Staging};
use gemm_runtime::{Dims, EpilogueArgs, GemmError, Kernel};

/// The width of the chained layers, and how many there are.
const D: usize = 2048;
const LAYERS: usize = 12;

/// `x_{i+1} = x_i W_i` for every layer, each launch reading the output of
/// the one before, launched back to back (dependent or plain); the last
/// output. `swapped`: the kernel computes `C^T = W^T x^T` (W is A).
fn chain(
    bench: &Bench,
    kernel: &Kernel,
    weights: &[DevMat],
    x0: &[f32],
    tokens: usize,
    swapped: bool,
    dependent: bool,
) -> Result<Vec<f32>, GemmError> {
    let s = bench.stream();
    let poison = vec![f32::NAN; x0.len()];
    let mut xs = vec![DevMat::from_f32(s, Elem::Bf16, x0)?];
    for _ in 0..weights.len() {
        xs.push(DevMat::from_f32(s, Elem::Bf16, &poison)?);
    }
    let dims = if swapped { Dims::new(D, tokens, D) } else { Dims::new(tokens, D, D) };
    for (i, w) in weights.iter().enumerate() {
        let (done, next) = xs.split_at_mut(i + 1);
        let (DevMat::Bf16(x), DevMat::Bf16(y), DevMat::Bf16(w)) = (&done[i], &mut next[0], w) else { unreachable!("bf16 throughout") };
        let (a, b) = if swapped { (w, x) } else { (x, w) };
        if dependent {
            kernel.launch_dependent(s, a, b, y, dims, EpilogueArgs::new())?;
        } else {
            kernel.launch(s, a, b, y, dims)?;
        }
    }
    xs[weights.len()].to_f32(s)
}

/// Layers chained on one stream, `x_{i+1} = x_i W_i`: launched dependent,
/// each starts while the one before finishes and reads `x_i` only once
/// that one is done (a stream-K kernel also takes its ticket and reuses the
/// stream's scratch only then). The chain's output matches the same chain
/// of plain launches bit for bit (the kernels are deterministic), for a
/// kernel of a block per tile, a stream-K one, a persistent one, and ones
/// that prefetch the start of both operands into the L2 before they wait
/// (`x_i` among them, as the layer before writes it) and let the next
/// layer start once their copies are issued.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_dependent_launch_reads_the_layer_before_only_once_it_is_done() {
    let bench = Bench::open().expect("a CUDA GPU with cuBLAS");
    if bench.gpu.capability != (9, 0) {
        eprintln!("skipped: the kernels that wait for the one before are sm_90a (Hopper)");
        return;
    }
    let s = bench.stream();
    // W_i ~ N(0, 1 / D): the activations keep their scale through the layers
    let scale = 1.0 / (D as f32).sqrt();
    let weights: Vec<DevMat> = (0..LAYERS)
        .map(|i| DevMat::from_f32(s, Elem::Bf16, &random_normal(D * D, 40 + i as u64).iter().map(|x| x * scale).collect::<Vec<_>>()).unwrap())
        .collect();
    // points that prefetch before they wait, and let the next launch start early
    let prefetching = |t: &'static gemm_runtime::Tuned, steps: u32| {
        t.kernels().find(|k| matches!(k.spec.staging, Staging::Tma { prefetch, .. } if prefetch == steps)).expect("a point that prefetches")
    };
    let kernels: [(&Kernel, usize, bool); 6] = [
        (decode_swapped::KERNEL.kernel(0), 16, true),
        (decode_split::KERNEL.kernel(0), 16, true),
        (&hopper_autotuned::KERNEL, 512, false),
        (prefetching(&decode_swapped::KERNEL, 2), 16, true),
        (prefetching(&decode_swapped::KERNEL, 4), 16, true),
        (prefetching(&decode_cluster::KERNEL, 4), 16, true),
    ];
    for (kernel, tokens, swapped) in kernels {
        assert!(kernel.waits_for_previous(), "{}: a Hopper kernel waits for the one before", kernel.name);
        let x0 = random_normal(tokens * D, 7);
        let plain = chain(&bench, kernel, &weights, &x0, tokens, swapped, false).unwrap();
        let spread = (plain.iter().map(|x| x * x).sum::<f32>() / plain.len() as f32).sqrt();
        assert!(spread > 0.1 && spread < 10.0, "{}: the plain chain's output has spread {spread}", kernel.name);
        for run in 0..3 {
            let dependent = chain(&bench, kernel, &weights, &x0, tokens, swapped, true).unwrap();
            let differ = plain.iter().zip(&dependent).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
            assert_eq!(differ, 0, "{} (run {run}): {differ} of {} outputs differ from the plain chain's", kernel.name, plain.len());
        }
    }
}

/// A tuned kernel launched dependent chooses its point for such launches
/// on its own: a plain launch's choice does not serve it, its first
/// dependent launch at a shape tunes (timing the points launched dependent
/// back to back), a second one does not, and C matches cuBLAS.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tuned_kernel_launched_dependent_chooses_its_point_on_its_own() {
    // choices from this process alone, none from an earlier one on disk
    std::env::set_var("GEMM_TILES_CACHE", "off");
    let bench = Bench::open().expect("a CUDA GPU with cuBLAS");
    if bench.gpu.capability != (9, 0) {
        eprintln!("skipped: decode_swapped is sm_90a (Hopper)");
        return;
    }
    let tuned = &decode_swapped::KERNEL;
    // 8 tokens against a 1000 x 1000 weight, swapped: C^T (1000 x 8) = W^T x^T
    let dims = gemm_ladder::measure::padded_dims(1000, 8, 1000, {
        let s = &tuned.points()[0];
        [s.a.layout, s.b.layout, s.c.layout]
    });
    let p = gemm_ladder::measure::Problem::for_kernel(&bench, tuned.kernel(0), dims, 11).unwrap();
    let reference = p.reference(&bench).unwrap();
    let check = |c: &DevMat| {
        let err = gemm_runtime::internal::data::relative_error(&c.to_f32(bench.stream()).unwrap(), &reference).unwrap();
        assert!(err <= gemm_runtime::internal::data::tolerance(Elem::Bf16), "relative error {err:.2e} against cuBLAS");
    };
    let mut c = p.poisoned_c(&bench).unwrap();
    p.launch_tuned(&bench, tuned, &mut c).unwrap();
    check(&c);
    assert!(tuned.chosen_for(bench.stream(), dims).unwrap().is_some());
    assert!(tuned.chosen_for_dependent(bench.stream(), dims).unwrap().is_none(), "the plain choice serves dependent launches");
    let before = gemm_runtime::Tuned::tunings();
    for launch in 0..2 {
        let mut c = p.poisoned_c(&bench).unwrap();
        p.launch_tuned_dependent(&bench, tuned, &mut c).unwrap();
        check(&c);
        assert_eq!(gemm_runtime::Tuned::tunings(), before + 1, "dependent launch {launch}: one tuning, at the first");
    }
    assert!(tuned.chosen_for_dependent(bench.stream(), dims).unwrap().is_some());
    let devices: Vec<String> = tuned.choices().into_iter().map(|c| c.device).collect();
    assert!(devices.iter().any(|d| d.ends_with(", launched dependent")), "{devices:?}");
}
