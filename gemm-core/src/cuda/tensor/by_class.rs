//! Staging by class of lines (sm_90a): the launcher's variant of a
//! specialized TMA kernel that reads A and B and writes C where they lie
//! when their lines are 8 bytes aligned (C's any), as a row-major A with K
//! = 4100 or a C of 4097 columns are, which TMA cannot take as one tensor:
//! its boxes must start 16 bytes aligned.
//!
//! Sixteen lines of any length span a multiple of 16 bytes, so each class
//! of lines modulo 16 (4 for B) is a tensor TMA can take, its map starting
//! at its first line rounded down (A's to 128 bytes, B's to 32, C's to 16).
//! The product runs as `C^T = B^T A^T` on tiles of 256 lines of one class
//! of A (and of C) by 128 columns:
//! - wgmma's B operand is A, its 256 lines by descriptor; their K window
//!   starts where the class's map does, up to 60 elements before the
//!   lines, and what lies there is zeroed in shared memory at the first
//!   K step;
//! - wgmma's A operand is B^T, from registers: B's columns come in
//!   64-wide swizzled boxes per class mod 4, each from the 16-element
//!   boundary at or before where A's window needs it, and the rest of the
//!   shift (0 to 12 elements) is taken by the 32-bit shared loads, the
//!   window's last elements from the next stage's box. Each stage's
//!   wgmmas finish before the next stage's registers load, or ptxas
//!   serializes every wgmma;
//! - C goes out by TMA stores a class of lines at a time, each map to its
//!   lines' last whole 16 bytes, the tile's columns starting so that its
//!   boxes start on 16 bytes; threads store each line's first and last
//!   few elements.
//!
//! The kernel body (`by_class.cu`) takes its sizes from the spec; which
//! tilings it is written for, [`by_class_fits`] says. On the H100 it ran
//! 4095 x 4097 x 4100 at 89.0-89.1% of the same spec's 4096^3 (commit
//! a7081aa), where copying A and B first ran it at 65% (BENCHMARKS.md).
//!
//! [`by_class_fits`]: crate::spec::KernelSpec::by_class_fits

use super::Tc;
use crate::cuda::ptx;
use crate::cuda::writer::Writer;

/// The kernel body, its sizes marked `@NAME`.
const BODY: &str = include_str!("by_class.cu");

impl Tc<'_> {
    /// The class maps' parameter and the shared-memory accesses the body makes.
    pub(super) fn by_class_helpers(&self, w: &mut Writer) {
        w.line("// by class of lines: each operand's tensor maps, one a class of its lines (16 lines c, c + 16, ...");
        w.line("// of A and C, 4 of B's columns), each from the class's first line rounded down, and the elements");
        w.line("// each map starts before its lines; encoded by the launcher");
        w.statement_block("struct __align__(64) LineClasses", |w| {
            w.line("TensorMap a[16];  // A's, from 128-byte boundaries, boxes of 64 x 256 in the 128-byte swizzle");
            w.line("TensorMap b[4];  // B's, from 32-byte boundaries, boxes of 64 x 32 in the 128-byte swizzle");
            w.line("TensorMap c[16];  // C's, from 16-byte boundaries to the lines' last whole 16 bytes, boxes of 64 x 64");
            w.line("int sa[16], sb[4], sc[16];  // elements each map starts before its lines");
            w.line("int c_end[16];  // C's columns the TMA stores reach in each class");
            w.line("int k_steps[16];  // K steps of a tile of each class of A: its window, and up to 12 elements of B's past it");
            w.line("int rows[16];  // lines of A (and C) in each class");
            w.line("int m_tiles;  // tiles of 256 lines in the largest class");
        });
        w.line("// 32- and 16-bit shared-memory accesses at a shared address");
        w.block("__device__ __forceinline__ unsigned lds32(unsigned addr)", |w| {
            w.line("unsigned v;");
            w.line("asm volatile(\"ld.shared.b32 %0, [%1];\\n\" : \"=r\"(v) : \"r\"(addr));");
            w.line("return v;");
        });
        w.block("__device__ __forceinline__ void sts32(unsigned addr, unsigned v)", |w| {
            w.line("asm volatile(\"st.shared.b32 [%0], %1;\\n\" :: \"r\"(addr), \"r\"(v) : \"memory\");");
        });
        w.block("__device__ __forceinline__ void sts16(unsigned addr, unsigned short v)", |w| {
            w.line("asm volatile(\"st.shared.b16 [%0], %1;\\n\" :: \"r\"(addr), \"h\"(v) : \"memory\");");
        });
        w.line("");
    }

    /// The whole kernel past its signature, for `stages` stages.
    pub(super) fn by_class_body(&self, w: &mut Writer, stages: u32) {
        let s = self.spec;
        let sp = s.specialize.expect("checked: by_class_fits");
        let (a_stage, b_stage) = (256 * 64 * 2, 128 * 64 * 2);
        let c_buffers = stages * (a_stage + b_stage);
        let sizes = [
            ("@STAGES", stages.to_string()),
            ("@A_STAGES_BYTES", (stages * a_stage).to_string()),
            ("@C_BUFFERS", c_buffers.to_string()),
            ("@FULL", (c_buffers + crate::spec::BY_CLASS_C_BYTES).to_string()),
            ("@EMPTY", (8 * stages).to_string()),
            ("@PRODUCER_REGS", sp.producer_regs.unwrap_or(24).to_string()),
            ("@CONSUMER_REGS", sp.consumer_regs.unwrap_or(240).to_string()),
            ("@T", ptx::ptx_type(s.c.elem).to_string()),
        ];
        for line in BODY.lines() {
            let mut line = line.to_string();
            for (mark, value) in &sizes {
                line = line.replace(mark, value);
            }
            w.line(line);
        }
    }
}
