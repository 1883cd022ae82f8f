//! The tensor-parallel layers and MLP on every GPU count the machine
//! allows (one included: a group of one rank) against the same on one GPU
//! without NCCL (ignored: they need GPUs and NCCL; one misuse test two).

use gemm_runtime::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use gemm_runtime::internal::data::relative_error;
use gemm_runtime::{bf16, Dims};
use gemm_tp::kernels::{linear, linear_bias, linear_bias_gelu, linear_gelu, tail_split_pays};
use gemm_tp::{ChunkGemm, ChunkPlan, ColumnParallel, GroupId, MlpShape, Reduce, RowParallel, TpError, TpGroup, TpMlp};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rand_distr::StandardNormal;
use std::sync::Arc;

fn normal(len: usize, seed: u64, scale: f32) -> Vec<bf16> {
    StdRng::seed_from_u64(seed).sample_iter::<f32, _>(StandardNormal).take(len).map(|x| bf16::from_f32(x * scale)).collect()
}

/// The weights of a block, `scale`d so that every layer's outputs stay near 1.
struct Weights {
    w1: Vec<bf16>,
    b1: Vec<bf16>,
    w2: Vec<bf16>,
    b2: Vec<bf16>,
}

fn weights(s: MlpShape) -> Weights {
    let (h, f) = (s.hidden, s.ffn);
    Weights {
        w1: normal(f * h, 1, 1.0 / (h as f32).sqrt()),
        b1: normal(f, 2, 0.1),
        w2: normal(h * f, 3, 1.0 / (f as f32).sqrt()),
        b2: normal(h, 4, 0.1),
    }
}

/// The whole block on one GPU with the same kernels: the reference.
fn one_gpu(stream: &Arc<CudaStream>, s: MlpShape, w: &Weights, x: &[bf16], m: usize) -> Vec<f32> {
    let (h, f) = (s.hidden, s.ffn);
    // (the activations come back as bf16 widened: narrowed again, exactly)
    let act: Vec<bf16> = one_gpu_layer(stream, &w.w1, Some(&w.b1), true, x, (m, f, h)).into_iter().map(bf16::from_f32).collect();
    one_gpu_layer(stream, &w.w2, Some(&w.b2), false, &act, (m, h, f))
}

fn gpus() -> usize {
    CudaContext::device_count().map_or(0, |c| c as usize)
}

/// Every GPU count the machine allows, M not a multiple of the chunk, one
/// chunk and several (those after the first on GEMMs whose blocks take tiles from a queue):
/// every rank's output matches the one-GPU block within
/// bf16's rounding (each rank's partial sum is rounded to bf16 before the
/// all-reduce adds them).
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn the_tensor_parallel_mlp_matches_the_block_on_one_gpu() {
    let n = gpus();
    assert!(n >= 1, "this test needs a GPU");
    let shape = MlpShape { hidden: 512, ffn: 1536 };
    let w = weights(shape);
    let cases: Vec<(usize, Vec<bf16>, Vec<f32>)> = [1000, 128, 1]
        .into_iter()
        .map(|m| {
            let x = normal(m * shape.hidden, 5 + m as u64, 1.0);
            let reference = one_gpu(&CudaContext::new(0).unwrap().default_stream(), shape, &w, &x, m);
            (m, x, reference)
        })
        .collect();
    for world in 1..=n.min(4) {
        let group = TpGroup::new(&(0..world).collect::<Vec<_>>()).unwrap();
        // one block for every size: the calls of fewer tokens run in views of the buffers the first kept
        let mlp = TpMlp::from_host(&group, shape, &w.w1, &w.b1, &w.w2, &w.b2).unwrap();
        for (m, x, reference) in &cases {
            let m = *m;
            // the plan forward fits to the GPU (at these sizes, one chunk), then 3 equal chunks
            // (those after the first on GEMMs whose blocks take tiles from a queue)
            let plans = [mlp.plan(&group, m, 3).unwrap(), ChunkPlan::new(m, 3, 128).unwrap()];
            for plan in &plans {
                let xs: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).clone_htod(x).unwrap()).collect();
                let poison = vec![bf16::NAN; m * shape.hidden];
                let mut outs: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).clone_htod(&poison).unwrap()).collect();
                let xr: Vec<&CudaSlice<bf16>> = xs.iter().collect();
                let mut or: Vec<&mut CudaSlice<bf16>> = outs.iter_mut().collect();
                mlp.forward_planned(&group, &xr, &mut or, plan).unwrap();
                for (r, out) in outs.iter().enumerate() {
                    let got: Vec<f32> = group.stream(r).clone_dtoh(out).unwrap().into_iter().map(|v| v.to_f32()).collect();
                    let err = relative_error(&got, reference).unwrap();
                    assert!(err < 1e-2, "{world} GPUs, m = {m}, chunks {:?}, rank {r}: relative error {err:.2e}", plan.ranges());
                }
            }
        }
    }
}

