//! The full-array bitonic sorts' launches: fused (a block sort of each
//! tile, then per phase the global stages down to the tile, up to three in
//! one pass, and the rest fused in shared memory) or naive (one launch per
//! stage, the reference the fused sort is measured against).

use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::families::{BitonicFlip, BitonicFused, BitonicHalfCleaners, BitonicStage, BlockSort, Samples};
use crate::launch::{Items, Shape};
use crate::plan::BitonicPlan;

impl Gpu {
    pub(crate) fn bitonic(&self, items: &Items, plan: &BitonicPlan) -> Result<()> {
        let n = items.n;
        let padded = n.next_power_of_two();
        let log_n = padded.trailing_zeros();
        let threads = plan.stage_threads;
        // One thread per compare-exchange pair, or per group of 2^c items.
        let grid = |items_per_thread: usize| Shape::covering(padded / items_per_thread, threads, i32::MAX as u32);
        let stage = |log_s: u32, log_j: u32| self.launch(&BitonicStage { items, log_s, log_j }, grid(2));
        if !plan.fused {
            for log_s in 1..=log_n {
                for log_j in (0..log_s).rev() {
                    stage(log_s, log_j)?;
                }
            }
            return Ok(());
        }
        let tile = plan.tile;
        self.launch(&BlockSort { src: items, dst: items, seg: tile, samples: Samples::NONE }, plan.block)?;
        let log_tile = tile.trailing_zeros();
        for log_s in (log_tile + 1)..=log_n {
            // The flip with up to two half-cleaners, then the other global
            // half-cleaners up to three per pass.
            let c = (log_s - log_tile).min(3);
            if c == 1 {
                stage(log_s, log_s - 1)?;
            } else {
                self.launch(&BitonicFlip { stages: c, items, log_s }, grid(1 << (c + 1)))?;
            }
            let mut log_j = log_s as i64 - 1 - c as i64;
            while log_j >= log_tile as i64 {
                let c = (log_j - log_tile as i64 + 1).min(3) as u32;
                match c {
                    1 => stage(log_s, log_j as u32)?,
                    _ => self.launch(&BitonicHalfCleaners { stages: c, items, log_j: log_j as u32 }, grid(1 << c))?,
                }
                log_j -= c as i64;
            }
            self.launch(&BitonicFused { items }, plan.block)?;
        }
        Ok(())
    }
}
