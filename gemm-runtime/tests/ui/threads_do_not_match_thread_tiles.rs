use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// The thread count follows from block / thread tile.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 512),
    thread(m = 1, n = 1),
    atom = fma,
    staging = direct,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
