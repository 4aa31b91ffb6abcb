//! The merge sort's plan: every launch decision of one sort, resolved once
//! from the options, the items, `n` and the GPU's tuning table.

use warpsort_kernels::config::{SAMPLE_STRIDE, merge_pass_smem_slots, tile_merge_smem_slots};

use super::Launch;
use super::layout::Layout;
use crate::error::Result;
use crate::launch::{Family, ItemKind, KernelId, Overlap, Shape};
use crate::options::{MergeKernel, MergeSortConfig, TileSort};
use crate::policy::Policy;

/// The items the stable step 1 is built for (the device's
/// `for_stable_tiles!`; the launch test holds the two together).
pub(crate) const STABLE_TILE_KINDS: [ItemKind; 2] = [ItemKind::U32U32, ItemKind::U64U32];

/// Step 1: tiles sorted by one block each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TileStep {
    pub sort: TileSort,
    /// Whether step 1 keeps equal keys in input order by itself
    /// ([`MergeSortPlan::in_order`]).
    pub stable: bool,
    /// Items per tile (a power of two).
    pub tile: usize,
    pub shape: Shape,
}

/// The merge passes: how each window is merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MergeStep {
    pub kernel: MergeKernel,
    /// Outputs per thread (block merge) or per lane (warp merge).
    pub outputs: u32,
    /// Outputs of one window (a block's tile or a warp's window).
    pub window: usize,
    /// One merge pass's launch.
    pub shape: Shape,
    /// One merge pass's partition.
    pub partition: Shape,
    /// Whether the partition and the merge may overlap the kernel before
    /// them.
    pub overlap_partition: Overlap,
    pub overlap_merge: Overlap,
    /// Whether the passes record samples for the next partition (the block
    /// merge does; the warp merge's partitions search the runs alone).
    pub samples: bool,
}

/// Where the merge sort keeps its temporary storage, as offsets from its
/// base: a second buffer of the items (the paper's `2n`), then the `c` of
/// `2n + c`: the samples (`n / SAMPLE_STRIDE` items) and the partitions (8
/// bytes per merge window, of the smallest window any sort of these items
/// with these options uses, so that storage grows with `n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MergeRegions {
    pub keys: usize,
    pub vals: usize,
    pub sample_keys: usize,
    pub sample_vals: usize,
    pub parts: usize,
    pub parts_bytes: usize,
}

/// Every decision of one merge sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MergeSortPlan {
    pub tile: TileStep,
    /// Merge passes after step 1 (0: the items fit one tile, sorted in place).
    pub passes: u32,
    pub merge: MergeStep,
    /// Whether step 1 writes to the second buffer (an odd number of passes
    /// then ends in the caller's).
    pub step1_to_temp: bool,
    pub regions: MergeRegions,
    pub temp_bytes: usize,
}

