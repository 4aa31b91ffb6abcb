//! Tuning policy: the launch choices no kernel depends on, one table per
//! device class, apart from the algorithms (as CUB keeps its tuning headers
//! apart from its agents). The plan (`plan`) reads a table to fill in every
//! parameter a caller left at zero; the measurements behind the numbers are
//! in `docs/PERFORMANCE.md`, not here.

use warpsort_kernels::config::{BLOCK_SORT_MAX_TILE, between_tile};

use crate::launch::{ItemKind, Shape};
use crate::options::Algorithm;

/// The launch choices of one GPU: its device class's table, with the
/// GPU's own multiprocessor count ([`for_device`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Policy {
    /// Which GPUs this table is for, for reports.
    pub name: &'static str,
    /// The GPU's multiprocessors (`DeviceInfo::sms`): [`for_device`] puts
    /// them in; the tables hold an H200's 132.
    pub sms: u32,
    /// The merge sort's step-1 tile for items of up to 8 bytes.
    pub tile: usize,
    /// The step-1 tile for 4-byte items in sorts of at least
    /// `large_tile_min_tiles` such tiles (one merge pass fewer).
    pub tile_large: usize,
    /// See `tile_large`: below this many large tiles (about one per SM),
    /// step 1 keeps `tile` to fill the GPU with blocks.
    pub large_tile_min_tiles: usize,
    /// The step-1 tile for 16-byte items.
    pub tile_wide: usize,
    /// Block merge: outputs per thread for 4- and 16-byte items.
    pub block_merge_outputs: u32,
    /// Block merge: outputs per thread for 8-byte items.
    pub block_merge_outputs_8: u32,
    /// Block merge: threads per block.
    pub merge_threads: u32,
    /// Sorts of at most this many items are small: their block merges run
    /// `merge_threads_small` threads and only their partitions overlap.
    pub small_sort_items: usize,
    /// Block merge: threads per block in small sorts.
    pub merge_threads_small: u32,
    /// Warp bitonic merge: outputs per lane, key-only sorts.
    pub warp_merge_outputs: u32,
    /// Warp bitonic merge: outputs per lane, key-value sorts.
    pub warp_merge_outputs_pairs: u32,
    /// Sorts of more bytes of items than this launch their merge passes
    /// without overlap (programmatic dependent launch, sm_90 on).
    pub overlap_max_bytes: usize,
    /// Threads per block of the merge-path partitions (one search each).
    pub partition_threads: u32,
    /// Threads per block of kernels that run one job per warp.
    pub warp_kernel_threads: u32,
    /// Grid cap of the segmented chunk kernel (`SegmentKernel::WarpChunks`),
    /// in blocks a multiprocessor ([`Policy::chunk_kernel_max_blocks`]): its
    /// warps stride over the rest, so that each warp sorts several rounds
    /// of short segments instead of one (`docs/PERFORMANCE.md`).
    pub chunk_kernel_blocks_per_sm: u32,
    /// Segmented block sorts of `u32` keys alone in tiles of at least this
    /// many keys run the dual block kernel (`segmented_block_dual`: the
    /// registers of two such blocks a multiprocessor); smaller tiles keep
    /// the registers of one (`docs/PERFORMANCE.md`).
    pub dual_block_min_tile: u32,
    /// Segments given by offsets in a class that may join the next one (a
    /// block class between two powers of two, a class of the chunk kernel
    /// below its largest chunk: `OffsetsLaunches::new`) take a launch of
    /// their own where the class holds at least this many a multiprocessor
    /// ([`Policy::own_launch_min_segments`]); fewer join the next class's
    /// launch, whose chunk or tile holds them too, since every launch costs
    /// its start and ends in a tail of its last blocks
    /// (`docs/PERFORMANCE.md`).
    pub join_class_below_segments_per_sm: u32,
    /// Segments given by offsets: a class's launch of fewer blocks than
    /// this a multiprocessor, which would leave the GPU nearly idle (a
    /// class of a few long segments, or of a few chunks), runs on a second
    /// stream beside the other classes' launches
    /// ([`Policy::beside_max_blocks`]; `docs/PERFORMANCE.md`).
    pub beside_below_blocks_per_sm: u32,
    /// Threads per block of element-wise kernels.
    pub elementwise_threads: u32,
    /// Grid cap of element-wise kernels (they stride over the rest).
    pub elementwise_max_blocks: u32,
    /// Grid cap of the checks (each block adds its counts atomically).
    pub check_max_blocks: u32,
    /// Threads per block of the global bitonic stages.
    pub bitonic_stage_threads: u32,
    /// Threads per block of the paper's merge kernels.
    pub paper_threads: u32,
    /// Merge sorts of at least this many items scan their input's order
    /// first (`Presorted::Auto`).
    pub presorted_min_items: usize,
    /// Key-value sorts of 4-byte keys with 8-byte values of at least this
    /// many items sort the keys with `u32` positions and gather the values
    /// once at the end (see `plan::permute::PairsPlan`).
    pub gather_values_min_items: usize,
    /// Threads per block of the order scan.
    pub order_scan_threads: u32,
    /// Grid cap of the order scan (about the blocks resident at once: the
    /// warps stride over the rest and stop early together).
    pub order_scan_max_blocks: u32,
    /// Where [`Algorithm::Auto`] runs the sample sort: see [`SampleRange`].
    pub sample_ranges: &'static [SampleRange],
}

