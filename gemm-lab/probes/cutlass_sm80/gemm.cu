// CUTLASS 2.x's sm_80 bf16 GEMM (cp.async, ldmatrix, mma.sync m16n8k16, f32
// accumulators, bf16 C) timed beside cuBLAS in one process: an anchor for
// what the sm_80 instructions give on the GPU it runs on (issue 58).
// One tiling a binary, chosen by -D at compile time (see run.sh):
//   TBM TBN TBK  block tile    WM WN  warp tile    STAGES  cp.async stages
//   SWZ  CUTLASS's raster band (GemmIdentityThreadblockSwizzle<SWZ>)
//   BCOL 1: B column-major (TN, CUTLASS's preferred), 0: row-major (NN, as
//        mma_autotuned takes it)
// Prints one line a size: TFLOP/s of both, the ratio, and the largest
// difference from cuBLAS relative to cuBLAS's largest |C|.
#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

using Element = cutlass::bfloat16_t;
using LayoutA = cutlass::layout::RowMajor;
#if BCOL
using LayoutB = cutlass::layout::ColumnMajor;
#else
using LayoutB = cutlass::layout::RowMajor;
#endif
using LayoutC = cutlass::layout::RowMajor;
using Epilogue = cutlass::epilogue::thread::LinearCombination<Element, 8, float, float>;
using Gemm = cutlass::gemm::device::Gemm<
    Element, LayoutA, Element, LayoutB, Element, LayoutC, float,
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<TBM, TBN, TBK>, cutlass::gemm::GemmShape<WM, WN, TBK>,
    cutlass::gemm::GemmShape<16, 8, 16>, Epilogue,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<SWZ>, STAGES>;

#define CHECK(x) do { auto e_ = (x); if (e_ != 0) { \
    fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, (int)e_); exit(1); } } while (0)

// normal values by Box-Muller on a hashed index, so an 8192^2 operand fills in microseconds
__global__ void fill_normal(__nv_bfloat16 *p, size_t n, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  auto hash = [](unsigned x) { x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16; return x; };
  unsigned h1 = hash((unsigned)i * 2 + seed * 0x9e3779b9U), h2 = hash((unsigned)i * 2 + 1 + seed * 0x9e3779b9U);
  float u1 = (h1 + 1.0f) / 4294967296.0f, u2 = h2 / 4294967296.0f;
  p[i] = __float2bfloat16(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
}

template <class F> float median_ms(F launch, int reps) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 5; i++) launch();
  std::vector<float> t;
  for (int r = 0; r < 7; r++) {
    cudaEventRecord(a);
    for (int i = 0; i < reps; i++) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms / reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  cublasHandle_t handle;
  CHECK(cublasCreate(&handle));
  for (int s = 1; s < argc; s++) {
    int n = atoi(argv[s]), M = n, N = n, K = n;
    size_t sa = (size_t)M * K, sb = (size_t)K * N, sc = (size_t)M * N;
    __nv_bfloat16 *A, *B, *C, *D;
    CHECK(cudaMalloc(&A, sa * 2)); CHECK(cudaMalloc(&B, sb * 2));
    CHECK(cudaMalloc(&C, sc * 2)); CHECK(cudaMalloc(&D, sc * 2));
    fill_normal<<<(sa + 255) / 256, 256>>>(A, sa, 1);
    fill_normal<<<(sb + 255) / 256, 256>>>(B, sb, 2);
    CHECK(cudaMemset(C, 0xff, sc * 2)); CHECK(cudaMemset(D, 0xff, sc * 2));  // poisoned: NaN
    int ldb = BCOL ? K : N;
    typename Gemm::Arguments args({M, N, K}, {(Element *)A, K}, {(Element *)B, ldb},
                                  {(Element *)D, N}, {(Element *)D, N}, {1.0f, 0.0f});
    Gemm gemm;
    CHECK((int)gemm.can_implement(args));
    CHECK((int)gemm.initialize(args, nullptr));
    float alpha = 1, beta = 0;
    // row-major C = A B is column-major C^T = B^T A^T
    auto cublas = [&] {
      cublasGemmEx(handle, BCOL ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16BF, ldb,
                   A, CUDA_R_16BF, K, &beta, C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    auto cutlass_run = [&] { gemm(); };
    cublas(); cutlass_run();
    CHECK(cudaDeviceSynchronize());
    std::vector<__nv_bfloat16> hc(sc), hd(sc);
    CHECK(cudaMemcpy(hc.data(), C, sc * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hd.data(), D, sc * 2, cudaMemcpyDeviceToHost));
    double big = 0, diff = 0;
    for (size_t i = 0; i < sc; i++) {
      double c = __bfloat162float(hc[i]), d = __bfloat162float(hd[i]);
      big = std::max(big, std::fabs(c));
      diff = std::isnan(d) ? INFINITY : std::max(diff, std::fabs(c - d));
    }
    int reps = n >= 8192 ? 20 : 50;
    // in turns, so that neither runs on a cooler GPU than the other
    float t_cutlass = 0, t_cublas = 0;
    for (int turn = 0; turn < 3; turn++) {
      t_cutlass += median_ms(cutlass_run, reps);
      t_cublas += median_ms(cublas, reps);
    }
    CHECK(cudaGetLastError());
    double flop = 2.0 * M * N * K;
    double tf_cutlass = flop / (t_cutlass / 3 * 1e-3) / 1e12, tf_cublas = flop / (t_cublas / 3 * 1e-3) / 1e12;
    printf("%s %dx%dx%d_w%dx%d_s%d_swz%d %d^3: cutlass %.1f TFLOP/s, cublas %.1f, %.1f%% of cublas, max diff %.2e of %.2e\n",
           BCOL ? "TN" : "NN", TBM, TBN, TBK, WM, WN, STAGES, SWZ, n, tf_cutlass, tf_cublas,
           100 * tf_cutlass / tf_cublas, diff, big);
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(D);
  }
  return 0;
}
