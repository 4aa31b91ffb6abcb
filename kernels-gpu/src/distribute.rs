//! The sample sort's distribution pass: each segment of the input (the whole
//! input, or each bucket of an earlier pass) is cut into
//! [`BUCKETS`](crate::config::distribute::BUCKETS) buckets by `WAYS - 1`
//! splitters sampled from it, every key moved to its bucket in one scatter:
//!
//! 1. [`sample_splitters`]: a block per segment sorts `WAYS * oversample`
//!    keys drawn one from each of as many equal strata (at a hashed place
//!    in each, so neither sorted nor periodic input fools it) and keeps
//!    every `oversample`-th (more samples where buckets would be long);
//! 2. [`count`]: a block per chunk of a segment ([`BlockWork`]) classifies
//!    its keys against the segment's splitters in shared memory (a key's
//!    cell of their [`directory`] gives the splitters below it, a short
//!    search the rest; several keys at once: [`classify_all`]) and counts them
//!    per bucket; the counts are stored bucket-major within the segment, so
//!    that one exclusive scan of all of them gives every (block, bucket) its
//!    first output position ([`scan_counts`]: one pass, a decoupled
//!    look-back between its blocks);
//!    each key's label (the splitters below it) is stored, a byte a key;
//! 3. [`scatter`]: the block takes its keys' buckets from their labels (one
//!    comparison: [`bucket_of_label`]), a tile at a time, ranks each among
//!    its bucket's keys, puts the tile in bucket order in shared memory and
//!    writes it out in runs: with values the pass is stable, so keys equal
//!    to a splitter keep their input order (keys alone need no order among
//!    equal keys);
//! 4. [`bucket_offsets`]: where each bucket of each segment starts, for the
//!    next pass or the segmented sort that finishes the buckets.
//!
//! Keys equal to a splitter go to that splitter's equality bucket, so no
//! run of equal keys makes a bucket large: however skewed the input, a
//! bucket between two splitters holds about its share of the segment (the
//! sampling's error: buckets of one pass differ by about
//! `1 / sqrt(oversample)`), and an equality bucket is sorted already. Keys
//! are ordered patterns (`u32` or `u64`): each kernel applies its
//! [`Encoding`] to every key it reads, so that the first pass reads keys
//! as stored (a float, a tuple in its word) and writes ordered words.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::arch::{
    agree, all, ballot, block_dim, block_idx, dynamic_smem, global_thread, grid_threads, lane_id, shfl_bfly,
    shfl_idx, sync_block, sync_warp, thread_idx,
};
use crate::block_network::Block;
use crate::encode::Encoding;
use crate::warp;
use crate::item::{Key, Pair};
#[cfg(target_arch = "nvptx64")]
use crate::{encode::Plain, ordered::View};
use crate::config::WARP_SIZE;
#[cfg(target_arch = "nvptx64")]
use crate::config::order_scan;
use crate::config::distribute::{
    BUCKETS, BlockWork, COUNT_ITEMS, DIRECTORY_CELLS, FINAL_BUCKETS, FIRST_PASS_SPLITTERS, LOG_DIRECTORY_CELLS, LOG_WAYS,
    SCAN_ITEMS, SCATTER_ITEMS, SCATTER_TILE, SegmentWork, WAYS, count_regions, scatter_regions, splitters_bytes,
    values_beside_keys,
};
use crate::span::SpanKey;

/// The bucket of `k` given its label, the number of splitters below it
/// (what [`count`] stores): `2 * label`, or `2 * label + 1` when `k` equals
/// the splitter at `label`. `sorted` holds the segment's splitters in order
/// and a pad past them equal to the last: a key above every splitter has
/// label `WAYS - 1` and is above the pad too (no branch).
///
/// ```
/// use warpsort_kernels::distribute::bucket_of_label;
/// let sorted = [10u32, 20, 20, 30, 30]; // (five ways: WAYS is larger)
/// let bucket = |label, k| unsafe { bucket_of_label(sorted.as_ptr(), label, k) };
/// assert_eq!((bucket(0, 5), bucket(0, 10), bucket(1, 15), bucket(1, 20), bucket(3, 30)), (0, 1, 2, 3, 7));
/// assert_eq!(bucket(4, 31), 8, "above every splitter, and the pad");
/// ```
///
/// # Safety
/// `sorted` holds `WAYS` keys; `label` is `k`'s among them.
#[inline(always)]
pub unsafe fn bucket_of_label<T: Copy + PartialEq>(sorted: *const T, label: u32, k: T) -> u32 {
    // SAFETY: label < WAYS.
    2 * label + (unsafe { *sorted.add(label as usize) } == k) as u32
}

/// A key word the distribution classifies (`u32`, `u64`: ordered words),
/// as far as the splitters' [`Directory`] needs: how far a key lies above
/// a segment's least splitter, in cells.
///
/// ```
/// use warpsort_kernels::distribute::CellWord;
/// assert_eq!(u32::span_bits(100, 100 + 4095), 12);
/// assert_eq!((5u32.cell(100, 2, 1023), 107u32.cell(100, 2, 1023), u32::MAX.cell(100, 2, 1023)), (0, 1, 1023));
/// ```
pub trait CellWord: Copy + PartialOrd + Default {
    /// The bits of `hi - lo` (`lo <= hi`; 0 when they are equal).
    fn span_bits(lo: Self, hi: Self) -> u32;
    /// `(self - lo) >> shift`, 0 for a key below `lo`, at most `last`.
    fn cell(self, lo: Self, shift: u32, last: u32) -> u32;
}

macro_rules! cell_word {
    ($t:ty) => {
        impl CellWord for $t {
            #[inline(always)]
            fn span_bits(lo: Self, hi: Self) -> u32 {
                <$t>::BITS - (hi - lo).leading_zeros()
            }
            #[inline(always)]
            fn cell(self, lo: Self, shift: u32, last: u32) -> u32 {
                (self.saturating_sub(lo) >> shift).min(last as $t) as u32
            }
        }
    };
}
cell_word!(u32);
cell_word!(u64);

/// A segment's splitters' directory, the way [`classify_all`] finds a key's
/// bucket: the keys from the least splitter `lo` on are cut into
/// [`DIRECTORY_CELLS`] cells of `2^shift` keys (the first cell takes every
/// key below `lo` too, the last every key above), `shift` the fewest bits
/// that leave the greatest splitter in the last cell. A cell's entry holds
/// the splitters below it (a byte) and those within it (a byte above): the
/// key's label is the first plus those of its cell below it, a binary search
/// of `depth` steps, the most any cell of the segment needs (a block's
/// searches stay in step). Spread splitters leave one or two in a cell
/// (`depth` 1 or 2, where a search of all `WAYS - 1` takes `LOG_WAYS`);
/// splitters of few distinct values crowd one cell, and `depth` grows back
/// to `LOG_WAYS`.
///
/// ```
/// use warpsort_kernels::distribute::{Directory, directory_of};
/// use warpsort_kernels::config::distribute::{DIRECTORY_CELLS, WAYS};
/// // Evenly spread splitters, 2^24 apart: cells of 2^22 keys.
/// let sorted: Vec<u32> = (1..=WAYS).map(|i| (i << 24).min((WAYS - 1) << 24)).collect();
/// let (d, entries) = directory_of(&sorted);
/// assert_eq!(d, Directory { shift: 22, depth: 1 });
/// assert_eq!(entries[4], 1 | 1 << 8, "one splitter below cell 4 (1 << 24), one in it (2 << 24)");
/// // All splitters equal: one cell holds them all.
/// let (d, entries) = directory_of(&[7u64; WAYS as usize]);
/// assert_eq!((d.depth, entries[0], entries[DIRECTORY_CELLS as usize - 1]), (8, 255 << 8, 255));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Directory {
    /// Keys a cell spans: `2^shift`.
    pub shift: u32,
    /// Steps of the search within a cell: the bits of the most splitters
    /// a cell holds.
    pub depth: u32,
}

impl Directory {
    /// The directory's `shift` for splitters `sorted` (`WAYS` keys).
    ///
    /// # Safety
    /// `sorted` holds `WAYS` keys in order.
    #[inline(always)]
    unsafe fn shift<T: CellWord>(sorted: *const T) -> (T, u32) {
        // SAFETY: WAYS keys.
        let (lo, hi) = unsafe { (*sorted, *sorted.add(WAYS as usize - 2)) };
        (lo, T::span_bits(lo, hi).saturating_sub(LOG_DIRECTORY_CELLS))
    }

    /// The splitters below cell `c` (`c <= DIRECTORY_CELLS`): those of an
    /// earlier cell, found by a binary search.
    ///
    /// # Safety
    /// `sorted` holds `WAYS` keys in order; `lo` and `shift` are theirs.
    #[inline(always)]
    unsafe fn below_cell<T: CellWord>(sorted: *const T, lo: T, shift: u32, c: u32) -> u32 {
        let (last, mut below, mut step) = (DIRECTORY_CELLS - 1, 0u32, WAYS / 2);
        while step > 0 {
            // below + step <= WAYS - 1: the steps sum to WAYS - 1.
            // SAFETY: below + step - 1 < WAYS - 1.
            let s = unsafe { *sorted.add((below + step - 1) as usize) };
            if s.cell(lo, shift, last) < c {
                below += step;
            }
            step /= 2;
        }
        below
    }

