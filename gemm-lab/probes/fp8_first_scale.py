#!/usr/bin/env python3
# Each tile's first scale of B loaded under the last tile's epilogue. The block-scaled fp8
# consumers by atom rows read B's scale of each K block from global memory just ahead of their
# wait for the stage, so a tile's first K block waits for that load: 4% at 4096 x 32768 x 512,
# whose tiles take four stages each (docs/src/performance/fp8.md). Here the load for a block's
# next tile goes out before the epilogue of the one before (and the first tile's before the walk),
# and K block 0 takes it from a register. A hand edit of the generated kernel
# (`gemm-lab cuda fp8_block_scaled 'stages=3,tile=256x128,warp_tile=128x128'`), for
# `gemm-lab variants STEP SIZE ..,source=FILE`.
import re
import sys

src = sys.stdin.read()

# the consumers' walk: the second persistent loop over tiles (the producer's is the first)
walk = re.compile(r"( *)for \(int t = blockIdx\.x; t < (tiles_m \* tiles_n \* batches); t \+= gridDim\.x\) \{\n")
loops = list(walk.finditer(src))
if len(loops) != 2:
    sys.exit(f"expected the producer's and the consumers' walks, found {len(loops)}")
m = loops[1]
ind, total = m.group(1), m.group(2)
# the tile's coordinates, as the walk computes them: from `const int batch` to `const int block_n`
coords_end = src.index("\n", src.index("const int block_n = ", m.end()))
coords = src[m.end():coords_end + 1]
if "const int batch = " not in coords:
    sys.exit("no tile coordinates at the walk's head")

load = re.compile(r"const float sb = __ldg\((scale_b \+ .*) \* k_tiles \+ kt\);\n")
lm = load.search(src, m.end())
if not lm:
    sys.exit("no load of B's scale in the consumers' K loop")
at = lm.group(1)

first = (f"{ind}// (hand edit) K block 0's scale of B for tile t, loaded ahead of the tile\n"
         f"{ind}auto first_sb = [&](int t) -> float {{\n"
         + coords +
         f"{ind}    (void)block_m;\n"
         f"{ind}    return __ldg({at} * k_tiles);\n"
         f"{ind}}};\n"
         f"{ind}float sb_first = blockIdx.x < {total} ? first_sb(blockIdx.x) : 0.0f;\n")
src = src[:m.start()] + first + src[m.start():]

# K block 0 takes the scale loaded ahead
src = load.sub(lambda x: f"const float sb = kt == 0 ? sb_first : __ldg({x.group(1)} * k_tiles + kt);  // (hand edit)\n", src, count=1)

# the next tile's, loaded before this tile's epilogue
epi = "// this tile's batch of C\n"
e = src.index(epi, m.end())
line_start = src.rindex("\n", 0, e) + 1
pad = src[line_start:e]
src = (src[:line_start]
       + f"{pad}// (hand edit) the next tile's first scale of B, loaded under this tile's epilogue\n"
       + f"{pad}if (t + gridDim.x < {total}) sb_first = first_sb(t + gridDim.x);\n"
       + src[line_start:])
sys.stdout.write(src)
