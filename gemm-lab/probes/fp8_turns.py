#!/usr/bin/env python3
# The ring walked in whole turns a tile: every tile starts at stage 0, so the consumers' loop,
# unrolled a turn, addresses each stage (its barriers, scales and descriptors) by constants; a
# tile whose K blocks end mid-turn has the producer arrive on the rest of the turn's full
# barriers without loading, and the consumers wait for those arrivals and release the stages
# (both keep every barrier at one phase a turn). A hand edit of the generated block-scaled fp8
# kernel by atom rows (`cuda fp8_block_scaled 'stages=3,tile=256x128,warp_tile=128x128'`), for
# `gemm-lab variants STEP SIZE ..,source=FILE`. `peeled`: whole turns without checks, the last turn apart.
import re
import sys

src = sys.stdin.read()
stages = int(re.search(r"for \(int s = 0; s < (\d+); \+\+s\) \{\n\s*mbar_init", src).group(1))

# the producer: whole turns, past the last K block an arrival with nothing
old = "for (int kt = 0; kt < k_tiles; ++kt, ++it) {\n                    const int stage = it % S;\n                    mbar_wait(empty + 8 * stage, ((it / S) & 1) ^ 1);  // every consumer has released it\n".replace("S", str(stages))
if old not in src:
    sys.exit("no producer loop")
new = (f"for (int kt = 0; kt < (k_tiles + {stages - 1}) / {stages} * {stages}; ++kt, ++it) {{\n"
       f"                    const int stage = it % {stages};\n"
       f"                    mbar_wait(empty + 8 * stage, ((it / {stages}) & 1) ^ 1);  // every consumer has released it\n"
       f"                    if (kt >= k_tiles) {{  // (hand edit) the rest of the tile's last turn: nothing to load\n"
       f"                        mbar_arrive(full + 8 * stage);\n"
       f"                        continue;\n"
       f"                    }}\n")
src = src.replace(old, new, 1)

# the consumers: a turn at a time, each stage a constant
head = re.compile(r"( *)#pragma unroll \d+\n *for \(int kt = 0; kt < k_tiles; kt \+= 1, it \+= 1\) \{\n *const int s0 = it % \d+;\n")
m = head.search(src)
if not m:
    sys.exit("no consumer loop")
ind = m.group(1)
start = m.end()
# the loop's body ends at the first line back at the loop's indentation
end = src.index("\n" + ind + "}\n", start)
body = src[start:end + 1]
body = body.replace(f"(it / {stages}) & 1", "phase")
body = re.sub(r"^", "    ", body, flags=re.M).rstrip(" ")
peel = len(sys.argv) > 1 and sys.argv[1] == "peeled"
whole = (f"{ind}    if (kb + {stages} <= k_tiles) {{  // (hand edit) a whole turn: no checks\n"
         f"{ind}    #pragma unroll\n"
         f"{ind}    for (int s0 = 0; s0 < {stages}; ++s0) {{\n"
         f"{ind}    const int kt = kb + s0;\n"
         + body +
         f"{ind}    }}\n"
         f"{ind}    }} else\n") if peel else ""
turn = (f"{ind}for (int kb = 0; kb < k_tiles; kb += {stages}, it += {stages}) {{\n"
        f"{ind}    // (hand edit) a turn of the ring: every tile starts at stage 0\n"
        f"{ind}    const int phase = (it / {stages}) & 1;\n"
        + whole +
        f"{ind}    #pragma unroll\n"
        f"{ind}    for (int s0 = 0; s0 < {stages}; ++s0) {{\n"
        f"{ind}    const int kt = kb + s0;\n"
        f"{ind}    if (kt >= k_tiles) {{  // past the tile's last K block: the producer arrived with nothing\n"
        f"{ind}        mbar_wait(full + 8 * s0, phase);\n"
        f"{ind}        if (threadIdx.x % 128 == 0) mbar_arrive(empty + 8 * s0);\n"
        f"{ind}        continue;\n"
        f"{ind}    }}\n"
        + body +
        f"{ind}    }}\n")
src = src[:m.start()] + turn + src[end + 1:]
sys.stdout.write(src)
sys.stderr.write(f"ring in whole turns of {stages}{', the last turn peeled' if peel else ''}\n")
