//! What TMA makes of lines that are not 128 bytes apart, and whether maps
//! by line class mend it: a matrix whose lines lie `ld` elements apart is
//! split into `classes` maps, class `c` holding lines `c, c + classes,
//! ...` (every line of a class at the same offset modulo 16 bytes, the
//! map's stride a multiple of 16), its base rounded down to 16 bytes and
//! its boxes shifted right by what was rounded off. A tile's lines would
//! then land in shared memory grouped by class, a permutation of its rows
//! that a GEMM could undo where it stores C.
//!
//! Loads: 132 blocks stream 256 x 64 bf16 tiles of a 4096 x 4100 matrix
//! (in the L2 after the first pass) through a ring of six stages, as a
//! Hopper GEMM's producer fills its stages, each tile in `classes` boxes.
//! Stores: 256 x 64 tiles of shared memory to a 4096 x 4097 C, each in
//! `classes` boxes, then C checked element by element.
//!
//! On the H100 (BENCHMARKS.md) a box whose first element is not 16 bytes
//! aligned (a class shifted by 4 or 1 elements) is an illegal instruction,
//! swizzled or not, load or store; so each configuration runs in a process
//! of its own: `cargo run --release -p gemm-lab -- tma-lines I` runs
//! configuration I, no argument lists them.

use gemm_ladder::measure::Bench;
use gemm_ladder::peak::{random_buffers, sm_count, TMA_LINES_SOURCE};
use gemm_runtime::cudarc::driver::{DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use gemm_runtime::internal::timing::time;
use gemm_runtime::internal::tma::{strided_map, TensorMap};
use gemm_runtime::spec::Elem;
use gemm_runtime::GemmError;

const ROWS: usize = 4096;
const K: usize = 4100;
const N: usize = 4097;
const STAGES: u32 = 6;
const MAX_CLASSES: usize = 16;

/// The kernels' first parameter: a map a class and each class's shift (elements).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Maps {
    m: [TensorMap; MAX_CLASSES],
    shift: [i32; MAX_CLASSES],
}
// SAFETY: plain bytes, laid out as the kernels' `Maps` (64-byte aligned maps, then the shifts).
unsafe impl DeviceRepr for Maps {}

/// `classes` maps of the `rows` x `width` bf16 matrix at `ptr` whose lines
/// lie `ld` elements apart, boxes of 64 x 256 / `classes` lines.
fn class_maps(ptr: u64, (rows, width): (usize, usize), ld: usize, classes: usize, swizzle: u32) -> Result<Maps, GemmError> {
    let mut maps = Vec::new();
    let mut shift = [0i32; MAX_CLASSES];
    for (c, shift) in shift.iter_mut().enumerate().take(classes) {
        // class c's first line, its base rounded down to 16 bytes (8 elements)
        let start = c * ld;
        let base = start & !7;
        *shift = (start - base) as i32;
        let (lines, box_lines) = ((rows - c).div_ceil(classes), (256 / classes) as u32);
        maps.push(strided_map(Elem::Bf16, ptr + 2 * base as u64, (lines, width + *shift as usize), classes * ld, [64, box_lines], swizzle)?);
    }
    let m = std::array::from_fn(|i| maps[i.min(classes - 1)]);
    Ok(Maps { m, shift })
}

/// Every configuration measured: (loads or stores, lines apart, classes, swizzle bytes).
const CONFIGS: [(&str, usize, usize, u32); 16] = [
    ("load", 4160, 1, 128),
    ("load", 4104, 1, 128),
    ("load", 4104, 8, 128),
    ("load", 4160, 16, 128),
    ("load", 4100, 2, 128),
    ("load", 4100, 16, 128),
    ("load", 4100, 2, 0),
    ("load", 4100, 16, 0),
    ("store", 4160, 1, 128),
    ("store", 4104, 1, 128),
    ("store", 4104, 8, 128),
    ("store", 4160, 16, 128),
    ("store", 4097, 8, 128),
    ("store", 4097, 8, 0),
    ("store", 4097, 16, 0),
    ("store", 4160, 1, 0),
];

