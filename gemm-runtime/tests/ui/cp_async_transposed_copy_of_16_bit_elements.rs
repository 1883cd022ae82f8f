use gemm_runtime::{gemm_kernel, f16, Mat, MatMut, RowMajor};

// Transposing A into shared memory makes cp.async copy one f16 (2 bytes) at a
// time, below its 4-byte minimum.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8, transpose_a),
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
