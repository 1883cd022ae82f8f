use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// A gate and its up-projection lie in one thread as mma's accumulator pairs do.
#[gemm_kernel(
    block(m = 64, n = 64, k = 8, threads = 256),
    thread(m = 4, n = 4),
    atom = fma,
    staging = smem(vector = 2),
    epilogue = vector(activation = silu, gated),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
