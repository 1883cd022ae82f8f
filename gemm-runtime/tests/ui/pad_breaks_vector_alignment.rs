use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// Rows padded by 2 floats break the 16-byte alignment of float4 stores.
#[gemm_kernel(
    block(m = 64, n = 64, k = 8, threads = 64),
    thread(m = 8, n = 8),
    atom = fma,
    staging = smem(vector = 4),
    swizzle = pad(2),
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
