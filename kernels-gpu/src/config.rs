//! What the kernels and the host must agree on: widths of the kernel
//! instances, tile sizes, shared-memory layouts, the segment size classes.
//! The one place both sides read them from. (Tuned launch choices that no
//! kernel depends on, such as threads per block or default tiles, are the
//! host's policy, not here.)
//!
//! ```
//! use warpsort_kernels::config::*;
//! assert_eq!(WARP_SIZE * KEYS_PER_LANE, WARP_TILE);
//! assert_eq!(BLOCK_TILE, BLOCK_THREADS * KEYS_PER_LANE);
//! ```

/// Lanes in a warp.
pub const WARP_SIZE: u32 = 32;
/// `log2(WARP_SIZE)`.
pub const LOG_WARP_SIZE: u32 = 5;

/// The kernel instances built for each width, listed once: every entry is
/// `(module, keys per lane, the width in the kernel's name)`. The device crate
/// instantiates its kernels from these lists (`crate::width_modules`), the
/// host reads the widths from the constants below, made from the same lists.
/// `$m! { extra tokens; entries }` is called with the list.
#[macro_export]
macro_rules! warp_sort_widths {
    ($m:ident $(, $extra:tt)*) => {
        $m! { $($extra)*; (k32, 1, 32), (k64, 2, 64), (k128, 4, 128), (k256, 8, 256), (k512, 16, 512) }
    };
}
/// The warp kernel's width that the segments' size classes take
/// (`segment_class`: segments of 257 to [`WARP_SORT_MAX_SEGMENT`] items; see
/// [`warp_sort_widths!`]): the stable and the sample sort's kernels are
/// built at this width alone.
#[macro_export]
macro_rules! class_warp_widths {
    ($m:ident $(, $extra:tt)*) => {
        $m! { $($extra)*; (k512, 16, 512) }
    };
}
/// Warp bitonic merge-pass widths (see [`warp_sort_widths!`]): windows of `32 * k` outputs.
#[macro_export]
macro_rules! merge_pass_widths {
    ($m:ident $(, $extra:tt)*) => {
        $m! { $($extra)*; (w128, 4, 128), (w256, 8, 256), (w512, 16, 512) }
    };
}
/// Block-merge widths (see [`warp_sort_widths!`]): outputs per thread.
#[macro_export]
macro_rules! block_merge_widths {
    ($m:ident $(, $extra:tt)*) => {
        $m! { $($extra)*; (k8, 8, 8), (k16, 16, 16) }
    };
}
/// Buffer widths of the paper's warp merge (`paper`, steps 2 and 4; see
/// [`warp_sort_widths!`]): a buffer of `t = 64 * h` items, `h` per lane in
/// each half.
#[macro_export]
macro_rules! paper_buffer_widths {
    ($m:ident $(, $extra:tt)*) => {
        $m! { $($extra)*; (t64, 1, 64), (t128, 2, 128) }
    };
}
/// The keys-per-lane column of a width list.
macro_rules! widths_array {
    (; $(($module:ident, $k:literal, $w:literal)),*) => { [$($k),*] };
}

/// Keys per lane of the segmented warp kernels: a warp sorts `32 * K` keys.
pub const WARP_SORT_KEYS_PER_LANE: [u32; 5] = warp_sort_widths!(widths_array);
/// Segments one warp sorts together (their networks interleaved, so that
/// short segments still keep enough loads in flight): 8 for 32-key segments,
/// down to 1 from 256 keys on.
pub const fn warp_sort_batch(keys_per_lane: u32) -> u32 {
    if keys_per_lane >= 8 { 1 } else { 8 / keys_per_lane }
}

/// The largest segment one warp sorts: `32 * 16`, the width of
/// [`class_warp_widths!`].
pub const WARP_SORT_MAX_SEGMENT: u32 = WARP_SIZE * class_warp_widths!(widths_array)[0];

/// Keys each thread holds in registers in the block sort, the fused bitonic
/// stages and the GPU-Warpsort tile and merge kernels.
pub const KEYS_PER_LANE: u32 = 8;
/// Keys sorted or merged by one warp in registers: `32 * KEYS_PER_LANE`.
pub const WARP_TILE: u32 = WARP_SIZE * KEYS_PER_LANE;

/// Threads of the block sort kernel that sorts [`BLOCK_TILE`] keys (and of the
/// fused bitonic stages). Other tile sizes launch `tile / KEYS_PER_LANE` threads.
pub const BLOCK_THREADS: u32 = 512;
/// Keys per block tile: the fused shared-memory bitonic stages and GPU-Warpsort's
/// step-1 tile cover this many keys.
pub const BLOCK_TILE: u32 = BLOCK_THREADS * KEYS_PER_LANE;
/// The largest block sort tile (1024 threads of [`KEYS_PER_LANE`] keys).
pub const BLOCK_SORT_MAX_TILE: u32 = 1024 * KEYS_PER_LANE;
/// The smallest block sort tile (one warp).
pub const BLOCK_SORT_MIN_TILE: u32 = WARP_TILE;

/// The launch bound of `segmented_block_dual` (`segmented::dual`): two
/// blocks of the largest tile's 1,024 threads share a multiprocessor's
/// registers (32 a thread), so that while one block waits at a barrier the
/// other runs. `segmented_block` keeps the bound of one such block.
///
/// ```
/// use warpsort_kernels::config::{DUAL_BLOCK_THREADS_PER_SM, BLOCK_SORT_MAX_TILE, KEYS_PER_LANE};
/// assert_eq!(DUAL_BLOCK_THREADS_PER_SM, 2 * BLOCK_SORT_MAX_TILE / KEYS_PER_LANE);
/// ```
pub const DUAL_BLOCK_THREADS_PER_SM: u32 = 2 * BLOCK_SORT_MAX_TILE / KEYS_PER_LANE;

