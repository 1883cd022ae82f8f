//! A masked grouped GEMM (`grouped::grouped_masked`): eight experts with
//! room for 256 tokens each, the tokens each one got counted on the device,
//! one launch; each expert's rows checked against the host's product, the
//! rows past them left as they were. Needs an sm_90a GPU (an H100 or H200).
//! `cargo run --release --example grouped`

use gemm_ladder::grouped::grouped_masked;
use gemm_runtime::{bf16, device, Dims, GemmError};

fn main() -> Result<(), GemmError> {
    let gpu = device::open(0)?;
    if gpu.capability != (9, 0) {
        println!("grouped_masked is sm_90a: {} is compute capability {}.{}", gpu.name, gpu.capability.0, gpu.capability.1);
        return Ok(());
    }
    // ANCHOR: launch
    let (experts, m_max, n, k) = (8, 256, 512, 384);
    // the tokens each expert got (a router would write these on the device)
    let counts: Vec<i32> = vec![256, 0, 17, 128, 1, 200, 64, 255];
    // small integers: every product and sum is exact in f32 and in bf16
    let a: Vec<bf16> = (0..experts * m_max * k).map(|i| bf16::from_f32((i % 7) as f32 - 3.0)).collect();
    let w: Vec<bf16> = (0..experts * n * k).map(|i| bf16::from_f32((i % 5) as f32 - 2.0)).collect();
    let stream = &gpu.stream;
    let (a_gpu, w_gpu, rows) = (stream.clone_htod(&a)?, stream.clone_htod(&w)?, stream.clone_htod(&counts)?);
    // C starts as NaN: rows past an expert's tokens stay so
    let mut c_gpu = stream.clone_htod(&vec![bf16::NAN; experts * m_max * n])?;
    // A [experts, m_max, k], each expert's W [n, k] (B column-major), C [experts, m_max, n]
    let dims = Dims::new(m_max, n, k).batched(experts, m_max * k, n * k, m_max * n);
    grouped_masked(stream, &a_gpu, &w_gpu, &mut c_gpu, &rows, dims)?;
    // ANCHOR_END: launch
    let c = stream.clone_dtoh(&c_gpu)?;
    for (g, &count) in counts.iter().enumerate() {
        for i in 0..m_max {
            for j in 0..n {
                let got = c[(g * m_max + i) * n + j].to_f32();
                if i < count as usize {
                    let want: f32 = (0..k).map(|p| a[(g * m_max + i) * k + p].to_f32() * w[(g * n + j) * k + p].to_f32()).sum();
                    assert_eq!(got, want, "expert {g}, C[{i}][{j}]");
                } else {
                    assert!(got.is_nan(), "expert {g}: row {i} is past its {count} tokens but was written");
                }
            }
        }
    }
    println!(
        "{experts} experts of up to {m_max} tokens ({n} x {k} weights) on {}: each expert's rows match the host's, the rest unwritten",
        gpu.name
    );
    Ok(())
}
