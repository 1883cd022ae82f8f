use gemm_runtime::cudarc::driver::CudaSlice;
use gemm_runtime::{bf16, gemm_kernel, Bias, Dims, Mat, MatMut, RowMajor};

#[gemm_kernel(
    block(m = 128, n = 128, k = 32, threads = 128),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    epilogue = direct(bias = n),
)]
fn kernel(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

// A bias buffer of f32 on a kernel whose bias is bf16.
fn launch(
    stream: &std::sync::Arc<gemm_runtime::cudarc::driver::CudaStream>,
    a: &CudaSlice<bf16>,
    b: &CudaSlice<bf16>,
    c: &mut CudaSlice<bf16>,
    bias: &CudaSlice<f32>,
) {
    let _ = kernel(stream, a, b, c, bias, Dims::new(128, 128, 128));
}

fn main() {}
