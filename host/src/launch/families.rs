//! One typed argument struct per kernel family: its kernel ([`Kernel::id`])
//! and its parameters in the order the device declares them
//! ([`Kernel::params`]). The device sources are named beside each.

use warpsort_kernels::ordered::{Fields, View};

use super::{DevPtr, Family, ItemKind, Items, Kernel, KernelId, Param};

/// The samples a merge pass's partition searches first (every
/// `SAMPLE_STRIDE`-th item of the runs; null keys for none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Samples {
    pub keys: DevPtr,
    pub vals: DevPtr,
}

impl Samples {
    pub const NONE: Samples = Samples { keys: 0, vals: 0 };
}

/// Where a segmented kernel's segments are (device `segmented::Bounds`):
/// equal rows, or a list of `start | end << 32` entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Segments {
    /// `count = ceil(n / len)` rows of `len` items (the last may be shorter).
    Rows { n: usize, len: usize },
    /// `count` listed segments at `list`.
    Listed { list: DevPtr, count: usize },
}

impl Segments {
    /// How many segments.
    pub fn count(&self) -> usize {
        match *self {
            Segments::Rows { n, len } => n.div_ceil(len),
            Segments::Listed { count, .. } => count,
        }
    }

    /// The device's `(lists, count, n, len)` parameters.
    fn params(&self) -> [Param; 4] {
        match *self {
            Segments::Rows { n, len } => {
                [Param::Ptr(0), Param::U64(self.count() as u64), Param::U64(n as u64), Param::U64(len as u64)]
            }
            Segments::Listed { list, count } => {
                [Param::Ptr(list), Param::U64(count as u64), Param::U64(0), Param::U64(0)]
            }
        }
    }
}

fn items(i: &Items) -> [Param; 2] {
    [Param::Ptr(i.keys), Param::Ptr(i.vals)]
}

fn u64(x: usize) -> Param {
    Param::U64(x as u64)
}

/// A key view (`ordered::View`) as the kernels take it: `perm, flip, floats`.
fn view(v: View) -> [Param; 3] {
    [Param::U64(v.perm), Param::U64(v.flip), Param::U32(v.floats)]
}

/// A distribution kernel's family: its `_viewed` kernel for keys read
/// through a view, the plain one (no view parameters) for ordered words.
fn distribute_family(f: Family, v: View) -> Family {
    if v.is_identity() { f } else { f.viewed() }
}

/// A distribution kernel's view parameters: none for ordered words.
fn distribute_view(v: View) -> Vec<Param> {
    if v.is_identity() { Vec::new() } else { view(v).to_vec() }
}

fn samples(s: Samples) -> [Param; 2] {
    [Param::Ptr(s.keys), Param::Ptr(s.vals)]
}

/// `block_sort_*` (device `block_sort::sort_tiles`): every `seg`-item
/// segment of `src` sorted into `dst` by one block, recording the samples
/// of `dst`.
pub(crate) struct BlockSort<'a> {
    pub src: &'a Items,
    pub dst: &'a Items,
    pub seg: usize,
    pub samples: Samples,
}

impl Kernel for BlockSort<'_> {
    fn id(&self) -> KernelId {
        KernelId::new(Family::BlockSort, self.src.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.src)[..], &items(self.dst), &[u64(self.src.n), u64(self.seg)], &samples(self.samples)].concat()
    }
}

/// `merge_tile_sort_*` (device `block_merge::sort_tiles`): step 1 by warp
/// sorts merged in shared memory, `tile` items a block; with `stable`,
/// `merge_tile_sort_stable_*` (equal keys in input order).
pub(crate) struct MergeTileSort<'a> {
    pub src: &'a Items,
    pub dst: &'a Items,
    pub tile: usize,
    pub stable: bool,
    pub samples: Samples,
}

impl Kernel for MergeTileSort<'_> {
    fn id(&self) -> KernelId {
        let family = if self.stable { Family::MergeTileSortStable } else { Family::MergeTileSort };
        KernelId::new(family, self.src.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.src)[..], &items(self.dst), &[u64(self.src.n), u64(self.tile)], &samples(self.samples)].concat()
    }
}