    /// The steps that search `within` splitters: its bits.
    #[inline(always)]
    const fn depth(within: u32) -> u32 {
        32 - within.leading_zeros()
    }
}

/// The directory of the splitters `sorted` (`WAYS` keys in order, the last a
/// pad) made on the host, as [`directory`] makes it in a block: its shape
/// and entries (tests and examples).
pub fn directory_of<T: CellWord>(sorted: &[T]) -> (Directory, [u16; DIRECTORY_CELLS as usize]) {
    assert_eq!(sorted.len(), WAYS as usize);
    let p = sorted.as_ptr();
    // SAFETY: WAYS keys in order.
    let (lo, shift) = unsafe { Directory::shift(p) };
    // SAFETY: as above.
    let below = |c| if c == DIRECTORY_CELLS { WAYS - 1 } else { unsafe { Directory::below_cell(p, lo, shift, c) } };
    let mut entries = [0u16; DIRECTORY_CELLS as usize];
    let mut widest = 0;
    for (c, e) in (0..DIRECTORY_CELLS).zip(entries.iter_mut()) {
        let (first, within) = (below(c), below(c + 1) - below(c));
        *e = (first | within << 8) as u16;
        widest = widest.max(within);
    }
    (Directory { shift, depth: Directory::depth(widest) }, entries)
}

/// The block makes the directory of the splitters at `sorted` (in shared
/// memory, loaded) at `entries`: each thread finds the splitters below its
/// cells (`firsts`, a byte a cell and one past), then packs each cell's
/// entry and the warp's widest cell meets the block's at `widest`.
///
/// # Safety
/// `sorted` holds `WAYS` keys in order, the last a pad; `firsts` room for
/// `DIRECTORY_CELLS + 1` bytes, `entries` for `DIRECTORY_CELLS` entries,
/// `widest` a `u32`, none of them shared with other data; the whole block
/// (whole warps) calls it, past a barrier after the splitters' loads.
#[inline(always)]
pub unsafe fn directory<T: CellWord>(sorted: *const T, firsts: *mut u8, entries: *mut u16, widest: *mut u32) -> Directory {
    let (t, threads) = (thread_idx(), block_dim());
    // SAFETY: WAYS keys in order.
    let (lo, shift) = unsafe { Directory::shift(sorted) };
    let mut c = t;
    while c <= DIRECTORY_CELLS {
        let first = if c == DIRECTORY_CELLS {
            WAYS - 1
        } else {
            // SAFETY: as above.
            unsafe { Directory::below_cell(sorted, lo, shift, c) }
        };
        // SAFETY: c <= DIRECTORY_CELLS; a label fits a byte (LOG_WAYS <= 8).
        unsafe { *firsts.add(c as usize) = first as u8 };
        c += threads;
    }
    if t == 0 {
        // SAFETY: the block's word.
        unsafe { *widest = 0 };
    }
    sync_block();
    let mut wide = 0;
    let mut c = t;
    while c < DIRECTORY_CELLS {
        // SAFETY: c + 1 <= DIRECTORY_CELLS.
        let (first, next) = unsafe { (*firsts.add(c as usize) as u32, *firsts.add(c as usize + 1) as u32) };
        // SAFETY: c < DIRECTORY_CELLS.
        unsafe { *entries.add(c as usize) = (first | (next - first) << 8) as u16 };
        wide = wide.max(next - first);
        c += threads;
    }
    let mut d = 1;
    while d < WARP_SIZE {
        wide = wide.max(shfl_bfly(wide, d));
        d *= 2;
    }
    if lane_id() == 0 {
        // SAFETY: the block's word.
        unsafe { AtomicU32::from_ptr(widest) }.fetch_max(wide, Relaxed);
    }
    sync_block();
    // SAFETY: as above.
    Directory { shift, depth: Directory::depth(unsafe { *widest }) }
}

/// The buckets of `N` keys among a segment's splitters (`sorted`, with its
/// [`Directory`] `d` and `entries`): `2i` for `s[i - 1] < k < s[i]`,
/// `2i + 1` for `k == s[i]`, where `i` counts the splitters below `k`.
/// Each key's cell gives the splitters below it and those within it; a
/// binary search of `d.depth` steps counts those of the cell below the key,
/// the `N` searches a step at a time together so that their shared loads
/// overlap; then the equality test, one load ([`bucket_of_label`]).
///
/// ```
/// use warpsort_kernels::distribute::{classify_all, directory_of};
/// use warpsort_kernels::config::distribute::WAYS;
/// let sorted: Vec<u32> = (0..WAYS).map(|i| 10 * i.min(WAYS - 2)).collect();
/// let (d, entries) = directory_of(&sorted);
/// // SAFETY: WAYS splitters in order, the last a pad, and their directory.
/// let got = unsafe { classify_all(sorted.as_ptr(), entries.as_ptr(), d, &[0, 5, 10, 2540, 9999]) };
/// assert_eq!(got, [1, 2, 3, 2 * 254 + 1, 2 * 255]);
/// ```
///
/// # Safety
/// `sorted` holds `WAYS` keys in order, the last a pad equal to the one
/// before; `entries` and `d` their directory.
#[inline(always)]
pub unsafe fn classify_all<T: CellWord, const N: usize>(
    sorted: *const T,
    entries: *const u16,
    d: Directory,
    k: &[T; N],
) -> [u32; N] {
    // SAFETY: WAYS keys.
    let lo = unsafe { *sorted };
    let mut below = [0u32; N];
    let mut end = [0u32; N];
    for r in 0..N {
        let c = k[r].cell(lo, d.shift, DIRECTORY_CELLS - 1);
        // SAFETY: c < DIRECTORY_CELLS.
        let e = unsafe { *entries.add(c as usize) } as u32;
        (below[r], end[r]) = (e & 0xff, (e & 0xff) + (e >> 8));
    }
    let mut step = 1 << d.depth;
    for _ in 0..d.depth {
        step /= 2;
        for r in 0..N {
            // The searched splitter, clamped into the array (past `end` it
            // only decides nothing).
            let probe = below[r] + step;
            // SAFETY: probe - 1 < WAYS.
            let s = unsafe { *sorted.add((probe.min(WAYS) - 1) as usize) };
            if probe <= end[r] && s < k[r] {
                below[r] = probe;
            }
        }
    }
    let mut out = [0u32; N];
    for r in 0..N {
        // SAFETY: below[r] is the key's label, below WAYS.
        out[r] = unsafe { bucket_of_label(sorted, below[r], k[r]) };
    }
    out
}

/// A 32-bit hash of `x` (the sample's place in its stratum).
#[inline(always)]
fn mix(x: u32) -> u32 {
    let mut h = x.wrapping_mul(0x9e37_79b9);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^ (h >> 13)
}

/// The first pass's tables, made by its sampling (so that nothing goes up
/// from the host): one segment, keys `0..n`, cut into chunks of `chunk`
/// keys, written as [`segments`](crate::config::distribute::segments) and
/// [`blocks`](crate::config::distribute::blocks) make them on the host,
/// `blocks` by the block's threads in turn; returns the segment.
///
/// # Safety
/// `segments` holds an entry, `blocks` `n.div_ceil(chunk)`; `chunk > 0`.
#[inline(always)]
pub unsafe fn first_tables(n: u64, chunk: u64, segments: *mut SegmentWork, blocks: *mut BlockWork) -> SegmentWork {
    let seg = SegmentWork::new(0, n, 0, chunk);
    if thread_idx() == 0 {
        // SAFETY: one entry.
        unsafe { *segments = seg };
    }
    let mut b = thread_idx();
    while b < seg.count {
        // SAFETY: b < n.div_ceil(chunk) entries.
        unsafe { *blocks.add(b as usize) = seg.block(0, b as u64, chunk) };
        b += block_dim();
    }
    seg
}

