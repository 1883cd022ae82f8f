#!/usr/bin/env python3
# Each thread's copies of a tile along one line, from one source pointer at constant offsets: A's
# line 16 w + l % 8 + 8 (l / 16) (warp w, lane l), chunks (l / 8) % 2 + 2 r; B's line 8 w + l % 8,
# chunks l / 8 + 4 r. Eight lanes in a row copy one chunk of eight lines, so the XOR swizzle puts
# their stores in eight bank groups, and a warp's copy reads whole 32-byte sectors. The generated
# form steps a thread's copies 32 (A) or 8 (B) lines apart, a distance only known at run time,
# so each copy needs a 64-bit address of its own, computed again every tile. A hand edit of the
# generated `mma_autotuned` (128 x 256 x 64 tiles of 256 threads, row-major A and B), for
# `gemm-lab variants STEP SIZE source=FILE`:
#
#   gemm-lab cuda mma_autotuned | gemm-lab/probes/copy_lines.py ab > /tmp/copy_lines.cu   (b: B's alone)
#   gemm-lab variants mma_autotuned 4096 source=/tmp/copy_lines.cu
#
# Offline (`scripts/sass`, NVRTC 13.0, 2026-11-29, against 298 instructions a tile as generated,
# no spills): `b` 269 instructions a tile, no spills; `ab` 264, with 4 spill instructions a tile.
import sys

from mma_copies import edit

mode = sys.argv[1] if len(sys.argv) > 1 else "ab"
if mode not in ("ab", "b"):
    sys.exit("mode: ab (both operands along lines) or b (B's alone, A's as generated)")
src = sys.stdin.read()
setup = '''
        // (hand edit) copies along lines: this thread's line of each tile, its first chunk, its
        // offset from the tile's source and its rounds' places in a stage
        const int lane_c = threadIdx.x % 32, warp_c = threadIdx.x / 32;
        const int ca_line = 16 * warp_c + lane_c % 8 + 8 * (lane_c / 16), ca_chunk = (lane_c / 8) % 2;
        const unsigned ca_off = ca_line * lda + ca_chunk * 8;  // from a_src; + 16 r: round r
        // round r's place: chunk ca_chunk + 2 r swizzled by the line, which is this XOR on the
        // byte offset in the stage (the swizzle flips bits 4-6 of it)
        const unsigned ca_at0 = 2 * a_at(ca_line, ca_chunk * 8);  // bytes into the stage
        const int cb_line = 8 * warp_c + lane_c % 8, cb_chunk = lane_c / 8;
        const unsigned cb_off = cb_line * ldb + cb_chunk * 8;  // from b_src; + 32 r: round r
        // round r's place: the even or odd rounds' first, 128 bytes a pair of rounds further on
        const unsigned cb_dst0 = bs_addr + 2 * b_at(cb_line, cb_chunk * 8);
        const unsigned cb_dst1 = bs_addr + 2 * b_at(cb_line, (cb_chunk + 4) * 8);
'''


def copies(i, st):
    a_copies = (f"{i}    const unsigned short* const pa = a_src + ca_off;  // one address a tile, the rounds at offsets from it\n"
                f"{i}    #pragma unroll\n"
                f"{i}    for (int r = 0; r < 4; ++r) {{\n"
                f"{i}        cp_async_16(as_addr + (ca_at0 ^ (32u * r)) + {st} * 16384, pa + 16 * r);\n"
                f"{i}    }}\n") if mode == "ab" else (
                f"{i}    #pragma unroll\n"
                f"{i}    for (int r = 0; r < 4; ++r) {{\n"
                f"{i}        cp_async_16(a_dst[r] + {st} * 16384, a_src + a_off[r]);\n"
                f"{i}    }}\n")
    return (f"{i}{{\n"
            + a_copies +
            f"{i}    const unsigned short* const pb = b_src + cb_off;\n"
            f"{i}    #pragma unroll\n"
            f"{i}    for (int r = 0; r < 8; ++r) {{\n"
            f"{i}        cp_async_16((r % 2 ? cb_dst1 : cb_dst0) + 128 * (r / 2) + {st} * 32768, pb + 32 * r);\n"
            f"{i}    }}\n"
            f"{i}}}\n"
            f"{i}a_src += 64;\n"
            f"{i}b_src += 64 * ldb;\n")


sys.stdout.write(edit(src, setup, copies, f"along lines ({mode})"))
