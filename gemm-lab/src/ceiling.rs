//! The mma.sync ceiling at several occupancies: back-to-back m16n8k16 bf16
//! mmas from registers, with 1, 2 or 4 blocks of 8 warps launched per SM
//! (2, 4 or 8 warps per scheduler where they fit) and 8, 16 or 32
//! independent mmas a warp between dependent ones; on the GPUs whose SMs
//! multiply 8-bit floats by mma.sync (Ada, consumer Blackwell) the same for
//! m16n8k32 e4m3 mmas. `mma_autotuned` runs 1
//! block of 8 warps per SM with 32 independent mmas a K step. Then its loop
//! alone: a 64 x 64 warp tile's mmas with their fragments loaded from
//! shared memory a K step ahead, without and with the tile's barrier, no
//! copies from global memory (`peak::smem_loop_source`): what is left
//! between the registers' ceiling and the kernel is the loop's own or the
//! copies'. `--soak SECONDS` then runs the registers' ceiling at
//! `mma_autotuned`'s occupancy and the loop alone back to back for that
//! long each, with the SM clock and power they ran at: the rates the GPU
//! holds at its power cap, to set beside `gemm-lab variants mma_autotuned
//! --soak SECONDS`. `cargo run --release -p gemm-lab -- ceiling [--soak SECONDS]`

use clap::Parser;
use gemm_ladder::measure::Bench;
use gemm_ladder::nvml::Nvml;
use gemm_ladder::peak::{
    mma_smem_loop, mma_smem_loop_sustained, mma_sync_ceiling_at, mma_sync_ceiling_sustained, mma_sync_e4m3_ceiling_at, native_e4m3_mma,
};

/// Prints the mma.sync ceiling (TFLOP/s) for blocks per SM x independent mmas a warp.
#[derive(Debug, Parser)]
#[command(name = "gemm-lab ceiling")]
struct Cli {
    /// Also run the ceiling and the loop alone sustained, this many seconds each
    #[arg(long, value_name = "SECONDS")]
    soak: Option<f64>,
}

pub fn main(args: Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse_from(args);
    let bench = Bench::open()?;
    let chains = [8u32, 16, 32];
    println!("mma.sync m16n8k16 bf16 ceiling on {}, TFLOP/s (blocks of 8 warps launched per SM x independent mmas a warp)\n", bench.gpu.name);
    println!("| blocks per SM | {} |", chains.map(|c| format!("{c} chains")).join(" | "));
    println!("|---:|{}", "---:|".repeat(chains.len()));
    for blocks in [1u32, 2, 4] {
        let cells: Vec<String> =
            chains.iter().map(|&c| mma_sync_ceiling_at(&bench, blocks, c).map(|t| format!("{t:.1}"))).collect::<Result<_, _>>()?;
        println!("| {blocks} | {} |", cells.join(" | "));
    }
    if native_e4m3_mma(bench.gpu.capability) {
        println!("\nmma.sync m16n8k32 e4m3 ceiling, TFLOP/s\n");
        println!("| blocks per SM | {} |", chains.map(|c| format!("{c} chains")).join(" | "));
        println!("|---:|{}", "---:|".repeat(chains.len()));
        for blocks in [1u32, 4] {
            let cells: Vec<String> =
                chains.iter().map(|&c| mma_sync_e4m3_ceiling_at(&bench, blocks, c).map(|t| format!("{t:.1}"))).collect::<Result<_, _>>()?;
            println!("| {blocks} | {} |", cells.join(" | "));
        }
    }
    let (plain, barrier) = (mma_smem_loop(&bench, false)?, mma_smem_loop(&bench, true)?);
    println!("\nmma_autotuned's loop alone, fragments from shared memory a K step ahead (1 block of 8 warps of 64 x 64 per SM, no copies):");
    println!("{plain:.1} TFLOP/s; with the tile's barrier every 4 K steps {barrier:.1}");
    if let Some(secs) = cli.soak {
        let nvml = Nvml::open(bench.stream().context());
        println!("\nsustained, {secs} s each:");
        println!("- registers, 1 block of 8 warps an SM, 32 chains: {}", mma_sync_ceiling_sustained(&bench, 1, 32, secs, nvml.as_ref())?.describe());
        println!("- registers, 4 blocks of 8 warps an SM, 8 chains: {}", mma_sync_ceiling_sustained(&bench, 4, 8, secs, nvml.as_ref())?.describe());
        println!("- the loop alone, with the tile's barrier: {}", mma_smem_loop_sustained(&bench, true, secs, nvml.as_ref())?.describe());
    }
    Ok(())
}
