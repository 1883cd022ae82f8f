//! GPU tests: every kernel against cuBLAS, and every runtime error for real.
//! Ignored where there is no GPU; `.gpu/run-tests` runs them on the GPU host.

use gemm_ladder::fused::{verify_fused, verify_tuned_fused, Scalars};
use gemm_ladder::measure::{verify, Bench, Problem};
use gemm_ladder::steps::{naive, smem_tiling};
use gemm_ladder::{STEPS, TENSOR_STEPS};
use gemm_runtime::cudarc::driver::CudaSlice;
use gemm_runtime::spec::{Layout, Staging, Which};
use gemm_runtime::{bf16, f16, gemm_kernel, ColMajor, Dims, GemmError, Kernel, Mat, MatMut, Plan, RowMajor};

fn bench() -> TestBench {
    let _quiet = CAPTURES.write().unwrap_or_else(|p| p.into_inner());
    TestBench(Some(Bench::open().expect("a CUDA GPU with cuBLAS")))
}

/// Graph captures, and the device-wide synchronization cuBLAS's handle
/// makes as it is made and destroyed, exclude each other across the test
/// threads: a device synchronization in one thread invalidates another's
/// capture. A capture holds a read guard; a bench's start and end the write.
static CAPTURES: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// A test's [`Bench`], dropped (its cuBLAS handle destroyed) while no
/// graph is being captured.
struct TestBench(Option<Bench>);

impl std::ops::Deref for TestBench {
    type Target = Bench;
    fn deref(&self) -> &Bench {
        self.0.as_ref().expect("a bench until dropped")
    }
}

impl Drop for TestBench {
    fn drop(&mut self) {
        let _quiet = CAPTURES.write().unwrap_or_else(|p| p.into_inner());
        self.0.take();
    }
}

/// Holds off device-wide synchronizations in other test threads while the
/// caller captures a graph.
fn capturing() -> std::sync::RwLockReadGuard<'static, ()> {
    CAPTURES.read().unwrap_or_else(|p| p.into_inner())
}

/// A stream to capture graphs on, beside `s` in its context: the legacy
/// default stream cannot be captured. cudarc's event tracking would make a
/// captured launch wait on events recorded outside the capture, which a
/// capture refuses, so it is switched off for the context: the tests order
/// their streams by synchronizing instead.
fn capture_stream(s: &gemm_runtime::cudarc::driver::CudaStream) -> std::sync::Arc<gemm_runtime::cudarc::driver::CudaStream> {
    // SAFETY: every use of a buffer on another stream follows a synchronize.
    unsafe { s.context().disable_event_tracking() };
    s.context().new_stream().unwrap()
}

/// Sizes every kernel must get right: square and non-square, rounded up to
/// the kernel's tile multiples, and (for the bounds-guarded kernels) sizes that
/// are not multiples of any tile.
fn sizes(kernel: &Kernel) -> Vec<Dims> {
    let req = kernel.spec.requirements();
    let up = |x: usize, to: u32| x.div_ceil(to as usize) * to as usize;
    let mut sizes: Vec<Dims> = [(128, 128, 128), (256, 512, 64), (640, 96, 352), (1024, 1024, 1024)]
        .into_iter()
        .map(|(m, n, k)| Dims::new(up(m, req.m_multiple), up(n, req.n_multiple), up(k, req.k_multiple)))
        .collect();
    if req.m_multiple == 1 {
        // (a gated epilogue pairs the product's columns: n one more where odd)
        let even = |n: usize| if kernel.spec.fused.gated { n.next_multiple_of(2) } else { n };
        // vectorized kernels need rows 16 bytes apart whatever the sizes: pad them
        let dims = |m, n, k| {
            let n = even(n);
            if req.vector * req.c_vector > 1 {
                gemm_ladder::measure::padded_dims(m, n, k, layouts_of(&kernel.spec))
            } else {
                Dims::new(m, n, k)
            }
        };
        sizes.extend([dims(1, 1, 1), dims(1000, 777, 333), dims(33, 65, 17), dims(31, 1, 129)]);
    }
    sizes
}

fn check_against_cublas(bench: &Bench, kernel: &Kernel) {
    for (i, dims) in sizes(kernel).into_iter().enumerate() {
        // fails past the tolerance of C's type (`data::tolerance`); compares C's
        // elements only, not the padding of a leading dimension
        verify_fused(bench, kernel, dims, 100 + i as u64, Scalars { alpha: 1.0, beta: 0.0 }).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_ladder_step_matches_cublas_at_several_sizes() {
    let bench = bench();
    for step in &STEPS {
        check_against_cublas(&bench, step.kernel);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_tensor_ladder_and_split_k_step_matches_cublas_at_several_sizes() {
    let bench = bench();
    for step in TENSOR_STEPS.iter().chain(&gemm_ladder::steps::SPLIT_K_STEPS) {
        check_against_cublas(&bench, step.kernel);
    }
    // the split-K row at its own skinny shape
    for step in &gemm_ladder::steps::SPLIT_K_STEPS {
        verify(&bench, step.kernel, Dims::new(128, 128, 16384), 9).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The Hopper ladder (wgmma, TMA, warp specialization) at several sizes,
/// odd ones included, and batched with a shared B.
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_hopper_ladder_step_matches_cublas_at_several_sizes() {
    let bench = bench();
    for step in &gemm_ladder::HOPPER_STEPS {
        check_against_cublas(&bench, step.kernel);
    }
}

/// wgmma kernels in every layout of A, B and C, each C type, both roles,
/// each TMA swizzle, fused and guarded (`gemm_ladder::combos::hopper`),
/// with K tiles two swizzle rows deep (`combos::hopper_deep_k`), and with
/// the ladder's "before" forms, every thread's arrivals and zeroed
/// accumulators (`combos::hopper_before`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn hopper_layouts_roles_swizzles_and_c_types_match_cublas() {
    let bench = bench();
    for spec in gemm_ladder::combos::hopper().into_iter().chain(gemm_ladder::combos::hopper_deep_k()).chain(gemm_ladder::combos::hopper_before()) {
        let kernel = Kernel::from_spec(spec).unwrap();
        check_against_cublas(&bench, &kernel);
    }
}

/// Consumers whose halves go out each beside the other's wgmmas
/// (`combos::hopper_overlap`: layouts, C types, fused epilogues), at sizes
/// where every block walks several tiles (the next tile's first wgmmas
/// issued before the last half of C goes out), K of one K tile and of
/// part of one, odd sides, a batch with gaps between its problems and a
/// shared B; the launcher's variant of each that fills the stages by
/// cp.async of 4 elements; and each at odd leading dimensions, where the
/// launcher picks what runs (a C it cannot store by TMA goes out through
/// the element-storing variant, its halves no longer overlapped).
#[test]
#[ignore = "needs a CUDA GPU"]
fn overlapped_epilogues_match_cublas_across_every_tile_of_the_walk() {
    use gemm_runtime::internal::realign::narrowed_spec;
    let specs = gemm_ladder::combos::hopper_overlap();
    assert_eq!(specs.len(), 4);
    assert!(specs.iter().all(|s| narrowed_spec(s, 4).is_some()), "each has its cp.async variant");
    walks_match_cublas(&bench(), specs);
}

/// The persistent walks on a queue of tiles (`combos::hopper_queue`: the
/// overlapped consumers, which read their next tile early, and every
/// thread's arrivals) at the sizes, batches and variants above; every
/// launch leaves the stream's queue counts at zero for the next.
#[test]
#[ignore = "needs a CUDA GPU"]
fn queued_walks_match_cublas_and_leave_the_queue_at_zero() {
    let bench = bench();
    let specs = gemm_ladder::combos::hopper_queue();
    assert_eq!(specs.len(), 6);
    walks_match_cublas(&bench, specs.clone());
    let k = Kernel::from_spec(specs[0].clone()).unwrap();
    let counts = k.stream_k_scratch(bench.stream(), Dims::new(128, 256, 64)).unwrap().flag_words(bench.stream()).unwrap();
    assert!(counts.iter().all(|&c| c == 0), "the queue's counts left at {counts:?}");
}

/// Each of `specs` (persistent walks of 128 x 256 tiles) and its launcher
/// variant that fills the stages by cp.async of 4 elements, where it has
/// one, against cuBLAS at sizes where every block walks several tiles,
/// then at odd leading dimensions.
fn walks_match_cublas(bench: &Bench, specs: Vec<gemm_runtime::spec::KernelSpec>) {
    use gemm_runtime::internal::realign::narrowed_spec;
    for (i, spec) in specs.iter().enumerate() {
        let kernels: Vec<Kernel> =
            [Some(spec.clone()), narrowed_spec(spec, 4)].into_iter().flatten().map(|s| Kernel::from_spec(s).unwrap()).collect();
        for (j, k) in kernels.iter().enumerate() {
            let l = layouts_of(&k.spec);
            let sc = Scalars { alpha: 1.25, beta: 0.5 };
            let seed = 200 + 20 * i as u64 + 10 * j as u64;
            // 16 x 16 tiles of 128 x 256 (about two a block), one K tile, two, part of one, odd sides
            for (d, (m, n, kk)) in
                [(2048, 4096, 192), (2048, 4096, 64), (2048, 4096, 100), (1024, 8192, 17), (1999, 3001, 200)].into_iter().enumerate()
            {
                let dims = gemm_ladder::measure::padded_dims(m, n, kk, l);
                verify_fused(bench, k, dims, seed + d as u64, sc).unwrap_or_else(|e| panic!("{e}"));
            }
            // three problems with gaps between them, B shared: 3 x 8 x 8 tiles
            let (m, n, kk) = (1000, 2000, 136);
            let dims = gemm_ladder::measure::padded_dims(m, n, kk, l);
            let one = |ld: Option<usize>, rows: usize, cols: usize, l: Layout| ld.unwrap() * if l == Layout::RowMajor { rows } else { cols };
            let (sa, sc_) = (one(dims.lda, m, kk, l[0]) + 64, one(dims.ldc, m, n, l[2]) + 8);
            let dims = dims.batched(3, sa, 0, sc_).bias_stride(2001);
            verify_fused(bench, k, dims, seed + 5, sc).unwrap_or_else(|e| panic!("{e}"));
        }
        // lines as long as the sides: C's (3001) and an N- or M-major operand's odd
        let k = Kernel::from_spec(specs[i].clone()).unwrap();
        verify_fused(bench, &k, Dims::new(1999, 3001, 200), 290 + i as u64, Scalars { alpha: 1.25, beta: 0.5 }).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// TMA's stages filled by the producer warpgroup's cp.async copies (the
/// variant a launch runs where A's or B's lines are 4 or 8 bytes aligned)
/// on every specialized kernel of `combos::hopper`: every layout (K-major
/// and M/N-major tiles), swizzle, C type, schedule (persistent, stream-K,
/// the hybrid, ping-pong), fused and guarded epilogue, copies of 8 and 4
/// bytes taking turns, of both operands' stages and of one operand's
/// beside TMA's loads of the other, A's and B's taking turns (clusters
/// dropped: cp.async fills each block's stages alone, so multicast has
/// none to share).
#[test]
#[ignore = "needs a CUDA GPU"]
fn hopper_stages_filled_by_cp_async_match_cublas() {
    use gemm_runtime::internal::realign::{narrowed_one_spec, narrowed_spec};
    let bench = bench();
    let mut ran = 0;
    for (i, mut spec) in gemm_ladder::combos::hopper().into_iter().chain(gemm_ladder::combos::hopper_deep_k()).enumerate() {
        if spec.specialize.is_none() {
            continue;
        }
        spec.cluster = None;
        let v = if i % 2 == 0 { 4 } else { 2 };
        let which = if i % 4 < 2 { Which::B } else { Which::A };
        for variant in [narrowed_spec(&spec, v), narrowed_one_spec(&spec, 6 - v, which)] {
            let variant = variant.unwrap_or_else(|| panic!("{}: no cp.async variant", spec.kernel_name()));
            check_against_cublas(&bench, &Kernel::from_spec(variant).unwrap());
            ran += 1;
        }
    }
    assert!(ran >= 24, "only {ran} variants of specialized combinations");
}

/// A block tile's K split over a cluster's two blocks (`decode_cluster`'s
/// points): against cuBLAS where rank 0 holds no K step at all (one K tile),
/// where the parts are uneven, at partial tiles on every side, and at a
/// decode shape.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_cluster_split_along_k_matches_cublas_when_a_rank_holds_no_k_step() {
    let bench = bench();
    let tuned = &gemm_ladder::decode::decode_cluster::KERNEL;
    let mut ran = 0;
    for (i, kernel) in tuned.kernels().enumerate().filter(|(i, _)| i % 5 == 0) {
        let s = &kernel.spec;
        let layouts = [s.a.layout, s.b.layout, s.c.layout];
        for (j, (m, n, k)) in [(64, 1, 64), (130, 9, 100), (777, 37, 1000), (4096, 1, 3 * 256 + 64)].into_iter().enumerate() {
            let dims = gemm_ladder::measure::padded_dims(m, n, k, layouts);
            verify(&bench, kernel, dims, 200 + (i * 4 + j) as u64).unwrap_or_else(|e| panic!("{e}"));
        }
        ran += 1;
    }
    assert!(ran >= 6, "only {ran} points");
}

/// Every epilogue the rules take on `decode_cluster`'s narrow tiles (8 to
/// 64 columns: the first pass of `smem_elements` through shared memory takes
/// one round there, which declared its index twice until 2664763) matches
/// cuBLAS at partial tiles and at a decode shape.
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_epilogue_on_decode_clusters_narrow_tiles_matches_cublas() {
    use gemm_runtime::spec::{Epilogue, KernelSpec};
    let bench = bench();
    let points = gemm_ladder::decode::decode_cluster::KERNEL.points();
    let epilogues = [Epilogue::Direct, Epilogue::Vector, Epilogue::Smem, Epilogue::SmemElements, Epilogue::Tma];
    let kernels: Vec<Kernel> = (points.iter().step_by(7))
        .flat_map(|p| epilogues.map(|epilogue| KernelSpec { epilogue, ..p.clone() }))
        .filter(|s| gemm_runtime::gemm_core::check(s).is_empty())
        .map(|s| Kernel::from_spec(s).unwrap())
        .collect();
    gemm_runtime::compile_all(&kernels, &bench.gpu.ctx);
    for (i, kernel) in kernels.iter().enumerate() {
        for (j, (m, n, k)) in [(130, 9, 100), (4096, 1, 832)].into_iter().enumerate() {
            let dims = gemm_ladder::measure::padded_dims(m, n, k, layouts_of(&kernel.spec));
            verify(&bench, kernel, dims, 300 + (i * 2 + j) as u64).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let ran = kernels.len();
    assert!(ran >= 8, "only {ran} kernels");
}

/// Clusters without multicast, whose last cluster tile's blocks can lie
/// wholly past M or N (569 rows: the second block of a 256-row cluster
/// tile starts at 640; 56 columns: a 2-wide cluster's second block starts
/// at 256): those blocks load nothing, and the rest match cuBLAS. Before
/// the edge loads counted no lines for such a block, they counted fewer
/// than none, and the launch failed.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cluster_blocks_wholly_past_the_edges_load_nothing() {
    use gemm_runtime::spec::{Cluster, KernelSpec};
    let bench = bench();
    let micro = &gemm_ladder::steps::micro::KERNEL.spec;
    for (m, n) in [(2, 1), (1, 2), (2, 2)] {
        let spec = KernelSpec { cluster: Some(Cluster { m, n, multicast: None, k: 1 }), ..micro.clone() };
        let kernel = Kernel::from_spec(spec).unwrap();
        for (i, (mm, nn, kk)) in [(569, 56, 817), (569, 512, 817), (512, 56, 64)].into_iter().enumerate() {
            let dims = gemm_ladder::measure::padded_dims(mm, nn, kk, layouts_of(&kernel.spec));
            verify(&bench, &kernel, dims, 400 + i as u64).unwrap_or_else(|e| panic!("{} at {mm} x {nn} x {kk}: {e}", kernel.name));
        }
    }
}

/// mma and wmma kernels in every layout of A, B and C, each staging and
/// swizzle, each C type, f16 and bf16 (`gemm_ladder::combos`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn tensor_core_layouts_stagings_swizzles_and_c_types_match_cublas() {
    let bench = bench();
    for spec in gemm_ladder::combos::mma().into_iter().chain(gemm_ladder::combos::wmma()) {
        let kernel = Kernel::from_spec(spec).unwrap();
        check_against_cublas(&bench, &kernel);
    }
}

/// wmma.load and wmma.store need 32-byte aligned pointers: a C that starts 16
/// bytes into its buffer is refused before launch.
/// wmma.store needs 32-byte aligned C: a C 16 bytes into its buffer goes
/// through an aligned copy, and the plan says so.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_misaligned_wmma_operand_goes_through_an_aligned_copy() {
    use gemm_ladder::steps::wmma_warp;
    let bench = bench();
    let s = bench.stream();
    let a = s.alloc_zeros::<gemm_runtime::f16>(64 * 64).unwrap();
    let b = s.alloc_zeros::<gemm_runtime::f16>(64 * 64).unwrap();
    let mut c = s.alloc_zeros::<f32>(64 * 64 + 4).unwrap();
    let mut shifted = c.slice_mut(4..);
    let plan = wmma_warp::KERNEL.plan(s, &a, &b, &mut shifted, Dims::new(64, 64, 64)).unwrap();
    assert_eq!(plan, Plan::Copied { a: false, b: false, c: true });
    wmma_warp(s, &a, &b, &mut shifted, Dims::new(64, 64, 64)).unwrap();
    let bf = s.alloc_zeros::<gemm_runtime::bf16>(64 * 64).unwrap();
    let err = wmma_warp::KERNEL.launch(s, &bf, &bf, &mut c, Dims::new(64, 64, 64)).unwrap_err();
    assert!(matches!(err, GemmError::ElemMismatch { operand: 'A', .. }), "{err}");
}

// Settings the ladder's first steps do not use, each checked on the GPU too:
// column-major operands, thread tiles past 1x1, vector loads, A transposed in
// shared memory, padding.

#[gemm_kernel(
    block(m = 32, n = 64, threads = 256),
    thread(m = 2, n = 4, lanes = m),
    atom = fma,
    staging = direct,
)]
fn direct_col_major(a: Mat<f32, ColMajor>, b: Mat<f32, ColMajor>, c: MatMut<f32, ColMajor>);

#[gemm_kernel(
    block(m = 64, n = 64, k = 16, threads = 256),
    thread(m = 4, n = 4),
    atom = fma,
    staging = smem(vector = 4, transpose_a),
    swizzle = pad(4),
)]
fn smem_vector_transposed(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

#[gemm_kernel(
    block(m = 64, n = 32, k = 8, threads = 128),
    thread(m = 4, n = 4),
    atom = fma,
    staging = smem(vector = 2),
    swizzle = pad(2),
)]
fn smem_mixed_layouts(a: Mat<f32, ColMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, ColMajor>);

/// Warp iterations along m, column-major everything, float4 stores down C's
/// columns, double buffering with A not transposed.
#[gemm_kernel(
    block(m = 64, n = 128, k = 16, threads = 128),
    warp(m = 32, n = 64, m_iters = 2),
    thread(m = 8, n = 4),
    atom = fma,
    staging = smem(vector = 4, buffers = 2),
    epilogue = vector,
)]
fn warp_col_major(a: Mat<f32, ColMajor>, b: Mat<f32, ColMajor>, c: MatMut<f32, ColMajor>);

/// Lanes along m inside the warp, iterations both ways, float2 loads, FMAs a
/// column at a time.
#[gemm_kernel(
    block(m = 128, n = 64, k = 8, threads = 128),
    warp(m = 64, n = 32, m_iters = 2, n_iters = 2),
    thread(m = 4, n = 4, lanes = m, sweep = m),
    atom = fma,
    staging = smem(vector = 2),
)]
fn warp_lanes_m(a: Mat<f32, RowMajor>, b: Mat<f32, ColMajor>, c: MatMut<f32, RowMajor>);

/// A grouped raster whose last band is partial: 640 / 64 = 10 M tiles in bands of 3.
#[gemm_kernel(
    block(m = 64, n = 64, k = 8, threads = 64, min_blocks = 4),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4, transpose_a),
    raster = grouped(3),
    epilogue = vector,
)]
fn grouped_partial_band(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

#[test]
#[ignore = "needs a CUDA GPU"]
fn layouts_thread_tiles_vectors_transpose_and_padding_match_cublas() {
    let bench = bench();
    for kernel in [
        &direct_col_major::KERNEL,
        &smem_vector_transposed::KERNEL,
        &smem_mixed_layouts::KERNEL,
        &warp_col_major::KERNEL,
        &warp_lanes_m::KERNEL,
        &grouped_partial_band::KERNEL,
    ] {
        check_against_cublas(&bench, kernel);
    }
}

// cp.async pipelines: A copied element by element into its transposed tile or
// 16 bytes at a time straight, B likewise, 2 to 4 stages deep.

#[gemm_kernel(
    block(m = 128, n = 128, k = 8, threads = 128),
    warp(m = 64, n = 64, m_iters = 2, n_iters = 2),
    thread(m = 4, n = 8),
    atom = fma,
    staging = cp_async(stages = 3, vector = 4, transpose_a),
    swizzle = pad(4),
    epilogue = vector,
)]
fn cp_async_row_major(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

#[gemm_kernel(
    block(m = 64, n = 64, k = 16, threads = 256),
    thread(m = 4, n = 4),
    atom = fma,
    staging = cp_async(stages = 2, vector = 4),
    swizzle = pad(4),
)]
fn cp_async_col_major(a: Mat<f32, ColMajor>, b: Mat<f32, ColMajor>, c: MatMut<f32, ColMajor>);

#[gemm_kernel(
    block(m = 64, n = 128, k = 16, threads = 128),
    warp(m = 32, n = 64, m_iters = 1, n_iters = 2),
    thread(m = 8, n = 4, lanes = m),
    atom = fma,
    staging = cp_async(stages = 4, vector = 2, transpose_a),
    swizzle = pad(2),
)]
fn cp_async_mixed(a: Mat<f32, ColMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

#[test]
#[ignore = "needs a CUDA GPU"]
fn cp_async_pipelines_match_cublas_even_with_fewer_tiles_than_stages() {
    let bench = bench();
    for kernel in [&cp_async_row_major::KERNEL, &cp_async_col_major::KERNEL, &cp_async_mixed::KERNEL] {
        check_against_cublas(&bench, kernel);
        let (bm, bn, bk) = (kernel.spec.block.m as usize, kernel.spec.block.n as usize, kernel.spec.block.k.unwrap() as usize);
        for (i, tiles) in [1, 2].into_iter().enumerate() {
            let dims = Dims::new(2 * bm, 3 * bn, tiles * bk);
            let err = verify(&bench, kernel, dims, 200 + i as u64).unwrap_or_else(|e| panic!("{e}"));
            assert!(err < 1e-4, "{} with {tiles} K tile(s): {err}", kernel.name);
        }
    }
}

// Stream-K: a persistent grid splitting the K steps of all tiles evenly, on
// each staging it supports, with the row and the grouped raster.

#[gemm_kernel(
    block(m = 128, n = 128, k = 16, threads = 128),
    warp(m = 128, n = 32, m_iters = 4, n_iters = 2),
    thread(m = 4, n = 4, sweep = m),
    atom = fma,
    staging = cp_async(stages = 3, vector = 4, transpose_a),
    swizzle = pad(8),
    persistent = stream_k,
    epilogue = vector,
)]
fn stream_k_cp_async(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

#[gemm_kernel(
    block(m = 64, n = 64, k = 8, threads = 64),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4, transpose_a, buffers = 2),
    swizzle = pad(4),
    raster = grouped(3),
    persistent = stream_k,
)]
fn stream_k_double_buffered(a: Mat<f32, ColMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

#[gemm_kernel(
    block(m = 32, n = 64, k = 16, threads = 128),
    thread(m = 4, n = 4),
    atom = fma,
    staging = smem(vector = 4, buffers = 1),
    persistent = stream_k,
)]
fn stream_k_single_buffered(a: Mat<f32, ColMajor>, b: Mat<f32, ColMajor>, c: MatMut<f32, ColMajor>);

// Two stages (a fill of one tile), A copied as it lies, the grouped raster:
// the cp.async producer's other paths into the next C tile.
#[gemm_kernel(
    block(m = 64, n = 128, k = 8, threads = 128),
    warp(m = 32, n = 64, m_iters = 1, n_iters = 2),
    thread(m = 8, n = 4),
    atom = fma,
    staging = cp_async(stages = 2, vector = 4),
    raster = grouped(3),
    persistent = stream_k,
)]
fn stream_k_cp_async_grouped(a: Mat<f32, ColMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

// Tensor-core atoms under stream-K: mma with fragments a K step ahead (each
// unit loads its first ones) and a 16-bit C, mma with one set, wmma.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, fragments = 2),
    swizzle = xor,
    raster = grouped(4),
    persistent = stream_k,
    epilogue = vector,
)]
fn stream_k_mma_fragments_ahead(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

#[gemm_kernel(
    block(m = 64, n = 128, k = 64, threads = 128),
    warp(m = 32, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 2, vector = 8),
    swizzle = pad(8),
    persistent = stream_k,
)]
fn stream_k_mma(a: Mat<f16, ColMajor>, b: Mat<f16, ColMajor>, c: MatMut<f32, ColMajor>);

#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = wmma(m16n16k16),
    staging = cp_async(stages = 4, vector = 8),
    swizzle = pad(8),
    persistent = stream_k,
)]
fn stream_k_wmma(a: Mat<f16, RowMajor>, b: Mat<f16, ColMajor>, c: MatMut<f32, RowMajor>);

