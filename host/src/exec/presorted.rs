//! What a merge sort or a sample sort does first when its plan scans the
//! input's order: the scan, one wait for its result (a sample sort's first
//! sampling queued behind it, run only where the scan proves the input
//! unordered), then nothing (sorted), one reversal (reversed), a merge of
//! the runs (a few ascending runs), or nothing more here (the full sort
//! follows).

use warpsort_kernels::config::order_scan;
use warpsort_kernels::ordered::View;

use super::keys::word;
use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::families::{OrderScan, Reverse};
use crate::launch::{DevPtr, Items};
use crate::plan::merge_runs::MergeRunsPlan;
use crate::plan::merge_sort::MergeSortPlan;
use crate::plan::presorted::{Found, PresortedPlan};
use crate::plan::sample::SamplePlan;

/// What the scan left to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scanned {
    /// The sort is done (sorted, reversed, or its runs merged).
    Done,
    /// The full sort; `sampled`: the sample sort's first sampling ran
    /// behind the scan ([`Gpu::sample_rest`] goes on from it).
    Unsorted { sampled: bool },
}

impl Gpu {
    /// Scans `items` (keys in their ordered patterns) as `scan` says and
    /// finishes the sort when their order allows: a reversal, or a merge of
    /// the runs through the merge sort's regions of `sort` at `algo_temp`.
    /// Else nothing changed in the items and the full sort is needed; with
    /// `sample` (the sample sort's plan), its first sampling is queued
    /// behind the scan at `algo_temp` (see [`Gpu::find_order`]). No scan
    /// while the stream is captured into a graph: the scan waits for its
    /// result.
    pub(crate) fn presorted(
        &self,
        items: &Items,
        sort: &MergeSortPlan,
        scan: &PresortedPlan,
        temp: DevPtr,
        algo_temp: DevPtr,
        sample: Option<&SamplePlan>,
    ) -> Result<Scanned> {
        if self.capturing() {
            return Ok(Scanned::Unsorted { sampled: false });
        }
        let (found, sampled) =
            self.find_order(items, sort, scan, temp, View::IDENTITY, sample.map(|s| (s, algo_temp)))?;
        Ok(match self.finish_presorted(items, sort, scan, found, algo_temp)? {
            true => Scanned::Done,
            false => Scanned::Unsorted { sampled },
        })
    }

    /// What the order scan finds `items` to be, their keys read through
    /// `view` (one wait), and whether the sample sort's first sampling ran
    /// behind it: with `sample` (its plan and storage), the sampling is
    /// queued behind the scan's copy before the host waits, and runs only
    /// where the scan's words prove the input unordered
    /// (`config::order_scan::unordered`), so that the GPU has work while
    /// the host wakes, and ordered input pays only its launch.
    pub(crate) fn find_order(
        &self,
        items: &Items,
        sort: &MergeSortPlan,
        scan: &PresortedPlan,
        temp: DevPtr,
        view: View,
        sample: Option<(&SamplePlan, DevPtr)>,
    ) -> Result<(Found, bool)> {
        // Equal keys keep their input order: a descending input with equal neighbours is not reversed.
        let ties_in_order = items.kind.is_ranked() || sort.tile.stable;
        let words_at = temp + scan.words_at as u64;
        let ahead = || match sample {
            Some((plan, algo_temp)) => self.sample_first(items, plan, algo_temp, view, words_at),
            None => Ok(()),
        };
        let words = self.scan_words(items, scan, words_at, view, ahead)?;
        let sampled = sample.is_some() && order_scan::unordered(words[order_scan::FLAGS], words[order_scan::COUNT]);
        let found = Found::from_words(&words, items.n, ties_in_order);
        debug_assert!(!sampled || found == Found::Unsorted);
        Ok((found, sampled))
    }

    /// Finishes the sort of `items` as `found` allows (`true`; a merge of
    /// runs needs the keys' ordered patterns), else leaves them (`false`).
    pub(crate) fn finish_presorted(
        &self,
        items: &Items,
        sort: &MergeSortPlan,
        scan: &PresortedPlan,
        found: Found,
        algo_temp: DevPtr,
    ) -> Result<bool> {
        match found {
            Found::Sorted => Ok(true),
            Found::Reversed => {
                self.launch(&Reverse { word: items.kind.keys_only(), p: items.keys, n: items.n }, scan.reverse)?;
                if items.kind.pairs() {
                    let w = word(items.kind.val_bytes());
                    self.launch(&Reverse { word: w, p: items.vals, n: items.n }, scan.reverse)?;
                }
                Ok(true)
            }
            Found::Runs(lens) => {
                let plan = MergeRunsPlan::batched(items.kind, &lens, self.policy());
                let r = &sort.regions;
                if plan.parts_bytes > r.parts_bytes {
                    return Ok(false);
                }
                let at = |offset: usize| algo_temp + offset as u64;
                let tmp = items.moved_to(at(r.keys), at(r.vals));
                let parts = at(r.parts);
                // Rounds alternate between the items and `tmp`: an odd
                // number starts from a copy so that the last ends in place.
                if plan.rounds.len() % 2 == 1 {
                    self.copy_items(items, &tmp, 0, items.n)?;
                    self.merge_runs(&tmp, items, items, &plan, parts)?;
                } else {
                    self.merge_runs(items, &tmp, items, &plan, parts)?;
                }
                Ok(true)
            }
            Found::Unsorted => Ok(false),
        }
    }

    /// Runs the order scan over `items`' keys (read through `view`) into
    /// the result words at `words`, queues `ahead`'s work behind their copy
    /// back, and waits for the copy.
    pub(crate) fn scan_words(
        &self,
        items: &Items,
        scan: &PresortedPlan,
        words: DevPtr,
        view: View,
        ahead: impl FnOnce() -> Result<()>,
    ) -> Result<[u64; order_scan::WORDS]> {
        let mut w = [0u64; order_scan::WORDS];
        self.zero(words, order_scan::STARTS * 8)?;
        let (word, keys, n) = (items.kind.keys_only(), items.keys, items.n);
        self.launch(&OrderScan { word, keys, n, out: words, view }, scan.scan)?;
        self.download_behind(words, &mut w, ahead)?;
        Ok(w)
    }
}
