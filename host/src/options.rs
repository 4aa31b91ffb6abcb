//! What a caller can ask of a sort: the algorithm, the order, stability and
//! each algorithm's parameters. Plain values, checked against what the
//! kernels support; the defaults (zero) are resolved per GPU by the plan
//! (`plan`), from the tuning tables (`policy`).

use warpsort_kernels::config::distribute::{MAX_OVERSAMPLE, MIN_OVERSAMPLE, SCATTER_TILE};
use warpsort_kernels::config::{
    BLOCK_MERGE_KEYS_PER_THREAD, BLOCK_TILE, KEYS_PER_LANE, MERGE_KEYS_PER_LANE, PAPER_BUFFERS, PAPER_MAX_SAMPLES,
    TILE_MERGE_KEYS_PER_LANE, WARP_SIZE,
};

use crate::error::{Error, Result};
use crate::key::Order;
use crate::launch::ItemKind;
use crate::policy::{self, Policy};

/// Which algorithm a full sort runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Algorithm {
    /// The default: the faster of the merge sort and the sample sort for
    /// what is sorted (key width, payload, stable or not) and how many, as
    /// the GPU's tuning table says (`docs/PERFORMANCE.md` has the
    /// measurements). On an H200 that is the sample sort for 8-byte keys
    /// from one to three million items, for 4-byte keys with values
    /// (stable too) from about three million and alone from about six
    /// million, up to 2^28; the merge sort elsewhere, for user key types,
    /// and whenever the sort may not wait for the GPU (a stream being
    /// captured into a CUDA graph, the runs of a host sort).
    #[default]
    Auto,
    /// The merge sort: GPU-Warpsort's pipeline, tuned. Tiles
    /// sorted by warp bitonic networks (merged in shared memory, or by
    /// block-wide bitonic stages: [`TileSort`]), then merge passes split
    /// exactly by merge path, each tile merged by a block in shared memory
    /// or by a warp's bitonic network ([`MergeKernel`]). Parameters:
    /// [`MergeSortConfig`] (which [`Algorithm::Auto`] also follows where it
    /// runs the merge sort).
    MergeSort,
    /// Full-array bitonic sort: fused shared-memory/register stages for
    /// strides below a block tile, one launch per larger stride.
    Bitonic,
    /// The naive bitonic sort: one launch per stage (the reference the fused
    /// sort is measured against).
    BitonicNaive,
    /// GPU-Warpsort as published (Ye et al. 2010: its four steps and
    /// parameters, [`PaperConfig`]): the reference the tuned
    /// [`Algorithm::MergeSort`] is measured against.
    WarpsortPaper,
    /// The sample sort: two distribution passes by sampled splitters cut
    /// the keys into buckets (keys equal to a splitter into equality
    /// buckets), which the segmented sort then sorts (`docs/PERFORMANCE.md`
    /// has the design). Built-in keys of up to `u32::MAX` items; stable
    /// through ranks as the other sorts. It waits once for the GPU (the
    /// size classes of its final buckets): while the stream is being
    /// captured into a CUDA graph, the merge sort runs instead.
    SampleSort,
}

impl Algorithm {
    /// Every algorithm, for benchmarks and tests.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Auto,
        Algorithm::MergeSort,
        Algorithm::Bitonic,
        Algorithm::BitonicNaive,
        Algorithm::WarpsortPaper,
        Algorithm::SampleSort,
    ];

    /// Short name for reports (`warpsort` for the default, as the
    /// benchmark's rows name what [`Gpu::sort`](crate::Gpu::sort) runs).
    ///
    /// ```
    /// assert_eq!(warpsort::Algorithm::Auto.name(), "warpsort");
    /// assert_eq!(warpsort::Algorithm::MergeSort.name(), "merge-sort");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "warpsort",
            Algorithm::MergeSort => "merge-sort",
            Algorithm::Bitonic => "bitonic",
            Algorithm::BitonicNaive => "bitonic-naive",
            Algorithm::WarpsortPaper => "warpsort-paper",
            Algorithm::SampleSort => "sample",
        }
    }
}

