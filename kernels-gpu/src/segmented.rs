//! Segments given by offsets (as CUB's `DeviceSegmentedSort`: segment `s` is
//! `[off[s], off[s + 1])`): checking and classifying the offsets by length,
//! listing the segments of each class, sorting every listed segment with the
//! kernel its class needs (several segments of up to 256 items per warp, a
//! warp per segment up to 512, a block per segment up to 8192; the host runs the full merge sort on longer
//! ones), and the segmented sortedness check.

use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

use crate::arch::{block_dim, block_idx, dynamic_smem, global_thread, global_warp, grid_dim, grid_threads, lane_id};
use crate::block_network::Block;
use crate::checks::Bits64;
use crate::config::{
    KEYS_PER_LANE, SEGMENT_CURSORS, SEGMENT_FIRST, SEGMENT_LAST, WARP_SIZE, segment_class,
};
use crate::item::{Items, Key, Pair, Word};
use crate::network;
use crate::tile::{load_blocked, store_blocked};
use crate::warp;

/// The segment of thread `i` (`i < segs`): whether its offsets are in order,
/// and its size class.
///
/// # Safety
/// `off` holds `segs + 1` offsets and `i < segs`.
#[inline(always)]
unsafe fn class_of(off: *const u32, i: usize) -> (bool, u32) {
    // SAFETY: i + 1 <= segs.
    let (a, b) = unsafe { (*off.add(i), *off.add(i + 1)) };
    (a <= b, if a <= b { segment_class(b - a) } else { 0 })
}

/// Calls `f(class, lanes)` once per distinct class among the lanes whose
/// `listed` holds, with the mask of the lanes of that class (warp-uniform:
/// every lane calls this together).
#[inline(always)]
fn per_class(listed: bool, class: u32, mut f: impl FnMut(u32, u32)) {
    let mut pending = warp::ballot(listed);
    while pending != 0 {
        let c = warp::shfl(class, pending.trailing_zeros());
        let lanes = warp::ballot(listed && class == c);
        f(c, lanes);
        pending &= !lanes;
    }
}

/// Checks the offsets and counts the segments of each class:
/// `counters[0]` becomes the first `i` with `off[i] > off[i + 1]` (the host
/// sets it to `u32::MAX`), `counters[1 + c]` the segments of class `c`,
/// and the last two words `off[0]` and `off[segs]`.
///
/// # Safety
/// `off` holds `segs + 1` offsets; `counters` holds `SEGMENT_COUNTERS` words.
#[inline(always)]
pub unsafe fn count_classes(off: *const u32, segs: u64, counters: *mut u32) {
    let segs = segs as usize;
    let lane = lane_id() as usize;
    if global_thread() == 0 {
        // SAFETY: off holds segs + 1 offsets; counters has these words.
        unsafe {
            *counters.add(SEGMENT_FIRST) = *off;
            *counters.add(SEGMENT_LAST) = *off.add(segs);
        }
    }
    let mut base = global_thread() - lane;
    // Warp-uniform loop so that the votes see the whole warp.
    while base < segs {
        let i = base + lane;
        // SAFETY: i < segs.
        let (ok, class) = if i < segs { unsafe { class_of(off, i) } } else { (true, 0) };
        if !ok {
            // SAFETY: counters[0] is a valid word.
            unsafe { AtomicU32::from_ptr(counters).fetch_min(i as u32, Relaxed) };
        }
        per_class(i < segs && ok && class != 0, class, |c, lanes| {
            if lane as u32 == lanes.trailing_zeros() {
                // SAFETY: c < SEGMENT_CLASSES, inside the counters.
                unsafe { AtomicU32::from_ptr(counters.add(1 + c as usize)).fetch_add(lanes.count_ones(), Relaxed) };
            }
        });
        base += grid_threads();
    }
}