/// Block `s` writes the `WAYS - 1` splitters of segment `s`, `seg`, at
/// `splitters + s * WAYS`: `WAYS * oversample` keys, one from each equal
/// stratum of the segment, `N` a thread straight into registers, sorted by
/// the block's bitonic network ([`Block::sort`]: in registers and by
/// shuffles within warps, through shared memory across them), every
/// `oversample`-th kept. Past what the block holds at once (its threads'
/// `N` each) it sorts two halves in turn, leaves each in order in shared
/// memory, and finds each splitter in their merge by a merge-path search
/// ([`kth_of_two`]). An empty segment writes none.
///
/// # Safety
/// `keys` holds every segment's keys, `seg` is segment `s`'s entry (the
/// kernels before this one complete: [`chain_launch`](crate::arch::chain_launch)),
/// `splitters` `WAYS` keys per segment; `oversample` is a power of two from
/// `MIN_OVERSAMPLE` to `MAX_OVERSAMPLE`; the block is
/// [`sample_threads(oversample)`](crate::config::distribute::sample_threads)
/// threads, a multiple of 32, `N` times which is all the samples or half,
/// and the shared memory holds `WAYS * oversample` keys
/// ([`sample_smem_bytes`](crate::config::distribute::sample_smem_bytes)).
#[inline(always)]
pub unsafe fn sample_splitters<T: Key, const N: usize>(
    keys: *const T,
    seg: SegmentWork,
    splitters: *mut T,
    oversample: u32,
    enc: impl Encoding<T>,
) {
    let s = block_idx() as usize;
    let len = seg.end - seg.start;
    if len == 0 {
        return; // the whole block
    }
    let samples = WAYS * oversample;
    // Samples the block sorts at once: all of them, or half.
    let run = block_dim() * N as u32;
    let (warp, lane) = (thread_idx() / WARP_SIZE, lane_id());
    // Register r of this thread holds sample `base + first + r` of the
    // round's run (lane-blocked, as the network wants).
    let first = (warp * WARP_SIZE + lane) * N as u32;
    let draw = |base: u32| -> [Pair<T, ()>; N] {
        core::array::from_fn(|r| {
            // Stratum j: [j * len / samples, (j + 1) * len / samples), or the
            // key at j * len / samples when the strata are empty.
            let j = base + first + r as u32;
            let lo = j as u64 * len / samples as u64;
            let hi = ((j as u64 + 1) * len / samples as u64).max(lo + 1);
            let at = lo + (mix(j ^ (s as u32).wrapping_mul(0x2c1b_3c6d)) as u64) % (hi - lo);
            // SAFETY: `at < len`.
            Pair { k: enc.apply(unsafe { *keys.add((seg.start + at) as usize) }), v: () }
        })
    };
    let smem = dynamic_smem::<Pair<T, ()>>();
    let out = |w: u32, k: T| {
        // SAFETY: w < WAYS - 1 slots of this segment's WAYS.
        unsafe { *splitters.add(s * WAYS as usize + w as usize) = k };
    };
    if run == samples {
        let mut x = draw(0);
        Block { smem, warp, lane }.sort(&mut x, run as usize, run as usize);
        for (r, &x) in x.iter().enumerate() {
            // Splitter w is sample (w + 1) * oversample.
            let j = first + r as u32;
            if j.is_multiple_of(oversample) && j > 0 && j / oversample < WAYS {
                out(j / oversample - 1, x.k);
            }
        }
        return;
    }
    for base in [0, run] {
        let mut x = draw(base);
        // SAFETY: the run's slots lie in the shared memory (2 * run samples).
        let at = unsafe { smem.add(base as usize) };
        Block { smem: at, warp, lane }.sort(&mut x, run as usize, run as usize);
        sync_block(); // every thread past the network's reads of the run's slots
        for (r, &x) in x.iter().enumerate() {
            // SAFETY: slot first + r < run of this run.
            unsafe { *at.add(first as usize + r) = x };
        }
    }
    sync_block();
    let mut w = thread_idx();
    while w < WAYS - 1 {
        // SAFETY: two sorted runs of `run` samples.
        out(w, unsafe { kth_of_two(smem, smem.add(run as usize), run, (w + 1) * oversample) });
        w += block_dim();
    }
}