/// A block keeps its buffers from call to call at the largest size asked
/// for: after a call of many tokens in one chunk and one in four, calls of
/// fewer tokens or other chunk counts allocate nothing (the GPU's free
/// memory stays as it was).
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn smaller_calls_allocate_nothing() {
    use gemm_runtime::cudarc::driver::result;
    assert!(gpus() >= 1, "this test needs a GPU");
    let shape = MlpShape { hidden: 1024, ffn: 4096 };
    let w = weights(shape);
    let group = TpGroup::new(&[0]).unwrap();
    let mlp = TpMlp::from_host(&group, shape, &w.w1, &w.b1, &w.w2, &w.b2).unwrap();
    let big = 4096;
    let x = group.stream(0).clone_htod(&normal(big * shape.hidden, 7, 1.0)).unwrap();
    let mut out = group.stream(0).alloc_zeros::<bf16>(big * shape.hidden).unwrap();
    // (equal chunks: at this size the plan forward fits to the GPU is one chunk)
    let mut call = |m: usize, chunks: usize| {
        mlp.forward_planned(&group, &[&x], &mut [&mut out], &ChunkPlan::new(m, chunks, 128).unwrap()).unwrap();
        group.synchronize().unwrap();
        group.stream(0).context().bind_to_thread().unwrap();
        result::mem_get_info().unwrap().0
    };
    call(big, 1);
    let free = call(big, 4);
    for (m, chunks) in [(big, 1), (1000, 1), (big, 2), (128, 3), (big, 4)] {
        assert_eq!(call(m, chunks), free, "m = {m} in {chunks} chunk(s) allocated");
    }
}

/// A group knows the fewest SMs of its GPUs (what every rank's chunks are
/// fitted to), and forward's chunks are fitted to them: at a block whose
/// chunks of a tile each would leave most of the GPU idle, fewer chunks.
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn a_group_fits_chunks_to_its_fewest_sms() {
    use gemm_runtime::cudarc::driver::sys::CUdevice_attribute;
    let n = gpus();
    assert!(n >= 1, "this test needs a GPU");
    let group = TpGroup::new(&(0..n).collect::<Vec<_>>()).unwrap();
    let sms = (0..n)
        .map(|o| CudaContext::new(o).unwrap().attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap() as usize)
        .min()
        .unwrap();
    assert_eq!(group.sms(), sms);
    let shape = MlpShape { hidden: 512, ffn: 512 * n };
    let w = weights(shape);
    let mlp = TpMlp::from_host(&group, shape, &w.w1, &w.b1, &w.w2, &w.b2).unwrap();
    // 4 tiles' rows, 2 tiles across each GEMM: one wave each, in one chunk or in four
    let plan = mlp.plan(&group, 512, 4).unwrap();
    assert_eq!(plan.ranges(), &[(0, 512)]);
    let gemms = [ChunkGemm { tiles_n: 2, k: 512 }, ChunkGemm { tiles_n: 2, k: 512 }];
    assert_eq!(plan, ChunkPlan::fitted(512, 4, 128, &gemms, sms).unwrap());
}

/// Each rank's collectives run on a stream of its GPU's highest priority
/// (their CTAs placed before a GEMM's waiting blocks), its GEMMs on one of
/// the default priority.
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn collectives_run_at_the_gpus_highest_priority() {
    use gemm_runtime::cudarc::driver::{result, sys};
    assert!(gpus() >= 1, "this test needs a GPU");
    let group = TpGroup::new(&[0]).unwrap();
    let priority = |s: &CudaStream| {
        let mut p = 0;
        // SAFETY: a live stream of the group's context, and an out-parameter.
        unsafe { sys::cuStreamGetPriority(s.cu_stream(), &mut p) }.result().unwrap();
        p
    };
    let (least, greatest) = result::stream::get_priority_range().unwrap();
    assert!(greatest < least, "this GPU has one stream priority: nothing to check");
    assert_eq!(priority(&group.comm(0).stream()), greatest);
    assert_eq!(priority(group.stream(0)), least);
}

