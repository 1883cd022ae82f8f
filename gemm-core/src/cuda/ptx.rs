//! Inline-PTX helpers, emitted once per kernel and only those it uses. The
//! generated source includes no header: 16-bit values are 16-bit storage
//! (`unsigned short`, pairs in an `unsigned`), converted with PTX `cvt`.

use super::writer::Writer;
use crate::spec::Elem;

/// `cp.async` copies of the given sizes in bytes, with commit and wait; for
/// the sizes in `zfill`, also copies that read nothing or all of it and
/// fill with zeros what they do not read (single-element copies at the
/// edges of a guarded kernel's operands; wider ones go by
/// `copy::copy_edge_helpers`).
pub fn cp_async(w: &mut Writer, sizes: &[u32], zfill: &[u32]) {
    let mut sizes = sizes.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    w.line("// cp.async: a copy global -> shared that holds no register while in flight.");
    w.line("// 16-byte copies may bypass L1 (.cg); smaller ones must go through it (.ca).");
    for &bytes in &sizes {
        let cache = if bytes == 16 { "cg" } else { "ca" };
        w.block(format!("__device__ __forceinline__ void cp_async_{bytes}(unsigned dst, const void* src)"), |w| {
            w.line(format!("asm volatile(\"cp.async.{cache}.shared.global [%0], [%1], {bytes};\\n\" :: \"r\"(dst), \"l\"(src));"));
        });
    }
    if !zfill.is_empty() {
        w.line("// at an edge: reads src_bytes (0 or the whole copy) and fills the rest with zeros");
        for &bytes in zfill {
            let cache = if bytes == 16 { "cg" } else { "ca" };
            w.block(format!("__device__ __forceinline__ void cp_async_{bytes}_zfill(unsigned dst, const void* src, int src_bytes)"), |w| {
                w.line(format!(
                    "asm volatile(\"cp.async.{cache}.shared.global [%0], [%1], {bytes}, %2;\\n\" :: \"r\"(dst), \"l\"(src), \"r\"(src_bytes));"
                ));
            });
        }
    }
    w.line("// closes the group of copies issued since the last commit");
    w.block("__device__ __forceinline__ void cp_async_commit()", |w| {
        w.line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
    });
    w.line("// waits until at most N of this thread's groups are still in flight");
    w.line("template <int N>");
    w.block("__device__ __forceinline__ void cp_async_wait()", |w| {
        w.line("asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(N) : \"memory\");");
    });
    w.line("");
}

/// `ldmatrix` loads of 8x8 matrices of 16-bit elements from shared memory:
/// each lane gives the address of one 16-byte row; `.trans` hands each lane
/// the elements of the transposed matrix.
pub fn ldmatrix(w: &mut Writer, variants: &[(u32, bool)]) {
    w.line("// ldmatrix: 8x8 matrices of 16-bit elements, shared memory -> the mma fragment layout;");
    w.line("// lane i addresses row i % 8 of matrix i / 8 (16 contiguous bytes)");
    for &(count, trans) in variants {
        let regs: Vec<String> = (0..count).map(|i| format!("unsigned& r{i}")).collect();
        let outs: Vec<String> = (0..count).map(|i| format!("\"=r\"(r{i})")).collect();
        let ops: Vec<String> = (0..count).map(|i| format!("%{i}")).collect();
        let suffix = if trans { "_trans" } else { "" };
        let qual = if trans { ".trans" } else { "" };
        w.block(format!("__device__ __forceinline__ void ldmatrix_x{count}{suffix}({}, unsigned addr)", regs.join(", ")), |w| {
            w.line(format!(
                "asm volatile(\"ldmatrix.sync.aligned.m8n8.x{count}{qual}.shared.b16 {{{}}}, [%{count}];\\n\" : {} : \"r\"(addr));",
                ops.join(", "),
                outs.join(", ")
            ));
        });
    }
    w.line("");
}

/// `mma.sync` m16n8k16 with f32 accumulators, for `elem` operands.
pub fn mma_m16n8k16(w: &mut Writer, elem: Elem) {
    let t = ptx_type(elem);
    w.line(format!("// mma.sync m16n8k16: D = A (16x16 {t}, row) * B (16x8 {t}, col) + D, in f32"));
    w.block("__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)", |w| {
        w.line("asm volatile(");
        w.line(format!(
            "    \"mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\\n\""
        ));
        w.line("    : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])");
        w.line("    : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b0), \"r\"(b1));");
    });
    w.line("");
}

/// Conversions of f32 accumulators to a 16-bit C, rounding to nearest even.
pub fn cvt(w: &mut Writer, elem: Elem) {
    let t = ptx_type(elem);
    w.line(format!("// f32 -> {t}, rounding to nearest even: one value, and a pair packed low-first"));
    w.block(format!("__device__ __forceinline__ unsigned short to_{t}(float x)"), |w| {
        w.line("unsigned short h;");
        w.line(format!("asm(\"cvt.rn.{t}.f32 %0, %1;\\n\" : \"=h\"(h) : \"f\"(x));"));
        w.line("return h;");
    });
    w.block(format!("__device__ __forceinline__ unsigned to_{t}x2(float lo, float hi)"), |w| {
        w.line("unsigned p;");
        w.line(format!("asm(\"cvt.rn.{t}x2.f32 %0, %1, %2;\\n\" : \"=r\"(p) : \"f\"(hi), \"f\"(lo));"));
        w.line("return p;");
    });
    w.line("");
}

/// The PTX name of a 16-bit element type.
pub fn ptx_type(elem: Elem) -> &'static str {
    match elem {
        Elem::F16 => "f16",
        Elem::Bf16 => "bf16",
        Elem::F32 => "f32",
    }
}

/// The CUDA C type that stores an element.
pub fn storage_type(elem: Elem) -> &'static str {
    match elem {
        Elem::F32 => "float",
        Elem::F16 | Elem::Bf16 => "unsigned short",
    }
}
