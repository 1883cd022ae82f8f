use gemm_runtime::{bf16, gemm_kernel, Bias, Mat, MatMut, RowMajor};

// `bias = n` in the epilogue, but no bias vector in the signature.
#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    epilogue = vector(bias = n, activation = relu),
)]
fn no_vector(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

// A bias vector in the signature that the epilogue never adds.
#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    epilogue = vector(alpha),
)]
fn unused_vector(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>, bias: Bias<bf16>);

// A bias of an element type kernels do not take.
#[gemm_kernel(
    block(m = 64, n = 64, k = 32, threads = 128),
    warp(m = 32, n = 32),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    epilogue = direct(bias = m),
)]
fn bias_type(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>, bias: Bias<f64>);

fn main() {}
