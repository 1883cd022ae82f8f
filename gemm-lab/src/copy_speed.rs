//! How fast the launcher's copy of misaligned operands runs, against the
//! driver's copy of as many bytes: what copying first costs a product
//! whose operands no kernel reads where they lie.
//!
//! The lines of A and B at 4095 x 4097 x 4100 (8192 lines of 4100 bf16,
//! the K-major layouts of `hopper_autotuned`), copied into lines 4160
//! apart as the launcher copies them, from lines 4100 apart (8 bytes
//! aligned, A's and B's), 4097 apart (2 bytes aligned) and 4160 apart
//! (aligned, the same kernel at its easiest); then `cuMemcpyDtoDAsync` of
//! the same 67 MB, contiguous on both sides. Each run reads one of three
//! sources and writes one of three destinations in turn, 200 MB apiece,
//! so that the L2 (50 MB) holds neither side from the run before. Every
//! copy is checked element by element against its source.
//!
//! `cargo run --release -p gemm-lab -- copy-speed [LINES WIDTH]`

use gemm_ladder::measure::{random_normal, Bench};
use gemm_runtime::bf16;
use gemm_runtime::cudarc::driver::CudaSlice;
use gemm_runtime::internal::timing::time;
use gemm_runtime::{copy_lines, GemmError};

/// Where the copies' lines go: 4160 elements apart (128-byte lines), as the
/// launcher pitches every copy of A and B for TMA.
const DST_LD: usize = 4160;
/// Sources and destinations used in turn.
const TURNS: usize = 3;

pub fn main(args: Vec<String>) -> Result<(), GemmError> {
    let args: Result<Vec<usize>, _> = args.iter().skip(1).map(|a| a.parse::<usize>()).collect();
    let (lines, width) = match args.as_deref() {
        Ok([]) => (4095 + 4097, 4100),
        Ok(&[l, w]) if l > 0 && w > 0 && w <= DST_LD - 8 => (l, w),
        _ => {
            eprintln!("usage: gemm-lab copy-speed [LINES WIDTH] (two counts, WIDTH at most {})", DST_LD - 8);
            std::process::exit(2);
        }
    };
    let bench = Bench::open()?;
    let stream = bench.stream().clone();
    // room for the widest source pitch, and 7 elements to start a source past its buffer's start
    let src_len = lines * DST_LD + 8;
    let values: Vec<bf16> = random_normal(src_len, 7).into_iter().map(bf16::from_f32).collect();
    let sources: Vec<CudaSlice<bf16>> = (0..TURNS).map(|_| stream.clone_htod(&values)).collect::<Result<_, _>>()?;
    let mut dests: Vec<CudaSlice<bf16>> = (0..TURNS).map(|_| stream.alloc_zeros::<bf16>(lines * DST_LD)).collect::<Result<_, _>>()?;
    let moved = 2.0 * (lines * width * 2) as f64; // bytes read and written
    println!("{lines} lines of {width} bf16 ({:.1} MB) into lines {DST_LD} apart; median of 30 runs, after 5", (lines * width * 2) as f64 / 1e6);
    println!("{:<44} {:>9} {:>9}", "copy", "us", "TB/s");

    // (what, source offset, source pitch): A's and B's lines, C's, and aligned ones
    let cases = [
        ("the launcher's copy, lines 8 bytes aligned", 0, width),
        ("the launcher's copy, lines 2 bytes aligned", 1, width | 1),
        ("the launcher's copy, aligned lines", 0, DST_LD),
    ];
    for (what, offset, src_ld) in cases {
        let t = time(&stream, 5, 30, |i| {
            let src = sources[i % TURNS].slice(offset..);
            copy_lines(&stream, &src, src_ld, &mut dests[i % TURNS], DST_LD, (lines, width))
        })?;
        // the last run's destination, every line against its source
        let last = (5 + 30 - 1) % TURNS;
        let got = stream.clone_dtoh(&dests[last])?;
        let wrong =
            (0..lines).flat_map(|l| (0..width).map(move |e| (l, e))).filter(|&(l, e)| got[l * DST_LD + e] != values[offset + l * src_ld + e]).count();
        let us = t.median_ms() * 1e3;
        println!("{what:<44} {us:>9.2} {:>9.2}{}", moved / us / 1e6, if wrong > 0 { format!("  ({wrong} elements wrong)") } else { String::new() });
        if wrong > 0 {
            std::process::exit(1);
        }
    }
    let elems = lines * width;
    let t = time(&stream, 5, 30, |i| {
        let (src, dst) = (sources[i % TURNS].slice(..elems), &mut dests[i % TURNS]);
        stream.memcpy_dtod(&src, &mut dst.slice_mut(..elems))?;
        Ok(())
    })?;
    let us = t.median_ms() * 1e3;
    println!("{:<44} {us:>9.2} {:>9.2}", "cuMemcpyDtoDAsync, contiguous", moved / us / 1e6);
    Ok(())
}