/// Every layer's call starts after the collectives already on the
/// group's communicator streams: a kernel spinning for a while there (as
/// a collective of an earlier call would run) is done by the time the
/// call's GEMMs are, for each entry point whose compute stream reads
/// nothing a collective of the call writes (`forward_gathered`'s copies
/// read the gathered output, and a chunked block's next GEMMs wait for
/// the communicators' streams anyway). Without the wait, the GEMMs of
/// these small layers end long before the spin.
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn a_call_starts_after_the_groups_earlier_collectives() {
    use gemm_runtime::cudarc::driver::{LaunchConfig, PushKernelArg};
    use gemm_runtime::cudarc::nvrtc::compile_ptx;
    assert!(gpus() >= 1, "this test needs a GPU");
    let group = TpGroup::new(&[0]).unwrap();
    let ptx = compile_ptx(
        "extern \"C\" __global__ void spin(unsigned long long cycles) {\n\
         long long t0 = clock64();\n\
         while ((unsigned long long)(clock64() - t0) < cycles) {}\n}",
    )
    .unwrap();
    let spin = group.stream(0).context().load_module(ptx).unwrap().load_function("spin").unwrap();
    let comm = group.comm(0).stream();
    let shape = MlpShape { hidden: 256, ffn: 512 };
    let w = weights(shape);
    let mlp = TpMlp::from_host(&group, shape, &w.w1, &w.b1, &w.w2, &w.b2).unwrap();
    let column = ColumnParallel::from_host(&group, 256, 512, &w.w1, Some(&w.b1), true).unwrap();
    let row = RowParallel::from_host(&group, 512, 256, &w.w2, Some(&w.b2)).unwrap();
    let m = 128;
    let alloc = |len: usize| group.stream(0).alloc_zeros::<bf16>(len).unwrap();
    let (x, act) = (group.stream(0).clone_htod(&normal(m * 256, 5, 1.0)).unwrap(), alloc(m * 512));
    let names = ["ColumnParallel::forward", "RowParallel::forward, all-reduce", "RowParallel::forward, reduce-scatter", "TpMlp::forward"];
    // (the outputs kept to the end: a buffer dropped makes its stream wait for its last use)
    let mut ys = [alloc(m * 512), alloc(m * 256), alloc(m * 256), alloc(m * 256)];
    let call = |i: usize, y: &mut CudaSlice<bf16>| match i {
        0 => column.forward(&group, &[&x], &mut [y], m),
        1 => row.forward(&group, &[&act], &mut [y], m, Reduce::AllReduce),
        2 => row.forward(&group, &[&act], &mut [y], m, Reduce::ReduceScatter),
        _ => mlp.forward(&group, &[&x], &mut [y], m, 1),
    };
    for (i, (name, y)) in names.iter().zip(ys.iter_mut()).enumerate() {
        // warmed first (kernels compiled, scratch allocated), then run after the spin
        call(i, y).unwrap();
        group.synchronize().unwrap();
        // about 0.2 s at 2 GHz
        let cycles: u64 = 400_000_000;
        let mut launch = comm.launch_builder(&spin);
        launch.arg(&cycles);
        // SAFETY: one thread reading its argument, writing nothing.
        unsafe { launch.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
        let spun = comm.record_event(None).unwrap();
        assert!(!spun.try_is_complete().unwrap(), "{name}: the spin ended before the call was made: nothing to check");
        call(i, y).unwrap();
        group.stream(0).synchronize().unwrap();
        assert!(spun.try_is_complete().unwrap(), "{name}: its GEMMs ended before the collectives enqueued before the call");
        group.synchronize().unwrap();
    }
}

/// An argument error's message; anything else fails the test.
fn args(e: Result<(), TpError>) -> String {
    match e {
        Err(TpError::Args(s)) => s,
        other => panic!("expected an argument error, got {other:?}"),
    }
}

/// Misuse is an `Err`, before anything runs: a buffer on another rank's
/// GPU, too few inputs, a short output, a layer split for another group,
/// an ffn that does not split over the ranks; with no tokens too. (What
/// one GPU shows: [`misuse_on_one_gpu_is_an_error`].)
#[test]
#[ignore = "needs at least two CUDA GPUs and NCCL"]
fn misuse_of_the_tensor_parallel_mlp_is_an_error() {
    assert!(gpus() >= 2, "this test needs two GPUs or more");
    let shape = MlpShape { hidden: 256, ffn: 512 };
    let w = weights(shape);
    let group = TpGroup::new(&[0, 1]).unwrap();
    let mlp = TpMlp::from_host(&group, shape, &w.w1, &w.b1, &w.w2, &w.b2).unwrap();
    let m = 64;
    let alloc = |r: usize, len: usize| group.stream(r).alloc_zeros::<bf16>(len).unwrap();
    let (x0, x1) = (alloc(0, m * 256), alloc(1, m * 256));
    let (mut o0, mut o1) = (alloc(0, m * 256), alloc(1, m * 256));
    // rank 1 given rank 0's input
    assert!(args(mlp.forward(&group, &[&x0, &x0], &mut [&mut o0, &mut o1], m, 2)).contains("lies on GPU 0"));
    assert!(args(mlp.forward(&group, &[&x0], &mut [&mut o0, &mut o1], m, 2)).contains("one input and one output a rank"));
    let mut short = alloc(1, m * 256 - 1);
    assert!(args(mlp.forward(&group, &[&x0, &x1], &mut [&mut o0, &mut short], m, 2)).contains("holds 16383 values"));
    // no tokens: checked as any call (here rank 1 given rank 0's input) before nothing runs
    assert!(args(mlp.forward(&group, &[&x0, &x0], &mut [&mut o0, &mut o1], 0, 2)).contains("lies on GPU 0"));
    let one = TpGroup::new(&[0]).unwrap();
    assert!(args(mlp.forward(&one, &[&x0], &mut [&mut o0], m, 1)).contains("split over 2 ranks, the group has 1"));
    if gpus() >= 3 {
        let three = TpGroup::new(&[0, 1, 2]).unwrap();
        let odd = MlpShape { hidden: 256, ffn: 512 };
        assert!(matches!(TpMlp::from_host(&three, odd, &w.w1, &w.b1, &w.w2, &w.b2), Err(TpError::Args(_))));
    }
}

/// The misuse one GPU can show is an `Err`, before anything runs: too few
/// inputs, a short output, no tokens with too few inputs; a group of a GPU
/// named twice, of none, or of one the machine lacks; a rank past the
/// group's.
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn misuse_on_one_gpu_is_an_error() {
    assert!(gpus() >= 1, "this test needs a GPU");
    let shape = MlpShape { hidden: 256, ffn: 512 };
    let w = weights(shape);
    let group = TpGroup::new(&[0]).unwrap();
    let mlp = TpMlp::from_host(&group, shape, &w.w1, &w.b1, &w.w2, &w.b2).unwrap();
    let m = 64;
    let alloc = |len: usize| group.stream(0).alloc_zeros::<bf16>(len).unwrap();
    let (x, mut out, mut short) = (alloc(m * 256), alloc(m * 256), alloc(m * 256 - 1));
    assert!(args(mlp.forward(&group, &[], &mut [&mut out], m, 2)).contains("one input and one output a rank"));
    assert!(args(mlp.forward(&group, &[&x], &mut [&mut short], m, 2)).contains("holds 16383 values"));
    assert!(args(mlp.forward(&group, &[], &mut [&mut out], 0, 2)).contains("one input and one output a rank"));
    assert!(matches!(TpGroup::new(&[0, 0]), Err(TpError::Args(e)) if e.contains("appears twice")));
    assert!(matches!(TpGroup::new(&[]), Err(TpError::Args(e)) if e.contains("at least one GPU")));
    assert!(matches!(TpGroup::new(&[gpus()]), Err(TpError::Args(e)) if e.contains("there is no GPU")));
    // a rank past the group's
    let id = GroupId::new().unwrap();
    assert!(matches!(TpGroup::from_rank(0, 2, 2, &id), Err(TpError::Args(e)) if e.contains("ranks run from 0 to 1")));
}

/// No tokens (m = 0), as an engine's step may have, on every GPU count
/// the machine allows: the block, both layers (gathered, all-reduced,
/// scattered) and the group's all-reduce return `Ok` and write nothing;
/// no rank joins a collective, so the block's next call, of tokens, still
/// matches the block on one GPU.
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn no_tokens_write_nothing_and_the_next_call_runs_as_ever() {
    let n = gpus();
    assert!(n >= 1, "this test needs a GPU");
    let shape = MlpShape { hidden: 256, ffn: 512 };
    let (h, f) = (shape.hidden, shape.ffn);
    let w = weights(shape);
    let m = 200;
    let x = normal(m * h, 41, 1.0);
    let reference = one_gpu(&CudaContext::new(0).unwrap().default_stream(), shape, &w, &x, m);
    let untouched = |group: &TpGroup, ys: &[CudaSlice<bf16>], what: &str| {
        for (r, y) in ys.iter().enumerate() {
            assert!(host(group, r, y).iter().all(|v| v.is_nan()), "{} GPUs, {what}: rank {r}'s output was written", group.world());
        }
    };
    for world in 1..=n.min(4) {
        let group = TpGroup::new(&(0..world).collect::<Vec<_>>()).unwrap();
        let xs: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).clone_htod(&x).unwrap()).collect();
        let xr: Vec<&CudaSlice<bf16>> = xs.iter().collect();
        let mlp = TpMlp::from_host(&group, shape, &w.w1, &w.b1, &w.w2, &w.b2).unwrap();
        assert!(mlp.plan(&group, 0, 4).unwrap().ranges().is_empty());
        let mut outs = poisoned(&group, m * h);
        mlp.forward(&group, &xr, &mut outs.iter_mut().collect::<Vec<_>>(), 0, 4).unwrap();
        untouched(&group, &outs, "the block");
        let up = ColumnParallel::from_host(&group, h, f, &w.w1, Some(&w.b1), true).unwrap();
        let mut ys = poisoned(&group, m * f);
        up.forward(&group, &xr, &mut ys.iter_mut().collect::<Vec<_>>(), 0).unwrap();
        untouched(&group, &ys, "the column-parallel layer");
        up.forward_gathered(&group, &xr, &mut ys.iter_mut().collect::<Vec<_>>(), 0).unwrap();
        untouched(&group, &ys, "the gathered column-parallel layer");
        let down = RowParallel::from_host(&group, f, h, &w.w2, Some(&w.b2)).unwrap();
        let acts: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).clone_htod(&normal(m * f / world, 42, 1.0)).unwrap()).collect();
        let ar: Vec<&CudaSlice<bf16>> = acts.iter().collect();
        for reduce in [Reduce::AllReduce, Reduce::ReduceScatter] {
            down.forward(&group, &ar, &mut outs.iter_mut().collect::<Vec<_>>(), 0, reduce).unwrap();
            untouched(&group, &outs, &format!("the row-parallel layer, {reduce:?}"));
        }
        group.all_reduce(&mut outs.iter_mut().collect::<Vec<_>>(), 0).unwrap();
        untouched(&group, &outs, "the all-reduce of nothing");
        mlp.forward(&group, &xr, &mut outs.iter_mut().collect::<Vec<_>>(), m, 2).unwrap();
        for (r, out) in outs.iter().enumerate() {
            let err = relative_error(&host(&group, r, out), &reference).unwrap();
            assert!(err < 1e-2, "{world} GPUs, the call after those of no tokens, rank {r}: relative error {err:.2e}");
        }
    }
}

