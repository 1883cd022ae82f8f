//! Buffers of a GPU other than the stream's: each launch, tuned launch,
//! quantization and copy given one is an `Err` that names it, before
//! anything runs (a kernel reading another GPU's memory faults, and the
//! fault ends the context), managed memory from the other GPU's context
//! included.

use gemm_runtime::cudarc::driver::{CudaContext, CudaSlice};
use gemm_runtime::{bf16, copy_lines, device, gemm_kernel, quantize, Bias, Dims, EpilogueArgs, GemmError, Mat, MatMut, RowMajor, F8E4M3};

#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 2, vector = 8),
    swizzle = xor,
    epilogue = vector(bias = n),
    edges = guarded,
)]
fn with_bias(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>, bias: Bias<f32>);

#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 2, vector = 8),
    swizzle = xor,
    edges = guarded,
    tune(stages = [2, 3]),
)]
fn tuned(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn wrong_device(r: Result<(), GemmError>, buffer: &str) {
    match r {
        Err(GemmError::WrongDevice { what, on: 1, here: 0 }) if what == buffer => {}
        other => panic!("{buffer} on GPU 1, the stream on GPU 0: {other:?}"),
    }
}

/// Every buffer of each entry point on GPU 1 in turn, the stream on GPU 0:
/// an `Err` naming it; then the same launches with every buffer on GPU 0
/// (the context unharmed) give the product, exact in f32 on small
/// integers. Managed memory from GPU 1's context is refused, and from GPU
/// 0's taken.
#[test]
#[ignore = "needs two CUDA GPUs"]
fn with_two_gpus_a_buffer_of_the_other_is_an_error() {
    assert!(CudaContext::device_count().unwrap() >= 2, "this test needs two GPUs or more");
    let (g0, g1) = (device::open(0).unwrap(), device::open(1).unwrap());
    let (s0, s1) = (&g0.stream, &g1.stream);
    let (m, n, k) = (100, 72, 64);
    let dims = Dims::new(m, n, k);
    let a: Vec<bf16> = (0..m * k).map(|i| bf16::from_f32((i % 13) as f32 - 6.0)).collect();
    let b: Vec<bf16> = (0..k * n).map(|i| bf16::from_f32((i % 11) as f32 - 5.0)).collect();
    let bias: Vec<f32> = (0..n).map(|j| j as f32 - 30.0).collect();
    let product = |bias: bool| -> Vec<f32> {
        (0..m * n)
            .map(|e| {
                let (i, j) = (e / n, e % n);
                let sum: f32 = (0..k).map(|p| a[i * k + p].to_f32() * b[p * n + j].to_f32()).sum();
                sum + if bias { j as f32 - 30.0 } else { 0.0 }
            })
            .collect()
    };
    let (a0, b0, x0) = (s0.clone_htod(&a).unwrap(), s0.clone_htod(&b).unwrap(), s0.clone_htod(&bias).unwrap());
    let (a1, b1, x1) = (s1.clone_htod(&a).unwrap(), s1.clone_htod(&b).unwrap(), s1.clone_htod(&bias).unwrap());
    let mut c0 = s0.alloc_zeros::<f32>(m * n).unwrap();
    let mut c1 = s1.alloc_zeros::<f32>(m * n).unwrap();

    let launch = |a: &CudaSlice<bf16>, b: &CudaSlice<bf16>, c: &mut CudaSlice<f32>, x: &CudaSlice<f32>| {
        with_bias::KERNEL.launch_with(s0, a, b, c, dims, EpilogueArgs::new().bias(x))
    };
    wrong_device(launch(&a1, &b0, &mut c0, &x0), "A");
    wrong_device(launch(&a0, &b1, &mut c0, &x0), "B");
    wrong_device(launch(&a0, &b0, &mut c1, &x0), "C");
    wrong_device(launch(&a0, &b0, &mut c0, &x1), "the bias");
    wrong_device(tuned::KERNEL.launch(s0, &a1, &b0, &mut c0, dims), "A");
    wrong_device(tuned(s0, &a0, &b0, &mut c1, dims), "C");
    let mut q0 = s0.alloc_zeros::<F8E4M3>(m * k).unwrap();
    let mut scale0 = s0.alloc_zeros::<f32>(1).unwrap();
    wrong_device(quantize::per_tensor(s0, &a1, m * k, &mut q0, &mut scale0), "the source");
    let mut copy1 = s1.alloc_zeros::<bf16>(m * k).unwrap();
    wrong_device(copy_lines(s0, &a0, k, &mut copy1, k, (m, k)), "the destination");

    launch(&a0, &b0, &mut c0, &x0).unwrap();
    assert_eq!(s0.clone_dtoh(&c0).unwrap(), product(true), "every buffer on GPU 0");
    tuned(s0, &a0, &b0, &mut c0, dims).unwrap();
    assert_eq!(s0.clone_dtoh(&c0).unwrap(), product(false), "the tuned kernel, every buffer on GPU 0");

    // managed memory: any GPU reaches it, but cudarc orders its uses by events of the context it
    // came from, which GPU 0's stream cannot record: taken from GPU 0's context, refused from GPU 1's
    // SAFETY: every element is written below before a kernel reads it
    let mut managed1 = unsafe { g1.ctx.alloc_unified::<bf16>(m * k, true) }.unwrap();
    managed1.as_mut_slice().unwrap().copy_from_slice(&a);
    wrong_device(with_bias::KERNEL.launch_with(s0, &managed1, &b0, &mut c0, dims, EpilogueArgs::new().bias(&x0)), "A");
    // SAFETY: as above
    let mut managed0 = unsafe { g0.ctx.alloc_unified::<bf16>(m * k, true) }.unwrap();
    managed0.as_mut_slice().unwrap().copy_from_slice(&a);
    with_bias::KERNEL.launch_with(s0, &managed0, &b0, &mut c0, dims, EpilogueArgs::new().bias(&x0)).unwrap();
    assert_eq!(s0.clone_dtoh(&c0).unwrap(), product(true), "A in managed memory from GPU 0's context");
}