/// [`LAUNCH_BOUNDS`]: the block sorts', then the distribution pass's of
/// each `(scatter, count)` family pair (ordered words, and keys read
/// through a view: the same bounds). The first prefix that matches a
/// kernel bounds it: `u32` keys with values before `u32` keys alone, the
/// dual block kernel before the other segmented block kernels.
macro_rules! launch_bounds {
    ($(($scatter:ident, $count:ident)),*) => {
        [
            (concat!(crate::kernel_name!(block_sort), "_"), BLOCK_SORT_MAX_TILE / KEYS_PER_LANE),
            (concat!(crate::kernel_name!(segmented_block_dual), "_"), DUAL_BLOCK_THREADS_PER_SM),
            (concat!(crate::kernel_name!(segmented_block), "_"), BLOCK_SORT_MAX_TILE / KEYS_PER_LANE),
            (concat!(crate::kernel_name!(distribute_sample), "_"), distribute::MAX_SAMPLE_THREADS),
            $(
                (
                    concat!(crate::kernel_name!($scatter), "_u32_"),
                    distribute::SCATTER_PAIRS_BLOCKS_PER_SM * distribute::THREADS,
                ),
                (concat!(crate::kernel_name!($scatter), "_u32"), distribute::SCATTER_BLOCKS_PER_SM[0] * distribute::THREADS),
                (concat!(crate::kernel_name!($scatter), "_u64"), distribute::SCATTER_BLOCKS_PER_SM[1] * distribute::THREADS),
                (concat!(crate::kernel_name!($count), "_u32"), distribute::COUNT_BLOCKS_PER_SM[0] * distribute::THREADS),
                (concat!(crate::kernel_name!($count), "_u64"), distribute::COUNT_BLOCKS_PER_SM[1] * distribute::THREADS),
            )*
        ]
    };
}

/// Launch bounds: kernels (by name prefix) whose threads, up to this many,
/// must share one multiprocessor's registers whatever their item type: a
/// block that large, or (the sample sort's scatter) the blocks its shared
/// memory lets a multiprocessor hold. `cargo xtask build-ptx` writes each
/// into the PTX (as `.maxnreg`), so ptxas keeps their registers within that
/// share (65536 / 1024 = 64 on every GPU since sm_70); the host refuses
/// other kernels' blocks past what their registers allow
/// (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
///
/// ```
/// use warpsort_kernels::config::{LAUNCH_BOUNDS, BLOCK_SORT_MAX_TILE, KEYS_PER_LANE};
/// assert!(LAUNCH_BOUNDS.contains(&("block_sort_", BLOCK_SORT_MAX_TILE / KEYS_PER_LANE)));
/// ```
pub const LAUNCH_BOUNDS: [(&str, u32); 14] =
    launch_bounds!((distribute_scatter, distribute_count), (distribute_scatter_viewed, distribute_count_viewed));

/// The launch bounds of a build for a user's key type (`warpsort-build`):
/// its block sort and fused bitonic stages run only in the bitonic sort,
/// with [`BLOCK_THREADS`] threads, so they may use twice the registers of
/// the merge sort's largest tiles.
///
/// ```
/// use warpsort_kernels::config::{CUSTOM_LAUNCH_BOUNDS, BLOCK_THREADS};
/// assert!(CUSTOM_LAUNCH_BOUNDS.iter().all(|&(_, n)| n == BLOCK_THREADS));
/// ```
pub const CUSTOM_LAUNCH_BOUNDS: [(&str, u32); 2] = [
    (concat!(crate::kernel_name!(block_sort), "_"), BLOCK_THREADS),
    (concat!(crate::kernel_name!(bitonic_fused), "_"), BLOCK_THREADS),
];

/// Keys per lane the warp bitonic merge passes may use: a warp merges a
/// window of `32 * k` outputs in registers (kernels `merge_pass{32k}_*`).
pub const MERGE_KEYS_PER_LANE: [u32; 3] = merge_pass_widths!(widths_array);
/// Outputs per thread the block-merge passes may use (kernels
/// `block_merge{k}_*`): a block merges a tile of `MERGE_BLOCK_THREADS * k`.
pub const BLOCK_MERGE_KEYS_PER_THREAD: [u32; 2] = block_merge_widths!(widths_array);
/// Step 1 by warp sorts and block merges (`TileSort::WarpMerge` on the
/// host): keys per lane of each warp's register sort (a warp sorts
/// `32 * 16 = 512` items) and outputs per thread of the block's merge rounds
/// after it; a tile of `t` items runs `t / 16` threads.
pub const TILE_MERGE_KEYS_PER_LANE: u32 = 16;

/// Every this many items of a pass's sorted runs, one goes into the samples
/// that the next pass's partition searches first (`merge_path::Samples`): a
/// 32nd of the items, small enough to stay in L2. Windows and runs are
/// multiples of it.
pub const SAMPLE_STRIDE: u32 = 32;

/// Shared-memory slot of element `e` of a tile stored with one skipped slot
/// every `WARP_SIZE`. A thread's run of up to 32 consecutive elements (aligned
/// to its length) and a warp's 32 consecutive elements then fall in distinct
/// banks: blocked writes and striped reads, the two sides of a transpose, are
/// free of bank conflicts.
///
/// ```
/// use warpsort_kernels::config::skewed;
/// assert_eq!((skewed(31), skewed(32), skewed(64)), (31, 33, 66));
/// ```
pub const fn skewed(e: u32) -> u32 {
    e + e / WARP_SIZE
}

