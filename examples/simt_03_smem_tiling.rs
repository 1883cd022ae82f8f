//! The f32 SIMT ladder, step 3 of 10: `smem_tiling`, checked against cuBLAS, then timed beside it.
//! `cargo run --release --example simt_03_smem_tiling [SIZE | M N K]`

fn main() {
    let step = gemm_ladder::steps::step("smem_tiling").expect("a ladder step");
    gemm_ladder::cli::main_for(&[step], step.name);
}
