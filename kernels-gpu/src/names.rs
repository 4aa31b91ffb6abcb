//! Every kernel family's name, defined once: the device exports its kernels
//! as `{family}{width}_{items}` (e.g. `block_merge16_u32_u64`: the block
//! merge of 16 outputs a thread over `u32` keys with `u64` payloads), and the
//! host looks them up by the same constants.
//!
//! A family's name is written in exactly one place, the arm of
//! [`kernel_name!`]; the device's `export_name`s and the constants below are
//! made from it. The width is the family's own parameter (windows, keys per
//! lane, stages; absent for most families), and `{items}` the key and payload
//! widths (`u32`, `u32_u64`, `u64_rank`, ...; absent for kernels that sort no
//! items).
//!
//! ```
//! use warpsort_kernels::names;
//! assert_eq!(names::BLOCK_MERGE, "block_merge");
//! assert_eq!(concat!(warpsort_kernels::kernel_name!(block_merge), 16, "_u32"), "block_merge16_u32");
//! ```

/// The name of a kernel family, as a literal (for `export_name` and `concat!`).
#[macro_export]
macro_rules! kernel_name {
    (block_sort) => {
        "block_sort"
    };
    (bitonic_fused) => {
        "bitonic_fused"
    };
    (bitonic_stage) => {
        "bitonic_stage"
    };
    (bitonic_hc) => {
        "bitonic_hc"
    };
    (bitonic_flip) => {
        "bitonic_flip"
    };
    (merge_tile_sort) => {
        "merge_tile_sort"
    };
    (merge_tile_sort_stable) => {
        "merge_tile_sort_stable"
    };
    (merge_partition) => {
        "merge_partition"
    };
    (block_merge) => {
        "block_merge"
    };
    (block_merge_from) => {
        "block_merge_from"
    };
    (merge_pass) => {
        "merge_pass"
    };
    (segmented_chunks) => {
        "segmented_chunks"
    };
    (segmented_warp) => {
        "segmented_warp"
    };
    (segmented_block) => {
        "segmented_block"
    };
    (segmented_chunks_stable) => {
        "segmented_chunks_stable"
    };
    (segmented_warp_stable) => {
        "segmented_warp_stable"
    };
    (segmented_block_dual) => {
        "segmented_block_dual"
    };
    (segmented_block_stable) => {
        "segmented_block_stable"
    };
    (segmented_chunks_known) => {
        "segmented_chunks_known"
    };
    (segmented_warp_known) => {
        "segmented_warp_known"
    };
    (segmented_block_known) => {
        "segmented_block_known"
    };
    (segmented_chunks_stable_known) => {
        "segmented_chunks_stable_known"
    };
    (segmented_warp_stable_known) => {
        "segmented_warp_stable_known"
    };
    (segmented_block_stable_known) => {
        "segmented_block_stable_known"
    };
    (segment_classes_count) => {
        "segment_classes_count"
    };
    (segment_classes_list) => {
        "segment_classes_list"
    };
    (segment_boundaries) => {
        "segment_boundaries"
    };
    (paper_merge) => {
        "paper_merge"
    };
    (paper_final) => {
        "paper_final"
    };
    (paper_sample) => {
        "paper_sample"
    };
    (paper_split) => {
        "paper_split"
    };
    (paper_group_starts) => {
        "paper_group_starts"
    };
    (verify) => {
        "verify"
    };
    (map_keys) => {
        "map_keys"
    };
    (encode_keys) => {
        "encode_keys"
    };
    (iota) => {
        "iota"
    };
    (iota_rows) => {
        "iota_rows"
    };
    (gather) => {
        "gather"
    };
    (gather_records) => {
        "gather_records"
    };
    (search_bounds) => {
        "search_bounds"
    };
    (order_scan) => {
        "order_scan"
    };
    (reverse) => {
        "reverse"
    };
    (split_check) => {
        "split_check"
    };
    (distribute_sample) => {
        "distribute_sample"
    };
    (distribute_count) => {
        "distribute_count"
    };
    (distribute_scan) => {
        "distribute_scan"
    };
    (distribute_scatter) => {
        "distribute_scatter"
    };
    (distribute_sample_viewed) => {
        "distribute_sample_viewed"
    };
    (distribute_count_viewed) => {
        "distribute_count_viewed"
    };
    (distribute_scatter_viewed) => {
        "distribute_scatter_viewed"
    };
    (distribute_offsets) => {
        "distribute_offsets"
    };
    (distribute_tables) => {
        "distribute_tables"
    };
    (distribute_spans) => {
        "distribute_spans"
    };
    (split_repair) => {
        "split_repair"
    };
    (probe_shfl) => {
        "probe_shfl"
    };
    (probe_vote) => {
        "probe_vote"
    };
    (probe_reduce_scan) => {
        "probe_reduce_scan"
    };
    (probe_compact) => {
        "probe_compact"
    };
    (probe_cmpx) => {
        "probe_cmpx"
    };
}

