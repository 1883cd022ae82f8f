// Which mbarrier hand-offs of shared memory compute-sanitizer's racecheck and synccheck accept.
// One producer thread (warp 0, lane 0) fills a 2-slot ring, four ways (MODE); a consumer warp
// (warp 1) waits on a slot's full barrier, reads it, and its lane 0 releases it after __syncwarp.
// Every mode is correct by the PTX memory model and sums right.
//
//   nvcc -arch=sm_90a -o /tmp/handoff gemm-lab/probes/mbarrier_handoff.cu
//   compute-sanitizer --tool racecheck /tmp/handoff 0      (MODE 0 to 3; none: all, unchecked)
//
// Found on an H200 (driver 580.159.04, CUDA 13, 2026-11-29): racecheck reports a WAR hazard on
// both slots in all four modes (a consumer lane's read, then the producer's next write, which
// the warp's __syncwarp, its lane 0's release and the producer's wait on it order; with
// --racecheck-report hazard and a second argument, the slots' and barriers' addresses);
// synccheck stops MODE 1 ("Barrier error detected. Missing wait.") and passes the others.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(n) : "memory"); }
__device__ __forceinline__ void mbar_arrive(unsigned bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory"); }
__device__ __forceinline__ void mbar_expect_bytes(unsigned bar, unsigned b) { asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(b) : "memory"); }
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}" :: "r"(bar), "r"(parity) : "memory");
}
template <int MODE>
__global__ void ring(const float* src, float* out, int rounds) {
  __shared__ __align__(128) float buf[2][32];
  __shared__ __align__(8) unsigned long long bars[4];
  const unsigned full = (unsigned)__cvta_generic_to_shared(&bars[0]);
  const unsigned empty = full + 16;
  const unsigned b0 = (unsigned)__cvta_generic_to_shared(&buf[0][0]);
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; ++s) { mbar_init(full + 8 * s, MODE == 2 ? 2 : 1); mbar_init(empty + 8 * s, 1); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0 && rounds < 0) printf("slots at shared 0x%x, barriers at 0x%x\n", b0, full);
  if (threadIdx.x == 0) {
    for (int r = 0; r < rounds; ++r) {
      const int s = r % 2;
      mbar_wait(empty + 8 * s, ((r / 2) & 1) ^ 1);
      const unsigned dst = b0 + s * 128;
      const float* p = src + 4 * r;  // 16-byte aligned
      if (MODE == 0) {  // plain store, the arrive releases it
        asm volatile("st.shared.f32 [%0], %1;" :: "r"(dst), "f"(p[0]) : "memory");
        mbar_arrive(full + 8 * s);
      } else if (MODE == 1) {  // cp.async, its arrive-on tracked by the barrier (pending count incremented)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst), "l"(p) : "memory");
        asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" :: "r"(full + 8 * s) : "memory");
        mbar_arrive(full + 8 * s);
      } else if (MODE == 2) {  // cp.async, .noinc: the copies' arrival is one of the barrier's two
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst), "l"(p) : "memory");
        asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(full + 8 * s) : "memory");
        mbar_arrive(full + 8 * s);
      } else {  // a bulk copy (the async proxy, as TMA), completing bytes on the barrier
        mbar_expect_bytes(full + 8 * s, 16);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];"
                     :: "r"(dst), "l"(p), "r"(full + 8 * s) : "memory");
      }
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
  } else if (threadIdx.x >= 32) {
    float acc = 0.f;
    for (int r = 0; r < rounds; ++r) {
      const int s = r % 2;
      mbar_wait(full + 8 * s, (r / 2) & 1);
      acc += buf[s][0];
      __syncwarp();
      if (threadIdx.x == 32) mbar_arrive(empty + 8 * s);
    }
    if (threadIdx.x == 32) out[0] = acc;
  }
}
int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  const int rounds = 64;
  float h[4 * rounds], *src, *out, want = 0.f;
  for (int i = 0; i < 4 * rounds; ++i) h[i] = (float)(i / 4);
  for (int r = 0; r < rounds; ++r) want += (float)r;
  cudaMalloc(&src, sizeof h); cudaMalloc(&out, 4);
  cudaMemcpy(src, h, sizeof h, cudaMemcpyHostToDevice);
  const char* names[] = {"st.shared + arrive", "cp.async + cp.async.mbarrier.arrive", "cp.async + .noinc", "cp.async.bulk"};
  // (rounds < 0: each mode prints where its slots and barriers lie, and runs no round)
  if (argc > 2) {
    ring<0><<<1, 64>>>(src, out, -1);
    ring<3><<<1, 64>>>(src, out, -1);
    cudaDeviceSynchronize();
  }
  for (int mode = 0; mode < 4; ++mode) {
    if (only >= 0 && mode != only) continue;
    cudaMemset(out, 0, 4);
    if (mode == 0) ring<0><<<1, 64>>>(src, out, rounds);
    if (mode == 1) ring<1><<<1, 64>>>(src, out, rounds);
    if (mode == 2) ring<2><<<1, 64>>>(src, out, rounds);
    if (mode == 3) ring<3><<<1, 64>>>(src, out, rounds);
    float got = -1.f;
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost);
    printf("mode %d (%s): %s, sum %.0f (want %.0f)\n", mode, names[mode], cudaGetErrorString(e), got, want);
  }
}