/// The items of one kind (as a full sort sees them: 4- or 8-byte keys,
/// values, ranks) that [`Algorithm::Auto`] sorts by the sample sort: from
/// `min_items` to `max_items`; the merge sort below and above, and for
/// kinds the table does not list. Each bound lies midway between the two
/// sizes measured around the crossing (`warpsort bench --suite choice`,
/// `docs/PERFORMANCE.md`), or at the largest size measured where no
/// crossing was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SampleRange {
    pub kind: ItemKind,
    pub min_items: usize,
    pub max_items: usize,
}

/// Hopper's table for [`Algorithm::Auto`], measured on an H200
/// (`docs/runs/2026-11-29g/call3-choice-ea6096b-h200.jsonl`; `cargo xtask
/// choice` derives it from such a run, and a test of `xtask` holds the two
/// together): 8-byte keys with values or stable from about 2^20.6 to 2^28,
/// alone from about 2^21.6 to 2^28; `u32` keys
/// with values (stable too) from about 2^21.6 to 2^28, alone from about
/// 2^22.6 to 2^28.
const HOPPER_SAMPLE: [SampleRange; 8] = [
    SampleRange { kind: ItemKind::U32, min_items: 3 << 21, max_items: 1 << 28 },
    SampleRange { kind: ItemKind::U32Rank, min_items: 3 << 20, max_items: 1 << 28 },
    SampleRange { kind: ItemKind::U32U32, min_items: 3 << 20, max_items: 1 << 28 },
    SampleRange { kind: ItemKind::U32U64, min_items: 3 << 20, max_items: 1 << 28 },
    SampleRange { kind: ItemKind::U64, min_items: 3 << 20, max_items: 1 << 28 },
    SampleRange { kind: ItemKind::U64Rank, min_items: 3 << 19, max_items: 1 << 28 },
    SampleRange { kind: ItemKind::U64U32, min_items: 3 << 19, max_items: 1 << 28 },
    SampleRange { kind: ItemKind::U64U64, min_items: 3 << 19, max_items: 1 << 28 },
];

impl Policy {
    /// The segmented chunk kernel's grid cap: `chunk_kernel_blocks_per_sm`
    /// blocks on each of the GPU's multiprocessors.
    pub fn chunk_kernel_max_blocks(&self) -> u32 {
        self.chunk_kernel_blocks_per_sm * self.sms
    }

    /// The fewest segments a class that may join the next one takes a
    /// launch of its own for: `join_class_below_segments_per_sm` on each of
    /// the GPU's multiprocessors.
    pub fn own_launch_min_segments(&self) -> usize {
        (self.join_class_below_segments_per_sm * self.sms) as usize
    }

    /// The most blocks a segment class's launch may have to run beside the
    /// others: below `beside_below_blocks_per_sm` on each multiprocessor.
    pub fn beside_max_blocks(&self) -> u32 {
        (self.beside_below_blocks_per_sm * self.sms).saturating_sub(1)
    }

