use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// A tuning space spans at most 4096 points.
#[gemm_kernel(
    block(m = 64, n = 64, k = 16, threads = 256),
    thread(m = 4, n = 4),
    atom = fma,
    staging = cp_async(stages = 3, vector = 4),
    tune(block.m = [32, 64, 128, 256], block.n = [32, 64, 128, 256], block.k = [8, 16, 32, 64], stages = [2, 3, 4, 5], thread.m = [2, 4, 8, 16], thread.n = [2, 4, 8, 16, 32]),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