/// How the merge sort's passes merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MergeKernel {
    /// A block per merge-path tile: both inputs staged in shared memory with
    /// coalesced loads, a serial merge of `outputs_per_thread` outputs per
    /// thread, stores coalesced through shared memory (`block_merge{k}_*`).
    #[default]
    Block,
    /// A warp per merge-path window, loaded coalesced with B reversed and
    /// bitonic-merged in registers (the paper's step-2 network,
    /// `merge_pass{32k}_*`).
    WarpBitonic,
}

/// How the merge sort's step 1 sorts its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TileSort {
    /// Block-based bitonic sort: the warps' networks in registers, the
    /// strides that cross warps through shared memory with block barriers
    /// (`block_sort_*`, 8 items per thread).
    BlockBitonic,
    /// Warp-based, the default: every warp sorts `32 * 16` items with the
    /// barrier-free bitonic network in registers, then the block merges the
    /// warps' runs in shared memory (`merge_tile_sort_*`).
    #[default]
    WarpMerge,
}

impl TileSort {
    /// The smallest and the largest tile (a power of two) this step 1 sorts:
    /// from one warp's tile to 1024 threads' worth.
    ///
    /// ```
    /// assert_eq!(warpsort::TileSort::WarpMerge.tile_range(), (512, 16384));
    /// ```
    pub fn tile_range(self) -> (usize, usize) {
        let per_thread = self.per_thread() as usize;
        (WARP_SIZE as usize * per_thread, 1024 * per_thread)
    }

    /// Items each thread of this step 1 holds.
    pub(crate) fn per_thread(self) -> u32 {
        match self {
            TileSort::BlockBitonic => KEYS_PER_LANE,
            TileSort::WarpMerge => TILE_MERGE_KEYS_PER_LANE,
        }
    }
}

/// The merge sort's parameters ([`Algorithm::MergeSort`]). Zero picks the
/// default tuned for the GPU and the items being sorted (the tuning tables
/// are in `policy.rs`; `docs/PERFORMANCE.md` has the measurements).
///
/// ```
/// let c = warpsort::MergeSortConfig::default();
/// assert!(c.validate().is_ok());
/// assert!(warpsort::MergeSortConfig { tile: 1000, ..c }.validate().is_err());
/// assert!(warpsort::MergeSortConfig { outputs_per_thread: 8, merge_threads: 256, ..c }.validate().is_ok());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeSortConfig {
    /// Step 1: items per tile, a power of two in [`TileSort::tile_range`]
    /// and at least a merge window (0: tuned).
    pub tile: usize,
    /// Step 1: how tiles are sorted.
    pub tile_sort: TileSort,
    /// The merge passes' kernel.
    pub merge: MergeKernel,
    /// Outputs of a merge per thread: for [`MergeKernel::Block`] 8 or 16
    /// (tiles of `merge_threads * k`), for [`MergeKernel::WarpBitonic`] 4,
    /// 8 or 16 (windows of `32 * k`, one warp each). 0: tuned.
    pub outputs_per_thread: u32,
    /// Threads per block of [`MergeKernel::Block`]: a power of two, 64 to
    /// 1024 (0: tuned).
    pub merge_threads: u32,
}

/// A merge sort's parameters with the defaults filled in from one GPU's
/// tuning table, for one sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// Step 1's tile.
    pub tile: usize,
    /// Outputs per thread (block merge) or per lane (warp merge).
    pub outputs: u32,
    /// Threads sharing a window: a block merge's block, or a warp.
    pub threads: u32,
}

impl Resolved {
    /// Outputs of one merge window (a block's tile or a warp's window).
    pub fn window(&self) -> usize {
        (self.threads * self.outputs) as usize
    }
}

/// The item shapes a configuration must suit: 4- and 8-byte keys, pairs of
/// 8 and 16 bytes.
const ITEM_SHAPES: [ItemKind; 4] = [ItemKind::U32, ItemKind::U64, ItemKind::U32U32, ItemKind::U32U64];