/// The key at place `k` (from 0) of the merge of the sorted runs `a` and
/// `b` of `len` items each: the first `k + 1` items of the merge take `i`
/// of `a` and `k + 1 - i` of `b`, `i` found by the merge path's binary
/// search (an item of `a` before an equal one of `b`); the key is the larger
/// of the last taken from each.
///
/// ```
/// use warpsort_kernels::distribute::kth_of_two;
/// use warpsort_kernels::item::Pair;
/// let (a, b) = ([1u32, 3, 3, 8].map(|k| Pair { k, v: () }), [2u32, 3, 9, 9].map(|k| Pair { k, v: () }));
/// let merged = [1, 2, 3, 3, 3, 8, 9, 9];
/// for (k, &want) in merged.iter().enumerate() {
///     assert_eq!(unsafe { kth_of_two(a.as_ptr(), b.as_ptr(), 4, k as u32) }, want);
/// }
/// ```
///
/// # Safety
/// `a` and `b` hold `len` items each, in order; `k < 2 * len`.
#[inline(always)]
pub unsafe fn kth_of_two<T: Key>(a: *const Pair<T, ()>, b: *const Pair<T, ()>, len: u32, k: u32) -> T {
    let d = k + 1;
    let (mut lo, mut hi) = (d.saturating_sub(len), d.min(len));
    while lo < hi {
        let mid = (lo + hi) / 2;
        // SAFETY: mid < hi <= len; d - 1 - mid < len as lo >= d - len.
        if unsafe { (*a.add(mid as usize)).k <= (*b.add((d - 1 - mid) as usize)).k } {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let (i, j) = (lo, d - lo);
    // SAFETY: i <= len items of a, j <= len of b, one of them past 0.
    unsafe {
        match (i, j) {
            (0, _) => (*b.add(j as usize - 1)).k,
            (_, 0) => (*a.add(i as usize - 1)).k,
            _ => (*a.add(i as usize - 1)).k.max((*b.add(j as usize - 1)).k),
        }
    }
}

/// A scatter slot's bucket and its rank among that bucket's keys of the
/// warp, packed in one `u32`: the bucket above `RANK_BITS`, the rank below
/// (a warp ranks at most `WARP_SIZE * SCATTER_ITEMS` keys, `BUCKETS` fits
/// above).
struct Tag;

impl Tag {
    const RANK_BITS: u32 = 16;

    #[inline(always)]
    fn pack(bucket: u32, rank: u32) -> u32 {
        bucket << Self::RANK_BITS | rank
    }

    #[inline(always)]
    fn bucket(tag: u32) -> u32 {
        tag >> Self::RANK_BITS
    }

    #[inline(always)]
    fn rank(tag: u32) -> u32 {
        tag & ((1 << Self::RANK_BITS) - 1)
    }
}

const _: () = assert!(LOG_WAYS <= 8, "a key's label (the splitters below it) is one byte");
const _: () =
    assert!(WARP_SIZE * SCATTER_ITEMS < 1 << Tag::RANK_BITS && (BUCKETS as u64) << Tag::RANK_BITS <= u32::MAX as u64);

/// The start of [`count`] and [`scatter`]: the block's number and chunk
/// (`blocks[block_idx()]`), its segment's splitters loaded in order at the
/// start of the shared memory (a pad past them equal to the last:
/// [`bucket_of_label`]), and the shared memory past them (8-byte aligned);
/// `None` for a block past the pass's (an entry of no blocks: [`tables`]
/// sizes a grid for the most a pass can have).
///
/// # Safety
/// `blocks` holds one entry per block, `splitters` `WAYS` keys per segment;
/// the shared memory holds the splitters.
#[inline(always)]
unsafe fn block_start<T: Copy>(
    blocks: *const BlockWork,
    splitters: *const T,
) -> Option<(u32, BlockWork, *const T, *mut u8)> {
    let b = block_idx();
    // SAFETY: one entry per block.
    let w = unsafe { *blocks.add(b as usize) };
    if w.count == 0 {
        return None;
    }
    let sorted = dynamic_smem::<T>();
    let mut j = thread_idx();
    while j < WAYS {
        // SAFETY: j < WAYS slots; the segment's splitters, the last twice.
        unsafe { *sorted.add(j as usize) = *splitters.add((w.segment * WAYS + j.min(WAYS - 2)) as usize) };
        j += block_dim();
    }
    // SAFETY: the rest of the shared memory begins past the splitters.
    let rest = unsafe { dynamic_smem::<u8>().add(splitters_bytes(size_of::<T>() as u32) as usize) };
    Some((b, w, sorted, rest))
}

/// `f(j)` for every bucket, the block's threads in turn.
#[inline(always)]
fn for_each_bucket(mut f: impl FnMut(u32)) {
    let mut j = thread_idx();
    while j < BUCKETS {
        f(j);
        j += block_dim();
    }
}

/// Where block `b`'s count of bucket `j` goes among all blocks' counts:
/// bucket-major within the block's segment.
#[inline(always)]
pub fn count_slot(w: &BlockWork, b: u32, j: u32) -> usize {
    (w.first * BUCKETS + j * w.count + (b - w.first)) as usize
}

/// Block `b` counts the keys of its chunk (`blocks[b]`) per bucket of its
/// segment into `counts` (see [`count_slot`]): the block makes its
/// splitters' [`directory`], then classifies `COUNT_ITEMS` keys a thread at
/// a time together ([`classify_all`]) and counts them by shared atomics.
/// Unless `labels` is null, each key's label, the number of splitters below
/// it, goes there at the key's place, so that the [`scatter`] need not
/// search again ([`bucket_of_label`]). A block past the pass's (its entry
/// has no blocks) zeroes counts `b * BUCKETS` to `(b + 1) * BUCKETS`, which
/// lie past every other block's, so that the scan of all of them still sums
/// to the keys.
///
/// # Safety
/// `keys` (and `labels`) hold the chunks' keys (and a byte each), `blocks` one
/// entry per block, `splitters` `WAYS` keys per segment, `counts`
/// `BUCKETS` per block;
/// [`count_smem_bytes`](crate::config::distribute::count_smem_bytes) of
/// shared memory.
#[inline(always)]
pub unsafe fn count<T: CellWord>(
    keys: *const T,
    blocks: *const BlockWork,
    splitters: *const T,
    counts: *mut u32,
    labels: *mut u8,
    enc: impl Encoding<T>,
) {
    crate::arch::chain_launch();
    // SAFETY: the caller's contract; the counters follow the splitters.
    let Some((b, w, s, rest)) = (unsafe { block_start(blocks, splitters) }) else {
        let past = (block_idx() * BUCKETS) as usize;
        // SAFETY: BUCKETS counts per block.
        for_each_bucket(|j| unsafe { *counts.add(past + j as usize) = 0 });
        return;
    };
    let regions = count_regions();
    // SAFETY: the regions lie within count_smem_bytes past the splitters.
    let region = |i: usize| unsafe { rest.add(regions[i] as usize) };
    let (counters, entries, firsts, widest) =
        (region(0).cast::<u32>(), region(1).cast::<u16>(), region(2), region(3).cast::<u32>());
    // SAFETY: j < BUCKETS.
    for_each_bucket(|j| unsafe { *counters.add(j as usize) = 0 });
    sync_block();
    // SAFETY: the splitters are loaded, the regions the directory's alone.
    let d = unsafe { directory(s, firsts, entries, widest) };
    let (t, threads) = (thread_idx() as u64, block_dim() as u64);
    let mut at = w.start;
    while at < w.end {
        // Key r of the thread: at + r * threads + t (coalesced a slot at a time).
        let mut k = [T::default(); COUNT_ITEMS as usize];
        for (r, key) in k.iter_mut().enumerate() {
            let i = at + r as u64 * threads + t;
            if i < w.end {
                // SAFETY: i lies in the chunk.
                *key = unsafe { *keys.add(i as usize) };
            }
        }
        // Encoded once every load is out (an encoding beside its load would
        // wait for it before the next load goes).
        for key in k.iter_mut() {
            *key = enc.apply(*key);
        }
        // SAFETY: the splitters and their directory are made.
        let buckets = unsafe { classify_all(s, entries, d, &k) };
        for (r, &bucket) in buckets.iter().enumerate() {
            // A slot past the chunk counts into the spare counter (no
            // branch: every search runs ahead of its count).
            let i = at + r as u64 * threads + t;
            let counter = if i < w.end { bucket } else { BUCKETS };
            if i < w.end && !labels.is_null() {
                // SAFETY: i lies in the chunk; a label fits a byte (LOG_WAYS <= 8).
                unsafe { *labels.add(i as usize) = (bucket >> 1) as u8 };
            }
            // SAFETY: counter <= BUCKETS.
            unsafe { AtomicU32::from_ptr(counters.add(counter as usize)).fetch_add(1, Relaxed) };
        }
        at += COUNT_ITEMS as u64 * threads;
    }
    sync_block();
    // SAFETY: the slot lies in the block's segment's counts.
    for_each_bucket(|j| unsafe { *counts.add(count_slot(&w, b, j)) = *counters.add(j as usize) });
}

/// `starts[i]`, the sum of `counts[..i]`, for every `i <= m` (`starts[m]`
/// the total), in one pass: each block takes the next part of
/// [`SCAN_PART`] counts by a ticket (`state[0]`), scans it (each warp a run
/// of [`SCAN_ITEMS`] rounds of 32, by shuffles), and finds the sum of the
/// parts before it by a decoupled look-back over their states
/// (`state[1 + p]`: [`look_back`]), so that no block waits for more than
/// the parts still running before it.
///
/// # Safety
/// `counts` holds `m` values summing to less than 2^32, `starts` `m + 1`;
/// `state` `parts + 1` words, zero, where the grid is
/// `parts = max(1, ceil(m / SCAN_PART))` blocks of
/// [`SCAN_THREADS`](crate::config::distribute::SCAN_THREADS);
/// [`scan_smem_bytes`](crate::config::distribute::scan_smem_bytes) of
/// shared memory.
#[inline(always)]
pub unsafe fn scan_counts(counts: *const u32, starts: *mut u64, m: u64, state: *mut u64) {
    crate::arch::chain_launch();
    let (t, lane) = (thread_idx(), lane_id());
    let (warp, warps) = (t / WARP_SIZE, block_dim() / WARP_SIZE);
    let part_len = (block_dim() * SCAN_ITEMS) as u64;
    // Shared: each warp's total, then the part's first start, then the ticket.
    let smem = dynamic_smem::<u64>();
    if t == 0 {
        // SAFETY: state[0] is the ticket; the smem holds warps + 2 words.
        unsafe { *smem.add(warps as usize + 1) = AtomicU64::from_ptr(state).fetch_add(1, Relaxed) };
    }
    sync_block();
    // SAFETY: written above, before the barrier.
    let part = unsafe { *smem.add(warps as usize + 1) };
    let lo = part * part_len;
    let first = lo + (warp * WARP_SIZE * SCAN_ITEMS + lane) as u64;
    let at = |r: usize| first + (r as u32 * WARP_SIZE) as u64;
    let mut c = [0u32; SCAN_ITEMS as usize];
    for (r, c) in c.iter_mut().enumerate() {
        if at(r) < m {
            // SAFETY: at(r) < m.
            *c = unsafe { *counts.add(at(r) as usize) };
        }
    }
    // Each count's start within the warp's run: a shuffle scan a round.
    let mut run = 0u32;
    for c in c.iter_mut() {
        let inclusive = warp::inclusive_scan(*c);
        let before = run + inclusive - *c;
        run += shfl_idx(inclusive, WARP_SIZE - 1);
        *c = before;
    }
    if lane == 0 {
        // SAFETY: warp < warps.
        unsafe { *smem.add(warp as usize) = run as u64 };
    }
    sync_block();
    let (mut below, mut total) = (0u64, 0u64);
    for v in 0..warps {
        // SAFETY: v < warps.
        let sum = unsafe { *smem.add(v as usize) };
        below += if v < warp { sum } else { 0 };
        total += sum;
    }
    if warp == 0 {
        // SAFETY: state holds the ticket and every part's word; the whole warp.
        let before = unsafe { look_back(state.add(1), part, total as u32) };
        if lane == 0 {
            // SAFETY: the smem holds warps + 2 words.
            unsafe { *smem.add(warps as usize) = before };
        }
    }
    sync_block();
    // SAFETY: written above, before the barrier.
    let before = unsafe { *smem.add(warps as usize) };
    for (r, &c) in c.iter().enumerate() {
        if at(r) < m {
            // SAFETY: at(r) < m.
            unsafe { *starts.add(at(r) as usize) = before + below + c as u64 };
        }
    }
    if t == 0 && lo <= m && m <= lo + part_len {
        // SAFETY: starts holds m + 1 values; this is the part that holds m.
        unsafe { *starts.add(m as usize) = before + total };
    }
}

/// A part's state word in [`scan_counts`]: nothing yet (0), the part's own
/// sum (`PART_SUM | sum`), or the sum of every part up to it
/// (`PART_PREFIX | sum`); the sum in the low 32 bits.
pub const PART_SUM: u64 = 1 << 62;
/// See [`PART_SUM`].
pub const PART_PREFIX: u64 = 2 << 62;

/// The sum of the parts before `part` (the whole warp; lane 0 first
/// publishes `sum`, the part's own, then the sum through it): the warp
/// reads the states of the 32 parts before the window's end at once, waits
/// until each has published, adds the sums back to the nearest part that
/// published its prefix, and moves the window back while none has.
///
/// # Safety
/// `states` holds a zeroed or published word for every part up to `part`;
/// every lane of the warp calls it.
#[inline(always)]
unsafe fn look_back(states: *mut u64, part: u64, sum: u32) -> u64 {
    let lane = lane_id();
    // SAFETY: part's word, this warp's alone to write.
    let publish = |word: u64| unsafe { AtomicU64::from_ptr(states.add(part as usize)).store(word, Relaxed) };
    if lane == 0 {
        publish(if part == 0 { PART_PREFIX } else { PART_SUM } | sum as u64);
    }
    let mut before = 0u64;
    let mut end = part;
    while end > 0 {
        // Lane l reads part end - 1 - l; before part 0, a prefix of 0.
        let mut word;
        loop {
            word = if end > lane as u64 {
                // SAFETY: end - 1 - lane < part.
                unsafe { AtomicU64::from_ptr(states.add((end - 1 - lane as u64) as usize)).load(Relaxed) }
            } else {
                PART_PREFIX
            };
            if all(word >> 62 != 0) {
                break;
            }
        }
        let prefixes = ballot(word >> 62 == PART_PREFIX >> 62);
        let take = prefixes == 0 || lane <= prefixes.trailing_zeros();
        before += warp::reduce_sum(if take { word as u32 } else { 0 }) as u64;
        if prefixes != 0 {
            break;
        }
        end -= (WARP_SIZE as u64).min(end);
    }
    if lane == 0 && part > 0 {
        publish(PART_PREFIX | (before + sum as u64));
    }
    before
}

/// The block writes `starts[i] = base + counts[lo] + ... + counts[i - 1]`
/// for every `i` in `lo..hi`, and returns that sum up to `hi` (to every
/// thread): each thread sums a run of the counts, the block scans the runs'
/// sums in shared memory, each thread writes its run's prefixes.
///
/// # Safety
/// `counts` and `starts` hold `hi` values; `sums` a `u64` per thread (in
/// shared memory).
#[inline(always)]
unsafe fn scan_range(counts: *const u32, starts: *mut u64, lo: u64, hi: u64, base: u64, sums: *mut u64) -> u64 {
    let (t, threads) = (thread_idx() as u64, block_dim() as u64);
    let per = (hi - lo).div_ceil(threads);
    let (a, b) = ((lo + t * per).min(hi), (lo + (t + 1) * per).min(hi));
    let mut sum = 0u64;
    for i in a..b {
        // SAFETY: i < hi.
        sum += unsafe { *counts.add(i as usize) } as u64;
    }
    // SAFETY: t < block_dim().
    unsafe { *sums.add(t as usize) = sum };
    sync_block();
    // Inclusive scan of the sums (Hillis-Steele: read, meet, write, meet).
    let mut d = 1;
    while d < threads {
        // SAFETY: t - d < t < block_dim().
        let add = if t >= d { unsafe { *sums.add((t - d) as usize) } } else { 0 };
        sync_block();
        // SAFETY: t < block_dim().
        unsafe { *sums.add(t as usize) += add };
        sync_block();
        d *= 2;
    }
    // SAFETY: t < block_dim(); the last thread's sum is the block's.
    let (mut at, total) = unsafe { (base + *sums.add(t as usize) - sum, base + *sums.add(threads as usize - 1)) };
    for i in a..b {
        // SAFETY: i < hi.
        unsafe {
            *starts.add(i as usize) = at;
            at += *counts.add(i as usize) as u64;
        }
    }
    total
}

/// `$body` for each of a scatter thread's first `$items` slots (a constant
/// of the kernel), `$r` the slot (a `u32` constant in each copy): spelled
/// out, so that the slots' arrays stay in registers.
macro_rules! each_item {
    ($items:expr, $r:ident => $body:block) => {{
        const _: () = assert!(SCATTER_ITEMS == 16, "each_item! spells out 16 slots");
        each_item!(@ $items, $r $body; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    }};
    (@ $items:expr, $r:ident $body:block; $($i:literal)*) => {{
        $(if $i < $items {
            let $r: u32 = $i;
            $body
        })*
    }};
}

/// The scatter's shared memory past the splitters (`scatter_smem_bytes`).
struct ScatterSmem<T> {
    /// Per bucket: where the block's next key of it goes in the output.
    cursor: *mut u32,
    /// Per bucket: where its keys start in the tile (the scan of `count`).
    start: *mut u32,
    /// Per bucket: from a place in the tile to its place in the output
    /// (`cursor - start`, modulo 2^32).
    shift: *mut u32,
    /// Per bucket: the tile's keys of it (counted by [`rank_any`] when the
    /// order within a bucket is free).
    count: *mut u32,
    /// The scan's per-warp sums.
    sums: *mut u32,
    /// Per warp and bucket (warp-major): the warp's keys of it, then the
    /// earlier warps' keys of it (a stable scatter's).
    warp_counts: *mut u32,
    /// Per tile slot: the bucket of the key there.
    bucket: *mut u16,
    /// The tile's keys in bucket order (then, as `V`, its values).
    items: *mut T,
}

impl<T> ScatterSmem<T> {
    /// The regions at their `scatter_regions` offsets from `rest`.
    fn at(rest: *mut u8, with_values: bool) -> Self {
        let at = scatter_regions(with_values);
        // SAFETY: each region lies within scatter_smem_bytes past `rest`.
        let region = |i: usize| unsafe { rest.add(at[i] as usize) };
        ScatterSmem {
            cursor: region(0).cast(),
            start: region(1).cast(),
            shift: region(2).cast(),
            count: region(3).cast(),
            sums: region(4).cast(),
            warp_counts: region(5).cast(),
            bucket: region(6).cast(),
            items: region(7).cast(),
        }
    }
}

/// The label of a scatter slot with no key: the last bucket, which no key
/// takes (there is no splitter `WAYS - 1` to equal), so a label fits
/// `LOG_WAYS + 1` bits.
const NO_KEY: u32 = BUCKETS - 1;
/// Bits of a scatter slot's label.
const LABEL_BITS: u32 = LOG_WAYS + 1;
const _: () = assert!(BUCKETS == 1 << LABEL_BITS);
/// A scatter slot with no key has no place in the tile.
const NO_PLACE: u32 = u32::MAX;

/// The lanes whose `label` (below `2^LABEL_BITS`) equals this lane's, this
/// lane among them: `match.any.sync` by a ballot a bit of the label (the
/// instruction itself measured slower on an H100: `docs/PERFORMANCE.md`).
#[inline(always)]
fn match_any(label: u32) -> u32 {
    let mut peers = u32::MAX;
    for bit in 0..LABEL_BITS {
        peers &= agree(label, 1 << bit);
    }
    peers
}

/// This lane's rank among the warp's keys of `bucket` in the tile so far,
/// in lane order (`below`: the lanes below this one), and the warp's count
/// of `bucket` bumped past this round's: the lanes of one bucket found by
/// [`match_any`], the count read and bumped by the first of them.
///
/// # Safety
/// `mine` holds the warp's `BUCKETS` counts; every lane of the warp calls it.
#[inline(always)]
unsafe fn rank_in_order(mine: *mut u32, bucket: u32, below: u32) -> u32 {
    let peers = match_any(bucket);
    let first = peers.trailing_zeros();
    let mut before = 0;
    if lane_id() == first && bucket != NO_KEY {
        // SAFETY: bucket < BUCKETS; only this lane of the warp touches this
        // count in this round.
        unsafe {
            before = *mine.add(bucket as usize);
            *mine.add(bucket as usize) = before + peers.count_ones();
        }
    }
    let rank = shfl_idx(before, first) + (peers & below).count_ones();
    sync_warp();
    rank
}

/// This lane's rank among the block's keys of `bucket` in the tile so far,
/// in no set order: a shared atomic on the block's count, or one for the
/// whole warp when all its lanes hold keys of one bucket (runs of equal
/// keys, which would otherwise meet at one address).
///
/// # Safety
/// `counts` holds the block's `BUCKETS` counts; every lane of the warp
/// calls it.
#[inline(always)]
unsafe fn rank_any(counts: *mut u32, bucket: u32) -> u32 {
    let leader = shfl_idx(bucket, 0);
    if all(bucket == leader) && leader != NO_KEY {
        let lane = lane_id();
        let mut base = 0;
        if lane == 0 {
            // SAFETY: bucket < BUCKETS.
            base = unsafe { AtomicU32::from_ptr(counts.add(bucket as usize)) }.fetch_add(WARP_SIZE, Relaxed);
        }
        shfl_idx(base, 0) + lane
    } else if bucket != NO_KEY {
        // SAFETY: bucket < BUCKETS.
        unsafe { AtomicU32::from_ptr(counts.add(bucket as usize)) }.fetch_add(1, Relaxed)
    } else {
        0
    }
}

/// The tile's layout in bucket order, from its counts: `VALUES`, the
/// warps' counts (each warp's count of a bucket becomes the count of the
/// earlier warps, their total goes to `count`); otherwise the block's
/// counts in `count` (left at zero for the next tile). Each bucket's first
/// place in the tile goes to `start` (the exclusive scan of the totals),
/// the shift from the tile to the output to `shift`, and its cursor moves
/// past the tile's keys. Each thread takes a run of buckets; a warp scans
/// its runs' sums by shuffles, the warps' sums meet in shared memory.
///
/// # Safety
/// `m`'s counts hold the tile's; `block_dim()` a multiple of 32 up to
/// `THREADS`; called by the whole block.
#[inline(always)]
unsafe fn lay_out_tile<T, const VALUES: bool>(m: &ScatterSmem<T>) {
    let (t, threads, lane) = (thread_idx(), block_dim(), lane_id());
    let (warp, warps) = (t / WARP_SIZE, threads / WARP_SIZE);
    let per = BUCKETS.div_ceil(threads);
    let (a, b) = ((t * per).min(BUCKETS), ((t + 1) * per).min(BUCKETS));
    let mut sum = 0u32;
    for j in a..b {
        if VALUES {
            let mut total = 0;
            for v in 0..warps {
                // SAFETY: v < warps, j < BUCKETS.
                unsafe {
                    let c = m.warp_counts.add((v * BUCKETS + j) as usize);
                    let here = *c;
                    *c = total;
                    total += here;
                }
            }
            // SAFETY: j < BUCKETS.
            unsafe { *m.count.add(j as usize) = total };
        }
        // SAFETY: j < BUCKETS.
        sum += unsafe { *m.count.add(j as usize) };
    }
    let inclusive = warp::inclusive_scan(sum);
    if lane == WARP_SIZE - 1 {
        // SAFETY: warp < THREADS / 32 sums.
        unsafe { *m.sums.add(warp as usize) = inclusive };
    }
    sync_block();
    let mut at = inclusive - sum;
    for v in 0..warp {
        // SAFETY: v < warp.
        at += unsafe { *m.sums.add(v as usize) };
    }
    for j in a..b {
        // SAFETY: j < BUCKETS; this thread's buckets alone.
        unsafe {
            let (j, count, cursor) = (j as usize, *m.count.add(j as usize), *m.cursor.add(j as usize));
            if !VALUES {
                *m.count.add(j) = 0;
            }
            *m.start.add(j) = at;
            *m.shift.add(j) = cursor.wrapping_sub(at);
            *m.cursor.add(j) = cursor + count;
            at += count;
        }
    }
}

/// Block `b` moves the keys of its chunk (and their values, when `VALUES`)
/// to their buckets: the keys of bucket `j` go from
/// `starts[count_slot(b, j)]` on, in input order when values travel with
/// them (the pass is stable), in any order otherwise (keys alone: equal
/// keys are the same bits, so their order cannot be seen).
///
/// A tile at a time (`SCATTER_ITEMS` keys a thread): each key's bucket
/// comes from its label ([`bucket_of_label`]: no search, so that the tile's
/// keys fit the registers with values too); each warp ranks its keys, a
/// round of 32 at a time, among those of its bucket: `VALUES`, in the warp
/// and in lane order ([`rank_in_order`]), then a scan over warps; otherwise
/// in the block, by shared atomics ([`rank_any`]). A scan over buckets then
/// gives every key its slot in the tile in bucket order; the block
/// then writes the tile out slot by slot, so the keys of a bucket leave in
/// runs. Values of items up to 8 bytes fill a tile beside the keys' and
/// leave with them (one [`write_tile`]); wider ones follow the keys
/// through the same tile.
///
/// # Safety
/// As [`count`], with `labels` and `starts` what it
/// stored and the scan of its counts; `value(i)` the value of the input's
/// item `i` (read, or made: its position) for every `i` of the chunks;
/// `out_keys` (and, when `VALUES`, `out_vals`) room for every key, apart
/// from the input,
/// every place below 2^32; `block_dim()` a multiple of 32 up to `THREADS`;
/// [`scatter_smem_bytes`](crate::config::distribute::scatter_smem_bytes) of
/// shared memory.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn scatter<T: Copy + PartialOrd + Default, V: Copy + Default, const VALUES: bool>(
    keys: *const T,
    labels: *const u8,
    value: impl Fn(usize) -> V,
    out_keys: *mut T,
    out_vals: *mut V,
    blocks: *const BlockWork,
    splitters: *const T,
    starts: *const u64,
    enc: impl Encoding<T>,
) {
    crate::arch::chain_launch();
    // SAFETY: the caller's contract; the regions follow the splitters.
    let Some((b, w, s, rest)) = (unsafe { block_start(blocks, splitters) }) else {
        return; // past the pass's blocks
    };
    let m = ScatterSmem::<T>::at(rest, VALUES);
    let items = SCATTER_ITEMS;
    // SAFETY: j < BUCKETS; the slot is the block's; places are below n <= u32::MAX.
    for_each_bucket(|j| unsafe {
        *m.cursor.add(j as usize) = *starts.add(count_slot(&w, b, j)) as u32;
        *m.count.add(j as usize) = 0;
    });
    sync_block();
    let (warp, lane) = (thread_idx() / WARP_SIZE, lane_id());
    let below = (1u32 << lane) - 1;
    // SAFETY: warp < THREADS / 32.
    let mine = unsafe { m.warp_counts.add((warp * BUCKETS) as usize) };
    let tile = (block_dim() * items) as u64;
    // Items up to 8 bytes ([`values_beside_keys`]) hold their keys and
    // values in registers from the first read and their tiles side by side
    // in shared memory; wider ones read their keys again as they go into
    // the tile, so that the ranking keeps the registers of keys alone.
    let beside = VALUES && values_beside_keys(size_of::<T>() as u32, size_of::<V>() as u32);
    let mut at = w.start;
    while at < w.end {
        let len = (w.end - at).min(tile) as u32;
        // Slot r of this thread: key (warp * ITEMS + r) * 32 + lane of the
        // tile, so that a warp's rounds, lane by lane, are input order.
        let slot = |r: u32| (warp * items + r) * WARP_SIZE + lane;
        // tag[r]: slot r's label; then its bucket; then its bucket and its
        // rank among the keys of that bucket (`Tag`); then its place in the
        // tile.
        let mut k = [T::default(); SCATTER_ITEMS as usize];
        let mut tag = [NO_KEY; SCATTER_ITEMS as usize];
        let mut v = [V::default(); SCATTER_ITEMS as usize];
        each_item!(items, r => {
            if slot(r) < len {
                let i = (at + slot(r) as u64) as usize;
                // SAFETY: the key, its label and its value lie in the chunk.
                unsafe {
                    k[r as usize] = *keys.add(i);
                    tag[r as usize] = *labels.add(i) as u32;
                    if beside {
                        v[r as usize] = value(i);
                    }
                }
            }
        });
        // Encoded once every load is out, as in `count`.
        each_item!(items, r => {
            k[r as usize] = enc.apply(k[r as usize]);
        });
        // Every bucket first, so that their splitters' loads overlap.
        each_item!(items, r => {
            // SAFETY: the splitters are loaded; the count's label of this key.
            tag[r as usize] = if slot(r) < len { unsafe { bucket_of_label(s, tag[r as usize], k[r as usize]) } } else { NO_KEY };
        });
        let mut j = lane;
        while VALUES && j < BUCKETS {
            // SAFETY: j < BUCKETS.
            unsafe { *mine.add(j as usize) = 0 };
            j += WARP_SIZE;
        }
        sync_warp();
        each_item!(items, r => {
            let r = r as usize;
            let bucket = tag[r];
            // SAFETY: the warp's counts, or the block's; every lane of the warp ranks.
            let rank = unsafe { if VALUES { rank_in_order(mine, bucket, below) } else { rank_any(m.count, bucket) } };
            tag[r] = Tag::pack(bucket, rank);
        });
        sync_block();
        // SAFETY: the counts of the tile; the whole block.
        unsafe { lay_out_tile::<T, VALUES>(&m) };
        sync_block();
        // The tile in bucket order; tag[r] becomes slot r's place there
        // (NO_PLACE for no key). Items up to 8 bytes place the keys and
        // values they hold (both written out at once); wider items
        // read their keys again (a slot past the chunk reads the tile's
        // last, and places nothing), every one before any is placed (a load
        // beside its place goes under the place's branch and waits there),
        // and go out keys first, then values through the same tile.
        let last = len - 1;
        let tile_vals = if beside { m.items.wrapping_add(SCATTER_TILE as usize) } else { m.items }.cast::<V>();
        if VALUES && !beside {
            each_item!(items, r => {
                // SAFETY: every place read lies in the chunk.
                k[r as usize] = unsafe { *keys.add((at + slot(r).min(last) as u64) as usize) };
            });
        }
        each_item!(items, r => {
            let key = if VALUES && !beside { enc.apply(k[r as usize]) } else { k[r as usize] };
            let r = r as usize;
            let j = Tag::bucket(tag[r]) as usize;
            tag[r] = if j != NO_KEY as usize {
                // SAFETY: j < BUCKETS; the place is below len: the tile's
                // keys of bucket j fill start[j]..start[j] + count[j].
                unsafe {
                    let earlier_warps = if VALUES { *mine.add(j) } else { 0 };
                    let place = Tag::rank(tag[r]) + *m.start.add(j) + earlier_warps;
                    *m.items.add(place as usize) = key;
                    if beside {
                        *tile_vals.add(place as usize) = v[r];
                    }
                    *m.bucket.add(place as usize) = j as u16;
                    place
                }
            } else {
                NO_PLACE
            };
        });
        sync_block();
        // SAFETY: the tile's items (and values beside), places below len;
        // each goes to its bucket's next places in the output.
        unsafe {
            write_tile(&m, len, |i, to| {
                *out_keys.add(to) = *m.items.add(i);
                if beside {
                    *out_vals.add(to) = *tile_vals.add(i);
                }
            })
        };
        if VALUES && !beside {
            sync_block();
            each_item!(items, r => {
                // Every place read lies in the chunk.
                v[r as usize] = value((at + slot(r).min(last) as u64) as usize);
            });
            each_item!(items, r => {
                if tag[r as usize] != NO_PLACE {
                    // SAFETY: the value's place in the tile.
                    unsafe { *tile_vals.add(tag[r as usize] as usize) = v[r as usize] };
                }
            });
            sync_block();
            // SAFETY: as for the keys.
            unsafe { write_tile(&m, len, |i, to| *out_vals.add(to) = *tile_vals.add(i)) };
        }
        sync_block();
        at += tile;
    }
}

/// The block writes out the tile's `len` places, in bucket order: `put(i,
/// to)` moves what lies at place `i` (a key, a value, or both from tiles
/// side by side), of bucket `j`, to output place `to = i + shift[j]`.
///
/// # Safety
/// `m`'s buckets and shifts describe the tile; `put` may move an item from
/// any place below `len` to its bucket's next places in the output.
#[inline(always)]
unsafe fn write_tile<T>(m: &ScatterSmem<T>, len: u32, mut put: impl FnMut(usize, usize)) {
    let mut i = thread_idx();
    while i < len {
        // SAFETY: i < len places of the tile; its bucket's shift.
        let to = unsafe { i.wrapping_add(*m.shift.add(*m.bucket.add(i as usize) as usize)) };
        put(i as usize, to as usize);
        i += block_dim();
    }
}

/// Writes `offsets[s * BUCKETS + j]`, where bucket `j` of segment `s`
/// starts, for every segment below `segs`, and `offsets[segs * BUCKETS] = n`
/// (`u32`: the segmented sort's offsets).
///
/// # Safety
/// `segments` holds `segs` entries, `starts` the scan of the counts of
/// their blocks, `offsets` `segs * BUCKETS + 1` values; `n <= u32::MAX`.
#[inline(always)]
pub unsafe fn bucket_offsets(segments: *const SegmentWork, starts: *const u64, offsets: *mut u32, segs: u64, n: u64) {
    crate::arch::chain_launch();
    let mut i = global_thread() as u64;
    while i <= segs * BUCKETS as u64 {
        let v = if i == segs * BUCKETS as u64 {
            n
        } else {
            let (s, j) = (i / BUCKETS as u64, (i % BUCKETS as u64) as u32);
            // SAFETY: s < segs.
            let seg = unsafe { *segments.add(s as usize) };
            if seg.count == 0 {
                seg.start
            } else {
                // SAFETY: the segment's first block's count slot of bucket j.
                unsafe { *starts.add((seg.first * BUCKETS + j * seg.count) as usize) }
            }
        };
        // SAFETY: i <= segs * BUCKETS; v <= n <= u32::MAX.
        unsafe { *offsets.add(i as usize) = v as u32 };
        i += grid_threads() as u64;
    }
}

/// The smallest and the largest key final bucket `b` of the second pass's
/// segment `a` may hold, from the splitters (`FIRST_PASS_SPLITTERS`: the
/// second pass's `WAYS` a segment, then the first pass's): range bucket
/// `2i` of a pass holds the keys strictly between splitters `i - 1` and
/// `i`, inside its segment's own range (the first pass's bucket `a`). None
/// for an equality bucket of either pass (its keys are equal: no sort),
/// for the first and the last bucket of all (open on one side) and for
/// an empty range.
///
/// ```
/// use warpsort_kernels::config::distribute::{BUCKETS, FIRST_PASS_SPLITTERS, SPLITTER_KEYS, WAYS};
/// use warpsort_kernels::distribute::bucket_span;
/// let mut s = vec![0u32; SPLITTER_KEYS as usize];
/// let (first, second) = (FIRST_PASS_SPLITTERS as usize, 2 * WAYS as usize); // segment 2: first pass's range bucket 1
/// (s[first], s[first + 1]) = (100, 200);
/// (s[second], s[second + 1], s[second + WAYS as usize - 2]) = (120, 150, 190);
/// let span = |b| unsafe { bucket_span(s.as_ptr(), 2, b) };
/// assert_eq!((span(0), span(2), span(2 * WAYS - 2)), (Some((101, 119)), Some((121, 149)), Some((191, 199))));
/// assert_eq!((span(1), unsafe { bucket_span(s.as_ptr(), 0, 0) }), (None, None));
/// ```
///
/// # Safety
/// `splitters` holds both passes' (`SPLITTER_KEYS`); `a, b < BUCKETS`.
#[inline(always)]
pub unsafe fn bucket_span<T: SpanKey>(splitters: *const T, a: u32, b: u32) -> Option<(T, T)> {
    if a % 2 == 1 || b % 2 == 1 {
        return None;
    }
    let (outer, inner) = (a / 2, b / 2);
    // SAFETY: both passes' splitters; ways below WAYS.
    let (first, second) = unsafe { (splitters.add(FIRST_PASS_SPLITTERS as usize), splitters.add((a * WAYS) as usize)) };
    let at = |s: *const T, w: u32| unsafe { *s.add(w as usize) };
    let lo = match (inner, outer) {
        (0, 0) => return None,
        (0, o) => at(first, o - 1).next_up()?,
        (i, _) => at(second, i - 1).next_up()?,
    };
    let hi = match (inner, outer) {
        (i, _) if i < WAYS - 1 => at(second, i).next_down()?,
        (_, o) if o < WAYS - 1 => at(first, o).next_down()?,
        _ => return None,
    };
    (lo <= hi).then_some((lo, hi))
}

/// Writes the span of each of the sample sort's `FINAL_BUCKETS` buckets
/// ([`bucket_span`]) to `spans`, two keys a bucket, `(PAD, 0)` where it is
/// not known (`span::Known` reads them).
///
/// # Safety
/// `splitters` holds both passes' (`SPLITTER_KEYS`), `spans` two keys a
/// final bucket.
#[inline(always)]
pub unsafe fn bucket_spans<T: SpanKey>(splitters: *const T, spans: *mut T) {
    crate::arch::chain_launch();
    let mut i = global_thread();
    while i < FINAL_BUCKETS as usize {
        let (a, b) = (i as u32 / BUCKETS, i as u32 % BUCKETS);
        // SAFETY: a, b < BUCKETS.
        let (lo, hi) = unsafe { bucket_span(splitters, a, b) }.unwrap_or((T::PAD, T::default()));
        // SAFETY: i < FINAL_BUCKETS.
        unsafe {
            *spans.add(2 * i) = lo;
            *spans.add(2 * i + 1) = hi;
        }
        i += grid_threads();
    }
}

/// The second pass's tables from the first pass's bucket offsets, on the
/// GPU (so that no wait reads them back): segment `s` is bucket `s`,
/// `offsets[s]..offsets[s + 1]`, cut into chunks of `chunk` keys, written as
/// [`segments`](crate::config::distribute::segments) and
/// [`blocks`](crate::config::distribute::blocks) make them on the host;
/// entries `blocks[b]` past the pass's blocks, up to `max_blocks`, have no
/// blocks (`count` 0), and the pass's kernels, launched for `max_blocks`,
/// leave those blocks idle. One block.
///
/// # Safety
/// `offsets` holds `BUCKETS + 1` offsets in order, `segments` `BUCKETS`
/// entries, `blocks` `max_blocks` (at least the pass's blocks);
/// [`tables_smem_bytes`](crate::config::distribute::tables_smem_bytes) of
/// shared memory.
#[inline(always)]
pub unsafe fn tables(
    offsets: *const u32,
    chunk: u64,
    segments: *mut SegmentWork,
    blocks: *mut BlockWork,
    max_blocks: u64,
) {
    crate::arch::chain_launch();
    let (t, threads) = (thread_idx(), block_dim());
    let segs = BUCKETS as usize;
    // Shared: the scan's sums (a u64 a thread), each segment's blocks, their scan.
    let sums = dynamic_smem::<u64>();
    // SAFETY: the regions lie within tables_smem_bytes(threads).
    let (counts, firsts) = unsafe {
        let counts = sums.add(threads as usize).cast::<u32>();
        (counts, counts.add(segs).cast::<u64>())
    };
    let bounds = |s: usize| {
        // SAFETY: s < BUCKETS; offsets holds BUCKETS + 1.
        unsafe { (*offsets.add(s) as u64, *offsets.add(s + 1) as u64) }
    };
    let mut s = t as usize;
    while s < segs {
        let (start, end) = bounds(s);
        // SAFETY: s < BUCKETS.
        unsafe { *counts.add(s) = SegmentWork::new(start, end, 0, chunk).count };
        s += threads as usize;
    }
    sync_block();
    // SAFETY: BUCKETS counts and BUCKETS + 1 firsts in shared memory, a sum a thread.
    let total = unsafe { scan_range(counts, firsts, 0, segs as u64, 0, sums) };
    sync_block();
    let mut s = t as usize;
    while s < segs {
        let (start, end) = bounds(s);
        // SAFETY: s < BUCKETS.
        unsafe { *segments.add(s) = SegmentWork { start, end, first: *firsts.add(s) as u32, count: *counts.add(s) } };
        s += threads as usize;
    }
    let mut b = t as u64;
    while b < max_blocks {
        let mut w = BlockWork::default();
        if b < total {
            // The last segment whose blocks start at or before b: not empty
            // (an empty one shares its first with the next, or is past them all).
            let (mut lo, mut hi) = (0usize, segs);
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                // SAFETY: mid < BUCKETS.
                if unsafe { *firsts.add(mid) } <= b {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let (start, end) = bounds(lo);
            // SAFETY: lo < BUCKETS.
            let (first, count) = unsafe { (*firsts.add(lo), *counts.add(lo)) };
            w = SegmentWork { start, end, first: first as u32, count }.block(lo as u32, b - first, chunk);
        }
        // SAFETY: b < max_blocks.
        unsafe { *blocks.add(b as usize) = w };
        b += threads as u64;
    }
}

/// The scatter of keys `$k` with values `$v`, stably: entry point `$f`,
/// named `$scatter` `_$suffix` `$vsfx`, its view parameters `[...]` passed
/// through to `$enc` (see [`distribute_kernels!`]).
#[cfg(target_arch = "nvptx64")]
macro_rules! scatter_pairs {
    ($f:ident, $v:ty, $k:ty, $scatter:ident, $suffix:literal, $vsfx:literal, [$($view:ident: $vt:ty),*] => $enc:expr) => {
        #[doc = concat!("[`scatter`] of these keys with `", stringify!($v), "` values, stably.")]
        #[unsafe(export_name = concat!(crate::kernel_name!($scatter), "_", $suffix, $vsfx))]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $f(
            keys: *const $k,
            labels: *const u8,
            vals: *const $v,
            out_keys: *mut $k,
            out_vals: *mut $v,
            blocks: *const BlockWork,
            splitters: *const $k,
            starts: *const u64,
            $($view: $vt),*
        ) {
            // Null `vals`: each item's value is its place in the input
            // (argsort's positions, made here instead of read). The scatter
            // is instantiated for each, so that the reading one's loops
            // take no branch on the pointer.
            let made = |i: usize| i as $v;
            // SAFETY: the scatter reads places of its chunk, which `vals` holds.
            let read = |i: usize| unsafe { *vals.add(i) };
            // SAFETY (both): the host's launch.
            match vals.is_null() {
                true => unsafe { scatter::<_, _, true>(keys, labels, made, out_keys, out_vals, blocks, splitters, starts, $enc) },
                false => unsafe { scatter::<_, _, true>(keys, labels, read, out_keys, out_vals, blocks, splitters, starts, $enc) },
            }
        }
    };
}

/// The entry points of keys `$k` (`u32` or `u64`), in module `$m`: of
/// ordered words ([`Plain`]), named `$family` (`distribute_sample`, ...),
/// or (`viewed`) of keys read through the view `(perm, flip, floats)`
/// (`ordered::View`; the sample sort's first pass), named
/// `${family}_viewed`, so that each has registers of its own.
#[cfg(target_arch = "nvptx64")]
macro_rules! distribute_kernels {
    ($m:ident, $k:ty, $suffix:literal, $sample:ident, $count:ident, $scatter:ident, $($view:ident: $vt:ty),* => $enc:expr) => {
        #[doc = concat!("Distribution kernels of `", $suffix, "` keys.")]
        pub mod $m {
            use super::*;

            /// [`sample_splitters`] of these keys. `scan`: null, or the
            /// order scan's words (`config::order_scan`), with which the
            /// kernel samples only where they prove the input unordered
            /// ([`order_scan::unordered`]): the first pass's sampling
            /// queued behind the scan before the host reads them.
            /// `chunk`: 0, each block's segment read from `segments`; or
            /// the first pass's chunk, its one block then making the pass's
            /// tables of `n` keys ([`first_tables`]) before it samples.
            #[unsafe(export_name = concat!(crate::kernel_name!($sample), "_", $suffix))]
            pub unsafe extern "ptx-kernel" fn sample(
                keys: *const $k,
                segments: *mut SegmentWork,
                splitters: *mut $k,
                oversample: u32,
                scan: *const u64,
                blocks: *mut BlockWork,
                n: u64,
                chunk: u64,
                $($view: $vt),*
            ) {
                crate::arch::chain_launch();
                if !scan.is_null() {
                    // SAFETY: the host passes the scan's words, written before this launch.
                    let (flags, count) = unsafe { (*scan.add(order_scan::FLAGS), *scan.add(order_scan::COUNT)) };
                    if !order_scan::unordered(flags, count) {
                        return;
                    }
                }
                let seg = if chunk == 0 {
                    // SAFETY: an entry a block, written by earlier kernels.
                    unsafe { *segments.add(block_idx() as usize) }
                } else {
                    // SAFETY: one block; `segments` holds an entry, `blocks` one a chunk.
                    unsafe { first_tables(n, chunk, segments, blocks) }
                };
                // SAFETY: the host's launch (`distribute` plans).
                unsafe {
                    sample_splitters::<_, { crate::config::distribute::SAMPLE_ITEMS as usize }>(
                        keys, seg, splitters, oversample, $enc,
                    )
                }
            }

            /// [`count`] of these keys.
            #[unsafe(export_name = concat!(crate::kernel_name!($count), "_", $suffix))]
            pub unsafe extern "ptx-kernel" fn count(
                keys: *const $k,
                blocks: *const BlockWork,
                splitters: *const $k,
                counts: *mut u32,
                labels: *mut u8,
                $($view: $vt),*
            ) {
                // SAFETY: the host's launch.
                unsafe { super::count(keys, blocks, splitters, counts, labels, $enc) }
            }

            /// [`scatter`] of these keys alone, in any order within a bucket.
            #[unsafe(export_name = concat!(crate::kernel_name!($scatter), "_", $suffix))]
            pub unsafe extern "ptx-kernel" fn keys(
                keys: *const $k,
                labels: *const u8,
                out_keys: *mut $k,
                blocks: *const BlockWork,
                splitters: *const $k,
                starts: *const u64,
                $($view: $vt),*
            ) {
                let (value, out_vals) = (|_| 0, core::ptr::null_mut());
                // SAFETY: the host's launch; no values.
                unsafe {
                    scatter::<_, u32, false>(keys, labels, value, out_keys, out_vals, blocks, splitters, starts, $enc)
                }
            }

            scatter_pairs!(pairs32, u32, $k, $scatter, $suffix, "_u32", [$($view: $vt),*] => $enc);
            scatter_pairs!(pairs64, u64, $k, $scatter, $suffix, "_u64", [$($view: $vt),*] => $enc);
        }
    };
}

/// Both kernel sets of one key word: ordered words, and keys read through a view.
#[cfg(target_arch = "nvptx64")]
macro_rules! distribute_word {
    ($k:ty, $suffix:literal, $words:ident, $viewed:ident) => {
        distribute_kernels!($words, $k, $suffix, distribute_sample, distribute_count, distribute_scatter, => Plain);
        distribute_kernels!(
            $viewed, $k, $suffix,
            distribute_sample_viewed, distribute_count_viewed, distribute_scatter_viewed,
            perm: u64, flip: u64, floats: u32 => View { perm, flip, floats }
        );
    };
}

#[cfg(target_arch = "nvptx64")]
distribute_word!(u32, "u32", words_u32, viewed_u32);
#[cfg(target_arch = "nvptx64")]
distribute_word!(u64, "u64", words_u64, viewed_u64);

/// [`scan_counts`].
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = crate::kernel_name!(distribute_scan))]
pub unsafe extern "ptx-kernel" fn distribute_scan(counts: *const u32, starts: *mut u64, m: u64, state: *mut u64) {
    // SAFETY: the host's launch.
    unsafe { scan_counts(counts, starts, m, state) }
}

