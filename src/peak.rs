//! The ceiling of `mma.sync` on this GPU: back-to-back m16n8k16 bf16 mmas
//! with f32 accumulators, operands already in registers, no memory traffic.
//! The tensor ladder reports each step as a share of it as well as of cuBLAS
//! (which on Hopper uses wgmma, an instruction sm_80 code cannot issue).

use gemm_runtime::cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg};
use gemm_runtime::internal::launch::{Order, Params};
use gemm_runtime::internal::timing::{time, time_back_to_back};
use gemm_runtime::GemmError;

use crate::measure::{soak, Bench, Soaked};
use crate::nvml::Nvml;

/// Independent accumulators per warp: enough mmas in flight to cover the
/// tensor pipe's latency.
const CHAINS: u32 = 8;
const THREADS: u32 = 256;
const ITERS: i32 = 4096;

/// The microbenchmark with `chains` independent accumulators a warp
/// (kernel `mma_peak_{chains}`).
pub fn source(chains: u32) -> String {
    bf16_source(chains)
}

/// [`source`] on e4m3 operands (Ada, consumer Blackwell): m16n8k32 mmas, kernel
/// `mma_peak_e4m3_{chains}`. The same registers hold bytes in place of
/// bf16 pairs (finite e4m3 values), so only the instruction and its K differ.
pub fn e4m3_source(chains: u32) -> String {
    bf16_source(chains)
        .replace("mma.sync m16n8k16 bf16 -> f32", "mma.sync m16n8k32 e4m3 -> f32")
        .replace("m16n8k16.row.col.f32.bf16.bf16.f32", "m16n8k32.row.col.f32.e4m3.e4m3.f32")
        .replace(&format!("mma_peak_{chains}("), &format!("mma_peak_e4m3_{chains}("))
}

fn bf16_source(chains: u32) -> String {
    format!(
        r#"// mma.sync m16n8k16 bf16 -> f32 throughput: {chains} independent chains a warp
__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}}
extern "C" __global__ void __launch_bounds__({THREADS}) mma_peak_{chains}(float* out, int iters) {{
    // bf16 pairs near 1 (0x3f80 is 1.0), varied by lane so nothing is constant-folded
    const unsigned x = 0x3f803f80u + (threadIdx.x & 7);
    unsigned a[4] = {{x, x ^ 1u, x ^ 2u, x ^ 3u}};
    const unsigned b0 = x ^ 4u, b1 = x ^ 5u;
    float d[{chains}][4] = {{}};
    for (int i = 0; i < iters; ++i) {{
        #pragma unroll
        for (int c = 0; c < {chains}; ++c) mma(d[c], a, b0, b1);
    }}
    float s = 0.0f;
    #pragma unroll
    for (int c = 0; c < {chains}; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps every mma alive
}}
"#
    )
}

/// TFLOP/s of back-to-back mma.sync on `bench`'s GPU: 4 blocks of 8 warps
/// per SM, 8 chains a warp, the median of 20 timed launches after 3 warm-up ones.
pub fn mma_sync_ceiling(bench: &Bench) -> Result<f64, GemmError> {
    mma_sync_ceiling_at(bench, 4, CHAINS)
}

/// The ceiling with `blocks_per_sm` blocks of 8 warps on each SM (2 warps
/// per scheduler for each block) and `chains` independent mmas a warp: the
/// ceiling at a kernel's own occupancy (`mma_autotuned`: 1 block, 32 mmas
/// between dependent ones).
pub fn mma_sync_ceiling_at(bench: &Bench, blocks_per_sm: u32, chains: u32) -> Result<f64, GemmError> {
    ceiling_mmas(bench, blocks_per_sm, chains)?.median()
}

/// [`mma_sync_ceiling_at`] run back to back for `secs` seconds: the rate
/// the GPU holds at the clock its power cap leaves the mmas (sampled by
/// `nvml`), to set beside a kernel's sustained rate.
pub fn mma_sync_ceiling_sustained(bench: &Bench, blocks_per_sm: u32, chains: u32, secs: f64, nvml: Option<&Nvml>) -> Result<Soaked, GemmError> {
    ceiling_mmas(bench, blocks_per_sm, chains)?.sustained(secs, nvml)
}

/// [`mma_sync_ceiling_at`] on e4m3 operands (`mma.sync.m16n8k32`): the
/// rate Ada's 8-bit kernels (`mma_fp8_sm89`) are measured against, on the
/// GPUs whose SMs have the instruction ([`native_e4m3_mma`]). (Elsewhere
/// ptxas emulates it with f16 mmas and computes the chains' shared
/// products once, which overstates the rate.)
pub fn mma_sync_e4m3_ceiling_at(bench: &Bench, blocks_per_sm: u32, chains: u32) -> Result<f64, GemmError> {
    let f = load(bench, &e4m3_source(chains), &format!("mma_peak_e4m3_{chains}"))?;
    let mut mmas = Mmas::new(bench, f, blocks_per_sm * sm_count(bench)?, 0, ITERS, chains)?;
    // (each mma twice the K of m16n8k16's)
    mmas.flops *= 2.0;
    mmas.median()
}

