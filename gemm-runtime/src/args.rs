//! Problem sizes and the checks every launch makes before it touches the GPU.

use gemm_core::spec::{Elem, KernelSpec, Layout, Operand};

use crate::GemmError;

/// The sizes of `C (m x n) = A (m x k) * B (k x n)`, and the leading dimensions
/// where the matrices are not packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Leading dimensions; `None` means packed (the length of a row for
    /// row-major, of a column for column-major).
    pub lda: Option<usize>,
    pub ldb: Option<usize>,
    pub ldc: Option<usize>,
    pub batch: Batch,
}

/// `count` problems of the same sizes, launched as one grid: problem `i`'s
/// A starts `i * stride_a` elements into A's buffer, and so on. A stride of
/// 0 shares one A (or B, or bias) among all problems; C's must keep the
/// problems apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    pub count: usize,
    pub stride_a: usize,
    pub stride_b: usize,
    pub stride_c: usize,
    pub stride_bias: usize,
}

impl Batch {
    /// One problem.
    pub const fn single() -> Self {
        Batch { count: 1, stride_a: 0, stride_b: 0, stride_c: 0, stride_bias: 0 }
    }
}

impl Dims {
    /// Packed matrices of these sizes.
    pub const fn new(m: usize, n: usize, k: usize) -> Self {
        Dims { m, n, k, lda: None, ldb: None, ldc: None, batch: Batch::single() }
    }

    /// The same sizes with explicit leading dimensions.
    pub const fn with_ld(self, lda: usize, ldb: usize, ldc: usize) -> Self {
        Dims { lda: Some(lda), ldb: Some(ldb), ldc: Some(ldc), ..self }
    }

    /// `count` problems of these sizes, each's A, B and C the given numbers of
    /// elements after the one before (the bias is shared: see [`Self::bias_stride`]).
    pub const fn batched(self, count: usize, stride_a: usize, stride_b: usize, stride_c: usize) -> Self {
        Dims { batch: Batch { count, stride_a, stride_b, stride_c, stride_bias: self.batch.stride_bias }, ..self }
    }

    /// Each batch's bias this many elements after the one before (0, the
    /// default: one bias for all).
    pub const fn bias_stride(self, stride: usize) -> Self {
        Dims { batch: Batch { stride_bias: stride, ..self.batch }, ..self }
    }

    /// Whether the product has no multiply-adds: m, n, k or the batch
    /// count is 0. A launch of it writes nothing, or over k = 0 alone C's
    /// epilogue of a zero product (`beta * C`, the bias, the activation).
    pub fn is_empty(&self) -> bool {
        self.m == 0 || self.n == 0 || self.k == 0 || self.batch.count == 0
    }

    /// Multiply-adds times two, over the whole batch.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 * self.batch.count as f64
    }
}

/// One operand's shape as stored.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub name: char,
    pub rows: usize,
    pub cols: usize,
    pub layout: Layout,
    pub ld: usize,
}

impl Shape {
    fn new(name: char, rows: usize, cols: usize, layout: Layout, ld: Option<usize>) -> Self {
        let packed = match layout {
            Layout::RowMajor => cols,
            Layout::ColMajor => rows,
        };
        Shape { name, rows, cols, layout, ld: ld.unwrap_or(packed) }
    }

    /// Smallest legal leading dimension.
    pub fn min_ld(&self) -> usize {
        match self.layout {
            Layout::RowMajor => self.cols,
            Layout::ColMajor => self.rows,
        }
    }

    /// Elements from the first to one past the last: what the buffer must hold.
    pub fn span(&self) -> usize {
        if self.rows == 0 || self.cols == 0 {
            return 0;
        }
        match self.layout {
            Layout::RowMajor => (self.rows - 1).saturating_mul(self.ld).saturating_add(self.cols),
            Layout::ColMajor => (self.cols - 1).saturating_mul(self.ld).saturating_add(self.rows),
        }
    }
}