/// Lists every segment of a class `c >= 1` after [`count_classes`] ran on
/// the same offsets, as `start | end << 32` (so that the sorts read a
/// segment's bounds with one load): class `c`'s list follows those of
/// classes `1..c`. Lists nothing when the counts show bad offsets (a
/// decrease, `off[0] != 0` or `off[segs] != n`), and never writes at or past
/// entry `room`.
///
/// # Safety
/// `off` holds `segs + 1` offsets; `counters` holds `SEGMENT_COUNTERS` words
/// as `count_classes` left them (cursors zero); `lists` holds `room` entries.
#[inline(always)]
pub unsafe fn list_classes(off: *const u32, segs: u64, n: u64, counters: *mut u32, lists: *mut u64, room: u64) {
    // SAFETY: the counters are valid; the count kernel finished before this one started.
    let ok = unsafe {
        *counters == u32::MAX && *counters.add(SEGMENT_FIRST) == 0 && *counters.add(SEGMENT_LAST) as u64 == n
    };
    if !ok {
        return;
    }
    let segs = segs as usize;
    let lane = lane_id();
    let mut base = global_thread() - lane as usize;
    while base < segs {
        let i = base + lane as usize;
        // SAFETY: i < segs.
        let class = if i < segs { unsafe { class_of(off, i).1 } } else { 0 };
        per_class(i < segs && class != 0, class, |c, lanes| {
            let leader = lanes.trailing_zeros();
            let mut first = 0u64;
            if lane == leader {
                // SAFETY: every index stays inside the counters.
                unsafe {
                    for k in 1..c {
                        first += *counters.add(1 + k as usize) as u64;
                    }
                    let cursor = AtomicU32::from_ptr(counters.add(SEGMENT_CURSORS + c as usize));
                    first += cursor.fetch_add(lanes.count_ones(), Relaxed) as u64;
                }
            }
            let slot = warp::shfl(first, leader) + (lanes & ((1 << lane) - 1)).count_ones() as u64;
            if lanes & (1 << lane) != 0 && slot < room {
                // SAFETY: slot < room; i < segs.
                unsafe { *lists.add(slot as usize) = *off.add(i) as u64 | (*off.add(i + 1) as u64) << 32 };
            }
        });
        base += grid_threads();
    }
}

/// Start and length of listed segment `j` (`(0, 0)` past the list).
///
/// # Safety
/// `lists` holds `count` entries.
#[inline(always)]
unsafe fn listed(lists: *const u64, count: usize, j: usize) -> (usize, usize) {
    if j >= count {
        return (0, 0);
    }
    // SAFETY: j < count.
    let e = unsafe { *lists.add(j) };
    let (a, b) = (e as u32, (e >> 32) as u32);
    (a as usize, (b - a) as usize)
}

/// Sorts the listed segments (each at most `chunk` items; `chunk` a power of
/// two from `N` to `32 * N`): a warp tile of `32 * N` items holds
/// `32 * N / chunk` segments, one per aligned chunk of `chunk / N` lanes,
/// each lane loading its `N` items of its segment (16-byte vector loads where
/// aligned and whole), `MAX` pads past the segment's end; then the network's
/// phases up to `chunk` (the whole network, unrolled, when `chunk = 32 * N`).
/// Grid-stride over warp tiles.
///
/// # Safety
/// `items` holds every listed segment; `lists` holds `count` entries of
/// segments of at most `chunk` items.
#[inline(always)]
pub unsafe fn sort_listed_chunks<K: Key, V: Word, const N: usize>(
    items: Items<K, V>,
    lists: *const u64,
    count: u32,
    chunk: u32,
) {
    let (count, chunk) = (count as usize, chunk as usize);
    let lane = lane_id() as usize;
    let per_warp = WARP_SIZE as usize * N / chunk;
    let lanes_per_segment = chunk / N;
    let mut first = global_warp() * per_warp;
    while first < count {
        // SAFETY: listed segments lie inside the arrays.
        let (start, len) = unsafe { listed(lists, count, first + lane / lanes_per_segment) };
        let t = lane % lanes_per_segment;
        // SAFETY: as above; this warp owns its segments.
        let seg = unsafe { items.offset(start) };
        let mut x = unsafe { load_blocked::<K, V, N>(&seg, t, len) };
        if chunk == WARP_SIZE as usize * N {
            network::warp_sort(&mut x, lane as u32);
        } else {
            network::warp_sort_chunks(&mut x, lane as u32, chunk);
        }
        unsafe { store_blocked(&seg, t, len, &x) };
        first += grid_threads() / WARP_SIZE as usize * per_warp;
    }
}

/// Sorts the listed segments one block each (grid-stride over the list),
/// a tile of `blockDim * KEYS_PER_LANE` items (at least every segment's
/// length) in registers and shared memory.
///
/// # Safety
/// As [`sort_listed_chunks`]; shared memory holds one tile.
#[inline(always)]
pub unsafe fn sort_listed_blocks<K: Key, V: Word>(items: Items<K, V>, lists: *const u64, count: u32) {
    const N: usize = KEYS_PER_LANE as usize;
    let t = crate::arch::thread_idx();
    let b: Block<Pair<K, V>> = Block { smem: dynamic_smem(), warp: t / WARP_SIZE, lane: t % WARP_SIZE };
    let tile = block_dim() as usize * N;
    let mut j = block_idx() as usize;
    while j < count as usize {
        // SAFETY: j < count; the segment lies inside the arrays and this block owns it.
        let (start, len) = unsafe { listed(lists, count as usize, j) };
        let seg = unsafe { items.offset(start) };
        let mut x = unsafe { load_blocked::<K, V, N>(&seg, t as usize, len) };
        b.sort(&mut x, tile);
        unsafe { store_blocked(&seg, t as usize, len, &x) };
        j += grid_dim() as usize;
    }
}

