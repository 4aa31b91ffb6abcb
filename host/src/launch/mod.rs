//! Typed launches: which kernel a launch runs ([`KernelId`]: a family from
//! `warpsort_kernels::names`, its width, the item types), and its arguments
//! as a struct per kernel family ([`families`]), each of which knows its
//! kernel and lists its parameters in the device signature's order. The
//! kernel's name is made in one place ([`KernelId::name`]) from the names
//! the device exports its kernels by; a CPU test checks every kernel the
//! host can launch against the embedded PTX, parameter by parameter.

pub(crate) mod families;

use std::fmt;
use std::mem::{align_of, size_of};

use warpsort_kernels::config::custom_item_bytes;
use warpsort_kernels::names;

/// A device address (0 for "none": no payload, no samples).
pub(crate) type DevPtr = u64;

/// What one sorted item is, as the kernels see it: key and payload widths
/// (payloads only travel, so their type does not matter), or a key and its
/// rank (the stable sorts' `(key, position)` items). Kernel names end with
/// it (`_u32_u64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ItemKind {
    U32,
    U32U32,
    U32U64,
    U64,
    U64U32,
    U64U64,
    U32Rank,
    U64Rank,
    /// Keys of a user's type (`warpsort_key::Order`), with the kernels
    /// `warpsort-build` compiled for it.
    Custom(CustomItems),
}

/// Items of a user's key type: the type's size and alignment, the payload
/// (0, 4 or 8 bytes) and whether it is a rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CustomItems {
    pub key_bytes: u8,
    pub key_align: u8,
    pub val_bytes: u8,
    pub ranked: bool,
}

impl ItemKind {
    /// Every kind the kernels are built for.
    #[cfg(test)]
    pub const ALL: [ItemKind; 8] = [
        ItemKind::U32,
        ItemKind::U32U32,
        ItemKind::U32U64,
        ItemKind::U64,
        ItemKind::U64U32,
        ItemKind::U64U64,
        ItemKind::U32Rank,
        ItemKind::U64Rank,
    ];

    /// Keys of `key_bytes` (4 or 8) with payloads of `val_bytes` (0, 4 or 8).
    pub fn new(key_bytes: usize, val_bytes: usize) -> Self {
        match (key_bytes, val_bytes) {
            (4, 0) => ItemKind::U32,
            (4, 4) => ItemKind::U32U32,
            (4, _) => ItemKind::U32U64,
            (_, 0) => ItemKind::U64,
            (_, 4) => ItemKind::U64U32,
            _ => ItemKind::U64U64,
        }
    }

    /// Keys of a user's type `T` with payloads of `val_bytes` (0, 4 or 8).
    pub fn custom<T>(val_bytes: usize) -> Self {
        ItemKind::Custom(CustomItems {
            key_bytes: size_of::<T>() as u8,
            key_align: align_of::<T>() as u8,
            val_bytes: val_bytes as u8,
            ranked: false,
        })
    }

    /// The same keys with `u32` ranks as payloads (stable sorts).
    pub fn ranked(self) -> Self {
        match self {
            ItemKind::Custom(c) => ItemKind::Custom(CustomItems { val_bytes: 4, ranked: true, ..c }),
            _ if self.key_bytes() == 4 => ItemKind::U32Rank,
            _ => ItemKind::U64Rank,
        }
    }

    /// The same keys with payloads of `val_bytes` (0, 4 or 8).
    pub fn with_vals(self, val_bytes: usize) -> Self {
        match self {
            ItemKind::Custom(c) => ItemKind::Custom(CustomItems { val_bytes: val_bytes as u8, ranked: false, ..c }),
            _ => ItemKind::new(self.key_bytes(), val_bytes),
        }
    }

    /// The same items with a rank moved as a plain `u32` value (kernels
    /// that move ranks without comparing them).
    pub fn rank_as_value(self) -> Self {
        if self.is_ranked() { self.with_vals(4) } else { self }
    }

    /// The same keys, key-only.
    pub fn keys_only(self) -> Self {
        self.with_vals(0)
    }

