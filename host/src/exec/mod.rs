//! The launchers: each takes a plan (`plan`) and the items, and makes the
//! launches the plan resolved. `merge_sort`, `bitonic`, `paper` and `sample`
//! are the full sorts (`presorted` what the merge sort and the sample sort
//! do first: input already in order), `segmented` the segmented ones,
//! `permute` argsort and the stable sorts, `keys` the key encodings around
//! every sort.

mod bitonic;
mod buckets;
mod keys;
mod merge_runs;
mod merge_sort;
mod paper;
pub(crate) mod permute;
mod presorted;
mod sample;
pub(crate) mod segmented;
pub(crate) mod wide;

use warpsort_kernels::ordered::View;

use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::{DevPtr, Items};
use crate::plan::merge_sort::MergeSortPlan;
use crate::plan::presorted::Found;
use crate::plan::sample::SamplePlan;
use crate::plan::{Algo, Launches, SortPlan};
use presorted::Scanned;

/// What a sort's items do not hold yet ([`Gpu::run_sort_from`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pending {
    /// Where their keys lie (the caller's, left as they are), if not in the
    /// items.
    pub keys: Option<DevPtr>,
    /// Whether their values are still to be made: each its item's position
    /// (`0..n`, argsort's positions).
    pub positions: bool,
}

impl Pending {
    /// The items hold their keys and values.
    pub const NONE: Pending = Pending { keys: None, positions: false };
}

impl Gpu {
    /// Refuses, before anything runs, the launches of `plan` this GPU
    /// cannot make (too many threads for a kernel's registers, too much
    /// shared memory, a kernel missing from the module).
    pub(crate) fn check_plan(&self, plan: &impl Launches) -> Result<()> {
        let mut launches = Vec::new();
        plan.launches(&mut launches);
        launches.iter().try_for_each(|&(id, shape)| self.check_launch(id, shape.block, shape.smem))
    }

    /// Runs the sort `plan` describes on `items` (for 16-bit keys, `items`
    /// points at the caller's 16-bit keys and says `u32`), with `temp`
    /// pointing at the plan's temporary storage. Keys are mapped onto their
    /// ordered patterns under `mode` (`K::MODE` and the order) around the
    /// sort, and back also when it fails; the sample sort reads keys that
    /// have a view through it instead ([`Gpu::run_viewed`]).
    pub(crate) fn run_sort(&self, items: &Items, plan: &SortPlan, mode: u32, temp: DevPtr) -> Result<()> {
        self.run_sort_from(items, Pending::NONE, plan, mode, temp)
    }

    /// [`Gpu::run_sort`] of `items` that do not hold what `pending` says
    /// yet: the sample sort's order scan, sampling and first pass read the
    /// keys where they lie and make the positions, so that neither is
    /// copied or written first; any other path writes both into `items`
    /// first ([`Gpu::settle`]).
    pub(crate) fn run_sort_from(
        &self,
        items: &Items,
        pending: Pending,
        plan: &SortPlan,
        mode: u32,
        temp: DevPtr,
    ) -> Result<()> {
        self.check_plan(plan)?;
        if plan.algo == Algo::Nothing {
            return self.settle(items, pending);
        }
        if let (Some(view), Algo::Sample { sample, merge }) = (Self::key_view(items, plan.shape, mode), &plan.algo)
            && (pending != Pending::NONE || !view.is_identity())
            && pending.keys.is_none_or(|keys| Self::key_view(&Items { keys, ..*items }, plan.shape, mode) == Some(view))
            && !self.capturing()
        {
            return self.run_viewed(items, pending, plan, (sample, merge), view, temp);
        }
        self.settle(items, pending)?;
        let wide = plan.widened.map(|at| temp + at as u64);
        self.on_words(items, plan.shape, wide, mode, |words| self.run_algo(words, plan, temp))
    }

