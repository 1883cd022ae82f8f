#!/usr/bin/env python3
# The lone consumer's promotion run under the next stage's wgmmas. As generated, a block-scaled
# fp8 consumer by atom rows with one atom row (64 x 64 tiles) waits for a stage, issues its
# wgmmas into one set of sums, waits for them, releases the stage and promotes the sums into its
# accumulators, one stage after another. Here it keeps two sets: stage kt + 1's wgmmas are issued
# before stage kt's are waited on (wgmma.wait_group 1) and promoted, so that the promotion runs
# while the tensor cores work, and each stage is released a stage later. Modes:
#   at-stage   B's scale loaded at its stage, as generated
#   ahead      B's scale loaded two stages ahead (a load in flight then holds up no wgmma)
#   tensormap  no change to the loop: the tensor maps of whole tiles' copies and C's stores
#              prefetched at the kernel's start (prefetch.tensormap, as DeepGEMM does)
# A hand edit of the generated kernel, for `gemm-lab deepgemm MANIFEST --variant ..,source=FILE`
# or `gemm-lab variants`:
#
#   V=block.m=64,block.n=64,warp.m=64,warp.n=64,stages=8
#   gemm-lab cuda fp8_block_scaled $V | gemm-lab/probes/fp8_two_sums.py ahead > /tmp/ahead.cu
#   gemm-lab deepgemm MANIFEST --variant $V --variant $V,source=/tmp/ahead.cu
#
# The figures: docs/src/performance/fp8.md, "Not taken: a stage's wgmmas issued before ...".
import re
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "ahead"
if mode not in ("at-stage", "ahead", "tensormap"):
    sys.exit("mode: at-stage, ahead or tensormap")
src = sys.stdin.read()

if mode == "tensormap":
    # (the maps a whole tile's copies use: the edge boxes' are left to their first use)
    maps = [m for m in re.findall(r"__grid_constant__ TensorMap (\w+)", src) if not m.endswith("_edge")]
    head = "    if (threadIdx.x == 0) {\n        for (int s = 0; "
    if not maps or src.count(head) != 1:
        sys.exit("no tensor maps, or no barrier set-up by thread 0")
    fetch = "".join(f'        asm volatile("prefetch.tensormap [%0];" :: "l"(&{m}) : "memory");\n' for m in maps)
    sys.stdout.write(src.replace(head, "    if (threadIdx.x == 0) {\n" + fetch + "        for (int s = 0; ", 1))
    sys.exit()

# the consumer's K loop: from its comment to the tile's epilogue
start = src.index("            // block tier: walk K a stage at a time")
end = src.index("            // this tile's batch of C", start)
loop = src[start:end]
head = re.search(r"for \(int kt = 0; kt < k_tiles; kt \+= 1, it \+= 1\) \{\n", loop)
if not head or "part[0][0]" not in loop or "part[1]" in loop or "sc[1]" in loop:
    sys.exit("not a consumer of one atom row by one warpgroup (64 x 64 tiles)")
body = loop[head.end():loop.rindex("}")]
issue, retire = body.split("                wgmma_wait<0>();", 1)
# (the stage's slot, which the release names too)
slot = re.search(r" *const int s0 = it % \d+;\n", issue)
if not slot:
    sys.exit("no stage slot in the loop")
retire = slot.group(0) + "                wgmma_wait<W>();" + retire


def macro(text):
    """The loop's lines as one macro's: comments dropped, pragmas as operators, kt and it as arguments."""
    lines = []
    for line in text.splitlines():
        line = re.sub(r"\s*//.*$", "", line)
        if not line.strip():
            continue
        line = line.replace("#pragma unroll", '_Pragma("unroll")')
        line = re.sub(r"\bkt\b", "(KT)", line)
        line = re.sub(r"\bit\b", "(IT)", line)
        line = line.replace("part[0][0]", "part2[P][0][0]").replace("sc[0]", "sc2[P][0]")
        lines.append(line)
    return "{ \\\n" + " \\\n".join(lines) + " }\n"


load = re.search(r"const float sb = __ldg\((.*)\);", issue)
if not load:
    sys.exit("no load of B's scale in the loop")
prologue = ""
if mode == "ahead":
    at = re.sub(r"\bkt\b", "min((KT), k_tiles - 1)", load.group(1))
    prologue = (
        "            // B's scales two stages ahead of their use\n"
        f"#define SB(KT) __ldg({at})\n"
        "            float sb_0 = k_tiles > 0 ? SB(0) : 0.0f;\n"
        "            float sb_1 = k_tiles > 0 ? SB(1) : 0.0f;\n"
    )
    issue = issue.replace(load.group(0), "const float sb = sb_0; sb_0 = sb_1; sb_1 = SB(kt + 2);")

two = (
    "            // (hand edit) two sets of sums: stage kt + 1's wgmmas run while stage kt's are promoted\n"
    "            float part2[2][1][1][8][4];\n"
    "            float sc2[2][1][2];\n"
    + prologue
    + "#define ISSUE(P, KT, IT) " + macro(issue)
    + "#define RETIRE(P, KT, IT, W) " + macro(retire)
    + "            if (k_tiles > 0) {\n"
    "                ISSUE(0, 0, it);\n"
    "                for (int kt = 0;; kt += 2, it += 2) {\n"
    "                    if (kt + 1 >= k_tiles) { RETIRE(0, kt, it, 0); it += 1; break; }\n"
    "                    ISSUE(1, kt + 1, it + 1);\n"
    "                    RETIRE(0, kt, it, 1);\n"
    "                    if (kt + 2 >= k_tiles) { RETIRE(1, kt + 1, it + 1, 0); it += 2; break; }\n"
    "                    ISSUE(0, kt + 2, it + 2);\n"
    "                    RETIRE(1, kt + 1, it + 1, 1);\n"
    "                }\n"
    "            }\n"
    "#undef ISSUE\n#undef RETIRE\n#undef SB\n\n"
)
sys.stdout.write(src[:start] + two + src[end:])