/// `merge_partition_*` (device `merge_path::partition`): where each window
/// of a merge pass starts in A.
pub(crate) struct MergePartition<'a> {
    pub items: &'a Items,
    pub samples: Samples,
    pub run: usize,
    /// The first run's length in each pair (`run` in a sort's passes).
    pub split: usize,
    pub window: usize,
    pub parts: DevPtr,
    /// A round of merges of runs of any lengths: its table
    /// (`config::pair_table`), which `run` and `split` then do not describe;
    /// 0 for the others.
    pub pairs: DevPtr,
}

impl Kernel for MergePartition<'_> {
    fn id(&self) -> KernelId {
        KernelId::new(Family::MergePartition, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        let (n, run, split, window) = (u64(self.items.n), u64(self.run), u64(self.split), u64(self.window));
        let scalars = [n, run, split, window, Param::Ptr(self.parts), Param::Ptr(self.pairs)];
        [&items(self.items)[..], &samples(self.samples), &scalars].concat()
    }
}

/// `block_merge{k}_*` (device `block_merge::merge_pass`): one merge pass,
/// a block per tile of `threads * outputs` outputs.
#[derive(Clone, Copy)]
pub(crate) struct BlockMerge<'a> {
    pub outputs: u32,
    pub src: &'a Items,
    pub dst: &'a Items,
    pub run: usize,
    /// The first run's length in each pair (`run` in a sort's passes).
    pub split: usize,
    pub parts: DevPtr,
    pub samples: Samples,
}

impl Kernel for BlockMerge<'_> {
    fn id(&self) -> KernelId {
        KernelId::with_width(Family::BlockMerge, self.outputs, self.src.kind)
    }
    fn params(&self) -> Vec<Param> {
        let scalars = [u64(self.src.n), u64(self.run), u64(self.split), Param::Ptr(self.parts)];
        [&items(self.src)[..], &items(self.dst), &scalars, &samples(self.samples)].concat()
    }
}

/// `block_merge_from{k}_*` (device `block_merge::merge_tiles`): the
/// [`BlockMerge`] pass over tiles `first..` only, as many as the launch's
/// grid: a merge queued a range of tiles at a time.
pub(crate) struct BlockMergeFrom<'a> {
    pub merge: BlockMerge<'a>,
    pub first: usize,
    /// A round of merges of runs of any lengths: its table, as
    /// [`MergePartition::pairs`]; 0 for the others.
    pub pairs: DevPtr,
}

impl Kernel for BlockMergeFrom<'_> {
    fn id(&self) -> KernelId {
        KernelId::with_width(Family::BlockMergeFrom, self.merge.outputs, self.merge.src.kind)
    }
    fn params(&self) -> Vec<Param> {
        let m = &self.merge;
        let scalars =
            [u64(m.src.n), u64(m.run), u64(m.split), Param::Ptr(m.parts), u64(self.first), Param::Ptr(self.pairs)];
        [&items(m.src)[..], &items(m.dst), &scalars, &samples(m.samples)].concat()
    }
}

/// `merge_pass{w}_*` (device `warp_merge::merge_pass`): one merge pass, a
/// warp per window of `window` outputs, bitonic-merged in registers.
pub(crate) struct WarpMergePass<'a> {
    pub window: u32,
    pub src: &'a Items,
    pub dst: &'a Items,
    pub run: usize,
    pub parts: DevPtr,
}

impl Kernel for WarpMergePass<'_> {
    fn id(&self) -> KernelId {
        KernelId::with_width(Family::WarpMergePass, self.window, self.src.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.src)[..], &items(self.dst), &[u64(self.src.n), u64(self.run), Param::Ptr(self.parts)]].concat()
    }
}

/// `split_check` or `split_repair` (device `splits`, in builds for a user's
/// key type): whether a merge pass's splits chain, and their repair when
/// they do not.
pub(crate) struct Splits {
    pub repair: bool,
    pub n: usize,
    pub run: usize,
    pub window: usize,
    pub parts: DevPtr,
    pub flag: DevPtr,
}

impl Kernel for Splits {
    fn id(&self) -> KernelId {
        KernelId::plain(if self.repair { Family::SplitRepair } else { Family::SplitCheck })
    }
    fn params(&self) -> Vec<Param> {
        let (n, run, window) = (u64(self.n), u64(self.run), u64(self.window));
        vec![n, run, run, window, Param::Ptr(self.parts), Param::Ptr(self.flag)]
    }
}

/// `bitonic_stage_*` (device `bitonic::global_stage`): one stage of the
/// global bitonic network.
pub(crate) struct BitonicStage<'a> {
    pub items: &'a Items,
    pub log_s: u32,
    pub log_j: u32,
}

