use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// A misspelt activation and a bias along a side that is not m or n: each
// says what is valid.
#[gemm_kernel(
    block(m = 64, n = 64, k = 16, threads = 256),
    thread(m = 4, n = 4),
    atom = fma,
    staging = smem(vector = 4),
    epilogue = direct(bias = k, activation = geLu),
)]
fn settings(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

// An epilogue setting that does not exist.
#[gemm_kernel(
    block(m = 64, n = 64, k = 16, threads = 256),
    thread(m = 4, n = 4),
    atom = fma,
    staging = smem(vector = 4),
    epilogue = vector(alpah, beta),
)]
fn setting(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