impl MergeSortPlan {
    /// The plan of a merge sort of `n` items of `kind`.
    pub fn new(cfg: &MergeSortConfig, kind: ItemKind, n: usize, p: &Policy) -> Result<Self> {
        cfg.validate()?;
        let bytes = kind.item_bytes();
        let r = cfg.resolve(kind, n, p);
        let t = r.tile;
        let tiles = n.div_ceil(t).max(1);
        let tile_shape = match cfg.tile_sort {
            TileSort::BlockBitonic => {
                Shape::new(tiles as u32, (t / TileSort::BlockBitonic.per_thread() as usize) as u32)
                    .with_smem((t * bytes) as u32)
            }
            TileSort::WarpMerge => Shape::new(tiles as u32, (t / TileSort::WarpMerge.per_thread() as usize) as u32)
                .with_smem(tile_merge_smem_slots(t as u32) * bytes as u32),
        };
        let passes = tiles.next_power_of_two().trailing_zeros();

        let outputs = r.outputs;
        let merge_window = r.window();
        let windows = n.div_ceil(merge_window);
        let shape = match cfg.merge {
            MergeKernel::Block => Shape::new(windows as u32, r.threads)
                .with_smem(merge_pass_smem_slots(merge_window as u32, outputs, bytes as u32) * bytes as u32),
            MergeKernel::WarpBitonic => Shape::per_warp(windows, p.warp_kernel_threads),
        };
        // Overlapped launches by the sort's size (measurements: docs/PERFORMANCE.md).
        // A user's key type's passes check and repair their splits between
        // the partition and the merge: no overlap.
        let within = n * bytes <= p.overlap_max_bytes && !kind.is_custom();
        let small = n <= p.small_sort_items;
        let overlap = |on: bool| if on { Overlap::WithPrevious } else { Overlap::No };
        let merge = MergeStep {
            kernel: cfg.merge,
            outputs,
            window: merge_window,
            shape,
            partition: Shape::covering(windows, p.partition_threads, i32::MAX as u32),
            overlap_partition: overlap(within),
            overlap_merge: overlap(within && !small && cfg.merge == MergeKernel::Block),
            samples: cfg.merge == MergeKernel::Block,
        };

        let (regions, temp_bytes) = if passes == 0 {
            (MergeRegions { keys: 0, vals: 0, sample_keys: 0, sample_vals: 0, parts: 0, parts_bytes: 0 }, 0)
        } else {
            let samples = n.div_ceil(SAMPLE_STRIDE as usize);
            let min_window = cfg.resolve(kind, 0, p).window();
            let mut l = Layout::default();
            let (keys, vals) = l.items(n, kind);
            let (sample_keys, sample_vals) = l.items(samples, kind);
            let parts_bytes = (n.div_ceil(min_window) + 1) * 8;
            let parts = l.region(parts_bytes);
            let regions = MergeRegions { keys, vals, sample_keys, sample_vals, parts, parts_bytes };
            (regions, l.bytes())
        };
        Ok(MergeSortPlan {
            tile: TileStep { sort: cfg.tile_sort, stable: false, tile: t, shape: tile_shape },
            passes,
            merge,
            step1_to_temp: passes % 2 == 1,
            regions,
            temp_bytes,
        })
    }

    /// Where a pass's flag of splits that do not chain lives (a user's key
    /// type's sorts), from the start of the partitions: their last slot,
    /// which no window uses.
    pub fn splits_flag(&self) -> usize {
        self.regions.parts_bytes - 8
    }

    /// Whether a merge sort with `cfg` can keep equal keys of `kind` (pairs
    /// with 4-byte payloads, or ranked items) in input order without
    /// comparing a rank anywhere: the warp merges' step 1 has a stable
    /// variant for these items (`merge_tile_sort_stable_*`: the warp's
    /// network sorts each key with its position in the tile), and the block
    /// merge takes ties from its first run. The block bitonic step 1 and the
    /// warp bitonic merge are not stable: ranked items keep their ranks
    /// there, and other pairs cannot be sorted stably by them.
    pub fn keeps_ties(cfg: &MergeSortConfig, kind: ItemKind) -> bool {
        cfg.tile_sort == TileSort::WarpMerge
            && cfg.merge == MergeKernel::Block
            && STABLE_TILE_KINDS.contains(&kind.rank_as_value())
    }

    /// The same sort with equal keys kept in input order by its stable step
    /// 1 ([`MergeSortPlan::keeps_ties`] must hold): ranked items (whose
    /// ranks ascend with their positions when the sort starts) then move
    /// their ranks as plain payloads through every kernel.
    pub fn in_order(self) -> Self {
        MergeSortPlan { tile: TileStep { stable: true, ..self.tile }, ..self }
    }

    /// The items step 1 sees: ranked items as plain pairs when it keeps
    /// their ties in order itself.
    pub fn tile_items(&self, kind: ItemKind) -> ItemKind {
        if self.tile.stable { kind.rank_as_value() } else { kind }
    }

