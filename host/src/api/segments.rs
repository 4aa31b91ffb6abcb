//! Segmented sorts: many equal-length rows (as `torch.sort` along the last
//! dimension) and variable-length segments given by offsets (as CUB's
//! `DeviceSegmentedSort`); keys, key-value (stable or not) and argsort.
//! Every segment is sorted by the kernel its length needs (one rule,
//! [`SegmentKernel::for_len`]); segments past a block's tile by the merge
//! sort.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::check::Segments;
use super::{items, shape};
use crate::error::{Error, Result};
use crate::exec::permute::Positions;
use crate::exec::wide::WideItems;
use crate::exec::wide::{check_wide, pass_shape};
use crate::gpu::Gpu;
use crate::gpu::scratch::alloc_bytes;
use crate::key::{Order, Payload, SortKey};
use crate::launch::{DevPtr, Items};
use crate::options::{SegmentKernel, SortOptions};
use crate::plan::SortShape;
use crate::plan::permute::{ArgsortPlan, GatherPlan, Inner};
use crate::plan::segments::{OffsetsPlan, RowsPlan};

use super::sort::STABLE_MAX_LEN;

/// How a segmented operation finds its segments.
#[derive(Clone, Copy)]
enum Cut {
    /// Rows of this length, sorted by this kernel when given.
    Rows(usize, Option<SegmentKernel>),
    /// Segments `offsets[s]..offsets[s + 1]`: the offsets' address and
    /// the number of segments.
    Offsets(DevPtr, usize),
}