/// Declares the constant of each family named by [`kernel_name!`].
macro_rules! names {
    ($($(#[$doc:meta])* $c:ident = $family:ident;)*) => {
        $( $(#[$doc])* pub const $c: &str = kernel_name!($family); )*
    };
}

names! {
    /// Block bitonic sort of segments (GPU-Warpsort's step 1 with `TileSort::BlockBitonic`, the paper's step 1).
    BLOCK_SORT = block_sort;
    /// The fused bitonic sort's shared-memory half-cleaners.
    BITONIC_FUSED = bitonic_fused;
    /// One global bitonic stage.
    BITONIC_STAGE = bitonic_stage;
    /// Several global half-cleaners in one pass (width: how many).
    BITONIC_HC = bitonic_hc;
    /// A flip and the half-cleaners after it in one pass (width: how many stages).
    BITONIC_FLIP = bitonic_flip;
    /// Step 1 by warp sorts and block merges.
    MERGE_TILE_SORT = merge_tile_sort;
    /// Step 1 by warp sorts and block merges, equal keys in input order.
    MERGE_TILE_SORT_STABLE = merge_tile_sort_stable;
    /// A merge pass's merge-path partition.
    MERGE_PARTITION = merge_partition;
    /// A block-merge pass (width: outputs per thread).
    BLOCK_MERGE = block_merge;
    /// A block-merge pass over a range of its tiles (width: outputs per thread).
    BLOCK_MERGE_FROM = block_merge_from;
    /// A warp bitonic merge pass (width: the window).
    MERGE_PASS = merge_pass;
    /// Segments of up to 256 items, several per warp.
    SEGMENTED_CHUNKS = segmented_chunks;
    /// Segments sorted a warp each (width: the warp's items).
    SEGMENTED_WARP = segmented_warp;
    /// Segments sorted a block each.
    SEGMENTED_BLOCK = segmented_block;
    /// `SEGMENTED_BLOCK` of `u32` keys alone with registers for two blocks
    /// of the largest tile a multiprocessor (`config::DUAL_BLOCK_THREADS_PER_SM`).
    SEGMENTED_BLOCK_DUAL = segmented_block_dual;
    /// Segments of up to 256 items, several per warp, equal keys in input order.
    SEGMENTED_CHUNKS_STABLE = segmented_chunks_stable;
    /// Segments sorted a warp each, equal keys in input order (width: the warp's items).
    SEGMENTED_WARP_STABLE = segmented_warp_stable;
    /// Segments sorted a block each, equal keys in input order.
    SEGMENTED_BLOCK_STABLE = segmented_block_stable;
    /// `SEGMENTED_CHUNKS` told each segment's span (the sample sort's buckets).
    SEGMENTED_CHUNKS_KNOWN = segmented_chunks_known;
    /// `SEGMENTED_WARP` told each segment's span (the sample sort's buckets).
    SEGMENTED_WARP_KNOWN = segmented_warp_known;
    /// `SEGMENTED_BLOCK` told each segment's span (the sample sort's buckets).
    SEGMENTED_BLOCK_KNOWN = segmented_block_known;
    /// `SEGMENTED_CHUNKS_STABLE` told each segment's span (the sample sort's stable buckets).
    SEGMENTED_CHUNKS_STABLE_KNOWN = segmented_chunks_stable_known;
    /// `SEGMENTED_WARP_STABLE` told each segment's span (the sample sort's stable buckets).
    SEGMENTED_WARP_STABLE_KNOWN = segmented_warp_stable_known;
    /// `SEGMENTED_BLOCK_STABLE` told each segment's span (the sample sort's stable buckets).
    SEGMENTED_BLOCK_STABLE_KNOWN = segmented_block_stable_known;
    /// Offsets checked and their segments counted by size class.
    SEGMENT_CLASSES_COUNT = segment_classes_count;
    /// The segments of each size class listed.
    SEGMENT_CLASSES_LIST = segment_classes_list;
    /// Descents across segment boundaries (the segmented check).
    SEGMENT_BOUNDARIES = segment_boundaries;
    /// The paper's step-2 merge pass (width: the buffer `t`).
    PAPER_MERGE = paper_merge;
    /// The paper's step-4 merge level (width: the buffer `t`).
    PAPER_FINAL = paper_final;
    /// The paper's step-3 random samples.
    PAPER_SAMPLE = paper_sample;
    /// The paper's step-3 split at the splitters.
    PAPER_SPLIT = paper_split;
    /// The paper's step-4 piece starts and group offsets.
    PAPER_GROUP_STARTS = paper_group_starts;
    /// Sortedness and fingerprint of an array (the GPU check).
    VERIFY = verify;
    /// Keys onto or back from their ordered patterns.
    MAP_KEYS = map_keys;
    /// Keys stored as fields (tuples, byte strings, 16-bit keys) encoded into,
    /// or decoded back from, their ordered words.
    ENCODE_KEYS = encode_keys;
    /// `0, 1, ..., n - 1`.
    IOTA = iota;
    /// Each item's position in its row, `i % row`.
    IOTA_ROWS = iota_rows;
    /// `dst[i] = src[idx[i]]`.
    GATHER = gather;
    /// `dst[i] = src[idx[i]]` for records of several words.
    GATHER_RECORDS = gather_records;
    /// Where given keys fall in a sorted array (lower or upper bounds): the
    /// distributed sort's buckets.
    SEARCH_BOUNDS = search_bounds;
    /// The order of neighbouring keys: sorted, reversed or a few runs.
    ORDER_SCAN = order_scan;
    /// Values reversed in place.
    REVERSE = reverse;
    /// A distribution pass's splitters, sampled from each segment.
    DISTRIBUTE_SAMPLE = distribute_sample;
    /// A distribution pass's keys counted per (block, bucket).
    DISTRIBUTE_COUNT = distribute_count;
    /// The counts' exclusive scan (one pass, a look-back between blocks).
    DISTRIBUTE_SCAN = distribute_scan;
    /// A distribution pass's keys (and values) moved to their buckets.
    DISTRIBUTE_SCATTER = distribute_scatter;
    /// `DISTRIBUTE_SAMPLE` of keys read through their view (a first pass).
    DISTRIBUTE_SAMPLE_VIEWED = distribute_sample_viewed;
    /// `DISTRIBUTE_COUNT` of keys read through their view.
    DISTRIBUTE_COUNT_VIEWED = distribute_count_viewed;
    /// `DISTRIBUTE_SCATTER` of keys read through their view.
    DISTRIBUTE_SCATTER_VIEWED = distribute_scatter_viewed;
    /// Where each bucket of each segment starts.
    DISTRIBUTE_OFFSETS = distribute_offsets;
    /// The second distribution pass's tables, from the first's offsets.
    DISTRIBUTE_TABLES = distribute_tables;
    /// Each final bucket's span, from both passes' splitters.
    DISTRIBUTE_SPANS = distribute_spans;
    /// Whether a merge pass's splits chain (a build for a user's key type).
    SPLIT_CHECK = split_check;
    /// A merge pass's splits clamped into a chain, when they do not.
    SPLIT_REPAIR = split_repair;
    /// Test probe: one shuffle.
    PROBE_SHFL = probe_shfl;
    /// Test probe: the votes.
    PROBE_VOTE = probe_vote;
    /// Test probe: reductions and scans.
    PROBE_REDUCE_SCAN = probe_reduce_scan;
    /// Test probe: ballot compaction.
    PROBE_COMPACT = probe_compact;
    /// Test probe: compare-exchange across lanes.
    PROBE_CMPX = probe_cmpx;
}
