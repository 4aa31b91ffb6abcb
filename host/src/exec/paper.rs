//! GPU-Warpsort as published (Ye et al. 2010), its four steps' launches:
//! step 1 a warp per tile; step 2 merge passes a warp per pair of
//! sequences until `l` are left; step 3 `s * k` random samples sorted,
//! every `k`-th a splitter, each sequence cut into `s` groups; step 4 each
//! group's pieces merged pairwise, a level per launch.

use warpsort_kernels::config::PAPER_TILE;

use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::families::{
    BlockSort, PaperFinal, PaperGroupStarts, PaperMerge, PaperSample, PaperSplit, PaperTables, Samples,
};
use crate::launch::{DevPtr, Items, Shape};
use crate::plan::paper::PaperPlan;

impl Gpu {
    pub(crate) fn paper(&self, items: &Items, plan: &PaperPlan, temp: DevPtr) -> Result<()> {
        let n = items.n;
        let tile = PAPER_TILE as usize;
        let step1 = plan.tile_shape(n, items.kind);
        if n <= tile {
            return self.launch(&BlockSort { src: items, dst: items, seg: tile, samples: Samples::NONE }, step1);
        }
        let r = &plan.regions;
        let at = |offset: usize| temp + offset as u64;
        let tmp = items.moved_to(at(r.keys), at(r.vals));
        let (s, k) = (plan.groups, plan.oversampling);
        let samples = items.moved_to(at(r.sample_keys), at(r.sample_vals)).range(0, s * k);
        let threads = plan.threads;
        let warps = |jobs: usize| Shape::per_warp(jobs, threads);
        let split = plan.splits();
        // Step 3's samples come from the input, before step 1 moves it.
        if split {
            self.launch(
                &PaperSample { items, samples: &samples },
                Shape::covering(samples.n, threads, i32::MAX as u32),
            )?;
            let seg = plan.sample_tile;
            self.launch(
                &BlockSort { src: &samples, dst: &samples, seg, samples: Samples::NONE },
                plan.sample_shape(items.kind),
            )?;
        }
        // Step 1 writes where the last write (of step 2 or step 4) ends in `items`.
        let writes = plan.passes + if split { plan.levels() } else { 0 };
        let (mut cur, mut other) = if writes % 2 == 1 { (tmp, *items) } else { (*items, tmp) };
        self.launch(&BlockSort { src: items, dst: &cur, seg: tile, samples: Samples::NONE }, step1)?;
        let (buffer, coalesced) = (plan.buffer, plan.coalesced);
        // Step 2: merge passes until `l` sequences are left.
        let mut run = tile;
        for _ in 0..plan.passes {
            self.launch(&PaperMerge { buffer, src: &cur, dst: &other, run, coalesced }, warps(n.div_ceil(2 * run)))?;
            std::mem::swap(&mut cur, &mut other);
            run *= 2;
        }
        if !split {
            return Ok(());
        }
        // Step 3: cut every sequence at the splitters.
        let l = plan.sequences;
        let tables = PaperTables { bounds: at(r.bounds), starts: at(r.starts), offsets: at(r.offsets) };
        let cut = PaperSplit {
            items: &cur,
            run,
            sequences: l,
            samples: &samples,
            groups: s,
            oversampling: k,
            bounds: tables.bounds,
        };
        self.launch(&cut, Shape::covering((s + 1) * l, threads, i32::MAX as u32))?;
        self.launch(&PaperGroupStarts { sequences: l, groups: s, tables }, warps(s))?;
        // Step 4: every group's pieces merged pairwise, a level per launch.
        for round in 0..plan.levels() {
            let pairs = l.div_ceil(1 << round).div_ceil(2);
            let level =
                PaperFinal { buffer, src: &cur, dst: &other, run, sequences: l, tables, groups: s, round, coalesced };
            self.launch(&level, warps(s * pairs))?;
            std::mem::swap(&mut cur, &mut other);
        }
        Ok(())
    }
}