pub fn main(args: Vec<String>) -> Result<(), GemmError> {
    // `tma_lines I`: configuration I alone (a box TMA refuses ends the process); none: the list
    let Some(i) = args.get(1).cloned() else {
        for (i, c) in CONFIGS.iter().enumerate() {
            println!("{i}: {c:?}");
        }
        return Ok(());
    };
    let Some(&(kind, ld, classes, swizzle)) = i.parse::<usize>().ok().and_then(|i| CONFIGS.get(i)) else {
        eprintln!("error: `{i}` is not a configuration: give 0 to {} (no argument lists them)", CONFIGS.len() - 1);
        std::process::exit(2);
    };
    let bench = Bench::open()?;
    let stream = bench.stream().clone();
    let ctx = stream.context();
    let target = gemm_runtime::internal::compile::device_target(gemm_runtime::spec::Arch::Sm90a, ctx.compute_capability()?);
    let load = gemm_runtime::internal::compile::load(ctx, TMA_LINES_SOURCE, "lines_load", target, 0)?;
    let store = gemm_runtime::internal::compile::load(ctx, TMA_LINES_SOURCE, "lines_store", target, 0)?;
    let sms = sm_count(&bench)?;
    let attr = gemm_runtime::cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    let what = format!("{kind}s, lines {} bytes apart, {classes} class(es), swizzle {swizzle}", 2 * ld);

    if kind == "load" {
        // 256 x 64 tiles of a 4096 x 4100 matrix, 256 a block
        let smem = 1024 + STAGES * 32768 + 16 * STAGES;
        load.set_attribute(attr, smem as i32)?;
        let (panels, steps) = (ROWS / 256, K.div_ceil(64));
        let units = (sms as i64) * 256;
        let buffer = random_buffers(&bench, 2 * ROWS * ld, 1)?;
        let (ptr, _read) = buffer[0].device_ptr(&stream);
        let maps = class_maps(ptr, (ROWS, K), ld, classes, swizzle)?;
        let cfg = LaunchConfig { grid_dim: (sms, 1, 1), block_dim: (160, 1, 1), shared_mem_bytes: smem };
        let (classes_arg, panels_arg, steps_arg, stages) = (classes as i32, panels as i32, steps as i32, STAGES as i32);
        let t = time(&stream, 3, 20, |_| {
            let mut l = stream.launch_builder(&load);
            l.arg(&maps).arg(&classes_arg).arg(&panels_arg).arg(&steps_arg).arg(&units).arg(&stages);
            // SAFETY: every map lies inside `buffer`; the kernel writes its own shared memory only.
            unsafe { l.launch(cfg) }?;
            Ok(())
        })?;
        println!("{what}: {:.2} TB/s", units as f64 * 32768.0 / (t.median_ms() * 1e-3) / 1e12);
        return Ok(());
    }

    // 256 x 64 tiles to a 4096 x 4097 C, checked after one pass
    let smem = 1024 + 32768;
    store.set_attribute(attr, smem as i32)?;
    let (panels, chunks) = (ROWS / 256, N.div_ceil(64));
    let c = stream.clone_htod(&vec![0xffffu16; ROWS * ld])?;
    let (ptr, written) = c.device_ptr(&stream);
    let maps = class_maps(ptr, (ROWS, N), ld, classes, swizzle)?;
    drop(written);
    let cfg = LaunchConfig { grid_dim: (sms, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: smem };
    let (classes_arg, panels_arg, chunks_arg, swizzled) = (classes as i32, panels as i32, chunks as i32, i32::from(swizzle > 0));
    let launch = |units: i64| {
        let mut l = stream.launch_builder(&store);
        l.arg(&maps).arg(&classes_arg).arg(&panels_arg).arg(&chunks_arg).arg(&units).arg(&swizzled);
        // SAFETY: every map lies inside `c`, and TMA clips each box to its map.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(GemmError::from)
    };
    launch((panels * chunks) as i64)?;
    let host = stream.clone_dtoh(&c)?;
    // C's elements stored wrong, and elements past C's lines written (TMA clips a box to
    // 16-byte granules, not elements: past N = 4097 it writes up to 7 more)
    let wrong = (0..ROWS * ld).filter(|&i| i % ld < N && host[i] != ((i / ld % 256) * 64 + i % ld % 64) as u16).count();
    let past = (0..ROWS * ld).filter(|&i| i % ld >= N && host[i] != 0xffff).count();
    let units = (4 * panels * chunks) as i64;
    let t = time(&stream, 3, 20, |_| launch(units))?;
    let bytes = 4.0 * (ROWS * N * 2) as f64;
    let checked = format!("{wrong} elements of C wrong, {past} past its lines written");
    println!("{what}: {:.2} TB/s, {checked}", bytes / (t.median_ms() * 1e-3) / 1e12);
    Ok(())
}
