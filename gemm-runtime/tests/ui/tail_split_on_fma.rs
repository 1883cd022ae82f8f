use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// On the f32 SIMT path, the tiles of a part-full last wave are shared along K by stream-K.
#[gemm_kernel(
    block(m = 128, n = 256, k = 16, threads = 256),
    warp(m = 64, n = 64, m_iters = 1, n_iters = 4),
    thread(m = 8, n = 4, sweep = m),
    atom = fma,
    staging = cp_async(stages = 4, vector = 4, transpose_a),
    swizzle = pad(4),
    persistent = tail_split,
    epilogue = vector,
    edges = guarded,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
