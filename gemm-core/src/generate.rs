//! check -> generate: a spec's errors, root cause first, or its CUDA source.

use crate::check::{check, Diag};
use crate::spec::{Arch, Atom, KernelSpec};
use crate::support::{path_mismatch, unsupported};

/// A generated kernel: what the runtime needs to compile and launch it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    pub kernel_name: String,
    pub source: String,
    pub threads: u32,
    /// Dynamic shared memory per block in bytes.
    pub smem_bytes: u32,
    pub arch: Arch,
}

/// Every error of `spec`: the rules it breaks and what the generator cannot
/// emit yet. An atom paired with staging of another path (wgmma fed by
/// cp.async, TMA stages feeding mma) is one root cause: its error comes
/// alone, since every rule after it judges a kernel of the wrong path.
pub fn diagnose(spec: &KernelSpec) -> Vec<Diag> {
    if let Some(root) = path_mismatch(spec) {
        return vec![root];
    }
    let mut diags = check(spec);
    let missing = unsupported(spec);
    // a cluster off the Hopper path, which does not generate one there, is
    // the root of what it asks of the rest (sm_90a of the arch): those
    // errors go with its removal
    if !matches!(spec.atom, Atom::Wgmma { .. }) && missing.iter().any(|d| d.at == "cluster") {
        let without: Vec<&str> = check(&KernelSpec { cluster: None, ..spec.clone() }).iter().map(|d| d.at).collect();
        diags.retain(|d| d.at.starts_with("cluster") || without.contains(&d.at));
    }
    diags.extend(missing);
    diags
}

/// Checks `spec` and generates its CUDA source, or returns every error found.
pub fn generate(spec: &KernelSpec) -> Result<Generated, Vec<Diag>> {
    let diags = diagnose(spec);
    if !diags.is_empty() {
        return Err(diags);
    }
    let source = crate::cuda::emit(spec);
    Ok(Generated { kernel_name: spec.kernel_name(), source, threads: spec.threads(), smem_bytes: spec.smem_bytes(), arch: spec.arch })
}