impl Kernel for BitonicStage<'_> {
    fn id(&self) -> KernelId {
        KernelId::new(Family::BitonicStage, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.items)[..], &[u64(self.items.n), Param::U32(self.log_s), Param::U32(self.log_j)]].concat()
    }
}

/// `bitonic_hc{c}_*` (device `bitonic::global_half_cleaners`): `stages`
/// half-cleaners from stride `2^log_j` down, in one pass.
pub(crate) struct BitonicHalfCleaners<'a> {
    pub stages: u32,
    pub items: &'a Items,
    pub log_j: u32,
}

impl Kernel for BitonicHalfCleaners<'_> {
    fn id(&self) -> KernelId {
        KernelId::with_width(Family::BitonicHalfCleaners, self.stages, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.items)[..], &[u64(self.items.n), Param::U32(self.log_j)]].concat()
    }
}

/// `bitonic_flip{c}_*` (device `bitonic::global_flip_half_cleaners`): the
/// flip of phase `2^log_s` and the half-cleaners after it, `stages` in all.
pub(crate) struct BitonicFlip<'a> {
    pub stages: u32,
    pub items: &'a Items,
    pub log_s: u32,
}

impl Kernel for BitonicFlip<'_> {
    fn id(&self) -> KernelId {
        KernelId::with_width(Family::BitonicFlip, self.stages, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.items)[..], &[u64(self.items.n), Param::U32(self.log_s)]].concat()
    }
}

/// `bitonic_fused_*` (device `block_sort::merge_tiles`): every
/// half-cleaner of a stride below a block tile, in shared memory.
pub(crate) struct BitonicFused<'a> {
    pub items: &'a Items,
}

impl Kernel for BitonicFused<'_> {
    fn id(&self) -> KernelId {
        KernelId::new(Family::BitonicFused, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.items)[..], &[u64(self.items.n)]].concat()
    }
}

/// Each listed segment's span, where the caller knows it (device
/// `span::Known`): the spans' table (two keys a segment) and the listed
/// entries' segments (the class's part of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KnownSpans {
    pub spans: DevPtr,
    pub ids: DevPtr,
}

/// A segmented kernel's last parameters: the known spans' two (the
/// `_known` kernels), or none.
fn known_params(known: Option<KnownSpans>) -> Vec<Param> {
    known.map_or(Vec::new(), |k| vec![Param::Ptr(k.spans), Param::Ptr(k.ids)])
}

/// `segmented_chunks_*` (device `segmented::sort_chunks`): segments of up
/// to `chunk` items, several per warp; `stable`: `segmented_chunks_stable_*`;
/// `known`: `segmented_chunks_known_*`, as [`SegmentedBlock`]'s.
pub(crate) struct SegmentedChunks<'a> {
    pub items: &'a Items,
    pub segments: Segments,
    pub chunk: u32,
    pub stable: bool,
    pub known: Option<KnownSpans>,
}

impl Kernel for SegmentedChunks<'_> {
    fn id(&self) -> KernelId {
        let family = Family::SegmentedChunks.segmented(self.stable, self.known.is_some(), false);
        KernelId::new(family, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.items)[..], &self.segments.params(), &[Param::U32(self.chunk)], &known_params(self.known)].concat()
    }
}

/// `segmented_warp{w}_*` (device `segmented::sort_warps`): segments of up
/// to `width` items, a warp each; `stable`: `segmented_warp_stable{w}_*`;
/// `known`: `segmented_warp_known{w}_*`, as [`SegmentedBlock`]'s.
pub(crate) struct SegmentedWarp<'a> {
    pub width: u32,
    pub items: &'a Items,
    pub segments: Segments,
    pub stable: bool,
    pub known: Option<KnownSpans>,
}

impl Kernel for SegmentedWarp<'_> {
    fn id(&self) -> KernelId {
        let family = Family::SegmentedWarp.segmented(self.stable, self.known.is_some(), false);
        KernelId::with_width(family, self.width, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.items)[..], &self.segments.params(), &known_params(self.known)].concat()
    }
}