    pub fn key_bytes(self) -> usize {
        match self {
            ItemKind::U32 | ItemKind::U32U32 | ItemKind::U32U64 | ItemKind::U32Rank => 4,
            ItemKind::Custom(c) => c.key_bytes as usize,
            _ => 8,
        }
    }

    pub fn val_bytes(self) -> usize {
        match self {
            ItemKind::U32 | ItemKind::U64 => 0,
            ItemKind::U32U32 | ItemKind::U64U32 | ItemKind::U32Rank | ItemKind::U64Rank => 4,
            ItemKind::U32U64 | ItemKind::U64U64 => 8,
            ItemKind::Custom(c) => c.val_bytes as usize,
        }
    }

    /// Whether the keys are a user's type (their kernels come from
    /// `warpsort-build`).
    pub fn is_custom(self) -> bool {
        matches!(self, ItemKind::Custom(_))
    }

    /// Whether the items are a stable sort's `(key, rank)`.
    pub fn is_ranked(self) -> bool {
        matches!(self, ItemKind::U32Rank | ItemKind::U64Rank | ItemKind::Custom(CustomItems { ranked: true, .. }))
    }

    /// Whether items carry a payload (a rank included).
    pub fn pairs(self) -> bool {
        self.val_bytes() > 0
    }

    /// Bytes of one item in shared memory and registers (the device's
    /// `Pair<K, V>`: key and payload, the size rounded up to the larger
    /// alignment).
    pub fn item_bytes(self) -> usize {
        if let ItemKind::Custom(c) = self {
            // The key with its pad flag (`config::custom_item_bytes`).
            return custom_item_bytes(c.key_bytes as usize, c.key_align as usize, c.val_bytes as usize);
        }
        let (k, v) = (self.key_bytes(), self.val_bytes());
        (k + v).next_multiple_of(k.max(v))
    }

    /// The kernel-name suffix (`crate::for_items!`'s in the device crate).
    pub fn suffix(self) -> &'static str {
        match self {
            ItemKind::U32 => "u32",
            ItemKind::U32U32 => "u32_u32",
            ItemKind::U32U64 => "u32_u64",
            ItemKind::U64 => "u64",
            ItemKind::U64U32 => "u64_u32",
            ItemKind::U64U64 => "u64_u64",
            ItemKind::U32Rank => "u32_rank",
            ItemKind::U64Rank => "u64_rank",
            ItemKind::Custom(CustomItems { ranked: true, .. }) => "key_rank",
            ItemKind::Custom(c) => match c.val_bytes {
                0 => "key",
                4 => "key_u32",
                _ => "key_u64",
            },
        }
    }
}

/// A kernel family: the kernels one device source is instantiated into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Family {
    BlockSort,
    BitonicFused,
    BitonicStage,
    BitonicHalfCleaners,
    BitonicFlip,
    MergeTileSort,
    MergeTileSortStable,
    MergePartition,
    BlockMerge,
    BlockMergeFrom,
    WarpMergePass,
    SegmentedChunks,
    SegmentedWarp,
    SegmentedBlock,
    SegmentedBlockDual,
    SegmentedChunksStable,
    SegmentedWarpStable,
    SegmentedBlockStable,
    SegmentedChunksKnown,
    SegmentedWarpKnown,
    SegmentedBlockKnown,
    SegmentedChunksStableKnown,
    SegmentedWarpStableKnown,
    SegmentedBlockStableKnown,
    SegmentClassesCount,
    SegmentClassesList,
    SegmentBoundaries,
    PaperMerge,
    PaperFinal,
    PaperSample,
    PaperSplit,
    PaperGroupStarts,
    Verify,
    MapKeys,
    EncodeKeys,
    GatherRecords,
    Iota,
    IotaRows,
    Gather,
    SearchBounds,
    OrderScan,
    Reverse,
    SplitCheck,
    SplitRepair,
    DistributeSample,
    DistributeCount,
    DistributeScan,
    DistributeScatter,
    DistributeSampleViewed,
    DistributeCountViewed,
    DistributeScatterViewed,
    DistributeOffsets,
    DistributeTables,
    DistributeSpans,
}

