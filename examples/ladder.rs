//! The four ladders in one process, every step checked against cuBLAS and timed
//! beside it: the f32 SIMT table, the sm_80 and Hopper tensor-core tables, then fp8.
//! `cargo run --release --example ladder [SIZE | M N K]`

fn main() {
    gemm_ladder::cli::main_for_both();
}