/// `y = act(x W^T + b)` on one GPU with the kernel for the bias and
/// activation given: the reference for a layer.
fn one_gpu_layer(stream: &Arc<CudaStream>, w: &[bf16], b: Option<&[bf16]>, gelu: bool, x: &[bf16], (m, n, k): (usize, usize, usize)) -> Vec<f32> {
    let up = |v: &[bf16]| stream.clone_htod(v).unwrap();
    let (wd, xd) = (up(w), up(x));
    let mut y = stream.alloc_zeros::<bf16>(m * n).unwrap();
    let dims = Dims::new(m, n, k);
    match (b.map(up), gelu) {
        (Some(bd), true) => linear_bias_gelu(stream, &xd, &wd, &mut y, &bd, dims),
        (Some(bd), false) => linear_bias(stream, &xd, &wd, &mut y, &bd, dims),
        (None, true) => linear_gelu(stream, &xd, &wd, &mut y, dims),
        (None, false) => linear(stream, &xd, &wd, &mut y, dims),
    }
    .unwrap();
    stream.clone_dtoh(&y).unwrap().into_iter().map(|v| v.to_f32()).collect()
}

/// Rank r's output, as f32.
fn host(group: &TpGroup, r: usize, y: &CudaSlice<bf16>) -> Vec<f32> {
    group.stream(r).clone_dtoh(y).unwrap().into_iter().map(|v| v.to_f32()).collect()
}