impl Family {
    /// Whether the family's kernels start with `arch::chain_launch`,
    /// waiting for the kernel before them before they touch global memory,
    /// so that they may be launched overlapping that one
    /// ([`Overlap::WithPrevious`]): the merge sort's tile sorts, partitions
    /// and block merges, the segmented kernels and their classes' count and
    /// list, the sample sort's distribution kernels. The tests hold this
    /// against the embedded PTX (`overlapped_launches_wait_first`).
    pub fn chains(self) -> bool {
        use Family::*;
        matches!(
            self,
            MergeTileSort
                | MergeTileSortStable
                | MergePartition
                | BlockMerge
                | BlockMergeFrom
                | SegmentedChunks
                | SegmentedWarp
                | SegmentedBlock
                | SegmentedBlockDual
                | SegmentedChunksStable
                | SegmentedWarpStable
                | SegmentedBlockStable
                | SegmentedChunksKnown
                | SegmentedWarpKnown
                | SegmentedBlockKnown
                | SegmentedChunksStableKnown
                | SegmentedWarpStableKnown
                | SegmentedBlockStableKnown
                | SegmentClassesCount
                | SegmentClassesList
                | DistributeSample
                | DistributeCount
                | DistributeScan
                | DistributeScatter
                | DistributeSampleViewed
                | DistributeCountViewed
                | DistributeScatterViewed
                | DistributeOffsets
                | DistributeTables
                | DistributeSpans
        )
    }

    /// The family of the same kernels reading keys through a view (the
    /// distribution pass's `_viewed` kernels); itself for the rest.
    pub fn viewed(self) -> Family {
        match self {
            Family::DistributeSample => Family::DistributeSampleViewed,
            Family::DistributeCount => Family::DistributeCountViewed,
            Family::DistributeScatter => Family::DistributeScatterViewed,
            f => f,
        }
    }

    /// A segmented kernel's family (`SegmentedChunks`, `SegmentedWarp` or
    /// `SegmentedBlock`) as launched: its stable kernels where `stable`,
    /// those told each segment's span where `known` (the sample sort's
    /// buckets, `segmented::known` on the device), the block kernel's dual
    /// build where `dual` (`segmented::dual`: the plan takes it for the
    /// caller's segments alone, unstable). The one naming rule of the
    /// segmented launches, for the plan and the launch alike.
    pub fn segmented(self, stable: bool, known: bool, dual: bool) -> Family {
        use Family::*;
        if dual {
            debug_assert!(self == SegmentedBlock && !stable && !known, "the dual kernel sorts the caller's segments");
            return SegmentedBlockDual;
        }
        // A row per kernel; columns: the caller's, stable, known, both.
        const VARIANTS: [[Family; 4]; 3] = [
            [SegmentedChunks, SegmentedChunksStable, SegmentedChunksKnown, SegmentedChunksStableKnown],
            [SegmentedWarp, SegmentedWarpStable, SegmentedWarpKnown, SegmentedWarpStableKnown],
            [SegmentedBlock, SegmentedBlockStable, SegmentedBlockKnown, SegmentedBlockStableKnown],
        ];
        let row = VARIANTS.iter().position(|r| r[0] == self);
        let row = row.unwrap_or_else(|| unreachable!("{self:?} is not a segmented kernel's family"));
        VARIANTS[row][stable as usize + 2 * known as usize]
    }

