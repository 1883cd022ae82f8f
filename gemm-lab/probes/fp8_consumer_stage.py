#!/usr/bin/env python3
# What holds the lone consumer's stage in the block-scaled fp8 kernels of 64 x 64 tiles. A
# consumer by atom rows with one atom row waits for a stage, reads B's scale of the K block,
# issues its wgmmas into one set of sums, waits for them, releases the stage and promotes the
# sums into its accumulators, one stage after another. At c4561a7 it loaded B's scale from
# global memory each stage; since 53f05e3, from a window of 256 K blocks in shared memory that
# it fills at a tile's first stage (the `b-scales-smem` edit's idea, which fills the C tile
# with all of a tile's scales instead). The edits `at-stage`, `ahead` and `b-scales-smem` take the
# source generated at c4561a7 (`git worktree add /tmp/c4561a7 c4561a7`, then its gemm-lab);
# the others either form. Edits:
#   at-stage   two sets of sums: stage kt + 1's wgmmas issued before stage kt's are waited on
#              (wgmma.wait_group 1) and promoted, so that the promotion runs while the tensor
#              cores work, and each stage is released a stage later; B's scale loaded at its stage
#   ahead      the same, B's scale loaded two stages ahead (a load in flight then holds up no wgmma)
#   tensormap  no change to the loop: the tensor maps of whole tiles' copies and C's stores
#              prefetched at the kernel's start (prefetch.tensormap, as DeepGEMM does)
#   b-scales-smem  the loop as generated, but B's scales of the tile's K blocks loaded into shared
#              memory once a tile (the C tile's, free until the epilogue: K of at most 2048
#              blocks on 64 x 64 tiles) by the consumers, each stage's read from there
#              (DeepGEMM's way) in place of a global load a stage; tiles of one 128-column
#              block of B (64 x 64, 256 x 128), whose consumers all read the same scales
# and, for timing only (the results are wrong, but finite), the one-set loop without a part of
# its work, each an upper bound on what making that part free could give:
#   no-a-scales    A's scales neither copied by the producer nor read (taken as 1)
#   no-b-scales    B's scale taken as 1 at each stage (a window of them, where generated, still filled)
#   no-scales      both
#   no-promotion   the wgmmas add into the accumulators themselves: no second set, no promotion
# A hand edit of the generated kernel, for `gemm-lab deepgemm MANIFEST --variant ..,source=FILE`
# or `gemm-lab variants`:
#
#   V=block.m=64,block.n=64,warp.m=64,warp.n=64,stages=8
#   gemm-lab cuda fp8_block_scaled $V | gemm-lab/probes/fp8_consumer_stage.py ahead > /tmp/ahead.cu
#   gemm-lab deepgemm MANIFEST --variant $V --variant $V,source=/tmp/ahead.cu
#
# The figures: docs/src/performance/fp8.md, "Not taken: a stage's wgmmas issued before ..." and
# "Taken: B's scales from shared memory, loaded once a tile ...".
import re
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "ahead"
modes = ("at-stage", "ahead", "tensormap", "b-scales-smem", "no-a-scales", "no-b-scales", "no-scales", "no-promotion")
if mode not in modes:
    sys.exit("mode: " + ", ".join(modes))
src = sys.stdin.read()


def drop(text, pattern, to, count):
    """`pattern` replaced by `to` exactly `count` times, or the source is not the one expected."""
    found = len(re.findall(pattern, text))
    if found != count:
        sys.exit(f"expected {count} of /{pattern}/, found {found}")
    return re.sub(pattern, to, text)


if mode in ("no-a-scales", "no-scales"):
    src = drop(src, r" *mbar_expect_more\(bar, \d+\);\n *tma_load\(sfa_smem .*\n", "", 2)
    src = drop(src, r"sfa\[warp_m [^]]*\]", "1.0f", 1)
if mode in ("no-b-scales", "no-scales"):
    src = drop(src, r"const float sb = (__ldg\(.*\)|sfb\[kt % 256\]);", "const float sb = 1.0f;", 1)
if mode == "no-promotion":
    src = drop(src, r"wgmma_m64n64k32\(part\[0\]\[0\], (.*), ks > 0\);", r"wgmma_m64n64k32(acc[0][0], \1, 1);", 1)
    src = drop(src, r"acc\[0\]\[0\]\[q\]\[e\] \+= sc\[0\]\[e / 2\] \* part\[0\]\[0\]\[q\]\[e\];", "", 1)
if mode == "b-scales-smem":
    c_tile = re.search(r"const unsigned c_tile_addr = a_smem \+ (\d+);", src)
    pre = re.search(r"( *)// B's scales of this warpgroup's loop into the L2 first.*?\n\1\}\n", src, re.S)
    at = re.search(r"const float sb = __ldg\((.*)\);", src)
    if not (c_tile and pre and at) or "group_n = 0;" not in src:
        sys.exit("no C tile, B-scale prefetch or B-scale load where expected (the source generated at c4561a7)")
    ind = pre.group(1)
    load = (
        f"{ind}// (hand edit) B's scales of the tile's K blocks into the C tile's shared memory, once the last\n"
        f"{ind}// tile's TMA stores have read it: a stage reads its scale from there\n"
        f"{ind}float* const sfb_tile = reinterpret_cast<float*>(smem_raw + (a_smem - smem_base) + {c_tile.group(1)});\n"
        f"{ind}if (threadIdx.x == 128) bulk_wait_read<0>();\n"
        f"{ind}consumers_sync();\n"
        f"{ind}for (int kt = threadIdx.x - 128; kt < k_tiles; kt += blockDim.x - 128) sfb_tile[kt] = __ldg({at.group(1)});\n"
        f"{ind}consumers_sync();\n"
    )
    src = src[:pre.start()] + load + src[pre.end():]
    src = drop(src, r"const float sb = __ldg\(.*\);", "const float sb = sfb_tile[kt];", 1)
if mode.startswith("no-") or mode == "b-scales-smem":
    sys.stdout.write(src)
    sys.exit()

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
    sys.exit("not a consumer of one atom row by one warpgroup (64 x 64 tiles) as generated at c4561a7")
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
