#!/usr/bin/env python3
"""Makes `mma_autotuned`'s generated kernel persistent, to time what a launch's
fixed cost a tile (its first copies before the first mma, the epilogue, the next
block's start: docs/src/performance.md, "The sm_80 path") is worth:

    gemm-lab cuda mma_autotuned | gemm-lab/probes/persistent_sm80.py overlap > k.cu
    gemm-lab cuda mma_autotuned | gemm-lab/probes/persistent_sm80.py plain > k.cu
    gemm-lab variants mma_autotuned 4096 source=k.cu,smem=215040

One block an SM (its SM count read from %nsmid; the launch's other blocks return
at once) walks the tiles of the launch's grid in the generated raster order, its
C tile in shared memory of its own past the stages (215040 bytes in all).
overlap: the next tile's first two stages are issued before this tile's
epilogue, so that they travel while it runs; plain: after it. Whole tiles only
(M, N, K multiples of 128, 256, 64: the generated kernel's unchecked path)."""
import re
import sys

how = sys.argv[1] if len(sys.argv) > 1 else ""
if how not in ("overlap", "plain"):
    sys.exit(__doc__)
src = sys.stdin.read()


def between(text, start, end, include_end=True):
    """the text from the line holding `start` to the line holding `end` (after it)"""
    i = text.index(start)
    i = text.rindex("\n", 0, i) + 1
    j = text.index(end, i)
    j = text.index("\n", j) + 1 if include_end else text.rindex("\n", 0, j) + 1
    return text[i:j]


prelude = src[: src.index('extern "C" __global__ void')]
head = between(src, 'extern "C" __global__ void', "long long batch_a")
name = re.search(r"\n(mma_autotuned__\w+)\(", head).group(1)
raster = between(src, "const int tile = blockIdx.y * gridDim.x + blockIdx.x;", "const int block_n =")
raster = raster.replace("const int tile = blockIdx.y * gridDim.x + blockIdx.x;", "const int tile = at;")
raster = raster.replace("const int block_m", "block_m").replace("const int block_n", "block_n")
warps = between(src, "// warp tier", "const int warp_n =")
frag_lanes = between(src, "// ldmatrix: the line", "const int b_line")
staging = between(src, "// staging: tiles in dynamic shared memory", "const unsigned bs_addr")
a_copies = between(src, "// copies of the A tile", "a_dst[r] = as_addr")
a_copies += "        }\n"
a_copies = re.sub(r".*const unsigned short\* a_src = .*\n", "", a_copies)
b_copies = between(src, "// copies of the B tile", "b_dst[r] = bs_addr")
b_copies += "        }\n"
b_copies = re.sub(r".*const unsigned short\* b_src = .*\n", "", b_copies)
whole = src[src.index("if (whole_tiles == tiles) {") :]
fill = between(whole, "// pipeline fill", "cp_async_commit();  // empty past the last tile")
fill += "            }\n"
loop = between(whole, "int rd = 0;  // the stage being read", "// block tier: walk K", include_end=False)
kloop_start = whole.index("// block tier: walk K")
kloop_start = whole.rindex("\n", 0, kloop_start) + 1
# the K loop ends where the unchecked path's block does: the `}` before `else {`
kloop_end = whole.index("        else {")
kloop = whole[kloop_start:kloop_end]
kloop = kloop[: kloop.rstrip().rindex("}")]  # drop the path's own closing brace

place = lambda at: (
    "{\n        const int at = " + at + ";\n" + raster + "        }\n"
    "            a_src = &A[block_m * lda];\n            b_src = &B[block_n];\n"
)
next_fill = (
    "            if (next < count) {\n"
    "            " + place("next") + fill + "            }\n"
)
epilogue = """            // epilogue: through this block's own C tile (past the stages), then 16-byte chunks
            #pragma unroll
            for (int im = 0; im < 4; ++im) {
                #pragma unroll
                for (int jn = 0; jn < 8; ++jn) {
                    #pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        *reinterpret_cast<unsigned*>(&c_tile[(t_row + im * 16 + h * 8) * 264 + (t_col + jn * 8)]) = to_bf16x2(acc[im][jn][2 * h], acc[im][jn][2 * h + 1]);
                    }
                }
            }
            __syncthreads();  // the C tile is whole
            #pragma unroll 4
            for (int r = 0; r < 16; ++r) {
                const int i = threadIdx.x + r * 256;
                const int line = i / 32;
                const int e = (i % 32) * 8;
                *reinterpret_cast<uint4*>(&C[(tile_m + line) * ldc + tile_n + e]) = *reinterpret_cast<const uint4*>(&c_tile[line * 264 + e]);
            }
"""
out = prelude + head + "{\n"
out += """    const auto body = [&](const unsigned short* __restrict__ A, const unsigned short* __restrict__ B, unsigned short* __restrict__ C) {
        // one block an SM walks the tiles; the launch's other blocks return at once
        unsigned nsm;
        asm("mov.u32 %0, %%nsmid;\\n" : "=r"(nsm));
        const int first = blockIdx.y * gridDim.x + blockIdx.x;
        if (first >= (int)nsm) return;
        const int count = gridDim.x * gridDim.y;
"""
out += warps + frag_lanes + staging + a_copies + b_copies
out += """        const int tiles = (K + 63) / 64;
        // this block's C tile, past the 3 stages (147456 bytes): 128 rows of 256, 264 apart
        unsigned short* const c_tile = reinterpret_cast<unsigned short*>(smem_raw + 147456);
        const int t_row = warp_m + lane / 4;
        const int t_col = warp_n + (lane % 4) * 2;
        int block_m, block_n;
        const unsigned short* a_src;
        const unsigned short* b_src;
        """
out += place("first")
out += fill
out += "        for (int tile = first; tile < count; tile += nsm) {\n"
out += "            const int tile_m = block_m, tile_n = block_n;\n"
out += "            const int next = tile + (int)nsm;\n"
out += "            float acc[4][8][4] = {};\n"
out += loop + kloop + "\n"
if how == "overlap":
    out += "            // the next tile's first stages travel while this one's epilogue runs (no warp reads the stages now)\n"
    out += next_fill + epilogue
else:
    out += epilogue + next_fill
out += "        }\n    };\n"
out += "    if (gridDim.z == 1) body(A, B, C);\n"
out += "    else body(A + blockIdx.z * batch_a, B + blockIdx.z * batch_b, C + blockIdx.z * batch_c);\n}\n"
sys.stdout.write(out)