fn poisoned(group: &TpGroup, len: usize) -> Vec<CudaSlice<bf16>> {
    (0..group.world()).map(|r| group.stream(r).clone_htod(&vec![bf16::NAN; len]).unwrap()).collect()
}

/// The column-parallel layer, with bias and GELU, bias alone, neither and
/// GELU alone: each rank's columns match those of the layer on one GPU,
/// and the gathered form gives every rank all of them (m not a multiple
/// of the tile), on every GPU count the machine allows.
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn column_parallel_slices_and_gathered_outputs_match_the_layer_on_one_gpu() {
    let n = gpus();
    assert!(n >= 1, "this test needs a GPU");
    let (m, k, out) = (300, 384, 1024);
    let (w, b, x) = (normal(out * k, 11, 1.0 / (k as f32).sqrt()), normal(out, 12, 0.1), normal(m * k, 13, 1.0));
    let s0 = CudaContext::new(0).unwrap().default_stream();
    for world in 1..=n.min(4) {
        let group = TpGroup::new(&(0..world).collect::<Vec<_>>()).unwrap();
        let op = out / world;
        for (bias, gelu) in [(true, true), (true, false), (false, false), (false, true)] {
            let b = bias.then_some(&b[..]);
            let reference = one_gpu_layer(&s0, &w, b, gelu, &x, (m, out, k));
            // ANCHOR: column
            // W [out, k] and b [out] on the host; rank r keeps rows r * out / p.. of them
            let layer = ColumnParallel::from_host(&group, k, out, &w, b, gelu).unwrap();
            // ANCHOR_END: column
            assert_eq!(layer.out_per_rank(), op);
            let xs: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).clone_htod(&x).unwrap()).collect();
            let xr: Vec<&CudaSlice<bf16>> = xs.iter().collect();
            let mut ys = poisoned(&group, m * op);
            layer.forward(&group, &xr, &mut ys.iter_mut().collect::<Vec<_>>(), m).unwrap();
            for (r, y) in ys.iter().enumerate() {
                let theirs: Vec<f32> = (0..m).flat_map(|i| reference[i * out + r * op..i * out + (r + 1) * op].iter().copied()).collect();
                let err = relative_error(&host(&group, r, y), &theirs).unwrap();
                assert!(err < 1e-2, "{world} GPUs, bias {bias}, gelu {gelu}, rank {r}'s columns: relative error {err:.2e}");
            }
            // ANCHOR: gathered
            // every rank's columns on every rank: [m, out] each
            let mut full = poisoned(&group, m * out);
            layer.forward_gathered(&group, &xr, &mut full.iter_mut().collect::<Vec<_>>(), m).unwrap();
            // ANCHOR_END: gathered
            for (r, y) in full.iter().enumerate() {
                let err = relative_error(&host(&group, r, y), &reference).unwrap();
                assert!(err < 1e-2, "{world} GPUs, bias {bias}, gelu {gelu}, rank {r}'s gathered output: relative error {err:.2e}");
            }
        }
    }
}