/// `segmented_block_*` (device `segmented::sort_blocks`): segments of up to
/// a block's tile, a block each; `stable`: `segmented_block_stable_*`;
/// `known`: `segmented_block_known_*` (and `_stable_known_`), told each
/// listed segment's span (the sample sort's buckets: the compact words
/// where the span fits); `dual`: `segmented_block_dual_u32` (`u32` keys
/// alone, the caller's segments: registers for two of the largest blocks a
/// multiprocessor).
pub(crate) struct SegmentedBlock<'a> {
    pub items: &'a Items,
    pub segments: Segments,
    pub stable: bool,
    pub known: Option<KnownSpans>,
    pub dual: bool,
}

impl Kernel for SegmentedBlock<'_> {
    fn id(&self) -> KernelId {
        let family = Family::SegmentedBlock.segmented(self.stable, self.known.is_some(), self.dual);
        KernelId::new(family, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.items)[..], &self.segments.params(), &known_params(self.known)].concat()
    }
}

/// `segment_classes_count` (device `segmented::count_classes`): checks the
/// offsets and counts the segments of each size class (not the odd ones
/// when `odd_sorted`: the sample sort's equality buckets).
pub(crate) struct SegmentClassesCount {
    pub offsets: DevPtr,
    pub segments: usize,
    pub odd_sorted: bool,
    pub counters: DevPtr,
}

impl Kernel for SegmentClassesCount {
    fn id(&self) -> KernelId {
        KernelId::plain(Family::SegmentClassesCount)
    }
    fn params(&self) -> Vec<Param> {
        vec![
            Param::Ptr(self.offsets),
            u64(self.segments),
            Param::U32(self.odd_sorted.into()),
            Param::Ptr(self.counters),
        ]
    }
}

/// `segment_classes_list` (device `segmented::list_classes`): lists the
/// segments of each class (as [`SegmentClassesCount`] counted them), and
/// each entry's segment in `ids` (0: none).
pub(crate) struct SegmentClassesList {
    pub offsets: DevPtr,
    pub segments: usize,
    pub odd_sorted: bool,
    pub n: usize,
    pub counters: DevPtr,
    pub lists: DevPtr,
    pub ids: DevPtr,
    pub room: usize,
}

impl Kernel for SegmentClassesList {
    fn id(&self) -> KernelId {
        KernelId::plain(Family::SegmentClassesList)
    }
    fn params(&self) -> Vec<Param> {
        vec![
            Param::Ptr(self.offsets),
            u64(self.segments),
            Param::U32(self.odd_sorted.into()),
            u64(self.n),
            Param::Ptr(self.counters),
            Param::Ptr(self.lists),
            Param::Ptr(self.ids),
            u64(self.room),
        ]
    }
}

/// `segment_boundaries_{u32,u64}` (device `segmented::boundary_descents`):
/// descents across segment boundaries, for the segmented check.
pub(crate) struct SegmentBoundaries {
    /// The key word: `U32` or `U64`.
    pub word: ItemKind,
    pub keys: DevPtr,
    pub n: usize,
    /// The offsets (0 for rows).
    pub offsets: DevPtr,
    pub count: usize,
    /// The rows' length (0 for offsets).
    pub row: usize,
    pub mode: u32,
    pub across: DevPtr,
}

impl Kernel for SegmentBoundaries {
    fn id(&self) -> KernelId {
        KernelId::new(Family::SegmentBoundaries, self.word)
    }
    fn params(&self) -> Vec<Param> {
        vec![
            Param::Ptr(self.keys),
            u64(self.n),
            Param::Ptr(self.offsets),
            u64(self.count),
            u64(self.row),
            Param::U32(self.mode),
            Param::Ptr(self.across),
        ]
    }
}

/// `paper_merge{t}_*` (device `paper::merge_pass`): the paper's step 2, a
/// warp per pair of sequences through a `buffer`-item buffer.
pub(crate) struct PaperMerge<'a> {
    pub buffer: u32,
    pub src: &'a Items,
    pub dst: &'a Items,
    pub run: usize,
    pub coalesced: bool,
}

impl Kernel for PaperMerge<'_> {
    fn id(&self) -> KernelId {
        KernelId::with_width(Family::PaperMerge, self.buffer, self.src.kind)
    }
    fn params(&self) -> Vec<Param> {
        let scalars = [u64(self.src.n), u64(self.run), Param::U32(self.coalesced as u32)];
        [&items(self.src)[..], &items(self.dst), &scalars].concat()
    }
}

/// The paper's split tables (temporary storage of step 3 and 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PaperTables {
    pub bounds: DevPtr,
    pub starts: DevPtr,
    pub offsets: DevPtr,
}

