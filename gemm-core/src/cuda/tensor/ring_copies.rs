//! TMA staging's stages filled by `cp.async` (`staging = tma` with
//! `cp_async: Some(..)`): the variant the launcher runs where A's or B's
//! lines are not 16-byte aligned, which TMA cannot read. The ring, its
//! mbarriers, the roles and wgmma's reads stay those of `tma`; only the
//! filling changes, of both operands or of one (`only`), TMA still loading
//! the other:
//!
//! - the whole producer warpgroup copies each stage, `v` elements a copy,
//!   into the layout TMA would have made (boxes a swizzle row wide, the
//!   16-byte chunks of each line XORed by the line's place in the
//!   swizzle's period); a copy across the operand's edge is stored by the
//!   thread itself, what lies inside and zeros past it, never reading past;
//! - each producer thread arrives on the stage's full barrier for its own
//!   stores, and once more when its copies land
//!   (`cp.async.mbarrier.arrive.noinc`), so the barrier expects 256
//!   arrivals instead of one carrying the stage's bytes; where TMA loads
//!   one operand, thread 0 arrives once more, with that operand's bytes.
//!   (The form without `.noinc`, an arrival pending until the copies land
//!   beside the thread's own, is as correct, but compute-sanitizer's
//!   synccheck stops the kernel at the thread's next arrival: "Missing
//!   wait".)
//! - a consumer, past the full barrier, fences the async proxy: the copies
//!   wrote through the generic proxy, and wgmma reads through the async one.

use super::Tc;
use crate::cuda::ptx::storage_type;
use crate::cuda::writer::Writer;
use crate::spec::{RingCopies, Staging, Which};

/// Threads of the producer warpgroup that copy.
pub(super) const COPIERS: u32 = 128;

