//! The 2-D copy that [`crate::realign`] moves misaligned operands with: each
//! line of a matrix (each problem of a batch) from one pitch to another, on
//! the stream, by a small kernel of our own. Done by `cuMemcpy2DAsync`, the
//! copies of lines of odd pitch cost the H100 far more than their traffic
//! at HBM's speed (BENCHMARKS.md, "Twelve shapes"). Here a block takes a
//! line at a time and writes it in 16-byte chunks, each read as the two
//! aligned 16-byte chunks of the source it spans and shifted into place,
//! whatever either side's alignment; the few elements before the first
//! chunk and after the last go one at a time, and so does any chunk whose
//! aligned reads would reach past the line. The copies a launch needs
//! before its kernel (A's and B's, C's under `beta`) go in one launch of
//! the copy kernel: at 4095 x 4097 x 4100 that ran the GEMM 1.2-2%
//! faster than a launch a copy (BENCHMARKS.md).

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg};
use gemm_core::spec::Arch;

use crate::compile;
use crate::placement;
use crate::{Element, GemmError};

/// Threads of a copy block, and the most blocks a copy launches.
const THREADS: u32 = 256;
const MAX_BLOCKS: u64 = 4096;
/// The most copies one launch makes (A, B and C; the kernel picks among three).
pub(crate) const MAX_COPIES: usize = 3;
// the kernel's choice of copy is written for three
const _: () = assert!(MAX_COPIES == 3);

/// The kernel's name for elements of `bytes` bytes (1, 2 or 4).
pub(crate) fn kernel_name(bytes: usize) -> String {
    format!("gemm_tiles_copy_2d_b{bytes}")
}

/// The CUDA type that moves an element of `bytes` bytes (1, 2 or 4).
fn element_type(bytes: usize) -> &'static str {
    match bytes {
        1 => "unsigned char",
        2 => "unsigned short",
        _ => "unsigned int",
    }
}