/// Slots past its inputs the serial merge reads besides one a step: the
/// item after each cursor's is loaded a step ahead (`block_merge`'s
/// `Cursor`), so a merge of a pair of runs reads up to
/// `MERGE_READ_AHEAD` slots past the pair.
pub const MERGE_READ_AHEAD: u32 = 2;

/// Whether a block-merge pass stages items of `item_bytes` in skewed
/// slots. Items wider than 4 bytes are: a warp's merge cursors that move in
/// step (over presorted input or runs of equal keys: 16 slots apart, two
/// banks) then fall in distinct banks. 4-byte items are not: there the
/// skew's address step in every merge step, and its slots (fewer blocks an
/// SM), cost more on uniform keys than they gain on presorted ones
/// (measurements: `docs/PERFORMANCE.md`).
pub const fn merge_inputs_skewed(item_bytes: u32) -> bool {
    item_bytes > 4
}

/// Where a block-merge pass of `tile` outputs, `per_thread` each, over items
/// of `item_bytes`, keeps its outputs in shared memory: after the inputs
/// `A ++ B` and the `per_thread + MERGE_READ_AHEAD` spare slots the serial
/// merge may read past them (skewed where [`merge_inputs_skewed`]).
pub const fn merge_pass_out_region(tile: u32, per_thread: u32, item_bytes: u32) -> u32 {
    let spare = tile + per_thread + MERGE_READ_AHEAD;
    if merge_inputs_skewed(item_bytes) { skewed(spare - 1) + 1 } else { spare }
}

/// Shared-memory items a block-merge pass of `tile` outputs, `per_thread`
/// each, over items of `item_bytes` needs: the inputs and spare slots, then
/// the outputs, skewed (the blocked-to-striped transpose before the
/// coalesced stores).
///
/// ```
/// use warpsort_kernels::config::*;
/// assert_eq!(merge_pass_smem_slots(2048, 16, 4), (2048 + 18) + (2048 + 64));
/// assert_eq!(merge_pass_smem_slots(1024, 8, 8), (1024 + 10 + 32) + (1024 + 32));
/// ```
pub const fn merge_pass_smem_slots(tile: u32, per_thread: u32, item_bytes: u32) -> u32 {
    merge_pass_out_region(tile, per_thread, item_bytes) + skewed(tile)
}

/// Shared-memory items step 1's warp-sort-and-merge tile sort needs for a
/// tile of `tile` items: one skewed region (runs are written blocked and
/// merged into registers) and the [`MERGE_READ_AHEAD`] spare slots the
/// serial merge reads past a pair of runs.
pub const fn tile_merge_smem_slots(tile: u32) -> u32 {
    skewed(tile + MERGE_READ_AHEAD - 1) + 1
}

/// Size classes of segments given by offsets (`Gpu::sort_segments_by_offsets`):
/// class 0 holds the segments of 0 or 1 items (nothing to sort), classes 1 to 6
/// the chunks of 8 to 256 items (several segments per warp, [`KEYS_PER_LANE`]
/// keys per lane), class [`SEGMENT_CLASS_WARP`] the segments of up to 512 (a warp
/// each, 16 keys per lane), classes 8 to 15 the block tiles, at three quarters
/// of each power of two and at the power (768, 1024, 1536, ..., 6144, 8192:
/// a block of the tile's warps runs the power's network, so a segment
/// fills more than half of its tile), and [`SEGMENT_CLASS_LONG`] the segments
/// past [`BLOCK_SORT_MAX_TILE`], sorted by the full merge sort.
///
/// ```
/// use warpsort_kernels::config::*;
/// assert_eq!(segment_class(1), 0);
/// assert_eq!(segment_class(2), 1);
/// assert_eq!(segment_class_capacity(segment_class(33)), 64);
/// assert_eq!(segment_class(512), SEGMENT_CLASS_WARP);
/// assert_eq!(segment_class_capacity(segment_class(513)), 768);
/// assert_eq!(segment_class_capacity(segment_class(769)), 1024);
/// assert_eq!(segment_class_capacity(segment_class(4097)), 6144);
/// assert_eq!(segment_class_capacity(segment_class(8192)), BLOCK_SORT_MAX_TILE);
/// assert_eq!(segment_class(8193), SEGMENT_CLASS_LONG);
/// ```
pub const SEGMENT_CLASSES: usize = 17;
/// The class of the longest segments (past [`BLOCK_SORT_MAX_TILE`]).
pub const SEGMENT_CLASS_LONG: u32 = SEGMENT_CLASSES as u32 - 1;
/// The last class sorted several segments per warp (chunks of 256 items).
pub const SEGMENT_CLASS_CHUNKS: u32 = 6;
/// The class sorted a warp per segment (up to 512 items, 16 keys per lane);
/// the classes after it, up to [`SEGMENT_CLASS_LONG`], a block per segment.
pub const SEGMENT_CLASS_WARP: u32 = 7;
/// The smallest chunk of the several-segments-per-warp kernel: one lane's keys.
pub const SEGMENT_MIN_CHUNK: u32 = KEYS_PER_LANE;

/// `ceil(log2(len))` for `len >= 2`.
const fn ceil_log2(len: u32) -> u32 {
    32 - (len - 1).leading_zeros()
}

