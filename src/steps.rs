//! One spec per ladder step. Each differs from the step before by that step's
//! change alone; read top to bottom, they teach the optimizations.

use gemm_runtime::{gemm_kernel, Kernel, Mat, MatMut, RowMajor};

/// Step 1: one thread per element of C. Consecutive threads take consecutive
/// *rows* (`lanes = m`), so a warp's loads of B and stores of C hit 32
/// different rows: nothing coalesces. Bounds-guarded: any m, n, k.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1, lanes = m),
    atom = fma,
    staging = direct,
)]
pub fn naive(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// Step 2: the same work, but consecutive threads take consecutive *columns*
/// (`lanes = n`): a warp reads 32 neighbouring floats of B and writes 32 of C
/// in one transaction each, and all read the same A element (a broadcast).
/// Bounds-guarded: any m, n, k.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1, lanes = n),
    atom = fma,
    staging = direct,
)]
pub fn coalesced(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// Step 3: the block stages 32x32 tiles of A and B in shared memory (one
/// element per thread), synchronizes, computes from shared memory, and
/// synchronizes again before the next tiles. Each global element is read by
/// one thread instead of 32. Requires m, n, k multiples of 32.
#[gemm_kernel(
    block(m = 32, n = 32, k = 32, threads = 1024),
    thread(m = 1, n = 1, lanes = n),
    atom = fma,
    staging = smem(vector = 1),
)]
pub fn smem_tiling(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

/// A ladder step: its kernel and what the source documents measured for it.
pub struct Step {
    /// The example's name (`cargo run --release --example NAME`).
    pub name: &'static str,
    /// What the step changes, in a few words.
    pub change: &'static str,
    /// The seed's figure for this step, on the seed's hardware.
    pub seed: &'static str,
    pub kernel: &'static Kernel,
}

pub static STEPS: [Step; 3] = [
    Step {
        name: "naive",
        change: "one thread per C element, lanes along m",
        seed: "309 GFLOP/s, 1.3% of cuBLAS (A6000)",
        kernel: &naive::KERNEL,
    },
    Step {
        name: "coalesced",
        change: "lanes along n: coalesced B loads and C stores",
        seed: "1987 GFLOP/s, 8.5% (A6000)",
        kernel: &coalesced::KERNEL,
    },
    Step {
        name: "smem_tiling",
        change: "32x32 tiles staged in shared memory",
        seed: "2980 GFLOP/s, 12.8% (A6000)",
        kernel: &smem_tiling::KERNEL,
    },
];

/// The step named `name`.
pub fn step(name: &str) -> Option<&'static Step> {
    STEPS.iter().find(|s| s.name == name)
}