/// The three operand shapes of a problem under a spec's layouts.
pub fn shapes(a: Operand, b: Operand, c: Operand, d: Dims) -> [Shape; 3] {
    [Shape::new('A', d.m, d.k, a.layout, d.lda), Shape::new('B', d.k, d.n, b.layout, d.ldb), Shape::new('C', d.m, d.n, c.layout, d.ldc)]
}

/// The three operand shapes of a problem `spec` computes: [`shapes`], but
/// for a gated epilogue's C, which holds one column for each pair of the
/// product's (n / 2).
pub fn spec_shapes(spec: &KernelSpec, d: Dims) -> [Shape; 3] {
    let [a, b, c] = shapes(spec.a, spec.b, spec.c, d);
    if spec.fused.gated {
        return [a, b, Shape::new('C', d.m, d.n / 2, spec.c.layout, d.ldc)];
    }
    [a, b, c]
}

/// Element types a kernel can be launched with.
pub trait Element: cudarc::driver::DeviceRepr {
    const ELEM: Elem;
    /// The value in f32 (exact for every element type).
    fn to_f32(self) -> f32;
}
impl Element for f32 {
    const ELEM: Elem = Elem::F32;
    fn to_f32(self) -> f32 {
        self
    }
}
impl Element for half::f16 {
    const ELEM: Elem = Elem::F16;
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
}
impl Element for half::bf16 {
    const ELEM: Elem = Elem::Bf16;
    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
}
impl Element for float8::F8E4M3 {
    const ELEM: Elem = Elem::F8E4M3;
    fn to_f32(self) -> f32 {
        float8::F8E4M3::to_f32(&self)
    }
}
impl Element for float8::F8E5M2 {
    const ELEM: Elem = Elem::F8E5M2;
    fn to_f32(self) -> f32 {
        float8::F8E5M2::to_f32(&self)
    }
}

/// Largest offset the generated kernels compute in 32-bit `int`: into A
/// and B where no TMA loads them.
pub const MAX_OFFSET: usize = i32::MAX as usize;

/// Each leading dimension at least its matrix's packed width.
pub(crate) fn fit_lines(shapes: &[Shape; 3]) -> Result<(), GemmError> {
    for s in shapes {
        if s.ld < s.min_ld() {
            let layout = match s.layout {
                Layout::RowMajor => "row-major",
                Layout::ColMajor => "column-major",
            };
            return Err(GemmError::LeadingDim { operand: s.name, rows: s.rows, cols: s.cols, layout, ld: s.ld, min: s.min_ld() });
        }
    }
    Ok(())
}

/// Each buffer (lengths in elements, A, B, C) holds its matrix, every batch's.
pub(crate) fn fit_buffers(shapes: &[Shape; 3], lens: [usize; 3], batch: Batch) -> Result<(), GemmError> {
    let strides = [batch.stride_a, batch.stride_b, batch.stride_c];
    for ((s, len), stride) in shapes.iter().zip(lens).zip(strides) {
        let needed = batched_span(s.span(), batch.count, stride);
        if batch.count > 1 && needed > i64::MAX as usize {
            // (no buffer is this long; the kernels move to a problem by a 64-bit offset)
            return Err(GemmError::Batch(format!(
                "{}'s {} problems {stride} elements apart span {needed} elements, past 64-bit offsets",
                s.name, batch.count
            )));
        }
        if needed > len {
            return Err(GemmError::BufferTooSmall { operand: s.name, rows: s.rows, cols: s.cols, ld: s.ld, needed, len });
        }
    }
    Ok(())
}

/// Elements from the first batch's first element to one past the last batch's last.
pub(crate) fn batched_span(span: usize, count: usize, stride: usize) -> usize {
    if span == 0 {
        // (empty matrices: no problem holds an element)
        return 0;
    }
    (count.max(1) - 1).saturating_mul(stride).saturating_add(span)
}