/// The size class of a segment of `len` items (see [`SEGMENT_CLASSES`]).
pub const fn segment_class(len: u32) -> u32 {
    if len <= 1 {
        0
    } else if len > BLOCK_SORT_MAX_TILE {
        SEGMENT_CLASS_LONG
    } else if len <= WARP_SORT_MAX_SEGMENT {
        let len = if len < SEGMENT_MIN_CHUNK { SEGMENT_MIN_CHUNK } else { len };
        // ceil(log2(len)) - 2: 8 -> 1, 16 -> 2, ..., 512 -> 7.
        ceil_log2(len) - 2
    } else {
        // Two a power past the warp's: 768 -> 8, 1024 -> 9, ..., 8192 -> 15.
        let p = ceil_log2(len);
        let three_quarters = len <= 3 << (p - 2);
        SEGMENT_CLASS_WARP + 1 + 2 * (p - ceil_log2(WARP_SORT_MAX_SEGMENT) - 1) + !three_quarters as u32
    }
}

/// The block tile between `power` (a power of two) and the power below
/// it: three quarters of `power`, a whole number of warps' tiles.
///
/// ```
/// use warpsort_kernels::config::between_tile;
/// assert_eq!(between_tile(8192), 6144);
/// ```
pub const fn between_tile(power: u32) -> u32 {
    power / 4 * 3
}

/// The items a kernel of class `1..SEGMENT_CLASS_LONG` covers per segment
/// (its chunk or tile): `2^(class + 2)` up to the warp's class, then three
/// quarters of a power of two and the power, in turn.
pub const fn segment_class_capacity(class: u32) -> u32 {
    if class <= SEGMENT_CLASS_WARP {
        1 << (class + 2)
    } else {
        let k = class - SEGMENT_CLASS_WARP - 1;
        let power = WARP_SORT_MAX_SEGMENT << (k / 2 + 1);
        if k.is_multiple_of(2) { between_tile(power) } else { power }
    }
}

/// Words of the offsets check's result: the first `i` with
/// `offsets[i] > offsets[i + 1]` (`u32::MAX` when none), the count of every
/// class, `offsets[0]` and `offsets[segments]`, then a list cursor per class.
pub const SEGMENT_COUNTERS: usize = 2 * SEGMENT_CLASSES + 3;
/// Shared bytes of the class kernels (`segment_classes_count`,
/// `segment_classes_list`): a count, a cursor and a first place per class.
pub const SEGMENT_CLASSES_SMEM: u32 = 3 * 4 * SEGMENT_CLASSES as u32;
/// Where [`SEGMENT_COUNTERS`] keeps `offsets[0]`, `offsets[segments]` and the cursors.
pub const SEGMENT_FIRST: usize = SEGMENT_CLASSES + 1;
/// See [`SEGMENT_FIRST`].
pub const SEGMENT_LAST: usize = SEGMENT_CLASSES + 2;
/// See [`SEGMENT_FIRST`].
pub const SEGMENT_CURSORS: usize = SEGMENT_CLASSES + 3;

/// Entries every class's list together may need for `n` items in `segs`
/// well-formed segments: only segments of at least 2 items are listed.
///
/// ```
/// use warpsort_kernels::config::segment_lists_bound;
/// assert_eq!(segment_lists_bound(1 << 24, 1 << 19), 1 << 19);
/// assert_eq!(segment_lists_bound(1 << 24, 1 << 24), 1 << 23);
/// assert_eq!(segment_lists_bound(1, 1), 0);
/// ```
pub const fn segment_lists_bound(n: u64, segs: u64) -> u64 {
    if segs < n / 2 { segs } else { n / 2 }
}

/// Half-buffer items per lane of the paper's warp merge, one per buffer
/// width `t = 64 * h` (`paper_merge{t}_*`, `paper_final{t}_*`).
pub const PAPER_HALF_PER_LANE: [u32; 2] = paper_buffer_widths!(widths_array);
/// The paper's merge buffer widths `t = 2 * 32 * h`, one per
/// [`PAPER_HALF_PER_LANE`] entry (the host's `PaperConfig::buffer` values).
pub const PAPER_BUFFERS: [u32; 2] = {
    let mut t = PAPER_HALF_PER_LANE;
    let mut i = 0;
    while i < t.len() {
        t[i] *= 2 * WARP_SIZE;
        i += 1;
    }
    t
};
/// GPU-Warpsort as published, step 1: tiles of one warp's `32 * 8` keys,
/// sorted by the barrier-free warp network (`block_sort_*` run with one warp
/// a block). The paper needs at least 128 keys a warp.
pub const PAPER_TILE: u32 = WARP_TILE;
/// At most this many samples (`s * k`): they are sorted by one block sort.
pub const PAPER_MAX_SAMPLES: u32 = BLOCK_SORT_MAX_TILE;

/// Keys a warp of the order scan (`order_scan_*`) reads per step of its
/// grid-stride loop, 32 a lane (8 runs of 4).
pub const ORDER_SCAN_WARP_ITEMS: u32 = WARP_SIZE * 32;
/// Swaps a thread of the reversal (`reverse_*`) makes per step.
pub const REVERSE_SWAPS: u32 = 4;
/// Descents the order scan lists: an input of up to this many plus one
/// ascending runs is merged run by run rather than sorted.
pub const ORDER_SCAN_DESCENTS: usize = 31;

/// A round of merges of runs of any lengths, launched once for all its
/// pairs (the merge of a few runs, the distributed sort's merge): the
/// round's table of `u64` words that the merge-path partition and the block
/// merge read (`merge_path::Pass`), made by the host's `MergeRunsPlan`.
/// Each pair owns whole windows, from its first one on (runs without a
/// partner are copied apart).
///
/// ```
/// use warpsort_kernels::config::pair_table;
/// // Windows of 3: 3 from item 0 (runs 0..5, 5..9), 1 from item 12 (12..13, 13..14).
/// let t = [4, 2, 0, 0, 5, 9, 3, 12, 13, 14];
/// assert_eq!((t[pair_table::WINDOWS], t[pair_table::PAIRS]), (4, 2));
/// assert_eq!(t.len(), pair_table::words(2));
/// ```
pub mod pair_table {
    /// Word of the windows of the round, all pairs together.
    pub const WINDOWS: usize = 0;
    /// Word of the count of pairs.
    pub const PAIRS: usize = 1;
    /// First word of the pairs, `ENTRY` words each: the pair's first window,
    /// where its first run begins, where its second run begins, where the
    /// second run ends (items).
    pub const FIRST: usize = 2;
    /// Words a pair.
    pub const ENTRY: usize = 4;

