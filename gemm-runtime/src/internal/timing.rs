//! GPU timing with CUDA events: warm-up, then the median of many runs.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaStream;

use crate::GemmError;

/// Times of repeated runs, in milliseconds.
#[derive(Clone, Debug)]
pub struct Timing {
    pub runs_ms: Vec<f32>,
}

impl Timing {
    pub fn median_ms(&self) -> f64 {
        let mut v = self.runs_ms.clone();
        v.sort_by(f32::total_cmp);
        let mid = v.len() / 2;
        if v.len() % 2 == 1 {
            v[mid] as f64
        } else {
            (v[mid - 1] as f64 + v[mid] as f64) / 2.0
        }
    }

    /// TFLOP/s at the median time.
    pub fn tflops(&self, flops: f64) -> f64 {
        flops / (self.median_ms() * 1e-3) / 1e12
    }
}

/// Runs `f(i)` `warmup` times untimed, then `runs` times (at least once: a
/// median needs a run), each between two events on `stream`. `i` counts
/// every call, so callers can rotate inputs.
pub fn time(stream: &CudaStream, warmup: usize, runs: usize, mut f: impl FnMut(usize) -> Result<(), GemmError>) -> Result<Timing, GemmError> {
    let runs = runs.max(1);
    for i in 0..warmup {
        f(i)?;
    }
    let mut events = Vec::with_capacity(runs);
    for i in 0..runs {
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        f(warmup + i)?;
        let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        events.push((start, end));
    }
    stream.synchronize()?;
    let runs_ms = events.iter().map(|(s, e)| s.elapsed_ms(e)).collect::<Result<_, _>>()?;
    Ok(Timing { runs_ms })
}

/// Like [`time`], but each run is `batch` calls back to back between two
/// events, and its time the pair's interval over `batch`: a launch's cost
/// in a stream of launches (as a model's decode step issues them), where
/// [`time`] also counts each launch's start and drain alone.
pub fn time_back_to_back(
    stream: &CudaStream,
    warmup: usize,
    runs: usize,
    batch: usize,
    mut f: impl FnMut(usize) -> Result<(), GemmError>,
) -> Result<Timing, GemmError> {
    let batch = batch.max(1);
    let mut calls = 0;
    let mut batches = time(stream, warmup, runs, |_| {
        for _ in 0..batch {
            f(calls)?;
            calls += 1;
        }
        Ok(())
    })?;
    batches.runs_ms.iter_mut().for_each(|t| *t /= batch as f32);
    Ok(batches)
}