/// Adds to `*across` the descents that straddle a segment boundary
/// (`key(b - 1) > key(b)` for each distinct boundary `0 < b < n`): the
/// descents `checks::verify` counts over the whole array less these are the
/// descents inside segments. Boundaries are `off[j]` for `1 <= j < count` or, when
/// `off` is null, `j * seg` (equal rows).
///
/// # Safety
/// `keys` holds `n` keys; `off` is null or holds `count` ordered offsets.
#[inline(always)]
pub unsafe fn boundary_descents<K: Bits64>(
    keys: *const K,
    n: u64,
    off: *const u32,
    count: u64,
    seg: u64,
    mode: u32,
    across: *mut u32,
) {
    let (n, count) = (n as usize, count as usize);
    let lane = lane_id() as usize;
    let mut base = global_thread() - lane;
    let mut bad = 0u32;
    while base < count {
        let j = base + lane;
        let mut descent = false;
        if j >= 1 && j < count {
            // SAFETY: j < count offsets; a boundary repeated by empty segments counts once.
            let (b, first) = if off.is_null() {
                (j * seg as usize, true)
            } else {
                unsafe { (*off.add(j) as usize, *off.add(j - 1) as usize != *off.add(j) as usize) }
            };
            if first && b > 0 && b < n {
                // SAFETY: 0 < b < n.
                let (x, y) = unsafe { (*keys.add(b - 1), *keys.add(b)) };
                descent = x.ordered(mode) > y.ordered(mode);
            }
        }
        bad += warp::popc(descent);
        base += grid_threads();
    }
    if lane == 0 && bad != 0 {
        // SAFETY: the host passes a valid counter.
        unsafe { AtomicU32::from_ptr(across).fetch_add(bad, Relaxed) };
    }
}

/// Checks and counts the offsets' classes (see [`count_classes`]).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn segment_classes_count(off: *const u32, segs: u64, counters: *mut u32) {
    // SAFETY: the host passes segs + 1 offsets and the counters.
    unsafe { count_classes(off, segs, counters) }
}

/// Lists the segments of each class (see [`list_classes`]).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn segment_classes_list(
    off: *const u32,
    segs: u64,
    n: u64,
    counters: *mut u32,
    lists: *mut u64,
    room: u64,
) {
    // SAFETY: the host passes segs + 1 offsets, the counted counters and `room` list entries.
    unsafe { list_classes(off, segs, n, counters, lists, room) }
}

/// Boundary descents of 32-bit keys (see [`boundary_descents`]).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn segment_boundaries_u32(
    keys: *const u32,
    n: u64,
    off: *const u32,
    count: u64,
    seg: u64,
    mode: u32,
    across: *mut u32,
) {
    // SAFETY: the host passes n keys, count offsets (or null) and a counter.
    unsafe { boundary_descents(keys, n, off, count, seg, mode, across) }
}

/// Boundary descents of 64-bit keys (see [`boundary_descents`]).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn segment_boundaries_u64(
    keys: *const u64,
    n: u64,
    off: *const u32,
    count: u64,
    seg: u64,
    mode: u32,
    across: *mut u32,
) {
    // SAFETY: as above.
    unsafe { boundary_descents(keys, n, off, count, seg, mode, across) }
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            /// Listed segments of up to `chunk <= 256` items, several per warp, 8 keys per lane.
            #[unsafe(export_name = concat!("segmented_chunks_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn chunks(
                keys: *mut $K,
                vals: *mut $V,
                lists: *const u64,
                count: u32,
                chunk: u32,
            ) {
                // SAFETY: the host passes the arrays and a list of `count` segments.
                unsafe {
                    sort_listed_chunks::<$K, $V, { KEYS_PER_LANE as usize }>(Items { keys, vals }, lists, count, chunk)
                }
            }
            /// Listed segments of up to 512 items, one per warp, 16 keys per lane.
            #[unsafe(export_name = concat!("segmented_warp512_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn warp512(keys: *mut $K, vals: *mut $V, lists: *const u64, count: u32) {
                // SAFETY: the host passes the arrays and a list of `count` segments.
                unsafe { sort_listed_chunks::<$K, $V, 16>(Items { keys, vals }, lists, count, 512) }
            }
            /// Listed segments of up to `blockDim * KEYS_PER_LANE` items, one block each.
            #[unsafe(export_name = concat!("segmented_blocks_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn blocks(
                keys: *mut $K,
                vals: *mut $V,
                lists: *const u64,
                count: u32,
            ) {
                // SAFETY: as above, with a tile of shared memory.
                unsafe { sort_listed_blocks::<$K, $V>(Items { keys, vals }, lists, count) }
            }
        }
    };
}
crate::for_items!(entries);