    /// Words of the table of `pairs` pairs.
    pub const fn words(pairs: usize) -> usize {
        FIRST + ENTRY * pairs
    }
}

/// The order scan's result words (`u64`): what it saw, how many descents,
/// where the runs after them start.
///
/// ```
/// use warpsort_kernels::config::{ORDER_SCAN_DESCENTS, order_scan};
/// assert_eq!(order_scan::WORDS, order_scan::STARTS + ORDER_SCAN_DESCENTS);
/// ```
pub mod order_scan {
    /// Word of the flags below.
    pub const FLAGS: usize = 0;
    /// Word of the count of descents.
    pub const COUNT: usize = 1;
    /// First word of the runs' starts.
    pub const STARTS: usize = 2;
    /// Words in all.
    pub const WORDS: usize = STARTS + super::ORDER_SCAN_DESCENTS;
    /// Some `key(i) < key(i + 1)`.
    pub const ASCENT: u32 = 1;
    /// Some `key(i) > key(i + 1)`.
    pub const DESCENT: u32 = 2;
    /// Some `key(i) == key(i + 1)`.
    pub const EQUAL: u32 = 4;

    /// Whether the words `flags` and `count` prove the input unordered
    /// whatever order its equal keys must keep: an ascent and more descents
    /// than listed (a full sort follows). The sample sort's first sampling,
    /// queued behind the scan before the host reads its words, runs only
    /// then.
    ///
    /// ```
    /// use warpsort_kernels::config::{ORDER_SCAN_DESCENTS, order_scan};
    /// let many = ORDER_SCAN_DESCENTS as u64 + 1;
    /// assert!(order_scan::unordered((order_scan::ASCENT | order_scan::DESCENT) as u64, many));
    /// assert!(!order_scan::unordered(order_scan::DESCENT as u64, many)); // descending: a reversal
    /// assert!(!order_scan::unordered((order_scan::ASCENT | order_scan::DESCENT) as u64, many - 1)); // runs
    /// ```
    pub const fn unordered(flags: u64, count: u64) -> bool {
        flags & ASCENT as u64 != 0 && count > super::ORDER_SCAN_DESCENTS as u64
    }

    /// The words the scan writes for `keys` when no warp stops early (every
    /// descent counted, the first [`ORDER_SCAN_DESCENTS`](super::ORDER_SCAN_DESCENTS)
    /// runs' starts listed in order): the CPU reference the host's and the
    /// emulator's tests check the kernel against.
    ///
    /// ```
    /// use warpsort_kernels::config::order_scan::{self, reference};
    /// let w = reference(&[3u32, 4, 4, 1, 2]);
    /// assert_eq!(w[order_scan::FLAGS], (order_scan::ASCENT | order_scan::EQUAL | order_scan::DESCENT) as u64);
    /// assert_eq!((w[order_scan::COUNT], w[order_scan::STARTS]), (1, 3));
    /// ```
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn reference<K: PartialOrd>(keys: &[K]) -> [u64; WORDS] {
        let mut w = [0u64; WORDS];
        for (i, p) in keys.windows(2).enumerate() {
            let flag = if p[0] > p[1] {
                let c = w[COUNT] as usize;
                if c < super::ORDER_SCAN_DESCENTS {
                    w[STARTS + c] = (i + 1) as u64;
                }
                w[COUNT] += 1;
                DESCENT
            } else if p[0] < p[1] {
                ASCENT
            } else {
                EQUAL
            };
            w[FLAGS] |= flag as u64;
        }
        w
    }
}

/// Bytes of one item of a user's key type (`warpsort_key::Order`) in
/// registers and shared memory: the device's `Pair<Custom<T>, V>`, where
/// `Custom<T>` is the key and a 4-byte pad flag (`#[repr(C)]`), and `V` the
/// payload of `val_bytes` (0, 4 or 8). The host sizes shared memory by it;
/// the device asserts at compile time that its types have this size.
///
/// ```
/// use warpsort_kernels::config::custom_item_bytes;
/// assert_eq!(custom_item_bytes(8, 4, 0), 12); // two u32 fields and the flag
/// assert_eq!(custom_item_bytes(8, 4, 8), 24); // with a u64 payload
/// assert_eq!(custom_item_bytes(16, 8, 4), 32);
/// ```
pub const fn custom_item_bytes(key_bytes: usize, key_align: usize, val_bytes: usize) -> usize {
    let key_align = if key_align > 4 { key_align } else { 4 };
    let key = (key_bytes + 4).next_multiple_of(key_align);
    let align = if val_bytes > key_align { val_bytes } else { key_align };
    (key + val_bytes).next_multiple_of(align)
}

/// Whether the segmented kernels sort items of `item_bytes` as compact
/// words where their segments' spans allow (`span::Words`): items of 8
/// bytes (`u32` keys with 4-byte payloads, `u64` keys alone), whose network
/// then moves half of what theirs does. `u32` keys alone are such words
/// already; wider items' kernels spilled with them.
///
/// ```
/// use warpsort_kernels::config::compact_words;
/// assert!(compact_words(8) && !compact_words(4) && !compact_words(16));
/// ```
pub const fn compact_words(item_bytes: u32) -> bool {
    item_bytes > 4 && item_bytes <= 8
}