impl MergeSortConfig {
    /// The outputs per thread [`MergeSortConfig::outputs_per_thread`] may be.
    fn allowed_outputs(&self) -> &'static [u32] {
        match self.merge {
            MergeKernel::Block => &BLOCK_MERGE_KEYS_PER_THREAD,
            MergeKernel::WarpBitonic => &MERGE_KEYS_PER_LANE,
        }
    }

    /// The parameters of a sort of `n` items of `kind` on a GPU of tuning
    /// table `p`, every zero filled in.
    pub(crate) fn resolve(&self, kind: ItemKind, n: usize, p: &Policy) -> Resolved {
        let large = n / p.tile_large >= p.large_tile_min_tiles;
        let tile = match (self.tile, self.tile_sort) {
            (0, TileSort::WarpMerge) if kind.item_bytes() > 8 => p.tile_wide,
            (0, TileSort::WarpMerge) if kind.item_bytes() <= 4 && large => p.tile_large,
            (0, TileSort::WarpMerge) => p.tile,
            (0, TileSort::BlockBitonic) => BLOCK_TILE as usize,
            (tile, _) => tile,
        };
        let outputs = match (self.merge, self.outputs_per_thread) {
            (MergeKernel::Block, 0) if kind.item_bytes() == 8 => p.block_merge_outputs_8,
            (MergeKernel::Block, 0) => p.block_merge_outputs,
            (MergeKernel::WarpBitonic, 0) if kind.pairs() => p.warp_merge_outputs_pairs,
            (MergeKernel::WarpBitonic, 0) => p.warp_merge_outputs,
            (_, k) => k,
        };
        let threads = match (self.merge, self.merge_threads) {
            (MergeKernel::WarpBitonic, _) => WARP_SIZE,
            (MergeKernel::Block, 0) if n <= p.small_sort_items => p.merge_threads_small,
            (MergeKernel::Block, 0) => p.merge_threads,
            (MergeKernel::Block, t) => t,
        };
        Resolved { tile, outputs, threads }
    }

    /// Checks the parameters against what the kernels support, for every
    /// item shape, sort size and GPU: each a kernel that exists, and a tile
    /// that holds a merge window. (Whether a GPU gives a kernel the threads
    /// and shared memory it asks is checked before each sort runs.)
    ///
    /// ```
    /// use warpsort::{MergeKernel, MergeSortConfig};
    /// // A block merge of 128 threads x 16 outputs does not fit tiles of 1024.
    /// assert!(MergeSortConfig { tile: 1024, merge: MergeKernel::Block, ..Default::default() }.validate().is_err());
    /// assert!(MergeSortConfig { tile: 1024, merge_threads: 64, outputs_per_thread: 16, ..Default::default() }.validate().is_ok());
    /// ```
    pub fn validate(&self) -> Result<()> {
        let (min_tile, max_tile) = self.tile_sort.tile_range();
        let tile_ok = self.tile == 0 || (self.tile.is_power_of_two() && (min_tile..=max_tile).contains(&self.tile));
        let allowed = self.allowed_outputs();
        let k_ok = self.outputs_per_thread == 0 || allowed.contains(&self.outputs_per_thread);
        let t = self.merge_threads;
        let t_ok = t == 0 || (t.is_power_of_two() && (64..=1024).contains(&t));
        let fits = || {
            policy::ALL.iter().all(|p| {
                ITEM_SHAPES.iter().all(|&kind| {
                    [0, usize::MAX].iter().all(|&n| {
                        let r = self.resolve(kind, n, p);
                        r.tile >= r.window()
                    })
                })
            })
        };
        if !(tile_ok && k_ok && t_ok && fits()) {
            return Err(Error::BadConfig(format!(
                "{self:?}: tile must be 0 (tuned) or a power of two from {min_tile} to {max_tile} and at least the \
                 merge window (threads x outputs per thread); outputs_per_thread 0 (tuned) or one of {allowed:?}; \
                 merge_threads 0 (tuned) or a power of two from 64 to 1024"
            )));
        }
        Ok(())
    }
}

/// How the paper's steps 2 and 4 load the chunk they reverse into the
/// buffer (its Fig. 5 and Fig. 12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PaperLoads {
    /// Lane `i` reads element `i` and the warp reverses the chunk in
    /// registers (`shfl.sync.bfly 31`): Fig. 5(b), the paper's choice.
    #[default]
    Coalesced,
    /// Lane `i` reads element `31 - i` directly: Fig. 5(a). On the paper's
    /// GPU this split every access into 32 transactions; from Fermi on a
    /// warp's reversed access touches the same sectors.
    Reversed,
}

