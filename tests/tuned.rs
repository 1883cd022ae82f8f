//! Tuned kernels (`gemm_ladder::tuned`, and the decode kernels of
//! `gemm_ladder::decode`): their spaces, seeded choices, and
//! on the GPU the choice per key, checked against cuBLAS, and a second
//! process that finds every choice on disk and tunes nothing.

use std::path::PathBuf;

use gemm_ladder::decode;
use gemm_ladder::fused::{verify_tuned_fused, Scalars};
use gemm_ladder::measure::{kernel_tolerance, Bench, Problem};
use gemm_ladder::tuned::{fp8_block_tuned, fp8_tuned, hopper_tuned, mma_fp8_block_tuned_sm89, mma_fp8_tuned_sm89, mma_tuned, simt_tuned};
use gemm_runtime::internal::data::relative_error;
use gemm_runtime::{bf16, gemm_kernel, Bias, Dims, Kernel, Mat, MatMut, RowMajor, Tuned};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gemm-tiles-tuned-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Each tuned kernel's space holds its legal points, every one of which
/// generates, and its step's own spec among them.
#[test]
fn the_tuned_kernels_spaces_hold_legal_points_only() {
    let spaces = [
        (&simt_tuned::KERNEL, 8),
        (&mma_tuned::KERNEL, 15),
        (&hopper_tuned::KERNEL, 48),
        (&fp8_tuned::KERNEL, 33),
        (&fp8_block_tuned::KERNEL, 236),
        (&mma_fp8_tuned_sm89::KERNEL, 7),
        (&mma_fp8_block_tuned_sm89::KERNEL, 11),
    ];
    // (and the tools find each by its name)
    assert_eq!(gemm_ladder::tuned::ALL.len(), spaces.len());
    for (tuned, points) in spaces {
        assert!(gemm_ladder::tuned::named(tuned.name()).is_some_and(|t| std::ptr::eq(t, tuned)), "{}", tuned.name());
        assert_eq!(tuned.points().len(), points, "{}", tuned.name());
        for k in tuned.kernels() {
            assert!(gemm_runtime::gemm_core::check(&k.spec).is_empty(), "{}", k.name);
        }
    }
    let step = &gemm_ladder::steps::mma_autotuned::KERNEL.spec;
    let same = |s: &gemm_runtime::spec::KernelSpec| gemm_runtime::spec::KernelSpec { name: step.name.clone(), ..s.clone() } == *step;
    assert!(mma_tuned::KERNEL.points().iter().any(same), "mma_autotuned is a point of mma_tuned");
    let step = &gemm_ladder::fp8::fp8_autotuned::KERNEL.spec;
    let same = |s: &gemm_runtime::spec::KernelSpec| gemm_runtime::spec::KernelSpec { name: step.name.clone(), ..s.clone() } == *step;
    assert!(fp8_tuned::KERNEL.points().iter().any(same), "fp8_autotuned is a point of fp8_tuned");
    // Ada's 8-bit kernels are points of their tuned spaces
    for (step, tuned) in [
        (&gemm_ladder::steps::mma_fp8_sm89::KERNEL, &mma_fp8_tuned_sm89::KERNEL),
        (&gemm_ladder::steps::mma_fp8_block_sm89::KERNEL, &mma_fp8_block_tuned_sm89::KERNEL),
    ] {
        let same = |s: &gemm_runtime::spec::KernelSpec| gemm_runtime::spec::KernelSpec { name: step.spec.name.clone(), ..s.clone() } == step.spec;
        assert!(tuned.points().iter().any(same), "{} is a point of {}", step.name, tuned.name());
    }
    // the block-scaled space's tiles split along K over a cluster of two: a block a tile (no
    // persistent walk), their producers at the registers a split needs
    let split: Vec<_> = fp8_block_tuned::KERNEL.points().iter().filter(|s| s.k_split() == 2).collect();
    assert_eq!(split.len(), 98);
    assert!(split
        .iter()
        .all(|s| s.persistent.is_none() && s.specialize.unwrap().producer_regs == Some(gemm_runtime::gemm_core::tune::SPLIT_PRODUCER_REGS)));
    // the Hopper space's schedules: persistent walks, the hybrid and the tail split, a third each
    use gemm_runtime::spec::Persistent;
    for schedule in [Persistent::Tiles, Persistent::Hybrid, Persistent::TailSplit] {
        let count = hopper_tuned::KERNEL.points().iter().filter(|s| s.persistent == Some(schedule)).count();
        assert_eq!(count, 16, "{schedule:?}");
    }
    // and its block tiles, half each: 128 x 256 in two warpgroups of 64 x 256, 256 x 128 in two of 128 x 128
    for (m, n, warp) in [(128, 256, (64, 256)), (256, 128, (128, 128))] {
        let tiles: Vec<_> = hopper_tuned::KERNEL.points().iter().filter(|s| (s.block.m, s.block.n) == (m, n)).collect();
        assert_eq!(tiles.len(), 24, "{m} x {n}");
        assert!(tiles.iter().all(|s| s.warp.is_some_and(|w| (w.m, w.n) == warp) && s.block.threads == 384), "{m} x {n}");
    }
}