/// `paper_final{t}_*` (device `paper::final_round`): one level of every
/// group's merge tree (step 4).
pub(crate) struct PaperFinal<'a> {
    pub buffer: u32,
    pub src: &'a Items,
    pub dst: &'a Items,
    pub run: usize,
    pub sequences: usize,
    pub tables: PaperTables,
    pub groups: usize,
    pub round: u32,
    pub coalesced: bool,
}

impl Kernel for PaperFinal<'_> {
    fn id(&self) -> KernelId {
        KernelId::with_width(Family::PaperFinal, self.buffer, self.src.kind)
    }
    fn params(&self) -> Vec<Param> {
        let t = self.tables;
        let scalars = [
            u64(self.run),
            u64(self.sequences),
            Param::Ptr(t.bounds),
            Param::Ptr(t.starts),
            Param::Ptr(t.offsets),
            u64(self.groups),
            Param::U32(self.round),
            Param::U32(self.coalesced as u32),
        ];
        [&items(self.src)[..], &items(self.dst), &scalars].concat()
    }
}

/// `paper_sample_*` (device `paper::sample`): `samples.n` random samples
/// of `items` (step 3).
pub(crate) struct PaperSample<'a> {
    pub items: &'a Items,
    pub samples: &'a Items,
}

impl Kernel for PaperSample<'_> {
    fn id(&self) -> KernelId {
        KernelId::new(Family::PaperSample, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        [&items(self.items)[..], &[u64(self.items.n)], &items(self.samples), &[u64(self.samples.n)]].concat()
    }
}

/// `paper_split_*` (device `paper::split`): the `sequences` runs cut at the
/// splitters (every `oversampling`-th sorted sample; step 3).
pub(crate) struct PaperSplit<'a> {
    pub items: &'a Items,
    pub run: usize,
    pub sequences: usize,
    pub samples: &'a Items,
    pub groups: usize,
    pub oversampling: usize,
    pub bounds: DevPtr,
}

impl Kernel for PaperSplit<'_> {
    fn id(&self) -> KernelId {
        KernelId::new(Family::PaperSplit, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        let head = [u64(self.items.n), u64(self.run), u64(self.sequences)];
        let tail = [u64(self.groups), u64(self.oversampling), Param::Ptr(self.bounds)];
        [&items(self.items)[..], &head, &items(self.samples), &tail].concat()
    }
}

/// `paper_group_starts` (device `paper::group_starts`): step 4's piece
/// starts and group offsets.
pub(crate) struct PaperGroupStarts {
    pub sequences: usize,
    pub groups: usize,
    pub tables: PaperTables,
}

impl Kernel for PaperGroupStarts {
    fn id(&self) -> KernelId {
        KernelId::plain(Family::PaperGroupStarts)
    }
    fn params(&self) -> Vec<Param> {
        let t = self.tables;
        vec![Param::Ptr(t.bounds), u64(self.sequences), u64(self.groups), Param::Ptr(t.starts), Param::Ptr(t.offsets)]
    }
}

/// `verify_*` (device `checks::verify`): descents and a multiset
/// fingerprint, added to two counters.
pub(crate) struct Verify<'a> {
    pub items: &'a Items,
    pub mode: u32,
    pub descents: DevPtr,
    pub sum: DevPtr,
}

impl Kernel for Verify<'_> {
    fn id(&self) -> KernelId {
        KernelId::new(Family::Verify, self.items.kind)
    }
    fn params(&self) -> Vec<Param> {
        let scalars = [u64(self.items.n), Param::U32(self.mode), Param::Ptr(self.descents), Param::Ptr(self.sum)];
        [&items(self.items)[..], &scalars].concat()
    }
}

/// `map_keys_{u32,u64}` (device `encode::map_keys`): keys onto or
/// (`decode`) back from their ordered words through their view, in place.
pub(crate) struct MapKeys {
    /// The key word: `U32` or `U64`.
    pub word: ItemKind,
    pub keys: DevPtr,
    pub n: usize,
    pub view: View,
    pub decode: bool,
}

impl Kernel for MapKeys {
    fn id(&self) -> KernelId {
        KernelId::new(Family::MapKeys, self.word)
    }
    fn params(&self) -> Vec<Param> {
        [&[Param::Ptr(self.keys), u64(self.n)][..], &view(self.view), &[Param::U32(self.decode as u32)]].concat()
    }
}

