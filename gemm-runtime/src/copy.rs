//! The 2-D copy that [`crate::realign`] moves misaligned operands with: each
//! line of a matrix (each problem of a batch) from one pitch to another, on
//! the stream, by a small kernel of our own. Done by `cuMemcpy2DAsync`, the
//! copies of lines of odd pitch cost the H100 far more than their traffic
//! at HBM's speed (BENCHMARKS.md, "Twelve shapes"). Here a block takes a
//! line at a time and writes it in 16-byte chunks, each read as the two
//! aligned 16-byte chunks of the source it spans and shifted into place,
//! whatever either side's alignment; the few elements before the first
//! chunk and after the last go one at a time, and so does any chunk whose
//! aligned reads would reach past the line.

use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use gemm_core::spec::Arch;

use crate::compile;
use crate::GemmError;

/// Threads of a copy block, and the most blocks a copy launches.
const THREADS: u32 = 256;
const MAX_BLOCKS: u64 = 4096;

/// The kernel's name for elements of `bytes` bytes (2 or 4).
pub(crate) fn kernel_name(bytes: usize) -> String {
    format!("gemm_tiles_copy_2d_b{bytes}")
}

/// The copy kernel for elements of `bytes` bytes (2 or 4), header-free CUDA.
pub(crate) fn source(bytes: usize) -> String {
    let ty = if bytes == 2 { "unsigned short" } else { "unsigned int" };
    let name = kernel_name(bytes);
    let per = 16 / bytes;
    format!(
        r#"// Copies `height` lines of `width` elements ({bytes} bytes each) from `src`
// (lines `src_pitch` elements apart) to `dst` (`dst_pitch` apart), for each
// of `count` problems (`src_stride` and `dst_stride` elements apart), at any
// alignment: a block a line at a time, in 16-byte chunks of `dst`.
struct chunk16 {{ unsigned long long x, y; }};

extern "C" __global__ void __launch_bounds__({THREADS}) {name}(
    const {ty}* __restrict__ src, long long src_pitch, long long src_stride,
    {ty}* __restrict__ dst, long long dst_pitch, long long dst_stride,
    long long width, int height, int count)
{{
    for (long long job = blockIdx.x; job < (long long)height * count; job += gridDim.x) {{
        const long long z = job / height, line = job % height;
        const {ty}* const s = src + z * src_stride + line * src_pitch;
        {ty}* const d = dst + z * dst_stride + line * dst_pitch;
        // the elements before d's first 16-byte boundary, one a thread
        const long long to_boundary = (long long)((16 - ((unsigned long long)d & 15)) & 15) / {bytes};
        const long long head = width < to_boundary ? width : to_boundary;
        if (threadIdx.x < head) d[threadIdx.x] = s[threadIdx.x];
        // then whole chunks of {per}: chunk c of d is bytes [shift, shift + 16) of the source's
        // aligned chunks c and c + 1 (from `at`), inside the line's bytes [lo, hi)
        const {ty}* const body = s + head;
        {ty}* const out = d + head;
        const long long chunks = (width - head) / {per};
        const unsigned shift = (unsigned)((unsigned long long)body & 15);
        const chunk16* const at = (const chunk16*)((const char*)body - shift);
        const long long lo = (long long)shift - head * {bytes}, hi = (long long)shift + (width - head) * {bytes};
        const long long span = shift ? 32 : 16;
        const unsigned q = shift / 8, r = (shift % 8) * 8;  // whole words, then bits
        for (long long c = threadIdx.x; c < chunks; c += {THREADS}) {{
            if (16 * c >= lo && 16 * c + span <= hi) {{
                const chunk16 a = at[c];
                const chunk16 b = shift ? at[c + 1] : a;
                const unsigned long long w0 = q ? a.y : a.x, w1 = q ? b.x : a.y, w2 = q ? b.y : b.x;
                chunk16 v;
                v.x = r ? (w0 >> r) | (w1 << (64 - r)) : w0;
                v.y = r ? (w1 >> r) | (w2 << (64 - r)) : w1;
                ((chunk16*)out)[c] = v;
            }} else {{
                // the aligned reads would reach past the line: one element at a time
                for (int e = 0; e < {per}; ++e) out[c * {per} + e] = body[c * {per} + e];
            }}
        }}
        // the elements after the last whole chunk, one a thread
        const long long done = head + chunks * {per};
        if (done + threadIdx.x < width) d[done + threadIdx.x] = s[done + threadIdx.x];
    }}
}}
"#
    )
}

/// One 2-D copy per problem of a batch: byte addresses, pitches and strides
/// (multiples of the element's size), `width` bytes on each of `height`
/// lines.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Copy2d {
    pub bytes: usize,
    pub src: u64,
    pub src_pitch: usize,
    pub src_stride: usize,
    pub dst: u64,
    pub dst_pitch: usize,
    pub dst_stride: usize,
    pub width: usize,
    pub height: usize,
    pub count: usize,
}