/// Choices written out read back into another tuned kernel's process
/// state; a malformed line is an error naming the file and line.
#[test]
fn choices_seed_from_a_file_and_malformed_lines_are_errors() {
    let dir = temp_dir("seed");
    let k = &mma_tuned::KERNEL;
    let second = &k.kernel(1).name;
    let path = dir.join("choices.txt");
    std::fs::write(
        &path,
        format!("# seeded\nNVIDIA H100 80GB HBM3 sm_90 | 4096 4096 4096 1 | {second}\nNVIDIA H100 80GB HBM3 sm_90 | 1 2 3 1 | not_a_point\n"),
    )
    .unwrap();
    assert_eq!(k.seed(&path).unwrap(), 1, "the line naming another kernel is skipped");
    let chosen = k.choices();
    assert!(chosen.iter().any(|c| c.shape == [4096, 4096, 4096, 1] && &c.kernel == second), "{chosen:?}");
    let out = dir.join("out.txt");
    k.write_choices(&out).unwrap();
    assert!(std::fs::read_to_string(&out).unwrap().contains(&format!("| 4096 4096 4096 1 | {second}")));
    std::fs::write(&path, "NVIDIA H100 | 4096 4096 | k\n").unwrap();
    let e = k.seed(&path).unwrap_err().to_string();
    assert!(e.contains("choices.txt:1") && e.contains("expected `device | m n k batch | kernel name`"), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The tuned kernels and the sizes they are checked at: two keys each.
fn cases() -> Vec<(&'static Tuned, Vec<Dims>)> {
    let padded = |m, n, k, t: &Tuned| {
        let s = &t.points()[0];
        gemm_ladder::measure::padded_dims(m, n, k, [s.a.layout, s.b.layout, s.c.layout])
    };
    let mut out = Vec::new();
    for t in [&simt_tuned::KERNEL, &mma_tuned::KERNEL, &hopper_tuned::KERNEL] {
        out.push((t, vec![padded(1024, 1024, 1024, t), padded(1000, 777, 333, t)]));
    }
    // decode shapes: one token and a few, and the swapped form's few columns
    let mma = &gemm_ladder::decode::decode_mma::KERNEL;
    out.push((mma, vec![Dims::new(1, 4096, 4096), Dims::new(37, 777, 1000), padded(64, 1024, 2048, mma)]));
    let swapped = &gemm_ladder::decode::decode_swapped::KERNEL;
    out.push((swapped, vec![Dims::new(4096, 1, 4096), Dims::new(777, 37, 1000), padded(1024, 64, 2048, swapped)]));
    // the same under stream-K: many blocks to a tile, partial tiles along both sides
    let split = &gemm_ladder::decode::decode_split::KERNEL;
    out.push((split, vec![Dims::new(4096, 1, 4096), Dims::new(777, 37, 1000), padded(1024, 64, 11008, split)]));
    // the same split over a cluster's two blocks, a K of one K step past a whole number
    let cluster = &gemm_ladder::decode::decode_cluster::KERNEL;
    out.push((cluster, vec![Dims::new(4096, 1, 4096), Dims::new(777, 37, 1000), padded(1024, 64, 11008, cluster)]));
    // 8-bit operands, their lines 16 bytes apart: the fp8 kernels with their scales, and the fp8
    // decode kernel's one token and a few
    let lines16 = |m, n, k, t: &Tuned| {
        let s = &t.points()[0];
        gemm_ladder::measure::dims_with_ld_multiple(m, n, k, [s.a.layout, s.b.layout, s.c.layout], 16)
    };
    for t in [&fp8_tuned::KERNEL, &fp8_block_tuned::KERNEL, &mma_fp8_tuned_sm89::KERNEL, &mma_fp8_block_tuned_sm89::KERNEL] {
        out.push((t, vec![lines16(1024, 1024, 1024, t), lines16(1000, 777, 333, t)]));
    }
    let fp8 = &gemm_ladder::decode::decode_fp8::KERNEL;
    out.push((fp8, vec![Dims::new(4096, 1, 4096), lines16(777, 37, 1000, fp8)]));
    // and Ada's, the product as written
    let ada = &gemm_ladder::decode::decode_fp8_sm89::KERNEL;
    out.push((ada, vec![Dims::new(1, 4096, 4096), lines16(37, 777, 1000, ada)]));
    out
}

/// Launches every case into a poisoned C and compares with cuBLAS.
fn check_cases(bench: &Bench) {
    for (tuned, sizes) in cases() {
        let first: &Kernel = tuned.kernel(0);
        if !first.spec.arch.runs_on(bench.gpu.capability) {
            continue;
        }
        for (i, dims) in sizes.into_iter().enumerate() {
            let p = Problem::for_kernel(bench, first, dims, 40 + i as u64).unwrap();
            let reference = p.reference(bench).unwrap();
            let mut c = p.poisoned_c(bench).unwrap();
            p.launch_tuned(bench, tuned, &mut c).unwrap_or_else(|e| panic!("{}: {e}", tuned.name()));
            let out = c.to_f32(bench.stream()).unwrap();
            let chosen = tuned.chosen_for(bench.stream(), dims).unwrap().expect("a choice after the launch");
            // C's elements only (past each line's end the buffer keeps its poison)
            let row_major = first.spec.c.layout == gemm_runtime::spec::Layout::RowMajor;
            let (lines, len) = if row_major { (dims.m, dims.n) } else { (dims.n, dims.m) };
            let ldc = dims.ldc.unwrap_or(len);
            let pick = |v: &[f32]| -> Vec<f32> { (0..lines).flat_map(|l| v[l * ldc..l * ldc + len].to_vec()).collect() };
            let err = relative_error(&pick(&out), &pick(&reference)).unwrap_or_else(|e| panic!("{}: {e}", chosen.name));
            assert!(err <= kernel_tolerance(&first.spec), "{} at {dims:?}: relative error {err:.1e}", chosen.name);
        }
    }
}

// A tuned kernel that reads C (beta) and adds a bias: tuning runs it many
// times on the caller's C, which must come out as it went in.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    epilogue = vector(alpha, beta, bias = n, activation = gelu_tanh),
    edges = guarded,
    tune(stages = [2, 3, 4]),
)]
fn fused_tuned(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>, bias: Bias<f32>);

