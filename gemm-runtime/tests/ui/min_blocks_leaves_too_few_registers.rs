use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Four blocks of 256 threads per SM leave 64 registers a thread: too few for 64 accumulators.
#[gemm_kernel(
    block(m = 128, n = 128, k = 8, threads = 256, min_blocks = 4),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4, transpose_a),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
