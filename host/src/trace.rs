//! A timeline of the host transfers' steps, to see where a host sort's time
//! goes (cargo feature `trace`, off by default: without it `mark` does
//! nothing and [`take`] returns nothing).
//!
//! The staging, the copy crew and the host sorts' pipelines mark each step
//! as the host sees it (a piece handed to the crew, a DMA queued, a landed
//! DMA seen, a run's sort queued); `warpsort bench --suite host` built with
//! the feature prints a summary per case.

/// The steps the benchmark reads by name (marked by the staging and the
/// host sorts' pipelines).
pub mod step {
    /// An upload piece's DMA queued.
    pub const UP_DMA_QUEUED: &str = "up: DMA queued";
    /// A download piece's DMA queued.
    pub const DOWN_DMA_QUEUED: &str = "down: DMA queued";
    /// A run uploaded: its sort and merges about to be queued.
    pub const RUN_QUEUING: &str = "run: uploaded, sort and merges to queue";
    /// A run's sort and merges queued.
    pub const RUN_QUEUED: &str = "run: sort and merges queued";
}

/// Notes that `what` happened now (with the feature `trace`).
#[inline]
pub(crate) fn mark(what: &'static str) {
    #[cfg(feature = "trace")]
    on::log().lock().unwrap_or_else(|e| e.into_inner()).push((what, std::time::Instant::now()));
    #[cfg(not(feature = "trace"))]
    let _ = what;
}

/// Watches the GPU reach a point (with the feature `trace`): `event` is
/// called then, to record an event where the point is on its stream, and
/// [`poll`] marks `what` when the host first sees the event complete.
#[inline]
pub(crate) fn watch(what: &'static str, event: impl FnOnce() -> crate::Result<cudarc::driver::CudaEvent>) {
    #[cfg(feature = "trace")]
    if let Ok(e) = event() {
        on::watched().lock().unwrap_or_else(|e| e.into_inner()).push((what, e));
    }
    #[cfg(not(feature = "trace"))]
    let _ = (what, event);
}

/// Marks each watched point the GPU has passed (the transfer loops call it
/// at every turn; with the feature `trace`).
#[inline]
pub(crate) fn poll() {
    #[cfg(feature = "trace")]
    on::watched().lock().unwrap_or_else(|e| e.into_inner()).retain(|(what, e)| {
        let done = e.try_is_complete().unwrap_or(true);
        if done {
            mark(what);
        }
        !done
    });
}

/// The marks since the last call, oldest first: each step's name and its
/// time in seconds after the first mark. Empty without the feature `trace`.
///
/// ```
/// // Every step a host sort marked since the last call (none here).
/// let steps: Vec<(&'static str, f64)> = warpsort::trace::take();
/// assert!(steps.windows(2).all(|w| w[0].1 <= w[1].1));
/// ```
pub fn take() -> Vec<(&'static str, f64)> {
    #[cfg(feature = "trace")]
    {
        let marks = std::mem::take(&mut *on::log().lock().unwrap_or_else(|e| e.into_inner()));
        let Some(&(_, t0)) = marks.first() else { return Vec::new() };
        marks.into_iter().map(|(w, t)| (w, t.duration_since(t0).as_secs_f64())).collect()
    }
    #[cfg(not(feature = "trace"))]
    Vec::new()
}

#[cfg(feature = "trace")]
mod on {
    use std::sync::{Mutex, OnceLock};
    use std::time::Instant;

    pub(super) fn watched() -> &'static Mutex<Vec<(&'static str, cudarc::driver::CudaEvent)>> {
        static WATCHED: OnceLock<Mutex<Vec<(&'static str, cudarc::driver::CudaEvent)>>> = OnceLock::new();
        WATCHED.get_or_init(|| Mutex::new(Vec::new()))
    }

    pub(super) fn log() -> &'static Mutex<Vec<(&'static str, Instant)>> {
        static LOG: OnceLock<Mutex<Vec<(&'static str, Instant)>>> = OnceLock::new();
        LOG.get_or_init(|| Mutex::new(Vec::with_capacity(1 << 16)))
    }
}