/// `encode_keys_{u32,u64}` (device `encode::encode_keys`): keys stored as
/// fields (tuples, byte strings, 16-bit keys) encoded into their ordered
/// words, or decoded back (`mode::DECODE`).
pub(crate) struct EncodeKeys {
    /// The word: `U32` or `U64`.
    pub word: ItemKind,
    /// The keys as stored, `fields.stride()` bytes each.
    pub raw: DevPtr,
    pub words: DevPtr,
    pub n: usize,
    pub fields: Fields,
    pub mode: u32,
}

impl Kernel for EncodeKeys {
    fn id(&self) -> KernelId {
        KernelId::new(Family::EncodeKeys, self.word)
    }
    fn params(&self) -> Vec<Param> {
        vec![
            Param::Ptr(self.raw),
            Param::Ptr(self.words),
            u64(self.n),
            Param::U64(self.fields.0),
            Param::U32(self.mode),
        ]
    }
}

/// `gather_records` (device `permute::gather_records`): `dst[i] =
/// src[idx[i]]` for records of `units` units of `unit` bytes (4, 2 or 1).
pub(crate) struct GatherRecords {
    pub src: DevPtr,
    pub idx: DevPtr,
    pub dst: DevPtr,
    pub n: usize,
    pub units: u32,
    pub unit: u32,
}

impl Kernel for GatherRecords {
    fn id(&self) -> KernelId {
        KernelId::plain(Family::GatherRecords)
    }
    fn params(&self) -> Vec<Param> {
        let (src, idx, dst) = (Param::Ptr(self.src), Param::Ptr(self.idx), Param::Ptr(self.dst));
        vec![src, idx, dst, u64(self.n), Param::U32(self.units), Param::U32(self.unit)]
    }
}

/// `iota_{u32,u64}` (device `permute::iota`): `0, 1, ..., n - 1`.
pub(crate) struct Iota {
    /// The word written: `U32` or `U64`.
    pub word: ItemKind,
    pub out: DevPtr,
    pub n: usize,
}

impl Kernel for Iota {
    fn id(&self) -> KernelId {
        KernelId::new(Family::Iota, self.word)
    }
    fn params(&self) -> Vec<Param> {
        vec![Param::Ptr(self.out), u64(self.n)]
    }
}

/// `iota_rows_u32` (device `permute::iota_rows`): `i % row`.
pub(crate) struct IotaRows {
    pub out: DevPtr,
    pub n: usize,
    pub row: usize,
}

impl Kernel for IotaRows {
    fn id(&self) -> KernelId {
        KernelId::new(Family::IotaRows, ItemKind::U32)
    }
    fn params(&self) -> Vec<Param> {
        vec![Param::Ptr(self.out), u64(self.n), u64(self.row)]
    }
}

/// `gather_{u32,u64}` (device `permute::gather`): `dst[i] = src[idx[i]]`.
pub(crate) struct Gather {
    /// The word moved: `U32` or `U64`.
    pub word: ItemKind,
    pub src: DevPtr,
    pub idx: DevPtr,
    pub dst: DevPtr,
    pub n: usize,
}

impl Kernel for Gather {
    fn id(&self) -> KernelId {
        KernelId::new(Family::Gather, self.word)
    }
    fn params(&self) -> Vec<Param> {
        vec![Param::Ptr(self.src), Param::Ptr(self.idx), Param::Ptr(self.dst), u64(self.n)]
    }
}

/// `search_bounds_*` (device `merge_path::search_bounds`): where each of
/// `q` ordered patterns falls in `n` sorted ones (lower or upper bound).
pub(crate) struct SearchBounds {
    /// The word searched: `U32` or `U64`.
    pub word: ItemKind,
    pub keys: DevPtr,
    pub n: usize,
    pub queries: DevPtr,
    pub upper: DevPtr,
    pub q: usize,
    pub out: DevPtr,
}

impl Kernel for SearchBounds {
    fn id(&self) -> KernelId {
        KernelId::new(Family::SearchBounds, self.word)
    }
    fn params(&self) -> Vec<Param> {
        vec![
            Param::Ptr(self.keys),
            u64(self.n),
            Param::Ptr(self.queries),
            Param::Ptr(self.upper),
            u64(self.q),
            Param::Ptr(self.out),
        ]
    }
}