/// The batch's own rules: within the grid's reach, and no two problems
/// writing the same C (but contiguous groups, whose rows of one C are each
/// group's own).
fn check_batch(d: &Dims, c: &Shape, grid_z: bool, contiguous: bool) -> Result<(), GemmError> {
    let b = d.batch;
    if b.count > 1 && b.stride_c < c.span() && !contiguous {
        return Err(GemmError::Batch(format!(
            "C's stride {} is less than one C's {} elements ({} x {}, leading dimension {}): the problems would write over each other",
            b.stride_c,
            c.span(),
            c.rows,
            c.cols,
            c.ld
        )));
    }
    // one block per C tile: the batch is blockIdx.z, at most 65535
    if grid_z && b.count > 65535 {
        return Err(GemmError::Batch(format!("{} problems are over the grid's 65535 in z; launch them in parts", b.count)));
    }
    Ok(())
}

/// Every side and leading dimension fits the `int` sizes cuBLAS takes (it
/// addresses spans past 2^31 elements itself).
pub(crate) fn fit_i32(shapes: &[Shape; 3]) -> Result<(), GemmError> {
    fit_offsets(shapes, |_| true)
}

/// Every leading dimension fits the kernels' `int` parameters, and every
/// operand they address by 32-bit offsets spans at most [`MAX_OFFSET`]
/// elements. Every epilogue addresses C in 64 bits, and TMA reads A and B
/// by coordinates (its stages filled by cp.async, in 64 bits), so those
/// may span more: the logits of 16384 tokens over a 152064-word vocabulary,
/// or a weight of 2^31 elements.
fn fit_spec_offsets(spec: &KernelSpec, shapes: &[Shape; 3]) -> Result<(), GemmError> {
    let tma = matches!(spec.staging, gemm_core::spec::Staging::Tma { .. });
    fit_offsets(shapes, |name| name == 'C' || tma)
}

/// Every side and leading dimension fits an `int`, and every operand but
/// those `wide` names spans at most [`MAX_OFFSET`] elements.
fn fit_offsets(shapes: &[Shape; 3], wide: impl Fn(char) -> bool) -> Result<(), GemmError> {
    for s in shapes {
        let overflow = |what, value, bound| GemmError::IndexOverflow { operand: s.name, what, value, bound, max: MAX_OFFSET };
        let sides = [("row count", s.rows), ("column count", s.cols), ("leading dimension", s.ld)];
        if let Some(&(what, value)) = sides.iter().find(|(_, v)| *v > MAX_OFFSET) {
            return Err(overflow(what, value, "ints the kernel takes its sizes in"));
        }
        if s.span() > MAX_OFFSET && !wide(s.name) {
            return Err(overflow("span in elements", s.span(), "offsets the kernel's loads address it by"));
        }
    }
    Ok(())
}

