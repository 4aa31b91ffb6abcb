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
        self.check_plan(plan)?;
        if plan.algo == Algo::Nothing {
            return Ok(());
        }
        if let (Some(view), Algo::Sample { sample, merge }) = (Self::key_view(items, plan.shape, mode), &plan.algo)
            && !view.is_identity()
            && !self.capturing()
        {
            return self.run_viewed(items, plan, (sample, merge), view, temp);
        }
        let wide = plan.widened.map(|at| temp + at as u64);
        self.on_words(items, plan.shape, wide, mode, |words| self.run_algo(words, plan, temp))
    }

    /// The sample sort of keys as stored, read through `view` by the order
    /// scan and the first distribution pass: no pass of their own maps
    /// them on the way in. The second pass writes ordered words into the
    /// items, mapped back in place at the end. Input the scan finds sorted
    /// or reversed is left or reversed as stored; runs are mapped in place
    /// and merged as any sort's.
    fn run_viewed(
        &self,
        items: &Items,
        plan: &SortPlan,
        (sample, merge): (&SamplePlan, &MergeSortPlan),
        view: View,
        temp: DevPtr,
    ) -> Result<()> {
        let algo_temp = temp + plan.algo_at as u64;
        let mut sampled = false;
        if let Some(scan) = &plan.presorted {
            match self.find_order(items, merge, scan, temp, view, Some((sample, algo_temp)))? {
                (Found::Unsorted, s) => sampled = s,
                (found @ (Found::Sorted | Found::Reversed), _) => {
                    return self.finish_presorted(items, merge, scan, found, algo_temp).map(drop);
                }
                (found, _) => {
                    return self.with_view(items, view, || {
                        if self.finish_presorted(items, merge, scan, found, algo_temp)? {
                            return Ok(());
                        }
                        self.sample_sort(items, sample, algo_temp, View::IDENTITY)
                    });
                }
            }
        }
        match sampled {
            true => self.sample_rest(items, sample, algo_temp, view)?,
            false => self.sample_sort(items, sample, algo_temp, view)?,
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
            Algo::Sample { sample, .. } if sampled => self.sample_rest(items, sample, algo_temp, View::IDENTITY),
            Algo::Sample { sample, .. } if !self.capturing() => {
                self.sample_sort(items, sample, algo_temp, View::IDENTITY)
            }
            Algo::Sample { merge, .. } => self.merge_sort(items, merge, algo_temp),
        }
    }
}
