#!/usr/bin/env python3
# Half the warps issue all of a tile's copies (twice as many each), the other half none: each
# scheduler holds one warp of each kind (warp w runs on scheduler w % 4), so one warp feeds the
# tensor pipe while the other's copy burst goes out. `half`: warps 0-3 copy every tile;
# `alternate`: warps 0-3 copy the even tiles, warps 4-7 the odd ones. A hand edit of the generated
# `mma_autotuned` (128 x 256 x 64 tiles, 256 threads), for `gemm-lab variants STEP SIZE source=FILE`.
#
#   gemm-lab cuda mma_autotuned | gemm-lab/probes/copy_warps.py half > /tmp/copy_warps.cu
#   gemm-lab variants mma_autotuned 4096 source=/tmp/copy_warps.cu
import sys

from mma_copies import edit

mode = sys.argv[1] if len(sys.argv) > 1 else "half"
if mode not in ("half", "alternate"):
    sys.exit("mode: half or alternate")
src = sys.stdin.read()
setup = '''
        // (hand edit) a copier thread t (of 128): A lines t / 8 + 16 r (r < 8) at chunk t % 8, B lines
        // t / 32 + 4 r (r < 16) at chunk t % 32; a line's swizzle repeats every 8 lines
        const int half = threadIdx.x / 128, t = threadIdx.x % 128;
        const unsigned ca_off = (t / 8) * lda + (t % 8) * 8;
        const unsigned ca_step = 16 * lda;
        const unsigned ca_dst = as_addr + 2 * a_at(t / 8, (t % 8) * 8);
        const unsigned cb_off = (t / 32) * ldb + (t % 32) * 8;
        const unsigned cb_step = 4 * ldb;
        const unsigned cb_dst0 = bs_addr + 2 * b_at(t / 32, (t % 32) * 8);
        const unsigned cb_dst1 = bs_addr + 2 * b_at(t / 32 + 4, (t % 32) * 8);
'''


def copies(i, st):
    tile = {"s": "s", "wr": "(kt + 2)"}[st]
    copier = "half == 0" if mode == "half" else f"half == {tile} % 2"
    return (f"{i}if ({copier}) {{\n"
            f"{i}    #pragma unroll\n"
            f"{i}    for (int r = 0; r < 8; ++r) {{\n"
            f"{i}        cp_async_16(ca_dst + r * 2048 + {st} * 16384, a_src + ca_off + r * ca_step);\n"
            f"{i}    }}\n"
            f"{i}    #pragma unroll\n"
            f"{i}    for (int r = 0; r < 16; ++r) {{\n"
            f"{i}        cp_async_16((r % 2 ? cb_dst1 + (r - 1) * 2048 : cb_dst0 + r * 2048) + {st} * 32768, b_src + cb_off + r * cb_step);\n"
            f"{i}    }}\n"
            f"{i}}}\n"
            f"{i}a_src += 64;\n"
            f"{i}b_src += 64 * ldb;\n")


sys.stdout.write(edit(src, setup, copies, f"given to half the warps ({mode})"))