/// Under beta, tuning saves C and puts it back before every run and
/// before the launch that counts: C = gelu(alpha A B + beta C + bias)
/// comes out against cuBLAS and the host's epilogue, at a new key and at a
/// key already tuned.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tuned_kernel_that_reads_c_leaves_it_as_it_found_it() {
    let bench = Bench::open().expect("a CUDA GPU");
    let scalars = Scalars { alpha: 1.25, beta: 0.5 };
    for (i, dims) in [Dims::new(300, 200, 100), Dims::new(300, 200, 100), Dims::new(129, 257, 65)].into_iter().enumerate() {
        verify_tuned_fused(&bench, &fused_tuned::KERNEL, dims, 60 + i as u64, scalars).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Each tuned kernel at two keys against cuBLAS, in a process of its own
/// on a fresh disk cache; then a second process sharing that cache
/// launches the same keys, finds every choice on disk and tunes nothing.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tuned_kernels_match_cublas_and_a_second_process_does_not_tune_again() {
    const NAME: &str = "tuned_kernels_match_cublas_and_a_second_process_does_not_tune_again";
    // Each phase runs in a process of its own with the cache's folder in its environment: the
    // cache's place and the choices made are the process's, and other tests of this binary
    // may run beside this one (tuning the same keys, or reading the environment).
    match std::env::var("GEMM_TUNED_PHASE").as_deref() {
        Ok("first") => {
            check_cases(&Bench::open().expect("a CUDA GPU"));
            assert!(Tuned::tunings() >= 4, "every new key tuned: {}", Tuned::tunings());
            return;
        }
        Ok("second") => {
            check_cases(&Bench::open().expect("a CUDA GPU"));
            assert_eq!(Tuned::tunings(), 0, "the second process tuned");
            return;
        }
        _ => {}
    }
    let dir = temp_dir("cache");
    for phase in ["first", "second"] {
        in_child_process(NAME, phase, &dir);
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs this binary's test `name` alone in a child process, with
/// `GEMM_TUNED_PHASE=phase` and the disk cache at `dir`: the cache's place
/// and the choices made are that process's, whatever other tests of this
/// binary do beside it. The child must run the test and pass.
fn in_child_process(name: &str, phase: &str, dir: &std::path::Path) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", name, "--test-threads=1"])
        .env(gemm_runtime::internal::disk_cache::ENV, dir)
        .env("GEMM_TUNED_PHASE", phase)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("1 passed"), "the {phase} process:\n{text}");
}

