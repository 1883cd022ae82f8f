//! The Hopper ladder alone (sm_90a: TMA, wgmma, warp specialization,
//! persistent grids, clusters), every step checked against cuBLAS and timed
//! beside it. `cargo run --release --example hopper [SIZE | M N K]`

fn main() {
    let steps: Vec<&gemm_ladder::steps::Step> = gemm_ladder::HOPPER_STEPS.iter().collect();
    gemm_ladder::cli::main_at(&steps, "hopper", gemm_runtime::Dims::new(4096, 4096, 4096));
}