/// GPU-Warpsort's parameters as published ([`Algorithm::WarpsortPaper`]);
/// zero picks the default.
///
/// ```
/// use warpsort::PaperConfig;
/// let c = PaperConfig::default();
/// assert_eq!((c.buffer(), c.sequences(), c.groups(), c.oversampling()), (64, 512, 1024, 8));
/// assert!(c.validate().is_ok());
/// assert!(PaperConfig { buffer: 96, ..c }.validate().is_err());
/// assert!(PaperConfig { groups: 4096, oversampling: 4, ..c }.validate().is_err()); // 16384 samples
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PaperConfig {
    /// `t`: items in a warp's merge buffer, 64 or 128 (0: 64).
    pub buffer: u32,
    /// `l`: sequences left when step 2 stops, a power of two of at least 2
    /// (0: 512). The paper wants more than the GPU has SMs.
    pub sequences: usize,
    /// `s`: groups step 3 cuts every sequence into (0: 1024).
    pub groups: usize,
    /// `k`: samples per splitter (0: 8); `s * k` may not pass 8192.
    pub oversampling: usize,
    /// Step 2 and 4 loads.
    pub loads: PaperLoads,
}

impl PaperConfig {
    /// The paper's `t` when none is given (it needs at least 64).
    pub const DEFAULT_BUFFER: u32 = 64;
    /// `l` when none is given: the paper's 64 served 16 SMs; this serves
    /// the 132 of an H100 or H200 about as well.
    pub const DEFAULT_SEQUENCES: usize = 512;
    /// `s` when none is given.
    pub const DEFAULT_GROUPS: usize = 1024;
    /// `k` when none is given.
    pub const DEFAULT_OVERSAMPLING: usize = 8;

    /// `t`, the default filled in.
    pub fn buffer(&self) -> u32 {
        if self.buffer == 0 { Self::DEFAULT_BUFFER } else { self.buffer }
    }
    /// `l`, the default filled in.
    pub fn sequences(&self) -> usize {
        if self.sequences == 0 { Self::DEFAULT_SEQUENCES } else { self.sequences }
    }
    /// `s`, the default filled in.
    pub fn groups(&self) -> usize {
        if self.groups == 0 { Self::DEFAULT_GROUPS } else { self.groups }
    }
    /// `k`, the default filled in.
    pub fn oversampling(&self) -> usize {
        if self.oversampling == 0 { Self::DEFAULT_OVERSAMPLING } else { self.oversampling }
    }

    /// Checks the parameters ([`Error::BadConfig`] says which are wrong).
    pub fn validate(&self) -> Result<()> {
        let buffers = PAPER_BUFFERS;
        let l = self.sequences();
        let ok = buffers.contains(&self.buffer())
            && l.is_power_of_two()
            && l >= 2
            && self.groups() >= 2
            && self.groups() * self.oversampling() <= PAPER_MAX_SAMPLES as usize;
        if !ok {
            return Err(Error::BadConfig(format!(
                "{self:?}: buffer must be 0 or one of {buffers:?}, sequences 0 or a power of two from 2, groups 0 or at least 2, and groups * oversampling at most {PAPER_MAX_SAMPLES}"
            )));
        }
        Ok(())
    }
}

