//! The merge sort's launches (GPU-Warpsort's pipeline, tuned): step 1 sorts
//! tiles, then each pass merges pairs of runs: a merge-path partition cuts
//! the pass into equal windows, and a block (or a warp) merges each window.

use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::families::{BlockMerge, BlockSort, MergePartition, MergeTileSort, Samples, Splits, WarpMergePass};
use crate::launch::{DevPtr, Items, Overlap};
use crate::options::{MergeKernel, TileSort};
use crate::plan::merge_sort::MergeSortPlan;

impl Gpu {
    /// Sorts `items` (keys in their ordered patterns) as `plan` says, with
    /// `temp` pointing at its regions.
    pub(crate) fn merge_sort(&self, items: &Items, plan: &MergeSortPlan, temp: DevPtr) -> Result<()> {
        if plan.passes == 0 {
            return self.tile_sort(items, items, plan, Samples::NONE);
        }
        let r = &plan.regions;
        let at = |offset: usize| temp + offset as u64;
        let tmp = items.moved_to(at(r.keys), at(r.vals));
        let samples = if plan.merge.samples {
            Samples { keys: at(r.sample_keys), vals: at(r.sample_vals) }
        } else {
            Samples::NONE
        };
        // Step 1 writes where the last pass ends in `items`.
        let (mut cur, mut other) = if plan.step1_to_temp { (tmp, *items) } else { (*items, tmp) };
        self.tile_sort(items, &cur, plan, samples)?;
        let mut run = plan.tile.tile;
        for _ in 0..plan.passes {
            self.merge_pass(&cur, &other, run, at(r.parts), plan, samples)?;
            std::mem::swap(&mut cur, &mut other);
            run *= 2;
        }
        Ok(())
    }

    /// Step 1: every tile of `src` sorted into `dst`, recording the samples
    /// of `dst`.
    fn tile_sort(&self, src: &Items, dst: &Items, plan: &MergeSortPlan, samples: Samples) -> Result<()> {
        let (tile, shape, stable) = (plan.tile.tile, plan.tile.shape, plan.tile.stable);
        let kind = plan.tile_items(src.kind);
        let (src, dst) = (&Items { kind, ..*src }, &Items { kind, ..*dst });
        match plan.tile.sort {
            TileSort::BlockBitonic => self.launch(&BlockSort { src, dst, seg: tile, samples }, shape),
            TileSort::WarpMerge => self.launch(&MergeTileSort { src, dst, tile, stable, samples }, shape),
        }
    }

    /// One merge pass of runs of `run` items from `src` into `dst`: the
    /// partition (from the samples of `src`, when recorded), then the merge
    /// of every window (a block merge records the samples of `dst`).
    fn merge_pass(
        &self,
        src: &Items,
        dst: &Items,
        run: usize,
        parts: DevPtr,
        plan: &MergeSortPlan,
        samples: Samples,
    ) -> Result<()> {
        let m = &plan.merge;
        let kind = plan.merge_items(src.kind);
        let (src, dst) = (&Items { kind, ..*src }, &Items { kind, ..*dst });
        let partition = MergePartition { items: src, samples, run, split: run, window: m.window, parts, pairs: 0 };
        self.launch_with(&partition, m.partition, m.overlap_partition)?;
        if kind.is_custom() {
            // A user's order may not be a strict weak order: make the splits
            // chain before the windows take their pieces.
            let flag = parts + plan.splits_flag() as u64;
            self.zero(flag, 4)?;
            for repair in [false, true] {
                let splits = Splits { repair, n: src.n, run, window: m.window, parts, flag };
                self.launch(&splits, m.partition)?;
            }
        }
        match m.kernel {
            MergeKernel::Block => {
                let merge = BlockMerge { outputs: m.outputs, src, dst, run, split: run, parts, samples };
                self.launch_with(&merge, m.shape, m.overlap_merge)
            }
            MergeKernel::WarpBitonic => {
                let merge = WarpMergePass { window: m.window as u32, src, dst, run, parts };
                self.launch_with(&merge, m.shape, Overlap::No)
            }
        }
    }
}
