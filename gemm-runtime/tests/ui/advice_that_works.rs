use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Two rules at one argument, one message: 100 threads are not whole warps,
// and 8x8 tiles of 8x8 need 64; the value offered satisfies both.
#[gemm_kernel(
    block(m = 64, n = 64, k = 8, threads = 100),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4),
)]
fn threads(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

// vector = 2 would divide k = 6 but not split the loads evenly: no width is
// offered, the conflict is named.
#[gemm_kernel(
    block(m = 64, n = 64, k = 6, threads = 256),
    thread(m = 4, n = 4),
    atom = fma,
    staging = smem(vector = 4),
)]
fn vector(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

// A budget names the largest value that fits.
#[gemm_kernel(
    block(m = 256, n = 256, k = 32, threads = 256),
    thread(m = 16, n = 16),
    atom = fma,
    staging = cp_async(stages = 4, vector = 4),
)]
fn stages(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