/// Whether the GPU of compute capability `cap` runs 8-bit mma.sync
/// natively: Ada (8.9) and consumer Blackwell (12.x); Hopper and
/// datacenter Blackwell convert the operands to f16 for f16 mmas.
pub fn native_e4m3_mma(cap: (i32, i32)) -> bool {
    cap == (8, 9) || cap.0 == 12
}

fn ceiling_mmas(bench: &Bench, blocks_per_sm: u32, chains: u32) -> Result<Mmas<'_>, GemmError> {
    let f = load(bench, &source(chains), &format!("mma_peak_{chains}"))?;
    Mmas::new(bench, f, blocks_per_sm * sm_count(bench)?, 0, ITERS, chains)
}

/// An mma kernel `f(out, iters)` on `blocks` blocks of [`THREADS`] threads
/// with `shared` bytes of dynamic shared memory, whose warps each run
/// `mmas_an_iter` m16n8k16 mmas an iteration and write one float a thread
/// to `out`.
struct Mmas<'a> {
    bench: &'a Bench,
    f: CudaFunction,
    out: CudaSlice<f32>,
    cfg: LaunchConfig,
    iters: i32,
    flops: f64,
}

impl<'a> Mmas<'a> {
    fn new(bench: &'a Bench, f: CudaFunction, blocks: u32, shared: u32, iters: i32, mmas_an_iter: u32) -> Result<Self, GemmError> {
        let out = bench.stream().alloc_zeros::<f32>((blocks * THREADS) as usize)?;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: shared };
        let flops = blocks as f64 * (THREADS / 32) as f64 * iters as f64 * mmas_an_iter as f64 * (2.0 * 16.0 * 8.0 * 16.0);
        Ok(Mmas { bench, f, out, cfg, iters, flops })
    }

    fn launch(&mut self) -> Result<(), GemmError> {
        let mut l = self.bench.stream().launch_builder(&self.f);
        l.arg(&mut self.out).arg(&self.iters);
        // SAFETY: the kernel writes one float per thread of the grid, which `out` holds, and
        // uses no more shared memory than it is launched with.
        unsafe { l.launch(self.cfg) }?;
        Ok(())
    }

    /// TFLOP/s: the median of 20 timed launches after 3 warm-up ones.
    fn median(&mut self) -> Result<f64, GemmError> {
        let t = time(self.bench.stream(), 3, 20, |_| self.launch())?;
        Ok(t.tflops(self.flops))
    }

    fn sustained(&mut self, secs: f64, nvml: Option<&Nvml>) -> Result<Soaked, GemmError> {
        let (stream, flops) = (self.bench.stream().clone(), self.flops);
        soak(&stream, nvml, secs, flops, || self.launch())
    }
}

/// The mma.sync loop of a 64 x 64 warp tile with its fragments from shared
/// memory, as `mma_autotuned` runs it but with no copies from global memory:
/// each K step of 16 loads the next step's fragments (four `ldmatrix.x4`
/// for A, four `.trans` for B, from tiles swizzled as the kernel's) while its
/// 32 mmas run; `barrier`: a block-wide barrier every four K steps, where
/// the kernel meets at each 64-wide K tile. One block of 8 warps an SM:
/// what two warps a scheduler reach with the loop's own loads between their
/// mmas, beside [`mma_sync_ceiling_at`]'s registers alone.
pub fn smem_loop_source(barrier: bool) -> String {
    let name = smem_loop_name(barrier);
    let meet = if barrier { "if (ks == 3) __syncthreads();  // the tile's barrier, as the kernel's" } else { "// (no barrier)" };
    format!(
        r#"// mma.sync m16n8k16 bf16 -> f32 from shared memory: a 64 x 64 warp tile, fragments a K step ahead
__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}}
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%0, %1, %2, %3}}, [%4];\n" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, unsigned addr) {{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{%0, %1, %2, %3}}, [%4];\n" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}}
// the tiles as `mma_autotuned` swizzles them: A 128 lines (m) of 64, B 64 lines (k) of 256
__device__ __forceinline__ int a_at(int line, int e) {{ return line * 64 + (((e >> 3) ^ (line & 7)) << 3) + (e & 7); }}
__device__ __forceinline__ int b_at(int line, int e) {{ return line * 256 + (((e >> 3) ^ (line & 7)) << 3) + (e & 7); }}
extern "C" __global__ void __launch_bounds__(256, 1) {name}(float* out, int iters) {{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    unsigned short* const tiles = reinterpret_cast<unsigned short*>(smem_raw);
    // bf16 near 1 (0x3f80 is 1.0): A's 8192 elements, then B's 16384
    for (int i = threadIdx.x; i < 8192 + 16384; i += blockDim.x) tiles[i] = (unsigned short)(0x3f80 + (i & 7));
    __syncthreads();
    const unsigned as_addr = (unsigned)__cvta_generic_to_shared(tiles), bs_addr = as_addr + 2 * 8192;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int a_line = (warp / 4) * 64 + lane % 16, a_elem = (lane / 16) * 8;
    const int b_line = (lane / 8 % 2) * 8 + lane % 8, b_elem = (warp % 4) * 64 + (lane / 16) * 8;
    float acc[4][8][4] = {{}};
    unsigned a_frag[2][4][4], b_frag[2][8][2];
    const auto load = [&](int set, int k) {{
        #pragma unroll
        for (int im = 0; im < 4; ++im) ldmatrix_x4(a_frag[set][im], as_addr + 2 * a_at(a_line + im * 16, a_elem + k));
        #pragma unroll
        for (int jp = 0; jp < 4; ++jp)
            ldmatrix_x4_trans(b_frag[set][2 * jp][0], b_frag[set][2 * jp][1], b_frag[set][2 * jp + 1][0], b_frag[set][2 * jp + 1][1], bs_addr + 2 * b_at(b_line + k, b_elem + jp * 16));
    }};
    load(0, 0);
    for (int it = 0; it < iters; ++it) {{
        #pragma unroll
        for (int ks = 0; ks < 4; ++ks) {{
            {meet}
            load((ks + 1) % 2, ((ks + 1) % 4) * 16);  // the next K step's fragments
            #pragma unroll
            for (int im = 0; im < 4; ++im) {{
                #pragma unroll
                for (int jn = 0; jn < 8; ++jn) mma(acc[im][jn], a_frag[ks % 2][im], b_frag[ks % 2][jn][0], b_frag[ks % 2][jn][1]);
            }}
        }}
    }}
    float s = 0.0f;
    #pragma unroll
    for (int im = 0; im < 4; ++im)
        #pragma unroll
        for (int jn = 0; jn < 8; ++jn) s += acc[im][jn][0] + acc[im][jn][1] + acc[im][jn][2] + acc[im][jn][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps every mma alive
}}
"#
    )
}

