//! Every kernel of the layers compiles with NVRTC for its target arch,
//! without a warning; no GPU needed (`scripts/test` provisions NVRTC).

use gemm_runtime::internal::compile::compile_with_log;
use gemm_runtime::Kernel;
use gemm_tp::kernels::*;

#[test]
fn every_layer_kernel_compiles_with_nvrtc_for_its_target_arch() {
    let kernels: [&Kernel; 12] = [
        &linear::KERNEL,
        &linear_tail_split::KERNEL,
        &linear_queued::KERNEL,
        &linear_bias::KERNEL,
        &linear_bias_tail_split::KERNEL,
        &linear_bias_queued::KERNEL,
        &linear_gelu::KERNEL,
        &linear_gelu_tail_split::KERNEL,
        &linear_gelu_queued::KERNEL,
        &linear_bias_gelu::KERNEL,
        &linear_bias_gelu_tail_split::KERNEL,
        &linear_bias_gelu_queued::KERNEL,
    ];
    for k in kernels {
        let target = k.spec.arch.nvrtc_name();
        let (ptx, log) = compile_with_log(&k.source, &k.name, target).unwrap_or_else(|e| panic!("{}: {e}", k.name));
        assert!(!log.contains("warning"), "{}: NVRTC warns:\n{log}", k.name);
        let ptx = ptx.to_src();
        assert!(ptx.contains(&format!(".entry {}", k.name)) && ptx.contains(&format!(".target {target}")), "{}: no entry for {target}", k.name);
    }
}
