# The part the copy probes share: where the generated `mma_autotuned` (128 x 256 x 64 tiles of 256
# threads, row-major A and B) issues a tile's unchecked copies, and how a probe puts its own there.
import re
import sys

# the pipeline fill's and the refills' copies of one tile: A's 4 rounds, then B's 8
COPY_BLOCK = re.compile(
    r"(?P<ind>[ ]*)#pragma unroll\n[ ]*for \(int r = 0; r < 4; \+\+r\) \{\n"
    r"[ ]*cp_async_16\(a_dst\[r\] \+ (?P<st>\w+) \* 16384, a_src \+ a_off\[r\]\);\n[ ]*\}\n"
    r"[ ]*a_src \+= 64;\n"
    r"[ ]*#pragma unroll\n[ ]*for \(int r = 0; r < 8; \+\+r\) \{\n"
    r"[ ]*cp_async_16\(b_dst\[r\] \+ (?P=st) \* 32768, b_src \+ b_off\[r\]\);\n[ ]*\}\n"
    r"[ ]*b_src \+= 64 \* ldb;\n")


def edit(src, setup, copies, what):
    """`setup` (lines declaring what the copies use) before the tile loops, and every tile's
    copies replaced by `copies(indent, stage)`, the stage a variable (`s` or `wr`)."""
    anchor = "        const int tiles = (K + 63) / 64;"
    if anchor not in src:
        sys.exit("no tile count in the source")
    src = src.replace(anchor, setup + "\n" + anchor, 1)
    src, count = COPY_BLOCK.subn(lambda m: copies(m.group("ind"), m.group("st")), src)
    if count == 0:
        sys.exit("no whole-tile copies in the source (written for 128 x 256 x 64 tiles of 256 threads)")
    sys.stderr.write(f"{count} copy blocks {what}\n")
    return src
