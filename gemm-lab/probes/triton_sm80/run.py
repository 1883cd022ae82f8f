# Triton's tutorial matmul compiled for sm_80 (mma.sync, ldmatrix, cp.async: the PTX of
# GPUTarget("cuda", 80, 32)), loaded as PTX so that the driver compiles it for this GPU,
# beside cuBLAS (torch.matmul) in one process: what another compiler's sm_80 path reaches here.
import ctypes, json, os, statistics, sys
import torch

# usage: run.py PTX_DIR [SIZE...]  (PTX_DIR: what compile.py wrote)
here = sys.argv[1]
cuda = ctypes.CDLL("libcuda.so.1")
cuda.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
cuda.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
cuda.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
cuda.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_void_p]
cuda.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]

def ck(r, what):
    if r != 0:
        raise RuntimeError(f"{what}: CUresult {r}")

def timed(launch, reps=30, warm=10):
    for _ in range(warm):
        launch()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); launch(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)

torch.manual_seed(0)
for size in [int(x) for x in sys.argv[2:]] or [4096]:
    M = N = K = size
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    ref = (a.float() @ b.float())
    flop = 2.0 * M * N * K
    t_cublas = timed(lambda: torch.matmul(a, b))
    print(f"{size}^3: cuBLAS (torch.matmul) {flop / t_cublas / 1e9:.2f} TFLOP/s")
    rows = []
    for cfg in json.load(open(os.path.join(here, "configs.json"))):
        ptx = open(os.path.join(here, cfg["file"]), "rb").read() + b"\0"
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        ck(cuda.cuModuleLoadData(ctypes.byref(mod), ptx), "load")
        ck(cuda.cuModuleGetFunction(ctypes.byref(fn), mod, cfg["entry"].encode()), "function")
        ck(cuda.cuFuncSetAttribute(fn, 8, cfg["shared"]), "shared")  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        regs = ctypes.c_int()
        ck(cuda.cuFuncGetAttribute(ctypes.byref(regs), 4, fn), "regs")  # NUM_REGS
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        vals = [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()), ctypes.c_uint64(c.data_ptr()),
                ctypes.c_int32(M), ctypes.c_int32(N), ctypes.c_int32(K), ctypes.c_int32(K), ctypes.c_int32(N), ctypes.c_int32(N),
                ctypes.c_uint64(0), ctypes.c_uint64(0)]
        params = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
        grid = ((M + cfg["bm"] - 1) // cfg["bm"]) * ((N + cfg["bn"] - 1) // cfg["bn"])
        stream = torch.cuda.current_stream().cuda_stream
        launch = lambda: ck(cuda.cuLaunchKernel(fn, grid, 1, 1, cfg["warps"] * 32, 1, 1, cfg["shared"], stream, params, None), "launch")
        launch(); torch.cuda.synchronize()
        err = ((c.float() - ref).norm() / ref.norm()).item()
        t = timed(launch)
        rows.append((flop / t / 1e9, cfg["file"], regs.value, err))
    for tf, name, r, err in sorted(rows, reverse=True):
        print(f"  {name[:-4]:24} {tf:7.2f} TFLOP/s  {100 * t_cublas / (flop / tf / 1e9):5.1f}% of cuBLAS  {r} registers  rel. error {err:.1e}")