/// Where a GEMM's last wave is at most half full its tiles split along K
/// there (`tail_split_pays`): a column-parallel layer of such a shape, with
/// each epilogue, matches cuBLAS's product with the bias and GELU applied
/// on the host (m ragged, so the split tiles include an edge's).
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn a_layer_whose_last_wave_splits_matches_cublas() {
    use gemm_runtime::cudarc::driver::sys::CUdevice_attribute;
    use gemm_runtime::internal::reference::Cublas;
    use gemm_runtime::spec::{Activation, Layout};
    assert!(gpus() >= 1, "this test needs a GPU");
    let group = TpGroup::new(&[0]).unwrap();
    let s = group.stream(0).clone();
    let sms = s.context().attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap() as usize;
    // 2 tiles across, sms / 2 + 1 tiles down, the last 77 rows: a last wave of 2 tiles
    let (k, out) = (384usize, 512usize);
    let m = 128 * (sms / 2) + 77;
    assert!(tail_split_pays(m.div_ceil(128) * out.div_ceil(256), sms));
    let (w, b, x) = (normal(out * k, 31, 1.0 / (k as f32).sqrt()), normal(out, 32, 0.1), normal(m * k, 33, 1.0));
    let (wd, xd) = (s.clone_htod(&w).unwrap(), s.clone_htod(&x).unwrap());
    let mut product = s.alloc_zeros::<f32>(m * out).unwrap();
    Cublas::new(s.clone())
        .unwrap()
        .gemm([Layout::RowMajor, Layout::ColMajor, Layout::RowMajor], &xd, &wd, &mut product, Dims::new(m, out, k))
        .unwrap();
    let product = s.clone_dtoh(&product).unwrap();
    for (bias, gelu) in [(true, true), (true, false), (false, false), (false, true)] {
        let reference: Vec<f32> = product
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let v = p as f64 + if bias { b[i % out].to_f64() } else { 0.0 };
                bf16::from_f64(if gelu { Activation::Gelu.apply(v) } else { v }).to_f32()
            })
            .collect();
        let layer = ColumnParallel::from_host(&group, k, out, &w, bias.then_some(&b[..]), gelu).unwrap();
        let mut ys = poisoned(&group, m * out);
        layer.forward(&group, &[&xd], &mut ys.iter_mut().collect::<Vec<_>>(), m).unwrap();
        let err = relative_error(&host(&group, 0, &ys[0]), &reference).unwrap();
        assert!(err < 1e-2, "bias {bias}, gelu {gelu}: relative error {err:.2e}");
    }
}

