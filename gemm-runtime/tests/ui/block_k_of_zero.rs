use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// A K step of zero elements.
#[gemm_kernel(
    block(m = 32, n = 32, k = 0, threads = 1024),
    thread(m = 1, n = 1),
    atom = fma,
    staging = smem,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
