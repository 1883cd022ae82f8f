use gemm_runtime::{gemm_kernel, Mat, MatMut, RowMajor};

// float4 stores of C need 4 neighbouring accumulators along C's rows.
#[gemm_kernel(
    block(m = 64, n = 64, k = 8, threads = 256),
    thread(m = 8, n = 2),
    atom = fma,
    staging = smem(vector = 2),
    epilogue = vector,
)]
fn kernel(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
