//! Everything that can go wrong at run time, each with a message that says what
//! to do about it.

use gemm_core::Diag;

/// `Debug` prints the message too, so `fn main() -> Result<(), GemmError>`
/// reports what went wrong and what to do, not a variant name.
#[derive(thiserror::Error)]
pub enum GemmError {
    #[error("no CUDA driver: libcuda could not be loaded (is an NVIDIA driver installed?)")]
    NoDriver,
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    #[error("NVRTC is not available: libnvrtc could not be loaded; install the CUDA toolkit or PyPI's nvidia-cuda-nvrtc and put its lib folder on LD_LIBRARY_PATH")]
    NoNvrtc,
    #[error("cuBLAS is not available: libcublas could not be loaded")]
    NoCublas,
    #[error("NVRTC failed to compile `{kernel}` for {arch}:\n{log}")]
    Compile { kernel: String, arch: String, log: String },
    #[error("`{kernel}` targets {kernel_arch} but the device is sm_{major}{minor}; run it on a newer GPU or declare an older arch")]
    ArchTooOld { kernel: String, kernel_arch: String, major: i32, minor: i32 },
    #[error("`{kernel}` targets {kernel_arch}, whose instructions (wgmma, TMA, setmaxnreg) only compute capability 9.0 has, but the device is sm_{major}{minor}; run it on a Hopper GPU (H100, H200) or describe the kernel without them (atom = mma, staging = cp_async)")]
    ArchSpecific { kernel: String, kernel_arch: String, major: i32, minor: i32 },
    #[error("`{kernel}` needs {needs} bytes of shared memory a block, but this GPU (sm_{major}{minor}) gives a block at most {limit}; {advice}")]
    SharedMemory { kernel: String, needs: u32, limit: u32, major: i32, minor: i32, advice: String },
    #[error("`{kernel}` reads {operand} as {expected} but was given a buffer of {given}")]
    ElemMismatch { kernel: String, operand: char, expected: &'static str, given: &'static str },
    #[error("{what} belongs to GPU {on}, but the stream runs on GPU {here}; a launch takes buffers of its stream's GPU: copy the buffer to GPU {here}, or launch on a stream of GPU {on}")]
    WrongDevice { what: &'static str, on: usize, here: usize },
    #[error("{operand} is {rows} x {cols} {layout} with leading dimension {ld}, which must be at least {min}")]
    LeadingDim { operand: char, rows: usize, cols: usize, layout: &'static str, ld: usize, min: usize },
    #[error("{operand} is {rows} x {cols} (leading dimension {ld}) and needs {needed} elements, but its buffer holds {len}")]
    BufferTooSmall { operand: char, rows: usize, cols: usize, ld: usize, needed: usize, len: usize },
    #[error("`{kernel}` cannot run this size: {rule}")]
    UnsupportedSize { kernel: String, rule: String },
    #[error("`{kernel}` accesses {operand} in aligned pieces of {bytes} bytes: {what}")]
    Misaligned { kernel: String, operand: char, bytes: u32, what: String },
    #[error("{operand}'s {what} is {value}, past the 32-bit {bound} (at most {max}); split the problem")]
    IndexOverflow { operand: char, what: &'static str, value: usize, bound: &'static str, max: usize },
    #[error("`{kernel}` {what}")]
    EpilogueArgs { kernel: String, what: String },
    #[error("the driver could not encode {operand}'s TMA tensor map: {what}")]
    TensorMap { operand: char, what: String },
    #[error("`{kernel}`'s warpgroups ask setmaxnreg for {asked} registers, but its blocks are launched with {held} ({per_thread} a thread, as ptxas compiled it): the consumers would wait for them forever; lower consumer_regs or producer_regs")]
    RegisterPool { kernel: String, asked: u32, held: u32, per_thread: u32 },
    #[error("copy: {0}")]
    Copy(String),
    #[error("bad batch: {0}")]
    Batch(String),
    #[error("tuning: {0}")]
    Tuning(String),
    #[error("not supported: {0}")]
    Unsupported(String),
    #[error("the spec is invalid:\n{}", list(.0))]
    InvalidSpec(Vec<Diag>),
    // cudarc without its `std` feature gives these errors Debug only.
    #[error("CUDA driver error: {0:?}")]
    Driver(cudarc::driver::DriverError),
    #[error("cuBLAS error: {0:?}")]
    Cublas(cudarc::cublas::result::CublasError),
}

impl From<cudarc::driver::DriverError> for GemmError {
    fn from(e: cudarc::driver::DriverError) -> Self {
        GemmError::Driver(e)
    }
}

impl From<cudarc::cublas::result::CublasError> for GemmError {
    fn from(e: cudarc::cublas::result::CublasError) -> Self {
        GemmError::Cublas(e)
    }
}

fn list(diags: &[Diag]) -> String {
    diags.iter().map(|d| format!("  {}: {}", d.at, d.msg)).collect::<Vec<_>>().join("\n")
}

impl std::fmt::Debug for GemmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::GemmError;

    #[test]
    fn debug_prints_the_message_so_main_reports_it() {
        let e = GemmError::LeadingDim { operand: 'A', rows: 4, cols: 8, layout: "row-major", ld: 4, min: 8 };
        assert_eq!(format!("{e:?}"), e.to_string());
        assert!(format!("{e:?}").contains("leading dimension 4, which must be at least 8"));
    }

    /// A buffer on another GPU: the message names it, both GPUs, and the
    /// two ways out.
    #[test]
    fn a_buffer_on_another_gpu_says_which_and_where_to_put_it() {
        let m = GemmError::WrongDevice { what: "the bias", on: 1, here: 0 }.to_string();
        assert!(m.starts_with("the bias belongs to GPU 1, but the stream runs on GPU 0"), "{m}");
        assert!(m.contains("copy the buffer to GPU 0") && m.contains("a stream of GPU 1"), "{m}");
    }

    /// An sm_90a kernel on a GPU newer than Hopper is not "too old": the
    /// error says which GPUs have its instructions and what to write instead.
    #[test]
    fn a_hopper_kernel_elsewhere_says_where_it_runs() {
        let e = GemmError::ArchSpecific { kernel: "k".into(), kernel_arch: "sm_90a".into(), major: 10, minor: 0 };
        let m = e.to_string();
        assert!(m.contains("only compute capability 9.0") && m.contains("sm_100") && m.contains("atom = mma"), "{m}");
    }
}
