use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// A number far past any kernel is refused by its size alone, before the
// rules that multiply the settings together.
#[gemm_kernel(
    block(m = 4294967295, n = 64, threads = 2048),
    thread(m = 1, n = 2),
    atom = fma,
    staging = direct,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