impl Gpu {
    /// Sorts every row `[i * seg_len, (i + 1) * seg_len)` of `keys`
    /// independently (the last may be shorter), as `torch.sort(x, dim=-1)`.
    /// Rows of any length: up to 256 items several rows per warp, up to 512
    /// a warp each, up to 8192 a block each, longer ones by the merge sort,
    /// row after row. [`Error::BadSegment`] for rows of 0 items.
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut rows = gpu.stream().clone_htod(&[3u32, 1, 2, 9, 8, 7])?;
    /// gpu.sort_segments(&mut rows, 3, Order::Ascending)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&rows)?, [1, 2, 3, 7, 8, 9]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments<K: SortKey>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        seg_len: usize,
        order: Order,
    ) -> Result<()> {
        self.segmented_keys(keys, Cut::Rows(seg_len, None), &SortOptions::ordered(order))
    }

    /// [`Gpu::sort_segments`] with a chosen kernel (for benchmarks and
    /// tuning); fails with [`Error::BadSegment`] when it cannot sort `seg_len`.
    ///
    /// ```no_run
    /// use warpsort::{Order, SegmentKernel};
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut rows = gpu.stream().clone_htod(&vec![5u32; 32 * 100])?;
    /// gpu.sort_segments_with(&mut rows, 32, Order::Ascending, SegmentKernel::Warp { keys_per_lane: 1 })?;
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_with<K: SortKey>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        seg_len: usize,
        order: Order,
        kernel: SegmentKernel,
    ) -> Result<()> {
        self.segmented_keys(keys, Cut::Rows(seg_len, Some(kernel)), &SortOptions::ordered(order))
    }

    /// Key-value [`Gpu::sort_segments`]: each value moves with its key
    /// inside its row.
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3u32, 1, 9, 8])?;
    /// let mut vals = gpu.stream().clone_htod(&[0u64, 1, 2, 3])?;
    /// gpu.sort_segments_pairs(&mut keys, &mut vals, 2, Order::Ascending)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&vals)?, [1, 0, 3, 2]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_pairs<K: SortKey, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        vals: &mut impl DevicePtrMut<V>,
        seg_len: usize,
        order: Order,
    ) -> Result<()> {
        self.segmented_pairs(keys, vals, Cut::Rows(seg_len, None), &SortOptions::ordered(order))
    }

    /// [`Gpu::sort_segments_pairs`] with options: `opts.stable` keeps equal
    /// keys' values in their input order (`torch.sort(x, dim=-1,
    /// stable=True)`), `opts.order` the direction, and the other options
    /// choose how rows past 8192 items are sorted.
    ///
    /// ```no_run
    /// use warpsort::SortOptions;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[1u32, 0, 1, 1, 1, 0])?;
    /// let mut vals = gpu.stream().clone_htod(&[0u32, 1, 2, 3, 4, 5])?;
    /// let stable = SortOptions { stable: true, ..Default::default() };
    /// gpu.sort_segments_pairs_with(&mut keys, &mut vals, 3, &stable)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&vals)?, [1, 0, 2, 5, 3, 4]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_pairs_with<K: SortKey, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        vals: &mut impl DevicePtrMut<V>,
        seg_len: usize,
        opts: &SortOptions,
    ) -> Result<()> {
        self.segmented_pairs(keys, vals, Cut::Rows(seg_len, None), opts)
    }

    /// The permutation that sorts each row, as positions within the row
    /// (`torch.sort(x, dim=-1).indices`): `keys[row + p[row + j]]` for
    /// `j = 0, 1, ...` is the row sorted. `opts.stable` keeps equal keys in
    /// input order. Up to `u32::MAX` keys.
    ///
    /// ```no_run
    /// use warpsort::SortOptions;
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys = gpu.stream().clone_htod(&[3.0f32, 1.0, 2.0, 0.5, 0.5, -1.0])?;
    /// let stable = SortOptions { stable: true, ..Default::default() };
    /// let p = gpu.argsort_segments(&keys, 3, &stable)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&p)?, [1, 2, 0, 2, 0, 1]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort_segments<K: SortKey>(
        &self,
        keys: &impl DevicePtr<K>,
        seg_len: usize,
        opts: &SortOptions,
    ) -> Result<CudaSlice<u32>> {
        self.segmented_argsort(keys, Cut::Rows(seg_len, None), Positions::InRows(seg_len.max(1)), opts)
    }

    /// Sorts every segment `keys[offsets[s]..offsets[s + 1]]` independently,
    /// as CUB's `DeviceSegmentedSort` with `d_begin_offsets = offsets` and
    /// `d_end_offsets = offsets + 1`.
    ///
    /// The offsets (`segments + 1` of them, `u32`) must start at 0, never
    /// decrease, and end at `keys.len()`: the segments tile the keys. Empty
    /// and one-item segments are fine. Otherwise the call fails with
    /// [`Error::BadOffsets`] before touching the keys (the offsets are checked
    /// on the GPU; a few words come back). Each segment is sorted by the
    /// kernel its length needs: up to 256 items several segments per warp in
    /// registers, up to 512 a warp each, up to 8192 a block each in registers
    /// and shared memory, longer ones by the merge sort (one after another;
    /// their storage is allocated before the keys are touched). Up to
    /// `u32::MAX` keys ([`Error::TooLong`] past that).
    ///
    /// The call waits once for the GPU (a few words: how many segments of
    /// each size class, which decides the launches), so it cannot be
    /// captured into a CUDA graph; equal rows ([`Gpu::sort_segments`]) can.
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3u32, 1, 2, 7, 9, 8])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 3, 3, 4, 6])?; // [3 1 2] [] [7] [9 8]
    /// gpu.sort_segments_by_offsets(&mut keys, &offsets, Order::Ascending)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&keys)?, [1, 2, 3, 7, 8, 9]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_by_offsets<K: SortKey>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        offsets: &impl DevicePtr<u32>,
        order: Order,
    ) -> Result<()> {
        self.sort_segments_by_offsets_with(keys, offsets, &SortOptions::ordered(order))
    }

    /// [`Gpu::sort_segments_by_offsets`] with options: `opts.order`, and how
    /// segments past 8192 items are sorted.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3u32, 1, 2, 7])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 3, 4])?;
    /// gpu.sort_segments_by_offsets_with(&mut keys, &offsets, &warpsort::SortOptions::descending())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&keys)?, [3, 2, 1, 7]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_by_offsets_with<K: SortKey>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        offsets: &impl DevicePtr<u32>,
        opts: &SortOptions,
    ) -> Result<()> {
        let n = keys.len();
        let (segs, (off, _o)) = self.offsets(offsets, n)?;
        self.segmented_keys(keys, Cut::Offsets(off, segs), opts)
    }

    /// Key-value [`Gpu::sort_segments_by_offsets`]: each value moves with its
    /// key inside its segment.
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3u32, 1, 9, 8])?;
    /// let mut vals = gpu.stream().clone_htod(&[0u32, 1, 2, 3])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 2, 4])?;
    /// gpu.sort_segments_by_offsets_pairs(&mut keys, &mut vals, &offsets, Order::Descending)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&vals)?, [0, 1, 2, 3]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_by_offsets_pairs<K: SortKey, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        vals: &mut impl DevicePtrMut<V>,
        offsets: &impl DevicePtr<u32>,
        order: Order,
    ) -> Result<()> {
        self.sort_segments_by_offsets_pairs_with(keys, vals, offsets, &SortOptions::ordered(order))
    }

    /// [`Gpu::sort_segments_by_offsets_pairs`] with options: `opts.stable`
    /// keeps equal keys' values in their input order.
    ///
    /// ```no_run
    /// use warpsort::SortOptions;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[1u32, 1, 0, 2, 2])?;
    /// let mut vals = gpu.stream().clone_htod(&[0u32, 1, 2, 3, 4])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 3, 5])?;
    /// let stable = SortOptions { stable: true, ..Default::default() };
    /// gpu.sort_segments_by_offsets_pairs_with(&mut keys, &mut vals, &offsets, &stable)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&vals)?, [2, 0, 1, 3, 4]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_by_offsets_pairs_with<K: SortKey, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        vals: &mut impl DevicePtrMut<V>,
        offsets: &impl DevicePtr<u32>,
        opts: &SortOptions,
    ) -> Result<()> {
        let n = keys.len();
        let (segs, (off, _o)) = self.offsets(offsets, n)?;
        self.segmented_pairs(keys, vals, Cut::Offsets(off, segs), opts)
    }

    /// The permutation that sorts each segment given by offsets, as
    /// positions in the whole array (what CUB users get from a segmented
    /// key-value sort of an index sequence): `keys[p[offsets[s]..offsets[s +
    /// 1]]]` is segment `s` sorted. `opts.stable` keeps equal keys in input
    /// order.
    ///
    /// ```no_run
    /// use warpsort::SortOptions;
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys = gpu.stream().clone_htod(&[3u32, 1, 2, 9, 8])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 3, 5])?;
    /// let p = gpu.argsort_segments_by_offsets(&keys, &offsets, &SortOptions::default())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&p)?, [1, 2, 0, 4, 3]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort_segments_by_offsets<K: SortKey>(
        &self,
        keys: &impl DevicePtr<K>,
        offsets: &impl DevicePtr<u32>,
        opts: &SortOptions,
    ) -> Result<CudaSlice<u32>> {
        let n = keys.len();
        let (segs, (off, _o)) = self.offsets(offsets, n)?;
        self.segmented_argsort(keys, Cut::Offsets(off, segs), Positions::Global, opts)
    }

    /// The offsets' address and segment count, after the checks that need
    /// no offset's value (at least one; `n` and the segments within `u32`;
    /// the offsets in this context).
    fn offsets<'a>(&'a self, offsets: &'a impl DevicePtr<u32>, n: usize) -> Result<(usize, super::Addr<'a>)> {
        if offsets.len() == 0 {
            return Err(no_offsets());
        }
        let max = u32::MAX as usize;
        if n > max {
            return Err(Error::TooLong { len: n, max });
        }
        if offsets.len() > max {
            return Err(Error::TooLong { len: offsets.len(), max });
        }
        Ok((offsets.len() - 1, self.addr(offsets, "segment offsets")?))
    }

    /// Keys sorted within the segments `segments` gives, under `opts`.
    pub(crate) fn sort_cut<K: SortKey>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        segments: Segments,
        opts: &SortOptions,
    ) -> Result<()> {
        match segments {
            Segments::Rows(len) => self.segmented_keys(keys, Cut::Rows(len, None), opts),
            Segments::Offsets(offsets) => self.sort_segments_by_offsets_with(keys, offsets, opts),
        }
    }

    /// Key-value [`Gpu::sort_cut`].
    pub(crate) fn sort_cut_pairs<K: SortKey, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        vals: &mut impl DevicePtrMut<V>,
        segments: Segments,
        opts: &SortOptions,
    ) -> Result<()> {
        match segments {
            Segments::Rows(len) => self.segmented_pairs(keys, vals, Cut::Rows(len, None), opts),
            Segments::Offsets(offsets) => self.sort_segments_by_offsets_pairs_with(keys, vals, offsets, opts),
        }
    }

    fn segmented_keys<K: SortKey>(&self, keys: &mut impl DevicePtrMut<K>, cut: Cut, opts: &SortOptions) -> Result<()> {
        let n = keys.len();
        let (k, _k) = self.addr_mut(keys, "keys")?;
        if let Some(fields) = super::wide::<K>() {
            return self.sort_wide(WideItems::keys(k, n, fields), opts, &|it, o| self.wide_pass(it, o, cut));
        }
        self.segmented(&items::<K>(k, 0, 0, n), shape::<K>(0), K::MODE | opts.order.mode(), cut, opts, 0, false)
    }

    fn segmented_pairs<K: SortKey, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        vals: &mut impl DevicePtrMut<V>,
        cut: Cut,
        opts: &SortOptions,
    ) -> Result<()> {
        let p = self.pairs(keys, vals, opts)?;
        if let Some(fields) = super::wide::<K>() {
            let pass = |it: &Items, o: &SortOptions| self.wide_pass(it, o, cut);
            let w = WideItems { raw: p.items.keys, vals: p.items.vals, val_bytes: p.val_bytes, n: p.items.n, fields };
            return self.sort_wide(w, opts, &pass);
        }
        self.segmented(&p.items, p.shape, p.mode, cut, opts, p.val_bytes, opts.stable)
    }

    fn segmented_argsort<K: SortKey>(
        &self,
        keys: &impl DevicePtr<K>,
        cut: Cut,
        positions: Positions,
        opts: &SortOptions,
    ) -> Result<CudaSlice<u32>> {
        let n = keys.len();
        if n > STABLE_MAX_LEN {
            return Err(Error::TooLong { len: n, max: STABLE_MAX_LEN });
        }
        let (k, _k) = self.addr(keys, "keys")?;
        if let Some(fields) = super::wide::<K>() {
            check_wide(n, opts)?;
            // SAFETY: written below before this returns Ok.
            let mut out = unsafe { self.stream().alloc::<u32>(n) }?;
            if n > 0 {
                let (o, _o) = self.addr_mut(&mut out, "positions")?;
                let pass = |it: &Items, opts: &SortOptions| self.wide_pass(it, opts, cut);
                match positions {
                    Positions::Global => self.wide_permutation(&WideItems::keys(k, n, fields), opts, o, &pass)?,
                    Positions::InRows(_) => {
                        // Positions in their rows: `i % row` gathered by the permutation.
                        let (global, rows) = (alloc_bytes(self.stream(), n * 4)?, alloc_bytes(self.stream(), n * 4)?);
                        let (g, r) = (self.ptr(&global), self.ptr(&rows));
                        self.wide_permutation(&WideItems::keys(k, n, fields), opts, g, &pass)?;
                        self.positions(positions, r, n)?;
                        self.gather_values(4, r, g, o, n)?;
                    }
                }
            }
            return Ok(out);
        }
        let sorted = if opts.stable { shape::<K>(0).ranked() } else { shape::<K>(4) };
        let mode = K::MODE | opts.order.mode();
        let keys = items::<K>(k, 0, 0, n);
        // SAFETY: the argsort writes every position before this returns Ok.
        let mut out = unsafe { self.stream().alloc::<u32>(n) }?;
        let (o, _o) = self.addr_mut(&mut out, "positions")?;
        let stable = opts.stable;
        match cut {
            Cut::Rows(len, kernel) => {
                let rows = RowsPlan::new(opts, sorted, n, len, kernel, self.policy())?;
                let plan = ArgsortPlan::new(n, size_of::<K>(), false, rows);
                self.argsort_cut(&keys, size_of::<K>(), o, stable, positions, &plan, |it, p, t| {
                    self.run_rows(it, p, mode, t)
                })?
            }
            Cut::Offsets(off, segs) => {
                opts.validate()?;
                let plan = ArgsortPlan::new(n, size_of::<K>(), false, OffsetsPlan::new(sorted, n, segs));
                self.argsort_cut(&keys, size_of::<K>(), o, stable, positions, &plan, |it, p, t| {
                    self.run_offsets(it, off, p, opts, mode, t, None, None, || Ok(()))
                })?
            }
        }
        drop(_o);
        Ok(out)
    }

    /// The positions of `keys`' sorted order, segment by segment, written to
    /// `o`: `plan`'s argsort, whose keys' copy `inner` sorts by its plan.
    #[allow(clippy::too_many_arguments)]
    fn argsort_cut<P: Inner>(
        &self,
        keys: &Items,
        key_bytes: usize,
        o: DevPtr,
        stable: bool,
        positions: Positions,
        plan: &ArgsortPlan<P>,
        inner: impl Fn(&Items, &P, DevPtr) -> Result<()>,
    ) -> Result<()> {
        if keys.n == 0 {
            return Ok(());
        }
        self.with_scratch(None, plan.temp_bytes, |temp| {
            self.run_argsort(keys, key_bytes, o, 4, stable, positions, plan, temp, |it, pending, t| {
                self.settle(it, pending)?;
                inner(it, &plan.inner, t)
            })
        })
    }

    /// A pass of a segmented sort of keys wider than a word (see
    /// `exec/wide.rs`): `(u64, u32)` items cut as the keys are.
    fn wide_pass(&self, items: &Items, opts: &SortOptions, cut: Cut) -> Result<()> {
        self.segmented(items, pass_shape(), 0, cut, opts, 4, opts.stable)
    }

    /// Plans and runs a segmented sort of `items` (values of `vb` bytes;
    /// `stable`: ranked, then the values gathered).
    #[allow(clippy::too_many_arguments)]
    fn segmented(
        &self,
        items: &Items,
        shape: SortShape,
        mode: u32,
        cut: Cut,
        opts: &SortOptions,
        vb: usize,
        stable: bool,
    ) -> Result<()> {
        let n = items.n;
        let sorted = if stable { SortShape { kind: shape.kind.keys_only(), ..shape }.ranked() } else { shape };
        match cut {
            Cut::Rows(len, kernel) => {
                let rows = RowsPlan::new(opts, sorted, n, len, kernel, self.policy())?;
                if !stable {
                    return self.with_scratch(None, rows.temp_bytes, |t| self.run_rows(items, &rows, mode, t));
                }
                let plan = GatherPlan::new(n, vb, true, rows);
                self.with_scratch(None, plan.temp_bytes, |temp| {
                    self.run_gathered(items, vb, &plan, temp, |ranked, pending, t| {
                        self.settle(ranked, pending)?;
                        self.run_rows(ranked, &plan.inner, mode, t)
                    })
                })
            }
            Cut::Offsets(off, segs) => {
                opts.validate()?;
                let offsets = OffsetsPlan::new(sorted, n, segs);
                if !stable {
                    return self.with_scratch(None, offsets.temp_bytes, |t| {
                        self.run_offsets(items, off, &offsets, opts, mode, t, None, None, || Ok(()))
                    });
                }
                let plan = GatherPlan::new(n, vb, true, offsets);
                self.with_scratch(None, plan.temp_bytes, |temp| {
                    self.run_gathered(items, vb, &plan, temp, |ranked, pending, t| {
                        self.settle(ranked, pending)?;
                        self.run_offsets(ranked, off, &plan.inner, opts, mode, t, None, None, || Ok(()))
                    })
                })
            }
        }
    }
}

