//! Merging sorted runs of any lengths into one ([`MergeRunsPlan`]): each
//! round's two-run merges (a partition and a block merge of one pair split
//! where the second run starts) and the copies of runs without a partner,
//! or (batched) each round's merges all in one partition and one block merge.

use crate::error::Result;
use crate::gpu::Gpu;
use std::ops::Range;

use crate::launch::families::{BlockMerge, BlockMergeFrom, MergePartition, Samples};
use crate::launch::{DevPtr, Items};
use crate::plan::merge_runs::{MergeRunsPlan, RunStep};

impl Gpu {
    /// Merges the runs of `src` (laid as `plan` says) into `dst`, using
    /// `tmp` (room for as many items) between rounds and `parts` (the plan's
    /// `parts_bytes`) for the partitions. `src` may be overwritten.
    pub(crate) fn merge_runs(
        &self,
        src: &Items,
        tmp: &Items,
        dst: &Items,
        plan: &MergeRunsPlan,
        parts: DevPtr,
    ) -> Result<()> {
        self.check_plan(plan)?;
        if plan.rounds.is_empty() {
            return self.copy_items(src, dst, 0, src.n);
        }
        if plan.batched {
            let tables: Vec<u64> = (0..plan.rounds.len()).flat_map(|r| plan.round_table(r)).collect();
            self.upload(parts, &tables)?;
        }
        let last = plan.rounds.len() - 1;
        let mut from = *src;
        for (r, round) in plan.rounds.iter().enumerate() {
            let to = if r == last {
                *dst
            } else if from.keys == tmp.keys {
                *src
            } else {
                *tmp
            };
            if plan.batched {
                self.run_round(&from, &to, r, plan, parts)?;
            } else {
                for step in round {
                    self.run_step(&from, &to, step, plan, parts)?;
                }
            }
            from = to;
        }
        Ok(())
    }

    /// Round `r` of a batched plan: the copies of its runs without a
    /// partner, then one partition and one block merge over all its merges,
    /// by its table (uploaded at `parts + plan.table_at(r)`).
    fn run_round(&self, src: &Items, dst: &Items, r: usize, plan: &MergeRunsPlan, parts: DevPtr) -> Result<()> {
        for step in plan.rounds[r].iter().filter(|s| !s.merges()) {
            self.copy_items(src, dst, step.at, step.len())?;
        }
        if plan.round_windows(r) == 0 {
            return Ok(());
        }
        let (pairs, slots) = (parts + plan.table_at(r) as u64, parts + plan.slots_at() as u64);
        let (partition_shape, merge_shape) = plan.round_shapes(r);
        // The table describes the pairs: `run` and `split` are not read.
        let (run, split, window) = (src.n, src.n, plan.window);
        let partition = MergePartition { items: src, samples: Samples::NONE, run, split, window, parts: slots, pairs };
        self.launch(&partition, partition_shape)?;
        let merge = BlockMerge { outputs: plan.outputs, src, dst, run, split, parts: slots, samples: Samples::NONE };
        self.launch(&BlockMergeFrom { merge, first: 0, pairs }, merge_shape)
    }

    /// Queues the steps of `plan` that can run once runs `..=run` are in
    /// place, sorted, in `bufs[0]` (every run before `run` given to an
    /// earlier call): each step of round `r` merges from `bufs[r % 2]` into
    /// `bufs[(r + 1) % 2]`, so the merged run ends in
    /// `bufs[plan.ends_in()]`. The root (the last round's step, all of the
    /// items) merges `ranges` ranges of its windows one launch after
    /// another, and `merged(items)` follows each range's launch, so that
    /// work queued there may use those items while the rest merges.
    pub(crate) fn merge_runs_after(
        &self,
        bufs: [&Items; 2],
        plan: &MergeRunsPlan,
        run: usize,
        parts: DevPtr,
        ranges: usize,
        mut merged: impl FnMut(Range<usize>) -> Result<()>,
    ) -> Result<()> {
        if run == 0 {
            self.check_plan(plan)?;
        }
        let root = plan.rounds.len().saturating_sub(1);
        for (r, round) in plan.rounds.iter().enumerate() {
            for (i, step) in round.iter().enumerate() {
                if plan.last_run(r, i) != run {
                    continue;
                }
                let (src, dst) = (bufs[r % 2], bufs[(r + 1) % 2]);
                if r == root {
                    self.step_in_ranges(src, dst, step, plan, parts, ranges, &mut merged)?;
                } else {
                    self.run_step(src, dst, step, plan, parts)?;
                }
            }
        }
        Ok(())
    }

    fn run_step(&self, src: &Items, dst: &Items, step: &RunStep, plan: &MergeRunsPlan, parts: DevPtr) -> Result<()> {
        self.step_in_ranges(src, dst, step, plan, parts, 1, &mut |_| Ok(()))
    }

    /// One step: a copy, or a partition and the block merge, in one launch
    /// (`ranges` 1) or one launch per range of its windows, `merged`
    /// called after each with the items (from the step's start) written.
    #[allow(clippy::too_many_arguments)]
    fn step_in_ranges(
        &self,
        src: &Items,
        dst: &Items,
        step: &RunStep,
        plan: &MergeRunsPlan,
        parts: DevPtr,
        ranges: usize,
        merged: &mut impl FnMut(Range<usize>) -> Result<()>,
    ) -> Result<()> {
        if !step.merges() {
            self.copy_items(src, dst, step.at, step.len())?;
            return merged(0..step.len());
        }
        let (n, at) = (step.len(), step.at);
        let (src, dst) = (&src.range(at, n), &dst.range(at, n));
        let (partition_shape, merge_shape) = plan.shapes(step);
        // One pair: `2 * run >= n`, split after the first run.
        let (run, split) = (n, step.a);
        let partition =
            MergePartition { items: src, samples: Samples::NONE, run, split, window: plan.window, parts, pairs: 0 };
        self.launch(&partition, partition_shape)?;
        let merge = BlockMerge { outputs: plan.outputs, src, dst, run, split, parts, samples: Samples::NONE };
        if ranges <= 1 {
            self.launch(&merge, merge_shape)?;
            return merged(0..n);
        }
        for (windows, items) in plan.ranges(step, ranges) {
            let first = windows.start;
            let merge = BlockMergeFrom { merge, first, pairs: 0 };
            self.launch(&merge, plan.merge_shape(windows.len()))?;
            merged(items)?;
        }
        Ok(())
    }

    /// Copies items `at..at + n` of `src` to the same place of `dst`.
    pub(crate) fn copy_items(&self, src: &Items, dst: &Items, at: usize, n: usize) -> Result<()> {
        let (kb, vb) = (src.kind.key_bytes(), src.kind.val_bytes());
        self.copy_dtod(dst.keys + (at * kb) as u64, src.keys + (at * kb) as u64, n * kb)?;
        if vb > 0 {
            self.copy_dtod(dst.vals + (at * vb) as u64, src.vals + (at * vb) as u64, n * vb)?;
        }
        Ok(())
    }
}
