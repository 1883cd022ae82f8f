use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Direct loads use no shared memory to lay out.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1),
    atom = fma,
    staging = direct,
    swizzle = pad(4),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