// wgmma on TMA stages fed by a producer, under stream-K: the fix-up among
// the consumers alone, C out by TMA stores (sm_90a: skipped elsewhere).
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 384),
    warp(m = 64, n = 256),
    atom = wgmma(m64n256k16),
    staging = tma(stages = 3),
    specialize(producers = 1, consumers = 2, producer_regs = 24, consumer_regs = 240),
    swizzle = b128,
    raster = grouped(8),
    persistent = stream_k,
    epilogue = tma,
)]
fn stream_k_wgmma(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

/// `tma_store` (edges guarded) under `schedule`.
fn tma_store_under(schedule: gemm_runtime::spec::Persistent) -> Kernel {
    use gemm_runtime::spec::KernelSpec;
    Kernel::from_spec(KernelSpec { persistent: Some(schedule), ..gemm_ladder::steps::tma_store::KERNEL.spec.clone() }).unwrap()
}

/// `tma_store` under the hybrid schedule: whole waves of tiles a block
/// each, then the tiles left shared as under stream-K.
static HYBRID_WGMMA: std::sync::LazyLock<Kernel> = std::sync::LazyLock::new(|| tma_store_under(gemm_runtime::spec::Persistent::Hybrid));

/// `tma_store` under the tail split: whole waves, then each tile left to
/// an owner for its first K steps and to helpers for the rest.
static TAIL_SPLIT_WGMMA: std::sync::LazyLock<Kernel> = std::sync::LazyLock::new(|| tma_store_under(gemm_runtime::spec::Persistent::TailSplit));

// mma.sync under the tail split (mma_tuned's point, B column-major): whole waves a
// block to a tile, the tiles left in pieces along K, C through its own shared memory
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 2, vector = 8, fragments = 2),
    swizzle = xor,
    raster = grouped(8),
    persistent = tail_split,
    epilogue = smem,
    edges = guarded,
)]
fn tail_split_mma(a: Mat<bf16, RowMajor>, b: Mat<bf16, ColMajor>, c: MatMut<bf16, RowMajor>);

/// The stream-K kernels of every path, and the hybrids.
fn stream_k_kernels() -> [&'static Kernel; 11] {
    [
        &stream_k_cp_async::KERNEL,
        &stream_k_cp_async_grouped::KERNEL,
        &stream_k_double_buffered::KERNEL,
        &stream_k_single_buffered::KERNEL,
        &stream_k_mma_fragments_ahead::KERNEL,
        &stream_k_mma::KERNEL,
        &stream_k_wmma::KERNEL,
        &stream_k_wgmma::KERNEL,
        &HYBRID_WGMMA,
        &TAIL_SPLIT_WGMMA,
        &tail_split_mma::KERNEL,
    ]
}