/// [`tables`] (one block).
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = crate::kernel_name!(distribute_tables))]
pub unsafe extern "ptx-kernel" fn distribute_tables(
    offsets: *const u32,
    chunk: u64,
    segments: *mut SegmentWork,
    blocks: *mut BlockWork,
    max_blocks: u64,
) {
    // SAFETY: the host's launch.
    unsafe { tables(offsets, chunk, segments, blocks, max_blocks) }
}

/// [`bucket_spans`] of `u32` keys.
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = concat!(crate::kernel_name!(distribute_spans), "_u32"))]
pub unsafe extern "ptx-kernel" fn distribute_spans_u32(splitters: *const u32, spans: *mut u32) {
    // SAFETY: the host's launch.
    unsafe { bucket_spans(splitters, spans) }
}

/// [`bucket_spans`] of `u64` keys.
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = concat!(crate::kernel_name!(distribute_spans), "_u64"))]
pub unsafe extern "ptx-kernel" fn distribute_spans_u64(splitters: *const u64, spans: *mut u64) {
    // SAFETY: the host's launch.
    unsafe { bucket_spans(splitters, spans) }
}

/// [`bucket_offsets`].
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = crate::kernel_name!(distribute_offsets))]
pub unsafe extern "ptx-kernel" fn distribute_offsets(
    segments: *const SegmentWork,
    starts: *const u64,
    offsets: *mut u32,
    segs: u64,
    n: u64,
) {
    // SAFETY: the host's launch.
    unsafe { bucket_offsets(segments, starts, offsets, segs, n) }
}
