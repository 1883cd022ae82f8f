#!/usr/bin/env python3
# DeepGEMM's raster in place of the generated one: tiles taken in bands 16 N tiles wide, row by
# row down M (consecutive blocks share A's tile), where `raster = grouped(G)` takes bands G M
# tiles tall, column by column (consecutive blocks share B's). A hand edit of the generated
# kernel (`gemm-lab cuda fp8_block_scaled 'stages=3,tile=256x128,warp_tile=128x128,raster=grouped(8)'`),
# its producer's walk and its consumers' alike, for `gemm-lab variants STEP SIZE ..,source=FILE`:
#
#   python3 gemm-lab/probes/fp8_raster.py [WIDTH] < generated.cu > edited.cu
import re
import sys

width = int(sys.argv[1]) if len(sys.argv) > 1 else 16
src = sys.stdin.read()

band = re.compile(
    r"( *)const int band = tile / \((\d+) \* tiles_n\);\n"
    r" *const int band_rows = .*\n"
    r" *const int in_band = .*\n"
    r" *const int block_m = \(band \* \d+ \+ in_band % band_rows\) \* (\d+);\n"
    r" *const int block_n = \(in_band / band_rows\) \* (\d+);\n")


def dg(m):
    ind, bm, bn = m.group(1), m.group(3), m.group(4)
    w = width
    return (f"{ind}// (hand edit) DeepGEMM's raster: bands {w} N tiles wide, row by row\n"
            f"{ind}const int band = tile / ({w} * tiles_m);\n"
            f"{ind}const int band_cols = tiles_n - band * {w} < {w} ? tiles_n - band * {w} : {w};\n"
            f"{ind}const int in_band = tile % ({w} * tiles_m);\n"
            f"{ind}const int block_m = (in_band / band_cols) * {bm};\n"
            f"{ind}const int block_n = (band * {w} + in_band % band_cols) * {bn};\n")


out, n = band.subn(dg, src)
if n != 2:
    sys.exit(f"expected the producer's and the consumers' rasters, found {n}")
sys.stdout.write(out)
