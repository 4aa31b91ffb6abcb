//! Sorts of host slices: full sorts through the host sorts (`hostsort`:
//! streamed through pinned buffers, beyond the GPU's memory when needed),
//! argsorts through `hostsort` too, segmented sorts copied up and back.

use super::same_len;
use crate::error::Result;
use crate::gpu::Gpu;
use crate::hostsort::HostOptions;
use crate::key::{Order, Payload, SortKey};
use crate::options::SortOptions;

impl Gpu {
    /// Sorts a host slice ascending: copies it to the GPU, sorts, copies it
    /// back. On error the slice is unchanged. The device copy lives in the
    /// temporary storage this handle caches, so a second call of the same
    /// size allocates no device memory.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut v = vec![5i32, -3, 0];
    /// gpu.sort_slice(&mut v)?;
    /// assert_eq!(v, [-3, 0, 5]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_slice<K: SortKey>(&self, keys: &mut [K]) -> Result<()> {
        self.sort_slice_with(keys, &SortOptions::default())
    }

    /// [`Gpu::sort_slice`] with options.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut v = vec![0.5f32, f32::NAN, -1.0];
    /// gpu.sort_slice_with(&mut v, &warpsort::SortOptions::descending())?;
    /// assert!(v[0].is_nan() && v[2] == -1.0);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_slice_with<K: SortKey>(&self, keys: &mut [K], opts: &SortOptions) -> Result<()> {
        self.sort_host(keys, &HostOptions::from(*opts))
    }

    /// Sorts host key-value slices (see [`Gpu::sort_pairs`] and
    /// [`Gpu::sort_pairs_host`]). On error both are unchanged.
    ///
    /// ```no_run
    /// use warpsort::SortOptions;
    /// let gpu = warpsort::Gpu::new()?;
    /// let (mut k, mut v) = (vec![2u32, 1, 2], vec![10u64, 11, 12]);
    /// gpu.sort_pairs_slice(&mut k, &mut v, &SortOptions { stable: true, ..Default::default() })?;
    /// assert_eq!((k, v), (vec![1, 2, 2], vec![11, 10, 12]));
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_pairs_slice<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: &mut [V],
        opts: &SortOptions,
    ) -> Result<()> {
        self.sort_pairs_host(keys, vals, &HostOptions::from(*opts))
    }

    /// [`Gpu::argsort`] of a host slice: the permutation as a `Vec` (see
    /// [`Gpu::argsort_host`]).
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// assert_eq!(gpu.argsort_slice(&[5i32, -3, 0], &Default::default())?, [1, 2, 0]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort_slice<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> Result<Vec<u32>> {
        self.argsort_host(keys, &HostOptions::from(*opts))
    }

    /// [`Gpu::sort_segments_by_offsets`] of host slices (copied to the GPU
    /// and back); the offsets are checked on the host first. On error `keys`
    /// is unchanged.
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut v = vec![2.5f32, -1.0, 4.0, 0.0];
    /// gpu.sort_segments_by_offsets_slice(&mut v, &[0, 2, 4], Order::Ascending)?;
    /// assert_eq!(v, [-1.0, 2.5, 0.0, 4.0]);
    /// assert!(gpu.sort_segments_by_offsets_slice(&mut v, &[0, 3, 2, 4], Order::Ascending).is_err());
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_by_offsets_slice<K: SortKey>(
        &self,
        keys: &mut [K],
        offsets: &[u32],
        order: Order,
    ) -> Result<()> {
        self.offsets_slice::<K, u32>(keys, None, offsets, &SortOptions::ordered(order))
    }

    /// [`Gpu::sort_segments_by_offsets_pairs`] of host slices. On error both
    /// are unchanged.
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let (mut k, mut v) = (vec![3u32, 1, 9, 8], vec![0u32, 1, 2, 3]);
    /// gpu.sort_segments_by_offsets_pairs_slice(&mut k, &mut v, &[0, 2, 4], Order::Descending)?;
    /// assert_eq!(v, [0, 1, 2, 3]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_by_offsets_pairs_slice<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: &mut [V],
        offsets: &[u32],
        order: Order,
    ) -> Result<()> {
        self.offsets_slice(keys, Some(vals), offsets, &SortOptions::ordered(order))
    }

    fn offsets_slice<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: Option<&mut [V]>,
        offsets: &[u32],
        opts: &SortOptions,
    ) -> Result<()> {
        let n = keys.len();
        if let Some(v) = &vals {
            same_len(n, v.len())?;
        }
        super::segments::check_host_offsets(offsets, n)?;
        opts.validate()?;
        if n < 2 {
            return Ok(());
        }
        let mut dk = self.stream().clone_htod(keys)?;
        let off = self.stream().clone_htod(offsets)?;
        match vals {
            None => {
                self.sort_segments_by_offsets_with(&mut dk, &off, opts)?;
                self.stream().memcpy_dtoh(&dk, keys)?;
            }
            Some(vals) => {
                let mut dv = self.stream().clone_htod(vals)?;
                self.sort_segments_by_offsets_pairs_with(&mut dk, &mut dv, &off, opts)?;
                let mut out = keys.to_vec();
                self.stream().memcpy_dtoh(&dk, &mut out)?;
                self.stream().memcpy_dtoh(&dv, vals)?;
                keys.copy_from_slice(&out);
            }
        }
        Ok(())
    }
}
