//! Sorts of host slices: copied into the handle's cached device storage
//! (beside the sort's own), sorted there, copied back. On error the slices
//! are as they were: results land in them only once everything succeeded.

use super::{items, same_len, shape, val_bytes};
use crate::error::{Error, Result};
use crate::exec::permute::Positions;
use crate::gpu::Gpu;
use crate::key::{Order, Payload, SortKey};
use crate::launch::Items;
use crate::options::SortOptions;
use crate::plan::SortPlan;
use crate::plan::permute::{HostPlan, StablePlan};

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
        let n = keys.len();
        let sort = SortPlan::new(opts, shape::<K>(0), n, self.policy())?;
        if n < 2 {
            return Ok(());
        }
        let plan = HostPlan::new(n, size_of::<K>(), 0, 0, sort);
        let mode = K::MODE | opts.order.mode();
        self.with_scratch(None, plan.temp_bytes, |base| {
            self.upload(base, keys)?;
            self.run_sort(&items::<K>(base, 0, 0, n), &plan.inner, mode, base + plan.inner_at as u64)?;
            self.download(base, keys)
        })
    }

    /// Sorts host key-value slices (see [`Gpu::sort_pairs`]). On error both
    /// are unchanged.
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
        let n = keys.len();
        same_len(n, vals.len())?;
        let vb = val_bytes::<V>();
        let mode = K::MODE | opts.order.mode();
        if opts.stable && n > super::sort::STABLE_MAX_LEN {
            return Err(Error::TooLong { len: n, max: super::sort::STABLE_MAX_LEN });
        }
        let unstable = SortPlan::new(opts, shape::<K>(vb), n, self.policy())?;
        let stable = SortPlan::new(opts, shape::<K>(0).ranked(), n, self.policy())?;
        if n < 2 {
            return Ok(());
        }
        if opts.stable {
            let plan = HostPlan::new(n, size_of::<K>(), vb, 0, StablePlan::new(n, vb, stable));
            return self.with_scratch(None, plan.temp_bytes, |base| {
                let items = self.upload_pairs(base, plan.vals, keys, vals)?;
                let stable = &plan.inner;
                self.run_stable(&items, vb, stable, base + plan.inner_at as u64, |ranked, inner| {
                    self.run_sort(ranked, &stable.inner, mode, inner)
                })?;
                self.download_pairs(base, plan.vals, keys, vals)
            });
        }
        let plan = HostPlan::new(n, size_of::<K>(), vb, 0, unstable);
        self.with_scratch(None, plan.temp_bytes, |base| {
            let items = self.upload_pairs(base, plan.vals, keys, vals)?;
            self.run_sort(&items, &plan.inner, mode, base + plan.inner_at as u64)?;
            self.download_pairs(base, plan.vals, keys, vals)
        })
    }

    /// Copies host pairs into storage at `base` (values at `vals_at`).
    fn upload_pairs<K: SortKey, V: Payload>(&self, base: u64, vals_at: usize, keys: &[K], vals: &[V]) -> Result<Items> {
        self.upload(base, keys)?;
        self.upload(base + vals_at as u64, vals)?;
        Ok(items::<K>(base, base + vals_at as u64, size_of::<V>(), keys.len()))
    }

    /// Copies sorted pairs back. Keys land in a host copy first: if the
    /// values' copy fails, both slices are as they were.
    fn download_pairs<K: SortKey, V: Payload>(
        &self,
        base: u64,
        vals_at: usize,
        keys: &mut [K],
        vals: &mut [V],
    ) -> Result<()> {
        let mut out = keys.to_vec();
        self.download(base, &mut out)?;
        self.download(base + vals_at as u64, vals)?;
        keys.copy_from_slice(&out);
        Ok(())
    }

    /// [`Gpu::argsort`] of a host slice: the permutation as a `Vec`.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// assert_eq!(gpu.argsort_slice(&[5i32, -3, 0], &Default::default())?, [1, 2, 0]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort_slice<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> Result<Vec<u32>> {
        let n = keys.len();
        let inner = super::argsort::argsort_plan::<K>(self, opts, n, 4)?;
        super::argsort::check_len(n, 4, opts)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let plan = HostPlan::new(n, size_of::<K>(), 4, 0, inner);
        let mode = K::MODE | opts.order.mode();
        self.with_scratch(None, plan.temp_bytes, |base| {
            self.upload(base, keys)?;
            let out = base + plan.vals as u64;
            let a = &plan.inner;
            let keys = items::<K>(base, 0, 0, n);
            let temp = base + plan.inner_at as u64;
            self.run_argsort(&keys, size_of::<K>(), out, 4, opts.stable, Positions::Global, a, temp, |it, t| {
                self.run_sort(it, &a.inner, mode, t)
            })?;
            let mut p = vec![0u32; n];
            self.download(out, &mut p)?;
            Ok(p)
        })
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