/// The row-parallel layer, with a bias and without: each rank's slice of
/// the input features times its columns of W, summed by an all-reduce
/// (every rank the whole output) or a reduce-scatter (rank r its rows),
/// matches the layer on one GPU, the bias counted once; an m that does not
/// split over the ranks for a reduce-scatter, and a short output, are
/// `Err`s.
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn row_parallel_sums_match_the_layer_on_one_gpu_with_the_bias_once() {
    let n = gpus();
    assert!(n >= 1, "this test needs a GPU");
    let (k, out) = (1024, 384);
    let (w, b) = (normal(out * k, 21, 1.0 / (k as f32).sqrt()), normal(out, 22, 0.1));
    let s0 = CudaContext::new(0).unwrap().default_stream();
    for world in 1..=n.min(4) {
        let group = TpGroup::new(&(0..world).collect::<Vec<_>>()).unwrap();
        let kp = k / world;
        // 12 * world rows split evenly; 301 does not (all-reduce only)
        for m in [12 * world, 301] {
            let x = normal(m * k, 23 + m as u64, 1.0);
            for bias in [true, false] {
                let b = bias.then_some(&b[..]);
                let reference = one_gpu_layer(&s0, &w, b, false, &x, (m, out, k));
                // ANCHOR: row
                // W [out, k] on the host; rank r keeps its columns r * k / p.., rank 0 the bias
                let layer = RowParallel::from_host(&group, k, out, &w, b).unwrap();
                // ANCHOR_END: row
                assert_eq!(layer.in_per_rank(), kp);
                // rank r's input: its features' columns of x
                let xs: Vec<CudaSlice<bf16>> = (0..world)
                    .map(|r| {
                        let cols: Vec<bf16> = (0..m).flat_map(|i| x[i * k + r * kp..i * k + (r + 1) * kp].iter().copied()).collect();
                        group.stream(r).clone_htod(&cols).unwrap()
                    })
                    .collect();
                let xr: Vec<&CudaSlice<bf16>> = xs.iter().collect();
                let mut ys = poisoned(&group, m * out);
                layer.forward(&group, &xr, &mut ys.iter_mut().collect::<Vec<_>>(), m, Reduce::AllReduce).unwrap();
                for (r, y) in ys.iter().enumerate() {
                    let err = relative_error(&host(&group, r, y), &reference).unwrap();
                    assert!(err < 1e-2, "{world} GPUs, m = {m}, bias {bias}, rank {r}'s all-reduced output: relative error {err:.2e}");
                }
                // ANCHOR: scatter
                // rank r's rows r * m / p.. of the sum: [m / p, out] each
                let rows = m / world;
                let mut parts = poisoned(&group, rows * out);
                let scattered = layer.forward(&group, &xr, &mut parts.iter_mut().collect::<Vec<_>>(), m, Reduce::ReduceScatter);
                // ANCHOR_END: scatter
                if m % world != 0 {
                    assert!(matches!(&scattered, Err(TpError::Args(e)) if e.contains("does not split evenly")), "{scattered:?}");
                    continue;
                }
                scattered.unwrap();
                for (r, y) in parts.iter().enumerate() {
                    let err = relative_error(&host(&group, r, y), &reference[r * rows * out..(r + 1) * rows * out]).unwrap();
                    assert!(err < 1e-2, "{world} GPUs, m = {m}, bias {bias}, rank {r}'s rows of the reduce-scatter: relative error {err:.2e}");
                }
                let mut short = poisoned(&group, rows * out - 1);
                let e = layer.forward(&group, &xr, &mut short.iter_mut().collect::<Vec<_>>(), m, Reduce::ReduceScatter);
                assert!(matches!(&e, Err(TpError::Args(e)) if e.contains("need")), "{e:?}");
            }
        }
    }
}

