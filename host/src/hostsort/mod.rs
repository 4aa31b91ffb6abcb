//! Sorts of host memory at the bus's speed, and of more data than the GPU
//! holds ([`Gpu::sort_host`], [`Gpu::sort_pairs_host`]; the plain
//! host-slice sorts go the same way).
//!
//! - `plan`: on the GPU (the items fit it twice: runs sorted as they
//!   arrive, merged; once: the runs kept there, merged a bucket at a time
//!   as they copy back) or beyond it, the runs and buckets that fit the
//!   memory limit, the buckets' splitters (`plan::splitters`, shared with
//!   the distributed sort);
//! - `run`: the two pipelines, over the handle's pinned staging rings
//!   (`gpu::staging`: uploads and downloads overlap each other and the
//!   sorts; pageable memory copied through them on all cores, pinned memory
//!   directly).
//!
//! **What the caller's slices go through.** Until the last pass they are
//! only read: any error before it leaves them as they were. On the GPU, the
//! last pass is the copy back of the sorted items; beyond the GPU it is the
//! merge of the buckets into the slices (also on the GPU when the items fit
//! it only once). If the last pass fails (a copy or kernel fails, the
//! device is lost), the error comes back and the slices are not sorted:
//! beyond the GPU they then hold every input item exactly once (each key
//! with its value), the merged buckets first, then the rest from the sorted
//! runs kept in host memory; on the GPU the rest is copied from the runs
//! there while the device still works (fitting once), and the items not
//! yet copied back are lost with the device.

pub(crate) mod plan;
mod run;

use std::fmt;

use cudarc::driver::{CudaSlice, DeviceRepr};

use crate::error::Result;
use crate::gpu::Gpu;
use crate::key::{Payload, SortIndex, SortKey};
use crate::options::SortOptions;

/// A pass of a host sort, for [`Progress`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// On the GPU: items copied up, their runs sorted as they arrive.
    Upload,
    /// On the GPU: the sorted items copied back.
    Download,
    /// Beyond the GPU, pass 1: runs copied up, sorted, written to host memory.
    Runs,
    /// Buckets of the sorted runs merged on the GPU into the caller's
    /// slices: beyond the GPU (pass 2, the runs read from host memory), or
    /// when the items fit the GPU once but not twice (the runs kept there).
    Merge,
}

impl Phase {
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Upload => "upload",
            Phase::Download => "download",
            Phase::Runs => "runs",
            Phase::Merge => "merge",
        }
    }
}

/// How far a host sort is: `done` of `total` bytes of items through `phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The pass under way.
    pub phase: Phase,
    /// Bytes of items (keys and values) through it.
    pub done: u64,
    /// Bytes of items in all.
    pub total: u64,
    /// Whether the sort goes beyond the GPU's memory (or the limit).
    pub out_of_core: bool,
}

/// A fault injected into a host sort, for tests of the guarantees: the
/// sort fails with [`Error::Injected`](crate::Error::Injected) once
/// `phase` has moved `after` bytes.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub phase: Phase,
    pub after: u64,
}

/// What a host sort may use and whom it tells how far it is.
///
/// ```no_run
/// use warpsort::{Gpu, HostOptions, Progress};
/// let gpu = Gpu::new()?;
/// let mut keys: Vec<u64> = (0..10_000_000u64).rev().collect();
/// let show = |p: Progress| eprintln!("{} {}/{}", p.phase.name(), p.done, p.total);
/// // At most 32 MiB of device memory: sorted in runs, merged from host memory.
/// let opts = HostOptions { memory_limit: Some(32 << 20), progress: Some(&show), ..Default::default() };
/// gpu.sort_host(&mut keys, &opts)?;
/// assert!(keys.windows(2).all(|w| w[0] <= w[1]));
/// # Ok::<(), warpsort::Error>(())
/// ```
#[derive(Clone, Copy, Default)]
pub struct HostOptions<'a> {
    /// Order, stability, algorithm of the sorts on the GPU.
    pub sort: SortOptions,
    /// Device memory the sort may allocate, bytes; `None`: what the device
    /// has free, less a margin. Data that needs more sorts beyond the GPU.
    pub memory_limit: Option<usize>,
    /// Bytes of each pinned staging buffer (0: 4 MiB; sixteen each way,
    /// kept by the [`Gpu`] for later calls).
    pub staging_bytes: usize,
    /// Called after each piece of work with how far the sort is.
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
    #[doc(hidden)]
    pub fault: Option<Fault>,
}

impl fmt::Debug for HostOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostOptions")
            .field("sort", &self.sort)
            .field("memory_limit", &self.memory_limit)
            .field("staging_bytes", &self.staging_bytes)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl From<SortOptions> for HostOptions<'_> {
    fn from(sort: SortOptions) -> Self {
        HostOptions { sort, ..Default::default() }
    }
}