/// The kernel [`smem_loop_source`] names.
pub fn smem_loop_name(barrier: bool) -> &'static str {
    if barrier {
        "mma_smem_loop_barrier"
    } else {
        "mma_smem_loop"
    }
}

/// TFLOP/s of [`smem_loop_source`] on `bench`'s GPU, one block an SM, the
/// median of 20 timed launches after 3 warm-up ones.
pub fn mma_smem_loop(bench: &Bench, barrier: bool) -> Result<f64, GemmError> {
    smem_loop_mmas(bench, barrier)?.median()
}

/// [`mma_smem_loop`] run back to back for `secs` seconds (see
/// [`mma_sync_ceiling_sustained`]).
pub fn mma_smem_loop_sustained(bench: &Bench, barrier: bool, secs: f64, nvml: Option<&Nvml>) -> Result<Soaked, GemmError> {
    smem_loop_mmas(bench, barrier)?.sustained(secs, nvml)
}

fn smem_loop_mmas(bench: &Bench, barrier: bool) -> Result<Mmas<'_>, GemmError> {
    let f = load(bench, &smem_loop_source(barrier), smem_loop_name(barrier))?;
    // A's and B's tiles: 48 KiB of dynamic shared memory, within the default limit;
    // 4 K steps an iteration, 32 mmas a K step
    Mmas::new(bench, f, sm_count(bench)?, 2 * (8192 + 16384), ITERS / 8, 4 * 32)
}

/// `kernel` of `source`, compiled (and cached) for `bench`'s GPU as sm_80 code.
fn load(bench: &Bench, source: &str, kernel: &str) -> Result<CudaFunction, GemmError> {
    let ctx = bench.stream().context();
    let target = gemm_runtime::internal::compile::device_target(gemm_runtime::spec::Arch::Sm80, ctx.compute_capability()?);
    gemm_runtime::internal::compile::load(ctx, source, kernel, target, 0)
}

/// Fills words with hashed bits: the read kernels' data, random as a
/// weight's are (the kernels only XOR them).
pub const FILL_SOURCE: &str = r#"// every word of p a hash of its index and the seed
extern "C" __global__ void fill_bits(unsigned* p, long long n, unsigned seed) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 0x9e3779b1u ^ (unsigned)(i >> 32) ^ seed;
        x ^= x >> 16;
        x *= 0x7feb352du;
        x ^= x >> 15;
        x *= 0x846ca68bu;
        p[i] = x ^ (x >> 16);
    }
}
"#;

