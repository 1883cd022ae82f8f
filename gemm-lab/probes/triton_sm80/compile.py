# Triton's tutorial matmul (bf16, row-major A, B and C) compiled for sm_80 at several tilings,
# its PTX (mma.sync, ldmatrix, cp.async) written to OUT_DIR with configs.json for run.py: what
# another compiler's sm_80 path reaches on the GPU that runs ours. Needs `pip install triton`,
# no GPU:
#
#   python3 gemm-lab/probes/triton_sm80/compile.py OUT_DIR
#   python3 gemm-lab/probes/triton_sm80/run.py OUT_DIR 4096 8192   (on the GPU host; PyTorch for cuBLAS)
import json
import os
import sys
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # the tutorial's matmul (03-matrix-multiplication): grouped raster, row-major A, B, C
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    gid = pid // group
    first_m = gid * GROUP_M
    gm = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % gm
    pid_n = (pid % group) // gm
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.bfloat16)
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :], c)

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)
configs = []
for bm, bn, bk, warps, stages in [(128,256,64,8,3),(256,128,64,8,3),(128,128,64,4,4),(128,256,32,8,4),(128,128,32,4,4),(256,128,32,8,4),(128,256,64,8,4),(64,256,64,4,4)]:
    src = ASTSource(fn=matmul, signature={"a_ptr":"*bf16","b_ptr":"*bf16","c_ptr":"*bf16","M":"i32","N":"i32","K":"i32","stride_am":"i32","stride_bk":"i32","stride_cm":"i32","BLOCK_M":"constexpr","BLOCK_N":"constexpr","BLOCK_K":"constexpr","GROUP_M":"constexpr"},
                    constexprs={"BLOCK_M":bm,"BLOCK_N":bn,"BLOCK_K":bk,"GROUP_M":8}, attrs={(i,): [["tt.divisibility", 16]] for i in range(9)})  # pointers and sizes multiples of 16, as a launch specializes them
    k = triton.compile(src, target=GPUTarget("cuda", 80, 32), options={"num_warps":warps,"num_stages":stages})
    name = f"mm_{bm}x{bn}x{bk}_w{warps}_s{stages}"
    open(os.path.join(out, f"{name}.ptx"), "w").write(k.asm["ptx"])
    md = k.metadata
    configs.append({"file": f"{name}.ptx", "entry": md.name, "bm": bm, "bn": bn, "warps": warps, "shared": md.shared})
    print(name, "shared memory", md.shared)
json.dump(configs, open(os.path.join(out, "configs.json"), "w"), indent=1)
