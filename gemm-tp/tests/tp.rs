//! The tensor-parallel MLP on 2 and more GPUs against the same block on one
//! (ignored: they need a machine with at least two GPUs and NCCL).

use gemm_runtime::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use gemm_runtime::internal::data::relative_error;
use gemm_runtime::{bf16, Dims};
use gemm_tp::kernels::{down_bias, up_gelu};
use gemm_tp::{MlpShape, TpError, TpGroup, TpMlp};
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
    let up = |v: &[bf16]| stream.clone_htod(v).unwrap();
    let (w1, b1, w2, b2, xd) = (up(&w.w1), up(&w.b1), up(&w.w2), up(&w.b2), up(x));
    let mut act = stream.alloc_zeros::<bf16>(m * f).unwrap();
    let mut out = stream.alloc_zeros::<bf16>(m * h).unwrap();
    up_gelu(stream, &xd, &w1, &mut act, &b1, Dims::new(m, f, h)).unwrap();
    down_bias(stream, &act, &w2, &mut out, &b2, Dims::new(m, h, f)).unwrap();
    stream.clone_dtoh(&out).unwrap().into_iter().map(|v| v.to_f32()).collect()
}

fn gpus() -> usize {
    CudaContext::device_count().map_or(0, |c| c as usize)
}

/// Every GPU count the machine allows, M not a multiple of the chunk, one
/// chunk and several: every rank's output matches the one-GPU block within
/// bf16's rounding (each rank's partial sum is rounded to bf16 before the
/// all-reduce adds them).
#[test]
#[ignore = "needs at least two CUDA GPUs and NCCL"]
fn the_tensor_parallel_mlp_matches_the_block_on_one_gpu() {
    let n = gpus();
    assert!(n >= 2, "this test needs two GPUs or more; the machine has {n}");
    let shape = MlpShape { hidden: 512, ffn: 1536 };
    let w = weights(shape);
    for m in [1000, 128, 1] {
        let x = normal(m * shape.hidden, 5 + m as u64, 1.0);
        let reference = one_gpu(&CudaContext::new(0).unwrap().default_stream(), shape, &w, &x, m);
        for world in 2..=n.min(4) {
            let group = TpGroup::new(&(0..world).collect::<Vec<_>>()).unwrap();
            let mlp = TpMlp::from_host(&group, shape, &w.w1, &w.b1, &w.w2, &w.b2).unwrap();
            for chunks in [1, 3] {
                let xs: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).clone_htod(&x).unwrap()).collect();
                let poison = vec![bf16::NAN; m * shape.hidden];
                let mut outs: Vec<CudaSlice<bf16>> = (0..world).map(|r| group.stream(r).clone_htod(&poison).unwrap()).collect();
                let xr: Vec<&CudaSlice<bf16>> = xs.iter().collect();
                let mut or: Vec<&mut CudaSlice<bf16>> = outs.iter_mut().collect();
                mlp.forward(&group, &xr, &mut or, m, chunks).unwrap();
                for (r, out) in outs.iter().enumerate() {
                    let got: Vec<f32> = group.stream(r).clone_dtoh(out).unwrap().into_iter().map(|v| v.to_f32()).collect();
                    let err = relative_error(&got, &reference).unwrap();
                    assert!(err < 1e-2, "{world} GPUs, m = {m}, {chunks} chunk(s), rank {r}: relative error {err:.2e}");
                }
            }
        }
    }
}

/// Misuse is an `Err`, before anything runs: a buffer on another rank's
/// GPU, too few inputs, a short output, a layer split for another group,
/// an ffn that does not split over the ranks, no tokens.
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
    let args = |e: Result<(), TpError>| match e {
        Err(TpError::Args(s)) => s,
        other => panic!("expected an argument error, got {other:?}"),
    };
    // rank 1 given rank 0's input
    assert!(args(mlp.forward(&group, &[&x0, &x0], &mut [&mut o0, &mut o1], m, 2)).contains("lies on GPU 0"));
    assert!(args(mlp.forward(&group, &[&x0], &mut [&mut o0, &mut o1], m, 2)).contains("one input and one output a rank"));
    let mut short = alloc(1, m * 256 - 1);
    assert!(args(mlp.forward(&group, &[&x0, &x1], &mut [&mut o0, &mut short], m, 2)).contains("holds 16383 values"));
    assert!(args(mlp.forward(&group, &[&x0, &x1], &mut [&mut o0, &mut o1], 0, 2)).contains("m = 0"));
    let one = TpGroup::new(&[0]).unwrap();
    assert!(args(mlp.forward(&one, &[&x0], &mut [&mut o0], m, 1)).contains("split over 2 ranks, the group has 1"));
    if gpus() >= 3 {
        let three = TpGroup::new(&[0, 1, 2]).unwrap();
        let odd = MlpShape { hidden: 256, ffn: 512 };
        assert!(matches!(TpMlp::from_host(&three, odd, &w.w1, &w.b1, &w.w2, &w.b2), Err(TpError::Args(_))));
    }
    assert!(matches!(TpGroup::new(&[0, 0]), Err(TpError::Args(_))));
}