impl Copy2d {
    /// The copy, on `stream`: compiled by NVRTC on first use (and cached as
    /// every kernel is).
    pub fn run(&self, stream: &CudaStream) -> Result<(), GemmError> {
        let ctx = stream.context();
        let target = compile::device_target(Arch::Sm80, ctx.compute_capability()?);
        let f = compile::load(ctx, &source(self.bytes), &kernel_name(self.bytes), target, 0)?;
        let width = (self.width / self.bytes) as u64;
        let lines = (self.height * self.count) as u64;
        let cfg = LaunchConfig { grid_dim: (lines.clamp(1, MAX_BLOCKS) as u32, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        let el = |b: usize| (b / self.bytes) as i64;
        let (src_pitch, src_stride, dst_pitch, dst_stride) = (el(self.src_pitch), el(self.src_stride), el(self.dst_pitch), el(self.dst_stride));
        let (width, height, count) = (width as i64, self.height as i32, self.count as i32);
        let mut launch = stream.launch_builder(&f);
        launch.arg(&self.src).arg(&src_pitch).arg(&src_stride).arg(&self.dst).arg(&dst_pitch).arg(&dst_stride);
        launch.arg(&width).arg(&height).arg(&count);
        // SAFETY: the parameters are as `source` declares them; both regions
        // lie inside their buffers (the source's by the launch's checks of
        // its shape and batch, the scratch's by its size), and the kernel
        // touches nothing past `width` elements of a line.
        unsafe { launch.launch(cfg) }?;
        Ok(())
    }

    /// The same copy the other way (C's copy back into the caller's buffer).
    pub fn reversed(self) -> Self {
        Copy2d {
            src: self.dst,
            src_pitch: self.dst_pitch,
            src_stride: self.dst_stride,
            dst: self.src,
            dst_pitch: self.src_pitch,
            dst_stride: self.src_stride,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both copy kernels compile with NVRTC for the oldest target they run on.
    #[test]
    fn the_copy_kernels_compile_with_nvrtc() {
        for bytes in [2, 4] {
            let ptx = compile::compile(&source(bytes), &kernel_name(bytes), "sm_80").unwrap_or_else(|e| panic!("{bytes}-byte copy: {e}"));
            assert!(ptx.to_src().contains(&format!(".entry {}", kernel_name(bytes))));
        }
    }

    /// The copy kernel compiled as plain C++ by the host compiler, its grid
    /// walked thread by thread (it has no barriers), over lines of odd
    /// width, pitch and offset on either side (every shift of the 16-byte
    /// chunks' reads among them) and batches of two: every element lands
    /// where it belongs, and nothing past a line's width or between
    /// problems is written.
    #[test]
    fn the_copy_kernel_moves_every_element_and_nothing_else() {
        for bytes in [2usize, 4] {
            let src = source(bytes);
            let ty = if bytes == 2 { "unsigned short" } else { "unsigned int" };
            let shim = "#include <cstdio>\n#include <vector>\n#define __global__\n#define __restrict__\n#define __launch_bounds__(n)\n\
                struct Dim3 { unsigned x, y, z; };\nstatic Dim3 blockIdx, threadIdx, gridDim, blockDim;\n";
            // cases: width, height, count, src offset, src pitch, dst offset, dst pitch (elements), grid x
            let cases = [
                (65, 3, 1, 1, 67, 0, 72, 1),
                (4097, 5, 2, 3, 4103, 0, 4104, 2),
                (8, 4, 1, 0, 8, 1, 9, 1),
                (3, 2, 2, 0, 3, 5, 11, 1),
                (1000, 2, 1, 7, 1003, 7, 1003, 3),
                // A's lines at K = 4100 into 128-byte lines, and a C tile's copy back to odd lines
                (4100, 3, 1, 4, 4100, 0, 4160, 2),
                (777, 4, 2, 0, 832, 3, 777, 5),
            ];
            let mut body = String::new();
            for (i, (w, h, n, so, sp, d_off, dp, gx)) in cases.iter().enumerate() {
                let (ss, ds) = (sp * h + 5, dp * h + 3);
                body += &format!(
                    "  {{ std::vector<{ty}> s({so} + {ss} * {n} + 64), d({d_off} + {ds} * {n} + 64, 0xAB);\n\
                     for (size_t i = 0; i < s.size(); ++i) s[i] = ({ty})(i * 7 + 1);\n\
                     gridDim = {{{gx}, 1, 1}}; blockDim = {{{THREADS}, 1, 1}};\n\
                     for (unsigned z = 0; z < gridDim.z; ++z) for (unsigned y = 0; y < gridDim.y; ++y) for (unsigned x = 0; x < gridDim.x; ++x) for (unsigned t = 0; t < blockDim.x; ++t) {{\n\
                       blockIdx = {{x, y, z}}; threadIdx = {{t, 0, 0}};\n\
                       {name}(s.data() + {so}, {sp}, {ss}, d.data() + {d_off}, {dp}, {ds}, {w}, {h}, {n}); }}\n\
                     int bad = 0;\n\
                     for (size_t i = 0; i < d.size(); ++i) {{\n\
                       long long at = (long long)i - {d_off}; long long z = at / {ds}, r = at % {ds}, line = r / {dp}, e = r % {dp};\n\
                       bool inside = at >= 0 && z < {n} && line < {h} && e < {w};\n\
                       {ty} want = inside ? s[{so} + z * {ss} + line * {sp} + e] : ({ty})0xAB;\n\
                       if (d[i] != want) ++bad; }}\n\
                     std::printf(\"case {i}: %d\\n\", bad); }}\n",
                    name = kernel_name(bytes)
                );
            }
            let program = format!("{shim}{src}\nint main() {{\n{body}}}\n");
            let dir = std::env::temp_dir().join(format!("gemm-copy-{}-{bytes}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("copy.cpp"), &program).unwrap();
            let built = std::process::Command::new("c++").arg("-O1").arg("-o").arg(dir.join("copy")).arg(dir.join("copy.cpp")).output();
            let built = built.expect("a host C++ compiler (c++)");
            assert!(built.status.success(), "the copy kernel compiles as C++: {}", String::from_utf8_lossy(&built.stderr));
            let out = std::process::Command::new(dir.join("copy")).output().unwrap();
            let _ = std::fs::remove_dir_all(&dir);
            let text = String::from_utf8(out.stdout).unwrap();
            assert_eq!(text.lines().count(), cases.len(), "{text}");
            for line in text.lines() {
                assert!(line.ends_with(": 0"), "{bytes}-byte elements, {line} elements wrong");
            }
        }
    }
}