    /// The kernel of step 1.
    pub fn tile_kernel(&self, kind: ItemKind) -> KernelId {
        let kind = self.tile_items(kind);
        match (self.tile.sort, self.tile.stable) {
            (TileSort::BlockBitonic, _) => KernelId::new(Family::BlockSort, kind),
            (TileSort::WarpMerge, false) => KernelId::new(Family::MergeTileSort, kind),
            (TileSort::WarpMerge, true) => KernelId::new(Family::MergeTileSortStable, kind),
        }
    }

    /// The items the merge passes see. The block merge takes ties from its
    /// first run, and each run's positions all come before the next run's:
    /// once step 1 has ordered every tile by (key, rank), ranked items
    /// (stable sorts) merge by key alone and stay in rank order, so their
    /// passes compare one word, not two. (The warp bitonic merge is not
    /// stable: it keeps the ranks.)
    pub fn merge_items(&self, kind: ItemKind) -> ItemKind {
        if self.merge.kernel == MergeKernel::Block { kind.rank_as_value() } else { kind }
    }

    /// The kernel of each merge pass.
    pub fn merge_kernel(&self, kind: ItemKind) -> KernelId {
        match self.merge.kernel {
            MergeKernel::Block => KernelId::with_width(Family::BlockMerge, self.merge.outputs, kind),
            MergeKernel::WarpBitonic => KernelId::with_width(Family::WarpMergePass, self.merge.window as u32, kind),
        }
    }