/// Everything a launch must satisfy that can be known before it runs: sizes,
/// leading dimensions, buffer lengths, the kernel's size rules, alignment and
/// 32-bit offsets (A's and B's, where no TMA loads them). `lens` and `addrs`
/// are the buffers' lengths (elements) and device addresses, in the order A,
/// B, C.
pub fn check(spec: &KernelSpec, d: Dims, lens: [usize; 3], addrs: [u64; 3]) -> Result<[Shape; 3], GemmError> {
    // (empty products never come here: `empty::of` takes them first)
    debug_assert!(!d.is_empty(), "an empty product: {d:?}");
    if spec.fused.gated && !d.n.is_multiple_of(2) {
        let rule = format!("n = {} must be even: the gated epilogue pairs the product's column 2j (the gate) with 2j + 1 (the up-projection)", d.n);
        return Err(GemmError::UnsupportedSize { kernel: spec.kernel_name(), rule });
    }
    let shapes = spec_shapes(spec, d);
    fit_lines(&shapes)?;
    fit_buffers(&shapes, lens, d.batch)?;
    // (early: the rules below, and the copies and variants a launch refused for alignment goes
    // on to, work out tiles, pitches and spans that only sizes within these bounds keep finite)
    fit_spec_offsets(spec, &shapes)?;
    // (indexed and contiguous groups on a grid of a block per tile place tiles in one problem's rows)
    let one_a_and_c = spec.groups.is_some_and(gemm_core::spec::Groups::one_a_and_c);
    check_batch(&d, &shapes[2], spec.persistent.is_none() && !one_a_and_c, one_a_and_c)?;
    let kernel = || spec.kernel_name();
    let req = spec.requirements();
    let (m_tile, n_tile) = if spec.cluster.is_some() { ("block m x cluster m", "block n x cluster n") } else { ("block m", "block n") };
    for (name, size, multiple, tile) in
        [("m", d.m, req.m_multiple, m_tile), ("n", d.n, req.n_multiple, n_tile), ("k", d.k, req.k_multiple, "block k")]
    {
        if size % multiple as usize != 0 {
            let rule = format!("{name} = {size} must be a multiple of {tile} = {multiple} (the kernel does not guard partial tiles)");
            return Err(GemmError::UnsupportedSize { kernel: kernel(), rule });
        }
    }
    if spec.persistent.is_some() {
        // a persistent grid walks the tiles of every problem by a 32-bit count
        let tiles = d.m.div_ceil(spec.block.m as usize).saturating_mul(d.n.div_ceil(spec.block.n as usize)).saturating_mul(d.batch.count);
        if tiles > MAX_OFFSET {
            let rule = format!("{tiles} C tiles over the batch, past the 32-bit count the persistent grid walks them by; launch the batch in parts");
            return Err(GemmError::UnsupportedSize { kernel: kernel(), rule });
        }
    } else {
        let (gx, gy, _) = gemm_core::block_grid(spec, d.m, d.n, d.batch.count);
        if gx > i32::MAX as u32 {
            let rule = format!("{}x{} needs {gx} blocks along the grid's x, over its {}", d.m, d.n, i32::MAX);
            return Err(GemmError::UnsupportedSize { kernel: kernel(), rule });
        }
        if gy > 65535 {
            let rule = match spec.groups {
                Some(gemm_core::spec::Groups::Contiguous) => {
                    format!("m = {} in {} groups needs {gy} blocks along m, over the grid's 65535", d.m, d.batch.count)
                }
                _ => format!("m = {} needs {gy} blocks along m, over the grid's 65535", d.m),
            };
            return Err(GemmError::UnsupportedSize { kernel: kernel(), rule });
        }
    }
    if let Some(e) = alignment(spec, &shapes, d, addrs).into_iter().flatten().next() {
        return Err(e);
    }
    Ok(shapes)
}

/// Which operands (A, B, C) the kernel cannot read or write where they lie:
/// an address, leading dimension or batch stride that breaks its vector
/// copies (or TMA's 16-byte rows), with what each breaks. `shapes` as
/// [`shapes`] gives them.
pub fn alignment(spec: &KernelSpec, shapes: &[Shape; 3], d: Dims, addrs: [u64; 3]) -> [Option<GemmError>; 3] {
    let broken = breaks(spec, shapes, d, addrs);
    if broken.iter().all(Option::is_none) {
        return [None, None, None];
    }
    // the kernel's name once, for every operand's error
    let kernel = spec.kernel_name();
    let tma = matches!(spec.staging, gemm_core::spec::Staging::Tma { .. });
    std::array::from_fn(|i| {
        let s = &shapes[i];
        let why = if tma && s.name != 'C' { " (TMA takes 16-byte aligned addresses and row strides)" } else { "" };
        let (bytes, what) = match broken[i]? {
            Broken::Address { addr, bytes } => (bytes, format!("its device address {addr:#x} must be {bytes}-byte aligned{why}")),
            Broken::Ld { bytes, vector } => (bytes, format!("its leading dimension {} must be a multiple of {vector}{why}", s.ld)),
            Broken::Stride { bytes, stride, elems } => (bytes, format!("its batch stride {stride} must be a multiple of {elems} elements")),
        };
        Some(GemmError::Misaligned { kernel: kernel.clone(), operand: s.name, bytes, what })
    })
}

