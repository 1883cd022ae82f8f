fn main() {
    let which = std::env::args().nth(1).unwrap();
    let k = match which.as_str() {
        "swiglu" => &gemm_ladder::grouped::grouped_swiglu::KERNEL,
        "contiguous" => &gemm_ladder::grouped::grouped_contiguous::KERNEL,
        _ => &gemm_ladder::grouped::grouped_fp8_swiglu::KERNEL,
    };
    print!("{}", k.source);
}
