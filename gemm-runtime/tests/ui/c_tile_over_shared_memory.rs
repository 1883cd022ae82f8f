use gemm_runtime::{bf16, gemm_kernel, Mat, MatMut, RowMajor};

// Under stream-K the next unit's copies are in flight in the stages while a
// unit's epilogue runs, so the C tile of epilogue = smem lies past them: the
// stages that still fit beside it are offered.
#[gemm_kernel(
    block(m = 128, n = 256, k = 64, threads = 256),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 3, vector = 8),
    swizzle = xor,
    persistent = stream_k,
    epilogue = smem,
)]
fn beside_the_stages(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<bf16, RowMajor>);

// An f32 C tile of 256 x 256 outgrows shared memory by itself, whatever the
// stages: fewer of them cannot help.
#[gemm_kernel(
    block(m = 256, n = 256, k = 32, threads = 512),
    warp(m = 64, n = 64),
    atom = mma(m16n8k16),
    staging = cp_async(stages = 2, vector = 8),
    swizzle = xor,
    epilogue = smem,
)]
fn in_their_place(a: Mat<bf16, RowMajor>, b: Mat<bf16, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() {}
