# DeepGEMM's fp8 GEMM (e4m3, A scaled per row and 128 of K, B per 128 x 128
# block, bf16 C) built by its own JIT for each shape, as its heuristics pick
# the kernel, and checked as its tests check it; each kernel's line appended
# to MANIFEST for `gemm-lab deepgemm MANIFEST`, which times it beside ours
# and cuBLASLt's in one process. On the GPU host (nvcc, PyTorch), with
# DeepGEMM unpacked from pack.sh's tarball (one process a shape builds them
# side by side):
#
#   python3 gemm-lab/probes/deepgemm/build.py DEEPGEMM_DIR MANIFEST MxNxK[:BMxBN:MC]...
#
# `:BMxBN:MC` forces DeepGEMM's block tile and multicast (1, or 2 on A)
# in place of its heuristics' (its stages still the most that fit), to
# tell what its tiles are worth apart from its loop. A manifest line: M N K
# KERNEL.so SMS SMEM_BYTES TILING (SMs, block m x n, stages, multicast).
import os
import sys

import torch

sys.path.insert(0, sys.argv[1])
os.environ.setdefault("DG_CACHE_DIR", "/tmp/deepgemm-cache")
import deep_gemm  # noqa: E402
from deep_gemm import calc_diff, ceil_div, get_col_major_tma_aligned_tensor  # noqa: E402
from deep_gemm.jit_kernels import gemm as dg_gemm  # noqa: E402
from deep_gemm.jit_kernels.gemm import get_best_configs  # noqa: E402
from deep_gemm.jit_kernels.tuner import jit_tuner  # noqa: E402


# DeepGEMM's tests' quantizers (tests/test_core.py at 327ec92)
def per_token_cast_to_fp8(x):
    m, n = x.shape
    v = x.view(m, -1, 128)
    amax = v.abs().float().amax(dim=2).view(m, -1).clamp(1e-4)
    return (v * (448.0 / amax.unsqueeze(2))).to(torch.float8_e4m3fn).view(m, n), (amax / 448.0).view(m, -1)


def per_block_cast_to_fp8(x):
    m, n = x.shape
    p = torch.zeros((ceil_div(m, 128) * 128, ceil_div(n, 128) * 128), dtype=x.dtype, device=x.device)
    p[:m, :n] = x
    v = p.view(-1, 128, p.size(1) // 128, 128)
    amax = v.abs().float().amax(dim=(1, 3), keepdim=True).clamp(1e-4)
    q = (v * (448.0 / amax)).to(torch.float8_e4m3fn)
    return q.view_as(p)[:m, :n].contiguous(), (amax / 448.0).view(v.size(0), v.size(2))


def forced(m, n, k, bm, bn, mc, a, sfa, b, sfb, out):
    """DeepGEMM's kernel at block tile bm x bn and multicast mc (on A), built
    and run as its `gemm_fp8_fp8_bf16_nt` builds and runs its own choice."""
    stages = next(s for s in (8, 7, 6, 5, 4, 3) if dg_gemm.get_smem_size(s, k, bm, bn) <= 232448)
    smem = dg_gemm.get_smem_size(stages, k, bm, bn)
    tiles = ceil_div(m, bm) * ceil_div(n, bn)
    sms = ceil_div(tiles, ceil_div(tiles, deep_gemm.get_num_sms()))
    sms = ceil_div(sms, mc) * mc
    args = (a, sfa, b, sfb, out, m, torch.cuda.current_stream(), sms, smem)
    runtime = jit_tuner.compile_and_tune(
        name="gemm_fp8_fp8_bf16_nt",
        keys={"N": n, "K": k, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_N_PADDING": dg_gemm.get_block_n_padding_for_smem_d(bn),
              "NUM_STAGES": stages, "NUM_TMA_MULTICAST": mc, "IS_TMA_MULTICAST_ON_A": True},
        space=(), includes=dg_gemm.includes,
        arg_defs=(("lhs", torch.float8_e4m3fn), ("lhs_scales", torch.float), ("rhs", torch.float8_e4m3fn), ("rhs_scales", torch.float),
                  ("out", torch.bfloat16), ("m", int), ("stream", torch.cuda.Stream), ("num_sms", int), ("smem_size", int)),
        template=dg_gemm.template, args=args)
    assert runtime(*args) == 0, f"{m}x{n}x{k} at {bm} x {bn}: the launch failed"
    return sms, bm, bn, stages, (mc, True), smem


def main():
    manifest = sys.argv[2]
    for arg in sys.argv[3:]:
        shape, *force = arg.split(":")
        m, n, k = map(int, shape.split("x"))
        x = torch.randn((m, k), device="cuda", dtype=torch.bfloat16)
        y = torch.randn((n, k), device="cuda", dtype=torch.bfloat16)
        (a, sfa), (b, sfb) = per_token_cast_to_fp8(x), per_block_cast_to_fp8(y)
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        sfa = get_col_major_tma_aligned_tensor(sfa)
        if force:
            (bm, bn), mc = map(int, force[0].split("x")), int(force[1])
            sms, bm, bn, stages, (mc, on_a), smem = forced(m, n, k, bm, bn, mc, a, sfa, b, sfb, out)
        else:
            deep_gemm.gemm_fp8_fp8_bf16_nt((a, sfa), (b, sfb), out)
            sms, bm, bn, stages, (mc, on_a), smem = get_best_configs(m, n, k, 1, deep_gemm.get_num_sms())
        diff = calc_diff(out, x @ y.t())
        assert diff < 0.001, f"{arg}: DeepGEMM's result differs from the product by {diff}"
        runtime = list(jit_tuner.tuned.values())[-1]
        cast = f"2 on {'A' if on_a else 'B'}" if mc > 1 else "none"
        cast += ", forced" if force else ""
        with open(manifest, "a") as f:
            f.write(f"{m} {n} {k} {runtime.path}/kernel.so {sms} {smem} {sms}, {bm} x {bn}, {stages}, {cast}\n")
        print(f"{shape}: {runtime.path} ({sms} SMs, {bm} x {bn}, {stages} stages, multicast {cast}; error {diff:.1e})")


if __name__ == "__main__":
    main()