/// `order_scan_*` (device `presorted::order_scan`): the order of every
/// neighbouring pair of keys (ordered patterns) into the zeroed result words
/// (`config::order_scan`).
pub(crate) struct OrderScan {
    /// The key word: `U32` or `U64`.
    pub word: ItemKind,
    pub keys: DevPtr,
    pub n: usize,
    pub out: DevPtr,
    /// How the keys are read (the identity: ordered words).
    pub view: View,
}

impl Kernel for OrderScan {
    fn id(&self) -> KernelId {
        KernelId::new(Family::OrderScan, self.word)
    }
    fn params(&self) -> Vec<Param> {
        [&[Param::Ptr(self.keys), u64(self.n), Param::Ptr(self.out)][..], &view(self.view)].concat()
    }
}

/// `reverse_*` (device `presorted::reverse`): `n` words reversed in place.
pub(crate) struct Reverse {
    /// The word: `U32` or `U64`.
    pub word: ItemKind,
    pub p: DevPtr,
    pub n: usize,
}

impl Kernel for Reverse {
    fn id(&self) -> KernelId {
        KernelId::new(Family::Reverse, self.word)
    }
    fn params(&self) -> Vec<Param> {
        vec![Param::Ptr(self.p), u64(self.n)]
    }
}

/// `distribute_sample_{u32,u64}` (device `distribute::sample_splitters`):
/// a block per segment of a sample sort's distribution pass. Keys read
/// through a view that is not the identity: `distribute_sample_viewed_*`,
/// likewise for the count and the scatter.
pub(crate) struct DistributeSample {
    /// The key word: `U32` or `U64`.
    pub word: ItemKind,
    pub keys: DevPtr,
    pub segments: DevPtr,
    pub splitters: DevPtr,
    /// Samples a way: a power of two, `OVERSAMPLE` to `MAX_OVERSAMPLE`.
    pub oversample: u32,
    /// 0, or the order scan's words: the kernel then samples only where
    /// they prove the input unordered (`config::order_scan::unordered`).
    pub scan: DevPtr,
    /// `None`: each block reads its segment from `segments`. The first
    /// pass: its one block writes the pass's tables itself (`segments` and
    /// these blocks), so that none goes up from the host.
    pub first: Option<FirstTables>,
    /// How the keys are read (the identity: ordered words).
    pub view: View,
}

/// The first distribution pass's tables, made by its sampling
/// (device `distribute::first_tables`): `n` keys, one segment, a block a
/// chunk.
#[derive(Clone, Copy)]
pub(crate) struct FirstTables {
    pub blocks: DevPtr,
    pub n: u64,
    pub chunk: u64,
}

impl Kernel for DistributeSample {
    fn id(&self) -> KernelId {
        KernelId::new(distribute_family(Family::DistributeSample, self.view), self.word)
    }
    fn params(&self) -> Vec<Param> {
        let p = [
            Param::Ptr(self.keys),
            Param::Ptr(self.segments),
            Param::Ptr(self.splitters),
            Param::U32(self.oversample),
            Param::Ptr(self.scan),
        ];
        // (chunk 0: no first pass's tables.)
        let FirstTables { blocks, n, chunk } = self.first.unwrap_or(FirstTables { blocks: 0, n: 0, chunk: 0 });
        let first = [Param::Ptr(blocks), Param::U64(n), Param::U64(chunk)];
        [&p[..], &first, &distribute_view(self.view)].concat()
    }
}

/// `distribute_count_{u32,u64}` (device `distribute::count`): a block per
/// chunk counts its keys per bucket and stores each key's label (a byte).
pub(crate) struct DistributeCount {
    /// The key word: `U32` or `U64`.
    pub word: ItemKind,
    pub keys: DevPtr,
    pub blocks: DevPtr,
    pub splitters: DevPtr,
    pub counts: DevPtr,
    pub labels: DevPtr,
    /// How the keys are read (the identity: ordered words).
    pub view: View,
}

impl Kernel for DistributeCount {
    fn id(&self) -> KernelId {
        KernelId::new(distribute_family(Family::DistributeCount, self.view), self.word)
    }
    fn params(&self) -> Vec<Param> {
        let p = [
            Param::Ptr(self.keys),
            Param::Ptr(self.blocks),
            Param::Ptr(self.splitters),
            Param::Ptr(self.counts),
            Param::Ptr(self.labels),
        ];
        [&p[..], &distribute_view(self.view)].concat()
    }
}