    /// The name the device exports the family's kernels by.
    pub fn name(self) -> &'static str {
        match self {
            Family::BlockSort => names::BLOCK_SORT,
            Family::BitonicFused => names::BITONIC_FUSED,
            Family::BitonicStage => names::BITONIC_STAGE,
            Family::BitonicHalfCleaners => names::BITONIC_HC,
            Family::BitonicFlip => names::BITONIC_FLIP,
            Family::MergeTileSort => names::MERGE_TILE_SORT,
            Family::MergeTileSortStable => names::MERGE_TILE_SORT_STABLE,
            Family::MergePartition => names::MERGE_PARTITION,
            Family::BlockMerge => names::BLOCK_MERGE,
            Family::BlockMergeFrom => names::BLOCK_MERGE_FROM,
            Family::WarpMergePass => names::MERGE_PASS,
            Family::SegmentedChunks => names::SEGMENTED_CHUNKS,
            Family::SegmentedWarp => names::SEGMENTED_WARP,
            Family::SegmentedBlock => names::SEGMENTED_BLOCK,
            Family::SegmentedBlockDual => names::SEGMENTED_BLOCK_DUAL,
            Family::SegmentedChunksStable => names::SEGMENTED_CHUNKS_STABLE,
            Family::SegmentedWarpStable => names::SEGMENTED_WARP_STABLE,
            Family::SegmentedBlockStable => names::SEGMENTED_BLOCK_STABLE,
            Family::SegmentedChunksKnown => names::SEGMENTED_CHUNKS_KNOWN,
            Family::SegmentedWarpKnown => names::SEGMENTED_WARP_KNOWN,
            Family::SegmentedBlockKnown => names::SEGMENTED_BLOCK_KNOWN,
            Family::SegmentedChunksStableKnown => names::SEGMENTED_CHUNKS_STABLE_KNOWN,
            Family::SegmentedWarpStableKnown => names::SEGMENTED_WARP_STABLE_KNOWN,
            Family::SegmentedBlockStableKnown => names::SEGMENTED_BLOCK_STABLE_KNOWN,
            Family::SegmentClassesCount => names::SEGMENT_CLASSES_COUNT,
            Family::SegmentClassesList => names::SEGMENT_CLASSES_LIST,
            Family::SegmentBoundaries => names::SEGMENT_BOUNDARIES,
            Family::PaperMerge => names::PAPER_MERGE,
            Family::PaperFinal => names::PAPER_FINAL,
            Family::PaperSample => names::PAPER_SAMPLE,
            Family::PaperSplit => names::PAPER_SPLIT,
            Family::PaperGroupStarts => names::PAPER_GROUP_STARTS,
            Family::Verify => names::VERIFY,
            Family::MapKeys => names::MAP_KEYS,
            Family::EncodeKeys => names::ENCODE_KEYS,
            Family::GatherRecords => names::GATHER_RECORDS,
            Family::Iota => names::IOTA,
            Family::IotaRows => names::IOTA_ROWS,
            Family::Gather => names::GATHER,
            Family::SearchBounds => names::SEARCH_BOUNDS,
            Family::OrderScan => names::ORDER_SCAN,
            Family::Reverse => names::REVERSE,
            Family::SplitCheck => names::SPLIT_CHECK,
            Family::SplitRepair => names::SPLIT_REPAIR,
            Family::DistributeSample => names::DISTRIBUTE_SAMPLE,
            Family::DistributeCount => names::DISTRIBUTE_COUNT,
            Family::DistributeScan => names::DISTRIBUTE_SCAN,
            Family::DistributeScatter => names::DISTRIBUTE_SCATTER,
            Family::DistributeSampleViewed => names::DISTRIBUTE_SAMPLE_VIEWED,
            Family::DistributeCountViewed => names::DISTRIBUTE_COUNT_VIEWED,
            Family::DistributeScatterViewed => names::DISTRIBUTE_SCATTER_VIEWED,
            Family::DistributeOffsets => names::DISTRIBUTE_OFFSETS,
            Family::DistributeTables => names::DISTRIBUTE_TABLES,
            Family::DistributeSpans => names::DISTRIBUTE_SPANS,
        }
    }
}

/// One kernel: `{family}{width}_{items}` in the PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct KernelId {
    pub family: Family,
    /// The family's width (0: none).
    pub width: u32,
    /// The items (or, for element-wise kernels, the word) it is built for;
    /// `None` for kernels of no item type.
    pub items: Option<ItemKind>,
}

impl KernelId {
    pub fn new(family: Family, items: ItemKind) -> Self {
        KernelId { family, width: 0, items: Some(items) }
    }

    pub fn with_width(family: Family, width: u32, items: ItemKind) -> Self {
        KernelId { family, width, items: Some(items) }
    }

    pub fn plain(family: Family) -> Self {
        KernelId { family, width: 0, items: None }
    }