/// The sample sort's parameters ([`Algorithm::SampleSort`], and Auto's
/// sample sort). Zero picks the default tuned for the GPU (the `SAMPLE`
/// tuning of `policy.rs`; `docs/PERFORMANCE.md` has the measurements).
///
/// ```
/// use warpsort::SampleSortConfig;
/// let c = SampleSortConfig::default();
/// assert!(c.validate().is_ok());
/// assert!(SampleSortConfig { chunk: 1 << 15, second_chunk: 1 << 13, oversample: 8 }.validate().is_ok());
/// assert!(SampleSortConfig { chunk: 100, ..c }.validate().is_err(), "less than a scatter tile");
/// assert!(SampleSortConfig { oversample: 12, ..c }.validate().is_err(), "not a power of two");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleSortConfig {
    /// Keys a block of the first distribution pass takes: 0 (tuned) or
    /// from [`SampleSortConfig::MIN_CHUNK`] to [`SampleSortConfig::MAX_CHUNK`].
    /// Longer chunks mean fewer counts to scan and to read back; shorter
    /// ones more blocks to fill the GPU.
    pub chunk: usize,
    /// Keys a block of the second pass takes, within one of the first
    /// pass's buckets: as `chunk`.
    pub second_chunk: usize,
    /// Samples a way, both passes: 0 (tuned) or a power of two from
    /// `kernels::config::distribute::MIN_OVERSAMPLE` to `MAX_OVERSAMPLE`.
    /// A pass's buckets differ by about `1 / sqrt(oversample)` of their
    /// share.
    pub oversample: u32,
}

impl SampleSortConfig {
    /// The shortest chunk: one scatter tile.
    pub const MIN_CHUNK: usize = SCATTER_TILE as usize;
    /// The longest chunk.
    pub const MAX_CHUNK: usize = 1 << 22;

    /// Checks the parameters ([`Error::BadConfig`] says which are wrong).
    pub fn validate(&self) -> Result<()> {
        let chunk_ok = |c: usize| c == 0 || (Self::MIN_CHUNK..=Self::MAX_CHUNK).contains(&c);
        let o = self.oversample;
        let o_ok = o == 0 || (o.is_power_of_two() && (MIN_OVERSAMPLE..=MAX_OVERSAMPLE).contains(&o));
        if !(chunk_ok(self.chunk) && chunk_ok(self.second_chunk) && o_ok) {
            return Err(Error::BadConfig(format!(
                "{self:?}: chunk and second_chunk must be 0 (tuned) or from {} to {}, oversample 0 (tuned) or a \
                 power of two from {MIN_OVERSAMPLE} to {MAX_OVERSAMPLE}",
                Self::MIN_CHUNK,
                Self::MAX_CHUNK
            )));
        }
        Ok(())
    }
}

/// How to sort.
///
/// ```
/// use warpsort::{Order, SortOptions};
/// let o = SortOptions { order: Order::Descending, stable: true, ..Default::default() };
/// assert_eq!(o.algorithm, warpsort::Algorithm::Auto);
/// assert_eq!(SortOptions::descending().order, Order::Descending);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SortOptions {
    /// The algorithm (by default the faster one for what is sorted:
    /// [`Algorithm::Auto`]).
    pub algorithm: Algorithm,
    /// Ascending (default) or descending.
    pub order: Order,
    /// Equal keys keep their input order (default `false`). Key-only sorts
    /// are stable either way: keys equal in the sort order are bit-identical
    /// (floats compare in IEEE total order), so this costs nothing there.
    /// Key-value sorts and argsorts then sort `(key, position)` pairs
    /// compared key then position, and gather the values: up to `u32::MAX`
    /// items ([`Error::TooLong`] past that).
    pub stable: bool,
    /// The merge sort's parameters.
    pub merge_sort: MergeSortConfig,
    /// The published GPU-Warpsort's parameters ([`Algorithm::WarpsortPaper`]).
    pub paper: PaperConfig,
    /// The sample sort's parameters.
    pub sample_sort: SampleSortConfig,
    /// Whether the merge sort or the sample sort first looks at the input's
    /// order (by default from a size on): see [`Presorted`].
    pub presorted: Presorted,
}

/// Whether a merge sort or a sample sort first scans its input's order:
/// one read of the keys, and one wait for what it found. Input already in
/// order then costs that read and nothing more, input in reverse order one
/// reversal, input made of up to 32 ascending runs a merge of the runs
/// (`log2(runs)` passes); any other input is sorted as without the scan, its
/// scan stopped early.
///
/// The wait makes the call return only once the GPU has reached the
/// scan, so the scan is skipped while the handle's stream is being captured
/// into a CUDA graph; [`SortOptions::without_waits`] keeps a sort free of
/// waits (no scan, and no sample sort, which waits once).
///
/// ```
/// use warpsort::{Presorted, SortOptions};
/// assert_eq!(SortOptions::default().presorted, Presorted::Auto);
/// let no_scan = SortOptions { presorted: Presorted::Never, ..Default::default() };
/// assert_eq!(SortOptions::default().without_waits().presorted, no_scan.presorted);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Presorted {
    /// Scan sorts large enough that the wait costs little beside the sort
    /// (the GPU's tuning table says from which length; `docs/PERFORMANCE.md`
    /// has the measurements).
    #[default]
    Auto,
    /// Scan every merge sort of more than one tile, and every sample sort.
    Always,
    /// Never scan.
    Never,
}