/// Whether `kernel` can run on the bench's GPU (sm_90a kernels: Hopper only).
fn runs_here(bench: &Bench, kernel: &Kernel) -> bool {
    kernel.spec.arch != gemm_runtime::spec::Arch::Sm90a || bench.gpu.capability == (9, 0)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn stream_k_matches_cublas_when_blocks_split_tiles_many_ways() {
    let bench = bench();
    for kernel in stream_k_kernels().into_iter().filter(|k| runs_here(&bench, k)) {
        check_against_cublas(&bench, kernel);
        let (bm, bn, bk) = (kernel.spec.block.m as usize, kernel.spec.block.n as usize, kernel.spec.block.k.unwrap() as usize);
        // One K step in all (a grid of one block); two tiles whose K steps
        // are shared by dozens of blocks; a little more than one tile per
        // block; two and a half tiles per block; as many tiles as blocks,
        // and three more (under `hybrid`: one whole wave and nothing shared,
        // then too few tiles left to share, so the wave is shared with them).
        let blocks = kernel.stream_k_grid(bench.stream(), Dims::new(64 * bm, 64 * bn, 64 * bk)).unwrap() as usize;
        let rows = (5 * blocks / 2).div_ceil(40);
        // a partial last row of tiles where the kernel checks its edges
        let odd = if kernel.spec.edges == gemm_runtime::spec::Edges::Guarded { 5 } else { 0 };
        let cases = [
            Dims::new(bm, bn, bk),
            Dims::new(bm, 2 * bn, 96 * bk),
            Dims::new(17 * bm, 29 * bn, 5 * bk),
            Dims::new(rows * bm, 40 * bn, 3 * bk),
            Dims::new(blocks * bm, bn, 3 * bk),
            Dims::new((blocks + 3) * bm - odd, bn, 3 * bk),
        ];
        for (i, dims) in cases.into_iter().enumerate() {
            // `verify` fails past the tolerance of C's type
            verify(&bench, kernel, dims, 300 + i as u64).unwrap_or_else(|e| panic!("{e}"));
        }
        // the stream's scratch, shared by these launches one after another: each
        // left every flag and the ticket count at zero for the next
        let flags = kernel.stream_k_scratch(bench.stream(), cases[0]).unwrap().flag_words(bench.stream()).unwrap();
        let set: Vec<usize> = flags.iter().enumerate().filter(|(_, &w)| w != 0).map(|(i, _)| i).collect();
        assert!(set.is_empty(), "{}: flags {set:?} of {} left set", kernel.name, flags.len());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn stream_k_sums_shared_tiles_in_the_same_order_every_run() {
    let bench = bench();
    for kernel in stream_k_kernels().into_iter().filter(|k| runs_here(&bench, k)) {
        let (bm, bn, bk) = (kernel.spec.block.m as usize, kernel.spec.block.n as usize, kernel.spec.block.k.unwrap() as usize);
        // Six tiles shared by many blocks; two and a half tiles per block.
        let blocks = kernel.stream_k_grid(bench.stream(), Dims::new(64 * bm, 64 * bn, 64 * bk)).unwrap() as usize;
        let rows = (5 * blocks / 2).div_ceil(40);
        for dims in [Dims::new(3 * bm, 2 * bn, 200 * bk), Dims::new(rows * bm, 40 * bn, 3 * bk)] {
            let p = Problem::for_kernel(&bench, kernel, dims, 7).unwrap();
            let runs: Vec<Vec<f32>> = (0..3)
                .map(|_| {
                    let mut c = p.poisoned_c(&bench).unwrap();
                    p.launch(&bench, kernel, &mut c).unwrap();
                    c.to_f32(bench.stream()).unwrap()
                })
                .collect();
            assert!(runs[0].iter().all(|x| x.is_finite()), "{} at {dims:?}: an element was never written", kernel.name);
            for run in &runs[1..] {
                let same = run.iter().zip(&runs[0]).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{} at {dims:?}: runs differ", kernel.name);
            }
        }
    }
}

/// A stream-K launch captured into a CUDA graph takes scratch of its own
/// (memory allocated in a capture belongs to the graph; the stream keeps
/// its scratch for launches outside one): every replay of the graph
/// matches cuBLAS, and so does a launch on the stream after them.
#[test]
#[ignore = "needs a CUDA GPU"]
fn stream_k_launches_run_in_a_captured_graph_and_on_the_stream_after_it() {
    use gemm_ladder::measure::DevMat;
    use gemm_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let bench = bench();
    let stream = capture_stream(bench.stream());
    for kernel in [&gemm_ladder::steps::mma_skinny_stream_k::KERNEL, &*HYBRID_WGMMA].into_iter().filter(|k| runs_here(&bench, k)) {
        let (bm, bn, bk) = (kernel.spec.block.m as usize, kernel.spec.block.n as usize, kernel.spec.block.k.unwrap() as usize);
        // two tiles shared by dozens of blocks
        let dims = Dims::new(bm, 2 * bn, 96 * bk);
        let p = Problem::for_kernel(&bench, kernel, dims, 21).unwrap();
        let reference = p.reference(&bench).unwrap();
        let launch = |c: &mut DevMat| match (&p.a, &p.b, c) {
            (DevMat::Bf16(a), DevMat::Bf16(b), DevMat::Bf16(c)) => kernel.launch(&stream, a, b, c, dims),
            _ => unreachable!("the stream-K kernels here are bf16 throughout"),
        };
        let check = |c: &DevMat, when: &str| {
            stream.synchronize().unwrap();
            let out = c.to_f32(bench.stream()).unwrap();
            let err = gemm_runtime::internal::data::relative_error(&out, &reference).unwrap_or_else(|e| panic!("{} {when}: {e}", kernel.name));
            assert!(err <= gemm_runtime::internal::data::tolerance(kernel.spec.c.elem), "{} {when}: relative error {err:.2e}", kernel.name);
        };
        let poisoned = || {
            let c = p.poisoned_c(&bench).unwrap();
            bench.stream().synchronize().unwrap();
            c
        };
        // a launch outside the capture first: the module loaded, the stream's scratch made
        let mut c = poisoned();
        launch(&mut c).unwrap();
        check(&c, "before the capture");
        let mut c = poisoned();
        let capture = capturing();
        stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
        launch(&mut c).unwrap();
        let graph = stream.end_capture(CUgraphInstantiate_flags(0)).unwrap().expect("a graph of the launch");
        drop(capture);
        for run in 0..3 {
            graph.launch().unwrap();
            check(&c, &format!("in the graph's run {run}"));
        }
        let mut c = poisoned();
        launch(&mut c).unwrap();
        check(&c, "after the graph");
    }
}

/// A kernel's first launch inside a graph capture compiles and loads it
/// there (in relaxed capture mode, as allocations are made in a capture):
/// the capture ends valid, and the graph's replay matches cuBLAS.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernels_first_launch_can_be_captured_into_a_graph() {
    use gemm_ladder::measure::DevMat;
    use gemm_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let bench = bench();
    let stream = capture_stream(bench.stream());
    // a kernel of its own, nothing loaded in it yet
    let kernel = Kernel::from_spec(gemm_ladder::steps::mma_autotuned::SPEC).unwrap();
    let dims = Dims::new(300, 200, 136);
    let p = Problem::for_kernel(&bench, &kernel, dims, 31).unwrap();
    let reference = p.reference(&bench).unwrap();
    let mut c = p.poisoned_c(&bench).unwrap();
    bench.stream().synchronize().unwrap();
    let capture = capturing();
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
    match (&p.a, &p.b, &mut c) {
        (DevMat::Bf16(a), DevMat::Bf16(b), DevMat::Bf16(c)) => kernel.launch(&stream, a, b, c, dims).unwrap(),
        _ => unreachable!("mma_autotuned is bf16 throughout"),
    }
    let graph = stream.end_capture(CUgraphInstantiate_flags(0)).unwrap().expect("a graph of the launch");
    drop(capture);
    graph.launch().unwrap();
    stream.synchronize().unwrap();
    let out = c.to_f32(bench.stream()).unwrap();
    let err = gemm_runtime::internal::data::relative_error(&out, &reference).unwrap_or_else(|e| panic!("{}: {e}", kernel.name));
    assert!(err <= gemm_runtime::internal::data::tolerance(kernel.spec.c.elem), "{}: relative error {err:.2e}", kernel.name);
}

/// Stream-K launches on twenty streams of their own, more than keep
/// their scratch (sixteen): each matches cuBLAS, those past the sixteen on
/// scratch of the launch's own.
#[test]
#[ignore = "needs a CUDA GPU"]
fn stream_k_launches_on_more_streams_than_keep_scratch_match_cublas() {
    use gemm_ladder::measure::DevMat;
    let bench = bench();
    let kernel = &gemm_ladder::steps::mma_skinny_stream_k::KERNEL;
    let (bm, bn, bk) = (kernel.spec.block.m as usize, kernel.spec.block.n as usize, kernel.spec.block.k.unwrap() as usize);
    let dims = Dims::new(bm, 2 * bn, 96 * bk);
    let p = Problem::for_kernel(&bench, kernel, dims, 23).unwrap();
    let reference = p.reference(&bench).unwrap();
    let streams: Vec<_> = (0..20).map(|_| bench.stream().context().new_stream().unwrap()).collect();
    for (i, stream) in streams.iter().enumerate() {
        let mut c = p.poisoned_c(&bench).unwrap();
        bench.stream().synchronize().unwrap();
        match (&p.a, &p.b, &mut c) {
            (DevMat::Bf16(a), DevMat::Bf16(b), DevMat::Bf16(c)) => kernel.launch(stream, a, b, c, dims).unwrap(),
            _ => unreachable!("mma_skinny_stream_k is bf16 throughout"),
        }
        stream.synchronize().unwrap();
        let out = c.to_f32(bench.stream()).unwrap();
        let err = gemm_runtime::internal::data::relative_error(&out, &reference).unwrap_or_else(|e| panic!("stream {i}: {e}"));
        assert!(err <= gemm_runtime::internal::data::tolerance(kernel.spec.c.elem), "stream {i}: relative error {err:.2e}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn leading_dimensions_past_the_packed_width_are_honoured() {
    let bench = bench();
    // A, B, C row-major inside wider buffers: lda = k + 8, ldb = n + 4, ldc = n + 12.
    let (m, n, k) = (128, 192, 64);
    let dims = Dims::new(m, n, k).with_ld(k + 8, n + 4, n + 12);
    let p = Problem::new(&bench, [Layout::RowMajor; 3], dims, 5).unwrap();
    let mut c = p.poisoned_c(&bench).unwrap();
    smem_vector_transposed(bench.stream(), p.a.f32(), p.b.f32(), c.f32_mut(), dims).unwrap();
    let out = c.to_f32(bench.stream()).unwrap();
    let reference = p.reference(&bench).unwrap();
    for row in 0..m {
        for col in 0..n {
            let (o, r) = (out[row * (n + 12) + col], reference[row * (n + 12) + col]);
            assert!((o - r).abs() <= 1e-3 * r.abs().max(1.0), "C[{row}][{col}] = {o}, cuBLAS {r}");
        }
        // The padding between rows of C (none after the last) is left alone.
        if row + 1 < m {
            assert!(out[row * (n + 12) + n].is_nan(), "the kernel wrote past C's row {row}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_second_launch_does_not_compile_again() {
    let bench = bench();
    let dims = Dims::new(64, 64, 64);
    let p = Problem::new(&bench, [Layout::RowMajor; 3], dims, 3).unwrap();
    let mut c = p.poisoned_c(&bench).unwrap();
    naive(bench.stream(), p.a.f32(), p.b.f32(), c.f32_mut(), dims).unwrap();
    let after_first = gemm_runtime::internal::compile::compilations_here();
    naive(bench.stream(), p.a.f32(), p.b.f32(), c.f32_mut(), dims).unwrap();
    naive::KERNEL.function(bench.stream().context()).unwrap();
    assert_eq!(gemm_runtime::internal::compile::compilations_here(), after_first);
}

/// Buffers of `len` f32 (uninitialized: the launches below must fail before reading them).
fn buffer(bench: &Bench, len: usize) -> CudaSlice<f32> {
    // SAFETY: only passed to launches that are expected to be refused.
    unsafe { bench.stream().alloc::<f32>(len) }.unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn runtime_misuse_is_an_error_not_a_panic_or_a_wrong_answer() {
    let bench = bench();
    let s = bench.stream();
    let (a, b, mut c) = (buffer(&bench, 256 * 256), buffer(&bench, 256 * 256), buffer(&bench, 256 * 256));

    let short = naive(s, &a.slice(..100), &b, &mut c, Dims::new(16, 16, 16)).unwrap_err();
    assert!(matches!(short, GemmError::BufferTooSmall { operand: 'A', needed: 256, len: 100, .. }), "{short}");

    let ld = naive(s, &a, &b, &mut c, Dims::new(16, 16, 16).with_ld(8, 16, 16)).unwrap_err();
    assert!(matches!(ld, GemmError::LeadingDim { operand: 'A', .. }), "{ld}");

    let size = smem_tiling(s, &a, &b, &mut c, Dims::new(100, 64, 64)).unwrap_err();
    assert!(size.to_string().contains("m = 100 must be a multiple of block m = 32"), "{size}");

    // misaligned operands are no error: a variant with narrower loads reads
    // them where they lie, or they are copied (launched in
    // `any_leading_dimension_and_offset_matches_cublas_on_every_path`)
    let k = &smem_vector_transposed::KERNEL;
    let narrow = |v| Plan::Variant { vector: Some(v), only: None, scalar_c: false, a: false, b: false, c: false };
    let misaligned = k.plan(s, &a.slice(1..), &b, &mut c, Dims::new(64, 64, 64)).unwrap();
    assert_eq!(misaligned, narrow(1));
    let odd_ld = k.plan(s, &a, &b, &mut c, Dims::new(64, 64, 64).with_ld(66, 64, 64)).unwrap();
    assert_eq!(odd_ld, narrow(2));
    let (va, vb, mut vc) = (buffer(&bench, 128 * 128), buffer(&bench, 128 * 128), buffer(&bench, 128 * 128 + 1));
    let c_misaligned = gemm_ladder::steps::vectorized::KERNEL.plan(s, &va, &vb, &mut vc.slice_mut(1..), Dims::new(128, 128, 128)).unwrap();
    // a C that vector stores cannot take is written by the variant that stores elements
    assert_eq!(c_misaligned, Plan::Variant { vector: None, only: None, scalar_c: true, a: false, b: false, c: false });
    // what no copy mends stays an error
    let short = k.plan(s, &a.slice(..100), &b, &mut c, Dims::new(64, 64, 64)).unwrap_err();
    assert!(matches!(short, GemmError::BufferTooSmall { .. }), "{short}");

    let half_a: CudaSlice<gemm_runtime::half::f16> = s.alloc_zeros(256).unwrap();
    let elem = naive::KERNEL.launch(s, &half_a, &b, &mut c, Dims::new(16, 16, 16)).unwrap_err();
    assert!(matches!(elem, GemmError::ElemMismatch { operand: 'A', .. }), "{elem}");
}

/// Every epilogue addresses C in 64 bits: a C past 2^31 elements on the
/// Hopper path (TMA stores; a C tile stored by threads; C's lines odd,
/// written by the scalar variant), the sm_80 path and the f32 SIMT path
/// (stream-K) matches cuBLAS, run on the same rows alone, in its first rows
/// and in those on both sides of element 2^31, with nothing written past
/// C. TMA reads A by coordinates: an A past 2^31 elements runs on the
/// Hopper path, its rows past 2^31 checked, and is refused where loads
/// address it by 32-bit offsets.
#[test]
#[ignore = "needs a CUDA GPU"]
fn operands_past_2_31_elements_match_cublas_or_are_refused() {
    use gemm_ladder::steps::{autotuned, hopper_autotuned, mma_autotuned, persistent};
    let bench = bench();
    let hopper = bench.gpu.capability == (9, 0);
    // 16384 x 131104: 2,148,007,936 elements of C, element 2^31 in row 16380
    let (m, n, k) = (16384, 131104, 64);
    let rows = [(0, 32), (m - 64, m)];
    if hopper {
        big_rows(&bench, &hopper_autotuned::KERNEL, Dims::new(m, n, k), &rows, bf16::from_f32).unwrap();
        big_rows(&bench, &persistent::KERNEL, Dims::new(m, n, k), &rows, bf16::from_f32).unwrap();
        // C's lines 131073 elements apart: 2,147,500,032 elements, written by the scalar variant
        big_rows(&bench, &hopper_autotuned::KERNEL, Dims::new(m, 131073, k), &rows, bf16::from_f32).unwrap();
    }
    big_rows(&bench, &mma_autotuned::KERNEL, Dims::new(m, n, k), &rows, bf16::from_f32).unwrap();
    big_rows(&bench, &autotuned::KERNEL, Dims::new(m, n, k), &rows, |x| x).unwrap();
    // A of 524416 x 4096: rows from 524288 on lie past element 2^31
    let tall = Dims::new(524416, 256, 4096);
    let refused = big_rows(&bench, &mma_autotuned::KERNEL, tall, &[], bf16::from_f32).unwrap_err();
    assert!(refused.contains("A's span in elements is 2148007936, past the 32-bit offsets"), "{refused}");
    if hopper {
        big_rows(&bench, &hopper_autotuned::KERNEL, tall, &[(0, 32), (524288 - 32, 524416)], bf16::from_f32).unwrap();
    }
}

/// Launches `k` (A and C row-major) at `dims` on random operands (A's
/// first 1000 rows repeated down its length: A may be too long to fill
/// from the host) and checks C's `rows` (ranges) against cuBLAS run on
/// those rows of A alone, and that nothing is written past C; the launch's
/// `Err` as text where it refuses.
fn big_rows<T>(bench: &Bench, k: &Kernel, dims: Dims, rows: &[(usize, usize)], from_f32: fn(f32) -> T) -> Result<(), String>
where
    T: gemm_runtime::Element + Copy + gemm_runtime::cudarc::driver::DeviceRepr + gemm_runtime::cudarc::driver::ValidAsZeroBits,
{
    use gemm_ladder::measure::random_normal;
    let s = bench.stream();
    let layouts = layouts_of(&k.spec);
    assert_eq!((layouts[0], layouts[2]), (Layout::RowMajor, Layout::RowMajor), "{}: rows of A and C are contiguous", k.name);
    let (m, n, kk) = (dims.m, dims.n, dims.k);
    let host = |len: usize, seed: u64| random_normal(len, seed).into_iter().map(from_f32).collect::<Vec<T>>();
    let block = 1000.min(m) * kk;
    // SAFETY: every element is written below before any is read.
    let mut a = unsafe { s.alloc::<T>(m * kk) }.unwrap();
    s.memcpy_htod(&host(block, 11), &mut a.slice_mut(..block)).unwrap();
    let mut filled = block;
    while filled < m * kk {
        let len = filled.min(m * kk - filled);
        let (from, mut to) = a.split_at_mut(filled);
        s.memcpy_dtod(&from.slice(..len), &mut to.slice_mut(..len)).unwrap();
        filled += len;
    }
    let b = s.clone_htod(&host(kk * n, 12)).unwrap();
    // C's checked rows and 4096 elements past C poisoned
    let (len, guard) = (m * n, 4096);
    let nan = from_f32(f32::NAN);
    // SAFETY: C is only read where it was poisoned, or after the kernel wrote it.
    let mut c = unsafe { s.alloc::<T>(len + guard) }.unwrap();
    for &(r0, r1) in rows {
        s.memcpy_htod(&vec![nan; (r1 - r0) * n], &mut c.slice_mut(r0 * n..r1 * n)).unwrap();
    }
    s.memcpy_htod(&vec![nan; guard], &mut c.slice_mut(len..)).unwrap();
    k.launch(s, &a, &b, &mut c.slice_mut(..len), dims).map_err(|e| e.to_string())?;
    let tol = gemm_runtime::internal::data::tolerance(k.spec.c.elem);
    for &(r0, r1) in rows {
        let mut want = s.alloc_zeros::<f32>((r1 - r0) * n).unwrap();
        bench.blas.gemm(layouts, &a.slice(r0 * kk..r1 * kk), &b, &mut want, Dims::new(r1 - r0, n, kk)).unwrap();
        let want: Vec<f32> = s.clone_dtoh(&want).unwrap().into_iter().map(|x| from_f32(x).to_f32()).collect();
        let got: Vec<f32> = s.clone_dtoh(&c.slice(r0 * n..r1 * n)).unwrap().into_iter().map(T::to_f32).collect();
        let rms = (want.iter().map(|&r| (r as f64).powi(2)).sum::<f64>() / want.len() as f64).sqrt();
        for (i, (&o, &r)) in got.iter().zip(&want).enumerate() {
            if !o.is_finite() || (o - r).abs() as f64 > 4.0 * tol * (r.abs() as f64) + tol * rms {
                panic!("{} at {m} x {n} x {kk}: C[{}][{}] = {o} where cuBLAS has {r}", k.name, r0 + i / n, i % n);
            }
        }
    }
    let past = s.clone_dtoh(&c.slice(len..)).unwrap();
    assert!(past.into_iter().all(|x| x.to_f32().is_nan()), "{}: written past C", k.name);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nvrtc_failures_reach_the_caller_with_the_log() {
    let bench = bench();
    let broken = Kernel::from_parts(naive::SPEC, "extern \"C\" __global__ void broken() { undefined_name = 1; }\n", "broken", 1024, 0);
    let err = broken.function(bench.stream().context()).unwrap_err();
    assert!(matches!(err, GemmError::Compile { .. }), "{err}");
    assert!(err.to_string().contains("undefined_name"), "{err}");
}

#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1),
    atom = fma,
    staging = direct,
    arch = sm_100,
)]
fn for_blackwell(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// `mma_autotuned`'s tiling in two stages, declared for Ada (96 KB, within the
/// 99 KB a block gets there), runs on any GPU of compute capability 8.9 or newer.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernel_declared_for_ada_matches_cublas_on_newer_gpus() {
    let bench = bench();
    assert!(bench.gpu.capability >= (8, 9), "this test needs compute capability 8.9 or newer; found {:?}", bench.gpu.capability);
    let k = &gemm_ladder::steps::mma_two_stages_sm89::KERNEL;
    assert!(k.smem_bytes <= 99 * 1024);
    check_against_cublas(&bench, k);
}

/// A block's shared memory past what the device gives (99 KB on GPUs of
/// compute capability 8.6, 8.9 and 12.0, where an sm_80 kernel is checked
/// against the A100's 163 KB) is an `Err` naming both, before the driver
/// is asked: here a kernel said to need 1 KB over this GPU's limit.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernel_over_the_devices_shared_memory_is_an_error_that_says_so() {
    use gemm_runtime::cudarc::driver::sys::CUdevice_attribute_enum as Attr;
    let bench = bench();
    let ctx = bench.stream().context();
    let limit = ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).unwrap() as u32;
    let mut k = Kernel::from_spec(gemm_ladder::steps::mma_autotuned::KERNEL.spec.clone()).unwrap();
    k.smem_bytes = limit + 1024;
    let (a, b, mut c) = (
        bench.stream().alloc_zeros::<bf16>(64 * 64).unwrap(),
        bench.stream().alloc_zeros::<bf16>(64 * 64).unwrap(),
        bench.stream().alloc_zeros::<bf16>(64 * 64).unwrap(),
    );
    match k.launch(bench.stream(), &a, &b, &mut c, Dims::new(64, 64, 64)) {
        Err(e @ GemmError::SharedMemory { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&format!("needs {} bytes", limit + 1024)) && msg.contains(&format!("at most {limit}")), "{msg}");
        }
        other => panic!("expected a shared-memory error, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernel_for_a_newer_arch_is_refused() {
    let bench = bench();
    if bench.gpu.capability >= (10, 0) {
        panic!("this test needs a GPU older than sm_100; found {:?}", bench.gpu.capability);
    }
    let (a, b, mut c) = (buffer(&bench, 64), buffer(&bench, 64), buffer(&bench, 64));
    let err = for_blackwell(bench.stream(), &a, &b, &mut c, Dims::new(8, 8, 8)).unwrap_err();
    assert!(matches!(err, GemmError::ArchTooOld { .. }), "{err}");
    assert_eq!(for_blackwell::ARCH, gemm_runtime::spec::Arch::Sm100);
}

#[test]
fn opening_a_device_that_is_not_there_is_an_error() {
    // No driver: NoDriver (CI); a driver: no device 4096 (the GPU host).
    match gemm_runtime::device::open(4096) {
        Err(GemmError::NoDriver) => assert!(!gemm_runtime::device::driver_present()),
        Err(GemmError::NoDevice(msg)) => assert!(msg.contains("4096"), "{msg}"),
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("device 4096 opened"),
    }
}

/// Leading dimensions rounded up to 8 elements: the 16-byte rows that
/// vectorized kernels need, whatever m, n and k are.
fn layouts_of(spec: &gemm_runtime::spec::KernelSpec) -> [Layout; 3] {
    [spec.a.layout, spec.b.layout, spec.c.layout]
}

/// The random tests' seed: `default`, or `GEMM_TILES_TEST_SEED` where set
/// (added to it), to draw other cases from the same tests.
fn test_seed(default: u64) -> u64 {
    match std::env::var("GEMM_TILES_TEST_SEED") {
        Ok(v) => default + v.parse::<u64>().expect("GEMM_TILES_TEST_SEED is a number"),
        Err(_) => default,
    }
}

/// Lines and elements per line of A (m x k), B (k x n) and C (m x n) in
/// `spec`'s layouts.
fn line_shapes(spec: &gemm_runtime::spec::KernelSpec, m: usize, n: usize, k: usize) -> [(usize, usize); 3] {
    let l = layouts_of(spec);
    let shape = |rows: usize, cols: usize, layout: Layout| if layout == Layout::RowMajor { (rows, cols) } else { (cols, rows) };
    // (a gated C holds a column for each pair of the product's)
    let c_cols = if spec.fused.gated { n / 2 } else { n };
    [shape(m, k, l[0]), shape(k, n, l[1]), shape(m, c_cols, l[2])]
}

/// What a launch on laid-out buffers came to.
#[derive(Debug)]
enum Outcome {
    /// The kernel ran, by this plan, and C matched cuBLAS element by element.
    Ran(Plan),
    /// The launch was refused, and C's buffer was left as it was.
    Refused(GemmError),
}

/// `k` on random A and B (from `seed`), each operand's lines `lds[i]`
/// elements apart and starting `offsets[i]` elements into a buffer of its
/// own, every buffer NaN around and between its lines (what lies outside A
/// and B must never reach C, and C's must stay as it was): a refusal must leave C's
/// buffer untouched; a run must match cuBLAS on the same numbers element
/// by element and write nothing between or past C's lines. `Err` says what
/// went wrong.
fn launch_spread(bench: &Bench, k: &Kernel, dims: Dims, lds: [usize; 3], offsets: [usize; 3], seed: u64) -> Result<Outcome, String> {
    use gemm_ladder::measure::{random_normal, DevMat};
    let s = bench.stream();
    let (m, n, kk) = (dims.m, dims.n, dims.k);
    let types = [k.spec.a.elem, k.spec.b.elem, k.spec.c.elem];
    let p = Problem::typed(bench, types, layouts_of(&k.spec), Dims::new(m, n, kk), seed).map_err(|e| e.to_string())?;
    let reference = p.reference(bench).map_err(|e| e.to_string())?;
    let shapes = line_shapes(&k.spec, m, n, kk);
    // the packed numbers, each line `ld` apart, `offset` into a buffer of `fill`
    let spread = |packed: &[f32], (lines, len): (usize, usize), ld: usize, offset: usize, fill: f32| -> Vec<f32> {
        let mut out = vec![fill; offset + lines * ld + 8];
        for i in 0..lines {
            out[offset + i * ld..offset + i * ld + len].copy_from_slice(&packed[i * len..(i + 1) * len]);
        }
        out
    };
    let (sa, sb, sc) = (shapes[0], shapes[1], shapes[2]);
    // NaN around A and B: nothing outside them may reach C, not even times a zero
    let a = spread(&random_normal(sa.0 * sa.1, seed), sa, lds[0], offsets[0], f32::NAN);
    let b = spread(&random_normal(sb.0 * sb.1, seed + 1), sb, lds[1], offsets[1], f32::NAN);
    let c = spread(&vec![f32::NAN; sc.0 * sc.1], sc, lds[2], offsets[2], f32::NAN);
    let dev = |t, v: &[f32]| DevMat::from_f32(s, t, v).map_err(|e| e.to_string());
    let (a, b, mut c) = (dev(types[0], &a)?, dev(types[1], &b)?, dev(types[2], &c)?);
    let dims = dims.with_ld(lds[0], lds[1], lds[2]);
    let [oa, ob, oc] = offsets;
    // every pair of 16-bit operands with every C, and f32 throughout
    macro_rules! launch_typed {
        ($(($ta:ident, $tc:ident)),*) => {
            match (&a, &b, &mut c) {
                $((DevMat::$ta(a), DevMat::$ta(b), DevMat::$tc(c)) => {
                    let (a, b, mut c) = (a.slice(oa..), b.slice(ob..), c.slice_mut(oc..));
                    (k.plan(s, &a, &b, &mut c, dims), k.launch(s, &a, &b, &mut c, dims))
                })*
                _ => return Err(format!("{}: types this test does not dispatch", k.name)),
            }
        };
    }
    let (plan, launched) = launch_typed!((F32, F32), (F16, F32), (F16, F16), (F16, Bf16), (Bf16, F32), (Bf16, F16), (Bf16, Bf16));
    let out = c.to_f32(s).map_err(|e| e.to_string())?;
    if let Err(e) = launched {
        if plan.is_ok() {
            return Err(format!("planned as {plan:?}, then refused: {e}"));
        }
        return match out.iter().all(|x| x.is_nan()) {
            true => Ok(Outcome::Refused(e)),
            false => Err(format!("refused ({e}), yet C's buffer was written")),
        };
    }
    let plan = plan.map_err(|e| format!("ran, though its plan was refused: {e}"))?;
    let (ldc, tol) = (lds[2], gemm_runtime::internal::data::tolerance(k.spec.c.elem));
    let rms = (reference.iter().map(|&r| (r as f64).powi(2)).sum::<f64>() / reference.len().max(1) as f64).sqrt();
    if out[..oc].iter().any(|x| !x.is_nan()) {
        return Err("written before C's first line".into());
    }
    for i in 0..sc.0 {
        let line = &out[oc + i * ldc..(oc + (i + 1) * ldc).min(out.len())];
        if let Some(j) = line[sc.1..].iter().position(|x| !x.is_nan()) {
            return Err(format!("written past line {i}'s end, at element {}", sc.1 + j));
        }
        for (j, (&o, &r)) in line[..sc.1].iter().zip(&reference[i * sc.1..(i + 1) * sc.1]).enumerate() {
            // a unit or two in C's last place, plus summation order
            if !o.is_finite() || (o - r).abs() as f64 > 4.0 * tol * (r.abs() as f64) + tol * rms {
                return Err(format!("line {i}, element {j}: {o} where cuBLAS has {r} ({plan:?})"));
            }
        }
    }
    Ok(Outcome::Ran(plan))
}

/// Leading dimensions packed or up to 12 elements past the line, and views
/// that start up to 7 elements into their buffers, each operand its own.
fn random_lines(rng: &mut impl rand::Rng, spec: &gemm_runtime::spec::KernelSpec, dims: Dims) -> ([usize; 3], [usize; 3]) {
    let lds = line_shapes(spec, dims.m, dims.n, dims.k).map(|(_, len)| len + if rng.random_bool(0.3) { 0 } else { rng.random_range(1..=12) });
    let offsets = [(); 3].map(|_| if rng.random_bool(0.5) { 0 } else { rng.random_range(1..=7) });
    (lds, offsets)
}

/// Random sizes (1 to 400 on each side, up to 1500 in one case a kernel,
/// edge cases around tile multiples among them), random leading dimensions (packed or up to 12
/// elements past the line, each operand its own) and views that start up
/// to 7 elements into their buffers, seeded (`GEMM_TILES_TEST_SEED=N`
/// draws others): every guarded kernel and a
/// sample of every tuned space's points runs each and matches cuBLAS
/// element by element, writing nothing between or past C's lines; a
/// kernel that tiles only some sizes runs those right and refuses the
/// rest without touching C.
#[test]
#[ignore = "needs a CUDA GPU"]
fn random_sizes_lines_and_offsets_match_cublas_or_are_refused() {
    use gemm_ladder::decode::{decode_cluster, decode_mma, decode_split, decode_swapped};
    use gemm_ladder::tuned::{hopper_tuned, mma_tuned, simt_tuned};
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let bench = bench();
    let mut rng = StdRng::seed_from_u64(test_seed(20261127));
    // (the fp8 ladder's steps take scales and 8-bit operands: the fp8 tests cover their sizes)
    let mut kernels: Vec<&Kernel> = gemm_ladder::steps::all().map(|s| s.kernel).filter(|k| !k.spec.a.elem.is_fp8()).collect();
    for tuned in [
        &simt_tuned::KERNEL,
        &mma_tuned::KERNEL,
        &hopper_tuned::KERNEL,
        &decode_mma::KERNEL,
        &decode_swapped::KERNEL,
        &decode_split::KERNEL,
        &decode_cluster::KERNEL,
    ] {
        let count = tuned.points().len();
        for _ in 0..3 {
            kernels.push(tuned.kernel(rng.random_range(0..count)));
        }
    }
    const EDGES: [usize; 22] = [1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257];
    let (mut ran, mut refused) = (0, 0);
    for (i, k) in kernels.into_iter().enumerate() {
        if k.spec.arch == gemm_runtime::spec::Arch::Sm90a && bench.gpu.capability != (9, 0) {
            continue;
        }
        let guarded = k.spec.edges == gemm_runtime::spec::Edges::Guarded;
        for case in 0..if guarded { 5 } else { 2 } {
            // the last case of a guarded kernel large enough for a persistent walk or shared tiles
            let most = if guarded && case == 4 { 1500 } else { 400 };
            let mut side = || if rng.random_bool(0.4) { EDGES[rng.random_range(0..EDGES.len())] } else { rng.random_range(1..=most) };
            let dims = Dims::new(side(), side(), side());
            let (lds, offsets) = random_lines(&mut rng, &k.spec, dims);
            let seed = 1000 + 10 * i as u64 + case;
            let what = format!("{} at {} x {} x {}, lds {lds:?}, offsets {offsets:?}", k.name, dims.m, dims.n, dims.k);
            match launch_spread(&bench, k, dims, lds, offsets, seed) {
                Ok(Outcome::Ran(_)) => ran += 1,
                Ok(Outcome::Refused(e)) => {
                    assert!(!guarded, "{what}: a guarded kernel refused: {e}");
                    refused += 1;
                }
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
    println!("{ran} launches ran and matched cuBLAS, {refused} were refused");
    assert!(ran > refused, "most random launches run");
}

/// Specs a user might write beyond the ladder's: random legal settings on
/// every step (`variants::random_variant`, seeded), each at two random
/// sizes (one small, one large enough for a persistent walk or shared
/// tiles, rounded up to the tile multiples of a kernel that needs them)
/// with random leading dimensions and offsets, as above: it matches
/// cuBLAS element by element, or (where it tiles only some sizes) is
/// refused without touching C.
#[test]
#[ignore = "needs a CUDA GPU"]
fn random_legal_variants_of_every_step_match_cublas_or_are_refused() {
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let bench = bench();
    let mut rng = StdRng::seed_from_u64(test_seed(20261129));
    let (mut ran, mut refused) = (0, 0);
    for i in 0..30 {
        let (what, k) = gemm_ladder::variants::random_variant(&mut rng).expect("a legal variant within 200 draws");
        if k.spec.arch == gemm_runtime::spec::Arch::Sm90a && bench.gpu.capability != (9, 0) {
            continue;
        }
        let req = k.spec.requirements();
        for (case, most) in [(0, 300), (1, 1200)] {
            // the large case of a kernel that tiles only some sizes at one of those
            let up = |x: usize, multiple: u32| if case == 1 { x.next_multiple_of(multiple as usize) } else { x };
            let (m, n, kk) = (rng.random_range(1..=most), rng.random_range(1..=most), rng.random_range(1..=most));
            let dims = Dims::new(up(m, req.m_multiple), up(n, req.n_multiple), up(kk, req.k_multiple));
            let (lds, offsets) = random_lines(&mut rng, &k.spec, dims);
            let at = format!("{what} ({}) at {} x {} x {}, lds {lds:?}, offsets {offsets:?}", k.name, dims.m, dims.n, dims.k);
            match launch_spread(&bench, &k, dims, lds, offsets, 5000 + 10 * i + case) {
                Ok(Outcome::Ran(_)) => ran += 1,
                Ok(Outcome::Refused(e)) => {
                    assert!(k.spec.edges != gemm_runtime::spec::Edges::Guarded, "{at}: a guarded kernel refused: {e}");
                    refused += 1;
                }
                Err(e) => panic!("{at}: {e}"),
            }
        }
    }
    println!("{ran} launches of random variants ran and matched cuBLAS, {refused} were refused");
    assert!(ran > 0, "some random variants run");
}

/// Fused epilogues (alpha, beta over the C read in, a bias along M or N,
/// activations) and plain kernels of every path, seeded at random: sizes
/// (any, where the kernel is guarded, else its tile multiples), leading
/// dimensions packed or up to 9 elements past the line, batches of one to
/// three problems with odd gaps between them (a shared A or B now and then),
/// random alpha and beta (beta = 0 on a third: C must not be read): C
/// matches cuBLAS with the host's epilogue, and nothing outside C is written.
/// Besides the fixed specs, random legal variants of the steps
/// (`variants::random_variant`) with a random epilogue.
#[test]
#[ignore = "needs a CUDA GPU"]
fn fused_epilogues_on_random_sizes_lines_and_batches_match_cublas() {
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let bench = bench();
    let mut rng = StdRng::seed_from_u64(test_seed(20261128));
    let mut specs: Vec<_> =
        gemm_ladder::combos::fused().into_iter().chain(gemm_ladder::combos::guarded()).chain(gemm_ladder::combos::hopper()).collect();
    // a sample of the specs, the same every run
    let mut picked = Vec::new();
    while picked.len() < 16 && !specs.is_empty() {
        picked.push(specs.swap_remove(rng.random_range(0..specs.len())));
    }
    // and random legal variants of the steps with a random epilogue, where the rules take it
    use gemm_runtime::spec::{Activation, Bias, Dim, Elem, Fused};
    let mut drawn = 0;
    while drawn < 8 {
        let (_, k) = gemm_ladder::variants::random_variant(&mut rng).expect("a legal variant within 200 draws");
        let mut spec = k.spec.clone();
        let activations = [None, Some(Activation::Relu), Some(Activation::Gelu), Some(Activation::GeluTanh), Some(Activation::Silu)];
        let bias_elem = if rng.random_bool(0.5) { Elem::F32 } else { spec.c.elem };
        let along = if rng.random_bool(0.5) { Dim::M } else { Dim::N };
        spec.fused = Fused {
            alpha: rng.random_bool(0.5),
            beta: rng.random_bool(0.5),
            bias: rng.random_bool(0.5).then_some(Bias { along, elem: bias_elem }),
            activation: activations[rng.random_range(0..activations.len())],
            scale: None,
            gated: false,
        };
        if spec.fused.any() && gemm_runtime::gemm_core::check(&spec).is_empty() && Kernel::from_spec(spec.clone()).is_ok() {
            picked.push(spec);
            drawn += 1;
        }
    }
    for (i, spec) in picked.into_iter().enumerate() {
        if spec.arch == gemm_runtime::spec::Arch::Sm90a && bench.gpu.capability != (9, 0) {
            continue;
        }
        let k = Kernel::from_spec(spec).unwrap();
        for case in 0..2 {
            let (m, n, kk) = random_sides(&mut rng, &k.spec, |rng| rng.random_range(1..=300usize));
            let shapes = line_shapes(&k.spec, m, n, kk);
            let lds = shapes.map(|(_, len)| len + if rng.random_bool(0.3) { 0 } else { rng.random_range(1..=9) });
            let count = rng.random_range(1..=3usize);
            // scales per channel are one problem's: a batch of them is refused (the batched test
            // checks that), so those kernels run one problem
            let count = if k.spec.fused.scale == Some(gemm_runtime::spec::Scale::Channel) { 1 } else { count };
            // each problem's span, then an odd gap
            let gaps = [(); 3].map(|_| rng.random_range(0..=13usize));
            let stride = |j: usize| (shapes[j].0 - 1) * lds[j] + shapes[j].1 + gaps[j];
            let shared_b = rng.random_bool(0.3);
            let seed = 3000 + 10 * i as u64 + case;
            // a shared A now and then, drawn apart so that the draws above and
            // below stay those of earlier seeds
            let shared_a = StdRng::seed_from_u64(test_seed(seed << 20)).random_bool(0.25);
            let (sa, sb, sc) = (if shared_a { 0 } else { stride(0) }, if shared_b { 0 } else { stride(1) }, stride(2));
            let bias_len = if k.spec.fused.bias.is_some_and(|b| b.along == gemm_runtime::spec::Dim::N) { n } else { m };
            let sbias = if rng.random_bool(0.5) { 0 } else { bias_len + rng.random_range(0..=5usize) };
            let dims = Dims::new(m, n, kk).with_ld(lds[0], lds[1], lds[2]).batched(count, sa, sb, sc).bias_stride(sbias);
            let alpha = rng.random_range(-2.0..2.0f32);
            let beta = if rng.random_bool(0.33) { 0.0 } else { rng.random_range(-2.0..2.0f32) };
            verify_fused(&bench, &k, dims, seed, Scalars { alpha, beta }).unwrap_or_else(|e| panic!("{} at {dims:?}: {e}", k.name));
        }
    }
}

/// The tuned fp8 kernels (Hopper and mma.sync, per tensor and block
/// scaled) and the fp8 decode kernels.
fn fp8_tuned_kernels() -> [&'static gemm_runtime::Tuned; 6] {
    [
        &gemm_ladder::tuned::fp8_tuned::KERNEL,
        &gemm_ladder::tuned::fp8_block_tuned::KERNEL,
        &gemm_ladder::decode::decode_fp8::KERNEL,
        &gemm_ladder::decode::decode_fp8_sm89::KERNEL,
        &gemm_ladder::tuned::mma_fp8_tuned_sm89::KERNEL,
        &gemm_ladder::tuned::mma_fp8_block_tuned_sm89::KERNEL,
    ]
}

/// m, n and k for `spec` from `draw` (in that order): any where the kernel
/// is guarded, else rounded up to its tile multiples; n even where a gated
/// epilogue pairs the product's columns.
fn random_sides(
    rng: &mut rand::rngs::StdRng,
    spec: &gemm_runtime::spec::KernelSpec,
    mut draw: impl FnMut(&mut rand::rngs::StdRng) -> usize,
) -> (usize, usize, usize) {
    let req = spec.requirements();
    let guarded = spec.edges == gemm_runtime::spec::Edges::Guarded;
    let mut side = |multiple: u32| {
        let x = draw(rng);
        if guarded {
            x
        } else {
            x.next_multiple_of(multiple as usize)
        }
    };
    let (m, n, k) = (side(req.m_multiple), side(req.n_multiple), side(req.k_multiple));
    (m, if spec.fused.gated { n.next_multiple_of(2) } else { n }, k)
}

/// A batch of `m` x `n` x `k` problems for `spec`: lines packed (with
/// probability `packed`) or up to 20 elements past their end, one to three
/// problems (one under per-channel scales, which a batch does not take),
/// each problem's span then an odd gap, now and then a shared B (and its
/// block scales); random alpha, and beta (0 a third of the time: C must
/// not be read).
fn random_batch(
    rng: &mut rand::rngs::StdRng,
    spec: &gemm_runtime::spec::KernelSpec,
    (m, n, k): (usize, usize, usize),
    packed: f64,
) -> (Dims, Scalars) {
    use rand::Rng;
    let shapes = line_shapes(spec, m, n, k);
    let lds = shapes.map(|(_, len)| len + if rng.random_bool(packed) { 0 } else { rng.random_range(1..=20) });
    let count = if spec.fused.scale == Some(gemm_runtime::spec::Scale::Channel) { 1 } else { rng.random_range(1..=3usize) };
    let gaps = [(); 3].map(|_| rng.random_range(0..=13usize));
    let stride = |j: usize| (shapes[j].0 - 1) * lds[j] + shapes[j].1 + gaps[j];
    let sb = if rng.random_bool(0.3) { 0 } else { stride(1) };
    let dims = Dims::new(m, n, k).with_ld(lds[0], lds[1], lds[2]).batched(count, stride(0), sb, stride(2));
    let alpha = rng.random_range(-2.0..2.0f32);
    let beta = if rng.random_bool(0.33) { 0.0 } else { rng.random_range(-2.0..2.0f32) };
    (dims, Scalars { alpha, beta })
}

/// 8-bit and scaled kernels, seeded at random: a sample of the fp8
/// combinations (Hopper and mma.sync: e4m3, e5m2 and mixed, every C type,
/// scales per tensor, channel and block, the fused math) and the 16-bit
/// scaled ones, every 8-bit or scaled ladder step, and random points of
/// the tuned and decode fp8 kernels, each at three random sizes (any, where
/// it is guarded, else its tile multiples; K blocks of scales cut anywhere),
/// lines packed or up to 20 elements past their end (copied or read by a
/// variant), batches of one to three problems with odd gaps (one problem
/// under per-channel scales, which a batch does not take), random alpha and
/// beta: C matches sgemm on the operands widened to f32, each times the
/// scale the kernel must read for it (scales that differ by row, column, K
/// block and problem, by up to 4), with the host's epilogue (gated pairs
/// joined), and nothing outside C is written.
#[test]
#[ignore = "needs a CUDA GPU"]
fn fp8_and_scaled_kernels_on_random_sizes_lines_and_batches_match_the_scaled_product() {
    use gemm_runtime::spec::Arch;
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let bench = bench();
    let mut rng = StdRng::seed_from_u64(test_seed(20261203));
    let scaled = |s: &gemm_runtime::spec::KernelSpec| s.a.elem.is_fp8() || s.fused.scale.is_some();
    let mut combos: Vec<_> = gemm_ladder::combos::hopper_fp8()
        .into_iter()
        .chain(gemm_ladder::combos::mma_fp8())
        .chain(gemm_ladder::combos::fused().into_iter().filter(|s| s.fused.scale.is_some()))
        .collect();
    let mut specs: Vec<_> = gemm_ladder::steps::all().map(|s| s.kernel.spec.clone()).filter(|s| scaled(s)).collect();
    for _ in 0..16.min(combos.len()) {
        specs.push(combos.swap_remove(rng.random_range(0..combos.len())));
    }
    for tuned in fp8_tuned_kernels() {
        let points = tuned.points();
        for _ in 0..2 {
            specs.push(points[rng.random_range(0..points.len())].clone());
        }
    }
    const EDGES: [usize; 16] = [1, 2, 3, 5, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257];
    let mut ran = 0;
    for (i, spec) in specs.into_iter().enumerate() {
        assert!(scaled(&spec), "{}", spec.name);
        if spec.arch == Arch::Sm90a && bench.gpu.capability != (9, 0) {
            continue;
        }
        let k = Kernel::from_spec(spec).unwrap();
        for case in 0..3 {
            // the last case deep enough for many K blocks of scales and a persistent walk
            let most = if case == 2 { 1000 } else { 400 };
            let side = |rng: &mut StdRng| if rng.random_bool(0.4) { EDGES[rng.random_range(0..EDGES.len())] } else { rng.random_range(1..=most) };
            let (m, n, kk) = random_sides(&mut rng, &k.spec, side);
            let (dims, scalars) = random_batch(&mut rng, &k.spec, (m, n, kk), 0.3);
            let seed = 6000 + 10 * i as u64 + case;
            verify_fused(&bench, &k, dims, seed, scalars).unwrap_or_else(|e| panic!("{} at {dims:?}: {e}", k.name));
            ran += 1;
        }
    }
    println!("{ran} launches of 8-bit and scaled kernels matched the scaled product");
}

/// Legal specs changed at random (`gemm_ladder::mutations`: every step,
/// combination and a sample of every tuned kernel's points changed in one
/// to three places, as `tests/mutations.rs` compiles them), ungrouped and
/// of an arch this GPU runs, each at two random sizes (any where it is
/// guarded, else its tile multiples), lines up to 20 elements past their
/// end, batches of one to three with odd gaps and random alpha and beta,
/// and a plain kernel once more on views that start up to 7 elements into
/// their buffers: C matches the reference (scales and epilogue included)
/// and nothing outside it is written, or the launch is refused with an
/// `Err` that says why ([`a_refusal`]).
#[test]
#[ignore = "needs a CUDA GPU"]
fn legal_specs_changed_at_random_match_the_reference_or_are_refused() {
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let bench = bench();
    let mut rng = StdRng::seed_from_u64(test_seed(20261204));
    let bases = gemm_ladder::mutations::bases();
    let here = bench.gpu.capability;
    let kernels: Vec<Kernel> =
        (0..40).map(|_| gemm_ladder::mutations::random_legal(&mut rng, &bases, |s| s.groups.is_none() && s.arch.runs_on(here))).collect();
    gemm_runtime::compile_all(&kernels, &bench.gpu.ctx);
    let (mut ran, mut refused) = (0, Vec::new());
    for (i, k) in kernels.iter().enumerate() {
        let i = i as u64;
        for case in 0..2 {
            let most = if case == 1 { 1000 } else { 300 };
            let (m, n, kk) = random_sides(&mut rng, &k.spec, |rng| rng.random_range(1..=most));
            let (dims, scalars) = random_batch(&mut rng, &k.spec, (m, n, kk), 0.4);
            match verify_fused(&bench, k, dims, 7000 + 10 * i + case, scalars) {
                Ok(_) => ran += 1,
                Err(gemm_ladder::measure::Failure::Gpu(e)) if a_refusal(&e) => refused.push(format!("{}: {e}", k.name)),
                Err(e) => panic!("{} at {dims:?} ({:?}): {e}", k.name, k.spec),
            }
            // a plain 16- or 32-bit kernel once more on views that start anywhere in their buffers
            if case == 0 && !k.spec.fused.any() && !k.spec.a.elem.is_fp8() {
                let (lds, offsets) = random_lines(&mut rng, &k.spec, Dims::new(m, n, kk));
                match launch_spread(&bench, k, Dims::new(m, n, kk), lds, offsets, 7005 + 10 * i) {
                    Ok(Outcome::Ran(_)) => ran += 1,
                    Ok(Outcome::Refused(e)) if a_refusal(&e) => refused.push(format!("{}: {e}", k.name)),
                    Ok(Outcome::Refused(e)) => panic!("{} at {m} x {n} x {kk}, lds {lds:?}, offsets {offsets:?}: {e}", k.name),
                    Err(e) => panic!("{} at {m} x {n} x {kk}, lds {lds:?}, offsets {offsets:?} ({:?}): {e}", k.name, k.spec),
                }
            }
            // stream-K's flags and the queue's counts, the stream's kept scratch, back at zero
            if k.spec.persistent.is_some_and(|p| p != gemm_runtime::spec::Persistent::Tiles) {
                let flags = k.stream_k_scratch(bench.stream(), dims).unwrap().flag_words(bench.stream()).unwrap();
                assert!(flags.iter().all(|&f| f == 0), "{} at {dims:?} left its scratch at {flags:?}", k.name);
            }
        }
    }
    println!("{ran} launches of changed specs matched the reference; {} refused:\n{}", refused.len(), refused.join("\n"));
    assert!(ran >= 40, "only {ran} launches ran");
}

/// What a launch of a legal kernel may answer with an `Err` rather than
/// run: shared memory past this GPU's, a size, line or batch it does not
/// take, indices past 32 bits, a register pool too small for its
/// `setmaxnreg`. Anything else (NVRTC's, the driver's) is a failure.
fn a_refusal(e: &GemmError) -> bool {
    matches!(
        e,
        GemmError::SharedMemory { .. }
            | GemmError::UnsupportedSize { .. }
            | GemmError::Misaligned { .. }
            | GemmError::IndexOverflow { .. }
            | GemmError::RegisterPool { .. }
            | GemmError::Batch(_)
    )
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fused_epilogues_match_cublas_on_every_path_layout_and_c_type() {
    let bench = bench();
    for (i, spec) in gemm_ladder::combos::fused().into_iter().enumerate() {
        let k = Kernel::from_spec(spec).unwrap();
        // beta = 0 on every third: C stays poisoned, so a kernel that reads it fails
        let sc = Scalars { alpha: 1.5, beta: if i % 3 == 0 { 0.0 } else { -0.75 } };
        for dims in [Dims::new(128, 192, 64), Dims::new(256, 128, 320)] {
            verify_fused(&bench, &k, dims, 40 + i as u64, sc).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// Empty products, as BLAS and PyTorch take them. Over K = 0 the product
/// is zeros: every fused epilogue (alpha, beta, the bias along m or n,
/// each activation, gated pairs, scales per tensor, channel or block) on
/// every path writes C's epilogue of zeros and nothing past C, batched or
/// not, A and B buffers never read; a tuned kernel runs a point without
/// tuning or keeping a choice. With no rows, no columns or no problems a
/// launch writes nothing at all, C's poison kept bit for bit.
#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_products_write_nothing_and_over_k_0_the_epilogue_of_zeros() {
    use gemm_ladder::measure::{padded_dims, DevMat};
    use gemm_runtime::internal::data::POISON;
    let bench = bench();
    let s = bench.stream();
    let mut specs: Vec<_> = gemm_ladder::combos::fused().into_iter().chain(gemm_ladder::combos::hopper()).collect();
    if bench.gpu.capability >= (8, 9) {
        specs.extend(gemm_ladder::combos::mma_fp8());
        specs.push(gemm_ladder::steps::mma_fp8_block_sm89::SPEC);
    }
    if bench.gpu.capability == (9, 0) {
        specs.extend(gemm_ladder::combos::hopper_fp8());
        specs.push(gemm_ladder::fp8::fp8_block_scaled::SPEC);
    }
    let kernels: Vec<Kernel> = specs
        .into_iter()
        .filter(|s| s.arch != gemm_runtime::spec::Arch::Sm90a || bench.gpu.capability == (9, 0))
        .map(|s| Kernel::from_spec(s).unwrap())
        .collect();
    gemm_runtime::compile_all(&kernels, s.context());
    for (i, k) in kernels.iter().enumerate() {
        let req = k.spec.requirements();
        let up = |x: usize, to: u32| x.next_multiple_of(to as usize);
        // (a gated epilogue pairs the product's columns: n even)
        let (m, n) = (up(67, req.m_multiple), up(130, req.n_multiple));
        let dims = padded_dims(m, n, 0, layouts_of(&k.spec));
        // every third a batch of two, each problem's zeros its own on every other
        let dims = match i % 3 {
            0 if k.spec.fused.scale != Some(gemm_runtime::spec::Scale::Channel) => {
                let c = gemm_runtime::internal::spec_shapes(&k.spec, dims)[2];
                let bias = k.spec.fused.bias.map_or(0, |b| if b.along == gemm_runtime::spec::Dim::N { n } else { m });
                dims.batched(2, i % 2, 0, c.span().next_multiple_of(64)).bias_stride(bias)
            }
            _ => dims,
        };
        let sc = Scalars { alpha: 1.5, beta: if i % 4 == 0 { 0.0 } else { -0.75 } };
        verify_fused(&bench, k, dims, 900 + i as u64, sc).unwrap_or_else(|e| panic!("{} at k = 0 ({dims:?}): {e}", k.name));
        // nothing to write: C and the lines past it keep their poison (the operands, bias and
        // scales of one problem over K = 1, long enough for each empty size)
        let one = padded_dims(m, n, 1, layouts_of(&k.spec));
        let bias = k.spec.fused.bias.map(|b| DevMat::from_f32(s, b.elem, &vec![0.25; 2 * (m + n)]).unwrap());
        for empty in [Dims { m: 0, ..one }, Dims { n: 0, ..one }, one.batched(0, 0, 0, 0)] {
            let mut p = Problem::for_kernel(&bench, k, one, 7).unwrap();
            let mut c = p.guarded_c(&bench).unwrap();
            p.dims = empty;
            p.launch_fused(&bench, k, &mut c, 2.0, 0.5, bias.as_ref()).unwrap_or_else(|e| panic!("{} at {empty:?}: {e}", k.name));
            let out = c.to_f32(s).unwrap();
            assert!(out.iter().all(|x| x.is_nan()), "{} at {empty:?}: an empty product wrote C", k.name);
        }
    }
    println!("{} kernels wrote their epilogue of zeros over K = 0 and nothing for empty sizes", kernels.len());
    // a tuned kernel over K = 0: zeros, and no choice kept for the shape
    let tuned = &gemm_ladder::tuned::mma_tuned::KERNEL;
    let dims = Dims::new(100, 300, 0);
    verify_tuned_fused(&bench, tuned, dims, 5, Scalars { alpha: 1.0, beta: 0.0 }).unwrap_or_else(|e| panic!("mma_tuned at k = 0: {e}"));
    assert!(tuned.chosen_for(s, dims).unwrap().is_none(), "a choice was kept for an empty product");
    // masked groups over K = 0: each expert's rows zeros, the rows past its count untouched
    if bench.gpu.capability == (9, 0) {
        let (groups, m_max, n) = (4, 300, 264);
        let counts = [3, 0, 400, -1];
        let rows = s.clone_htod(&counts).unwrap();
        let ab = s.clone_htod(&[bf16::ZERO]).unwrap();
        for kernel in [&gemm_ladder::grouped::grouped_masked::KERNEL, &gemm_ladder::grouped::grouped_masked_sm80::KERNEL] {
            let mut c = s.clone_htod(&vec![bf16::NAN; groups * m_max * n]).unwrap();
            let dims = Dims::new(m_max, n, 0).batched(groups, 0, 0, m_max * n);
            let ep = gemm_runtime::EpilogueArgs::new().groups(&rows);
            kernel.launch_with(s, &ab.slice(0..0), &ab.slice(0..0), &mut c, dims, ep).unwrap_or_else(|e| panic!("{}: {e}", kernel.name));
            let out = s.clone_dtoh(&c).unwrap();
            for (g, &count) in counts.iter().enumerate() {
                let rows = count.clamp(0, m_max as i32) as usize;
                let expert = &out[g * m_max * n..(g + 1) * m_max * n];
                assert!(expert[..rows * n].iter().all(|x| x.to_f32() == 0.0), "{}: expert {g}'s rows over K = 0 are not zeros", kernel.name);
                assert!(expert[rows * n..].iter().all(|x| x.is_nan()), "{}: expert {g}: a row past its count was written", kernel.name);
            }
        }
    }
    // A and B as empty views, as a caller with no K would pass them
    let one = s.clone_htod(&[1.0f32]).unwrap();
    let mut c = s.clone_htod(&[POISON; 16 * 16]).unwrap();
    naive(s, &one.slice(0..0), &one.slice(0..0), &mut c, Dims::new(16, 16, 0)).unwrap();
    assert!(s.clone_dtoh(&c).unwrap().iter().all(|&x| x == 0.0), "C = A * B over K = 0 is zeros");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn guarded_kernels_match_cublas_at_odd_sizes_and_one_off_tile_multiples() {
    let bench = bench();
    let ladder = [&gemm_ladder::steps::autotuned::KERNEL, &gemm_ladder::steps::mma_autotuned::KERNEL];
    let combos: Vec<Kernel> = gemm_ladder::combos::guarded().into_iter().map(|s| Kernel::from_spec(s).unwrap()).collect();
    for (i, k) in ladder.into_iter().chain(combos.iter()).enumerate() {
        let (bm, bn, bk) = (k.spec.block.m as usize, k.spec.block.n as usize, k.spec.block.k.unwrap_or(16) as usize);
        let mut shapes = vec![(1, 1, 1), (127, 129, 33), (2 * bm + 1, 2 * bn - 1, 3 * bk + 1), (bm - 1, bn + 1, bk - 1)];
        if i < 2 {
            shapes.push((1000, 3000, 999));
        }
        for (j, (m, n, kk)) in shapes.into_iter().enumerate() {
            let dims = gemm_ladder::measure::padded_dims(m, n, kk, layouts_of(&k.spec));
            let sc = Scalars { alpha: 0.5, beta: 2.0 };
            verify_fused(&bench, k, dims, 70 + j as u64, sc).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// 129 x 257 x 65 with packed operands (every leading dimension odd, so
/// every vector-copying kernel reads and writes through aligned copies),
/// fused, on every guarded kernel: the ladder's, the guarded combinations
/// and the guarded Hopper ones.
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_guarded_kernel_takes_129_x_257_x_65_packed() {
    let bench = bench();
    let ladder = STEPS.iter().chain(&TENSOR_STEPS).chain(&gemm_ladder::HOPPER_STEPS).map(|s| s.kernel);
    let combos: Vec<Kernel> =
        gemm_ladder::combos::guarded().into_iter().chain(gemm_ladder::combos::hopper()).map(|s| Kernel::from_spec(s).unwrap()).collect();
    let guarded = ladder.chain(combos.iter()).filter(|k| k.spec.edges == gemm_runtime::spec::Edges::Guarded && runs_here(&bench, k));
    for (i, k) in guarded.enumerate() {
        let sc = Scalars { alpha: 0.5, beta: 2.0 };
        // (a gated epilogue pairs the product's columns)
        let n = if k.spec.fused.gated { 258 } else { 257 };
        verify_fused(&bench, k, Dims::new(129, n, 65), 400 + i as u64, sc).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Three problems with gaps between them (a shared B on every other
/// kernel) on every path, the Hopper path's L2 prefetch on each layout of
/// A and B among them, and the stream-K kernels, whose units cross from
/// one problem to the next, against strided batched cuBLAS.
#[test]
#[ignore = "needs a CUDA GPU"]
fn batched_problems_match_strided_batched_cublas_on_every_path() {
    let bench = bench();
    use gemm_ladder::steps::{autotuned, mma_autotuned, two_consumers, wgmma_tma};
    let ladder = [&autotuned::KERNEL, &mma_autotuned::KERNEL, &wgmma_tma::KERNEL, &two_consumers::KERNEL];
    let fused: Vec<Kernel> = gemm_ladder::combos::fused().into_iter().take(10).map(|s| Kernel::from_spec(s).unwrap()).collect();
    let guarded: Vec<Kernel> = gemm_ladder::combos::guarded().into_iter().take(6).map(|s| Kernel::from_spec(s).unwrap()).collect();
    // TMA's tensor maps take the batch as a third dimension (or none, where the batch shares an operand)
    let hopper: Vec<Kernel> = gemm_ladder::combos::hopper().into_iter().take(6).map(|s| Kernel::from_spec(s).unwrap()).collect();
    // the L2 prefetch ahead of the wait, on each layout of A and B (the batch's offsets in its addresses)
    let mut layouts_seen = Vec::new();
    let prefetching: Vec<Kernel> = gemm_ladder::combos::hopper()
        .into_iter()
        .filter_map(|mut s| {
            let Staging::Tma { prefetch, .. } = &mut s.staging else { return None };
            *prefetch = 2;
            let layouts = (s.a.layout, s.b.layout);
            (gemm_runtime::gemm_core::check(&s).is_empty() && !layouts_seen.contains(&layouts)).then(|| {
                layouts_seen.push(layouts);
                Kernel::from_spec(s).unwrap()
            })
        })
        .collect();
    assert_eq!(prefetching.len(), 4, "a kernel that prefetches for each layout of A and B");
    // stream-K's units cross from one problem to the next: each unit's loads read its own
    let stream_k: Vec<&Kernel> = stream_k_kernels().into_iter().filter(|k| runs_here(&bench, k)).collect();
    for (i, k) in
        ladder.into_iter().chain(fused.iter()).chain(guarded.iter()).chain(hopper.iter()).chain(prefetching.iter()).chain(stream_k).enumerate()
    {
        let guarded = k.spec.edges == gemm_runtime::spec::Edges::Guarded;
        // unguarded: whole tiles (a cluster's, where there is one)
        let req = k.spec.requirements();
        let up = |x: usize, to: u32| x.div_ceil(to as usize) * to as usize;
        let (m, n, kk) = if guarded { (200, 136, 72) } else { (up(256, req.m_multiple), up(256, req.n_multiple), 128) };
        let dims = gemm_ladder::measure::padded_dims(m, n, kk, layouts_of(&k.spec));
        // problems with gaps between them, and a shared B on every other kernel
        let one = |ld: Option<usize>, rows: usize, cols: usize, l: Layout| ld.unwrap() * if l == Layout::RowMajor { rows } else { cols };
        let l = layouts_of(&k.spec);
        let (sa, sb, sc) = (one(dims.lda, m, kk, l[0]) + 64, one(dims.ldb, kk, n, l[1]) + 32, one(dims.ldc, m, n, l[2]) + 8);
        let dims = dims.batched(3, sa, if i % 2 == 0 { 0 } else { sb }, sc).bias_stride(if i % 2 == 0 { 0 } else { 3000 });
        let scalars = Scalars { alpha: 1.25, beta: 0.5 };
        // scales per channel are one problem's: a batch is refused with an `Err`
        if k.spec.fused.scale == Some(gemm_runtime::spec::Scale::Channel) {
            match verify_fused(&bench, k, dims, 90 + i as u64, scalars) {
                Err(gemm_ladder::measure::Failure::Gpu(e)) => assert!(e.to_string().contains("one problem at a time"), "{}: {e}", k.name),
                other => panic!("{}: a batch with scales per channel: {other:?}", k.name),
            }
            continue;
        }
        verify_fused(&bench, k, dims, 90 + i as u64, scalars).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The hybrid schedules over the problems of a batch: three problems whose
/// tiles make a little more than a wave, so that the whole wave (tiles of
/// more than one problem) goes a block to a tile and the tiles left are
/// shared along K, the last row of tiles partial; C checked against
/// strided batched cuBLAS.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_hybrid_schedules_walk_whole_waves_and_share_the_rest_across_a_batch() {
    let bench = bench();
    for kernel in [&*HYBRID_WGMMA, &*TAIL_SPLIT_WGMMA, &tail_split_mma::KERNEL].into_iter().filter(|k| runs_here(&bench, k)) {
        let blocks = kernel.stream_k_grid(bench.stream(), Dims::new(64 * 128, 64 * 256, 64 * 64)).unwrap() as usize;
        // three problems of tiles_m x 4 tiles: about a third of a wave past a whole one
        let tiles_m = (blocks + blocks / 3).div_ceil(12);
        let (m, n, k) = (tiles_m * 128 - 3, 4 * 256, 200);
        let l = layouts_of(&kernel.spec);
        let dims = gemm_ladder::measure::padded_dims(m, n, k, l);
        let one = |ld: Option<usize>, rows: usize, cols: usize, l: Layout| ld.unwrap() * if l == Layout::RowMajor { rows } else { cols };
        let (sa, sb, sc) = (one(dims.lda, m, k, l[0]) + 64, one(dims.ldb, k, n, l[1]), one(dims.ldc, m, n, l[2]) + 8);
        let dims = dims.batched(3, sa, sb, sc);
        verify_fused(&bench, kernel, dims, 77, Scalars { alpha: 1.0, beta: 0.0 }).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn epilogue_and_edge_misuse_is_an_error() {
    let bench = bench();
    let k = &gemm_ladder::steps::mma_autotuned::KERNEL;
    // k = 999 with a packed row-major A: rows are not 16 bytes apart, so A
    // goes through an aligned copy, and C is still right
    verify(&bench, k, Dims::new(64, 64, 999), 1).unwrap_or_else(|e| panic!("{e}"));
    // a fused kernel launched without its arguments, or with a short bias
    let spec = gemm_ladder::combos::fused().into_iter().find(|s| s.fused.alpha && s.fused.bias.is_some()).unwrap();
    let fk = Kernel::from_spec(spec).unwrap();
    let dims = Dims::new(128, 128, 64);
    let p = Problem::for_kernel(&bench, &fk, dims, 2).unwrap();
    let mut c = p.poisoned_c(&bench).unwrap();
    let e = p.launch(&bench, &fk, &mut c).unwrap_err();
    assert!(matches!(e, GemmError::EpilogueArgs { .. }) && e.to_string().contains("give `alpha`"), "{e}");
    let short = gemm_ladder::measure::DevMat::from_f32(bench.stream(), fk.spec.fused.bias.unwrap().elem, &[1.0; 7]).unwrap();
    let e = p.launch_fused(&bench, &fk, &mut c, 1.0, 1.0, Some(&short)).unwrap_err();
    assert!(e.to_string().contains("its buffer holds 7"), "{e}");
    // a scaled kernel launched without its scales, and a plain one with them
    {
        let spec = gemm_ladder::combos::fused().into_iter().find(|s| s.fused.scale.is_some()).expect("a scaled combination");
        let sk = Kernel::from_spec(spec).unwrap();
        let mut ps = Problem::for_kernel(&bench, &sk, dims, 4).unwrap();
        let scales = ps.scales.take().unwrap();
        let mut c = ps.poisoned_c(&bench).unwrap();
        let e = ps.launch(&bench, &sk, &mut c).unwrap_err();
        assert!(matches!(e, GemmError::EpilogueArgs { .. }) && e.to_string().contains("give A's and B's scales"), "{e}");
        let plain = Problem::for_kernel(&bench, k, Dims::new(64, 64, 64), 5).unwrap();
        let mut c = plain.poisoned_c(&bench).unwrap();
        let ep = gemm_runtime::EpilogueArgs::new().scales(&scales.a, &scales.b);
        let (gemm_ladder::measure::DevMat::Bf16(a), gemm_ladder::measure::DevMat::Bf16(b), gemm_ladder::measure::DevMat::Bf16(c)) =
            (&plain.a, &plain.b, &mut c)
        else {
            unreachable!("mma_autotuned is bf16")
        };
        let e = k.launch_with(bench.stream(), a, b, c, Dims::new(64, 64, 64), ep).unwrap_err();
        assert!(e.to_string().contains("with no scales"), "{e}");
    }
    // C's problems may not overlap
    let dims = Dims::new(128, 128, 64).batched(2, 0, 0, 100);
    let q = Problem::for_kernel(&bench, k, dims, 3).unwrap();
    let mut c = q.poisoned_c(&bench).unwrap();
    let e = q.launch(&bench, k, &mut c).unwrap_err();
    assert!(matches!(e, GemmError::Batch(_)) && e.to_string().contains("write over each other"), "{e}");
}

/// Every path at leading dimensions 1, 3 and 7 elements past a multiple of
/// 8 (past the packed width), in views that start 1 or 3 elements into
/// their buffers, and 2 and 4 past (which bf16 kernels read by 4- and
/// 8-byte copies): the kernel runs on aligned copies or as a variant where
/// it must, C matches cuBLAS on the same numbers, and nothing is written
/// between C's lines.
#[test]
#[ignore = "needs a CUDA GPU"]
fn any_leading_dimension_and_offset_matches_cublas_on_every_path() {
    use gemm_ladder::steps::{autotuned, clusters, mma_autotuned, pingpong, tma_store, vectorized, wmma_block};
    let bench = bench();
    let kernels: [&Kernel; 7] = [
        &autotuned::KERNEL,
        &vectorized::KERNEL,
        &wmma_block::KERNEL,
        &mma_autotuned::KERNEL,
        &tma_store::KERNEL,
        &clusters::KERNEL,
        &pingpong::KERNEL,
    ];
    for k in kernels {
        if k.spec.arch == gemm_runtime::spec::Arch::Sm90a && bench.gpu.capability != (9, 0) {
            continue;
        }
        let req = k.spec.requirements();
        let up = |x: usize, to: u32| x.div_ceil(to as usize) * to as usize;
        let (m, n, kk) = (up(129, req.m_multiple), up(257, req.n_multiple), up(65, req.k_multiple));
        for (case, (extra, offset)) in [(1usize, 1usize), (3, 0), (7, 3), (2, 0), (4, 0)].into_iter().enumerate() {
            // each line `extra` elements past a multiple of 8, `offset` into its buffer
            let lines = line_shapes(&k.spec, m, n, kk);
            let lds = lines.map(|(_, len)| len.next_multiple_of(8) + extra);
            let out = launch_spread(&bench, k, Dims::new(m, n, kk), lds, [offset; 3], 70 + case as u64);
            let plan = match out {
                Ok(Outcome::Ran(plan)) => plan,
                other => panic!("{} at lds {lds:?} offset {offset}: {other:?}", k.name),
            };
            // every operand odd: each is copied, or read (written) where it lies by a variant
            let odd = extra % 2 == 1;
            // lines 4 or 8 bytes aligned: TMA's stages filled by cp.async of that many bytes, where no multicast shares them
            if matches!(k.spec.staging, gemm_runtime::spec::Staging::Tma { .. }) && k.spec.cluster.is_none() && !odd {
                let v = extra as u32;
                assert!(matches!(plan, Plan::Variant { vector: Some(w), a: false, b: false, .. } if w == v), "{}: {plan:?}", k.name);
            }
            assert!(!odd || matches!(plan, Plan::Copied { a: true, b: true, c: true } | Plan::Variant { .. }), "{}: {plan:?}", k.name);
        }
    }
}

/// `mma_tuned`'s 64 x 128 tile on 64 threads would read 4-byte aligned
/// lines in 96 copies a thread a stage, past what the rules let a thread
/// hold (ptxas built that variant at 32 registers, and it summed wrong):
/// the launch copies A and B instead, writes C where it lies, and matches
/// cuBLAS (the random test's case at `GEMM_TILES_TEST_SEED=30`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_small_blocks_operands_are_copied_where_narrower_copies_pass_a_threads_share() {
    let bench = bench();
    let point = gemm_ladder::tuned::mma_tuned::KERNEL
        .points()
        .iter()
        .find(|p| p.block.threads == 64 && matches!(p.staging, Staging::CpAsync { stages: 3, .. }) && p.persistent.is_none())
        .expect("the 64-thread point");
    let k = Kernel::from_spec(point.clone()).unwrap();
    match launch_spread(&bench, &k, Dims::new(257, 33, 128), [134, 34, 45], [4, 0, 1], 30) {
        Ok(Outcome::Ran(plan)) => assert!(matches!(plan, Plan::Variant { vector: None, scalar_c: true, a: true, b: true, .. }), "{plan:?}"),
        other => panic!("{}: {other:?}", k.name),
    }
}

/// A and B whose lines TMA reads slowly (208 bytes apart: K = 100 padded
/// to 104 elements, 16 bytes modulo 32) in a product wide enough to pay
/// go through copies 128 bytes apart: the plan says so, and C matches
/// cuBLAS with nothing written past its lines.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tma_operands_on_slow_lines_are_copied_and_match_cublas() {
    use gemm_ladder::measure::padded_dims;
    use gemm_ladder::steps::tma_store;
    let bench = bench();
    if bench.gpu.capability != (9, 0) {
        return;
    }
    let k = &tma_store::KERNEL;
    let dims = padded_dims(2048, 2048, 100, layouts_of(&k.spec));
    assert_eq!((dims.lda, dims.ldb), (Some(104), Some(104)));
    assert_eq!(bf16_plan_checked(&bench, k, dims, 81), Plan::Copied { a: true, b: true, c: false });
}

/// How `k`, a bf16 kernel, runs a problem at `dims` (random inputs from
/// `seed`), once it has checked C against cuBLAS with nothing written
/// past C's lines.
fn bf16_plan_checked(bench: &Bench, k: &Kernel, dims: Dims, seed: u64) -> Plan {
    use gemm_ladder::measure::{verify_on, DevMat};
    let p = Problem::for_kernel(bench, k, dims, seed).unwrap();
    let mut c = p.poisoned_c(bench).unwrap();
    let plan = match (&p.a, &p.b, &mut c) {
        (DevMat::Bf16(a), DevMat::Bf16(b), DevMat::Bf16(c)) => k.plan(bench.stream(), a, b, c, dims).unwrap(),
        _ => panic!("{} takes bf16", k.name),
    };
    let reference = p.reference(bench).unwrap();
    let err = verify_on(bench, k, &p, &reference).unwrap_or_else(|e| panic!("{e}"));
    assert!(err <= gemm_runtime::internal::data::tolerance(k.spec.c.elem), "{} at {dims:?} ({plan:?}): relative error {err:.1e}", k.name);
    plan
}

/// A B whose lines are 4 bytes aligned beside an aligned A: in a shallow
/// product (two K steps) the launcher fills B's stages by cp.async from
/// where B lies and A's by TMA, in a deep one it copies B; the plan says which, and C
/// matches cuBLAS with nothing written past its lines (partial tiles on
/// every side, K's end inside a tile).
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_misaligned_b_alone_is_read_where_it_lies_beside_tma_loads_of_a() {
    use gemm_ladder::steps::tma_store;
    let bench = bench();
    if bench.gpu.capability != (9, 0) {
        return;
    }
    let k = &tma_store::KERNEL;
    let b_only = Plan::Variant { vector: Some(2), only: Some(Which::B), scalar_c: false, a: false, b: false, c: false };
    for (dims, expected) in [
        (Dims::new(200, 300, 120).with_ld(120, 122, 304), b_only),
        (Dims::new(200, 300, 4000).with_ld(4000, 4002, 304), Plan::Copied { a: false, b: true, c: false }),
    ] {
        assert_eq!(bf16_plan_checked(&bench, k, dims, 83), expected, "at {dims:?}");
    }
}

/// TMA stores at C's edges: a tile across C's last line and across the
/// end of lines that end on a 16-byte boundary goes out by TMA, which
/// must write nothing past C (neither the padding of a line nor the guard
/// lines past C's last that `verify` checks); bf16 C in either layout,
/// f32 C whose lines end on a 16-byte boundary but not a 32-byte one.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tma_stores_at_c_edges_on_16_byte_boundaries_write_nothing_past_c() {
    use gemm_ladder::steps::tma_store;
    use gemm_runtime::spec::{Elem, KernelSpec, Operand, Staging};
    let bench = bench();
    let base = &tma_store::KERNEL.spec;
    let kernel = |elem: Elem, layout| {
        let c = Operand { elem, layout };
        // an f32 C tile takes the room of a stage
        let staging = if elem == Elem::F32 { Staging::tma(2) } else { base.staging };
        let name = format!("edges_{}_{layout:?}", elem.rust_name()).into();
        Kernel::from_spec(KernelSpec { name, c, staging, ..base.clone() }).unwrap()
    };
    let cases = [
        // (kernel, m, n, ldc): 8 elements of padding after each line
        (kernel(Elem::Bf16, Layout::RowMajor), 200, 264, 272),
        (kernel(Elem::Bf16, Layout::ColMajor), 264, 200, 272),
        (kernel(Elem::F32, Layout::ColMajor), 268, 200, 276),
        (kernel(Elem::Bf16, Layout::RowMajor), 129, 512, 520),
    ];
    for (k, m, n, ldc) in cases {
        if !runs_here(&bench, &k) {
            continue;
        }
        let dims = Dims::new(m, n, 72).with_ld(72, 72, ldc);
        verify(&bench, &k, dims, 91).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    }
}

/// C tiles narrower than a 128-byte line go out by TMA in boxes of their
/// own width, in the swizzle of that width (`combos::hopper_narrow_tma_store`:
/// 32, 16 and 8 columns, gated, halves under `overlap`, e4m3 block-scaled
/// 64 x 32 tiles split along K) and match cuBLAS at odd sizes with padded
/// lines, and nothing past C is written. Packed, C's lines 8 bytes aligned
/// (188 columns: every other line starts on a 16-byte boundary) or 2 (131)
/// go out by the variant that writes C at any alignment, each line of a
/// tile 8 columns wide one chunk (a line that started on a boundary was
/// left unwritten until d98a9cf's random test found it).
#[test]
#[ignore = "needs a CUDA GPU"]
fn narrow_c_tiles_stored_by_tma_match_cublas_and_write_nothing_past_c() {
    let bench = bench();
    for spec in gemm_ladder::combos::hopper_narrow_tma_store() {
        let k = Kernel::from_spec(spec.clone()).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
        if !runs_here(&bench, &k) {
            continue;
        }
        // (the last two packed)
        for (i, (m, n, kk)) in [(256, 256, 512), (200, 131, 136), (129, 77, 1000), (105, 188, 64), (200, 131, 128)].into_iter().enumerate() {
            // (a gated epilogue pairs the product's columns)
            let n = if k.spec.fused.gated { n + n % 2 } else { n };
            let dims = if i < 3 { gemm_ladder::measure::padded_dims(m, n, kk, layouts_of(&k.spec)) } else { Dims::new(m, n, kk) };
            if k.spec.fused.any() {
                verify_fused(&bench, &k, dims, 96, Scalars { alpha: 1.0, beta: 0.0 }).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            } else {
                verify(&bench, &k, dims, 96).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            }
        }
    }
}

/// A C tile that goes out by TMA in parts (four stages of 128 x 256 tiles
/// leave room for half of it): whole tiles, tiles across every edge (an
/// odd n, stored element by element a part at a time), padded lines, a
/// batch with gaps between its problems, and the fused math (a bias along
/// n with gelu_tanh, along m with alpha and beta) match cuBLAS, and
/// nothing past C is written.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_c_tile_stored_by_tma_in_parts_matches_cublas() {
    use gemm_ladder::steps::tma_store;
    use gemm_runtime::spec::{Activation, Bias, Dim, Elem, Fused, KernelSpec, Staging};
    let bench = bench();
    let spec = KernelSpec { name: "in_parts".into(), staging: Staging::tma(4), ..tma_store::KERNEL.spec.clone() };
    assert_eq!(spec.c_tile().map(|t| t.parts), Some(2));
    let plain = Kernel::from_spec(spec.clone()).unwrap();
    if !runs_here(&bench, &plain) {
        return;
    }
    let l = layouts_of(&plain.spec);
    for dims in [Dims::new(1024, 1024, 256), Dims::new(1000, 777, 333), Dims::new(129, 512, 72).with_ld(72, 72, 520)] {
        verify(&bench, &plain, dims, 93).unwrap_or_else(|e| panic!("{e}"));
    }
    let (m, n, k) = (300, 520, 200);
    let dims = gemm_ladder::measure::padded_dims(m, n, k, l);
    let one = |ld: Option<usize>, rows: usize, cols: usize, l: Layout| ld.unwrap() * if l == Layout::RowMajor { rows } else { cols };
    let (sa, sb, sc) = (one(dims.lda, m, k, l[0]), one(dims.ldb, k, n, l[1]), one(dims.ldc, m, n, l[2]) + 8);
    verify(&bench, &plain, dims.batched(3, sa, sb, sc), 94).unwrap_or_else(|e| panic!("{e}"));
    let fused = [
        Fused { bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }), activation: Some(Activation::GeluTanh), ..Fused::default() },
        Fused {
            alpha: true,
            beta: true,
            bias: Some(Bias { along: Dim::M, elem: Elem::F32 }),
            activation: Some(Activation::Relu),
            scale: None,
            gated: false,
        },
    ];
    for (i, f) in fused.into_iter().enumerate() {
        let k = Kernel::from_spec(KernelSpec { name: format!("in_parts_fused{i}").into(), fused: f, ..spec.clone() }).unwrap();
        for dims in [Dims::new(1024, 1024, 256), Dims::new(1000, 777, 333)] {
            verify_fused(&bench, &k, dims, 95 + i as u64, Scalars { alpha: 0.5, beta: 0.25 }).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// A persistent Hopper kernel whose C's lines are odd runs its variant
/// that writes C at any alignment through a C tile (whole, or in bands
/// where the whole would cost a stage): at sizes where each block walks
/// several tiles (the C tile reused from tile to tile while the producer
/// fills the next tile's stages), with and without a fused epilogue that
/// reads C, C matches cuBLAS and nothing past its lines is written.
#[test]
#[ignore = "needs a CUDA GPU"]
fn c_at_any_alignment_matches_cublas_across_a_persistent_walk() {
    use gemm_ladder::measure::dims_with_ld_multiple;
    use gemm_ladder::steps::{clusters, hopper_autotuned, persistent, tma_store};
    use gemm_runtime::spec::{Activation, Bias, Dim, Elem, Fused, KernelSpec};
    let bench = bench();
    // 256 x 128 tiles, two 64-row atoms a consumer: its variant's C tile goes out in four bands
    let mut tall = KernelSpec { name: "tall".into(), ..hopper_autotuned::KERNEL.spec.clone() };
    (tall.block.m, tall.block.n) = (256, 128);
    tall.warp = tall.warp.map(|w| gemm_runtime::spec::Warp { m: 128, n: 128, ..w });
    tall.atom = gemm_runtime::spec::Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false };
    let tall = Kernel::from_spec(tall).unwrap();
    let banded = gemm_runtime::internal::realign::scalar_c_spec(&tall.spec).and_then(|v| v.c_tile()).map(|t| t.bands);
    assert_eq!(banded, Some(4));
    // (a cluster of two with B multicast; every consumer thread arriving on the ring's barriers)
    for kernel in [&hopper_autotuned::KERNEL, &tma_store::KERNEL, &clusters::KERNEL, &persistent::KERNEL, &tall] {
        if !runs_here(&bench, kernel) {
            continue;
        }
        let l = layouts_of(&kernel.spec);
        // 33 x 9 tiles of 128 x 256 (297), over a grid of at most 132 blocks; C's lines 4097 and 2051
        // apart; deep enough for bands (where the spec's stages leave the whole tile too little room), and not
        for (i, (m, n, k)) in [(4097, 2051, 1344), (1000, 4097, 64)].into_iter().enumerate() {
            let dims = dims_with_ld_multiple(m, n, k, l, 1);
            let machine = gemm_runtime::internal::realign::Machine::of(&bench.gpu.ctx).unwrap();
            let variant = gemm_runtime::internal::realign::variant_spec(&kernel.spec, dims, [0; 3], machine).expect("a variant for C's odd lines");
            assert_eq!(variant.epilogue, gemm_runtime::spec::Epilogue::SmemElements, "{}", variant.kernel_name());
            let bands = variant.c_tile().map_or(1, |t| t.bands);
            let deep = gemm_runtime::internal::realign::scalar_c_spec(&kernel.spec).and_then(|v| v.c_tile()).map_or(1, |t| t.bands);
            assert_eq!(bands, if i == 0 { deep } else { 1 }, "{}", variant.kernel_name());
            verify(&bench, kernel, dims, 120 + i as u64).unwrap_or_else(|e| panic!("{e}"));
        }
        let fused = Fused {
            alpha: true,
            beta: true,
            bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }),
            activation: Some(Activation::Relu),
            scale: None,
            gated: false,
        };
        let k = Kernel::from_spec(KernelSpec { name: format!("{}_fused", kernel.name).into(), fused, ..kernel.spec.clone() }).unwrap();
        let dims = dims_with_ld_multiple(4097, 2051, 1344, l, 1);
        verify_fused(&bench, &k, dims, 122, Scalars { alpha: 0.5, beta: 0.25 }).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A 16-bit bias along n on 64x256 wgmma consumers, loaded ahead packed:
/// a pair of columns in one load on tiles inside C, values clamped one at
/// a time on tiles across C's last column (n odd, so a pair there is half
/// past C) and wherever the bias starts at an odd element (the second
/// problem of a batch whose biases lie an odd number of elements apart), the
/// C tile whole (three stages); and in two parts (four stages), whose
/// 32 values a part are loaded ahead as f32.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_packed_bias_matches_cublas_inside_c_at_its_edge_and_at_an_odd_start() {
    use gemm_ladder::steps::tma_store;
    use gemm_runtime::spec::{Activation, Bias, Dim, Elem, Fused, KernelSpec, Staging};
    let bench = bench();
    let f = Fused { alpha: true, bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }), activation: Some(Activation::GeluTanh), ..Fused::default() };
    for stages in [3, 4] {
        let spec =
            KernelSpec { name: format!("packed_bias_s{stages}").into(), staging: Staging::tma(stages), fused: f, ..tma_store::KERNEL.spec.clone() };
        let k = Kernel::from_spec(spec).unwrap();
        assert_eq!(k.source.contains("unsigned bias_pairs[1][32];"), stages == 3, "{}", k.name);
        assert_eq!(k.source.contains("float bias_ahead[1][16][2];"), stages == 4, "{}", k.name);
        if !runs_here(&bench, &k) {
            return;
        }
        let l = layouts_of(&k.spec);
        for (i, (m, n, kk)) in [(256, 512, 128), (300, 777, 200), (129, 1023, 72)].into_iter().enumerate() {
            let dims = gemm_ladder::measure::padded_dims(m, n, kk, l);
            let sc = Scalars { alpha: 0.5, beta: 0.0 };
            verify_fused(&bench, &k, dims, 130 + i as u64, sc).unwrap_or_else(|e| panic!("{e}"));
            let one = |ld: Option<usize>, rows: usize, cols: usize, l: Layout| ld.unwrap() * if l == Layout::RowMajor { rows } else { cols };
            let (sa, sb, sc_) = (one(dims.lda, m, kk, l[0]), one(dims.ldb, kk, n, l[1]), one(dims.ldc, m, n, l[2]));
            let batched = dims.batched(2, sa, sb, sc_).bias_stride(n.max(1001) | 1);
            verify_fused(&bench, &k, batched, 140 + i as u64, sc).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// `copy_lines`, the launcher's copy of misaligned operands, public: f32 and
/// bf16 lines at every offset of a 16-byte chunk on either side (odd
/// pitches, lines shorter than a chunk and longer than a block's threads'
/// chunks) land where they belong, nothing past a line's width is written,
/// and a destination too small is an `Err` that writes nothing.
#[test]
#[ignore = "needs a CUDA GPU"]
fn copy_lines_moves_lines_at_any_alignment_and_nothing_else() {
    use gemm_runtime::copy_lines;
    let bench = bench();
    let stream = bench.stream().clone();
    fn case<T: gemm_runtime::Element + Copy + PartialEq + std::fmt::Debug>(
        stream: &std::sync::Arc<gemm_runtime::cudarc::driver::CudaStream>,
        (make, guard): (impl Fn(usize) -> T, T),
        (lines, width): (usize, usize),
        (src_off, src_ld): (usize, usize),
        (dst_off, dst_ld): (usize, usize),
    ) {
        let src: Vec<T> = (0..src_off + lines * src_ld).map(&make).collect();
        let dst_len = dst_off + lines * dst_ld + 9;
        let s = stream.clone_htod(&src).unwrap();
        let mut d = stream.clone_htod(&vec![guard; dst_len]).unwrap();
        copy_lines(stream, &s.slice(src_off..), src_ld, &mut d.slice_mut(dst_off..), dst_ld, (lines, width)).unwrap();
        let got = stream.clone_dtoh(&d).unwrap();
        for (i, &g) in got.iter().enumerate() {
            let at = i.checked_sub(dst_off).map(|x| (x / dst_ld, x % dst_ld));
            let want = match at {
                Some((l, e)) if l < lines && e < width => src[src_off + l * src_ld + e],
                _ => guard,
            };
            assert_eq!(g, want, "{lines} x {width}, source at {src_off} ({src_ld} apart), destination at {dst_off} ({dst_ld} apart): element {i}");
        }
    }
    // sources' elements non-negative, the destinations' guards -1
    let bf = (|i: usize| bf16::from_f32((i % 4099) as f32), bf16::from_f32(-1.0));
    let f = (|i: usize| (i % 1_000_003) as f32, -1.0f32);
    for src_off in 0..8 {
        for dst_off in [0, 1, 3, 7] {
            case(&stream, bf, (5, 4100), (src_off, 4100 + src_off), (dst_off, 4160 + dst_off));
            case(&stream, bf, (3, 5), (src_off, 7), (dst_off, 9));
            case(&stream, f, (4, 1027), (src_off, 1029), (dst_off, 1032));
        }
    }
    // a single line, its pitches never used however large
    let s = stream.clone_htod(&(0..8).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let mut d = stream.clone_htod(&[0.0f32; 8]).unwrap();
    copy_lines(&stream, &s, usize::MAX, &mut d, usize::MAX / 2, (1, 8)).unwrap();
    assert_eq!(stream.clone_dtoh(&d).unwrap(), (0..8).map(|i| i as f32).collect::<Vec<_>>());
    // a destination one element short: refused before anything is written
    let s = stream.clone_htod(&vec![1.0f32; 64]).unwrap();
    let mut d = stream.clone_htod(&vec![0.0f32; 8 * 3 + 7]).unwrap();
    let err = copy_lines(&stream, &s, 8, &mut d, 8, (4, 8)).unwrap_err();
    assert!(matches!(err, GemmError::Copy(_)), "{err}");
    assert!(err.to_string().contains("need 32 elements of the destination, but its buffer holds 31"), "{err}");
    assert!(stream.clone_dtoh(&d).unwrap().iter().all(|&x| x == 0.0));
}

/// Lines 8 bytes aligned on `hopper_autotuned` (TMA's tiling): A and B read
/// and C written where they lie, by tensor maps a class of lines at a time
/// (the plan says so), matching cuBLAS element by element with NaN around
/// and between every operand's lines and nothing written outside C's: every
/// side odd, lines padded past K, views at odd offsets, C's lines 16 bytes
/// aligned and not, shallow and deep products, C's lines alone odd, lines
/// 16 bytes apart modulo 32 (which TMA reads slowly) with C aligned; what
/// the plan leaves to copies (M below 16, lines 4 bytes aligned) or to
/// the scalar variant of C runs right too; and f16 on the same tiling.
#[test]
#[ignore = "needs a CUDA GPU"]
fn lines_8_bytes_aligned_are_read_where_they_lie_by_class_of_lines() {
    use gemm_ladder::steps::hopper_autotuned;
    let bench = bench();
    if bench.gpu.capability != (9, 0) {
        return;
    }
    let k = &hopper_autotuned::KERNEL;
    let cases: [(Dims, [usize; 3], [usize; 3], bool); 12] = [
        (Dims::new(4095, 4097, 4100), [4100, 4100, 4097], [0, 0, 0], true),
        // lines padded to 8 elements, C's too: by class in place of A's and B's copies
        (Dims::new(4095, 4097, 4100), [4104, 4104, 4104], [0, 0, 0], true),
        (Dims::new(4096, 4096, 4100), [4104, 4104, 4096], [0, 0, 0], true),
        (Dims::new(4095, 4097, 4100), [4108, 4100, 4097], [4, 12, 5], true),
        (Dims::new(4096, 4096, 4100), [4104, 4104, 4097], [0, 0, 0], true),
        (Dims::new(4096, 4096, 4096), [4100, 4100, 4096], [8, 4, 0], true),
        (Dims::new(511, 513, 516), [516, 516, 513], [12, 4, 1], true),
        (Dims::new(255, 257, 324), [324, 324, 257], [0, 0, 0], true),
        // C's lines alone odd: by class where the spec's tiles take five rounds and the variant's
        // four; C by the scalar variant where the variant's take more (four against three)
        (Dims::new(4096, 4097, 4096), [4096, 4096, 4097], [0, 0, 3], true),
        (Dims::new(2048, 4097, 4096), [4096, 4096, 4097], [0, 0, 3], false),
        // fewer than 16 lines of C: copies
        (Dims::new(15, 300, 4100), [4100, 4100, 300], [0, 0, 0], false),
        // A's lines 4 bytes aligned: copies
        (Dims::new(1000, 1000, 1002), [1002, 1004, 1000], [0, 0, 0], false),
    ];
    // and the same tiling on f16 (its conversions and wgmma's type), at the odd shape
    let f16 = |op: gemm_runtime::spec::Operand| gemm_runtime::spec::Operand { elem: gemm_runtime::spec::Elem::F16, ..op };
    let s = &k.spec;
    let half = Kernel::from_spec(gemm_runtime::spec::KernelSpec { name: "by_class_f16".into(), a: f16(s.a), b: f16(s.b), c: f16(s.c), ..s.clone() })
        .unwrap();
    let halves = [(&half, cases[3])];
    for (i, (k, (dims, lds, offsets, by_class))) in cases.into_iter().map(|c| (k, c)).chain(halves).enumerate() {
        let what = format!("{} at {} x {} x {}, lds {lds:?}, offsets {offsets:?}", k.name, dims.m, dims.n, dims.k);
        match launch_spread(&bench, k, dims, lds, offsets, 2100 + i as u64) {
            Ok(Outcome::Ran(plan)) => assert_eq!(plan == Plan::ByClass, by_class, "{what}: {plan:?}"),
            Ok(Outcome::Refused(e)) => panic!("{what}: refused: {e}"),
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

/// 8-bit operands (`combos::hopper_fp8`: e4m3, e5m2 and mixed, every C type,
/// each epilogue store, the fused math, whole and guarded edges, and
/// `fp8::fp8_tma_store`; on mma.sync `combos::mma_fp8`, `mma_fp8_sm89` and
/// `mma_fp8_block_sm89`)
/// against sgemm on the same operands widened to f32 (exactly), at sizes
/// from one element to a deep K, odd ones with lines padded to 16 bytes.
/// Lines only 8 bytes apart are no wrong answer either: the launch runs
/// them correctly or refuses them with an `Err`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn fp8_kernels_match_the_product_of_their_operands_widened_to_f32() {
    use gemm_ladder::measure::{dims_with_ld_multiple, Failure};
    let bench = bench();
    let specs = gemm_ladder::combos::hopper_fp8().into_iter().chain(gemm_ladder::combos::mma_fp8());
    let mut kernels: Vec<Kernel> = specs.map(|s| Kernel::from_spec(s).unwrap()).collect();
    kernels.push(Kernel::from_spec(gemm_ladder::steps::mma_fp8_sm89::SPEC).unwrap());
    kernels.push(Kernel::from_spec(gemm_ladder::steps::mma_fp8_block_sm89::SPEC).unwrap());
    kernels.push(Kernel::from_spec(gemm_ladder::fp8::fp8_tma_store::SPEC).unwrap());
    kernels.push(Kernel::from_spec(gemm_ladder::fp8::fp8_promoted::SPEC).unwrap());
    kernels.push(Kernel::from_spec(gemm_ladder::fp8::fp8_wgmma::SPEC).unwrap());
    // the first, middle and last points of the tuned fp8 kernels and of the fp8 decode kernels
    // (K tiles of 128 to 512)
    for tuned in fp8_tuned_kernels() {
        let points = tuned.points();
        for i in [0, points.len() / 2, points.len() - 1] {
            kernels.push(Kernel::from_spec(points[i].clone()).unwrap());
        }
    }
    for (i, k) in kernels.iter().enumerate() {
        let req = k.spec.requirements();
        let up = |x: usize, to: u32| x.div_ceil(to as usize) * to as usize;
        let l = layouts_of(&k.spec);
        let mut sizes = vec![Dims::new(up(256, req.m_multiple), up(512, req.n_multiple), up(1024, req.k_multiple))];
        if req.m_multiple == 1 {
            sizes.extend([(1, 1, 1), (1000, 777, 333), (33, 65, 17), (256, 256, 8192)].map(|(m, n, k)| dims_with_ld_multiple(m, n, k, l, 16)));
        }
        for (j, dims) in sizes.into_iter().enumerate() {
            let seed = 500 + (i * 10 + j) as u64;
            verify_fused(&bench, k, dims, seed, Scalars { alpha: 0.5, beta: 0.25 }).unwrap_or_else(|e| panic!("{e}"));
        }
        // sums promoted into f32 each stage: the error of f32 sums, as cuBLASLt's default mode
        // shows (1.3e-4 at K = 4096 on an H200), not the tensor cores' own (2.1e-3 at K = 8192)
        if k.spec.promoted() && k.spec.c.elem == gemm_runtime::spec::Elem::F32 {
            let e = verify_fused(&bench, k, Dims::new(256, 256, 8192), 9, Scalars { alpha: 1.0, beta: 0.0 }).unwrap_or_else(|e| panic!("{e}"));
            assert!(e < 4e-4, "{}: relative error {e:.2e} at K = 8192, promoted", k.name);
        }
        if req.m_multiple == 1 {
            match verify_fused(&bench, k, dims_with_ld_multiple(1000, 777, 333, l, 8), 7, Scalars { alpha: 1.0, beta: 0.0 }) {
                Ok(_) | Err(Failure::Gpu(_)) => {}
                Err(e) => panic!("lines 8 bytes apart: {e}"),
            }
        }
    }
}

/// Per-tensor quantization (`gemm_runtime::quantize::per_tensor`): from
/// bf16, f16 and f32 into e4m3 and e5m2, an odd length (the last element
/// alone), the scale `amax / MAX` exactly as the host computes it, every
/// element the host's rounding of `x / scale` or a neighbour of it, and a
/// source of zeros scaled by 1; then a GEMM on the quantized operands with
/// their scales matches the product of the originals within fp8's error.
#[test]
#[ignore = "needs a CUDA GPU"]
fn per_tensor_quantization_scales_by_amax_and_feeds_the_scaled_gemm() {
    use gemm_runtime::quantize::{max_finite, per_tensor};
    use gemm_runtime::{F8E4M3, F8E5M2};
    let bench = bench();
    let s = bench.stream();
    let len = 100_001;
    let host: Vec<f32> = gemm_ladder::measure::random_normal(len, 31).into_iter().map(|x| 3.0 * x).collect();
    fn check<Q: gemm_runtime::Element + Copy>(host: &[f32], got: &[Q], scale: f32, max: f32, to: impl Fn(f32) -> Q, widen: impl Fn(Q) -> f32) {
        let amax = host.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        assert_eq!(scale, amax / max, "the scale is amax / MAX");
        let mut off = 0;
        for (x, q) in host.iter().zip(got) {
            // (x / scale may round a hair past MAX at amax: the conversion saturates)
            let (want, got) = (widen(to((x / scale).clamp(-max, max))), widen(*q));
            if want != got {
                // a tie or a subnormal rounded the other way: one step apart at most
                let step = (want.abs().max(got.abs()) / 8.0).max(f32::MIN_POSITIVE);
                assert!((want - got).abs() <= step, "{x} / {scale}: {got} where {want}");
                off += 1;
            }
        }
        assert!(off * 1000 < host.len(), "{off} of {} elements differ from the host's rounding", host.len());
    }
    macro_rules! case {
        ($src:expr, $q:ty) => {{
            let src = $src;
            let mut dst = s.alloc_zeros::<$q>(len).unwrap();
            let mut scale = s.alloc_zeros::<f32>(1).unwrap();
            per_tensor(s, &src, len, &mut dst, &mut scale).unwrap();
            let got = s.clone_dtoh(&dst).unwrap();
            let scale = s.clone_dtoh(&scale).unwrap()[0];
            (got, scale)
        }};
    }
    let widened = |v: &Vec<f32>| v.clone();
    // f32 sources, both 8-bit types
    let (q, sc) = case!(s.clone_htod(&host).unwrap(), F8E4M3);
    check(&widened(&host), &q, sc, max_finite(gemm_runtime::spec::Elem::F8E4M3).unwrap(), F8E4M3::from_f32, |q| q.to_f32());
    let (q, sc) = case!(s.clone_htod(&host).unwrap(), F8E5M2);
    check(&host, &q, sc, 57344.0, F8E5M2::from_f32, |q| q.to_f32());
    // bf16 and f16 sources: the host checks against their values widened
    let b: Vec<bf16> = host.iter().map(|&x| bf16::from_f32(x)).collect();
    let (q, sc) = case!(s.clone_htod(&b).unwrap(), F8E4M3);
    check(&b.iter().map(|x| x.to_f32()).collect::<Vec<_>>(), &q, sc, 448.0, F8E4M3::from_f32, |q| q.to_f32());
    let h: Vec<f16> = host.iter().map(|&x| f16::from_f32(x)).collect();
    let (q, sc) = case!(s.clone_htod(&h).unwrap(), F8E4M3);
    check(&h.iter().map(|x| x.to_f32()).collect::<Vec<_>>(), &q, sc, 448.0, F8E4M3::from_f32, |q| q.to_f32());
    // zeros: scale 1
    let (q, sc) = case!(s.alloc_zeros::<f32>(len).unwrap(), F8E4M3);
    assert_eq!(sc, 1.0);
    assert!(q.iter().all(|q| q.to_f32() == 0.0));
    // quantized operands and their scales through the scaled fp8 GEMM, against the f32 product
    let (m, n, k) = (256, 512, 1024);
    let a: Vec<f32> = gemm_ladder::measure::random_normal(m * k, 32);
    let bt: Vec<f32> = gemm_ladder::measure::random_normal(n * k, 33).into_iter().map(|x| 0.01 * x).collect();
    let (a_d, bt_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&bt).unwrap());
    let (mut qa, mut qb) = (s.alloc_zeros::<F8E4M3>(m * k).unwrap(), s.alloc_zeros::<F8E4M3>(n * k).unwrap());
    let (mut sa, mut sb) = (s.alloc_zeros::<f32>(1).unwrap(), s.alloc_zeros::<f32>(1).unwrap());
    per_tensor(s, &a_d, m * k, &mut qa, &mut sa).unwrap();
    per_tensor(s, &bt_d, n * k, &mut qb, &mut sb).unwrap();
    let mut c = s.alloc_zeros::<bf16>(m * n).unwrap();
    gemm_ladder::fp8::fp8_tma_store(s, &qa, &qb, &mut c, &sa, &sb, Dims::new(m, n, k)).unwrap();
    let got: Vec<f32> = s.clone_dtoh(&c).unwrap().into_iter().map(|x| x.to_f32()).collect();
    // B is stored [N, K] (column-major K x N): C[i][j] = sum_p A[i][p] * B^T[j][p]
    let want: Vec<f32> = (0..m * n).map(|e| (0..k).map(|p| a[(e / n) * k + p] * bt[(e % n) * k + p]).sum()).collect();
    let err = gemm_runtime::internal::data::relative_error(&got, &want).unwrap();
    // e4m3's 3 mantissa bits: each operand off by up to 2^-4 relative, about 3% over the sum
    assert!(err < 0.05, "relative error {err:.3e} of the quantized product");
}

/// Scales per channel and by block (`scale = channel`, `scale = block`)
/// that differ from row to row and block to block: operands quantized on
/// the GPU (`quantize::{per_row, rows_by_k_block, blocks}`) from values
/// whose magnitudes vary by row and by K block, each kernel's C against an
/// f64 product on the host of the operands dequantized with the scales as
/// the host reads their layouts (A's 1 x 128 scales K block after K block
/// with m rounded up to 4, B's 128 x 128 ones block row after block row);
/// odd m, n past a 128-column block, K whose last block is partial.
#[test]
#[ignore = "needs a CUDA GPU"]
fn channel_and_block_scaled_fp8_kernels_match_the_host_product_of_the_dequantized_operands() {
    use gemm_runtime::quantize::{blocks, per_row, rows_by_k_block};
    use gemm_runtime::spec::{block_scales_a_ld, block_scales_a_len, block_scales_b_len, Elem, Scale};
    use gemm_runtime::{F8E4M3, F8E5M2};
    let bench = bench();
    let s = bench.stream();
    let plain = |k: &gemm_runtime::spec::KernelSpec| {
        let f = k.fused;
        matches!(f.scale, Some(Scale::Channel | Scale::Block)) && !f.alpha && !f.beta && f.bias.is_none() && f.activation.is_none()
    };
    // (one 8-bit type for A and B: the quantizers below make both of it)
    let specs: Vec<_> =
        gemm_ladder::combos::hopper_fp8().into_iter().chain(gemm_ladder::combos::mma_fp8()).filter(plain).filter(|k| k.a.elem == k.b.elem).collect();
    assert!(specs.iter().any(|k| k.fused.scale == Some(Scale::Block)) && specs.iter().any(|k| k.fused.scale == Some(Scale::Channel)));
    for scale in [Scale::Channel, Scale::Block] {
        assert!(
            specs.iter().any(|k| matches!(k.atom, gemm_runtime::spec::Atom::Mma { .. }) && k.fused.scale == Some(scale)),
            "{scale:?} on mma.sync"
        );
    }
    for (i, spec) in specs.iter().enumerate() {
        let kernel = Kernel::from_spec(spec.clone()).unwrap();
        let scale = spec.fused.scale.unwrap();
        // (K blocks: 3, a pair and one; 11, a run of the promoted loop's, a pair and one; 1)
        for (j, &(m, n, k)) in [(199, 136, 336), (256, 384, 1408), (1, 8, 128)].iter().enumerate() {
            let seed = 700 + (i * 10 + j) as u64;
            // magnitudes from 2^-3 to 2^3 by row (of A and of W) and by K block
            let vary = |r: usize, c: usize| ((r % 7) as f32 - 3.0).exp2() * ((c / 128 % 3) as f32 - 1.0).exp2();
            let a: Vec<f32> = gemm_ladder::measure::random_normal(m * k, seed).iter().enumerate().map(|(e, x)| x * vary(e / k, e % k)).collect();
            let w: Vec<f32> =
                gemm_ladder::measure::random_normal(n * k, seed + 1).iter().enumerate().map(|(e, x)| x * vary(e / k + 3, e % k)).collect();
            let (a_d, w_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&w).unwrap());
            let (la, lb) = scale.lens(m, n, k);
            let (mut sa, mut sb) = (s.alloc_zeros::<f32>(la).unwrap(), s.alloc_zeros::<f32>(lb).unwrap());
            // the operands quantized into the kernel's 8-bit types, and their values widened back
            macro_rules! quantized {
                ($q:ty, $src:expr, $rows:expr, $sc:expr, $a_side:expr) => {{
                    let mut q = s.alloc_zeros::<$q>($rows * k).unwrap();
                    match (scale, $a_side) {
                        (Scale::Channel, _) => per_row(s, $src, ($rows, k), &mut q, $sc).unwrap(),
                        (_, true) => rows_by_k_block(s, $src, ($rows, k), &mut q, $sc).unwrap(),
                        (_, false) => blocks(s, $src, ($rows, k), &mut q, $sc).unwrap(),
                    }
                    let wide: Vec<f32> = s.clone_dtoh(&q).unwrap().into_iter().map(|x| x.to_f32()).collect();
                    (q, wide)
                }};
            }
            let mut c = gemm_ladder::measure::DevMat::from_f32(s, spec.c.elem, &vec![f32::NAN; m * n]).unwrap();
            let dims = Dims::new(m, n, k);
            let (qa_wide, qw_wide, got) = match spec.a.elem {
                Elem::F8E4M3 => {
                    let (qa, qa_wide) = quantized!(F8E4M3, &a_d, m, &mut sa, true);
                    let (qw, qw_wide) = quantized!(F8E4M3, &w_d, n, &mut sb, false);
                    (qa_wide, qw_wide, launch_scaled(&kernel, s, (&qa, &qw), (&sa, &sb), &mut c, dims))
                }
                _ => {
                    let (qa, qa_wide) = quantized!(F8E5M2, &a_d, m, &mut sa, true);
                    let (qw, qw_wide) = quantized!(F8E5M2, &w_d, n, &mut sb, false);
                    (qa_wide, qw_wide, launch_scaled(&kernel, s, (&qa, &qw), (&sa, &sb), &mut c, dims))
                }
            };
            let (sa, sb) = (s.clone_dtoh(&sa).unwrap(), s.clone_dtoh(&sb).unwrap());
            // the host's reading of the scale layouts
            let kb = k.div_ceil(128);
            // (row or column, the element along K) -> its scale
            type ScaleAt<'a> = Box<dyn Fn(usize, usize) -> f32 + 'a>;
            let (scale_a, scale_b): (ScaleAt, ScaleAt) = match scale {
                Scale::Channel => (Box::new(|r, _| sa[r]), Box::new(|j, _| sb[j])),
                _ => (Box::new(|r, p| sa[p / 128 * block_scales_a_ld(m) + r]), Box::new(|j, p| sb[j / 128 * kb + p / 128])),
            };
            assert_eq!((la, lb), if scale == Scale::Block { (block_scales_a_len(m, k), block_scales_b_len(n, k)) } else { (m, n) });
            let deq_a: Vec<f64> = (0..m * k).map(|e| qa_wide[e] as f64 * scale_a(e / k, e % k) as f64).collect();
            let deq_w: Vec<f64> = (0..n * k).map(|e| qw_wide[e] as f64 * scale_b(e / k, e % k) as f64).collect();
            // the quantization itself: within the 8-bit types' rounding of the values
            let off = |x: &[f32], d: &[f64]| {
                (x.iter().zip(d).map(|(x, d)| (*x as f64 - d).powi(2)).sum::<f64>() / x.iter().map(|x| (*x as f64).powi(2)).sum::<f64>()).sqrt()
            };
            let bound = if spec.a.elem == Elem::F8E4M3 { 0.05 } else { 0.1 };
            assert!(
                off(&a, &deq_a) < bound && off(&w, &deq_w) < bound,
                "{}: quantization off by {:.3e} / {:.3e}",
                kernel.name,
                off(&a, &deq_a),
                off(&w, &deq_w)
            );
            let want: Vec<f32> = (0..m * n).map(|e| (0..k).map(|p| deq_a[(e / n) * k + p] * deq_w[(e % n) * k + p]).sum::<f64>() as f32).collect();
            let err = gemm_runtime::internal::data::relative_error(&got, &want).unwrap();
            // f32 C: the promoted sums' error (block scales promote each K block); bf16 C its rounding
            let tol = if spec.c.elem == Elem::F32 { 2e-4 } else { 6e-3 };
            assert!(err < tol, "{} at {m} x {n} x {k}: relative error {err:.3e} against the host's product", kernel.name);
        }
    }
    // scale buffers shorter than the layout: refused at launch, before anything runs
    let (m, n, k) = (256, 256, 384);
    let (a, b) = (s.alloc_zeros::<F8E4M3>(m * k).unwrap(), s.alloc_zeros::<F8E4M3>(n * k).unwrap());
    let mut c = s.alloc_zeros::<bf16>(m * n).unwrap();
    let (sa, sb) = (s.alloc_zeros::<f32>(block_scales_a_len(m, k) - 1).unwrap(), s.alloc_zeros::<f32>(block_scales_b_len(n, k)).unwrap());
    let e = gemm_ladder::fp8::fp8_block_scaled(s, &a, &b, &mut c, &sa, &sb, Dims::new(m, n, k)).unwrap_err();
    assert!(matches!(e, GemmError::EpilogueArgs { .. }) && e.to_string().contains("scale buffers hold 767"), "{e}");
}

/// B's block scales by windows: a consumer by atom rows loads its tile's
/// scales of B into shared memory 256 K blocks at a time. Past one window
/// and two (K of 258 and 516 blocks, the last partial), every tile shape
/// and K split of `fp8_block_tuned`'s points by atom rows (64 x 64 tiles
/// of a lone consumer, K whole and split over a cluster of two; 256 x 128
/// of two consumers) matches `fp8_block_scaled` (whose producer copies B's
/// scales into its stages, no window) on the same operands, whose
/// magnitudes change from K block to K block: a window's scales read for
/// another's would be off by up to 2^6.
#[test]
#[ignore = "needs a CUDA GPU"]
fn b_scales_by_windows_match_the_kernel_that_copies_them_past_a_window() {
    use gemm_runtime::quantize::{blocks, rows_by_k_block};
    use gemm_runtime::spec::{Elem, Scale};
    use gemm_runtime::F8E4M3;
    let bench = bench();
    let s = bench.stream();
    let copied = Kernel::from_spec(gemm_ladder::fp8::fp8_block_scaled::SPEC).unwrap();
    assert!(copied.spec.b_scales_copied());
    // fp8_block_tuned's points by atom rows: a tile shape and K split each
    let mut windowed: Vec<Kernel> = Vec::new();
    for p in gemm_ladder::tuned::fp8_block_tuned::KERNEL.points() {
        let shape = |k: &Kernel| (k.spec.block.m, k.spec.block.n, k.spec.k_split());
        if p.b_scale_window_bytes() > 0 && !windowed.iter().any(|k| shape(k) == (p.block.m, p.block.n, p.k_split())) {
            windowed.push(Kernel::from_spec(p.clone()).unwrap());
        }
    }
    let has = |m, n, split| windowed.iter().any(|k| (k.spec.block.m, k.spec.block.n, k.spec.k_split()) == (m, n, split));
    assert!(has(64, 64, 1) && has(64, 64, 2) && has(64, 32, 2) && has(256, 128, 1), "{:?}", windowed.iter().map(|k| &k.name).collect::<Vec<_>>());
    for (i, &(m, n, k)) in [(70, 200, 258 * 128 - 40), (300, 136, 516 * 128 - 72)].iter().enumerate() {
        let seed = 900 + i as u64;
        // magnitudes from 2^-3 to 2^3 by row and by K block
        let vary = |r: usize, c: usize| ((r % 5) as f32 - 2.0).exp2() * ((c / 128 % 7) as f32 - 3.0).exp2();
        let a: Vec<f32> = gemm_ladder::measure::random_normal(m * k, seed).iter().enumerate().map(|(e, x)| x * vary(e / k, e % k)).collect();
        let w: Vec<f32> = gemm_ladder::measure::random_normal(n * k, seed + 1).iter().enumerate().map(|(e, x)| x * vary(e / k + 2, e % k)).collect();
        let (a_d, w_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&w).unwrap());
        let (la, lb) = Scale::Block.lens(m, n, k);
        let (mut sa, mut sb) = (s.alloc_zeros::<f32>(la).unwrap(), s.alloc_zeros::<f32>(lb).unwrap());
        let (mut qa, mut qw) = (s.alloc_zeros::<F8E4M3>(m * k).unwrap(), s.alloc_zeros::<F8E4M3>(n * k).unwrap());
        rows_by_k_block(s, &a_d, (m, k), &mut qa, &mut sa).unwrap();
        blocks(s, &w_d, (n, k), &mut qw, &mut sb).unwrap();
        let dims = Dims::new(m, n, k);
        let run = |kernel: &Kernel| {
            let mut c = gemm_ladder::measure::DevMat::from_f32(s, Elem::Bf16, &vec![f32::NAN; m * n]).unwrap();
            launch_scaled(kernel, s, (&qa, &qw), (&sa, &sb), &mut c, dims)
        };
        let want = run(&copied);
        // (the same f32 sums, rounded to bf16: an element may differ by its last bit where the
        // kernels add a K block's products in other orders)
        for kernel in &windowed {
            let err = gemm_runtime::internal::data::relative_error(&run(kernel), &want).unwrap();
            assert!(err < 1e-3, "{} at {m} x {n} x {k}: relative error {err:.3e} against {}", kernel.name, copied.name);
        }
    }
}

/// The scaled fp8 test's launch of `kernel` into `c` (NaNs in C's type),
/// with A's and B's scales; C widened to f32.
fn launch_scaled<Q: gemm_runtime::Element>(
    kernel: &Kernel,
    s: &std::sync::Arc<gemm_runtime::cudarc::driver::CudaStream>,
    (a, b): (&CudaSlice<Q>, &CudaSlice<Q>),
    (sa, sb): (&CudaSlice<f32>, &CudaSlice<f32>),
    c: &mut gemm_ladder::measure::DevMat,
    dims: Dims,
) -> Vec<f32> {
    use gemm_ladder::measure::DevMat;
    let ep = gemm_runtime::EpilogueArgs::new().scales(sa, sb);
    match c {
        DevMat::Bf16(c) => kernel.launch_with(s, a, b, c, dims, ep),
        DevMat::F16(c) => kernel.launch_with(s, a, b, c, dims, ep),
        DevMat::F32(c) => kernel.launch_with(s, a, b, c, dims, ep),
        other => panic!("{}: C in {}", kernel.name, other.elem().rust_name()),
    }
    .unwrap();
    c.to_f32(s).unwrap()
}

/// `groups = masked` (`grouped::grouped_masked`): experts whose rows differ,
/// counted on the device. Each expert's first `group_rows[g]` rows of C
/// (none for a count of 0 or below, all m_max for one past it) match cuBLAS
/// on that expert's operands, and every row past them keeps its poison.
/// Captured in a CUDA graph, then the counts changed on the device and the
/// graph replayed: the new counts' rows come out. A C whose lines lie an
/// odd count of elements apart is written where it lies by a variant. A
/// missing or short rows buffer, or an A it would have to copy, are `Err`s.
#[test]
#[ignore = "needs a CUDA GPU"]
fn masked_groups_write_each_experts_rows_and_nothing_past_them() {
    use gemm_ladder::grouped::{grouped_masked, grouped_masked_sm80};
    let bench = bench();
    if bench.gpu.capability != (9, 0) {
        return;
    }
    // the Hopper path's persistent walk, and the sm_80 path's block per tile
    for kernel in [&grouped_masked::KERNEL, &grouped_masked_sm80::KERNEL] {
        masked_groups_on(&bench, kernel);
    }
}

fn masked_groups_on(bench: &Bench, kernel: &Kernel) {
    use gemm_ladder::measure::DevMat;
    use gemm_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    use gemm_runtime::EpilogueArgs;
    // m_max past a multiple of the 128-row tile, n past one of 256, K not a multiple of 64
    let (groups, m_max, n, k) = (7, 300, 264, 200);
    let dims = Dims::new(m_max, n, k).batched(groups, m_max * k, n * k, m_max * n);
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    let p = Problem::typed(bench, [gemm_runtime::spec::Elem::Bf16; 3], layouts, dims, 31).unwrap();
    let reference = p.reference(bench).unwrap();
    let s = bench.stream();
    let (DevMat::Bf16(a), DevMat::Bf16(b)) = (&p.a, &p.b) else { unreachable!("bf16 operands") };
    // each expert's rows and what the kernel makes of them: the whole tile, one row, none, a
    // tile's edge, more than there is room for (all m_max), a negative count (none)
    let check = |c: &DevMat, counts: &[i32], when: &str| {
        s.synchronize().unwrap();
        let out = c.to_f32(s).unwrap();
        for (g, &count) in counts.iter().enumerate() {
            let rows = count.clamp(0, m_max as i32) as usize;
            let at = g * m_max * n;
            let (ours, theirs) = (&out[at..at + rows * n], &reference[at..at + rows * n]);
            if rows > 0 {
                let err = gemm_runtime::internal::data::relative_error(ours, theirs).unwrap();
                assert!(
                    err <= gemm_runtime::internal::data::tolerance(kernel.spec.c.elem),
                    "{when}: expert {g} ({count} rows): relative error {err:.2e}"
                );
            }
            let past = &out[at + rows * n..at + m_max * n];
            assert!(past.iter().all(|x| x.is_nan()), "{when}: expert {g} ({count} rows): a row past its rows was written");
        }
    };
    let first = [128, 1, 0, 300, 257, -5, 129];
    let rows = s.clone_htod(&first).unwrap();
    let mut c = p.poisoned_c(bench).unwrap();
    let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
    kernel.launch_with(s, a, b, cb, dims, EpilogueArgs::new().groups(&rows)).unwrap();
    check(&c, &first, "one launch");
    // C's lines n + 1 apart (2-byte aligned): written where they lie by a variant, each expert's rows only
    {
        use gemm_runtime::internal::data::POISON;
        let ldc = n + 1;
        let mut odd = DevMat::from_f32(s, gemm_runtime::spec::Elem::Bf16, &vec![POISON; groups * m_max * ldc]).unwrap();
        let DevMat::Bf16(ob) = &mut odd else { unreachable!("a bf16 C") };
        let odd_dims = Dims::new(m_max, n, k).with_ld(k, k, ldc).batched(groups, m_max * k, n * k, m_max * ldc);
        assert!(matches!(kernel.plan(s, a, b, ob, odd_dims), Ok(Plan::Variant { scalar_c: true, .. })));
        kernel.launch_with(s, a, b, ob, odd_dims, EpilogueArgs::new().groups(&rows)).unwrap();
        s.synchronize().unwrap();
        let out = odd.to_f32(s).unwrap();
        for (g, &count) in first.iter().enumerate() {
            let rows = count.clamp(0, m_max as i32) as usize;
            let line = |r: usize| &out[(g * m_max + r) * ldc..(g * m_max + r) * ldc + n];
            if rows > 0 {
                let ours: Vec<f32> = (0..rows).flat_map(|r| line(r).to_vec()).collect();
                let theirs = &reference[g * m_max * n..(g * m_max + rows) * n];
                let err = gemm_runtime::internal::data::relative_error(&ours, theirs).unwrap();
                assert!(
                    err <= gemm_runtime::internal::data::tolerance(kernel.spec.c.elem),
                    "C's lines n + 1 apart: expert {g}: relative error {err:.2e}"
                );
            }
            assert!((rows..m_max).all(|r| line(r).iter().all(|x| x.is_nan())), "C's lines n + 1 apart: expert {g}: a row past its rows was written");
        }
        assert!(out.chunks(ldc).all(|l| l[n].is_nan()), "C's lines n + 1 apart: a line's padding was written");
    }
    // the same launch captured, the counts changed on the device between replays
    let stream = capture_stream(s);
    let mut rows = rows;
    let mut c = p.poisoned_c(bench).unwrap();
    s.synchronize().unwrap();
    let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
    let capture = capturing();
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
    kernel.launch_with(&stream, a, b, cb, dims, EpilogueArgs::new().groups(&rows)).unwrap();
    let graph = stream.end_capture(CUgraphInstantiate_flags(0)).unwrap().expect("a graph of the launch");
    drop(capture);
    graph.launch().unwrap();
    stream.synchronize().unwrap();
    check(&c, &first, "the graph's first run");
    let second = [3, 300, 128, 0, 64, 200, 1];
    stream.memcpy_htod(&second, &mut rows).unwrap();
    let fresh = p.poisoned_c(bench).unwrap();
    s.synchronize().unwrap();
    let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
    let DevMat::Bf16(fresh_b) = &fresh else { unreachable!("a bf16 C") };
    stream.memcpy_dtod(fresh_b, cb).unwrap();
    graph.launch().unwrap();
    stream.synchronize().unwrap();
    check(&c, &second, "the graph replayed with new counts");
    // misuse: no rows, too few, and lines the kernel cannot read where they lie
    let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
    let missing = kernel.launch_with(s, a, b, cb, dims, EpilogueArgs::new());
    assert!(matches!(missing, Err(GemmError::EpilogueArgs { .. })), "{missing:?}");
    let short = s.clone_htod(&[1i32; 3]).unwrap();
    let short = kernel.launch_with(s, a, b, cb, dims, EpilogueArgs::new().groups(&short));
    assert!(matches!(short, Err(GemmError::EpilogueArgs { .. })), "{short:?}");
    let odd = Dims::new(m_max, n, k - 1).with_ld(k, k, n).batched(groups, m_max * k, n * k, m_max * n);
    let copied = kernel.launch_with(s, a, b, cb, Dims { lda: Some(k - 1), ..odd }, EpilogueArgs::new().groups(&rows));
    assert!(copied.is_err(), "{}: A's lines 2 bytes past 16-byte alignment would need a copy: {copied:?}", kernel.name);
}

/// SwiGLU in a contiguous grouped launch (`grouped_swiglu`): each group's
/// rows of C (n / 2 = 262 wide, lines 264 apart, where the last 16-byte
/// chunk of a line crosses C's edge; then 263 apart, which TMA stores
/// cannot take and a variant writes) hold silu(gate) * up of its own W's
/// interleaved pairs, against cuBLAS per group with the gate applied on the
/// host; C's rows past the last end, and every line's padding, keep their
/// poison. An odd n is an `Err`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn swiglu_groups_write_silu_of_each_gate_times_its_up() {
    use gemm_ladder::grouped::grouped_swiglu;
    use gemm_ladder::measure::DevMat;
    use gemm_runtime::internal::data::POISON;
    use gemm_runtime::spec::Activation;
    let bench = bench();
    if bench.gpu.capability != (9, 0) {
        return;
    }
    let (groups, m, n, k) = (5, 600, 524usize, 136);
    let each = Dims::new(m, n, k).batched(groups, 0, n * k, m * n);
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    let p = Problem::typed(&bench, [gemm_runtime::spec::Elem::Bf16; 3], layouts, each, 43).unwrap();
    let reference = p.reference(&bench).unwrap();
    let s = bench.stream();
    let (DevMat::Bf16(a), DevMat::Bf16(b)) = (&p.a, &p.b) else { unreachable!("bf16 operands") };
    // 1 row, 129 (a tile and one), none, 300, and the rest but 70
    let ends = [1, 130, 130, 430, 530];
    let ends_gpu = s.clone_htod(&ends).unwrap();
    // C's lines 16-byte aligned (by TMA stores), then an odd count of elements apart (by the variant)
    for ldc in [(n / 2).next_multiple_of(8), n / 2 + 1] {
        let mut c = DevMat::from_f32(s, gemm_runtime::spec::Elem::Bf16, &vec![POISON; m * ldc]).unwrap();
        let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
        let dims = Dims::new(m, n, k).with_ld(k, k, ldc).batched(groups, 0, n * k, 0);
        grouped_swiglu(s, a, b, cb, &ends_gpu, dims).unwrap();
        s.synchronize().unwrap();
        let out: Vec<f32> = s.clone_dtoh(cb).unwrap().into_iter().map(|x| x.to_f32()).collect();
        let mut start = 0;
        for (g, &end) in ends.iter().enumerate() {
            let end = end as usize;
            let rows = &reference[g * m * n + start * n..g * m * n + end * n];
            let want: Vec<f32> = rows.chunks(2).map(|p| (Activation::Silu.apply(p[0] as f64) * p[1] as f64) as f32).collect();
            let got: Vec<f32> = (start..end).flat_map(|r| out[r * ldc..r * ldc + n / 2].to_vec()).collect();
            let err = gemm_runtime::internal::data::relative_error(&got, &want).unwrap();
            assert!(
                err <= gemm_runtime::internal::data::tolerance(gemm_runtime::spec::Elem::Bf16),
                "lines {ldc} apart, group {g}: relative error {err:.2e}"
            );
            start = end;
        }
        assert!(out[start * ldc..].iter().all(|x| x.is_nan()), "lines {ldc} apart: a row past the last group's end was written");
        assert!(
            (0..start).all(|r| out[r * ldc + n / 2..(r + 1) * ldc].iter().all(|x| x.is_nan())),
            "lines {ldc} apart: a line's padding was written"
        );
    }
    let mut c = DevMat::from_f32(s, gemm_runtime::spec::Elem::Bf16, &vec![POISON; m * n]).unwrap();
    let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
    let odd = grouped_swiglu(s, a, b, cb, &ends_gpu, Dims::new(m, n - 1, k).batched(groups, 0, n * k, 0));
    assert!(matches!(&odd, Err(GemmError::UnsupportedSize { rule, .. }) if rule.contains("must be even")), "{odd:?}");
}

/// `groups = contiguous` (`grouped::grouped_contiguous` on the Hopper
/// path, and its tiling with C out by TMA stores, which hand a tile across
/// a group's end to the threads; `grouped_contiguous_sm80` on the sm_80
/// path): experts' rows one
/// after another in A and C, their ends on the device. Each group's rows
/// of C match cuBLAS on A's same rows and that group's W: groups starting
/// at rows no tile multiple, of 0 and 1 rows, and ends that go back or
/// pass A's rows (clamped: a group's rows are never another's); rows past
/// the last end keep their poison. C's lines an odd count of elements
/// apart (which TMA stores and vector stores cannot take) are written
/// where they lie by a variant. Captured in a CUDA graph and replayed
/// after the ends change on the device. A batch whose A or C strides are
/// not 0 is an `Err`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn contiguous_groups_write_each_groups_rows_from_its_own_weights() {
    use gemm_ladder::grouped::{grouped_contiguous, grouped_contiguous_sm80};
    let bench = bench();
    if bench.gpu.capability != (9, 0) {
        return;
    }
    // the Hopper path's persistent walk (C out by TMA stores, and in vectors), and the sm_80 path's block per tile
    let vector = Kernel::from_spec(contiguous_by_vector_stores()).unwrap();
    for kernel in [&grouped_contiguous::KERNEL, &vector, &grouped_contiguous_sm80::KERNEL] {
        contiguous_groups_on(&bench, kernel);
    }
}

/// `grouped_contiguous`'s tiling with C stored in pairs from the threads'
/// registers (no C tile: four stages).
fn contiguous_by_vector_stores() -> gemm_runtime::spec::KernelSpec {
    use gemm_runtime::spec::{Epilogue, Staging};
    let mut spec = gemm_ladder::grouped::grouped_contiguous::KERNEL.spec.clone();
    spec.epilogue = Epilogue::Vector;
    if let Staging::Tma { stages, .. } = &mut spec.staging {
        *stages = 4;
    }
    spec
}

fn contiguous_groups_on(bench: &Bench, kernel: &Kernel) {
    use gemm_ladder::measure::DevMat;
    use gemm_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    use gemm_runtime::internal::data::POISON;
    use gemm_runtime::EpilogueArgs;
    let (groups, m, n, k) = (6, 700, 264, 200);
    // the reference: every group's W times all of A's rows, group after group
    let each = Dims::new(m, n, k).batched(groups, 0, n * k, m * n);
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    let p = Problem::typed(bench, [gemm_runtime::spec::Elem::Bf16; 3], layouts, each, 41).unwrap();
    let reference = p.reference(bench).unwrap();
    let s = bench.stream();
    let (DevMat::Bf16(a), DevMat::Bf16(b)) = (&p.a, &p.b) else { unreachable!("bf16 operands") };
    let dims = Dims::new(m, n, k).batched(groups, 0, n * k, 0);
    // (C's lines `ldc` apart)
    let check_lines = |c: &DevMat, ldc: usize, ends: &[i32], when: &str| {
        s.synchronize().unwrap();
        let all = c.to_f32(s).unwrap();
        let out: Vec<f32> = all.chunks(ldc).flat_map(|line| line[..n].to_vec()).collect();
        let mut start = 0usize;
        for (g, &end) in ends.iter().enumerate() {
            let end = (end.max(start as i32) as usize).min(m);
            if end > start {
                let ours = &out[start * n..end * n];
                let theirs = &reference[g * m * n + start * n..g * m * n + end * n];
                let err = gemm_runtime::internal::data::relative_error(ours, theirs).unwrap();
                assert!(
                    err <= gemm_runtime::internal::data::tolerance(kernel.spec.c.elem),
                    "{when}: group {g} (rows {start}..{end}): relative error {err:.2e}"
                );
            }
            start = end;
        }
        assert!(out[start * n..].iter().all(|x| x.is_nan()), "{when}: a row past the last group's end ({start}) was written");
        assert!(all.chunks(ldc).all(|line| line[n..].iter().all(|x| x.is_nan())), "{when}: C was written past its lines' end");
    };
    let check = |c: &DevMat, ends: &[i32], when: &str| check_lines(c, n, ends, when);
    let fresh = || DevMat::from_f32(s, gemm_runtime::spec::Elem::Bf16, &vec![POISON; m * n]).unwrap();
    // 130 rows (a tile and 2), none, one, 300 from row 131, 5, and the rest but 100
    let first = [130, 130, 131, 431, 436, 600];
    let ends = s.clone_htod(&first).unwrap();
    let mut c = fresh();
    let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
    kernel.launch_with(s, a, b, cb, dims, EpilogueArgs::new().groups(&ends)).unwrap();
    check(&c, &first, "one launch");
    // C's lines n + 1 apart, 2-byte aligned: written where they lie by a variant
    let ldc = n + 1;
    let mut odd = DevMat::from_f32(s, gemm_runtime::spec::Elem::Bf16, &vec![POISON; m * ldc]).unwrap();
    let DevMat::Bf16(ob) = &mut odd else { unreachable!("a bf16 C") };
    let odd_dims = Dims::new(m, n, k).with_ld(k, k, ldc).batched(groups, 0, n * k, 0);
    assert!(matches!(kernel.plan(s, a, b, ob, odd_dims), Ok(Plan::Variant { scalar_c: true, .. })));
    kernel.launch_with(s, a, b, ob, odd_dims, EpilogueArgs::new().groups(&ends)).unwrap();
    check_lines(&odd, ldc, &first, "C's lines n + 1 apart");
    // captured, then ends that go back (group 2 empty) and pass A's rows (the last group's clamped)
    let stream = capture_stream(s);
    let mut ends = ends;
    let mut c = fresh();
    s.synchronize().unwrap();
    let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
    let capture = capturing();
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
    kernel.launch_with(&stream, a, b, cb, dims, EpilogueArgs::new().groups(&ends)).unwrap();
    let graph = stream.end_capture(CUgraphInstantiate_flags(0)).unwrap().expect("a graph of the launch");
    drop(capture);
    graph.launch().unwrap();
    stream.synchronize().unwrap();
    check(&c, &first, "the graph's first run");
    let second = [7, 263, 200, 520, 521, 900];
    stream.memcpy_htod(&second, &mut ends).unwrap();
    let poisoned = fresh();
    s.synchronize().unwrap();
    let (DevMat::Bf16(cb), DevMat::Bf16(pb)) = (&mut c, &poisoned) else { unreachable!("bf16 C") };
    stream.memcpy_dtod(pb, cb).unwrap();
    graph.launch().unwrap();
    stream.synchronize().unwrap();
    check(&c, &second, "the graph replayed with new ends");
    // A's or C's rows per group are one matrix's: strides of their own are refused
    let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
    let strided =
        kernel.launch_with(s, a, b, cb, Dims::new(m / groups, n, k).batched(groups, (m / groups) * k, n * k, 0), EpilogueArgs::new().groups(&ends));
    assert!(matches!(strided, Err(GemmError::EpilogueArgs { .. })), "{strided:?}");
}

/// `len` random normal values rounded to e4m3, from `seed`.
fn random_e4m3(len: usize, seed: u64) -> Vec<gemm_runtime::F8E4M3> {
    gemm_ladder::measure::random_normal(len, seed).into_iter().map(gemm_runtime::F8E4M3::from_f32).collect()
}

/// Block scales over a batch (`Scale::batch_lens`): each problem reads its
/// own scales, after the one before's, where its operand is its own, and
/// the one problem's where the batch shares the operand (stride 0): A
/// shared, then B shared, each problem's C against an f64 product on the
/// host; on wgmma (`fp8_block_scaled`, Hopper) and mma.sync
/// (`mma_fp8_block_sm89`, sm_89 and newer), at sizes whose last tile and K
/// block are partial.
#[test]
#[ignore = "needs a CUDA GPU"]
fn block_scales_follow_each_problem_of_a_batch_and_stay_with_a_shared_operand() {
    use gemm_runtime::spec::{block_scales_a_ld, Scale};
    use gemm_runtime::{bf16, EpilogueArgs};
    let bench = bench();
    let mut kernels = Vec::new();
    if bench.gpu.capability == (9, 0) {
        kernels.push(Kernel::from_spec(gemm_ladder::fp8::fp8_block_scaled::SPEC).unwrap());
    }
    if bench.gpu.capability >= (8, 9) {
        kernels.push(Kernel::from_spec(gemm_ladder::steps::mma_fp8_block_sm89::SPEC).unwrap());
    }
    let s = bench.stream();
    let (count, m, n, k) = (3usize, 200usize, 264usize, 336usize);
    let (kb, lda_s) = (k.div_ceil(128), block_scales_a_ld(m));
    let pow2 = |i: usize| ((i % 5) as f32 - 2.0).exp2();
    for kernel in &kernels {
        for a_shared in [true, false] {
            let (stride_a, stride_b) = if a_shared { (0, n * k) } else { (m * k, 0) };
            let dims = Dims::new(m, n, k).batched(count, stride_a, stride_b, m * n);
            let (la, lb) = Scale::Block.batch_lens(m, n, k, (count, stride_a, stride_b));
            let (problems_a, problems_b) = if a_shared { (1, count) } else { (count, 1) };
            let a = random_e4m3(problems_a * m * k, 81);
            let b = random_e4m3(problems_b * n * k, 82);
            let sa: Vec<f32> = (0..la).map(|i| pow2(i * 7 + 1)).collect();
            let sb: Vec<f32> = (0..lb).map(|i| pow2(i * 3 + 2)).collect();
            assert_eq!((la, lb), (problems_a * kb * lda_s, problems_b * n.div_ceil(128) * kb));
            let (a_d, b_d, sa_d, sb_d) =
                (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap(), s.clone_htod(&sa).unwrap(), s.clone_htod(&sb).unwrap());
            let mut c = s.clone_htod(&vec![bf16::NAN; count * m * n]).unwrap();
            kernel.launch_with(s, &a_d, &b_d, &mut c, dims, EpilogueArgs::new().scales(&sa_d, &sb_d)).unwrap();
            let out: Vec<f32> = s.clone_dtoh(&c).unwrap().into_iter().map(|x| x.to_f32()).collect();
            for p in 0..count {
                let (pa, pb) = if a_shared { (0, p) } else { (p, 0) };
                let want: Vec<f32> = (0..m * n)
                    .map(|e| {
                        let (r, col) = (e / n, e % n);
                        let sum: f64 = (0..k)
                            .map(|q| {
                                let x = a[(pa * m + r) * k + q].to_f32() as f64 * sa[pa * kb * lda_s + q / 128 * lda_s + r] as f64;
                                let y = b[(pb * n + col) * k + q].to_f32() as f64 * sb[pb * n.div_ceil(128) * kb + col / 128 * kb + q / 128] as f64;
                                x * y
                            })
                            .sum();
                        sum as f32
                    })
                    .collect();
                let err = gemm_runtime::internal::data::relative_error(&out[p * m * n..(p + 1) * m * n], &want).unwrap();
                let shared = if a_shared { "A" } else { "B" };
                assert!(err < 6e-3, "{}: problem {p} of a batch sharing {shared}: relative error {err:.3e}", kernel.name);
            }
        }
    }
}

/// e4m3 groups on mma.sync: the sm_80 path's contiguous and masked kernels
/// as Ada runs them (8-bit operands, m16n8k32, per-tensor scales; a Hopper
/// GPU emulates the instruction), each group's rows of C against an f64
/// product on the host of its operands; empty and one-row groups, a group
/// a tile and one long, a partial last K tile; C's rows outside the groups
/// keep their poison.
#[test]
#[ignore = "needs a CUDA GPU"]
fn fp8_groups_on_mma_sync_match_the_host_product_and_write_only_their_rows() {
    use gemm_ladder::grouped::{grouped_contiguous_sm80, grouped_masked_sm80};
    use gemm_runtime::spec::{Arch, Atom, Elem, KernelSpec, Scale};
    use gemm_runtime::{EpilogueArgs, F8E4M3};
    let bench = bench();
    if bench.gpu.capability < (8, 9) {
        return;
    }
    let s = bench.stream();
    let on_ada = |spec: &KernelSpec| {
        let mut t = spec.clone();
        (t.a.elem, t.b.elem, t.arch, t.atom) = (Elem::F8E4M3, Elem::F8E4M3, Arch::Sm89, Atom::Mma { m: 16, n: 8, k: 32 });
        (t.block.k, t.staging) = (Some(128), Staging::CpAsync { stages: 2, vector: 16, transpose_a: false, fragments: 2 });
        t.fused.scale = Some(Scale::Tensor);
        Kernel::from_spec(t).unwrap()
    };
    // (K: a whole tile of 128, then 80; lines 16 bytes aligned, as the copies need)
    let (g, n, k) = (3usize, 264usize, 208usize);
    let e4m3 = random_e4m3;
    let w = e4m3(g * n * k, 95);
    let (scale_a, scale_b) = (0.5f32, 4.0f32);
    let (w_d, sa, sb) = (s.clone_htod(&w).unwrap(), s.clone_htod(&[scale_a]).unwrap(), s.clone_htod(&[scale_b]).unwrap());
    // row `r` of `a` times group `e`'s W (stored [N, K]), scaled
    let want = |a: &[F8E4M3], r: usize, e: usize| -> Vec<f32> {
        let dot = |c: usize| (0..k).map(|p| a[r * k + p].to_f32() as f64 * w[(e * n + c) * k + p].to_f32() as f64).sum::<f64>();
        (0..n).map(|c| (dot(c) * (scale_a * scale_b) as f64) as f32).collect()
    };
    let check_rows = |out: &[f32], a: &[F8E4M3], rows: std::ops::Range<usize>, e: usize, what: &str| {
        for r in rows {
            let err = gemm_runtime::internal::data::relative_error(&out[r * n..(r + 1) * n], &want(a, r, e)).unwrap();
            assert!(err < 6e-3, "{what}, group {e}, row {r}: relative error {err:.3e}");
        }
    };
    // contiguous: groups of 1, 0 and 129 rows, then 70 rows past the last end
    let m = 200;
    let ends = [1i32, 1, 130];
    let a = e4m3(m * k, 96);
    let (a_d, ends_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&ends).unwrap());
    let mut c = s.clone_htod(&vec![bf16::NAN; m * n]).unwrap();
    let kernel = on_ada(&grouped_contiguous_sm80::SPEC);
    kernel
        .launch_with(s, &a_d, &w_d, &mut c, Dims::new(m, n, k).batched(g, 0, n * k, 0), EpilogueArgs::new().groups(&ends_d).scales(&sa, &sb))
        .unwrap();
    let out: Vec<f32> = s.clone_dtoh(&c).unwrap().into_iter().map(|x| x.to_f32()).collect();
    let mut start = 0;
    for (e, &end) in ends.iter().enumerate() {
        check_rows(&out, &a, start..end as usize, e, &kernel.name);
        start = end as usize;
    }
    assert!(out[start * n..].iter().all(|x| x.is_nan()), "{}: a row past the last group's end was written", kernel.name);
    // masked: room for 150 rows each; 150, 0 and 1 of them hold tokens
    let m_max = 150;
    let counts = [150i32, 0, 1];
    let a = e4m3(g * m_max * k, 97);
    let (a_d, counts_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&counts).unwrap());
    let mut c = s.clone_htod(&vec![bf16::NAN; g * m_max * n]).unwrap();
    let kernel = on_ada(&grouped_masked_sm80::SPEC);
    let dims = Dims::new(m_max, n, k).batched(g, m_max * k, n * k, m_max * n);
    kernel.launch_with(s, &a_d, &w_d, &mut c, dims, EpilogueArgs::new().groups(&counts_d).scales(&sa, &sb)).unwrap();
    let out: Vec<f32> = s.clone_dtoh(&c).unwrap().into_iter().map(|x| x.to_f32()).collect();
    for (e, &count) in counts.iter().enumerate() {
        let first = e * m_max;
        check_rows(&out, &a, first..first + count as usize, e, &kernel.name);
        assert!(out[(first + count as usize) * n..(first + m_max) * n].iter().all(|x| x.is_nan()), "{}: group {e} wrote past its rows", kernel.name);
    }
}

/// e4m3 grouped launches with block scales per group and SwiGLU
/// (`grouped_fp8_swiglu`, `grouped_masked_fp8_swiglu`): scales that differ
/// by row, K block, 128-column block and group, each group's rows of C
/// against an f64 product on the host of its operands scaled as the host
/// reads the batched layouts (the contiguous groups share A's scales, as
/// they share A; each masked expert's A scales and every expert's B scales
/// follow the one before's); a partial last K block and 128-column block,
/// empty and one-row groups; C's rows outside the groups keep their poison.
/// The same on mma.sync (sm_89; emulated on Hopper): the sm_80 path's
/// contiguous and masked kernels on e4m3 with the same epilogue.
#[test]
#[ignore = "needs a CUDA GPU"]
fn fp8_groups_take_each_experts_block_scales_and_gate() {
    let bench = bench();
    let pairs = fp8_group_pairs(&bench);
    for (contiguous, masked) in &pairs {
        fp8_groups_with_block_scales(&bench, contiguous, masked);
    }
}

/// The e4m3 grouped kernels with block scales and SwiGLU this GPU runs, as
/// (contiguous, masked): the Hopper path's, and on sm_89 and newer the
/// sm_80 path's on mma.sync.
fn fp8_group_pairs(bench: &Bench) -> Vec<(Kernel, Kernel)> {
    use gemm_ladder::grouped::{grouped_contiguous_sm80, grouped_fp8_swiglu, grouped_masked_fp8_swiglu, grouped_masked_sm80};
    use gemm_runtime::spec::{Activation, Arch, Atom, Block, Elem, KernelSpec, Scale, Warp};
    let mut pairs = Vec::new();
    if bench.gpu.capability == (9, 0) {
        pairs.push((Kernel::from_spec(grouped_fp8_swiglu::SPEC).unwrap(), Kernel::from_spec(grouped_masked_fp8_swiglu::SPEC).unwrap()));
    }
    if bench.gpu.capability >= (8, 9) {
        let on_ada = |spec: &KernelSpec| {
            let mut t = spec.clone();
            (t.a.elem, t.b.elem, t.arch, t.atom) = (Elem::F8E4M3, Elem::F8E4M3, Arch::Sm89, Atom::Mma { m: 16, n: 8, k: 32 });
            t.block = Block { m: 128, n: 128, k: Some(128), threads: 256, min_blocks: None };
            t.warp = Some(Warp { m: 32, n: 64, m_iters: 1, n_iters: 1 });
            t.staging = Staging::CpAsync { stages: 3, vector: 16, transpose_a: false, fragments: 2 };
            (t.fused.scale, t.fused.activation, t.fused.gated) = (Some(Scale::Block), Some(Activation::Silu), true);
            Kernel::from_spec(t).unwrap()
        };
        pairs.push((on_ada(&grouped_contiguous_sm80::SPEC), on_ada(&grouped_masked_sm80::SPEC)));
    }
    pairs
}

/// Where A's row `r` lies in A, and where its scale of K block `b` lies in A's scales.
type RowAt<'a> = &'a dyn Fn(usize) -> usize;
type ScaleAt<'a> = &'a dyn Fn(usize, usize) -> usize;

/// The host's gated product (`silu(gate) * up`, columns paired) of group
/// `e`'s row `r` of A with its W (`[n, k]`, after the group before's), from
/// e4m3 operands and their block scales: A's row at `at.0(r)`, its scale of
/// K block b at `at.1(b, r)`; each group's B scales after the one before's.
/// Each output with the error the kernel may make in it: C's rounding, and
/// its gate's and up's sums, each off by up to 2^-10 of the sum of its
/// terms' magnitudes (fp8 tensor cores sum a K block in less than f32 before
/// it is promoted), carried through silu: a gate far below zero, whose silu
/// all but vanishes, multiplies its own error by its size.
fn fp8_gated_row(
    a: (&[gemm_runtime::F8E4M3], &[f32]),
    w: (&[gemm_runtime::F8E4M3], &[f32]),
    (n, k): (usize, usize),
    at: (RowAt, ScaleAt),
    e: usize,
    r: usize,
) -> Vec<(f32, f64)> {
    let ((a, sa), (w, sb), (a_row, sa_at)) = (a, w, at);
    let (kb, nb) = (k.div_ceil(128), n.div_ceil(128));
    // column c's sum and the sum of its terms' magnitudes
    let prod = |c: usize| -> (f64, f64) {
        (0..k).fold((0.0, 0.0), |(sum, mag), p| {
            let x = a[a_row(r) * k + p].to_f32() as f64 * sa[sa_at(p / 128, r)] as f64;
            let y = w[(e * n + c) * k + p].to_f32() as f64 * sb[e * nb * kb + (c / 128) * kb + p / 128] as f64;
            (sum + x * y, mag + (x * y).abs())
        })
    };
    (0..n / 2)
        .map(|j| {
            let ((g, g_mag), (u, u_mag)) = (prod(2 * j), prod(2 * j + 1));
            let silu = gemm_runtime::spec::Activation::Silu.apply(g);
            let sigmoid = 1.0 / (1.0 + (-g).exp());
            let slope = sigmoid * (1.0 + g * (1.0 - sigmoid));
            let want = silu * u;
            let sums = 2f64.powi(-10) * (slope.abs() * u.abs() * g_mag + silu.abs() * u_mag);
            (want as f32, 2f64.powi(-8) * want.abs() + sums)
        })
        .collect()
}

fn fp8_groups_with_block_scales(bench: &Bench, contiguous: &Kernel, masked: &Kernel) {
    use gemm_runtime::spec::{block_scales_a_ld, block_scales_a_len, block_scales_b_len};
    use gemm_runtime::{EpilogueArgs, F8E4M3};
    let s = bench.stream();
    // (10 K blocks, the last partial: a run of the promoted loop's, then a pair or, a stage gone ahead, one)
    let (g, n, k) = (3usize, 264usize, 1200usize);
    // e4m3 operands (random normal, rounded) and power-of-two scales from 2^-2 to 2^2
    let e4m3 = random_e4m3;
    let pow2 = |i: usize| ((i % 5) as f32 - 2.0).exp2();
    let reference = |a: &[F8E4M3], w: &[F8E4M3], sa: &[f32], sb: &[f32], at: (RowAt, ScaleAt), e: usize, r: usize| {
        fp8_gated_row((a, sa), (w, sb), (n, k), at, e, r).into_iter().map(|(want, _)| want).collect::<Vec<f32>>()
    };
    let w = e4m3(g * n * k, 91);
    let sb: Vec<f32> = (0..g * block_scales_b_len(n, k)).map(|i| pow2(i * 3 + 1)).collect();
    let (w_d, sb_d) = (s.clone_htod(&w).unwrap(), s.clone_htod(&sb).unwrap());
    let tol = 6e-3;
    // contiguous: 1 row, none, 129 (a tile and one), then 70 rows past the last end; C's lines
    // (132 elements) 136 apart, the last 16-byte chunk of each across C's edge
    {
        let (m, ldc) = (200, n / 2 + 4);
        let ends = [1i32, 1, 130];
        let a = e4m3(m * k, 92);
        let sa: Vec<f32> = (0..block_scales_a_len(m, k)).map(pow2).collect();
        let (a_d, sa_d, ends_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&sa).unwrap(), s.clone_htod(&ends).unwrap());
        let mut c = s.clone_htod(&vec![bf16::NAN; m * ldc]).unwrap();
        let dims = Dims::new(m, n, k).with_ld(k, k, ldc).batched(g, 0, n * k, 0);
        contiguous.launch_with(s, &a_d, &w_d, &mut c, dims, EpilogueArgs::new().groups(&ends_d).scales(&sa_d, &sb_d)).unwrap();
        let out: Vec<f32> = s.clone_dtoh(&c).unwrap().into_iter().map(|x| x.to_f32()).collect();
        let mut start = 0;
        for (e, &end) in ends.iter().enumerate() {
            for r in start..end as usize {
                let want = reference(&a, &w, &sa, &sb, (&|r| r, &|b, r| b * block_scales_a_ld(m) + r), e, r);
                let err = gemm_runtime::internal::data::relative_error(&out[r * ldc..r * ldc + n / 2], &want).unwrap();
                assert!(err < tol, "{}: contiguous group {e}, row {r}: relative error {err:.3e}", contiguous.name);
                assert!(out[r * ldc + n / 2..(r + 1) * ldc].iter().all(|x| x.is_nan()), "row {r}: the line's padding was written");
            }
            start = end as usize;
        }
        assert!(out[start * ldc..].iter().all(|x| x.is_nan()), "{}: a row past the last group's end was written", contiguous.name);
    }
    // masked: room for 150 rows each; 150, 0 and 1 of them hold tokens
    {
        let m_max = 150;
        let counts = [150i32, 0, 1];
        let a = e4m3(g * m_max * k, 93);
        let la = block_scales_a_len(m_max, k);
        let sa: Vec<f32> = (0..g * la).map(|i| pow2(i + 2)).collect();
        let (a_d, sa_d, counts_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&sa).unwrap(), s.clone_htod(&counts).unwrap());
        let mut c = s.clone_htod(&vec![bf16::NAN; g * m_max * n / 2]).unwrap();
        let dims = Dims::new(m_max, n, k).batched(g, m_max * k, n * k, m_max * n / 2);
        masked.launch_with(s, &a_d, &w_d, &mut c, dims, EpilogueArgs::new().groups(&counts_d).scales(&sa_d, &sb_d)).unwrap();
        let out: Vec<f32> = s.clone_dtoh(&c).unwrap().into_iter().map(|x| x.to_f32()).collect();
        for (e, &count) in counts.iter().enumerate() {
            let rows = &out[e * m_max * n / 2..(e + 1) * m_max * n / 2];
            for r in 0..count as usize {
                let want = reference(&a, &w, &sa, &sb, (&|r| e * m_max + r, &|b, r| e * la + b * block_scales_a_ld(m_max) + r), e, r);
                let err = gemm_runtime::internal::data::relative_error(&rows[r * n / 2..(r + 1) * n / 2], &want).unwrap();
                assert!(err < tol, "{}: masked expert {e}, row {r}: relative error {err:.3e}", masked.name);
            }
            assert!(rows[count as usize * n / 2..].iter().all(|x| x.is_nan()), "{}: expert {e}: a row past its count was written", masked.name);
        }
        // B's scales for every expert: one short is refused
        let short = s.clone_htod(&sb[..sb.len() - 1]).unwrap();
        let e = masked.launch_with(s, &a_d, &w_d, &mut c, dims, EpilogueArgs::new().groups(&counts_d).scales(&sa_d, &short)).unwrap_err();
        assert!(matches!(e, GemmError::EpilogueArgs { .. }) && e.to_string().contains("scale buffers hold"), "{e}");
    }
}

/// e4m3 grouped launches with block scales and SwiGLU on random routings,
/// seeded (`GEMM_TILES_TEST_SEED=N` draws others): every pair
/// `fp8_group_pairs` gives, contiguous and masked, at random group counts,
/// n (even) and K (whole 16-byte lines, a partial last K block now and
/// then, and now and then lines TMA cannot read), empty, one-row and
/// tile-edge groups, ends that go back or pass A's rows, counts below 0 or
/// past m_max, C's lines packed or up to 9 elements past the line, scales
/// that differ by row, K block, 128-column block and group. Each group's
/// rows of C match the f64 product of its scaled operands on the host, a
/// row within 6e-3 as a whole or each output within the error its fp8 sums
/// may carry (`fp8_gated_row`: rows of a few columns whose gates lie far
/// below zero, where silu magnifies it); every other element of C keeps
/// its poison. A K of lines that are not whole 16 bytes, which a grouped
/// kernel cannot read where they lie, is refused with `Misaligned`, C
/// untouched.
#[test]
#[ignore = "needs a CUDA GPU"]
fn random_fp8_routings_match_the_host_product_group_by_group_or_are_refused() {
    use gemm_runtime::spec::{block_scales_a_ld, block_scales_a_len, block_scales_b_len, Groups};
    use gemm_runtime::EpilogueArgs;
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let bench = bench();
    let s = bench.stream();
    let mut rng = StdRng::seed_from_u64(test_seed(20261204));
    let (mut ran, mut refused) = (0, 0);
    for (i, pair) in fp8_group_pairs(&bench).iter().enumerate() {
        for (j, kernel) in [&pair.0, &pair.1].into_iter().enumerate() {
            let tile = kernel.spec.block.m as usize;
            for case in 0..3 {
                let seed = 9000 + 100 * i as u64 + 10 * j as u64 + case;
                let g = rng.random_range(1..=5usize);
                let n = 2 * rng.random_range(1..=150usize);
                let k = if rng.random_bool(0.85) { 16 * rng.random_range(1..=40usize) } else { rng.random_range(1..=300) };
                let ldc = n / 2 + if rng.random_bool(0.4) { 0 } else { rng.random_range(1..=9) };
                let pow2 = |i: usize| ((i % 5) as f32 - 2.0).exp2();
                let w = random_e4m3(g * n * k, seed);
                let sb: Vec<f32> = (0..g * block_scales_b_len(n, k)).map(|x| pow2(x * 3 + case as usize)).collect();
                let layout = kernel.spec.groups.unwrap();
                let Routing { m, array: groups_array, lines } = Routing::random(&mut rng, layout, g, tile, 2 * tile);
                let dims = Routing::dims(layout, (m, n, k), g, ldc);
                // A and its scales: each expert's own under masked, else the groups'
                let masked = layout == Groups::Masked;
                let problems = if masked { g } else { 1 };
                let a = random_e4m3(problems * m * k, seed + 1);
                let sa: Vec<f32> = (0..problems * block_scales_a_len(m, k)).map(|x| pow2(x + 2)).collect();
                let (a_d, w_d, sa_d, sb_d) =
                    (s.clone_htod(&a).unwrap(), s.clone_htod(&w).unwrap(), s.clone_htod(&sa).unwrap(), s.clone_htod(&sb).unwrap());
                let groups_d = s.clone_htod(&groups_array).unwrap();
                let mut c = s.clone_htod(&vec![bf16::NAN; lines.len() * ldc]).unwrap();
                let what = format!("{} at {g} groups of {m} x {n} x {k}, ldc {ldc}, {groups_array:?}", kernel.name);
                let launched = kernel.launch_with(s, &a_d, &w_d, &mut c, dims, EpilogueArgs::new().groups(&groups_d).scales(&sa_d, &sb_d));
                s.synchronize().unwrap();
                let out: Vec<f32> = s.clone_dtoh(&c).unwrap().into_iter().map(|x| x.to_f32()).collect();
                if let Err(e) = launched {
                    assert!(k % 16 != 0 && matches!(e, GemmError::Misaligned { .. }), "{what}: refused: {e}");
                    assert!(out.iter().all(|x| x.is_nan()), "{what}: refused ({e}), yet C was written");
                    refused += 1;
                    continue;
                }
                let la = block_scales_a_len(m, k);
                for (line, holds) in lines.iter().enumerate() {
                    let got = &out[line * ldc..(line + 1) * ldc];
                    assert!(got[n / 2..].iter().all(|x| x.is_nan()), "{what}: line {line} written past its end");
                    match *holds {
                        None => assert!(got.iter().all(|x| x.is_nan()), "{what}: line {line}, in no group, was written"),
                        Some((e, r)) => {
                            let want = if masked {
                                fp8_gated_row((&a, &sa), (&w, &sb), (n, k), (&|r| e * m + r, &|b, r| e * la + b * block_scales_a_ld(m) + r), e, r)
                            } else {
                                fp8_gated_row((&a, &sa), (&w, &sb), (n, k), (&|r| r, &|b, r| b * block_scales_a_ld(m) + r), e, r)
                            };
                            // a row within 6e-3 of the host's as a whole (the fixed test's bound), or
                            // where its outputs all but vanish or cancel (a few columns, gates far below
                            // zero), each output within the error its sums may carry (past 1e-30 an
                            // output is no different from zero)
                            let values: Vec<f32> = want.iter().map(|w| w.0).collect();
                            let row_err = gemm_runtime::internal::data::relative_error(&got[..n / 2], &values);
                            if !row_err.as_ref().is_ok_and(|&err| err < 6e-3) {
                                for (col, (&o, &(want, bound))) in got[..n / 2].iter().zip(&want).enumerate() {
                                    assert!(
                                        o.is_finite() && ((o - want).abs() as f64) <= bound + 1e-30,
                                        "{what}: line {line} (group {e}, row {r}), column {col}: {o} where the host has {want} (within {bound:.2e}; the row {row_err:?})"
                                    );
                                }
                            }
                        }
                    }
                }
                ran += 1;
            }
        }
    }
    println!("{ran} e4m3 grouped launches matched the host group by group, {refused} were refused");
    assert!(ran > refused, "most random routings run");
}

/// DeepGEMM's aligned form (`groups = indexed`): each group's rows padded
/// to a tile (128 rows), `row_groups` giving each row's group: every row of
/// a group against cuBLAS on that group's W, and padding rows, a tile of
/// padding alone and a tile naming a group past the batch's left as they
/// were. A `row_groups` shorter than m is an `Err`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn indexed_groups_write_each_groups_rows_and_skip_padding() {
    use gemm_ladder::grouped::{grouped_indexed, grouped_indexed_sm80};
    let bench = bench();
    if bench.gpu.capability != (9, 0) {
        return;
    }
    // the Hopper path's persistent walk, and the sm_80 path's block per tile
    for kernel in [&grouped_indexed::KERNEL, &grouped_indexed_sm80::KERNEL] {
        indexed_groups_on(&bench, kernel);
    }
}

fn indexed_groups_on(bench: &Bench, kernel: &Kernel) {
    use gemm_ladder::measure::DevMat;
    use gemm_runtime::internal::data::POISON;
    use gemm_runtime::EpilogueArgs;
    let (groups, m, n, k) = (3, 768, 264, 200);
    let each = Dims::new(m, n, k).batched(groups, 0, n * k, m * n);
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    let p = Problem::typed(bench, [gemm_runtime::spec::Elem::Bf16; 3], layouts, each, 47).unwrap();
    let reference = p.reference(bench).unwrap();
    let s = bench.stream();
    let (DevMat::Bf16(a), DevMat::Bf16(b)) = (&p.a, &p.b) else { unreachable!("bf16 operands") };
    // group 0: 100 rows and 28 of padding; group 2: two whole tiles; a tile of padding; group 1: one
    // row and 127 of padding; a tile naming group 7, past the batch's 3
    let mut row_groups = vec![-1i32; m];
    row_groups[..100].fill(0);
    row_groups[128..384].fill(2);
    row_groups[512] = 1;
    row_groups[640..].fill(7);
    let rows_gpu = s.clone_htod(&row_groups).unwrap();
    let mut c = DevMat::from_f32(s, gemm_runtime::spec::Elem::Bf16, &vec![POISON; m * n]).unwrap();
    let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
    let dims = Dims::new(m, n, k).batched(groups, 0, n * k, 0);
    kernel.launch_with(s, a, b, cb, dims, EpilogueArgs::new().groups(&rows_gpu)).unwrap();
    s.synchronize().unwrap();
    let out: Vec<f32> = s.clone_dtoh(cb).unwrap().into_iter().map(|x| x.to_f32()).collect();
    for (r, &g) in row_groups.iter().enumerate() {
        let ours = &out[r * n..(r + 1) * n];
        if (0..groups as i32).contains(&g) {
            let g = g as usize;
            let theirs = &reference[g * m * n + r * n..g * m * n + (r + 1) * n];
            let err = gemm_runtime::internal::data::relative_error(ours, theirs).unwrap();
            assert!(
                err <= gemm_runtime::internal::data::tolerance(gemm_runtime::spec::Elem::Bf16),
                "{}: row {r} (group {g}): relative error {err:.2e}",
                kernel.name
            );
        } else {
            assert!(ours.iter().all(|x| x.is_nan()), "{}: row {r} (group {g}) was written", kernel.name);
        }
    }
    let short = s.clone_htod(&row_groups[..m - 1]).unwrap();
    let e = kernel.launch_with(s, a, b, cb, dims, EpilogueArgs::new().groups(&short)).unwrap_err();
    assert!(matches!(e, GemmError::EpilogueArgs { .. }) && e.to_string().contains("row_groups"), "{e}");
}

/// A random routing of a grouped launch's rows: the device array its
/// kernel reads (each group's end, each row's group, or each group's
/// count), the rows of A (each problem's m_max under masked), and for each
/// line of C the group and row whose product it holds (`None`: a line the
/// kernel must leave as it was).
struct Routing {
    m: usize,
    array: Vec<i32>,
    lines: Vec<Option<(usize, usize)>>,
}

impl Routing {
    /// Rows a group holds: none, one, a tile's edge, or any up to `most`.
    fn rows(rng: &mut rand::rngs::StdRng, tile: usize, most: usize) -> usize {
        use rand::Rng;
        match rng.random_range(0..6) {
            0 => 0,
            1 => 1,
            2 => (tile * rng.random_range(1..=3usize) + rng.random_range(0..=2usize) - 1).min(most),
            _ => rng.random_range(0..=most),
        }
    }

    /// `groups` groups of `tile`-row tiles laid out as `layout` asks,
    /// contiguous groups of up to `most` rows each.
    fn random(rng: &mut rand::rngs::StdRng, layout: gemm_runtime::spec::Groups, groups: usize, tile: usize, most: usize) -> Routing {
        use gemm_runtime::spec::Groups;
        use rand::Rng;
        match layout {
            Groups::Contiguous => {
                let counts: Vec<usize> = (0..groups).map(|_| Self::rows(rng, tile, most)).collect();
                let m = counts.iter().sum::<usize>().max(1) + if rng.random_bool(0.3) { rng.random_range(1..=40) } else { 0 };
                let mut ends: Vec<i32> = counts
                    .iter()
                    .scan(0, |end, &c| {
                        *end += c as i32;
                        Some(*end)
                    })
                    .collect();
                // an end that goes back (its group empty) or the last past A's rows (clamped)
                if rng.random_bool(0.2) && groups > 1 {
                    let g = rng.random_range(1..groups);
                    ends[g] = ends[g - 1] - rng.random_range(1..=5);
                }
                if rng.random_bool(0.2) {
                    ends[groups - 1] = m as i32 + rng.random_range(1..=50);
                }
                let mut lines = vec![None; m];
                let mut start = 0usize;
                for (g, &end) in ends.iter().enumerate() {
                    let end = (end.max(start as i32) as usize).min(m);
                    (start..end).for_each(|r| lines[r] = Some((g, r)));
                    start = end;
                }
                Routing { m, array: ends, lines }
            }
            Groups::Indexed => {
                // tiles of one group's first rows and padding, of padding only, or of a group past the batch's
                let tiles = rng.random_range(1..=6usize);
                let m = tiles * tile - if rng.random_bool(0.3) { rng.random_range(1..tile) } else { 0 };
                let mut row_groups = vec![-1i32; m];
                for t in 0..tiles {
                    let g = match rng.random_range(0..8) {
                        0 => -1,
                        1 => groups as i32 + rng.random_range(0..3),
                        _ => rng.random_range(0..groups as i32),
                    };
                    let first = t * tile;
                    let rows = rng.random_range(1..=tile).min(m - first);
                    row_groups[first..first + rows].fill(g);
                }
                let lines = row_groups.iter().enumerate().map(|(r, &g)| (0..groups as i32).contains(&g).then_some((g as usize, r))).collect();
                Routing { m, array: row_groups, lines }
            }
            Groups::Masked => {
                let m_max = rng.random_range(1..=2 * tile + 3);
                // counts below 0 hold none; past m_max, all m_max rows
                let counts: Vec<i32> = (0..groups)
                    .map(|_| match rng.random_range(0..10) {
                        0 => -rng.random_range(1..=3),
                        1 => m_max as i32 + rng.random_range(1..=9),
                        _ => Self::rows(rng, tile, m_max) as i32,
                    })
                    .collect();
                let mut lines = vec![None; groups * m_max];
                for (g, &count) in counts.iter().enumerate() {
                    (0..count.clamp(0, m_max as i32) as usize).for_each(|r| lines[g * m_max + r] = Some((g, r)));
                }
                Routing { m: m_max, array: counts, lines }
            }
        }
    }

    /// The launch's `Dims`: A and C one matrix of the groups' rows, or under
    /// masked each expert's m_max rows after the one before's; each
    /// group's W `[n, k]` after the one before's; C's lines `ldc` apart.
    fn dims(layout: gemm_runtime::spec::Groups, (m, n, k): (usize, usize, usize), groups: usize, ldc: usize) -> Dims {
        let d = Dims::new(m, n, k).with_ld(k, k, ldc);
        match layout {
            gemm_runtime::spec::Groups::Masked => d.batched(groups, m * k, n * k, m * ldc),
            _ => d.batched(groups, 0, n * k, 0),
        }
    }
}

/// Grouped launches on random routings, seeded (`GEMM_TILES_TEST_SEED=N`
/// draws others): every bf16 grouped kernel (contiguous, indexed and masked
/// rows, on the Hopper and sm_80 paths, SwiGLU-gated or not) at random
/// group counts (1 to 9), n and k, with rows drawn to give empty groups,
/// single rows, tile edges and groups of several tiles (and, now and then,
/// ends that go back or pass A's rows, counts below 0 or past m_max,
/// groups past the batch), C's lines packed or up to 9 elements past the
/// line. Each group's rows of C match cuBLAS's product of those rows and
/// the group's weights element by element; every other element of C keeps
/// its poison. Lines of A or B that the kernel cannot read where they lie
/// (K not a multiple of 8) are refused with `Misaligned`, C untouched.
#[test]
#[ignore = "needs a CUDA GPU"]
fn random_routings_match_cublas_group_by_group_or_are_refused() {
    use gemm_ladder::grouped::*;
    use gemm_ladder::measure::DevMat;
    use gemm_runtime::internal::data::{tolerance, POISON};
    use gemm_runtime::spec::{Activation, Elem, Groups};
    use gemm_runtime::EpilogueArgs;
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let bench = bench();
    let s = bench.stream();
    let mut rng = StdRng::seed_from_u64(test_seed(20261203));
    let vector = Kernel::from_spec(contiguous_by_vector_stores()).unwrap();
    let kernels = [
        &grouped_contiguous::KERNEL,
        &vector,
        &grouped_swiglu::KERNEL,
        &grouped_contiguous_sm80::KERNEL,
        &grouped_indexed::KERNEL,
        &grouped_indexed_sm80::KERNEL,
        &grouped_masked::KERNEL,
        &grouped_masked_swiglu::KERNEL,
        &grouped_masked_sm80::KERNEL,
    ];
    let (mut ran, mut refused) = (0, 0);
    for (i, kernel) in kernels.into_iter().enumerate() {
        if kernel.spec.arch == gemm_runtime::spec::Arch::Sm90a && bench.gpu.capability != (9, 0) {
            continue;
        }
        let (layout, gated, tile) = (kernel.spec.groups.unwrap(), kernel.spec.fused.gated, kernel.spec.block.m as usize);
        for case in 0..4 {
            let groups = rng.random_range(1..=9usize);
            let n = rng.random_range(1..=520usize).next_multiple_of(if gated { 2 } else { 1 });
            // mostly lines TMA and 16-byte copies take; now and then any K
            let k = if rng.random_bool(0.8) { 8 * rng.random_range(1..=48usize) } else { rng.random_range(1..=400) };
            let c_cols = if gated { n / 2 } else { n };
            let ldc = c_cols + if rng.random_bool(0.4) { 0 } else { rng.random_range(1..=9) };
            let Routing { m, array: groups_array, lines } = Routing::random(&mut rng, layout, groups, tile, 3 * tile);
            let dims = Routing::dims(layout, (m, n, k), groups, ldc);
            // cuBLAS's product of each group's W and every row of A its group may read
            let a_stride = if layout == Groups::Masked { m * k } else { 0 };
            let each = Dims::new(m, n, k).batched(groups, a_stride, n * k, m * n);
            let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
            let seed = 7000 + 10 * i as u64 + case;
            let p = Problem::typed(&bench, [Elem::Bf16; 3], layouts, each, seed).unwrap();
            let reference = p.reference(&bench).unwrap();
            let (DevMat::Bf16(a), DevMat::Bf16(b)) = (&p.a, &p.b) else { unreachable!("bf16 operands") };
            let groups_gpu = s.clone_htod(&groups_array).unwrap();
            let mut c = s.clone_htod(&vec![bf16::from_f32(POISON); lines.len() * ldc]).unwrap();
            let what = format!("{} at {groups} groups of {m} x {n} x {k}, ldc {ldc}, {layout:?} {groups_array:?}", kernel.name);
            let launched = kernel.launch_with(s, a, b, &mut c, dims, EpilogueArgs::new().groups(&groups_gpu));
            s.synchronize().unwrap();
            let out: Vec<f32> = s.clone_dtoh(&c).unwrap().into_iter().map(|x| x.to_f32()).collect();
            if let Err(e) = launched {
                assert!(k % 8 != 0 && matches!(e, GemmError::Misaligned { .. }), "{what}: refused: {e}");
                assert!(out.iter().all(|x| x.is_nan()), "{what}: refused ({e}), yet C was written");
                refused += 1;
                continue;
            }
            // each line's product, gated where the kernel gates it
            let want = |g: usize, r: usize| -> Vec<f32> {
                let line = &reference[(g * m + r) * n..(g * m + r + 1) * n];
                match gated {
                    true => line.chunks(2).map(|p| (Activation::Silu.apply(p[0] as f64) * p[1] as f64) as f32).collect(),
                    false => line.to_vec(),
                }
            };
            let rms = |g: usize| {
                let rows: Vec<f32> = lines.iter().flatten().filter(|l| l.0 == g).flat_map(|&(g, r)| want(g, r)).collect();
                (rows.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / rows.len().max(1) as f64).sqrt()
            };
            let rms: Vec<f64> = (0..groups).map(rms).collect();
            let tol = tolerance(Elem::Bf16);
            for (line, holds) in lines.iter().enumerate() {
                let got = &out[line * ldc..(line + 1) * ldc];
                if let Some(j) = got[c_cols..].iter().position(|x| !x.is_nan()) {
                    panic!("{what}: line {line} written past its end, at element {}", c_cols + j);
                }
                match *holds {
                    None => assert!(got.iter().all(|x| x.is_nan()), "{what}: line {line}, in no group, was written"),
                    Some((g, r)) => {
                        for (j, (&o, r_)) in got[..c_cols].iter().zip(want(g, r)).enumerate() {
                            // a unit or two in C's last place, plus summation order
                            if !o.is_finite() || (o - r_).abs() as f64 > 4.0 * tol * (r_.abs() as f64) + tol * rms[g] {
                                panic!("{what}: line {line} (group {g}, row {r}), element {j}: {o} where cuBLAS has {r_}");
                            }
                        }
                    }
                }
            }
            ran += 1;
        }
    }
    println!("{ran} grouped launches matched cuBLAS group by group, {refused} were refused");
    assert!(ran > refused, "most random routings run");
}

/// The fused epilogue on grouped launches: alpha, a bias per group (the
/// batch's bias stride) and GELU on the contiguous (both paths, and C by
/// TMA stores on the Hopper path) and masked layouts,
/// each group's rows against cuBLAS's product with the epilogue on the
/// host; rows outside the groups keep their poison.
#[test]
#[ignore = "needs a CUDA GPU"]
fn fused_epilogues_on_grouped_launches_take_each_groups_bias() {
    use gemm_ladder::grouped::{grouped_contiguous, grouped_contiguous_sm80, grouped_masked};
    use gemm_ladder::measure::DevMat;
    use gemm_runtime::internal::data::POISON;
    use gemm_runtime::spec::{Activation, Bias, Dim, Elem, Fused, Groups};
    use gemm_runtime::EpilogueArgs;
    let bench = bench();
    if bench.gpu.capability != (9, 0) {
        return;
    }
    let (groups, m, n, k) = (4, 400, 264, 136);
    let fused = Fused { alpha: true, bias: Some(Bias { along: Dim::N, elem: Elem::Bf16 }), activation: Some(Activation::Gelu), ..Fused::default() };
    let s = bench.stream();
    let bias: Vec<f32> = gemm_ladder::measure::random_normal(groups * n, 61).into_iter().map(|x| bf16::from_f32(x).to_f32()).collect();
    let bias_d = DevMat::from_f32(s, Elem::Bf16, &bias).unwrap();
    let DevMat::Bf16(bias_b) = &bias_d else { unreachable!("a bf16 bias") };
    let alpha = 0.75f32;
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::RowMajor];
    // (kernel, the batch as cuBLAS computes it, as the grouped launch takes it, the array, each group's rows of C)
    let contiguous_rows = [(0, 130), (130, 130), (130, 131), (131, 350)];
    let masked_rows = [(0, 400), (400, 401), (800, 800), (1200, 1329)];
    let cases = [
        (
            grouped_contiguous::KERNEL.spec.clone(),
            Dims::new(m, n, k).batched(groups, 0, n * k, m * n),
            Dims::new(m, n, k).batched(groups, 0, n * k, 0),
            vec![130, 130, 131, 350],
            contiguous_rows,
            m,
        ),
        (
            contiguous_by_vector_stores(),
            Dims::new(m, n, k).batched(groups, 0, n * k, m * n),
            Dims::new(m, n, k).batched(groups, 0, n * k, 0),
            vec![130, 130, 131, 350],
            contiguous_rows,
            m,
        ),
        (
            grouped_contiguous_sm80::KERNEL.spec.clone(),
            Dims::new(m, n, k).batched(groups, 0, n * k, m * n),
            Dims::new(m, n, k).batched(groups, 0, n * k, 0),
            vec![130, 130, 131, 350],
            contiguous_rows,
            m,
        ),
        (
            grouped_masked::KERNEL.spec.clone(),
            Dims::new(m, n, k).batched(groups, m * k, n * k, m * n),
            Dims::new(m, n, k).batched(groups, m * k, n * k, m * n),
            vec![400, 1, 0, 129],
            masked_rows,
            groups * m,
        ),
    ];
    for (i, (base, each, dims, array, rows, c_rows)) in cases.into_iter().enumerate() {
        let kernel = gemm_runtime::Kernel::from_spec(gemm_runtime::spec::KernelSpec { fused, ..base.clone() }).unwrap();
        let p = Problem::typed(&bench, [Elem::Bf16; 3], layouts, each, 63 + i as u64).unwrap();
        let reference = p.reference(&bench).unwrap();
        let (DevMat::Bf16(a), DevMat::Bf16(b)) = (&p.a, &p.b) else { unreachable!("bf16 operands") };
        let mut c = DevMat::from_f32(s, Elem::Bf16, &vec![POISON; c_rows * n]).unwrap();
        let DevMat::Bf16(cb) = &mut c else { unreachable!("a bf16 C") };
        let array_d = s.clone_htod(&array).unwrap();
        let ep = EpilogueArgs::new().alpha(alpha).bias(bias_b).groups(&array_d);
        kernel.launch_with(s, a, b, cb, dims.bias_stride(n), ep).unwrap();
        let out = c.to_f32(s).unwrap();
        let mut written = vec![false; c_rows];
        for (g, &(start, end)) in rows.iter().enumerate() {
            // group g's rows of C, and where cuBLAS's product of them lies (its problem g, all m rows)
            let first = if base.groups == Some(Groups::Contiguous) { start } else { 0 };
            for (r, row) in (start..end).enumerate() {
                written[row] = true;
                let want: Vec<f32> = (0..n)
                    .map(|col| {
                        Activation::Gelu.apply(alpha as f64 * reference[g * m * n + (first + r) * n + col] as f64 + bias[g * n + col] as f64) as f32
                    })
                    .collect();
                let err = gemm_runtime::internal::data::relative_error(&out[row * n..(row + 1) * n], &want).unwrap();
                assert!(err <= 1e-2, "{}: group {g}, row {row}: relative error {err:.2e}", kernel.name);
            }
        }
        for (row, w) in written.iter().enumerate() {
            assert!(*w || out[row * n..(row + 1) * n].iter().all(|x| x.is_nan()), "{}: row {row}, outside the groups, was written", kernel.name);
        }
    }
}