/// `copies` buffers of `bytes` (a multiple of 4) of random bits, each its
/// own, for the read kernels to take turns on: reads of zeroed memory would
/// not show what reading a weight costs. Made once for every timing of a
/// size ([`read_ceiling`], [`read_units`]).
pub fn random_buffers(bench: &Bench, bytes: usize, copies: usize) -> Result<Vec<CudaSlice<u8>>, GemmError> {
    let f = load(bench, FILL_SOURCE, "fill_bits")?;
    let words = (bytes / 4) as i64;
    let cfg = LaunchConfig { grid_dim: (4 * sm_count(bench)?, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    (0..copies as u32)
        .map(|seed| {
            let mut buffer = bench.stream().alloc_zeros::<u8>(bytes)?;
            let mut l = bench.stream().launch_builder(&f);
            l.arg(&mut buffer).arg(&words).arg(&seed);
            // SAFETY: the kernel writes `words` 4-byte words of a buffer of `bytes`.
            unsafe { l.launch(cfg) }?;
            Ok(buffer)
        })
        .collect()
}

/// The SMs of `bench`'s GPU.
pub fn sm_count(bench: &Bench) -> Result<u32, GemmError> {
    Ok(bench.facts.sms)
}

/// The bandwidth a device-to-device copy reaches, bytes read and written a
/// second (median of 20 copies of a buffer four times the L2): what the
/// memory gives in practice, beside the peak its clock and bus promise.
pub fn copy_bandwidth(bench: &Bench) -> Result<f64, GemmError> {
    let bytes = (4 * bench.facts.l2_bytes as usize).max(256 << 20);
    let stream = bench.stream();
    let src = stream.alloc_zeros::<u8>(bytes)?;
    let mut dst = stream.alloc_zeros::<u8>(bytes)?;
    let t = gemm_runtime::internal::timing::time(stream, 3, 20, |_| {
        stream.memcpy_dtod(&src, &mut dst)?;
        Ok(())
    })?;
    Ok(2.0 * bytes as f64 / (t.median_ms() * 1e-3))
}

/// The report's line on the memory: the device's peak and what a copy reaches.
pub fn memory_line(bench: &Bench) -> Result<String, GemmError> {
    let copy = copy_bandwidth(bench)?;
    Ok(format!(
        "{}; a device-to-device copy moves {:.2} TB/s ({:.0}% of that peak). % of HBM below is of the peak.",
        bench.facts.summary(),
        copy / 1e12,
        bench.facts.percent_of_memory(copy)
    ))
}

/// A read of a buffer and nothing else: 16-byte loads, `unroll` in flight
/// a thread; the loaded words XORed so that no load is dead.
pub fn read_source(unroll: u32) -> String {
    let loads: Vec<String> = (0..unroll).map(|u| format!("src[i + {u} * stride]")).collect();
    format!(
        r#"// reads n16 16-byte chunks of src: the memory side of a decode step, alone
extern "C" __global__ void read_peak_{unroll}(const uint4* __restrict__ src, long long n16, unsigned* out) {{
#if __CUDA_ARCH__ >= 900
    // launched dependent, it starts as the kernel before ends and waits for it, as a decode kernel does
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = 0;
    for (; i + {last} * stride < n16; i += {unroll} * stride) {{
        const uint4 v[{unroll}] = {{{loads}}};
        #pragma unroll
        for (int u = 0; u < {unroll}; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }}
    for (; i < n16; i += stride) {{
        const uint4 v = src[i];
        x ^= v.x ^ v.y ^ v.z ^ v.w;
    }}
    if (x == 0x9e3779b9u) out[0] = x;  // the loads' results reach a store the compiler cannot rule out
}}
"#,
        last = unroll - 1,
        loads = loads.join(", ")
    )
}

/// The shapes of the read kernel [`read_ceiling`] tries: (blocks an SM,
/// threads a block, loads in flight a thread).
pub const READ_SHAPES: [(u32, u32, u32); 4] = [(4, 512, 4), (2, 1024, 4), (8, 256, 8), (1, 1024, 8)];

/// Bytes a second of a kernel that only reads `buffers` (of one size, a
/// multiple of 16), timed as the decode kernels are: the median of 20
/// runs after 3 warm-up ones, each launch on the next buffer so that the
/// reads come from DRAM, not the L2; for each of a few shapes of the kernel
/// ([`READ_SHAPES`]), a launch between two events, then `batch` launches
/// back to back between two events ([`time_back_to_back`]), then `batch`
/// dependent launches back to back (each waiting for the one before, as
/// the Hopper decode kernels launched dependent do). The fastest shape is
/// what a decode step could reach at that size were its math free.
pub fn read_ceiling(bench: &Bench, buffers: &[CudaSlice<u8>], batch: usize) -> Result<Vec<(f64, f64, f64)>, GemmError> {
    let bytes = same_size(buffers, "read_peak", None)?;
    let sms = sm_count(bench)?;
    let n16 = (bytes / 16) as i64;
    let mut out = bench.stream().alloc_zeros::<u32>(1)?;
    let mut each = Vec::new();
    for (per_sm, threads, unroll) in READ_SHAPES {
        let f = load(bench, &read_source(unroll), &format!("read_peak_{unroll}"))?;
        let cfg = LaunchConfig { grid_dim: (per_sm * sms, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
        let mut launch_in = |i: usize, order: Order| {
            let (src, _read) = buffers[i % buffers.len()].device_ptr(bench.stream());
            let (dst, _written) = out.device_ptr_mut(bench.stream());
            let mut params = Params::default();
            params.arg(&src).arg(&n16).arg(&dst);
            // SAFETY: the kernel reads n16 16-byte chunks of a buffer of `bytes` and may write one word of `out`.
            unsafe { gemm_runtime::internal::launch::launch(&f, bench.stream(), cfg, &mut params, order) }?;
            Ok(())
        };
        let (one, many) = rates(bench, bytes, batch, &mut |i| launch_in(i, Order::After))?;
        let dependent = time_back_to_back(bench.stream(), 3, 20, batch, |i| launch_in(i, Order::Dependent))?;
        each.push((one, many, bytes as f64 / (dependent.median_ms() * 1e-3)));
    }
    Ok(each)
}

/// Bytes a second of `launch` reading `bytes`: a launch between two
/// events, then `batch` back to back (medians of 20 runs after 3 warm-up).
fn rates(bench: &Bench, bytes: usize, batch: usize, launch: &mut impl FnMut(usize) -> Result<(), GemmError>) -> Result<(f64, f64), GemmError> {
    let one = time(bench.stream(), 3, 20, &mut *launch)?;
    let many = time_back_to_back(bench.stream(), 3, 20, batch, launch)?;
    Ok((bytes as f64 / (one.median_ms() * 1e-3), bytes as f64 / (many.median_ms() * 1e-3)))
}

/// The size of `buffers`, all of one, a multiple of 16 bytes and (where
/// given) `want`; an `Err` naming `kernel` otherwise.
fn same_size(buffers: &[CudaSlice<u8>], kernel: &str, want: Option<usize>) -> Result<usize, GemmError> {
    let bytes = buffers.first().map_or(0, |b| b.len());
    let fits = bytes > 0 && bytes.is_multiple_of(16) && buffers.iter().all(|b| b.len() == bytes) && want.is_none_or(|w| w == bytes);
    if !fits {
        let sizes: Vec<usize> = buffers.iter().map(|b| b.len()).collect();
        let want = want.map_or(String::new(), |w| format!(" of {w} bytes"));
        let rule = format!("buffers of one size{want}, a multiple of 16 bytes, at least one: given {sizes:?}");
        return Err(GemmError::UnsupportedSize { kernel: kernel.to_string(), rule });
    }
    Ok(bytes)
}

/// The rows of a unit of [`read_units_source`] and the 16-byte chunks of
/// each row it reads: 64 rows of 512 bytes, the weight's part of one K step
/// of `decode_swapped`'s 64 x 16 x 256 tile.
pub const UNIT_ROWS: usize = 64;
pub const UNIT_CHUNKS: usize = 32;
/// Threads a block of the unit reader: 8 loads of 16 bytes each in flight,
/// 32 KB a block.
pub const UNIT_THREADS: u32 = 256;

/// A read of a row-major weight in units of [`UNIT_ROWS`] rows by
/// [`UNIT_CHUNKS`] 16-byte chunks, unit `u` the K step `u % steps` of row
/// tile `u / steps`, handed to blocks in runs of `run` units: run `q` to
/// block `q % grid`. Runs of a whole tile's steps are `decode_swapped`'s
/// order (a tile a block), runs of `units / grid` stream-K's (a share a
/// block), runs of 1 put a tile's K steps on neighbouring blocks at once.
/// A unit's chunks go in boxes of `box_chunks` chunks of every row: 32, each
/// row's 512 bytes by one warp's load; 8, the 128-byte boxes in which TMA
/// copies a tile under the 128-byte swizzle.
pub fn read_units_source(box_chunks: usize) -> String {
    let per = UNIT_ROWS * UNIT_CHUNKS / UNIT_THREADS as usize;
    format!(
        r#"// reads a weight of rows row16 16-byte chunks long, {UNIT_ROWS} rows x {UNIT_CHUNKS} chunks a unit, in runs of `run` units a block
// a unit's chunks go in boxes {box_chunks} chunks wide (all its rows, box after box)
extern "C" __global__ void __launch_bounds__({UNIT_THREADS}) read_units_{box_chunks}(const uint4* __restrict__ src, long long row16, int tiles, int steps, long long run, unsigned* out) {{
    const long long units = (long long)tiles * steps;
    unsigned x = 0;
    for (long long q = blockIdx.x; q * run < units; q += gridDim.x) {{
        const long long end = (q + 1) * run < units ? (q + 1) * run : units;
        for (long long u = q * run; u < end; ++u) {{
            const uint4* unit = src + (u / steps) * {UNIT_ROWS} * row16 + (u % steps) * {UNIT_CHUNKS};
            uint4 v[{per}];
            #pragma unroll
            for (int i = 0; i < {per}; ++i) {{
                const int c = threadIdx.x + i * {UNIT_THREADS};
                const int in_box = c % ({UNIT_ROWS} * {box_chunks});
                v[i] = unit[(in_box / {box_chunks}) * row16 + c / ({UNIT_ROWS} * {box_chunks}) * {box_chunks} + in_box % {box_chunks}];
            }}
            #pragma unroll
            for (int i = 0; i < {per}; ++i) x ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
        }}
    }}
    if (x == 0x9e3779b9u) out[0] = x;  // the loads' results reach a store the compiler cannot rule out
}}
"#
    )
}

/// Bytes a second of [`read_units_source`] over `buffers`, each a weight
/// of `rows` rows of `row_bytes` (`weight`, multiples of the unit's),
/// `blocks` blocks in runs of `run` units, timed as [`read_ceiling`] is: a
/// launch between two events, and `batch` launches back to back (the
/// second figure); each unit read in boxes of `box_chunks` 16-byte chunks
/// of every row, one after the other. Sizes that are not whole units,
/// boxes that do not divide a unit's row, or buffers of another size are
/// an `Err`.
pub fn read_units(
    bench: &Bench,
    buffers: &[CudaSlice<u8>],
    (rows, row_bytes): (usize, usize),
    blocks: u32,
    run: i64,
    box_chunks: usize,
    batch: usize,
) -> Result<(f64, f64), GemmError> {
    let kernel = format!("read_units_{box_chunks}");
    if !rows.is_multiple_of(UNIT_ROWS) || !row_bytes.is_multiple_of(16 * UNIT_CHUNKS) || box_chunks == 0 || !UNIT_CHUNKS.is_multiple_of(box_chunks) {
        let rule = format!("{rows} rows of {row_bytes} bytes in units of {UNIT_ROWS} x {} bytes, boxes of {box_chunks} chunks", 16 * UNIT_CHUNKS);
        return Err(GemmError::UnsupportedSize { kernel, rule });
    }
    let bytes = same_size(buffers, &kernel, Some(rows * row_bytes))?;
    let f = load(bench, &read_units_source(box_chunks), &kernel)?;
    let mut out = bench.stream().alloc_zeros::<u32>(1)?;
    let (row16, tiles, steps) = ((row_bytes / 16) as i64, (rows / UNIT_ROWS) as i32, (row_bytes / 16 / UNIT_CHUNKS) as i32);
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (UNIT_THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut launch = |i: usize| {
        let mut l = bench.stream().launch_builder(&f);
        l.arg(&buffers[i % buffers.len()]).arg(&row16).arg(&tiles).arg(&steps).arg(&run).arg(&mut out);
        // SAFETY: the kernel reads whole units of a buffer of rows x row_bytes and may write one word of `out`.
        unsafe { l.launch(cfg) }?;
        Ok(())
    };
    rates(bench, bytes, batch, &mut launch)
}

/// Stages a block of [`tma_ring_source`] keeps at most (its shared memory).
pub const RING_STAGES_MAX: u32 = 6;

/// A read of a row-major bf16 weight through a ring of `stages` stages in
/// shared memory filled by TMA, as the Hopper decode kernels fill theirs,
/// with nothing computed: units of [`UNIT_ROWS`] rows by 256 elements (a
/// K step of `decode_split`'s 64 x 8 x 256 tile), a block's units its
/// share of them all (stream-K's order), one thread issuing each unit's
/// copies once the four other warps have released the stage (each waits for
/// the unit to land, then releases it). `boxes` boxes a unit: 4, the 64 x
/// 64 boxes of the 128-byte swizzle in which the decode kernels copy a K
/// step (128 bytes of each row a box); 1, one box of 256 x 64 without a
/// swizzle (each row's 512 bytes in one), a layout wgmma cannot read from
/// shared memory: what the box's width alone is worth. Where `x_rows` (a
/// kernel argument) is over 0, each unit also copies one token's 256
/// elements in four boxes of 64 x `x_rows`, the rows past the first out of
/// bounds, as `decode_split` copies x at M = 1 (8 rows: its tile's N);
/// where `lag` is set the consumers release each unit only once the next
/// has landed, as the decode kernels' consumers release a stage once the
/// next stage's wgmmas are issued.
pub fn tma_ring_source(boxes: u32) -> String {
    let width = 256 / boxes;
    format!(
        r#"// reads a weight through a ring of stages filled by TMA, {boxes} box(es) of {width} x {UNIT_ROWS} a unit of {UNIT_ROWS} x 256
// (and, where x_rows > 0, a token's 256 elements in four boxes of 64 x x_rows, the rows past the first out of bounds, as decode_split's B)
struct __align__(64) TensorMap {{ unsigned long long opaque[16]; }};
extern "C" __global__ void __launch_bounds__(160, 1) tma_ring_{boxes}(const __grid_constant__ TensorMap map, const __grid_constant__ TensorMap x_map, int x_rows, int lag, int tiles, int steps, int stages) {{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned ring = ((unsigned)__cvta_generic_to_shared(smem_raw) + 1023) & ~1023u;
    const unsigned x_ring = ring + stages * 32768, x_bytes = 4u * 128u * x_rows;
    const unsigned full = x_ring + stages * 4096, empty = full + 8 * stages;
    if (threadIdx.x == 0) {{
        for (int s = 0; s < stages; ++s) {{
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(full + 8 * s));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 4;\n" :: "r"(empty + 8 * s));
        }}
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }}
    __syncthreads();
    const long long units = (long long)tiles * steps;
    const long long first = units * blockIdx.x / gridDim.x, last = units * (blockIdx.x + 1) / gridDim.x;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (long long u = first; u < last; ++u) {{
        const int i = (int)(u - first), s = i % stages;
        const unsigned round = (unsigned)(i / stages) & 1u;
        if (warp == 0) {{
            if (lane == 0) {{
                // the stage is free once the four other warps released it the round before
                if (i >= stages) asm volatile("{{\n.reg .pred p;\nw0:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra w0;\n}}\n" :: "r"(empty + 8 * s), "r"(round ^ 1u) : "memory");
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(full + 8 * s), "r"(32768u + x_bytes) : "memory");
                const int x = (int)(u % steps) * 256, y = (int)(u / steps) * {UNIT_ROWS};
                #pragma unroll
                for (int b = 0; b < {boxes}; ++b) {{
                    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {{%2, %3, %4}}], [%5];\n"
                        :: "r"(ring + s * 32768 + b * {box_bytes}), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x + b * {width}), "r"(y), "r"(0), "r"(full + 8 * s)
                        : "memory");
                }}
                for (int b = 0; x_rows > 0 && b < 4; ++b) {{
                    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {{%2, %3, %4}}], [%5];\n"
                        :: "r"(x_ring + s * 4096 + b * 1024), "l"(reinterpret_cast<unsigned long long>(&x_map)), "r"(x + b * 64), "r"(0), "r"(0), "r"(full + 8 * s)
                        : "memory");
                }}
            }}
        }} else {{
            asm volatile("{{\n.reg .pred p;\nw1:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra w1;\n}}\n" :: "r"(full + 8 * s), "r"(round) : "memory");
            // with a lag, the unit before is released once this one has landed (as a consumer whose
            // wgmmas on a stage finish after the next stage's are issued)
            const int done = lag ? i - 1 : i;
            if (lane == 0 && done >= 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(empty + 8 * (done % stages)) : "memory");
        }}
    }}
}}
"#,
        box_bytes = 32768 / boxes,
    )
}