impl Presorted {
    /// Whether a merge sort or a sample sort of `n` items scans, on a GPU of
    /// table `p`.
    pub(crate) fn scans(self, n: usize, p: &Policy) -> bool {
        match self {
            Presorted::Auto => n >= p.presorted_min_items,
            Presorted::Always => true,
            Presorted::Never => false,
        }
    }
}

impl SortOptions {
    /// Options with this algorithm, ascending.
    pub fn algorithm(algorithm: Algorithm) -> Self {
        SortOptions { algorithm, ..Default::default() }
    }

    /// The default sort, descending.
    pub fn descending() -> Self {
        SortOptions { order: Order::Descending, ..Default::default() }
    }

    /// The default sort in `order`.
    pub fn ordered(order: Order) -> Self {
        SortOptions { order, ..Default::default() }
    }

    /// The same sort free of waits for the GPU: the call returns once the
    /// work is queued. No scan of the order ([`Presorted::Never`]), and the
    /// merge sort where [`Algorithm::Auto`] would run the sample sort (it
    /// waits once for its buckets); other algorithms stay as asked.
    ///
    /// ```
    /// use warpsort::{Algorithm, Presorted, SortOptions};
    /// let o = SortOptions::default().without_waits();
    /// assert_eq!((o.algorithm, o.presorted), (Algorithm::MergeSort, Presorted::Never));
    /// ```
    pub fn without_waits(self) -> Self {
        let algorithm = if self.algorithm == Algorithm::Auto { Algorithm::MergeSort } else { self.algorithm };
        SortOptions { algorithm, presorted: Presorted::Never, ..self }
    }

    /// Checks the options against what the kernels support (every sort does
    /// this first, whatever the length).
    pub fn validate(&self) -> Result<()> {
        self.merge_sort.validate()?;
        self.paper.validate()?;
        self.sample_sort.validate()
    }
}

/// Which kernel sorts a segment: the kernels of the segmented family
/// (`segmented_*`), each sorting segments up to its capacity.
/// [`SegmentKernel::for_len`] is the rule every segmented sort follows
/// (through `config::segment_class`); [`Gpu::sort_segments_with`](crate::Gpu::sort_segments_with)
/// takes one explicitly, for benchmarks and tuning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SegmentKernel {
    /// Several segments per warp: a warp tile of `32 * 8` (256) items, one
    /// segment per aligned `chunk`, most stages inside registers. Up to 256
    /// items.
    WarpChunks {
        /// Items per chunk: a power of two from 8 to 256, at least the
        /// segment length.
        chunk: u32,
    },
    /// One warp per segment (several segments interleaved for short ones),
    /// `32 * keys_per_lane` items in registers; `keys_per_lane = 1` is the
    /// classic one-key-per-lane `shfl.sync.bfly` warp sort.
    Warp {
        /// Items per lane: 1, 2, 4, 8 or 16.
        keys_per_lane: u32,
    },
    /// One block per segment, a tile of whole warps (a multiple of 256, from
    /// 256 to 8192) in shared memory and registers; tiles between powers of
    /// two run the next power's network with fewer warps.
    Block {
        /// Items in the block's tile.
        tile: u32,
    },
}

