#!/usr/bin/env python3
# A SIMT kernel's fragment loads from shared memory as `ld.volatile.shared.v4.f32`, which ptxas
# keeps where the source puts them: a hand edit of a generated source, for `gemm-lab variants
# STEP SIZE source=FILE`. Reads the CUDA on stdin, writes the edited CUDA on stdout.
#
#   gemm-lab cuda autotuned | gemm-lab/probes/volatile_lds.py > /tmp/autotuned_vlds.cu
#   scripts/sass /tmp/autotuned_vlds.cu          (no GPU: where the LDS land)
#   gemm-lab variants autotuned 4096 source=/tmp/autotuned_vlds.cu
#
# Found offline (NVRTC 13.0, 2026-11-29, `autotuned` at 7606ac3): the plain loads come out in
# runs of 6 (whole-tile loop) and 10 (guarded loop) LDS in a row; the volatile ones one at a
# time among the FFMAs, in both loops, with no spills.
import re
import sys

src = sys.stdin.read()
helper = '''// (hand edit) a 16-byte fragment load that ptxas keeps in place
__device__ __forceinline__ float4 lds128_volatile(const float* p) {
    float4 v;
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];\\n" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a));
    return v;
}

'''
at = src.find('extern "C" __global__ void')
if at < 0:
    sys.exit("no kernel in the source")
src = src[:at] + helper + src[at:]
src, count = re.subn(r"\*reinterpret_cast<const float4\*>\(&((?:a|b)_rd\[[^;]*\])\);", r"lds128_volatile(&\1);", src)
if count == 0:
    sys.exit("no fragment loads from a_rd or b_rd in the source")
sys.stderr.write(f"{count} fragment loads made volatile\n")
sys.stdout.write(src)