#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 2, vector = 8),
    swizzle = xor,
    edges = guarded,
    tune(stages = [2, 3]),
)]
fn captured(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

/// In a CUDA graph capture, a tuned kernel's launch at a shape with no
/// choice yet is an `Err` that says to launch it before, and the capture
/// goes on (what it captures next replays); launched once outside (it
/// tunes), the same launch is captured, tunes nothing, and the graph's
/// replay writes the product (small integers: exact in f32), over C
/// poisoned with NaN.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tuned_launch_in_a_graph_capture_needs_its_choice_made_before() {
    use gemm_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    use gemm_runtime::GemmError;
    const NAME: &str = "a_tuned_launch_in_a_graph_capture_needs_its_choice_made_before";
    // (in a process of its own on a fresh disk cache: no choice there from an earlier run)
    if std::env::var("GEMM_TUNED_PHASE").as_deref() != Ok("capture") {
        let dir = temp_dir("capture");
        in_child_process(NAME, "capture", &dir);
        let _ = std::fs::remove_dir_all(dir);
        return;
    }
    let gpu = gemm_runtime::device::open(0).expect("a CUDA GPU");
    // cudarc's event tracking would have the captured launch wait on events recorded outside the
    // capture, which a capture refuses: the test's work goes on one stream, in order
    // SAFETY: this process runs this test alone, and every buffer is used on `stream` only
    unsafe { gpu.ctx.disable_event_tracking() };
    // (the legacy default stream cannot be captured)
    let stream = &gpu.ctx.new_stream().unwrap();
    let (m, n, k) = (200, 136, 96);
    let dims = Dims::new(m, n, k);
    let a: Vec<bf16> = (0..m * k).map(|i| bf16::from_f32((i % 13) as f32 - 6.0)).collect();
    let b: Vec<bf16> = (0..k * n).map(|i| bf16::from_f32((i % 11) as f32 - 5.0)).collect();
    let product: Vec<f32> = (0..m * n).map(|e| (0..k).map(|p| a[(e / n) * k + p].to_f32() * b[p * n + e % n].to_f32()).sum()).collect();
    let (a, b) = (stream.clone_htod(&a).unwrap(), stream.clone_htod(&b).unwrap());
    let mut c = stream.clone_htod(&vec![f32::NAN; m * n]).unwrap();
    let capture = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;

    stream.begin_capture(capture).unwrap();
    match captured(stream, &a, &b, &mut c, dims) {
        Err(GemmError::Tuning(msg)) => assert!(msg.contains("launch it once at this shape before capturing"), "{msg}"),
        other => panic!("a first launch in a capture: {other:?}"),
    }
    // the capture goes on: a zeroing of C captured after the Err, replayed
    stream.memset_zeros(&mut c).unwrap();
    let graph = stream.end_capture(CUgraphInstantiate_flags(0)).expect("the capture left valid").expect("a graph of the zeroing");
    graph.launch().unwrap();
    assert!(stream.clone_dtoh(&c).unwrap().iter().all(|&x| x == 0.0), "the zeroing captured after the Err");
    assert_eq!(Tuned::tunings(), 0);

    stream.memcpy_htod(&vec![f32::NAN; m * n], &mut c).unwrap();
    captured(stream, &a, &b, &mut c, dims).unwrap();
    assert_eq!(Tuned::tunings(), 1, "the launch outside the capture tunes");
    assert_eq!(stream.clone_dtoh(&c).unwrap(), product, "the launch outside the capture");

    stream.memcpy_htod(&vec![f32::NAN; m * n], &mut c).unwrap();
    stream.begin_capture(capture).unwrap();
    captured(stream, &a, &b, &mut c, dims).unwrap();
    let graph = stream.end_capture(CUgraphInstantiate_flags(0)).unwrap().expect("a graph of the launch");
    graph.launch().unwrap();
    assert_eq!(stream.clone_dtoh(&c).unwrap(), product, "the graph's replay");
    assert_eq!(Tuned::tunings(), 1, "the captured launch tunes nothing");
}