/// `distribute_scan` (device `distribute::scan_counts`): `m` counts into
/// `m + 1` starts, a block a part.
pub(crate) struct DistributeScan {
    pub counts: DevPtr,
    pub starts: DevPtr,
    pub m: usize,
    /// The ticket and a word a part, zero.
    pub state: DevPtr,
}

impl Kernel for DistributeScan {
    fn id(&self) -> KernelId {
        KernelId::plain(Family::DistributeScan)
    }
    fn params(&self) -> Vec<Param> {
        vec![Param::Ptr(self.counts), Param::Ptr(self.starts), u64(self.m), Param::Ptr(self.state)]
    }
}

/// `distribute_scatter_*` (device `distribute::scatter`): a block per chunk
/// moves its items to their buckets, from `src` to `dst` (keys, and values
/// when the kind has them, stably), by the labels the count stored. Values
/// at 0 in `src` are made: each its item's position (argsort's first pass).
pub(crate) struct DistributeScatter<'a> {
    pub src: &'a Items,
    pub labels: DevPtr,
    pub dst: &'a Items,
    pub blocks: DevPtr,
    pub splitters: DevPtr,
    pub starts: DevPtr,
    /// How the source keys are read (the identity: ordered words).
    pub view: View,
}

impl Kernel for DistributeScatter<'_> {
    fn id(&self) -> KernelId {
        KernelId::new(distribute_family(Family::DistributeScatter, self.view), self.src.kind.rank_as_value())
    }
    fn params(&self) -> Vec<Param> {
        let (s, d) = (self.src, self.dst);
        let tables = [Param::Ptr(self.blocks), Param::Ptr(self.splitters), Param::Ptr(self.starts)].into_iter();
        let tables = tables.chain(distribute_view(self.view));
        if s.kind.pairs() {
            [Param::Ptr(s.keys), Param::Ptr(self.labels), Param::Ptr(s.vals), Param::Ptr(d.keys), Param::Ptr(d.vals)]
                .into_iter()
                .chain(tables)
                .collect()
        } else {
            [Param::Ptr(s.keys), Param::Ptr(self.labels), Param::Ptr(d.keys)].into_iter().chain(tables).collect()
        }
    }
}

/// `distribute_spans_{u32,u64}` (device `distribute::bucket_spans`): each
/// of the sample sort's final buckets' span from both passes' splitters.
pub(crate) struct DistributeSpans {
    /// The key word: `U32` or `U64`.
    pub word: ItemKind,
    pub splitters: DevPtr,
    pub spans: DevPtr,
}

impl Kernel for DistributeSpans {
    fn id(&self) -> KernelId {
        KernelId::new(Family::DistributeSpans, self.word)
    }
    fn params(&self) -> Vec<Param> {
        vec![Param::Ptr(self.splitters), Param::Ptr(self.spans)]
    }
}

/// `distribute_offsets` (device `distribute::bucket_offsets`): where every
/// bucket of `segs` segments starts (`u32`), and `n` last.
pub(crate) struct DistributeOffsets {
    pub segments: DevPtr,
    pub starts: DevPtr,
    pub offsets: DevPtr,
    pub segs: usize,
    pub n: usize,
}

impl Kernel for DistributeOffsets {
    fn id(&self) -> KernelId {
        KernelId::plain(Family::DistributeOffsets)
    }
    fn params(&self) -> Vec<Param> {
        vec![Param::Ptr(self.segments), Param::Ptr(self.starts), Param::Ptr(self.offsets), u64(self.segs), u64(self.n)]
    }
}

/// `distribute_tables` (device `distribute::tables`): the second pass's
/// `SegmentWork` and `BlockWork` tables from the first pass's bucket
/// offsets, entries past its blocks up to `max_blocks` idle.
pub(crate) struct DistributeTables {
    pub offsets: DevPtr,
    pub chunk: usize,
    pub segments: DevPtr,
    pub blocks: DevPtr,
    pub max_blocks: usize,
}

impl Kernel for DistributeTables {
    fn id(&self) -> KernelId {
        KernelId::plain(Family::DistributeTables)
    }
    fn params(&self) -> Vec<Param> {
        vec![
            Param::Ptr(self.offsets),
            u64(self.chunk),
            Param::Ptr(self.segments),
            Param::Ptr(self.blocks),
            u64(self.max_blocks),
        ]
    }
}