/// Bytes a second of [`tma_ring_source`] over `buffers` (each a row-major
/// bf16 weight of `rows` x `cols`, whole units), one block an SM with
/// `stages` stages, `boxes` boxes a unit, x's boxes `x_rows` rows (0:
/// none) and the consumers' `lag` ([`tma_ring_source`]), timed as [`read_ceiling`] is (a launch
/// between two events, then `batch` back to back). Sizes that are not
/// whole units, a ring of more than [`RING_STAGES_MAX`] stages (or of one
/// with a lag, which would wait on itself), other than 1 or 4 boxes a unit
/// or x's boxes past 8 rows are an `Err`.
pub fn tma_ring(
    bench: &Bench,
    buffers: &[CudaSlice<u8>],
    (rows, cols): (usize, usize),
    (boxes, x_rows, lag): (u32, u32, bool),
    stages: u32,
    batch: usize,
) -> Result<(f64, f64), GemmError> {
    let kernel = format!("tma_ring_{boxes}");
    if !rows.is_multiple_of(UNIT_ROWS)
        || !cols.is_multiple_of(256)
        || ![1, 4].contains(&boxes)
        || !(1..=RING_STAGES_MAX).contains(&stages)
        || x_rows > 8
        || (lag && stages < 2)
    {
        let rule = format!(
            "{rows} x {cols} in units of {UNIT_ROWS} x 256, 1 or 4 boxes a unit, 1 to {RING_STAGES_MAX} stages (2 at least with a lag: a unit is released once the next has landed), x's boxes 8 rows at most"
        );
        return Err(GemmError::UnsupportedSize { kernel, rule });
    }
    let bytes = same_size(buffers, &kernel, Some(2 * rows * cols))?;
    let f = load(bench, &tma_ring_source(boxes), &kernel)?;
    let (swizzle, width) = if boxes == 4 { (128, 64) } else { (0, 256) };
    let maps = buffers
        .iter()
        .map(|b| {
            let (ptr, _read) = b.device_ptr(bench.stream());
            gemm_runtime::internal::tma::matrix_map(gemm_runtime::spec::Elem::Bf16, ptr, (rows, cols), [width, UNIT_ROWS as u32], swizzle)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // one token's x (bf16, random), read in boxes of x_rows rows: the rows past the first out of bounds
    let x = random_buffers(bench, 2 * cols, 1)?;
    let (x_ptr, _read) = x[0].device_ptr(bench.stream());
    let x_map = gemm_runtime::internal::tma::matrix_map(gemm_runtime::spec::Elem::Bf16, x_ptr, (1, cols), [64, x_rows.max(1)], 128)?;
    let (tiles, steps, stages_arg, x_rows, lag) = ((rows / UNIT_ROWS) as i32, (cols / 256) as i32, stages as i32, x_rows as i32, i32::from(lag));
    // the ring from a 1024-byte boundary, x's ring, then the barriers
    let smem = 1024 + stages * (32768 + 4096) + 16 * stages;
    f.set_attribute(gemm_runtime::cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)?;
    let cfg = LaunchConfig { grid_dim: (sm_count(bench)?, 1, 1), block_dim: (160, 1, 1), shared_mem_bytes: smem };
    let mut launch = |i: usize| {
        let mut l = bench.stream().launch_builder(&f);
        l.arg(&maps[i % maps.len()]).arg(&x_map).arg(&x_rows).arg(&lag).arg(&tiles).arg(&steps).arg(&stages_arg);
        // SAFETY: the map describes buffer i's whole units; the kernel copies them into its own shared memory only.
        unsafe { l.launch(cfg) }?;
        Ok(())
    };
    rates(bench, bytes, batch, &mut launch)
}

/// TMA by line class (`gemm-lab tma-lines`): `lines_load` streams 256 x
/// 64 bf16 tiles through a ring of stages, each tile in `classes` boxes of
/// `256 / classes` lines, class `c` from map `c` with its boxes moved
/// right by `shift[c]` elements; `lines_store` stores one 256 x 64 tile of
/// shared memory (row `r` of a panel, column `j`: `r * 64 + j`, its rows
/// grouped by class) to C the same way. The maps and shifts come in one
/// `Maps` parameter of 16 of each.
pub const TMA_LINES_SOURCE: &str = r#"
struct __align__(64) TensorMap { unsigned long long opaque[16]; };
struct Maps { TensorMap m[16]; int shift[16]; };

__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
    asm volatile("{\n.reg .pred p;\nw:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra w;\n}\n" :: "r"(bar), "r"(parity) : "memory");
}

// a ring of `stages` 256 x 64 tiles, tile u the K step u % steps of row panel (u / steps) % panels
extern "C" __global__ void __launch_bounds__(160, 1) lines_load(const __grid_constant__ Maps maps, int classes, int panels, int steps, long long units, int stages) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned ring = ((unsigned)__cvta_generic_to_shared(smem_raw) + 1023) & ~1023u;
    const unsigned full = ring + stages * 32768, empty = full + 8 * stages;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(full + 8 * s));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 4;\n" :: "r"(empty + 8 * s));
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    const long long first = units * blockIdx.x / gridDim.x, last = units * (blockIdx.x + 1) / gridDim.x;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, lines = 256 / classes;
    for (long long u = first; u < last; ++u) {
        const int i = (int)(u - first), s = i % stages;
        const unsigned round = (unsigned)(i / stages) & 1u;
        if (warp == 0) {
            if (lane == 0) {
                if (i >= stages) wait_parity(empty + 8 * s, round ^ 1u);
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(full + 8 * s), "r"(32768) : "memory");
                const int k0 = (int)(u % steps) * 64, panel = (int)((u / steps) % panels);
                for (int c = 0; c < classes; ++c) {
                    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
                        :: "r"(ring + s * 32768 + c * lines * 128), "l"(reinterpret_cast<unsigned long long>(&maps.m[c])), "r"(k0 + maps.shift[c]), "r"(panel * lines), "r"(0), "r"(full + 8 * s)
                        : "memory");
                }
            }
        } else {
            wait_parity(full + 8 * s, round);
            if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(empty + 8 * s) : "memory");
        }
    }
}