impl Tc<'_> {
    /// The cp.async copies that fill the stages, of both operands or one.
    pub(super) fn ring(&self) -> Option<RingCopies> {
        match self.spec.staging {
            Staging::Tma { cp_async, .. } => cp_async,
            _ => None,
        }
    }

    /// Arrivals that complete a phase of a full barrier under the copies:
    /// two of each copier's (its stores', its copies' landing), and where
    /// TMA loads the other operand thread 0's with that operand's bytes.
    pub(super) fn ring_arrivals(&self) -> u32 {
        match self.ring() {
            Some(RingCopies { only: Some(_), .. }) => 2 * COPIERS + 1,
            _ => 2 * COPIERS,
        }
    }

    /// The copies, their barrier arrival and each operand's copy of a stage.
    pub(super) fn ring_copy_helpers(&self, w: &mut Writer, v: u32) {
        let bytes = v * self.spec.a.elem.bytes();
        let cache = if bytes == 16 { "cg" } else { "ca" };
        w.line(format!("// cp.async of {bytes} bytes (through L1 below 16)"));
        w.block(format!("__device__ __forceinline__ void cp_async_{bytes}(unsigned dst, const void* src)"), |w| {
            w.line(format!("asm volatile(\"cp.async.{cache}.shared.global [%0], [%1], {bytes};\\n\" :: \"r\"(dst), \"l\"(src));"));
        });
        // A copy across an edge is stored by the thread, not by cp.async with
        // a source size: that form read past the operand's end under
        // compute-sanitizer, and ran tma_store's 8-byte copies at 345 TFLOP/s
        // on the H100 against 468 without it.
        let ty = storage_type(self.spec.a.elem);
        let words = bytes / 4;
        w.line(format!("// a copy across an edge: the first n (fewer than {v}) elements at src, zeros after, stored by this thread"));
        w.block(format!("__device__ __forceinline__ void ring_part_{bytes}(unsigned dst, const {ty}* src, int n)"), |w| {
            w.line(format!("unsigned w[{words}] = {{{}}};", vec!["0u"; words as usize].join(", ")));
            w.line("#pragma unroll");
            w.block(format!("for (int j = 0; j < {v}; ++j)"), |w| {
                w.line("if (j < n) w[j / 2] |= (unsigned)src[j] << (16 * (j % 2));");
            });
            let (vec, regs) = match words {
                1 => ("u32", "%1".to_string()),
                n => (if n == 2 { "v2.u32" } else { "v4.u32" }, format!("{{{}}}", (1..=n).map(|i| format!("%{i}")).collect::<Vec<_>>().join(", "))),
            };
            let args: Vec<String> = (0..words).map(|i| format!("\"r\"(w[{i}])")).collect();
            w.line(format!("asm volatile(\"st.shared.{vec} [%0], {regs};\\n\" :: \"r\"(dst), {} : \"memory\");", args.join(", ")));
        });
        w.line("// this thread's two arrivals on `bar`: one made once every cp.async it issued so far has landed,");
        w.line("// and one for its own stores (the 128 copiers' 256 complete the phase)");
        w.block("__device__ __forceinline__ void ring_arrive(unsigned bar)", |w| {
            w.line("asm volatile(\"cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\\n\" :: \"r\"(bar) : \"memory\");");
            w.line("asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\" :: \"r\"(bar) : \"memory\");");
        });
        if self.spec.epilogue != crate::spec::Epilogue::Tma {
            // (the TMA store's helpers have it already)
            crate::cuda::ptx::fence_proxy_async(w);
        }
        w.line("");
        for which in [Which::A, Which::B] {
            if self.spec.tma_loads(which) {
                self.ring_tma_fn(w, which);
            } else {
                self.ring_copy_fn(w, which, v);
            }
        }
    }

    /// `ring_tma_a` / `ring_tma_b`: thread 0's arrival with the bytes of the
    /// operand TMA loads beside the copies of the other, and its loads.
    /// Out of line: inlined beside the copies, it made the 4-byte form spill.
    fn ring_tma_fn(&self, w: &mut Writer, which: Which) {
        let (name, origin) = if which == Which::A { ("a", "block_m") } else { ("b", "block_n") };
        let bytes = self.spec.tma_tile(which).bytes();
        w.line(format!(
            "// staging (tma, beside the copies): thread 0's arrival with the {bytes} bytes of {}'s tile, and its loads",
            name.to_uppercase()
        ));
        let params = format!("unsigned bar, unsigned dst, int k0, int {origin}, int {name}_batch, const TensorMap& tmap_{name}");
        w.block(format!("__device__ __noinline__ void ring_tma_{name}({params})"), |w| {
            w.line(format!("mbar_expect_bytes(bar, {bytes});"));
            self.tile_loads(w, which, "dst");
        });
        w.line("");
    }

    /// `ring_copy_a` / `ring_copy_b`: the producer warpgroup's copies of one
    /// stage of the operand's tile, `v` elements a copy.
    fn ring_copy_fn(&self, w: &mut Writer, which: Which, v: u32) {
        let s = self.spec;
        let t = s.tma_tile(which);
        let op = if which == Which::A { s.a } else { s.b };
        let es = op.elem.bytes();
        let (name, mn) = if which == Which::A { ("a", self.bm) } else { ("b", self.bn) };
        // lines of the tile and their length: along K for a K-major tile, along m or n otherwise
        let (lines, len) = if t.k_major { (mn, self.bk) } else { (self.bk, mn) };
        let per_line = len / v;
        let copies = lines * per_line / COPIERS;
        let box_bytes = lines * t.swizzle;
        let (line_what, len_what) =
            if t.k_major { (if which == Which::A { "m" } else { "n" }, "k") } else { ("k", if which == Which::A { "m" } else { "n" }) };
        w.line(format!(
            "// staging (tma, by cp.async): a stage of {}'s tile, {lines} lines (along {line_what}) of {len} elements (along {len_what}), laid out",
            name.to_uppercase()
        ));
        w.line(format!(
            "// as TMA lays it: boxes of {} elements a line, {box_bytes} bytes apart, their 16-byte chunks in the {}-byte swizzle;",
            t.inner, t.swizzle
        ));
        w.line("// line l, element c from (line0 + l, c0 + c) of the operand, zeros past (lines, len);");
        // a thread copies the same place c of every `step`-th line: its address
        // moves by `step` lines a copy, its place in the stage by `step` lines too
        let step = COPIERS / per_line;
        w.line(format!("// {v} elements a copy, {copies} copies a thread of the producer warpgroup, each the same place of every {step}th line"));
        let ty = storage_type(op.elem);
        let (inner, sw, mask) = (t.inner, t.swizzle, t.swizzle / 16 - 1);
        // the swizzle's XOR repeats every 8 lines (1024 bytes of 128-byte lines, 512 of 64, 256 of 32)
        let periodic = step.is_multiple_of(8);
        w.block(
            format!("__device__ __forceinline__ void ring_copy_{name}(unsigned dst, const {ty}* src, int ld, int line0, int c0, int lines, int len)"),
            |w| {
                w.line(format!("const int l = threadIdx.x % {COPIERS} / {per_line};  // the first line"));
                w.line(format!("const int c = threadIdx.x % {per_line} * {v};"));
                w.line(format!("const unsigned box = dst + (c / {inner}) * {box_bytes};  // the box the place lies in"));
                w.line(format!("const unsigned byte = (c % {inner}) * {es};  // and its byte in a line of it"));
                let swizzled = format!("off ^= ((off >> 7) & {mask}) << 4;  // the swizzle: 16-byte chunk ^= the line's place in {} bytes", sw * 8);
                if periodic {
                    w.line(format!("// the first line's place, swizzled: the same XOR every {step}th line"));
                    w.line(format!("unsigned off = l * {sw} + byte;"));
                    w.line(&swizzled);
                }
                w.line(format!("const {ty}* p = src + (long long)(line0 + l) * ld + c0 + c;"));
                // the copies, all reading whole (`edge` false) or each what lies inside the operand
                let copies_loop = |w: &mut Writer, edge: bool| {
                    w.line("#pragma unroll 8");
                    w.block(format!("for (int i = 0; i < {copies}; ++i, p += {step} * (long long)ld)"), |w| {
                        let at = if periodic {
                            format!("box + off + i * {}", step * sw)
                        } else {
                            w.line(format!("unsigned off = (l + {step} * i) * {sw} + byte;"));
                            w.line(&swizzled);
                            "box + off".to_string()
                        };
                        if edge {
                            w.line(format!("const int n = line0 + l + {step} * i < lines ? read : 0;"));
                            w.line(format!("if (n == {v}) cp_async_{}({at}, p);", v * es));
                            w.line(format!("else ring_part_{}({at}, p, n);", v * es));
                        } else {
                            w.line(format!("cp_async_{}({at}, p);", v * es));
                        }
                    });
                };
                w.block(format!("if (line0 + {lines} <= lines && c0 + {len} <= len)"), |w| {
                    w.line("// the whole tile lies inside the operand");
                    copies_loop(w, false);
                });
                w.block("else", |w| {
                    w.line("// elements read from each line: all, the few before its end, or none past the edge");
                    w.line(format!("const int read = c0 + c < len ? min({v}, len - (c0 + c)) : 0;"));
                    copies_loop(w, true)
                });
            },
        );
        w.line("");
    }

    /// The copies of K tile `k0` (in scope) into stage `stage` by the
    /// producer warpgroup, then its thread's arrival on the full barrier `bar`
    /// (in scope); where TMA loads one operand, thread 0 first arrives with
    /// its bytes and loads it.
    pub(super) fn ring_issue(&self, w: &mut Writer, stage: &str) {
        let (a_bytes, b_bytes) = self.stage_bytes();
        for (which, base, bytes) in [(Which::A, "a_smem", a_bytes), (Which::B, "b_smem", b_bytes)] {
            if self.spec.tma_loads(which) {
                let (name, origin) = if which == Which::A { ("a", "block_m") } else { ("b", "block_n") };
                w.line(format!("if (threadIdx.x == 0) ring_tma_{name}(bar, {base} + {stage} * {bytes}, k0, {origin}, {name}_batch, tmap_{name});"));
            }
        }
        let call = |w: &mut Writer, which: Which, base: &str, bytes: u32| {
            let (name, ptr, ld, batch, batch_stride, origin, extent) = match which {
                Which::A => ("a", "A", "lda", "a_batch", "batch_a", "block_m", "M"),
                Which::B => ("b", "B", "ldb", "b_batch", "batch_b", "block_n", "N"),
            };
            let k_major = self.spec.tma_tile(which).k_major;
            // lines along the block's side (K-major) or along K
            let (line0, c0, lines, len) = if k_major { (origin, "k0", extent, "K") } else { ("k0", origin, "K", extent) };
            w.line(format!("ring_copy_{name}({base} + {stage} * {bytes}, {ptr} + {batch} * {batch_stride}, {ld}, {line0}, {c0}, {lines}, {len});"));
        };
        for (which, base, bytes) in [(Which::A, "a_smem", a_bytes), (Which::B, "b_smem", b_bytes)] {
            if !self.spec.tma_loads(which) {
                call(w, which, base, bytes);
            }
        }
        w.line("ring_arrive(bar);  // this thread's arrival, its copies of the stage landed");
    }
}
