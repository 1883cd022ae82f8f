//! The wmma atom: PTX `wmma.load`, `wmma.mma` and `wmma.store` on whole
//! fragments, from global memory (no staging, as seed 004 does) or from the
//! staged shared tiles. wmma reads either layout of each operand itself
//! (`.row` / `.col`), so no operand is transposed anywhere; its fragments'
//! register layout is the hardware's own, so the epilogue is `wmma.store`.

use super::{index, plus, times, Source, Tc};
use crate::cuda::epilogue::{Output, Value};
use crate::cuda::layout::{offset, wide_offset};
use crate::cuda::ptx::ptx_type;
use crate::cuda::writer::Writer;
use crate::spec::{Dim, Elem, Layout};

fn layout(l: Layout) -> &'static str {
    match l {
        Layout::RowMajor => "row",
        Layout::ColMajor => "col",
    }
}

/// `{%from, ..., %from + n - 1}`.
fn regs(from: u32, n: u32) -> String {
    let r: Vec<String> = (from..from + n).map(|i| format!("%{i}")).collect();
    format!("{{{}}}", r.join(", "))
}

impl Tc<'_> {
    /// 32-bit registers of one A and one B fragment: f16 fragments hold 8
    /// (each value twice over), bf16 ones just the 16x16, 8x16 or 16x32 values.
    fn wmma_regs(&self) -> (u32, u32) {
        match self.spec.a.elem {
            Elem::Bf16 => (self.am * self.ak / 64, self.ak * self.an / 64),
            _ => (8, 8),
        }
    }

    fn shape(&self) -> String {
        format!("m{}n{}k{}", self.am, self.an, self.ak)
    }

    pub(super) fn wmma_helpers(&self, w: &mut Writer) {
        let s = self.spec;
        let (ra, rb) = self.wmma_regs();
        let (t, shape) = (ptx_type(s.a.elem), self.shape());
        w.line(format!("// wmma {shape} on {t}: whole fragments loaded, multiplied and stored by the warp;"));
        w.line("// pointers are generic (global or shared), 32-byte aligned, rows a multiple of 16 bytes apart");
        for (which, op, n) in [('a', s.a, ra), ('b', s.b, rb)] {
            w.block(format!("__device__ __forceinline__ void wmma_load_{which}(unsigned (&f)[{n}], const unsigned short* p, int ld)"), |w| {
                let outs: Vec<String> = (0..n).map(|i| format!("\"=r\"(f[{i}])")).collect();
                w.line(format!(
                    "asm volatile(\"wmma.load.{which}.sync.aligned.{}.{shape}.{t} {}, [%{n}], %{};\\n\" : {} : \"l\"(p), \"r\"(ld));",
                    layout(op.layout),
                    regs(0, n),
                    n + 1,
                    outs.join(", ")
                ));
            });
        }
        let types = match s.a.elem {
            Elem::Bf16 => "f32.bf16.bf16.f32",
            _ => "f32.f32",
        };
        w.block(format!("__device__ __forceinline__ void wmma_mma(float (&d)[8], const unsigned (&a)[{ra}], const unsigned (&b)[{rb}])"), |w| {
            w.line("asm volatile(");
            w.line(format!(
                "    \"wmma.mma.sync.aligned.{}.{}.{shape}.{types} {}, {}, {}, {};\\n\"",
                layout(s.a.layout),
                layout(s.b.layout),
                regs(0, 8),
                regs(8, ra),
                regs(8 + ra, rb),
                regs(0, 8)
            ));
            let d: Vec<String> = (0..8).map(|i| format!("\"+f\"(d[{i}])")).collect();
            let a: Vec<String> = (0..ra).map(|i| format!("\"r\"(a[{i}])")).collect();
            let b: Vec<String> = (0..rb).map(|i| format!("\"r\"(b[{i}])")).collect();
            w.line(format!("    : {}", d.join(", ")));
            w.line(format!("    : {}, {});", a.join(", "), b.join(", ")));
        });
        w.block("__device__ __forceinline__ void wmma_store(float* p, const float (&d)[8], int ld)", |w| {
            let ins: Vec<String> = (0..8).map(|i| format!("\"f\"(d[{i}])")).collect();
            w.line(format!(
                "asm volatile(\"wmma.store.d.sync.aligned.{}.{shape}.f32 [%0], {}, %9;\\n\" :: \"l\"(p), {}, \"r\"(ld) : \"memory\");",
                layout(s.c.layout),
                regs(1, 8),
                ins.join(", ")
            ));
        });
        w.line("");
    }

    pub(super) fn wmma_accumulators(&self, w: &mut Writer) {
        w.line(format!("// accumulators: {}x{} atoms, one f32 fragment (8 registers a lane) each", self.ami, self.ani));
        w.line(format!("float acc[{}][{}][8] = {{}};", self.ami, self.ani));
        w.line("");
    }

    /// Where operand `which`'s fragment at `mn` (along M or N from the warp's
    /// origin) and K offset `k` starts, and its leading dimension.
    fn fragment(&self, which: char, src: Source, mn: Option<String>, k: Option<String>) -> (String, String) {
        let s = self.spec;
        let (op, origin, warp) = if which == 'A' { (s.a, "block_m", "warp_m") } else { (s.b, "block_n", "warp_n") };
        match src {
            Source::Global { k0 } => {
                let mn = plus(&[Some(origin.into()), Some(warp.into()), mn]);
                let k = plus(&[Some(k0.into()), k]);
                let (row, col) = if which == 'A' { (mn, k) } else { (k, mn) };
                let ld = if which == 'A' { "lda" } else { "ldb" };
                (format!("&{which}[{}]", offset(op.layout, ld, &row, &col)), ld.to_string())
            }
            Source::Smem { stage } => {
                let (tile, smem) = if which == 'A' { (s.smem_a(), "As") } else { (s.smem_b(), "Bs") };
                let mn = plus(&[Some(warp.into()), mn]);
                let k = plus(&[k]);
                // lines run along K where the operand is contiguous along M or N
                let along_k_lines = (which == 'A') == (op.layout == Layout::ColMajor);
                let (line, e) = if along_k_lines { (k, mn) } else { (mn, k) };
                let at = plus(&[times(stage, tile.elems()), Some(format!("{}_at({line}, {e})", which.to_ascii_lowercase()))]);
                (format!("{smem} + {at}"), tile.row.to_string())
            }
        }
    }

    /// One K step: every A and B fragment of the warp, then every atom's product.
    pub(super) fn wmma_k_step(&self, w: &mut Writer, src: Source) {
        let (ra, rb) = self.wmma_regs();
        let (mi, ni) = (self.ami, self.ani);
        let ks = (self.bk > self.ak).then(|| format!("ks * {}", self.ak));
        w.line(format!("unsigned a_frag[{mi}][{ra}], b_frag[{ni}][{rb}];"));
        w.unrolled("im", mi, |w| {
            let (p, ld) = self.fragment('A', src, times(index("im", mi), self.am), ks.clone());
            w.line(format!("wmma_load_a(a_frag[im], {p}, {ld});"));
        });
        w.unrolled("jn", ni, |w| {
            let (p, ld) = self.fragment('B', src, times(index("jn", ni), self.an), ks.clone());
            w.line(format!("wmma_load_b(b_frag[jn], {p}, {ld});"));
        });
        w.unrolled("im", mi, |w| {
            w.unrolled("jn", ni, |w| w.line("wmma_mma(acc[im][jn], a_frag[im], b_frag[jn]);"));
        });
    }

    /// Each atom's accumulators to C by wmma.store; or, where the fused math
    /// or the edge checks need each value's place in C, through the warp's
    /// scratch tile in shared memory.
    pub(super) fn wmma_epilogue(&self, w: &mut Writer, out: &Output) {
        if self.spec.epilogue_scratch_bytes() > 0 {
            return self.wmma_epilogue_through_scratch(w, out);
        }
        let (mi, ni) = (self.ami, self.ani);
        w.line("// epilogue: each atom's accumulators to C by wmma.store");
        w.unrolled("im", mi, |w| {
            w.unrolled("jn", ni, |w| {
                let row = plus(&[Some("block_m + warp_m".into()), times(index("im", mi), self.am)]);
                let col = plus(&[Some("block_n + warp_n".into()), times(index("jn", ni), self.an)]);
                w.line(format!("wmma_store(&{}[{}], acc[im][jn], ldc);", out.c(), wide_offset(self.spec.c.layout, "ldc", &row, &col)));
            });
        });
    }

    /// The epilogue through shared memory: each atom goes by wmma.store into
    /// the warp's scratch tile, laid out as C is, and the lanes read it back
    /// in runs of 4 along C's contiguous side, whose places they know, for
    /// the shared epilogue (fused math, edge checks, C's type).
    fn wmma_epilogue_through_scratch(&self, w: &mut Writer, out: &Output) {
        let s = self.spec;
        let (mi, ni, am, an) = (self.ami, self.ani, self.am, self.an);
        let row_major = s.c.layout == Layout::RowMajor;
        // the scratch's lines run along C's contiguous side
        let line = if row_major { an } else { am };
        out.describe(w, "direct, each atom through the warp's scratch tile in shared memory");
        w.line("// wmma's accumulator layout is the hardware's own: each atom is stored to this warp's");
        w.line(format!("// {am}x{an} scratch tile (laid out as C), then each lane takes runs of 4 from it"));
        if s.staging == crate::spec::Staging::Direct {
            w.line("extern __shared__ __align__(128) unsigned char smem_raw[];");
        }
        w.line(format!("float* const c_scratch = reinterpret_cast<float*>(smem_raw + {}) + warp * {};", s.epilogue_scratch_offset(), am * an));
        let runs = am * an / 4 / 32;
        w.unrolled("im", mi, |w| {
            w.unrolled("jn", ni, |w| {
                w.line(format!("wmma_store(c_scratch, acc[im][jn], {line});"));
                w.line("__syncwarp();  // the tile is whole before the lanes read it");
                w.unrolled("q", runs, |w| {
                    w.line(format!(
                        "const int at = ({} + lane) * 4;  // this run's first element in the tile",
                        times(index("q", runs), 32).unwrap_or("0".into())
                    ));
                    let (r, c) =
                        if row_major { (format!("at / {line}"), format!("at % {line}")) } else { (format!("at % {line}"), format!("at / {line}")) };
                    let row = plus(&[Some("block_m + warp_m".into()), times(index("im", mi), am), Some(r)]);
                    let col = plus(&[Some("block_n + warp_n".into()), times(index("jn", ni), an), Some(c)]);
                    let along = if row_major { Dim::N } else { Dim::M };
                    let values: Vec<Value> =
                        (0..4).map(|e| Value::acc(if e == 0 { "c_scratch[at]".to_string() } else { format!("c_scratch[at + {e}]") })).collect();
                    out.store(w, &row, &col, along, &values);
                });
                w.line("__syncwarp();  // every lane has read the tile before the next atom overwrites it");
            });
        });
    }
}