// 256 x 64 tiles of C from one tile of shared memory (row r of the panel, column j: r * 64 + j),
// tile u the column chunk u % chunks of row panel (u / chunks) % panels
extern "C" __global__ void __launch_bounds__(128, 1) lines_store(const __grid_constant__ Maps maps, int classes, int panels, int chunks, long long units, int swizzled) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned tile = ((unsigned)__cvta_generic_to_shared(smem_raw) + 1023) & ~1023u;
    unsigned short* const t = reinterpret_cast<unsigned short*>(smem_raw + (tile - (unsigned)__cvta_generic_to_shared(smem_raw)));
    const int lines = 256 / classes;
    for (int e = threadIdx.x; e < 256 * 64; e += blockDim.x) {
        const int s = e / 64, j = e % 64;            // row s of the tile: line s % lines of class s / lines
        const int r = (s % lines) * classes + s / lines;  // the panel's row
        t[s * 64 + ((swizzled ? (j / 8) ^ (s % 8) : j / 8) * 8) + j % 8] = (unsigned short)(r * 64 + j);  // the 128-byte swizzle, or none
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (threadIdx.x != 0) return;
    const long long first = units * blockIdx.x / gridDim.x, last = units * (blockIdx.x + 1) / gridDim.x;
    for (long long u = first; u < last; ++u) {
        const int c0 = (int)(u % chunks) * 64, panel = (int)((u / chunks) % panels);
        for (int c = 0; c < classes; ++c) {
            asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                :: "l"(reinterpret_cast<unsigned long long>(&maps.m[c])), "r"(tile + c * lines * 128), "r"(c0 + maps.shift[c]), "r"(panel * lines), "r"(0)
                : "memory");
        }
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
    }
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
"#;
