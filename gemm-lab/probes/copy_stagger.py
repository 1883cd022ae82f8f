#!/usr/bin/env python3
# Where in a K tile the copies of the tile two ahead go. As generated every warp issues them right
# after the tile's barrier, beside K step 0's mmas. Moved, each behind a branch of its own (which
# ptxas does not schedule across): `stagger`, warps 0-3 at step 0 and warps 4-7 (the other warp of
# each scheduler) at step 2; `spread`, A's at step 0 and B's at step 2; `b1`, A's at 0 and B's at
# 1; `a1`, A's at 1 and B's at 2; `late`, all at step 2. The copies stay before step 3's wait, so
# each tile keeps one commit group. A hand edit of the generated `mma_autotuned` (its loop of whole
# tiles; any tiling with 4 K steps a tile), for `gemm-lab variants STEP SIZE source=FILE`:
#
#   gemm-lab cuda mma_autotuned | gemm-lab/probes/copy_stagger.py spread > /tmp/spread.cu
#   gemm-lab variants mma_autotuned 4096 source=/tmp/spread.cu
#
# The figures: docs/src/performance/sm80.md, "What was tried".
import re
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "stagger"
if mode not in ("stagger", "spread", "late", "b1", "a1"):
    sys.exit("mode: stagger, spread (A at step 0, B at 2), b1 (A at 0, B at 1), a1 (A at 1, B at 2) or late")
src = sys.stdin.read()

loop = "            for (int kt = 0; kt < tiles; ++kt) {\n"
start = src.index(loop) + len(loop)
refill = re.compile(
    r"                // refill the stage tile kt - 1 used with tile kt \+ 2\n"
    r"                if \(kt \+ 2 < tiles\) \{\n"
    r"(?P<a>                    #pragma unroll\n.*?a_src \+= 64;\n)"
    r"(?P<b>                    #pragma unroll\n.*?b_src \+= 64 \* ldb;\n)"
    r"                \}\n"
    r"                cp_async_commit\(\);.*?\n"
    r"                wr = wr == 2 \? 0 : wr \+ 1;\n", re.S)
m = refill.match(src, start)
if not m:
    sys.exit("no refill at the top of the loop of whole tiles")
a, b = m.group("a"), m.group("b")


def block(cond, body, commit):
    text = f"                    if ({cond}) {{\n" + body.replace("wr *", "wr_now *")
    if commit:
        text += "                    cp_async_commit();\n"
    return text + "                    }\n"


if mode == "stagger":
    step0 = block("warp < 4", "if (kt + 2 < tiles) {\n" + a + b + "}\n", True)
    step2 = block("warp >= 4", "if (kt + 2 < tiles) {\n" + a + b + "}\n", True)
elif mode in ("spread", "b1", "a1"):
    step0 = block("kt + 2 < tiles", a, False)
    step2 = block("kt + 2 < tiles", b, False) + "                    cp_async_commit();\n"
else:  # every warp at step 2
    step0 = ""
    step2 = block("kt + 2 < tiles", a + b, False) + "                    cp_async_commit();\n"
head = "                const int wr_now = wr;\n                wr = wr == 2 ? 0 : wr + 1;\n"
body = src[m.end():]
# each K step's mma loop: put the copies before steps 0's and 2's
marks = [mm.start() for mm in re.finditer(r"                    #pragma unroll\n                    for \(int im = 0; im < 4; \+\+im\) \{\n                        #pragma unroll\n", body)]
if len(marks) < 3:
    sys.exit("no K steps")
first, second = {"b1": (0, 1), "a1": (1, 2)}.get(mode, (0, 2))
body = body[:marks[first]] + step0 + body[marks[first]:marks[second]] + step2 + body[marks[second]:]
sys.stdout.write(src[:start] + head + body)
sys.stderr.write(f"copies moved ({mode})\n")