    /// An element-wise kernel's launch over `work` items.
    pub fn elementwise(&self, work: usize) -> Shape {
        Shape::covering(work, self.elementwise_threads, self.elementwise_max_blocks)
    }

    /// The algorithm [`Algorithm::Auto`] runs for `n` items of `kind` (the
    /// sample sort only where the table lists it); any other is as asked.
    pub fn algorithm(&self, asked: Algorithm, kind: ItemKind, n: usize) -> Algorithm {
        match self.sample_range(kind) {
            _ if asked != Algorithm::Auto => asked,
            Some(r) if (r.min_items..=r.max_items).contains(&n) => Algorithm::SampleSort,
            _ => Algorithm::MergeSort,
        }
    }

    /// The sizes [`Algorithm::Auto`] sorts `kind` by the sample sort, if any.
    pub fn sample_range(&self, kind: ItemKind) -> Option<&SampleRange> {
        self.sample_ranges.iter().find(|r| r.kind == kind)
    }

    /// Where `asked` is [`Algorithm::Auto`] and `n` items of `kind` lie
    /// past the sizes it sorts by the sample sort: the largest of those
    /// sizes. Storage grows with `n`, so such a sort keeps what it needed
    /// there (the one rule the plans follow across the switch).
    pub fn past_sample_range(&self, asked: Algorithm, kind: ItemKind, n: usize) -> Option<usize> {
        match self.sample_range(kind) {
            Some(r) if asked == Algorithm::Auto && n > r.max_items => Some(r.max_items),
            _ => None,
        }
    }
}

/// How host data streams to and from the GPU (every device class): the
/// pinned staging rings and how a host sort cuts its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Streaming {
    /// Pinned buffers in each direction's ring.
    pub slots: usize,
    /// Bytes of each pinned buffer.
    pub slot_bytes: usize,
    /// A host sort that fits on the GPU sorts its input in up to this many
    /// runs as they arrive, then merges them; beyond the GPU it cuts at least
    /// this many runs and buckets (copies overlap the sorts).
    pub runs: usize,
    /// On the GPU, `runs` runs are cut in these proportions (where the
    /// longest stays within the sort's length limit), each about 1.22 times
    /// the next. A run's sort and its share of the merges keep the GPU busy
    /// for about 0.8 of the time its upload takes, and start when its last
    /// byte lands; what the upload does not hide is the largest excess of
    /// the work queued from a run on over the upload left after it. Runs
    /// shrinking by `1 / 0.82` make that excess alike for every run, a
    /// twentieth of the upload (even runs: a tenth).
    pub run_weights: [usize; RUNS],
    /// ... but no run shorter than this many bytes of items.
    pub min_run_bytes: usize,
    /// On the GPU, the last merge (all of the items) is launched in this
    /// many ranges of its windows, each copied back as soon as it is
    /// merged, so that the copy back does not wait for the whole merge.
    pub root_ranges: usize,
    /// Device memory a host sort leaves free when the caller sets no limit
    /// (at most an eighth of what is free).
    pub margin_bytes: usize,
    /// Beyond the GPU: buckets are planned this much below the most a
    /// bucket may hold (eighths), for the splitters' error.
    pub bucket_fill_eighths: usize,
    /// Beyond the GPU: samples each sorted run gives per bucket.
    pub samples_per_bucket: usize,
    /// The copy crew's threads, in percent of the cores (at least one).
    /// The rest serve the caller's thread, which queues the DMAs and the
    /// sorts, and the driver's and the system's threads: a crew thread
    /// preempted while it copies a chunk holds up that piece's DMA and
    /// every DMA after it.
    pub crew_percent: usize,
}

/// Runs (and at least as many buckets) of a host sort: `Streaming::runs`,
/// and the length of `Streaming::run_weights`.
const RUNS: usize = 8;

pub(crate) const STREAMING: Streaming = Streaming {
    slots: 16,
    slot_bytes: 4 << 20,
    runs: RUNS,
    run_weights: [49, 40, 33, 27, 22, 18, 15, 12],
    min_run_bytes: 16 << 20,
    root_ranges: 8,
    margin_bytes: 512 << 20,
    bucket_fill_eighths: 7,
    samples_per_bucket: 64,
    crew_percent: 75,
};

