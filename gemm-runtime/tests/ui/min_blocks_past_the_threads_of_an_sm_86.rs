use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// An SM of compute capability 8.6 holds 1536 threads, where an A100's holds 2048: two blocks of 1024 do not fit.
#[gemm_kernel(
    block(m = 32, n = 32, threads = 1024, min_blocks = 2),
    thread(m = 1, n = 1),
    atom = fma,
    staging = direct,
    arch = sm_86,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
