//! Both ladders in one process, every step checked against cuBLAS and timed
//! beside it: the f32 SIMT table, then the tensor-core table.
//! `cargo run --release --example ladder [SIZE | M N K]`

fn main() {
    gemm_ladder::cli::main_for_both();
}
