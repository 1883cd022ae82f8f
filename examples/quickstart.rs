use gemm_runtime::{device, gemm_kernel, Dims, GemmError, Mat, MatMut, RowMajor};

/// 32x32 tiles of A and B staged in shared memory, one C element per thread.
#[gemm_kernel(
    block(m = 32, n = 32, k = 32, threads = 1024),
    thread(m = 1, n = 1, lanes = n),
    atom = fma,
    staging = smem(vector = 1),
)]
pub fn smem_tiling(a: Mat<f32, RowMajor>, b: Mat<f32, RowMajor>, c: MatMut<f32, RowMajor>);

fn main() -> Result<(), GemmError> {
    // Sizes must be multiples of the block tile: the launcher's docs say so,
    // and any other size is an Err, never a wrong answer.
    let (m, n, k) = (256, 128, 96);
    // Small integers: every product and sum is exact in f32.
    let a: Vec<f32> = (0..m * k).map(|i| (i % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 11) as f32 - 5.0).collect();

    let gpu = device::open(0)?; // Err (not a panic) without a driver or a GPU
    let stream = &gpu.stream;
    let a_gpu = stream.clone_htod(&a)?;
    let b_gpu = stream.clone_htod(&b)?;
    let mut c_gpu = stream.alloc_zeros::<f32>(m * n)?;

    // The first launch compiles the kernel with NVRTC for this GPU.
    smem_tiling(stream, &a_gpu, &b_gpu, &mut c_gpu, Dims::new(m, n, k))?;
    let c = stream.clone_dtoh(&c_gpu)?; // waits for the kernel

    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            assert_eq!(c[i * n + j], want, "C[{i}][{j}]");
        }
    }
    println!("{m} x {n} x {k} on {}: C matches the host's product", gpu.name);
    Ok(())
}