/// The sample sort's chunks (`plan::sample`): keys per block of the first
/// distribution pass (about `first_blocks` blocks of the input, within the
/// bounds), `second_chunk` of the second (whose segments are shorter: each
/// block's counts of every bucket cost its pass traffic); and its sampling:
/// a sample a way for every `keys_per_sample` keys the final buckets
/// average, within the kernel's bounds and `max_sample_bytes` of shared
/// memory (more samples where buckets are long, so that few pass the
/// segmented sort's block; fewer where they are short, since sorting them is
/// the pass's first wait). The chunks from an H200's `--suite tune-sample`
/// (`docs/PERFORMANCE.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SampleTuning {
    pub first_blocks: usize,
    pub min_chunk: usize,
    pub max_chunk: usize,
    pub second_chunk: usize,
    pub keys_per_sample: usize,
    pub max_sample_bytes: u32,
}

pub(crate) const SAMPLE: SampleTuning = SampleTuning {
    first_blocks: 1024,
    min_chunk: 8192,
    max_chunk: 1 << 16,
    second_chunk: 8192,
    keys_per_sample: 64,
    max_sample_bytes: 64 << 10,
};

/// Hopper (sm_90: H100, H200), tuned on an H200 with `warpsort bench
/// --suite tune` and the launch-rule runs of `docs/runs/`.
pub(crate) const HOPPER: Policy = Policy {
    name: "sm_90 (tuned on an H200)",
    sms: 132,
    tile: 8192,
    tile_large: 16384,
    large_tile_min_tiles: 128,
    tile_wide: 4096,
    block_merge_outputs: 16,
    block_merge_outputs_8: 8,
    merge_threads: 128,
    small_sort_items: 1 << 20,
    merge_threads_small: 64,
    warp_merge_outputs: 8,
    warp_merge_outputs_pairs: 4,
    overlap_max_bytes: 32 << 20,
    partition_threads: 32,
    warp_kernel_threads: 256,
    chunk_kernel_blocks_per_sm: 16,
    dual_block_min_tile: between_tile(BLOCK_SORT_MAX_TILE),
    join_class_below_segments_per_sm: 8,
    beside_below_blocks_per_sm: 2,
    elementwise_threads: 256,
    elementwise_max_blocks: 65_535,
    check_max_blocks: 8192,
    bitonic_stage_threads: 256,
    paper_threads: 128,
    presorted_min_items: 1 << 24,
    gather_values_min_items: 1 << 19,
    order_scan_threads: 256,
    order_scan_max_blocks: 256,
    sample_ranges: &HOPPER_SAMPLE,
};

/// Every GPU before Hopper (sm_70 to sm_89). Not tuned on any of them yet:
/// Hopper's numbers, which fit their shared memory and registers (a tile of
/// 16384 4-byte items takes 64 KB of the 96 KB or more a block may use from
/// Volta on).
pub(crate) const PRE_HOPPER: Policy = Policy { name: "sm_70 to sm_89 (Hopper's table, untuned)", ..HOPPER };

/// Every table, for the properties that must hold whatever the GPU.
pub(crate) const ALL: [&Policy; 2] = [&HOPPER, &PRE_HOPPER];

/// The table for a GPU of compute capability `major.minor` with `sms`
/// multiprocessors.
///
/// ```ignore
/// assert_eq!(for_device((9, 0), 114).name, HOPPER.name);
/// ```
pub(crate) fn for_device((major, _minor): (i32, i32), sms: u32) -> Policy {
    let table = if major >= 9 { HOPPER } else { PRE_HOPPER };
    Policy { sms, ..table }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gpu_has_a_table() {
        assert_eq!(for_device((9, 0), 132), HOPPER);
        assert_eq!(for_device((10, 0), 132), HOPPER);
        assert_eq!(for_device((8, 0), 132), PRE_HOPPER);
        assert_eq!(for_device((7, 0), 132), PRE_HOPPER);
    }

    #[test]
    fn grid_caps_scale_with_the_multiprocessors() {
        // An H100 PCIe: 114 multiprocessors.
        let h100 = for_device((9, 0), 114);
        assert_eq!(h100.chunk_kernel_max_blocks(), 16 * 114);
        assert_eq!(HOPPER.chunk_kernel_max_blocks(), 16 * 132);
    }
}