/// The sample sort's distribution passes (`distribute`): how many ways one
/// pass splits a segment (`WAYS - 1` splitters), its buckets (each way
/// twice: keys strictly between two splitters, and keys equal to the
/// splitter above, an equality bucket that needs no sorting), samples per
/// way, and threads of its kernels.
///
/// ```
/// use warpsort_kernels::config::distribute::*;
/// assert_eq!(BUCKETS, 2 * WAYS);
/// assert!(MIN_OVERSAMPLE.is_power_of_two() && MAX_OVERSAMPLE.is_power_of_two() && MIN_OVERSAMPLE <= MAX_OVERSAMPLE);
/// // Keys, then the per-bucket counters (u32) and a spare one, then the
/// // splitters' directory.
/// assert_eq!(count_smem_bytes(4), 4 * WAYS + 4 * (BUCKETS + 1) + 2 * DIRECTORY_CELLS + (DIRECTORY_CELLS + 4) + 4);
/// ```
pub mod distribute {
    /// Ways a pass splits a segment: a power of two. Two passes make
    /// `WAYS^2` buckets between splitters: 1024 keys on average at 2^26,
    /// so that few pass the segmented sort's block of 8192 (longer
    /// buckets go to the merge sort one by one).
    pub const WAYS: u32 = 256;
    /// `log2(WAYS)`: levels of the classification's search tree.
    pub const LOG_WAYS: u32 = 8;
    /// Buckets a pass makes of a segment: bucket `2i` holds the keys
    /// strictly between splitters `i - 1` and `i`, bucket `2i + 1` the keys
    /// equal to splitter `i` (the last, `2 * WAYS - 1`, stays empty).
    pub const BUCKETS: u32 = 2 * WAYS;
    /// Samples per way, the fewest: a pass's buckets differ by about
    /// `1 / sqrt(oversample)` of their share.
    pub const MIN_OVERSAMPLE: u32 = 4;
    /// Samples per way, the most: the samples of one segment are sorted by
    /// one block of at most [`MAX_SAMPLE_THREADS`], [`SAMPLE_ITEMS`] each,
    /// in two rounds past what it holds at once.
    pub const MAX_OVERSAMPLE: u32 = 2 * MAX_SAMPLE_THREADS * SAMPLE_ITEMS / WAYS;
    /// Shared bytes of the sampling kernel: `WAYS * oversample` keys.
    pub const fn sample_smem_bytes(key_bytes: u32, oversample: u32) -> u32 {
        WAYS * oversample * key_bytes
    }
    /// Samples a thread of the sampling kernel holds in its registers:
    /// eight, so that its network fits the 64 registers of a 1024-thread
    /// block (16 `u32` keys spilled 140 bytes).
    pub const SAMPLE_ITEMS: u32 = 8;
    /// Threads of the sampling kernel's block: a thread per
    /// [`SAMPLE_ITEMS`] samples, at most [`MAX_SAMPLE_THREADS`] (which
    /// then sort them in two rounds).
    ///
    /// ```
    /// use warpsort_kernels::config::distribute::*;
    /// assert_eq!(sample_threads(MIN_OVERSAMPLE), 128);
    /// assert_eq!(sample_threads(MAX_OVERSAMPLE / 2), MAX_SAMPLE_THREADS);
    /// assert_eq!(sample_threads(MAX_OVERSAMPLE), MAX_SAMPLE_THREADS);
    /// ```
    pub const fn sample_threads(oversample: u32) -> u32 {
        let threads = WAYS * oversample / SAMPLE_ITEMS;
        if threads < MAX_SAMPLE_THREADS { threads } else { MAX_SAMPLE_THREADS }
    }
    /// The most threads of a sampling block (its launch bound): 8192
    /// samples at once.
    pub const MAX_SAMPLE_THREADS: u32 = 1024;
    /// Threads of the sampling, counting and scatter kernels.
    pub const THREADS: u32 = 256;
    /// Threads of a block of the counts' scan (`distribute::scan_counts`).
    pub const SCAN_THREADS: u32 = 256;
    /// Counts a thread of that scan takes (a round of 32 a warp at a time).
    pub const SCAN_ITEMS: u32 = 16;
    /// Counts a block of that scan takes: its part.
    pub const SCAN_PART: u32 = SCAN_THREADS * SCAN_ITEMS;
    /// Shared bytes of that block of `threads`: a word a warp, the part's
    /// first start and its ticket.
    pub const fn scan_smem_bytes(threads: u32) -> u32 {
        8 * (threads / crate::config::WARP_SIZE + 2)
    }
    /// Threads of the one block that makes the second pass's tables
    /// (`distribute::tables`): a segment each.
    pub const TABLES_THREADS: u32 = BUCKETS;
    /// Shared bytes of that block of `threads`: a `u64` a thread for its
    /// scan, then each segment's blocks (`u32`) and their scan (`u64`).
    pub const fn tables_smem_bytes(threads: u32) -> u32 {
        8 * threads + 4 * BUCKETS + 8 * BUCKETS
    }

    /// Cells of a segment's splitters' directory (`distribute::Directory`):
    /// a power of two, four a way, so that spread splitters leave one or two
    /// in a cell.
    pub const DIRECTORY_CELLS: u32 = 1 << LOG_DIRECTORY_CELLS;
    /// `log2(DIRECTORY_CELLS)`.
    pub const LOG_DIRECTORY_CELLS: u32 = LOG_WAYS + 2;

