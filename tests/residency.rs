//! Schedules that finish whatever the residency. A stream-K GEMM whose
//! blocks wait on each other (on the sm_80 path, and on Hopper under
//! stream-K and the hybrid) runs beside kernels that hold every SM but
//! one, and that SM's room for all but one of its blocks: its blocks then
//! run one at a time, in the order they start, and the GEMM must still
//! finish, with the same bits as on an idle GPU. (Shares handed out by
//! block index would wait forever here: the owner of the first tile, block
//! 0, waits on block 1, which cannot start until block 0 leaves.) A
//! persistent walk on a queue of tiles must finish there too, its first
//! block taking every tile.
//!
//! Its own test binary, so its own process: nothing else runs on the GPU
//! while the hogs hold it.

use std::time::{Duration, Instant};

use gemm_runtime::cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use gemm_runtime::cudarc::driver::{CudaContext, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use gemm_runtime::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use gemm_runtime::{bf16, Dims, Kernel};

/// One thread of each block says it has started, then spins until the host
/// writes `release`; the block's dynamic shared memory, unused, keeps other
/// blocks off its SM.
const HOG: &str = r#"
extern "C" __global__ void hog(const volatile unsigned* release, unsigned* started) {
    if (threadIdx.x == 0) {
        atomicAdd(started, 1u);
        while (*release == 0) __nanosleep(20000);
    }
}

// a block as large as one of the GEMM's, which does nothing: the room is there
extern "C" __global__ void probe() {}
"#;

/// How long the GEMM may take beside the hogs: its blocks run one after
/// another, a few milliseconds in all; a hang runs into the limit.
const LIMIT: Duration = Duration::from_secs(20);

#[test]
#[ignore = "needs a CUDA GPU"]
fn stream_k_hybrid_and_queued_gemms_finish_when_the_gpu_holds_one_of_their_blocks_at_a_time() {
    let ctx = CudaContext::new(0).expect("a CUDA GPU");
    // the streams below must not wait on each other behind the test's back
    // SAFETY: no buffer here is used on two streams without the test's own ordering.
    unsafe { ctx.disable_event_tracking() };
    // stream-K on the sm_80 path: one tile, its K steps shared by every block
    let mut cases: Vec<(&Kernel, Dims)> = vec![(&gemm_ladder::steps::mma_skinny_stream_k::KERNEL, Dims::new(128, 128, 16384))];
    // on Hopper, `tma_store` under stream-K (four tiles shared by every block)
    // and under the hybrid and the tail split (288 tiles: whole waves, then the rest shared)
    let major = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).unwrap();
    let minor = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).unwrap();
    let hopper: Vec<(Kernel, Dims)> = if (major, minor) == (9, 0) {
        use gemm_runtime::spec::{KernelSpec, Persistent};
        let tma_store = &gemm_ladder::steps::tma_store::KERNEL.spec;
        let under = |p| Kernel::from_spec(KernelSpec { persistent: Some(p), ..tma_store.clone() }).unwrap();
        let waves = Dims::new(2048, 4608, 512);
        // and on a queue: the first block to run takes every tile, the others none
        vec![
            (under(Persistent::StreamK), Dims::new(256, 512, 8192)),
            (under(Persistent::Hybrid), waves),
            (under(Persistent::TailSplit), waves),
            (under(Persistent::Queue), waves),
        ]
    } else {
        Vec::new()
    };
    cases.extend(hopper.iter().map(|(k, d)| (k, *d)));
    // one after another: each holds the GPU with its hogs alone
    for (kernel, dims) in cases {
        finishes_beside_hogs(&ctx, kernel, dims);
    }
}