/// Checks every point of `tuned`'s space whose index is `shard.0` modulo
/// `shard.1` against cuBLAS at one odd size, with partial tiles on every
/// side: not only the points a tuning picked here, since any of them is what
/// some shape's first launch may choose.
fn every_point_matches_cublas(tuned: &Tuned, (m, n, k): (usize, usize, usize), shard: (usize, usize)) {
    let bench = Bench::open().expect("a CUDA GPU");
    let (mut checked, mut failed) = (0, Vec::new());
    for (i, kernel) in tuned.kernels().enumerate().filter(|(i, _)| i % shard.1 == shard.0) {
        let spec = &kernel.spec;
        if !spec.arch.runs_on(bench.gpu.capability) {
            continue;
        }
        // 16-byte lines: 8 elements of 16 bits, 16 of 8
        let multiple = if spec.a.elem.is_fp8() { 16 } else { 8 };
        let dims = gemm_ladder::measure::dims_with_ld_multiple(m, n, k, [spec.a.layout, spec.b.layout, spec.c.layout], multiple);
        checked += 1;
        if let Err(e) = gemm_ladder::measure::verify(&bench, kernel, dims, 60 + i as u64) {
            failed.push(format!("{} ({} point {i}): {e}", kernel.name, tuned.name()));
        }
    }
    assert!(failed.is_empty(), "points of {checked} that do not match cuBLAS:\n{}", failed.join("\n"));
}

/// One GPU test per space (per shard of the largest), so that the spaces
/// compile side by side under `--test-threads` and each can be run alone.
macro_rules! every_point_tests {
    ($($test:ident: $kernel:expr, $size:expr, $shard:expr;)*) => {$(
        #[test]
        #[ignore = "needs a CUDA GPU"]
        fn $test() {
            every_point_matches_cublas(&$kernel, $size, $shard);
        }
    )*};
}