impl SegmentKernel {
    /// The kernel of a size class (`config::segment_class`), `None` for the
    /// classes no kernel sorts (0: nothing to sort; the longest: the merge
    /// sort).
    pub(crate) fn for_class(class: u32) -> Option<Self> {
        use warpsort_kernels::config::{
            SEGMENT_CLASS_CHUNKS, SEGMENT_CLASS_LONG, SEGMENT_CLASS_WARP, WARP_SORT_MAX_SEGMENT, segment_class_capacity,
        };
        let cap = segment_class_capacity(class);
        match class {
            0 => None,
            c if c <= SEGMENT_CLASS_CHUNKS => Some(SegmentKernel::WarpChunks { chunk: cap }),
            SEGMENT_CLASS_WARP => Some(SegmentKernel::Warp { keys_per_lane: WARP_SORT_MAX_SEGMENT / WARP_SIZE }),
            c if c < SEGMENT_CLASS_LONG => Some(SegmentKernel::Block { tile: cap }),
            _ => None,
        }
    }

    /// The kernel for segments of `len` items: the smallest that sorts them
    /// (one rule for rows and for segments given by offsets). `BadSegment`
    /// for 0 and past 8192 items, which no single kernel sorts (the
    /// segmented sorts give those to the merge sort).
    ///
    /// ```
    /// use warpsort::SegmentKernel;
    /// assert_eq!(SegmentKernel::for_len(33).unwrap(), SegmentKernel::WarpChunks { chunk: 64 });
    /// assert_eq!(SegmentKernel::for_len(512).unwrap(), SegmentKernel::Warp { keys_per_lane: 16 });
    /// assert_eq!(SegmentKernel::for_len(600).unwrap(), SegmentKernel::Block { tile: 768 });
    /// assert_eq!(SegmentKernel::for_len(5000).unwrap(), SegmentKernel::Block { tile: 6144 });
    /// assert_eq!(SegmentKernel::for_len(8192).unwrap(), SegmentKernel::Block { tile: 8192 });
    /// assert!(SegmentKernel::for_len(8193).is_err());
    /// ```
    pub fn for_len(len: usize) -> Result<Self> {
        use warpsort_kernels::config::{BLOCK_SORT_MAX_TILE, segment_class};
        if len == 0 || len > BLOCK_SORT_MAX_TILE as usize {
            return Err(Error::BadSegment { len, max: BLOCK_SORT_MAX_TILE as usize });
        }
        // Segments of one item need no sorting; the smallest kernel does nothing to them.
        Ok(SegmentKernel::for_class(segment_class(len as u32).max(1))
            .expect("the classes below the long one have kernels"))
    }

    /// The longest segment this kernel sorts (0 for parameters no kernel has).
    pub fn capacity(&self) -> usize {
        use warpsort_kernels::config::{
            BLOCK_SORT_MAX_TILE, BLOCK_SORT_MIN_TILE, SEGMENT_MIN_CHUNK, WARP_SORT_KEYS_PER_LANE, WARP_TILE,
        };
        let ok = match *self {
            SegmentKernel::WarpChunks { chunk } => {
                chunk.is_power_of_two() && (SEGMENT_MIN_CHUNK..=WARP_TILE).contains(&chunk)
            }
            SegmentKernel::Warp { keys_per_lane } => WARP_SORT_KEYS_PER_LANE.contains(&keys_per_lane),
            SegmentKernel::Block { tile } => {
                tile.is_multiple_of(WARP_TILE) && (BLOCK_SORT_MIN_TILE..=BLOCK_SORT_MAX_TILE).contains(&tile)
            }
        };
        match (*self, ok) {
            (_, false) => 0,
            (SegmentKernel::WarpChunks { chunk }, _) => chunk as usize,
            (SegmentKernel::Warp { keys_per_lane }, _) => (WARP_SIZE * keys_per_lane) as usize,
            (SegmentKernel::Block { tile }, _) => tile as usize,
        }
    }

    /// Whether this kernel sorts segments of `len` items.
    ///
    /// ```
    /// use warpsort::SegmentKernel;
    /// assert!(SegmentKernel::Warp { keys_per_lane: 1 }.fits(32));
    /// assert!(!SegmentKernel::Warp { keys_per_lane: 1 }.fits(33));
    /// assert!(!SegmentKernel::WarpChunks { chunk: 48 }.fits(40));
    /// ```
    pub fn fits(&self, len: usize) -> bool {
        len >= 1 && len <= self.capacity()
    }
}
