//! What the GPU's SM clock and power did while a measurement ran, read from
//! NVML (the driver's `libnvidia-ml`, loaded at run time). A GEMM run for
//! more than a moment holds the GPU at its power cap, at the clock its own
//! draw leaves it: sustained figures say which clock that was.

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gemm_runtime::cudarc::driver::sys::CUdevice_attribute as A;
use gemm_runtime::cudarc::driver::CudaContext;
use libloading::Library;

type Device = *mut c_void;
type Ret = c_int;

/// NVML's SM clock domain (`NVML_CLOCK_SM`).
const CLOCK_SM: c_int = 1;
/// The clock event reason "software power cap" (`nvmlClocksEventReasonSwPowerCap`).
const SW_POWER_CAP: c_ulonglong = 0x4;
/// How often [`sampled`] reads the clock.
const PERIOD: Duration = Duration::from_millis(1);

/// One GPU's handle in NVML, with the calls the samples take.
pub struct Nvml {
    dev: Device,
    clock: unsafe extern "C" fn(Device, c_int, *mut c_uint) -> Ret,
    power: unsafe extern "C" fn(Device, *mut c_uint) -> Ret,
    reasons: unsafe extern "C" fn(Device, *mut c_ulonglong) -> Ret,
    /// Undoes this handle's `nvmlInit_v2` (NVML counts them) before the library is unloaded.
    shutdown: unsafe extern "C" fn() -> Ret,
    /// (keeps the calls above loaded)
    _lib: Library,
}

// SAFETY: NVML's calls may be made from any thread (its documentation says
// the library is thread-safe), and the handle is an id it keeps.
unsafe impl Send for Nvml {}
unsafe impl Sync for Nvml {}

/// The means of the samples taken while something ran.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub sm_mhz: f64,
    pub watts: f64,
    /// The share of samples in which the power cap held the clock down.
    pub capped: f64,
}

impl Sample {
    /// The means of samples of (MHz, W, power-capped); `None` for none.
    fn mean(samples: &[(f64, f64, bool)]) -> Option<Sample> {
        let n = samples.len() as f64;
        (n > 0.0).then(|| Sample {
            sm_mhz: samples.iter().map(|s| s.0).sum::<f64>() / n,
            watts: samples.iter().map(|s| s.1).sum::<f64>() / n,
            capped: samples.iter().filter(|s| s.2).count() as f64 / n,
        })
    }

    /// `"at 1455 MHz, 699 W, power-capped in 100% of samples"`
    pub fn describe(&self) -> String {
        format!("at {:.0} MHz, {:.0} W, power-capped in {:.0}% of samples", self.sm_mhz, self.watts, 100.0 * self.capped)
    }
}

impl Nvml {
    /// NVML's handle of the GPU behind `ctx`, found by its PCI address;
    /// `None` where the library does not load or does not know the GPU
    /// (the measurements then go without their clocks).
    pub fn open(ctx: &CudaContext) -> Option<Nvml> {
        let pci = |a: A| ctx.attribute(a).ok();
        let bus_id = format!(
            "{:08x}:{:02x}:{:02x}.0",
            pci(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
            pci(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
            pci(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?
        );
        let bus_id = CString::new(bus_id).ok()?;
        // SAFETY: the symbols are NVML's, with the C signatures its header
        // (nvml.h) gives them; the handle is written by NVML before use.
        unsafe {
            let lib = Library::new("libnvidia-ml.so.1").ok()?;
            let init: unsafe extern "C" fn() -> Ret = *lib.get(b"nvmlInit_v2\0").ok()?;
            let by_bus: unsafe extern "C" fn(*const c_char, *mut Device) -> Ret = *lib.get(b"nvmlDeviceGetHandleByPciBusId_v2\0").ok()?;
            let clock = *lib.get(b"nvmlDeviceGetClockInfo\0").ok()?;
            let power = *lib.get(b"nvmlDeviceGetPowerUsage\0").ok()?;
            let reasons = *lib.get(b"nvmlDeviceGetCurrentClocksEventReasons\0").ok()?;
            let shutdown: unsafe extern "C" fn() -> Ret = *lib.get(b"nvmlShutdown\0").ok()?;
            if init() != 0 {
                return None;
            }
            let mut dev: Device = std::ptr::null_mut();
            if by_bus(bus_id.as_ptr(), &mut dev) != 0 {
                shutdown();
                return None;
            }
            Some(Nvml { dev, clock, power, reasons, shutdown, _lib: lib })
        }
    }

    /// The SM clock (MHz), the power draw (W) and whether the power cap holds the clock now.
    fn sample(&self) -> Option<(f64, f64, bool)> {
        let (mut mhz, mut mw, mut why) = (0, 0, 0);
        // SAFETY: `dev` is NVML's handle and each call writes the one value it is given.
        let ok = unsafe {
            (self.clock)(self.dev, CLOCK_SM, &mut mhz) == 0 && (self.power)(self.dev, &mut mw) == 0 && (self.reasons)(self.dev, &mut why) == 0
        };
        ok.then(|| (f64::from(mhz), f64::from(mw) / 1e3, why & SW_POWER_CAP != 0))
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        // SAFETY: pairs the `nvmlInit_v2` that `open` made; the handle is not used after.
        unsafe { (self.shutdown)() };
    }
}

/// Runs `f`, sampling `nvml`'s GPU every millisecond on another thread
/// meanwhile; its result, and the samples' means (`None` without NVML or
/// samples).
pub fn sampled<T>(nvml: Option<&Nvml>, f: impl FnOnce() -> T) -> (T, Option<Sample>) {
    let (out, mut means) = sampled_each(&nvml.into_iter().collect::<Vec<_>>(), f);
    (out, means.pop().flatten())
}

/// [`sampled`] for several GPUs at once: each one's means, in order.
pub fn sampled_each<T>(gpus: &[&Nvml], f: impl FnOnce() -> T) -> (T, Vec<Option<Sample>>) {
    if gpus.is_empty() {
        return (f(), Vec::new());
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            let mut samples = vec![Vec::new(); gpus.len()];
            while !stop.load(Ordering::Relaxed) {
                for (gpu, s) in gpus.iter().zip(&mut samples) {
                    s.extend(gpu.sample());
                }
                std::thread::sleep(PERIOD);
            }
            samples
        });
        let out = f();
        stop.store(true, Ordering::Relaxed);
        let samples = sampler.join().unwrap_or_default();
        (out, (0..gpus.len()).map(|i| samples.get(i).and_then(|s| Sample::mean(s))).collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_average_to_their_means_and_none_to_nothing() {
        let m = Sample::mean(&[(1980.0, 300.0, false), (1440.0, 700.0, true), (1500.0, 695.0, true), (1460.0, 697.0, true)]).unwrap();
        assert_eq!((m.sm_mhz, m.watts, m.capped), (1595.0, 598.0, 0.75));
        assert_eq!(m.describe(), "at 1595 MHz, 598 W, power-capped in 75% of samples");
        assert!(Sample::mean(&[]).is_none());
    }

    #[test]
    fn without_nvml_the_work_runs_unsampled() {
        let (out, sample) = sampled(None, || 42);
        assert_eq!(out, 42);
        assert!(sample.is_none());
    }
}
