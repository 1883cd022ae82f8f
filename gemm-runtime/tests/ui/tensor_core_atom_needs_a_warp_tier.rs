use gemm_runtime::{f16, gemm_kernel, Mat, MatMut, RowMajor};

// A tensor-core atom is issued by a warp: say what each warp owns.
#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
