#!/usr/bin/env python3
"""Takes work out of a generated mma.sync kernel to time what is left (a bisection of the
sm_80 path's time; the results are wrong, and `gemm-lab variants` times them all the same):

    gemm-lab cuda mma_autotuned | gemm-lab/probes/no_mma.py copies+ldmatrix > k.cu
    gemm-lab cuda mma_autotuned | gemm-lab/probes/no_mma.py copies > k.cu

copies+ldmatrix: every mma.sync replaced by one integer instruction (the copies, fragment loads
and barriers stay);
copies: the fragment loads gone too (the copies, barriers and integer instructions stay)."""
import re
import sys

what = sys.argv[1] if len(sys.argv) > 1 else ""
if what not in ("copies+ldmatrix", "copies"):
    sys.exit(__doc__)
src = sys.stdin.read()


def empty_body(src, name, body):
    """the inline function `name`'s asm statement replaced by `body`"""
    pattern = re.compile(r"(void " + re.escape(name) + r"\(.*?\) \{\n)\s*asm volatile\(.*?\);\n(\})", re.S)
    src, n = pattern.subn(lambda m: m.group(1) + body + m.group(2), src)
    if n != 1:
        sys.exit(f"no {name} in the source")
    return src


# one LOP3 in each mma's place, which reads a fragment register of each operand so that the
# fragment loads stay (ptxas drops an ldmatrix whose registers nothing reads)
src = empty_body(src, "mma_m16n8k16", "    d[0] = __int_as_float(__float_as_int(d[0]) ^ a[0] ^ b0);\n")
if what == "copies":
    for name in ("ldmatrix_x4", "ldmatrix_x4_trans"):
        src = empty_body(src, name, "    r0 = r1 = r2 = r3 = addr;\n")
sys.stdout.write(src)