/// Launches `kernel` at `dims` on an idle GPU, then beside hogs that leave
/// room for one of its blocks at a time: it must finish within [`LIMIT`]
/// with the same bits.
fn finishes_beside_hogs(ctx: &std::sync::Arc<CudaContext>, kernel: &Kernel, dims: Dims) {
    let (gemm, control) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let upload = |len: usize, seed: u64| -> CudaSlice<bf16> {
        let host: Vec<bf16> = gemm_ladder::measure::random_normal(len, seed).into_iter().map(bf16::from_f32).collect();
        control.clone_htod(&host).unwrap()
    };
    let a = upload(dims.m * dims.k, 1);
    let b = upload(dims.k * dims.n, 2);
    let mut idle_c = upload(dims.m * dims.n, 3);
    let mut held_c = upload(dims.m * dims.n, 4);
    control.synchronize().unwrap();

    // the reference: the same launch on an idle GPU
    kernel.launch(&gemm, &a, &b, &mut idle_c, dims).unwrap();
    gemm.synchronize().unwrap();

    // the hogs: one block on every SM but one, with all its shared memory, then
    // one on the last SM that leaves room for a single block of the GEMM
    let attr = |a: CUdevice_attribute| ctx.attribute(a).unwrap() as u32;
    let sms = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    let per_sm = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    let per_block = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    let reserved = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
    let gemm_block = kernel.smem_bytes + reserved;
    // the last SM's room for one GEMM block and not two: a hog there, unless one block is all it holds
    let beside = (per_sm - reserved).checked_sub(gemm_block * 3 / 2);
    assert!(beside.is_none_or(|b| b <= per_block), "room for one GEMM block: {beside:?} bytes for the last hog");
    let opts = CompileOptions { arch: Some("sm_80"), ..Default::default() };
    let module = ctx.load_module(compile_ptx_with_opts(HOG, opts).unwrap()).unwrap();
    let hog = module.load_function("hog").unwrap();
    hog.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, per_block as i32).unwrap();
    // all of the SM's memory as shared memory, or the last SM's L1 takes the GEMM's room
    hog.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100).unwrap();
    let probe = module.load_function("probe").unwrap();
    probe.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kernel.smem_bytes as i32).unwrap();
    let mut flags = control.alloc_zeros::<u32>(2).unwrap();
    control.synchronize().unwrap();
    let started = flags.slice(1..2);
    let wait_started = |count: u32| {
        let since = Instant::now();
        loop {
            let seen = control.clone_dtoh(&started).unwrap();
            control.synchronize().unwrap();
            if seen[0] >= count {
                return;
            }
            assert!(since.elapsed() < LIMIT, "only {} of {count} hog blocks started", seen[0]);
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let streams: Vec<std::sync::Arc<CudaStream>> = (0..2).map(|_| ctx.new_stream().unwrap()).collect();
    let mut hogs = vec![(&streams[0], sms - 1, per_block, sms - 1)];
    if let Some(beside) = beside {
        hogs.push((&streams[1], 1, beside, sms));
    }
    for (stream, blocks, bytes, total) in hogs {
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: bytes };
        // SAFETY: hog(const unsigned*, unsigned*), both one word of `flags`.
        let release = flags.slice(0..1);
        unsafe { stream.launch_builder(&hog).arg(&release).arg(&started).launch(cfg) }.unwrap();
        wait_started(total);
    }

    let finishes = |stream: &CudaStream| {
        let done = stream.record_event(None).unwrap();
        let since = Instant::now();
        while !done.is_complete() && since.elapsed() < LIMIT {
            std::thread::sleep(Duration::from_millis(1));
        }
        (done.is_complete(), since.elapsed())
    };
    // the setup: one block of the GEMM's size can run beside the hogs
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (kernel.threads, 1, 1), shared_mem_bytes: kernel.smem_bytes };
    // SAFETY: probe() takes nothing and touches nothing.
    unsafe { gemm.launch_builder(&probe).launch(cfg) }.unwrap();
    let (room, _) = finishes(&gemm);
    let (finished, took) = if room {
        kernel.launch(&gemm, &a, &b, &mut held_c, dims).unwrap();
        finishes(&gemm)
    } else {
        (false, Duration::ZERO)
    };
    // let the hogs go, whatever happened, so that the process can end
    control.memcpy_htod(&[1u32], &mut flags.slice_mut(0..1)).unwrap();
    ctx.synchronize().unwrap();
    assert!(room, "the hogs left no room for a block of the GEMM's size: the test's setup, not the schedule, is wrong");
    assert!(finished, "{} did not finish within {LIMIT:?} beside the hogs", kernel.name);
    let (idle, held) = (control.clone_dtoh(&idle_c).unwrap(), control.clone_dtoh(&held_c).unwrap());
    let bits = |v: &[bf16]| v.iter().map(|x| x.to_bits()).collect::<Vec<u16>>();
    assert!(bits(&idle) == bits(&held), "{}: the held GPU's C differs from the idle one's", kernel.name);
    eprintln!("{} at {dims:?} beside the hogs: {took:?}", kernel.name);
}