    /// Where the counting kernel's shared regions start (bytes past the
    /// splitters; `distribute::count` reads them): a `u32` counter per
    /// bucket and a spare one (for the slots of a tile past the chunk), the
    /// directory's entries (`u16`), the splitters below each cell and past
    /// the last (a byte each), the widest cell (`u32`), and the end.
    ///
    /// ```
    /// use warpsort_kernels::config::distribute::*;
    /// let at = count_regions();
    /// assert_eq!(at[1] - at[0], 4 * (BUCKETS + 1));
    /// assert_eq!(at[3] % 4, 0, "the widest cell a whole word");
    /// ```
    pub const fn count_regions() -> [u32; 5] {
        region_starts([4 * (BUCKETS + 1), 2 * DIRECTORY_CELLS, (DIRECTORY_CELLS + 1).next_multiple_of(4), 4])
    }

    /// Where consecutive regions of `sizes` bytes start (`M = N + 1`: the
    /// last entry is where they end).
    const fn region_starts<const N: usize, const M: usize>(sizes: [u32; N]) -> [u32; M] {
        assert!(M == N + 1);
        let mut at = [0; M];
        let mut i = 0;
        while i < N {
            at[i + 1] = at[i] + sizes[i];
            i += 1;
        }
        at
    }

    /// Shared bytes of the counting kernel: the splitters (`WAYS` keys of
    /// `key_bytes`, the last a pad), then its [`count_regions`].
    pub const fn count_smem_bytes(key_bytes: u32) -> u32 {
        splitters_bytes(key_bytes) + count_regions()[4]
    }

    /// Keys a thread of the counting kernel classifies at once (their
    /// searches overlap).
    pub const COUNT_ITEMS: u32 = 4;
    /// Counting blocks of `u32` and of `u64` keys a multiprocessor holds at
    /// once: their registers are bounded to fit (`LAUNCH_BOUNDS`), so that
    /// enough warps keep loads in flight.
    pub const COUNT_BLOCKS_PER_SM: [u32; 2] = [4, 2];

    /// Keys a thread of the scatter holds, with values or without: a block
    /// moves its chunk a tile of `THREADS * SCATTER_ITEMS` keys at a time
    /// (CUB's onesweep takes 15 a thread). Longer tiles leave each bucket's
    /// keys in longer runs.
    pub const SCATTER_ITEMS: u32 = 16;
    /// Keys of a scatter tile.
    pub const SCATTER_TILE: u32 = THREADS * SCATTER_ITEMS;
    /// Scatter blocks of `u32` and of `u64` keys alone a multiprocessor
    /// holds at once: their registers are bounded to fit (`LAUNCH_BOUNDS`;
    /// their shared memory, `scatter_smem_bytes`, allows four on sm_80 and
    /// later). `u64` keys take two: held to three (80 registers) they
    /// measured slower (`docs/PERFORMANCE.md`).
    pub const SCATTER_BLOCKS_PER_SM: [u32; 2] = [4, 2];
    /// Scatter blocks of any keys with values a multiprocessor holds at
    /// once (as [`SCATTER_BLOCKS_PER_SM`]; a tile of keys and values in
    /// registers needs more than 64 a thread, and three blocks at 80
    /// measured slower than two).
    pub const SCATTER_PAIRS_BLOCKS_PER_SM: u32 = 2;

    /// Where the scatter kernel's shared regions start (bytes past the
    /// splitters; `distribute::ScatterSmem` reads them), `with_values` or
    /// not: per bucket a `u32` output cursor, a `u32` tile start, a `u32`
    /// shift from tile to output and a `u32` tile count (output places are
    /// below 2^32: the sample sort takes at most `u32::MAX` items), a `u32`
    /// per warp for the scan, a `u32` count per warp and bucket (the stable
    /// scatter's, with values), a `u16` bucket per tile slot, then the
    /// tile's keys (then its values) in bucket order.
    ///
    /// ```
    /// use warpsort_kernels::config::distribute::*;
    /// let (alone, with) = (scatter_regions(false), scatter_regions(true));
    /// assert_eq!(alone[6], alone[5], "no warp counts for keys alone");
    /// assert_eq!(with[7] - with[6], 2 * SCATTER_TILE);
    /// ```
    pub const fn scatter_regions(with_values: bool) -> [u32; 8] {
        let warps = THREADS / super::WARP_SIZE;
        let sizes = [
            4 * BUCKETS,
            4 * BUCKETS,
            4 * BUCKETS,
            4 * BUCKETS,
            4 * warps,
            if with_values { 4 * warps * BUCKETS } else { 0 },
            2 * SCATTER_TILE,
        ];
        let at: [u32; 8] = region_starts(sizes);
        assert!(at[7].is_multiple_of(8), "the tile's items 8-byte aligned");
        at
    }

    /// Whether the scatter keeps a tile's values beside its keys (a tile of
    /// each, written out together) rather than in the keys' tile after them:
    /// items of at most 8 bytes, so that a block of the widest items fits
    /// the 98,304 bytes of shared memory an sm_70 block may have.
    ///
    /// ```
    /// use warpsort_kernels::config::distribute::*;
    /// assert!(values_beside_keys(4, 4) && !values_beside_keys(4, 8));
    /// for (k, v) in [(4, 0), (8, 0), (4, 4), (4, 8), (8, 4), (8, 8)] {
    ///     assert!(scatter_smem_bytes(k, v) <= 98_304, "{k} + {v} bytes");
    /// }
    /// ```
    pub const fn values_beside_keys(key_bytes: u32, val_bytes: u32) -> bool {
        val_bytes > 0 && key_bytes + val_bytes <= 8
    }

