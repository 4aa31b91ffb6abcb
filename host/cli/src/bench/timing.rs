//! How every warpsort row is timed: CUDA events around the operation only,
//! the input restored before each run (untimed), two warm-up runs, the median
//! of `reps` timed runs.

use warpsort::cudarc::driver::CudaSlice;
use warpsort::cudarc::driver::sys::CUevent_flags;
use warpsort::{Gpu, SortKey};

use super::{Bench, Result};

/// Untimed runs before the timed ones.
pub const WARM_UPS: usize = 2;

/// The median (mean of the two middle values for an even count, as the CUB
/// harness); NaN for no values.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) { (v[m - 1] + v[m]) / 2.0 } else { v[m] }
}

impl Bench<'_> {
    /// `input` on the GPU twice: the pristine copy and the one sorted.
    pub fn upload<K: SortKey>(&self, input: &[K]) -> Result<(CudaSlice<K>, CudaSlice<K>)> {
        let s = self.gpu.stream();
        let pristine = s.clone_htod(input)?;
        let work = s.clone_dtod(&pristine)?;
        Ok((pristine, work))
    }

    /// Times `f` on a fresh copy of `pristine` (restored before every run, untimed).
    pub fn time<K: SortKey>(
        &self,
        pristine: &CudaSlice<K>,
        work: &mut CudaSlice<K>,
        mut f: impl FnMut(&mut CudaSlice<K>) -> warpsort::Result<()>,
    ) -> Result<f64> {
        let s = self.gpu.stream();
        self.time_reset(|timed| if timed { f(work) } else { Ok(s.memcpy_dtod(pristine, work)?) })
    }

    /// Times `step(true)` after an untimed `step(false)` (the reset) before
    /// every run: [`WARM_UPS`] warm-ups, then the median of `reps`.
    pub fn time_reset(&self, step: impl FnMut(bool) -> warpsort::Result<()>) -> Result<f64> {
        self.time_reset_on(self.gpu, step)
    }

    /// [`Bench::time_reset`] of work on another handle's stream (`on`: one
    /// with a user key type's kernels).
    pub fn time_reset_on(&self, on: &Gpu, mut step: impl FnMut(bool) -> warpsort::Result<()>) -> Result<f64> {
        let s = on.stream();
        let ctx = on.context();
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let (start, stop) = (ctx.new_event(flags)?, ctx.new_event(flags)?);
        let mut times = Vec::new();
        for i in 0..self.opts.reps() + WARM_UPS {
            step(false)?;
            start.record(s)?;
            step(true)?;
            stop.record(s)?;
            stop.synchronize()?;
            if i >= WARM_UPS {
                times.push(start.elapsed_ms(&stop)? as f64);
            }
        }
        Ok(median(times))
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }
}