    /// Writes what `pending` says `items` lack: their keys, copied from
    /// where they lie, and their positions ([`Gpu::run_sort_from`]).
    pub(crate) fn settle(&self, items: &Items, pending: Pending) -> Result<()> {
        if let Some(keys) = pending.keys {
            self.copy_dtod(items.keys, keys, items.n * items.kind.key_bytes())?;
        }
        match pending.positions {
            true => self.iota(keys::word(items.kind.val_bytes()), items.vals, items.n),
            false => Ok(()),
        }
    }

    /// The sample sort of keys as stored, read through `view` by the order
    /// scan and the first distribution pass: no pass of their own maps
    /// them on the way in. The second pass writes ordered words into the
    /// items, mapped back in place at the end. Input the scan finds sorted
    /// or reversed is left or reversed as stored; runs are mapped in place
    /// and merged as any sort's. With `pending` ([`Gpu::run_sort_from`]),
    /// the scan and the first pass read the keys where they lie, and the
    /// first pass makes the positions; ordered input has both written into
    /// the items first.
    fn run_viewed(
        &self,
        items: &Items,
        pending: Pending,
        plan: &SortPlan,
        (sample, merge): (&SamplePlan, &MergeSortPlan),
        view: View,
        temp: DevPtr,
    ) -> Result<()> {
        let algo_temp = temp + plan.algo_at as u64;
        // Null values: the first pass makes each its item's position.
        let vals = if pending.positions { 0 } else { items.vals };
        let src = Items { keys: pending.keys.unwrap_or(items.keys), vals, ..*items };
        let mut sampled = false;
        if let Some(scan) = &plan.presorted {
            match self.find_order(&src, merge, scan, temp, view, Some((sample, algo_temp)))? {
                (Found::Unsorted, s) => sampled = s,
                (found @ (Found::Sorted | Found::Reversed), _) => {
                    self.settle(items, pending)?;
                    return self.finish_presorted(items, merge, scan, found, algo_temp).map(drop);
                }
                (found, _) => {
                    self.settle(items, pending)?;
                    return self.with_view(items, view, || {
                        if self.finish_presorted(items, merge, scan, found, algo_temp)? {
                            return Ok(());
                        }
                        self.sample_sort(items, items, sample, algo_temp, View::IDENTITY)
                    });
                }
            }
        }
        match sampled {
            true => self.sample_rest(&src, items, sample, algo_temp, view)?,
            false => self.sample_sort(&src, items, sample, algo_temp, view)?,
        }
        self.map_through(items, view, true)
    }

    /// The algorithm alone, on keys already in their ordered patterns
    /// (`temp`: the plan's temporary storage). A merge sort or a sample
    /// sort that scans its input first may find nothing or little left to
    /// do; a sample sort gives way to its merge sort while the stream is
    /// captured (it waits for its buckets).
    fn run_algo(&self, items: &Items, plan: &SortPlan, temp: DevPtr) -> Result<()> {
        let algo_temp = temp + plan.algo_at as u64;
        let mut sampled = false;
        if let (Some(scan), Some(m)) = (&plan.presorted, plan.algo.merge()) {
            let sample = match &plan.algo {
                Algo::Sample { sample, .. } => Some(sample),
                _ => None,
            };
            match self.presorted(items, m, scan, temp, algo_temp, sample)? {
                Scanned::Done => return Ok(()),
                Scanned::Unsorted { sampled: s } => sampled = s,
            }
        }
        match &plan.algo {
            Algo::Nothing => Ok(()),
            Algo::MergeSort(m) => self.merge_sort(items, m, algo_temp),
            Algo::Bitonic(b) => self.bitonic(items, b),
            Algo::Paper(p) => self.paper(items, p, algo_temp),
            Algo::Sample { sample, .. } if sampled => self.sample_rest(items, items, sample, algo_temp, View::IDENTITY),
            Algo::Sample { sample, .. } if !self.capturing() => {
                self.sample_sort(items, items, sample, algo_temp, View::IDENTITY)
            }
            Algo::Sample { merge, .. } => self.merge_sort(items, merge, algo_temp),
        }
    }
}