    /// Shared bytes of the scatter kernel of keys of `key_bytes` with
    /// values of `val_bytes` (0: keys alone): the splitters, then the
    /// [`scatter_regions`], the last the tile of keys, then the tile of
    /// values where they lie beside the keys ([`values_beside_keys`]; else
    /// the one tile holds the wider of keys and values).
    pub const fn scatter_smem_bytes(key_bytes: u32, val_bytes: u32) -> u32 {
        let with_values = val_bytes > 0;
        let tile = if values_beside_keys(key_bytes, val_bytes) {
            key_bytes + val_bytes
        } else if key_bytes > val_bytes {
            key_bytes
        } else {
            val_bytes
        };
        splitters_bytes(key_bytes) + scatter_regions(with_values)[7] + tile * SCATTER_TILE
    }

    /// Where the first pass's splitters lie in the sample sort's splitters
    /// (keys from the start): past the second pass's, `WAYS` for each of
    /// its `BUCKETS` segments, so that both are there once the passes ran
    /// (`distribute::bucket_spans` reads both).
    pub const FIRST_PASS_SPLITTERS: u32 = BUCKETS * WAYS;
    /// Keys of the sample sort's splitters: both passes'.
    pub const SPLITTER_KEYS: u32 = FIRST_PASS_SPLITTERS + WAYS;
    /// The final buckets of the two passes: `BUCKETS` of each of the second
    /// pass's `BUCKETS` segments.
    pub const FINAL_BUCKETS: u32 = BUCKETS * BUCKETS;

    /// Shared bytes of the splitters, rounded up to 8.
    pub const fn splitters_bytes(key_bytes: u32) -> u32 {
        (key_bytes * WAYS).div_ceil(8) * 8
    }

    /// What one block of a distribution pass counts and moves: keys
    /// `start..end` of segment `segment`, whose blocks are `first` to
    /// `first + count - 1`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct BlockWork {
        /// The chunk's first key.
        pub start: u64,
        /// Past its last key.
        pub end: u64,
        /// Its segment.
        pub segment: u32,
        /// The segment's first block.
        pub first: u32,
        /// The segment's blocks.
        pub count: u32,
        /// Unused (16-byte size).
        pub pad: u32,
    }

    /// A segment of a distribution pass: keys `start..end`, cut into the
    /// chunks of blocks `first` to `first + count - 1` (none when empty).
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct SegmentWork {
        /// The segment's first key.
        pub start: u64,
        /// Past its last key.
        pub end: u64,
        /// Its first block.
        pub first: u32,
        /// Its blocks.
        pub count: u32,
    }

    const _: () = assert!(size_of::<BlockWork>() == 32 && size_of::<SegmentWork>() == 24);

    impl SegmentWork {
        /// Keys `start..end` cut into chunks of `chunk` keys, its blocks from
        /// `first` on: the one place a segment's blocks are counted (the
        /// host's [`segments`], the device's second-pass tables and the
        /// first sampling's).
        ///
        /// ```
        /// use warpsort_kernels::config::distribute::SegmentWork;
        /// assert_eq!(SegmentWork::new(5, 14, 2, 4).count, 3);
        /// ```
        #[inline(always)]
        pub fn new(start: u64, end: u64, first: u32, chunk: u64) -> Self {
            SegmentWork { start, end, first, count: (end - start).div_ceil(chunk) as u32 }
        }

        /// Block `b` of the segment's (from 0), segment number `segment`: its
        /// chunk, the one place a block's entry is made (as for
        /// [`SegmentWork::new`]).
        ///
        /// ```
        /// use warpsort_kernels::config::distribute::SegmentWork;
        /// let w = SegmentWork::new(5, 14, 2, 4).block(7, 2, 4);
        /// assert_eq!((w.start, w.end, w.segment, w.first, w.count), (13, 14, 7, 2, 3));
        /// ```
        #[inline(always)]
        pub fn block(&self, segment: u32, b: u64, chunk: u64) -> BlockWork {
            let start = self.start + b * chunk;
            BlockWork {
                start,
                end: (start + chunk).min(self.end),
                segment,
                first: self.first,
                count: self.count,
                pad: 0,
            }
        }
    }

    /// The blocks of a pass over `segments` (key ranges, in order), each a
    /// chunk of at most `chunk` keys of one segment.
    ///
    /// ```
    /// use warpsort_kernels::config::distribute::blocks;
    /// let b: Vec<_> = blocks(&[(0, 5), (5, 5), (5, 9)], 4).collect();
    /// assert_eq!(b.iter().map(|w| (w.start, w.end, w.segment, w.first, w.count)).collect::<Vec<_>>(),
    ///            [(0, 4, 0, 0, 2), (4, 5, 0, 0, 2), (5, 9, 2, 2, 1)]);
    /// ```
    pub fn blocks(segments: &[(u64, u64)], chunk: u64) -> impl Iterator<Item = BlockWork> + '_ {
        let firsts = self::segments(segments, chunk);
        firsts.enumerate().flat_map(move |(s, seg)| (0..seg.count as u64).map(move |b| seg.block(s as u32, b, chunk)))
    }

    /// The segments of a pass over `segments` (key ranges, in order), with
    /// their blocks as [`blocks`] numbers them.
    ///
    /// ```
    /// use warpsort_kernels::config::distribute::segments;
    /// let s: Vec<_> = segments(&[(0, 5), (5, 5), (5, 9)], 4).map(|s| (s.first, s.count)).collect();
    /// assert_eq!(s, [(0, 2), (2, 0), (2, 1)]);
    /// ```
    pub fn segments(segments: &[(u64, u64)], chunk: u64) -> impl Iterator<Item = SegmentWork> + '_ {
        segments.iter().scan(0u32, move |first, &(start, end)| {
            let seg = SegmentWork::new(start, end, *first, chunk);
            *first += seg.count;
            Some(seg)
        })
    }
}