fn no_offsets() -> Error {
    Error::BadOffsets { problem: "the offsets array is empty (no segments at all is [0])".into() }
}

/// Checks offsets on the host (the contract of [`Gpu::sort_segments_by_offsets`]).
pub(crate) fn check_host_offsets(offsets: &[u32], n: usize) -> Result<()> {
    let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) else {
        return Err(no_offsets());
    };
    if n > u32::MAX as usize {
        return Err(Error::TooLong { len: n, max: u32::MAX as usize });
    }
    let descent = offsets.windows(2).position(|w| w[0] > w[1]).map(|i| (i, offsets[i], offsets[i + 1]));
    match crate::exec::segmented::offsets_problem(first, last, descent, offsets.len() - 1, n) {
        Some(problem) => Err(Error::BadOffsets { problem }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_offsets_contract() {
        assert!(check_host_offsets(&[0], 0).is_ok());
        assert!(check_host_offsets(&[0, 0, 3, 3], 3).is_ok());
        let problem = |o: &[u32], n| match check_host_offsets(o, n) {
            Err(Error::BadOffsets { problem }) => problem,
            r => panic!("{o:?} n={n}: {r:?}"),
        };
        assert!(problem(&[], 0).contains("empty"));
        assert!(problem(&[1, 3], 3).contains("offsets[0] is 1"));
        assert!(problem(&[0, 3, 2, 4], 4).contains("offsets[1] = 3 > offsets[2] = 2"));
        assert!(problem(&[0, 2], 3).contains("offsets[1], is 2 but there are 3 keys"));
        assert!(problem(&[0, 4], 3).contains("is 4 but there are 3"));
    }
}