/// One process a rank: the test runs itself again, once a rank, each
/// process joining the group by `TpGroup::from_rank` with the id the test
/// made (handed over in the environment), on every GPU count the machine
/// allows. Each process's output of the MLP block (2 chunks) matches the
/// block on one GPU, and its rows of a row-parallel layer's reduce-scatter
/// match that layer's. A process that does not end within two minutes
/// fails the test (a rank that never joins would leave the others waiting).
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn one_process_a_rank_matches_the_block_on_one_gpu() {
    if let Ok(rank) = std::env::var("GEMM_TP_RANK") {
        return one_rank(rank.parse().unwrap());
    }
    let n = gpus();
    assert!(n >= 1, "this test needs a GPU");
    for world in 1..=n.min(4) {
        let id = GroupId::new().unwrap();
        let hex: String = id.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
        let mut ranks: Vec<std::process::Child> = (0..world)
            .map(|r| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "one_process_a_rank_matches_the_block_on_one_gpu", "--ignored", "--test-threads=1"])
                    .env("GEMM_TP_RANK", r.to_string())
                    .env("GEMM_TP_WORLD", world.to_string())
                    .env("GEMM_TP_ID", &hex)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let start = std::time::Instant::now();
        while ranks.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
            if start.elapsed() > std::time::Duration::from_secs(120) {
                ranks.iter_mut().for_each(|c| drop(c.kill()));
                panic!("{world} processes: not all ended within two minutes");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        for (r, c) in ranks.into_iter().enumerate() {
            let out = c.wait_with_output().unwrap();
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success() && text.contains("1 passed"), "rank {r} of {world} processes:\n{text}");
        }
    }
}

/// The process of rank `rank` (GPU `rank`) of [`one_process_a_rank_matches_the_block_on_one_gpu`].
fn one_rank(rank: usize) {
    let world: usize = std::env::var("GEMM_TP_WORLD").unwrap().parse().unwrap();
    let hex = std::env::var("GEMM_TP_ID").unwrap();
    let bytes: Vec<u8> = (0..128).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
    let id = GroupId::from_bytes(bytes.try_into().unwrap());
    let group = TpGroup::from_rank(rank, rank, world, &id).unwrap();
    assert_eq!((group.world(), group.local_ranks(), group.rank(0)), (world, 1, rank));
    let stream = group.stream(0).clone();
    // the MLP block, in 2 chunks
    let (shape, m) = (MlpShape { hidden: 512, ffn: 1536 }, 300);
    let w = weights(shape);
    let x = normal(m * shape.hidden, 7, 1.0);
    let reference = one_gpu(&stream, shape, &w, &x, m);
    let mlp = TpMlp::from_host(&group, shape, &w.w1, &w.b1, &w.w2, &w.b2).unwrap();
    let xd = stream.clone_htod(&x).unwrap();
    let mut out = stream.clone_htod(&vec![bf16::NAN; m * shape.hidden]).unwrap();
    mlp.forward(&group, &[&xd], &mut [&mut out], m, 2).unwrap();
    let err = relative_error(&host(&group, 0, &out), &reference).unwrap();
    assert!(err < 1e-2, "rank {rank} of {world}: the block's relative error {err:.2e}");
    // a row-parallel layer's reduce-scatter: this rank's rows of the sum
    let (k, n, m) = (1024, 384, 12 * world);
    let (wr, br, xr) = (normal(n * k, 31, 1.0 / (k as f32).sqrt()), normal(n, 32, 0.1), normal(m * k, 33, 1.0));
    let reference = one_gpu_layer(&stream, &wr, Some(&br), false, &xr, (m, n, k));
    let layer = RowParallel::from_host(&group, k, n, &wr, Some(&br)).unwrap();
    let kp = layer.in_per_rank();
    let mine: Vec<bf16> = (0..m).flat_map(|i| xr[i * k + rank * kp..i * k + (rank + 1) * kp].iter().copied()).collect();
    let xd = stream.clone_htod(&mine).unwrap();
    let rows = m / world;
    let mut part = stream.clone_htod(&vec![bf16::NAN; rows * n]).unwrap();
    layer.forward(&group, &[&xd], &mut [&mut part], m, Reduce::ReduceScatter).unwrap();
    let err = relative_error(&host(&group, 0, &part), &reference[rank * rows * n..(rank + 1) * rows * n]).unwrap();
    assert!(err < 1e-2, "rank {rank} of {world}: the reduce-scatter's relative error {err:.2e}");
}