impl Gpu {
    /// Sorts host keys of any length: on the GPU when they fit (copies
    /// overlapping the sort), else in runs merged from host memory (see
    /// [`HostOptions::memory_limit`]). Pinned memory (a
    /// [`PinnedHostSlice`](cudarc::driver::PinnedHostSlice)'s, or registered)
    /// is copied directly, pageable memory through pinned staging buffers.
    /// Errors before the last pass leave the keys as they were (the module
    /// docs say what a failed last pass leaves).
    ///
    /// The device memory the sort allocates (about three times the data,
    /// within the limit) goes back to the device's default pool, which keeps
    /// it for the next sort instead of handing it back to the driver (mapping
    /// it anew takes milliseconds per gigabyte); [`Gpu::release_scratch`]
    /// hands it back. A host sort that would not fit on the GPU twice in
    /// what the driver has free hands it back first.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = vec![3i16, -7, 0];
    /// gpu.sort_host(&mut keys, &Default::default())?;
    /// assert_eq!(keys, [-7, 0, 3]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_host<K: SortKey>(&self, keys: &mut [K], opts: &HostOptions) -> Result<()> {
        self.host_sort::<K, u32>(keys, None, opts)
    }

    /// [`Gpu::sort_host`] of keys and values (stable when
    /// `opts.sort.stable`, at any length).
    ///
    /// ```no_run
    /// use warpsort::{HostOptions, SortOptions};
    /// let gpu = warpsort::Gpu::new()?;
    /// let (mut k, mut v) = (vec![2u64, 1, 2], vec![0.5f32, 1.5, 2.5]);
    /// let opts = HostOptions::from(SortOptions { stable: true, ..Default::default() });
    /// gpu.sort_pairs_host(&mut k, &mut v, &opts)?;
    /// assert_eq!(v, [1.5, 0.5, 2.5]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_pairs_host<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: &mut [V],
        opts: &HostOptions,
    ) -> Result<()> {
        self.host_sort(keys, Some(vals), opts)
    }

    /// The permutation that sorts host keys (which stay unchanged), as
    /// [`Gpu::argsort`] gives it, with positions of `I` (`u32` or `u64`),
    /// at any length `I` can count. When the keys, the positions and the
    /// argsort's storage fit the memory limit the keys stream up and the
    /// positions down; beyond it (or past the GPU argsort's stable limit of
    /// `u32::MAX` keys) a copy of the keys is sorted with their positions as
    /// values by [`Gpu::sort_pairs_host`], on the GPU or beyond it, and the
    /// positions come back (keys wider than one word: one such sort of
    /// `(word, position)` pairs per word, least significant first). On
    /// error nothing is returned and the keys are as they were.
    ///
    /// ```no_run
    /// use warpsort::{HostOptions, SortOptions};
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys = vec![2.5f32, -1.0, 2.5, 0.0];
    /// // At most 1 MiB of device memory: this small input still fits.
    /// let opts = HostOptions { sort: SortOptions { stable: true, ..Default::default() }, memory_limit: Some(1 << 20), ..Default::default() };
    /// let p: Vec<u64> = gpu.argsort_host(&keys, &opts)?;
    /// assert_eq!(p, [1, 3, 0, 2]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort_host<K: SortKey, I: SortIndex>(&self, keys: &[K], opts: &HostOptions) -> Result<Vec<I>> {
        self.host_argsort(keys, opts)
    }

    /// Copies host items into a new device buffer at the bus's speed, as
    /// the host sorts do: pageable memory through the handle's pinned
    /// staging (pieces copied on all cores while the copy engine moves the
    /// ones before), pinned memory directly. The copy follows the work
    /// queued on the handle's stream, and has landed when this returns.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys: Vec<u32> = (0..1 << 20).rev().collect();
    /// let mut d = gpu.copy_to_device(&keys)?;
    /// gpu.sort(&mut d)?;
    /// let mut back = vec![0u32; keys.len()];
    /// gpu.copy_to_host(&d, &mut back)?;
    /// assert!(back.is_sorted());
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn copy_to_device<T: DeviceRepr + Copy>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        self.upload_staged(host)
    }

    /// Copies a device buffer into host items of the same length at the
    /// bus's speed (see [`Gpu::copy_to_device`]), after the work queued on
    /// the handle's stream. [`Error::CopyLength`](crate::Error::CopyLength)
    /// if the lengths differ, before anything moves.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let d = gpu.copy_to_device(&[3u64, 1, 2])?;
    /// let mut back = [0u64; 3];
    /// gpu.copy_to_host(&d, &mut back)?;
    /// assert_eq!(back, [3, 1, 2]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn copy_to_host<T: DeviceRepr + Copy>(&self, dev: &CudaSlice<T>, host: &mut [T]) -> Result<()> {
        self.download_staged(dev, host)
    }
}
