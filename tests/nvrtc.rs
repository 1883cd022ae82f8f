//! Every ladder kernel compiles with NVRTC for its target arch; no GPU needed.
//! `scripts/test` provisions libnvrtc where none is installed, so a missing
//! library fails these tests rather than skipping them.

use gemm_ladder::STEPS;
use gemm_runtime::compile::{compile, compilations};

#[test]
fn every_ladder_kernel_compiles_with_nvrtc_for_its_target_arch() {
    for step in &STEPS {
        let k = step.kernel;
        let ptx = compile(&k.source, &k.name, k.spec.arch.nvrtc_name())
            .unwrap_or_else(|e| panic!("step {}: {e}", step.name));
        let ptx = ptx.to_src();
        assert!(ptx.contains(&format!(".entry {}", k.name)), "step {}: PTX lacks the kernel entry", step.name);
        assert!(ptx.contains(".target sm_80"), "step {}: PTX is not for sm_80", step.name);
    }
}

#[test]
fn nvrtc_errors_carry_the_log_and_the_offending_line() {
    let source = "extern \"C\" __global__ void broken(float* x) {\n    x[0] = undefined_name;\n}\n";
    let before = compilations();
    let err = compile(source, "broken", "sm_80").unwrap_err().to_string();
    assert!(compilations() > before);
    assert!(err.contains("undefined_name"), "{err}");
    assert!(err.contains("   2 |     x[0] = undefined_name;"), "the offending line is quoted: {err}");
}