    /// Every kernel this sort launches, with its block and shared memory.
    pub fn launches(&self, kind: ItemKind, out: &mut Vec<Launch>) {
        out.push((self.tile_kernel(kind), self.tile.shape));
        if self.passes > 0 {
            let merged = self.merge_items(kind);
            out.push((KernelId::new(Family::MergePartition, merged), self.merge.partition));
            if kind.is_custom() {
                out.push((KernelId::plain(Family::SplitCheck), self.merge.partition));
                out.push((KernelId::plain(Family::SplitRepair), self.merge.partition));
            }
            out.push((self.merge_kernel(merged), self.merge.shape));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::policy::HOPPER;

    #[test]
    fn tuned_tiles_and_windows() {
        let c = MergeSortConfig::default();
        let p = &HOPPER;
        let tile = |kind, n| c.resolve(kind, n, p).tile;
        assert_eq!(tile(ItemKind::U32, 1 << 20), 8192);
        assert_eq!(tile(ItemKind::U32, 1 << 24), 16384);
        assert_eq!(tile(ItemKind::U32U64, 1 << 24), 4096);
        assert_eq!(tile(ItemKind::U64, 1 << 24), 8192);
        let threads = |n| c.resolve(ItemKind::U32, n, p).threads;
        assert_eq!((threads(1 << 20), threads(1 << 21)), (64, 128));
        assert_eq!(c.resolve(ItemKind::U32U32, 0, p).outputs, 8);
        assert_eq!(c.resolve(ItemKind::U32U64, 0, p).outputs, 16);
        let plan = MergeSortPlan::new(&c, ItemKind::U32, 1 << 24, p).unwrap();
        assert_eq!((plan.tile.tile, plan.passes, plan.step1_to_temp), (16384, 10, false));
        assert_eq!((plan.tile.shape.block, plan.merge.window, plan.merge.shape.block), (1024, 2048, 128));
        let one_tile = MergeSortPlan::new(&c, ItemKind::U32, 8192, p).unwrap();
        assert_eq!((one_tile.passes, one_tile.temp_bytes), (0, 0));
    }

    /// Stable sorts' merge passes compare keys alone with the block merge
    /// (ties from the first run keep the ranks' order), ranks with the warp
    /// merge.
    #[test]
    fn ranked_items_merge_by_key_with_the_block_merge() {
        let c = MergeSortConfig::default();
        let plan = MergeSortPlan::new(&c, ItemKind::U32Rank, 1 << 20, &HOPPER).unwrap();
        assert_eq!(plan.merge_items(ItemKind::U32Rank), ItemKind::U32U32);
        assert_eq!(plan.merge_items(ItemKind::U64Rank), ItemKind::U64U32);
        assert_eq!(plan.merge_items(ItemKind::U32U64), ItemKind::U32U64);
        let mut l = Vec::new();
        plan.launches(ItemKind::U32Rank, &mut l);
        let names: Vec<String> = l.iter().map(|(k, _)| k.name()).collect();
        assert_eq!(names, ["merge_tile_sort_u32_rank", "merge_partition_u32_u32", "block_merge8_u32_u32"]);
        let warp = MergeSortConfig { merge: MergeKernel::WarpBitonic, ..c };
        let plan = MergeSortPlan::new(&warp, ItemKind::U32Rank, 1 << 20, &HOPPER).unwrap();
        assert_eq!(plan.merge_items(ItemKind::U32Rank), ItemKind::U32Rank);
    }

    /// The stable step 1 takes 4-byte payloads and ranks as plain pairs,
    /// and only the warp merges' step 1 with the block merge has it.
    #[test]
    fn the_stable_step_1_sorts_ranks_as_plain_payloads() {
        let c = MergeSortConfig::default();
        for (kind, name) in [
            (ItemKind::U32Rank, "merge_tile_sort_stable_u32_u32"),
            (ItemKind::U32U32, "merge_tile_sort_stable_u32_u32"),
            (ItemKind::U64Rank, "merge_tile_sort_stable_u64_u32"),
            (ItemKind::U64U32, "merge_tile_sort_stable_u64_u32"),
        ] {
            assert!(MergeSortPlan::keeps_ties(&c, kind), "{kind:?}");
            let plan = MergeSortPlan::new(&c, kind, 1 << 20, &HOPPER).unwrap().in_order();
            let mut l = Vec::new();
            plan.launches(kind, &mut l);
            let names: Vec<String> = l.iter().map(|(k, _)| k.name()).collect();
            assert_eq!(names[0], name);
            assert!(!names[1..].iter().any(|n| n.contains("rank")), "{names:?}: no rank compared");
        }
        for kind in [ItemKind::U32, ItemKind::U32U64, ItemKind::U64U64, ItemKind::custom::<[u32; 3]>(4)] {
            assert!(!MergeSortPlan::keeps_ties(&c, kind), "{kind:?}");
        }
        let bitonic_tiles = MergeSortConfig { tile_sort: TileSort::BlockBitonic, tile: 4096, ..c };
        let warp_merges = MergeSortConfig { merge: MergeKernel::WarpBitonic, ..c };
        for cfg in [bitonic_tiles, warp_merges] {
            assert!(!MergeSortPlan::keeps_ties(&cfg, ItemKind::U32Rank));
        }
    }

    #[test]
    fn a_tile_smaller_than_the_window_is_refused_at_any_length() {
        let c = MergeSortConfig { tile: 1024, ..Default::default() };
        for n in [0, 1, 100, 1 << 20] {
            assert!(matches!(MergeSortPlan::new(&c, ItemKind::U32, n, &HOPPER), Err(Error::BadConfig(_))));
        }
    }

    #[test]
    fn the_splits_flag_lies_past_every_window() {
        let c = MergeSortConfig {
            tile: 4096,
            tile_sort: TileSort::BlockBitonic,
            merge: MergeKernel::WarpBitonic,
            outputs_per_thread: 8,
            merge_threads: 0,
        };
        for kind in [ItemKind::custom::<[u32; 3]>(0), ItemKind::custom::<[u64; 4]>(8)] {
            for n in [4097, 1 << 20, (1 << 24) + 3] {
                let plan = MergeSortPlan::new(&c, kind, n, &HOPPER).unwrap();
                let windows = n.div_ceil(plan.merge.window);
                assert!(plan.splits_flag() >= windows * 8 && plan.splits_flag() + 4 <= plan.regions.parts_bytes);
                let mut l = Vec::new();
                plan.launches(kind, &mut l);
                assert!(l.iter().any(|(id, _)| id.family == Family::SplitRepair));
            }
        }
    }
}