/// The copy kernel for elements of `bytes` bytes (1, 2 or 4), header-free CUDA.
pub(crate) fn source(bytes: usize) -> String {
    let ty = element_type(bytes);
    let name = kernel_name(bytes);
    let per = 16 / bytes;
    format!(
        r#"// Copies, for each of `n` copies, `height` lines of `width` elements ({bytes} bytes each) from `src`
// (lines `src_pitch` elements apart) to `dst` (`dst_pitch` apart), for each of `count` problems
// (`src_stride` and `dst_stride` elements apart), at any alignment: a block a line at a time, in
// 16-byte chunks of `dst`, the copies' lines one after another over the grid.
struct chunk16 {{ unsigned long long x, y; }};
struct Copy {{
    const {ty}* src; long long src_pitch, src_stride;
    {ty}* dst; long long dst_pitch, dst_stride;
    long long width; int height, count;
}};
struct Copies {{ Copy c[{MAX_COPIES}]; int n; }};

extern "C" __global__ void __launch_bounds__({THREADS}) {name}(const Copies copies)
{{
    // each copy's lines (of every problem), none past the n given
    long long lines[3];
    #pragma unroll
    for (int i = 0; i < 3; ++i) lines[i] = i < copies.n ? (long long)copies.c[i].height * copies.c[i].count : 0;
    for (long long job = blockIdx.x; job < lines[0] + lines[1] + lines[2]; job += gridDim.x) {{
        // the copy this line belongs to (chosen, not indexed: the parameters stay where they are)
        const int i = job < lines[0] ? 0 : job < lines[0] + lines[1] ? 1 : 2;
        const long long at = job - (i > 0 ? lines[0] : 0) - (i > 1 ? lines[1] : 0);
        const Copy cp = i == 0 ? copies.c[0] : i == 1 ? copies.c[1] : copies.c[2];
        const long long z = at / cp.height, line = at % cp.height, width = cp.width;
        const {ty}* const s = cp.src + z * cp.src_stride + line * cp.src_pitch;
        {ty}* const d = cp.dst + z * cp.dst_stride + line * cp.dst_pitch;
        // the elements before d's first 16-byte boundary, one a thread
        const long long to_boundary = (long long)((16 - ((unsigned long long)d & 15)) & 15) / {bytes};
        const long long head = width < to_boundary ? width : to_boundary;
        if (threadIdx.x < head) d[threadIdx.x] = s[threadIdx.x];
        // then whole chunks of {per}: chunk c of d is bytes [shift, shift + 16) of the source's
        // aligned chunks c and c + 1 (from `from`), inside the line's bytes [lo, hi)
        const {ty}* const body = s + head;
        {ty}* const out = d + head;
        const long long chunks = (width - head) / {per};
        const unsigned shift = (unsigned)((unsigned long long)body & 15);
        const chunk16* const from = (const chunk16*)((const char*)body - shift);
        const long long lo = (long long)shift - head * {bytes}, hi = (long long)shift + (width - head) * {bytes};
        const long long span = shift ? 32 : 16;
        const unsigned q = shift / 8, r = (shift % 8) * 8;  // whole words, then bits
        for (long long c = threadIdx.x; c < chunks; c += {THREADS}) {{
            if (16 * c >= lo && 16 * c + span <= hi) {{
                const chunk16 a = from[c];
                const chunk16 b = shift ? from[c + 1] : a;
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

/// A copy as the kernel's `Copy` lays it out: pointers, then counts in elements.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct KernelCopy {
    src: u64,
    src_pitch: i64,
    src_stride: i64,
    dst: u64,
    dst_pitch: i64,
    dst_stride: i64,
    width: i64,
    height: i32,
    count: i32,
}

/// The kernel's parameter: up to [`MAX_COPIES`] copies, `n` of them made.
#[repr(C)]
#[derive(Clone, Copy)]
struct KernelCopies {
    c: [KernelCopy; MAX_COPIES],
    n: i32,
}

// SAFETY: plain integers, laid out as the kernel's `Copies` (8-byte fields, then two ints, per copy).
unsafe impl DeviceRepr for KernelCopies {}

impl Copy2d {
    /// The copy, on `stream`.
    pub fn run(&self, stream: &CudaStream) -> Result<(), GemmError> {
        run_all(stream, &[*self])
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

/// Copies `lines` lines of `width` elements from `src`, its lines `src_ld`
/// elements apart, to `dst`, lines `dst_ld` apart, on `stream`, at any
/// alignment of either side: the copy the launcher moves misaligned operands
/// with (its kernel is compiled on first use). An `Err` where a side's
/// lines do not lie inside its buffer; nothing to do where `lines` or
/// `width` is 0.
pub fn copy_lines<T: Element>(
    stream: &CudaStream,
    src: &impl DevicePtr<T>,
    src_ld: usize,
    dst: &mut impl DevicePtrMut<T>,
    dst_ld: usize,
    (lines, width): (usize, usize),
) -> Result<(), GemmError> {
    if lines == 0 || width == 0 {
        return Ok(());
    }
    check_side("source", (lines, width), src_ld, src.len())?;
    check_side("destination", (lines, width), dst_ld, dst.len())?;
    placement::check(stream, "the source", src)?;
    placement::check(stream, "the destination", dst)?;
    let bytes = T::ELEM.bytes() as usize;
    // a single line's pitch is never used: kept within the buffer, so that no product overflows
    let pitch = |ld: usize| if lines == 1 { width * bytes } else { ld * bytes };
    let (from, _read) = src.device_ptr(stream);
    let (to, _written) = dst.device_ptr_mut(stream);
    run_all(
        stream,
        &[Copy2d {
            bytes,
            src: from,
            src_pitch: pitch(src_ld),
            src_stride: 0,
            dst: to,
            dst_pitch: pitch(dst_ld),
            dst_stride: 0,
            width: width * bytes,
            height: lines,
            count: 1,
        }],
    )
}

/// One side of [`copy_lines`]: `lines` of `width` elements, `ld` apart,
/// inside a buffer of `len` elements, and few enough lines for the
/// kernel's 32-bit count.
fn check_side(side: &str, (lines, width): (usize, usize), ld: usize, len: usize) -> Result<(), GemmError> {
    if ld < width {
        return Err(GemmError::Copy(format!("the {side}'s lines lie {ld} elements apart, fewer than the {width} each holds")));
    }
    if lines > i32::MAX as usize {
        return Err(GemmError::Copy(format!("{lines} lines, past the {} one copy takes", i32::MAX)));
    }
    let Some(needed) = (lines - 1).checked_mul(ld).and_then(|x| x.checked_add(width)) else {
        return Err(GemmError::Copy(format!("{lines} lines of {width} elements, {ld} apart, reach past any buffer")));
    };
    if needed > len {
        return Err(GemmError::Copy(format!(
            "{lines} lines of {width} elements, {ld} apart, need {needed} elements of the {side}, but its buffer holds {len}"
        )));
    }
    Ok(())
}

/// `copies` (at most [`MAX_COPIES`], of one element size) on `stream` in
/// one launch of the copy kernel, compiled by NVRTC on first use (and
/// cached as every kernel is).
pub(crate) fn run_all(stream: &CudaStream, copies: &[Copy2d]) -> Result<(), GemmError> {
    let Some(first) = copies.first() else { return Ok(()) };
    let bytes = first.bytes;
    assert!(copies.len() <= MAX_COPIES && copies.iter().all(|c| c.bytes == bytes), "at most {MAX_COPIES} copies of one element size");
    let ctx = stream.context();
    let target = compile::device_target(Arch::Sm80, ctx.compute_capability()?);
    let f = compile::load(ctx, &source(bytes), &kernel_name(bytes), target, 0)?;
    let el = |b: usize| (b / bytes) as i64;
    let mut param = KernelCopies { c: [KernelCopy::default(); MAX_COPIES], n: copies.len() as i32 };
    for (k, c) in param.c.iter_mut().zip(copies) {
        *k = KernelCopy {
            src: c.src,
            src_pitch: el(c.src_pitch),
            src_stride: el(c.src_stride),
            dst: c.dst,
            dst_pitch: el(c.dst_pitch),
            dst_stride: el(c.dst_stride),
            width: el(c.width),
            height: c.height as i32,
            count: c.count as i32,
        };
    }
    let lines: u64 = copies.iter().map(|c| (c.height * c.count) as u64).sum();
    let cfg = LaunchConfig { grid_dim: (lines.clamp(1, MAX_BLOCKS) as u32, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut launch = stream.launch_builder(&f);
    launch.arg(&param);
    // SAFETY: the parameter is as `source` declares it; every copy's regions
    // lie inside their buffers (the source's by the launch's checks of its
    // shape and batch, the scratch's by its size), and the kernel touches
    // nothing past `width` elements of a line.
    unsafe { launch.launch(cfg) }?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `copy_lines` refuses a side whose lines overlap or reach past its
    /// buffer, and takes one whose last line ends exactly at its end (or a
    /// single line, whatever its pitch).
    #[test]
    fn a_copys_sides_must_hold_their_lines() {
        assert!(check_side("source", (3, 5), 7, 2 * 7 + 5).is_ok());
        // a single line's pitch is never used, however large
        assert!(check_side("source", (1, 5), usize::MAX, 5).is_ok());
        let short = check_side("source", (3, 5), 7, 2 * 7 + 4).unwrap_err().to_string();
        assert!(short.contains("need 19 elements of the source, but its buffer holds 18"), "{short}");
        let overlap = check_side("destination", (3, 5), 4, 100).unwrap_err().to_string();
        assert!(overlap.contains("4 elements apart, fewer than the 5"), "{overlap}");
        let huge = check_side("source", (usize::MAX / 2, 5), 7, 100).unwrap_err().to_string();
        assert!(huge.contains("lines, past the"), "{huge}");
        let wraps = check_side("source", (1 << 30, 5), usize::MAX / 4, 100).unwrap_err().to_string();
        assert!(wraps.contains("reach past any buffer"), "{wraps}");
    }

    /// The copy kernels (8-, 16- and 32-bit elements) compile with NVRTC for the oldest target they run on.
    #[test]
    fn the_copy_kernels_compile_with_nvrtc() {
        for bytes in [1, 2, 4] {
            let ptx = compile::compile(&source(bytes), &kernel_name(bytes), "sm_80").unwrap_or_else(|e| panic!("{bytes}-byte copy: {e}"));
            assert!(ptx.to_src().contains(&format!(".entry {}", kernel_name(bytes))));
        }
    }

    /// The copy kernel compiled as plain C++ by the host compiler, its grid
    /// walked thread by thread (it has no barriers), over lines of odd
    /// width, pitch and offset on either side (every shift of the 16-byte
    /// chunks' reads among them) and batches of two, one copy a launch and
    /// several in one: every element lands where it belongs, and nothing
    /// past a line's width or between problems is written.
    #[test]
    fn the_copy_kernel_moves_every_element_and_nothing_else() {
        for bytes in [1usize, 2, 4] {
            let src = source(bytes);
            let ty = element_type(bytes);
            let shim = "#include <cstdio>\n#include <vector>\n#define __global__\n#define __restrict__\n#define __launch_bounds__(n)\n\
                struct Dim3 { unsigned x, y, z; };\nstatic Dim3 blockIdx, threadIdx, gridDim, blockDim;\n";
            // cases: width, height, count, src offset, src pitch, dst offset, dst pitch (elements)
            let cases = [
                (65, 3, 1, 1, 67, 0, 72),
                (4097, 5, 2, 3, 4103, 0, 4104),
                (8, 4, 1, 0, 8, 1, 9),
                (3, 2, 2, 0, 3, 5, 11),
                (1000, 2, 1, 7, 1003, 7, 1003),
                // A's lines at K = 4100 into 128-byte lines, and a C tile's copy back to odd lines
                (4100, 3, 1, 4, 4100, 0, 4160),
                (777, 4, 2, 0, 832, 3, 777),
            ];
            let listed: Vec<String> =
                cases.iter().map(|(w, h, n, so, sp, d_off, dp)| format!("{{{w}, {h}, {n}, {so}, {sp}, {d_off}, {dp}}}")).collect();
            // each case alone on grids of 1 to 5 blocks, then several in one launch
            let launches = [("0", 1), ("1", 2), ("2", 1), ("3", 1), ("4", 3), ("5", 2), ("6", 5), ("0, 1, 6", 4), ("3, 4", 1), ("5, 2", 7)];
            let mut body = String::new();
            for (which, grid) in launches {
                body +=
                    &format!("  {{ const Case cs[] = {{ {} }};\n", which.split(", ").map(|i| format!("cases[{i}]")).collect::<Vec<_>>().join(", "));
                body += &format!("    std::printf(\"cases {which}: %d\\n\", run(cs, sizeof cs / sizeof cs[0], {grid})); }}\n");
            }
            let harness = format!(
                "struct Case {{ long long w; int h, n; long long so, sp, d_off, dp; }};\n\
                 static const Case cases[] = {{ {cases} }};\n\
                 // copies cs[0..k) in one launch of `grid` blocks; the elements wrong, over every destination\n\
                 static int run(const Case* cs, int k, unsigned grid) {{\n\
                   std::vector<std::vector<{ty}>> s(k), d(k);\n\
                   Copies all{{}}; all.n = k;\n\
                   for (int i = 0; i < k; ++i) {{\n\
                     const Case& c = cs[i]; long long ss = c.sp * c.h + 5, ds = c.dp * c.h + 3;\n\
                     s[i].resize(c.so + ss * c.n + 64); d[i].assign(c.d_off + ds * c.n + 64, ({ty})0xAB);\n\
                     for (size_t j = 0; j < s[i].size(); ++j) s[i][j] = ({ty})(j * 7 + 1 + i * 13);\n\
                     all.c[i] = Copy{{s[i].data() + c.so, c.sp, ss, d[i].data() + c.d_off, c.dp, ds, c.w, c.h, c.n}}; }}\n\
                   gridDim = {{grid, 1, 1}}; blockDim = {{{THREADS}, 1, 1}};\n\
                   for (unsigned x = 0; x < gridDim.x; ++x) for (unsigned t = 0; t < blockDim.x; ++t) {{\n\
                     blockIdx = {{x, 0, 0}}; threadIdx = {{t, 0, 0}}; {name}(all); }}\n\
                   int bad = 0;\n\
                   for (int i = 0; i < k; ++i) {{\n\
                     const Case& c = cs[i]; long long ss = c.sp * c.h + 5, ds = c.dp * c.h + 3;\n\
                     for (size_t j = 0; j < d[i].size(); ++j) {{\n\
                       long long at = (long long)j - c.d_off; long long z = at / ds, r = at % ds, line = r / c.dp, e = r % c.dp;\n\
                       bool inside = at >= 0 && z < c.n && line < c.h && e < c.w;\n\
                       {ty} want = inside ? s[i][c.so + z * ss + line * c.sp + e] : ({ty})0xAB;\n\
                       if (d[i][j] != want) ++bad; }} }}\n\
                   return bad; }}\n",
                cases = listed.join(", "),
                name = kernel_name(bytes)
            );
            let program = format!("{shim}{src}\n{harness}int main() {{\n{body}}}\n");
            let dir = std::env::temp_dir().join(format!("gemm-copy-{}-{bytes}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("copy.cpp"), &program).unwrap();
            let built = std::process::Command::new("c++").arg("-O1").arg("-o").arg(dir.join("copy")).arg(dir.join("copy.cpp")).output();
            let built = built.expect("a host C++ compiler (c++)");
            assert!(built.status.success(), "the copy kernel compiles as C++: {}", String::from_utf8_lossy(&built.stderr));
            let out = std::process::Command::new(dir.join("copy")).output().unwrap();
            let _ = std::fs::remove_dir_all(&dir);
            let text = String::from_utf8(out.stdout).unwrap();
            assert_eq!(text.lines().count(), launches.len(), "{text}");
            for line in text.lines() {
                assert!(line.ends_with(": 0"), "{bytes}-byte elements, {line} elements wrong");
            }
        }
    }
}
