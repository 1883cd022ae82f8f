//! Inline-PTX helpers, emitted once per kernel and only those it uses. The
//! generated source includes no header: 16-bit values are 16-bit storage
//! (`unsigned short`, pairs in an `unsigned`), converted with PTX `cvt`.

use super::writer::Writer;
use crate::spec::Elem;

/// `cp.async` copies of the given sizes in bytes, with commit and wait; for
/// the sizes in `zfill`, also copies that read the first `src_bytes` and
/// fill with zeros what they do not read (at the edges of a guarded
/// kernel's operands: single-element copies, which read nothing or all of
/// it, and `copy::copy_edge_helpers`' copies across a line's end).
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
        w.line("// at an edge: reads the first src_bytes and fills the rest with zeros");
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

/// A 16-byte load of four floats from shared memory as `ld.volatile`, which
/// ptxas issues where the source puts it: a plain load's place is ptxas's,
/// and it gathers the next k's fragment loads into runs that the FFMAs
/// after them wait on (runs of 6 and 10 in `autotuned`, which the volatile
/// form ran 2.9% faster: the performance notes, the f32 SIMT pipeline).
pub fn lds128(w: &mut Writer) {
    w.line("// a 16-byte fragment load from shared memory, issued where the source puts it");
    w.block("__device__ __forceinline__ float4 lds128(const float* p)", |w| {
        w.line("float4 v;");
        w.line("const unsigned addr = (unsigned)__cvta_generic_to_shared(p);");
        w.line(
            "asm volatile(\"ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];\\n\" : \"=f\"(v.x), \"=f\"(v.y), \"=f\"(v.z), \"=f\"(v.w) : \"r\"(addr));",
        );
        w.line("return v;");
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

/// `mma.sync` with f32 accumulators, for `a` and `b` operands: m16n8k16 for
/// f16/bf16, m16n8k32 for 8-bit floats (sm_89 and sm_120; A and B may be
/// either 8-bit type). Either way a lane holds 4 registers of A, 2 of B and
/// the same 4 accumulators: the fragments are the same bytes of a K step of
/// 32 bytes, so ldmatrix loads both alike.
pub fn mma_sync(w: &mut Writer, a: Elem, b: Elem) {
    let (ta, tb) = (ptx_type(a), ptx_type(b));
    let k = if a.is_fp8() { 32 } else { 16 };
    w.line(format!("// mma.sync m16n8k{k}: D = A (16x{k} {ta}, row) * B ({k}x8 {tb}, col) + D, in f32"));
    w.block(format!("__device__ __forceinline__ void mma_m16n8k{k}(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)"), |w| {
        w.line("asm volatile(");
        w.line(format!(
            "    \"mma.sync.aligned.m16n8k{k}.row.col.f32.{ta}.{tb}.f32 {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\\n\""
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

/// The PTX name of an element type.
pub fn ptx_type(elem: Elem) -> &'static str {
    match elem {
        Elem::F16 => "f16",
        Elem::Bf16 => "bf16",
        Elem::F32 => "f32",
        Elem::F8E4M3 => "e4m3",
        Elem::F8E5M2 => "e5m2",
    }
}

/// The CUDA C type that stores an element.
pub fn storage_type(elem: Elem) -> &'static str {
    match elem {
        Elem::F32 => "float",
        Elem::F16 | Elem::Bf16 => "unsigned short",
        Elem::F8E4M3 | Elem::F8E5M2 => "unsigned char",
    }
}

/// `mbar_arrive_wait(bar)`: one arrival, then a wait on its token until
/// the phase it arrived in completes (the CUDA barrier API's
/// `bar.wait(bar.arrive())`).
pub fn mbar_arrive_wait(w: &mut Writer) {
    w.line("// arrives on `bar`, then waits until the phase it arrived in has completed");
    w.block("__device__ __forceinline__ void mbar_arrive_wait(unsigned bar)", |w| {
        w.line("asm volatile(");
        w.line("    \"{\\n\"");
        w.line("    \".reg .b64 token;\\n\"");
        w.line("    \".reg .pred done;\\n\"");
        w.line("    \"mbarrier.arrive.shared::cta.b64 token, [%0];\\n\"");
        w.line("    \"wait:\\n\"");
        w.line("    \"mbarrier.try_wait.shared::cta.b64 done, [%0], token;\\n\"");
        w.line("    \"@!done bra wait;\\n\"");
        w.line("    \"}\\n\" :: \"r\"(bar) : \"memory\");");
    });
    w.line("");
}

/// The opaque TMA descriptor the host encodes (`cuTensorMapEncodeTiled`),
/// passed by value as a `__grid_constant__` parameter, and the mbarrier and
/// bulk tensor copy helpers of a TMA pipeline.
/// (`maps`: the kernel takes tensor maps; `loads`: TMA loads its operands,
/// not cp.async; `parity_waits`: some barrier is waited on by its phase's
/// parity, which every kernel does but those whose threads all arrive and
/// wait on their tokens, `mbar_arrive_wait`; `first`: some operand's loads
/// ask the L2 to evict their lines first, `tma_load_first`; `tests`: a
/// consumer tests a stage's barrier ahead of its wait, `mbar_test`.)
pub fn tma(w: &mut Writer, maps: bool, loads: bool, parity_waits: bool, first: bool, tests: bool) {
    if maps {
        w.line("// a TMA descriptor, encoded on the host: 128 opaque bytes, 64-byte aligned");
        w.statement_block("struct __align__(64) TensorMap", |w| w.line("unsigned long long opaque[16];"));
    }
    w.line("// mbarriers: 8-byte shared-memory barriers whose phases complete when their");
    w.line("// arrivals and expected transaction bytes are all in");
    w.block("__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)", |w| {
        w.line("asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\\n\" :: \"r\"(bar), \"r\"(count));");
    });
    w.line("// makes the barriers' initialization visible to the copy engine");
    w.block("__device__ __forceinline__ void mbar_fence_init()", |w| {
        w.line("asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");");
    });
    w.line("// one arrival that also expects `bytes` more of transactions in this phase");
    w.block("__device__ __forceinline__ void mbar_expect_bytes(unsigned bar, unsigned bytes)", |w| {
        w.line("asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n\" :: \"r\"(bar), \"r\"(bytes) : \"memory\");");
    });
    w.block("__device__ __forceinline__ void mbar_arrive(unsigned bar)", |w| {
        w.line("asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\" :: \"r\"(bar) : \"memory\");");
    });
    if parity_waits {
        w.line("// waits until the phase of parity `parity` has completed (a fresh barrier's");
        w.line("// phase before the first, parity 1, counts as completed)");
        w.block("__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)", |w| {
            w.line("asm volatile(");
            w.line("    \"{\\n\"");
            w.line("    \".reg .pred done;\\n\"");
            w.line("    \"wait:\\n\"");
            w.line("    \"mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\\n\"");
            w.line("    \"@!done bra wait;\\n\"");
            w.line("    \"}\\n\" :: \"r\"(bar), \"r\"(parity) : \"memory\");");
        });
    }
    if tests {
        w.line("// one try of `mbar_wait` where `when` is nonzero: whether the phase of parity `parity` has");
        w.line("// completed (0 where not tried). The hardware may hold the answer a while; issued early, that time");
        w.line("// passes under other work. (Predicated, not branched around: ptxas keeps it where it is issued.)");
        w.block("__device__ __forceinline__ unsigned mbar_test(unsigned bar, unsigned parity, unsigned when)", |w| {
            w.line("unsigned done;");
            w.line("asm volatile(");
            w.line("    \"{\\n\"");
            w.line("    \".reg .pred p, q;\\n\"");
            w.line("    \"setp.ne.u32 q, %3, 0;\\n\"");
            w.line("    \"mov.pred p, 0;\\n\"");
            w.line("    \"@q mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\n\"");
            w.line("    \"selp.u32 %0, 1, 0, p;\\n\"");
            w.line("    \"}\\n\" : \"=r\"(done) : \"r\"(bar), \"r\"(parity), \"r\"(when) : \"memory\");");
            w.line("return done;");
        });
    }
    if loads {
        w.line("// a TMA load of one box at (c0 innermost, c1, batch) into shared memory,");
        w.line("// completing on `bar` with the box's bytes; elements outside the tensor read as 0");
        w.block("__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap& map, int c0, int c1, int batch, unsigned bar)", |w| {
            w.line("asm volatile(");
            w.line("    \"cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\\n\"");
            w.line("    :: \"r\"(dst), \"l\"(reinterpret_cast<unsigned long long>(&map)), \"r\"(c0), \"r\"(c1), \"r\"(batch), \"r\"(bar)");
            w.line("    : \"memory\");");
        });
    }
    if loads && first {
        w.line("// tma_load of a box no other block reads: its lines leave the L2 before others");
        w.block("__device__ __forceinline__ void tma_load_first(unsigned dst, const TensorMap& map, int c0, int c1, int batch, unsigned bar)", |w| {
            w.line("asm volatile(");
            w.line("    \"{\\n.reg .b64 first;\\n\"");
            w.line("    \"createpolicy.fractional.L2::evict_first.b64 first, 1.0;\\n\"");
            w.line("    \"cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint\"");
            w.line("    \" [%0], [%1, {%2, %3, %4}], [%5], first;\\n}\\n\"");
            w.line("    :: \"r\"(dst), \"l\"(reinterpret_cast<unsigned long long>(&map)), \"r\"(c0), \"r\"(c1), \"r\"(batch), \"r\"(bar)");
            w.line("    : \"memory\");");
        });
    }
    w.line("");
}

/// A dependent launch's wait (`griddepcontrol.wait`, sm_90): where the
/// launch did not ask to overlap the stream's previous kernel, it returns
/// at once. With `early`, also the signal that lets the stream's next
/// dependent launch start before this kernel ends, and the L2 prefetch of
/// lines that such a launch issues before its wait.
pub fn griddep(w: &mut Writer, early: bool) {
    w.line("// a dependent launch starts this kernel while the stream's previous one finishes: it waits");
    w.line("// here until that kernel is complete and its writes are visible");
    w.block("__device__ __forceinline__ void griddep_wait()", |w| {
        w.line("asm volatile(\"griddepcontrol.wait;\\n\" ::: \"memory\");");
    });
    w.line("");
    if !early {
        return;
    }
    w.line("// this block lets the stream's next dependent launch start (once every block has, or has ended);");
    w.line("// that kernel still waits for this one to end before it touches what this one writes");
    w.block("__device__ __forceinline__ void griddep_launch()", |w| {
        w.line("asm volatile(\"griddepcontrol.launch_dependents;\\n\" ::: \"memory\");");
    });
    w.line("");
    w.line("// asks the L2 for `lines` lines of `bytes` bytes each, `stride` bytes apart from `first`, a 128-byte");
    w.line("// line a thread at a time over the block: nothing comes into the block, and the L2 is where every");
    w.line("// read of global memory is served, so no read after a later wait can see stale data");
    w.block("__device__ __forceinline__ void prefetch_lines(const char* first, long long stride, int lines, int bytes)", |w| {
        w.line("// 128-byte lines a line of the matrix touches: one more where lines start mid-way through one");
        w.line("const int per = (bytes + 127) / 128 + ((reinterpret_cast<unsigned long long>(first) | stride) % 128 != 0);");
        w.block("for (int i = threadIdx.x; i < lines * per; i += blockDim.x)", |w| {
            w.line("const char* line = first + (long long)(i / per) * stride;");
            w.line("const int skew = (int)(reinterpret_cast<unsigned long long>(line) % 128);");
            w.line("const char* at = line + max(0, min(i % per * 128 - skew, bytes - 1));  // never outside the line");
            w.line("asm volatile(\"prefetch.global.L2 [%0];\\n\" :: \"l\"(at));");
        });
    });
    w.line("");
}

/// `fence_proxy_async()`: orders a thread's view of shared memory between
/// the generic proxy (its stores, cp.async) and the async proxy (the copy
/// engine, wgmma).
pub fn fence_proxy_async(w: &mut Writer) {
    w.line("// orders this thread's shared-memory accesses between the generic proxy and the async one");
    w.line("// (the copy engine's and wgmma's)");
    w.block("__device__ __forceinline__ void fence_proxy_async()", |w| {
        w.line("asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");");
    });
}

/// `setmaxnreg`: a warpgroup gives registers back to the SM's pool, or takes them.
pub fn setmaxnreg(w: &mut Writer) {
    w.line("// setmaxnreg: this warpgroup's registers per thread, given back (dec) or taken (inc)");
    w.line("template <int R>");
    w.block("__device__ __forceinline__ void regs_dec()", |w| {
        w.line("asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %0;\\n\" :: \"n\"(R));");
    });
    w.line("template <int R>");
    w.block("__device__ __forceinline__ void regs_inc()", |w| {
        w.line("asm volatile(\"setmaxnreg.inc.sync.aligned.u32 %0;\\n\" :: \"n\"(R));");
    });
    w.line("");
}

/// `wgmma.mma_async` m64nNk16 with f32 accumulators, A and B from shared
/// memory through descriptors; `trans_a`/`trans_b` read an operand stored
/// M- or N-major. Also the fence, commit and wait around it. With
/// `a_registers`, A comes from registers instead (`wgmma_rs_m64nNk16`,
/// four 32-bit registers a thread in mma's A-fragment map; B K-major).
pub fn wgmma(w: &mut Writer, (a, b): (Elem, Elem), n: u32, trans_a: bool, trans_b: bool, a_registers: bool) {
    let elem = a;
    w.line("// wgmma: the fence before a warpgroup's first wgmma on registers others wrote,");
    w.line("// the commit of the wgmmas issued so far as a group, and the wait until at");
    w.line("// most N groups are in flight");
    w.block("__device__ __forceinline__ void wgmma_fence()", |w| {
        w.line("asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");");
    });
    w.block("__device__ __forceinline__ void wgmma_commit()", |w| {
        w.line("asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");");
    });
    w.line("template <int N>");
    w.block("__device__ __forceinline__ void wgmma_wait()", |w| {
        w.line("asm volatile(\"wgmma.wait_group.sync.aligned %0;\\n\" :: \"n\"(N) : \"memory\");");
    });
    let regs = n / 2;
    if a_registers {
        wgmma_rs(w, elem, n);
        return;
    }
    let (ta, tb) = (u32::from(trans_a), u32::from(trans_b));
    let major = |tr: bool, mn: &str| if tr { format!("{mn}-major") } else { "K-major".to_string() };
    // 8-bit operands: K = 32 an atom (32 bytes of a line, as 16 of 16-bit ones), K-major only
    let k = if a.is_fp8() { 32 } else { 16 };
    let (pa, pb) = (ptx_type(a), ptx_type(b));
    w.line(format!(
        "// wgmma m64n{n}k{k}: D (64x{n} f32, {regs} a thread) = A (64x{k} {pa}, {}) * B ({k}x{n} {pb}, {})",
        major(trans_a, "M"),
        major(trans_b, "N")
    ));
    w.line("// + D where `accumulate` is not 0");
    w.block(
        format!(
            "__device__ __forceinline__ void wgmma_m64n{n}k{k}(float (&d)[{}][4], unsigned long long da, unsigned long long db, int accumulate)",
            n / 8
        ),
        |w| {
            // (8-bit types take no transpose operands: both are K-major)
            let operands = if a.is_fp8() {
                format!("%{}, %{}, accumulate, 1, 1;", regs, regs + 1)
            } else {
                format!("%{}, %{}, accumulate, 1, 1, {ta}, {tb};", regs, regs + 1)
            };
            wgmma_asm(w, (n, k), (pa, pb), &operands, regs + 2, "\"l\"(da), \"l\"(db), \"r\"(accumulate)");
        },
    );
    w.line("");
}

/// The register-fed form of [`wgmma`]: A (64x16) from four 32-bit registers
/// a thread, B (16xN, K-major) by descriptor.
fn wgmma_rs(w: &mut Writer, elem: Elem, n: u32) {
    let t = ptx_type(elem);
    let regs = n / 2;
    w.line(format!("// wgmma m64n{n}k16: D (64x{n} f32, {regs} a thread) = A (64x16 {t}, from registers: rows lane / 4 (+ 8),"));
    w.line("// K pairs 2 (lane % 4) (+ 8) of the warp's 16 rows) * B (16xN, K-major, by descriptor) + D where `accumulate` is not 0");
    w.block(
        format!(
            "__device__ __forceinline__ void wgmma_rs_m64n{n}k16(float (&d)[{}][4], const unsigned (&a)[4], unsigned long long db, int accumulate)",
            n / 8
        ),
        |w| {
            let operands = format!("{{%{}, %{}, %{}, %{}}}, %{}, accumulate, 1, 1, 0;", regs, regs + 1, regs + 2, regs + 3, regs + 4);
            let inputs = "\"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(db), \"r\"(accumulate)";
            wgmma_asm(w, (n, 16), (t, t), &operands, regs + 5, inputs);
        },
    );
    w.line("");
}

/// The inline assembly of a wgmma m64nNk16 on `t` elements: the `n / 2`
/// accumulators `d` first, then `operands` (A's and B's, the scales and
/// transposes), `accumulate` the operand at `accumulate_at`, then `inputs`.
fn wgmma_asm(w: &mut Writer, (n, k): (u32, u32), (ta, tb): (&str, &str), operands: &str, accumulate_at: u32, inputs: &str) {
    let regs = n / 2;
    let outs: Vec<String> = (0..regs).map(|i| format!("%{i}")).collect();
    w.line("asm volatile(");
    w.line("    \"{\\n.reg .pred accumulate;\\n\"");
    w.line(format!("    \"setp.ne.b32 accumulate, %{accumulate_at}, 0;\\n\""));
    w.line(format!("    \"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ta}.{tb} \""));
    for chunk in outs.chunks(16) {
        let first = chunk[0] == "%0";
        let last = chunk.last() == outs.last();
        w.line(format!("    \"{}{}{}\"", if first { "{" } else { "" }, chunk.join(", "), if last { "}, " } else { ", " }));
    }
    w.line(format!("    \"{operands}\\n}}\\n\""));
    let ops: Vec<String> = (0..regs).map(|i| format!("\"+f\"(d[{}][{}])", i / 4, i % 4)).collect();
    for (i, chunk) in ops.chunks(8).enumerate() {
        w.line(format!("    {} {}", if i == 0 { ":" } else { " " }, chunk.join(", ") + if (i + 1) * 8 < ops.len() { "," } else { "" }));
    }
    w.line(format!("    : {inputs});"));
}

/// The TMA store of a box from shared memory into a tensor, with the
/// bulk-group commit and waits around it and the proxy fence that makes
/// ordinary shared-memory stores visible to the copy engine.
pub fn tma_store(w: &mut Writer) {
    w.line("// TMA stores: a box of shared memory to (c0 innermost, c1, batch) of a tensor,");
    w.line("// the parts past its edges left out; issued stores form bulk groups");
    w.block("__device__ __forceinline__ void tma_store(const TensorMap& map, unsigned src, int c0, int c1, int batch)", |w| {
        w.line("asm volatile(");
        w.line("    \"cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\\n\"");
        w.line("    :: \"l\"(reinterpret_cast<unsigned long long>(&map)), \"r\"(src), \"r\"(c0), \"r\"(c1), \"r\"(batch)");
        w.line("    : \"memory\");");
    });
    w.block("__device__ __forceinline__ void bulk_commit()", |w| {
        w.line("asm volatile(\"cp.async.bulk.commit_group;\\n\" ::: \"memory\");");
    });
    w.line("// waits until at most N bulk groups may still read their shared memory");
    w.line("template <int N>");
    w.block("__device__ __forceinline__ void bulk_wait_read()", |w| {
        w.line("asm volatile(\"cp.async.bulk.wait_group.read %0;\\n\" :: \"n\"(N) : \"memory\");");
    });
    w.line("// waits until at most N bulk groups are incomplete (their writes done)");
    w.line("template <int N>");
    w.block("__device__ __forceinline__ void bulk_wait()", |w| {
        w.line("asm volatile(\"cp.async.bulk.wait_group %0;\\n\" :: \"n\"(N) : \"memory\");");
    });
    fence_proxy_async(w);
    w.line("");
}

/// Thread block clusters: this block's rank in its cluster, a barrier of
/// every thread of the cluster, and (`multicast`) the TMA load that writes
/// a box into every block of a mask, the arrival on another block's
/// mbarrier.
/// A cluster split along K: a float stored at a shared address of block
/// `cta` of the cluster (distributed shared memory), and one loaded from
/// this block's own.
pub fn cluster_floats(w: &mut Writer) {
    w.line("// a float into the shared memory of block `cta` of the cluster, at the address `addr` has in this one's");
    w.block("__device__ __forceinline__ void st_cluster_f32(unsigned addr, unsigned cta, float v)", |w| {
        w.line("asm volatile(");
        w.line("    \"{\\n.reg .b32 remote;\\n\"");
        w.line("    \"mapa.shared::cluster.u32 remote, %0, %1;\\n\"");
        w.line("    \"st.shared::cluster.f32 [remote], %2;\\n}\\n\"");
        w.line("    :: \"r\"(addr), \"r\"(cta), \"f\"(v) : \"memory\");");
    });
    w.block("__device__ __forceinline__ float ld_shared_f32(unsigned addr)", |w| {
        w.line("float v;");
        w.line("asm volatile(\"ld.shared.f32 %0, [%1];\\n\" : \"=f\"(v) : \"r\"(addr) : \"memory\");");
        w.line("return v;");
    });
    w.line("");
}

pub fn cluster(w: &mut Writer, multicast: bool) {
    w.line("// clusters: this block's rank among the cluster's blocks");
    w.block("__device__ __forceinline__ unsigned cluster_rank()", |w| {
        w.line("unsigned r;");
        w.line("asm(\"mov.u32 %0, %%cluster_ctarank;\\n\" : \"=r\"(r));  // not volatile: free to read again");
        w.line("return r;");
    });
    w.line("// every thread of every block of the cluster arrives, then waits for all the others");
    w.block("__device__ __forceinline__ void cluster_sync()", |w| {
        w.line("asm volatile(\"barrier.cluster.arrive.release.aligned;\\n\" ::: \"memory\");");
        w.line("asm volatile(\"barrier.cluster.wait.acquire.aligned;\\n\" ::: \"memory\");");
    });
    if !multicast {
        w.line("");
        return;
    }
    // Default (CTA-scope) release, as CUTLASS's ClusterBarrier: a cluster-scope
    // release fence in every consumer's arrival cost the clusters step a third
    // of its speed on the H100. The stage's readers are wgmmas already waited
    // for; nothing else needs ordering before the partner's next copy.
    w.line("// an arrival on the mbarrier at the same shared address in block `cta` of the cluster");
    w.block("__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned cta)", |w| {
        w.line("asm volatile(");
        w.line("    \"{\\n.reg .b32 remote;\\n\"");
        w.line("    \"mapa.shared::cluster.u32 remote, %0, %1;\\n\"");
        w.line("    \"mbarrier.arrive.shared::cluster.b64 _, [remote];\\n}\\n\"");
        w.line("    :: \"r\"(bar), \"r\"(cta) : \"memory\");");
    });
    w.line("// tma_load into the same shared address of every block in `mask` (bit i: rank i),");
    w.line("// each completing on its own mbarrier at `bar`");
    w.block(
        "__device__ __forceinline__ void tma_load_multicast(unsigned dst, const TensorMap& map, int c0, int c1, int batch, unsigned bar, unsigned short mask)",
        |w| {
            w.line("asm volatile(");
            w.line("    \"cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster\"");
            w.line("    \" [%0], [%1, {%2, %3, %4}], [%5], %6;\\n\"");
            w.line("    :: \"r\"(dst), \"l\"(reinterpret_cast<unsigned long long>(&map)), \"r\"(c0), \"r\"(c1), \"r\"(batch), \"r\"(bar), \"h\"(mask)");
            w.line("    : \"memory\");");
        },
    );
    w.line("");
}

/// `scale = block`'s copies beside the tiles: B's scales (`b_copies`;
/// otherwise the consumers read them) by a 4-byte cp.async whose landing
/// is one of the arrivals the stage's full barrier counts
/// (`cp.async.mbarrier.arrive.noinc`), and the bytes of A's, which TMA
/// brings, added to what the barrier expects. (The form without
/// `.noinc`, which adds an arrival pending until the copies land, is as
/// fast, but compute-sanitizer's synccheck stops the kernel at the
/// thread's next arrival on the barrier: "Missing wait".)
pub fn block_scale_copies(w: &mut Writer, b_copies: bool) {
    if b_copies {
        w.line("// a 4-byte copy into shared memory, and an arrival on the barrier once this thread's copies land");
        w.block("__device__ __forceinline__ void cp_async_4(unsigned dst, const void* src)", |w| {
            w.line("asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\\n\" :: \"r\"(dst), \"l\"(src) : \"memory\");");
        });
        w.block("__device__ __forceinline__ void cp_async_arrive(unsigned bar)", |w| {
            w.line("asm volatile(\"cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\\n\" :: \"r\"(bar) : \"memory\");");
        });
    }
    w.line("// bytes more for the barrier's phase to wait for, without an arrival");
    w.block("__device__ __forceinline__ void mbar_expect_more(unsigned bar, unsigned bytes)", |w| {
        w.line("asm volatile(\"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\\n\" :: \"r\"(bar), \"r\"(bytes) : \"memory\");");
    });
    w.line("");
}