    /// The kernel's name in the PTX: the one place a name is assembled.
    pub fn name(&self) -> String {
        let width = if self.width == 0 { String::new() } else { self.width.to_string() };
        match self.items {
            Some(items) => format!("{}{width}_{}", self.family.name(), items.suffix()),
            None => format!("{}{width}", self.family.name()),
        }
    }
}

impl fmt::Display for KernelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// One kernel parameter as the driver receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    /// A device address (`.param .u64 .ptr`).
    Ptr(DevPtr),
    /// A 64-bit scalar (`.param .u64`).
    U64(u64),
    /// A 32-bit scalar (`.param .u32`).
    U32(u32),
}

/// A launch's arguments: the kernel they are for, and its parameters in the
/// order of the device signature.
pub(crate) trait Kernel {
    fn id(&self) -> KernelId;
    fn params(&self) -> Vec<Param>;
    /// Whether the device kernel may be launched overlapping the one before
    /// it ([`Family::chains`]).
    fn chains(&self) -> bool {
        self.id().family.chains()
    }
}

/// Grid, block and dynamic shared memory of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub grid: u32,
    pub block: u32,
    pub smem: u32,
}

impl Shape {
    /// `grid` blocks of `block` threads, no shared memory.
    pub fn new(grid: u32, block: u32) -> Self {
        Shape { grid, block, smem: 0 }
    }

    /// Blocks of `block` threads covering `work` threads' worth of work,
    /// at most `max_blocks` (grid-stride kernels do the rest).
    pub fn covering(work: usize, block: u32, max_blocks: u32) -> Self {
        let grid = work.div_ceil(block as usize).clamp(1, max_blocks as usize) as u32;
        Shape::new(grid, block)
    }

    /// One warp per job, in blocks of `block` threads.
    pub fn per_warp(jobs: usize, block: u32) -> Self {
        Shape::covering(jobs, block / warpsort_kernels::config::WARP_SIZE, i32::MAX as u32).with_block(block)
    }

    pub fn with_block(self, block: u32) -> Self {
        Shape { block, ..self }
    }

    pub fn with_smem(self, smem: u32) -> Self {
        Shape { smem, ..self }
    }
}

/// Whether a launch may overlap the kernel before it (programmatic
/// dependent launch, sm_90 on: its blocks are placed while that one
/// finishes; the kernel waits for its writes with `griddepcontrol.wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overlap {
    No,
    WithPrevious,
}

/// Items on the device as the kernels see them: raw addresses, a length
/// and their [`ItemKind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Items {
    pub keys: DevPtr,
    /// 0 for key-only.
    pub vals: DevPtr,
    pub n: usize,
    pub kind: ItemKind,
}

impl Items {
    /// `n` keys of `kind` at `keys` (payloads, if `kind` has them, at `vals`).
    pub fn new(keys: DevPtr, vals: DevPtr, n: usize, kind: ItemKind) -> Self {
        Items { keys, vals: if kind.pairs() { vals } else { 0 }, n, kind }
    }

    /// The same kind at other addresses.
    pub fn moved_to(&self, keys: DevPtr, vals: DevPtr) -> Self {
        Items::new(keys, vals, self.n, self.kind)
    }

    /// Items `start..start + len` of the same arrays.
    pub fn range(&self, start: usize, len: usize) -> Self {
        let vals = if self.vals == 0 { 0 } else { self.vals + (start * self.kind.val_bytes()) as u64 };
        Items { keys: self.keys + (start * self.kind.key_bytes()) as u64, vals, n: len, kind: self.kind }
    }

    /// The same keys with `u32` ranks at `ranks` (stable sorts).
    pub fn with_ranks(&self, ranks: DevPtr) -> Self {
        Items { vals: ranks, kind: self.kind.ranked(), ..*self }
    }

    /// The keys with `vals` of `val_bytes` (4 or 8) as payloads.
    pub fn with_vals(&self, vals: DevPtr, val_bytes: usize) -> Self {
        Items { vals, kind: self.kind.with_vals(val_bytes), ..*self }
    }
}

#[cfg(test)]
mod tests;
