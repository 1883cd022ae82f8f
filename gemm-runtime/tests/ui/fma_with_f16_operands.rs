use gemm_runtime::{gemm_kernel, f16, Mat, MatMut, RowMajor};

// The fma atom reads f32; f16 needs a tensor-core atom.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024),
    thread(m = 1, n = 1),
    atom = fma,
    staging = direct,
)]
fn kernel(a: Mat<f16, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