/// Which operands [`alignment`] finds the kernel cannot take, without the
/// words that say why: the launcher asks on every launch that copies.
pub fn misaligned(spec: &KernelSpec, shapes: &[Shape; 3], d: Dims, addrs: [u64; 3]) -> [bool; 3] {
    breaks(spec, shapes, d, addrs).map(|b| b.is_some())
}

/// What an operand's placement breaks of the kernel's alignment rules.
#[derive(Clone, Copy)]
enum Broken {
    Address { addr: u64, bytes: u32 },
    Ld { bytes: u32, vector: u32 },
    Stride { bytes: u32, stride: usize, elems: usize },
}

fn breaks(spec: &KernelSpec, shapes: &[Shape; 3], d: Dims, addrs: [u64; 3]) -> [Option<Broken>; 3] {
    let req = spec.requirements();
    // A and B are read, C written, each its own vector of elements at a time (A's and
    // B's differ where cp.async fills one operand's TMA stages), from pointers aligned
    // to their bytes.
    let rules = [req.operands[0], req.operands[1], (req.c_vector, req.c_align)];
    let strides = [d.batch.stride_a, d.batch.stride_b, d.batch.stride_c];
    let ops = [spec.a, spec.b, spec.c];
    std::array::from_fn(|i| {
        let (s, addr, op, (v, bytes), stride) = (&shapes[i], addrs[i], ops[i], rules[i], strides[i]);
        if v == 1 && bytes <= op.elem.bytes() {
            return None;
        }
        // every problem of a batch starts as aligned as the first
        let elems = (bytes / op.elem.bytes()).max(1) as usize;
        if addr % bytes as u64 != 0 {
            Some(Broken::Address { addr, bytes })
        } else if s.ld % v as usize != 0 {
            Some(Broken::Ld { bytes, vector: v })
        } else if d.batch.count > 1 && stride % elems != 0 {
            Some(Broken::Stride { bytes, stride, elems })
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::spec::Elem;

    fn op(layout: Layout) -> Operand {
        Operand { elem: Elem::F32, layout }
    }

    #[test]
    fn spans_count_the_elements_a_buffer_must_hold() {
        let [a, b, c] = shapes(op(Layout::RowMajor), op(Layout::ColMajor), op(Layout::RowMajor), Dims::new(3, 5, 4).with_ld(6, 4, 5));
        assert_eq!((a.span(), b.span(), c.span()), (2 * 6 + 4, 4 * 4 + 4, 2 * 5 + 5));
        let [a, ..] = shapes(op(Layout::RowMajor), op(Layout::RowMajor), op(Layout::RowMajor), Dims::new(0, 5, 4));
        assert_eq!(a.span(), 0, "an empty matrix needs no elements");
    }

    /// A C that goes out of a C tile in shared memory (`epilogue = smem`) in
    /// 16-byte chunks must be 16-byte aligned with a leading dimension of
    /// whole chunks; one that is not is an `Err` naming C, not a bad store.
    #[test]
    fn an_smem_epilogue_needs_c_in_whole_16_byte_chunks() {
        use gemm_core::spec::*;
        let spec = crate::test_specs::mma_64();
        let lens = [1 << 20; 3];
        let (m, n, k) = (100, 200, 64);
        assert!(check(&spec, Dims::new(m, n, k).with_ld(64, 200, 208), lens, [0, 0, 0]).is_ok());
        let err = check(&spec, Dims::new(m, n, k).with_ld(64, 200, 204), lens, [0, 0, 0]).unwrap_err().to_string();
        assert!(err.contains("C") && err.contains("leading dimension 204 must be a multiple of 8"), "{err}");
        let err = check(&spec, Dims::new(m, n, k).with_ld(64, 200, 208), lens, [0, 0, 8]).unwrap_err().to_string();
        assert!(err.contains("16-byte aligned"), "{err}");
        // the same C stored in pairs from the registers needs 4 bytes only
        let pairs = KernelSpec { epilogue: Epilogue::Vector, ..spec };
        assert!(check(&pairs, Dims::new(m, n, k).with_ld(64, 200, 204), lens, [0, 0, 8]).is_ok());
    }

    /// A gated epilogue's C holds a column for each pair of the product's:
    /// a buffer of m x n / 2 is enough, a shorter one and an odd n are
    /// `Err`s, and C's elements need no alignment beyond their own.
    #[test]
    fn a_gated_c_is_half_as_wide_and_n_must_be_even() {
        use gemm_core::spec::*;
        let mut spec = KernelSpec { epilogue: Epilogue::Vector, ..crate::test_specs::mma_64() };
        spec.fused = Fused { activation: Some(Activation::Silu), gated: true, ..Fused::default() };
        let (m, n, k) = (100, 200, 64);
        let c = spec_shapes(&spec, Dims::new(m, n, k))[2];
        assert_eq!((c.rows, c.cols, c.ld), (m, n / 2, n / 2));
        let lens = [m * k, k * n, m * n / 2];
        assert!(check(&spec, Dims::new(m, n, k), lens, [0, 0, 2]).is_ok());
        let short = check(&spec, Dims::new(m, n, k), [m * k, k * n, m * n / 2 - 1], [0, 0, 0]);
        assert!(matches!(short, Err(GemmError::BufferTooSmall { operand: 'C', .. })), "{short:?}");
        let odd = check(&spec, Dims::new(m, n - 1, k).with_ld(k, k, n), lens, [0, 0, 0]).unwrap_err().to_string();
        assert!(odd.contains("n = 199 must be even"), "{odd}");
    }

    /// TMA copies rows whose byte stride is a multiple of 16 from 16-byte
    /// aligned addresses: a row-major A with K = 65 (130-byte rows), or a
    /// B that starts 2 bytes into its buffer, is an `Err` that says so, for
    /// any size the guarded kernel takes.
    #[test]
    fn tma_operands_need_16_byte_strides_and_addresses() {
        use gemm_core::spec::*;
        let op = |layout| Operand { elem: Elem::Bf16, layout };
        let spec = KernelSpec {
            name: "tma".into(),
            a: op(Layout::RowMajor),
            b: op(Layout::ColMajor),
            c: op(Layout::RowMajor),
            block: Block { m: 128, n: 128, k: Some(64), threads: 256, min_blocks: None },
            warp: Some(Warp { m: 128, n: 128, m_iters: 1, n_iters: 1 }),
            thread: None,
            atom: Atom::Wgmma { m: 64, n: 128, k: 16, zeroed: false, promote: false },
            staging: Staging::tma(4),
            specialize: Some(Specialize {
                producers: 1,
                consumers: 1,
                producer_regs: None,
                consumer_regs: None,
                pingpong: false,
                arrivals: Arrivals::Warpgroup,
                overlap: false,
            }),
            swizzle: Swizzle::B128,
            raster: Raster::Row,
            persistent: None,
            cluster: None,
            epilogue: Epilogue::Direct,
            fused: Fused::default(),
            edges: Edges::Guarded,
            groups: None,
            arch: Arch::Sm90a,
        };
        assert!(gemm_core::check(&spec).is_empty(), "{:?}", gemm_core::check(&spec));
        let lens = [1 << 20; 3];
        assert!(check(&spec, Dims::new(100, 130, 65).with_ld(72, 72, 130), lens, [0, 0, 0]).is_ok(), "any size, padded rows");
        let err = check(&spec, Dims::new(100, 130, 65), lens, [0, 0, 0]).unwrap_err().to_string();
        assert!(err.contains("A") && err.contains("leading dimension 65 must be a multiple of 8") && err.contains("TMA"), "{err}");
        let err = check(&spec, Dims::new(100, 130, 64), lens, [0, 2, 0]).unwrap_err().to_string();
        assert!(err.contains("B") && err.contains("16-byte aligned (TMA"), "{err}");
        // C is stored element by element: any leading dimension
        assert!(check(&spec, Dims::new(100, 130, 64).with_ld(64, 64, 131), lens, [0, 0, 2]).is_ok());
        // a block per tile: at most 65535 tiles along m; a persistent grid walks
        // any number of them, and refuses only a count past 32 bits
        let tall = Dims::new(65536 * 128 + 1, 8, 64).with_ld(64, 64, 8);
        let big = [usize::MAX; 3];
        let err = check(&spec, tall, big, [0, 0, 0]).unwrap_err().to_string();
        assert!(err.contains("over the grid's 65535"), "{err}");
        let persistent = KernelSpec { persistent: Some(Persistent::Tiles), ..spec.clone() };
        assert!(check(&persistent, tall, big, [0, 0, 0]).is_ok());
        let many = Dims::new(128, 128, 64).batched(1 << 31, 0, 0, 128 * 128);
        let err = check(&persistent, many, big, [0, 0, 0]).unwrap_err().to_string();
        assert!(err.contains("32-bit count"), "{err}");
    }

    /// Every epilogue addresses C in 64 bits and TMA reads A and B by
    /// coordinates, so those may span past 2^31 elements; an A or B that
    /// shared or global loads address by 32-bit offsets may not, and no
    /// side or leading dimension may pass the kernels' `int` parameters.
    #[test]
    fn c_and_operands_tma_loads_may_span_past_32_bit_offsets() {
        let big = [usize::MAX; 3];
        let (tma, mma) = (crate::test_specs::tma_store(), crate::test_specs::mma());
        // logits: 16384 tokens over a 152064-word vocabulary, 2.49e9 elements of C
        let logits = Dims::new(16384, 152064, 4096);
        assert!(check(&tma, logits, big, [0; 3]).is_ok());
        assert!(check(&mma, logits, big, [0; 3]).is_ok());
        // A of 524416 x 4096: past 2^31 elements
        let tall = Dims::new(524416, 256, 4096);
        assert!(check(&tma, tall, big, [0; 3]).is_ok());
        let err = check(&mma, tall, big, [0; 3]).unwrap_err();
        assert!(matches!(err, GemmError::IndexOverflow { operand: 'A', what: "span in elements", .. }), "{err}");
        assert!(err.to_string().contains("span in elements is 2148007936"), "{err}");
        // B stored K-major for TMA: its span passes 2^31 too; the mma spec's row-major B refused
        let wide = Dims::new(256, 524416, 4096);
        assert!(check(&tma, wide, big, [0; 3]).is_ok());
        assert!(matches!(check(&mma, wide, big, [0; 3]).unwrap_err(), GemmError::IndexOverflow { operand: 'B', .. }));
        // a side or a leading dimension past an int: refused on every path
        let long = Dims::new(1 << 31, 8, 64).with_ld(64, 64, 8);
        let err = check(&tma, long, big, [0; 3]).unwrap_err();
        assert!(matches!(err, GemmError::IndexOverflow { operand: 'A', what: "row count", .. }), "{err}");
        assert!(err.to_string().contains("ints the kernel takes its sizes in"), "{err}");
        let far = Dims::new(128, 256, 64).with_ld(64, 64, 1 << 31);
        let err = check(&tma, far, big, [0; 3]).unwrap_err();
        assert!(matches!(err, GemmError::IndexOverflow { operand: 'C', what: "leading dimension", .. }), "{err}");
    }
}