every_point_tests! {
    every_point_of_simt_tuned_matches_cublas: simt_tuned::KERNEL, (1000, 777, 333), (0, 1);
    every_point_of_mma_tuned_matches_cublas: mma_tuned::KERNEL, (1000, 777, 333), (0, 1);
    every_point_of_hopper_tuned_matches_cublas: hopper_tuned::KERNEL, (1000, 777, 333), (0, 1);
    // the decode kernels at a few tokens (the swapped ones take them as their N)
    every_point_of_decode_mma_matches_cublas: decode::decode_mma::KERNEL, (37, 777, 1000), (0, 1);
    every_point_of_decode_swapped_matches_cublas: decode::decode_swapped::KERNEL, (777, 37, 1000), (0, 1);
    every_point_of_decode_split_matches_cublas: decode::decode_split::KERNEL, (777, 37, 1000), (0, 1);
    every_point_of_decode_cluster_matches_cublas: decode::decode_cluster::KERNEL, (777, 37, 1000), (0, 1);
    // 8-bit operands with their scales; the block-scaled space in four shards
    every_point_of_fp8_tuned_matches_cublas: fp8_tuned::KERNEL, (1000, 777, 333), (0, 1);
    every_point_of_fp8_block_tuned_matches_cublas_0: fp8_block_tuned::KERNEL, (1000, 777, 333), (0, 4);
    every_point_of_fp8_block_tuned_matches_cublas_1: fp8_block_tuned::KERNEL, (1000, 777, 333), (1, 4);
    every_point_of_fp8_block_tuned_matches_cublas_2: fp8_block_tuned::KERNEL, (1000, 777, 333), (2, 4);
    every_point_of_fp8_block_tuned_matches_cublas_3: fp8_block_tuned::KERNEL, (1000, 777, 333), (3, 4);
    every_point_of_decode_fp8_matches_cublas: decode::decode_fp8::KERNEL, (777, 37, 1000), (0, 1);
    // Ada's, by mma.sync (emulated on Hopper)
    every_point_of_mma_fp8_tuned_sm89_matches_cublas: mma_fp8_tuned_sm89::KERNEL, (1000, 777, 333), (0, 1);
    every_point_of_mma_fp8_block_tuned_sm89_matches_cublas: mma_fp8_block_tuned_sm89::KERNEL, (1000, 777, 333), (0, 1);
    every_point_of_decode_fp8_sm89_matches_cublas: decode::decode_fp8_sm89::KERNEL, (37, 777, 1000), (0, 1);
}

/// The tuned kernels at seeded random shapes whose lines lie 1 to 9
/// elements past their length (none 16 bytes aligned but by chance), in
/// batches of one or two problems with odd gaps between them: a new key
/// tunes every point on the caller's misaligned buffers (each point's
/// variant or aligned copies), and C comes out against cuBLAS (and the
/// host's epilogue, under beta).
#[test]
#[ignore = "needs a CUDA GPU"]
fn tuned_kernels_on_random_misaligned_lines_and_batches_match_cublas() {
    use gemm_runtime::spec::Layout;
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let bench = Bench::open().expect("a CUDA GPU");
    let mut rng = StdRng::seed_from_u64(20261127);
    for (i, tuned) in [&simt_tuned::KERNEL, &mma_tuned::KERNEL, &hopper_tuned::KERNEL, &fused_tuned::KERNEL].into_iter().enumerate() {
        let spec = &tuned.points()[0];
        if spec.arch == gemm_runtime::spec::Arch::Sm90a && bench.gpu.capability != (9, 0) {
            continue;
        }
        for case in 0..2 {
            let (m, n, k) = (rng.random_range(1..=700usize), rng.random_range(1..=700usize), rng.random_range(1..=700usize));
            // (lines, length) of A, B and C in the spec's layouts
            let shape = |rows: usize, cols: usize, l: Layout| if l == Layout::RowMajor { (rows, cols) } else { (cols, rows) };
            let shapes = [shape(m, k, spec.a.layout), shape(k, n, spec.b.layout), shape(m, n, spec.c.layout)];
            let lds = shapes.map(|(_, len)| len + rng.random_range(1..=9usize));
            let count = rng.random_range(1..=2usize);
            let gaps = [(); 3].map(|_| rng.random_range(1..=13usize));
            let stride = |j: usize| (shapes[j].0 - 1) * lds[j] + shapes[j].1 + gaps[j];
            let dims = Dims::new(m, n, k).with_ld(lds[0], lds[1], lds[2]).batched(count, stride(0), stride(1), stride(2));
            let scalars = Scalars { alpha: rng.random_range(-2.0..2.0f32), beta: rng.random_range(-2.0..2.0f32) };
            verify_tuned_fused(&bench, tuned, dims, 500 + 10 * i as u64 + case, scalars)
                .unwrap_or_else(|e| panic!("{} at {dims:?}: {e}", tuned.name()));
        }
    }
}
