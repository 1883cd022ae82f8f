//! Device discovery: a context and stream, or an error that says why not.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

use crate::GemmError;

/// A GPU to run on: its context, a stream, and what it is.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub name: String,
    /// Compute capability (major, minor).
    pub capability: (i32, i32),
}

/// Is libcuda loadable? cudarc panics on first use when it is not, so ask first.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Opens device `ordinal`: `Err` with the reason when there is no driver or no such device.
pub fn open(ordinal: usize) -> Result<Gpu, GemmError> {
    if !driver_present() {
        return Err(GemmError::NoDriver);
    }
    let count = CudaContext::device_count().map_err(|e| GemmError::NoDevice(format!("{e:?}")))?;
    if ordinal >= count as usize {
        return Err(GemmError::NoDevice(format!("asked for device {ordinal}, but {count} CUDA device(s) are visible")));
    }
    let ctx = CudaContext::new(ordinal).map_err(|e| GemmError::NoDevice(format!("{e:?}")))?;
    let stream = ctx.default_stream();
    Ok(Gpu { name: ctx.name()?, capability: ctx.compute_capability()?, ctx, stream })
}

/// The driver's version as "major.minor".
pub fn driver_version() -> Result<String, GemmError> {
    let mut v = 0;
    // SAFETY: writes one int; the driver library is loaded by `open` before this is useful.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }.result()?;
    Ok(format!("{}.{}", v / 1000, (v % 1000) / 10))
}

/// What a GPU is, read from its driver: the figures tools print beside
/// their measurements (the share of HBM a kernel reads at, the SMs a grid
/// fills), so that no tool carries the constants of one GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    pub name: String,
    /// Compute capability (major, minor).
    pub capability: (i32, i32),
    pub sms: u32,
    pub l2_bytes: u64,
    /// The SMs' highest clock, in kHz.
    pub sm_clock_khz: u32,
    /// The memory's highest clock, in kHz.
    pub memory_clock_khz: u32,
    pub bus_width_bits: u32,
}

impl Facts {
    /// Reads the facts of the device behind `ctx`.
    pub fn read(ctx: &CudaContext) -> Result<Facts, GemmError> {
        use cudarc::driver::sys::CUdevice_attribute as A;
        let read = |a: A| -> Result<u32, GemmError> { Ok(ctx.attribute(a)?.max(0) as u32) };
        Ok(Facts {
            name: ctx.name()?,
            capability: ctx.compute_capability()?,
            sms: read(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            l2_bytes: read(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?.into(),
            sm_clock_khz: read(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
            memory_clock_khz: read(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
            bus_width_bits: read(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        })
    }

    /// The memory's peak bandwidth in bytes a second: two transfers a clock
    /// (double data rate) over the whole bus. A copy reaches less; tools
    /// print both.
    pub fn memory_bytes_per_s(&self) -> f64 {
        2.0 * f64::from(self.memory_clock_khz) * 1e3 * f64::from(self.bus_width_bits) / 8.0
    }

    /// `bytes_per_s` as a percentage of [`Self::memory_bytes_per_s`].
    pub fn percent_of_memory(&self, bytes_per_s: f64) -> f64 {
        100.0 * bytes_per_s / self.memory_bytes_per_s()
    }

    /// One line for a report's header: name, SMs, L2, memory and its peak.
    pub fn summary(&self) -> String {
        format!(
            "{} (sm_{}{}): {} SMs at up to {} MHz, {} MiB of L2, {}-bit memory at {} MHz: {:.2} TB/s peak",
            self.name,
            self.capability.0,
            self.capability.1,
            self.sms,
            self.sm_clock_khz / 1000,
            self.l2_bytes >> 20,
            self.bus_width_bits,
            self.memory_clock_khz / 1000,
            self.memory_bytes_per_s() / 1e12
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Facts;

    /// Attributes as the driver reports them for an H100 SXM and an H200.
    fn facts(name: &str, sms: u32, l2_mib: u64, memory_clock_khz: u32, bus_width_bits: u32) -> Facts {
        Facts { name: name.into(), capability: (9, 0), sms, l2_bytes: l2_mib << 20, sm_clock_khz: 1_980_000, memory_clock_khz, bus_width_bits }
    }

    #[test]
    fn memory_bandwidth_comes_from_the_memory_clock_and_bus_width() {
        // an H100 SXM's 5120-bit HBM3 at 2619 MHz: its datasheet's 3.35 TB/s
        let h100 = facts("NVIDIA H100 80GB HBM3", 132, 50, 2_619_000, 5120);
        assert!((h100.memory_bytes_per_s() / 1e12 - 3.352).abs() < 0.001, "{}", h100.memory_bytes_per_s());
        // an H200's HBM3e as its driver reports it (6016 bits at 3201 MHz): 4.81 TB/s, its datasheet's 4.8
        let h200 = facts("NVIDIA H200", 132, 60, 3_201_000, 6016);
        assert!((h200.memory_bytes_per_s() / 1e12 - 4.815).abs() < 0.001, "{}", h200.memory_bytes_per_s());
        // the same bytes a second are a smaller share of the faster memory
        let read = 3.0e12;
        assert!((h100.percent_of_memory(read) - 89.5).abs() < 0.1);
        assert!((h200.percent_of_memory(read) - 62.3).abs() < 0.1);
    }

    #[test]
    fn the_summary_names_the_device_it_read() {
        let h200 = facts("NVIDIA H200", 132, 60, 3_201_000, 6016);
        let line = h200.summary();
        assert!(line.starts_with("NVIDIA H200 (sm_90): 132 SMs"), "{line}");
        assert!(line.contains("60 MiB of L2") && line.contains("4.81 TB/s"), "{line}");
        assert!(!line.contains("H100"), "{line}");
    }
}
