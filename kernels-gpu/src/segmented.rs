//! Segmented sorts: many independent segments sorted at once, each by the
//! kernel its length needs (the size classes of `config::segment_class`):
//! several segments of up to 256 items per warp (`segmented_chunks`), a warp
//! per segment up to 512 (`segmented_warp`), a block per segment up to 8192
//! (`segmented_block`); the host runs the full merge sort on longer ones.
//! Every kernel finds its segments through [`Bounds`]: equal rows, or a list
//! of segments given by offsets (as CUB's `DeviceSegmentedSort`: segment `s`
//! is `[off[s], off[s + 1])`), which the kernels here check, count by class
//! and list first. Also the segmented sortedness check.

use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

use core::ptr::NonNull;

use crate::arch::{
    block_dim, block_idx, dynamic_smem, global_thread, global_warp, grid_dim, grid_threads, lane_id, sync_block,
    sync_block_or, sync_warp, thread_idx,
};
use crate::block_network::Block;
use crate::span::{self, SpanKey};
use crate::checks::Bits64;
#[cfg(target_arch = "nvptx64")]
use crate::config::warp_sort_batch;
use crate::config::{
    KEYS_PER_LANE, SEGMENT_CLASSES, SEGMENT_CURSORS, SEGMENT_FIRST, SEGMENT_LAST, WARP_SIZE,
    segment_class,
};
use crate::item::{Item, Items, Key, Pair, PlacedKey, Word};
use crate::network;
use crate::tile::{load_blocked, store_blocked};
use crate::warp;

/// The segment of thread `i` (`i < segs`): whether its offsets are in order,
/// and its size class (0, nothing to sort, for an odd segment when
/// `odd_sorted`: the sample sort's equality buckets, sorted already).
///
/// # Safety
/// `off` holds `segs + 1` offsets and `i < segs`.
#[inline(always)]
unsafe fn class_of(off: *const u32, i: usize, odd_sorted: bool) -> (bool, u32) {
    // SAFETY: i + 1 <= segs.
    let (a, b) = unsafe { (*off.add(i), *off.add(i + 1)) };
    let unlisted = a > b || (odd_sorted && i % 2 == 1);
    (a <= b, if unlisted { 0 } else { segment_class(b - a) })
}

/// Calls `f(class, lanes)` once per distinct class among the lanes whose
/// `listed` holds, with the mask of the lanes of that class (warp-uniform:
/// every lane calls this together).
#[inline(always)]
fn per_class(listed: bool, class: u32, mut f: impl FnMut(u32, u32)) {
    let mut pending = warp::ballot(listed);
    while pending != 0 {
        let c = warp::shfl_idx(class, pending.trailing_zeros());
        let lanes = warp::ballot(listed && class == c);
        f(c, lanes);
        pending &= !lanes;
    }
}

/// Calls `f(i, ok, class, listed)` for every segment `i` of this thread's
/// part of the grid (`i` past `segs` on the last round: `listed` false),
/// in a grid-stride loop a warp at a time: warp-uniform, so that the votes
/// in `f` see the whole warp. `ok`: the segment's offsets are in order;
/// `listed`: they are, and its class is not 0.
///
/// # Safety
/// `off` holds `segs + 1` offsets.
#[inline(always)]
unsafe fn each_class_round(
    off: *const u32,
    segs: usize,
    odd_sorted: bool,
    mut f: impl FnMut(usize, bool, u32, bool),
) {
    let lane = lane_id() as usize;
    let mut base = global_thread() - lane;
    while base < segs {
        let i = base + lane;
        // SAFETY: i < segs.
        let (ok, class) = if i < segs { unsafe { class_of(off, i, odd_sorted) } } else { (true, 0) };
        f(i, ok, class, i < segs && ok && class != 0);
        base += grid_threads();
    }
}

/// The block's three `SEGMENT_CLASSES` words of shared memory: counts,
/// cursors, first places.
#[inline(always)]
fn class_words() -> (*mut u32, *mut u32, *mut u32) {
    let w = dynamic_smem::<u32>();
    // SAFETY: SEGMENT_CLASSES_SMEM holds the three arrays.
    unsafe { (w, w.add(SEGMENT_CLASSES), w.add(2 * SEGMENT_CLASSES)) }
}

/// Counts the block's listed segments per class into `counts` (shared,
/// zeroed): a warp's segments of one class by one shared atomic. With
/// `bad`, lowers it to every `i` whose offsets decrease.
///
/// # Safety
/// As [`each_class_round`]; `counts` holds `SEGMENT_CLASSES` shared words.
#[inline(always)]
unsafe fn count_block(off: *const u32, segs: usize, odd_sorted: bool, counts: *mut u32, bad: Option<*mut u32>) {
    let lane = lane_id();
    let count = |i: usize, ok: bool, class: u32, listed: bool| {
        if let (false, Some(first_bad)) = (ok, bad) {
            // SAFETY: a valid global word.
            unsafe { AtomicU32::from_ptr(first_bad).fetch_min(i as u32, Relaxed) };
        }
        per_class(listed, class, |c, lanes| {
            if lane == lanes.trailing_zeros() {
                // SAFETY: c < SEGMENT_CLASSES.
                unsafe { AtomicU32::from_ptr(counts.add(c as usize)).fetch_add(lanes.count_ones(), Relaxed) };
            }
        });
    };
    // SAFETY: the caller's contract.
    unsafe { each_class_round(off, segs, odd_sorted, count) }
}

/// Zeroes the block's class words.
#[inline(always)]
fn clear_class_words() {
    let (counts, cursors, _) = class_words();
    let t = thread_idx() as usize;
    if t < SEGMENT_CLASSES {
        // SAFETY: t < SEGMENT_CLASSES.
        unsafe {
            *counts.add(t) = 0;
            *cursors.add(t) = 0;
        }
    }
    sync_block();
}

/// Checks the offsets and counts the segments of each class:
/// `counters[0]` becomes the first `i` with `off[i] > off[i + 1]` (the host
/// sets it to `u32::MAX`), `counters[1 + c]` the segments of class `c`,
/// and the last two words `off[0]` and `off[segs]`. Unless `odd_sorted` is
/// 0, odd segments are runs of equal keys in order (the sample sort's
/// equality buckets): checked, but neither counted nor listed. The block
/// counts in shared memory and adds its counts once.
///
/// # Safety
/// `off` holds `segs + 1` offsets; `counters` holds `SEGMENT_COUNTERS` words;
/// [`SEGMENT_CLASSES_SMEM`](crate::config::SEGMENT_CLASSES_SMEM) of shared memory.
#[inline(always)]
pub unsafe fn count_classes(off: *const u32, segs: u64, odd_sorted: u32, counters: *mut u32) {
    crate::arch::chain_launch();
    let segs = segs as usize;
    if global_thread() == 0 {
        // SAFETY: off holds segs + 1 offsets; counters has these words.
        unsafe {
            *counters.add(SEGMENT_FIRST) = *off;
            *counters.add(SEGMENT_LAST) = *off.add(segs);
        }
    }
    clear_class_words();
    let (counts, _, _) = class_words();
    // SAFETY: the caller's contract; the block's counts.
    unsafe { count_block(off, segs, odd_sorted != 0, counts, Some(counters)) };
    sync_block();
    let t = thread_idx() as usize;
    if t < SEGMENT_CLASSES {
        // SAFETY: t < SEGMENT_CLASSES; counters has a word per class past the first.
        unsafe {
            let c = *counts.add(t);
            if c != 0 {
                AtomicU32::from_ptr(counters.add(1 + t)).fetch_add(c, Relaxed);
            }
        }
    }
}

/// Lists every segment of a class `c >= 1` after [`count_classes`] ran on
/// the same offsets with the same `odd_sorted`, as `start | end << 32` (so
/// that the sorts read a segment's bounds with one load): class `c`'s list
/// follows those of classes `1..c`. Unless `ids` is null, each entry's
/// segment goes to the same entry of `ids` (where the sorts find a
/// segment's known span, `span::Known`). Lists nothing when the counts show bad
/// offsets (a decrease, `off[0] != 0` or `off[segs] != n`), and never writes
/// at or past entry `room`. The block counts its segments per class, takes
/// a run of each class's list with one atomic, and lists its segments there
/// (in no set order).
///
/// # Safety
/// `off` holds `segs + 1` offsets; `counters` holds `SEGMENT_COUNTERS` words
/// as `count_classes` left them (cursors zero); `lists` (and `ids`, unless
/// null) holds `room` entries;
/// [`SEGMENT_CLASSES_SMEM`](crate::config::SEGMENT_CLASSES_SMEM) of shared memory.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn list_classes(
    off: *const u32,
    segs: u64,
    odd_sorted: u32,
    n: u64,
    counters: *mut u32,
    lists: *mut u64,
    ids: *mut u32,
    room: u64,
) {
    crate::arch::chain_launch();
    // SAFETY: the counters are valid; the count kernel finished before this one started.
    let ok = unsafe {
        *counters == u32::MAX && *counters.add(SEGMENT_FIRST) == 0 && *counters.add(SEGMENT_LAST) as u64 == n
    };
    if !ok {
        return; // the whole grid alike
    }
    let (segs, odd_sorted) = (segs as usize, odd_sorted != 0);
    clear_class_words();
    let (counts, cursors, firsts) = class_words();
    // SAFETY: the caller's contract; the block's counts.
    unsafe { count_block(off, segs, odd_sorted, counts, None) };
    sync_block();
    let t = thread_idx() as usize;
    if t < SEGMENT_CLASSES {
        // SAFETY: every index stays inside the counters and the class words.
        unsafe {
            let mut first = 0u32;
            for k in 1..t {
                first += *counters.add(1 + k);
            }
            let c = *counts.add(t);
            if c != 0 {
                first += AtomicU32::from_ptr(counters.add(SEGMENT_CURSORS + t)).fetch_add(c, Relaxed);
            }
            *firsts.add(t) = first;
        }
    }
    sync_block();
    let lane = lane_id();
    let list = |i: usize, _: bool, class: u32, listed: bool| {
        per_class(listed, class, |c, lanes| {
            let leader = lanes.trailing_zeros();
            let mut first = 0u32;
            if lane == leader {
                // SAFETY: c < SEGMENT_CLASSES: the block's words.
                unsafe {
                    first = *firsts.add(c as usize)
                        + AtomicU32::from_ptr(cursors.add(c as usize)).fetch_add(lanes.count_ones(), Relaxed);
                }
            }
            let slot = warp::shfl_idx(first, leader) as u64 + (lanes & ((1 << lane) - 1)).count_ones() as u64;
            if lanes & (1 << lane) != 0 && slot < room {
                // SAFETY: slot < room; i < segs.
                unsafe { *lists.add(slot as usize) = *off.add(i) as u64 | (*off.add(i + 1) as u64) << 32 };
                if !ids.is_null() {
                    // SAFETY: as above; ids holds room entries.
                    unsafe { *ids.add(slot as usize) = i as u32 };
                }
            }
        });
    };
    // SAFETY: the caller's contract.
    unsafe { each_class_round(off, segs, odd_sorted, list) }
}

/// How a segmented kernel finds its segments: equal rows, or a list.
///
/// - Rows (`lists` null): segment `j` is `[j * len, min((j + 1) * len, n))`,
///   `count = ceil(n / len)` of them (as `torch.sort` along the last
///   dimension sees a tensor);
/// - a list (made by [`list_classes`]): `count` entries `start | end << 32`.
///
/// Every segmented sort kernel takes its segments this way, so the chunk,
/// warp and block kernels exist once for both.
#[derive(Clone, Copy)]
pub struct Bounds {
    lists: *const u64,
    count: usize,
    n: usize,
    len: usize,
}

impl Bounds {
    /// The segments a kernel's `(lists, count, n, len)` parameters describe.
    #[inline(always)]
    pub fn new(lists: *const u64, count: u64, n: u64, len: u64) -> Self {
        Bounds { lists, count: count as usize, n: n as usize, len: len as usize }
    }

    /// Start and length of segment `j` (`(0, 0)` from `count` on).
    ///
    /// # Safety
    /// Rows lie inside `n` items; a list holds `count` entries.
    #[inline(always)]
    unsafe fn get(&self, j: usize) -> (usize, usize) {
        if j >= self.count {
            return (0, 0);
        }
        if self.lists.is_null() {
            let start = j * self.len;
            return (start, self.len.min(self.n - start));
        }
        // SAFETY: j < count.
        let e = unsafe { *self.lists.add(j) };
        let (a, b) = (e as u32, (e >> 32) as u32);
        (a as usize, (b - a) as usize)
    }
}

/// This thread's `N` keys of a segment of `len` items (lane-blocked, as
/// [`load_blocked`]), pads at and past `len`: a stable kernel's keys, which
/// it sorts beside their places (see [`PlacedKey`]).
///
/// # Safety
/// `seg` holds at least `len` items.
#[inline(always)]
unsafe fn load_keys<K: Key, V: Word, const N: usize>(seg: &Items<K, V>, thread: usize, len: usize) -> [K; N] {
    let keys = Items::<K, ()> { keys: seg.keys, vals: NonNull::dangling().as_ptr() };
    // SAFETY: the caller's contract.
    unsafe { load_blocked::<K, (), N>(&keys, thread, len) }.map(|p| p.k)
}

/// This thread's `N` keys of a segment of `len` items, each beside its
/// place in the segment ([`load_keys`], then [`PlacedKey::placed`]): a
/// stable kernel's items, pads placed at and past `len`.
///
/// # Safety
/// `seg` holds at least `len` items.
#[inline(always)]
unsafe fn load_placed<K: PlacedKey, V: Word, const N: usize>(
    seg: &Items<K, V>,
    thread: usize,
    len: usize,
) -> [K::Placed; N] {
    // SAFETY: the caller's contract.
    let x = unsafe { load_keys::<K, V, N>(seg, thread, len) };
    core::array::from_fn(|r| x[r].placed((thread * N + r) as u32))
}

/// The items of sorted placed keys (a [`load_placed`] tile after its
/// network): each key with the payload at its place in `from` (the
/// segment's payloads, where they are now), pads past `len`.
///
/// # Safety
/// `from` holds the segment's `len` payloads.
#[inline(always)]
unsafe fn gather_placed<K: PlacedKey, V: Word, const N: usize>(
    x: &[K::Placed; N],
    from: *const V,
    thread: usize,
    len: usize,
) -> [Pair<K, V>; N] {
    core::array::from_fn(|r| {
        // SAFETY: the first `len` slots hold the real keys, whose places lie below `len`.
        let v = if thread * N + r < len { unsafe { *from.add(K::place_of(x[r]) as usize) } } else { V::default() };
        Pair { k: K::key_of(x[r]), v }
    })
}

/// A warp's network over its tiles in registers: the whole network (each
/// tile a segment), or its phases up to `chunk` (each aligned chunk a
/// segment).
#[derive(Clone, Copy)]
struct WarpNetwork {
    lane: u32,
    chunk: Option<usize>,
}

impl WarpNetwork {
    #[inline(always)]
    fn sort<I: Item, const N: usize, const B: usize>(self, xs: &mut [[I; N]; B]) {
        match self.chunk {
            None => network::warp_sort_batch(xs, self.lane),
            Some(chunk) => {
                for x in xs {
                    network::warp_sort_chunks(x, self.lane, chunk);
                }
            }
        }
    }
}

/// Sorts the segments of `bounds` (each at most `chunk` items; `chunk` a
/// power of two from `N` to `32 * N`): a warp tile of `32 * N` items holds
/// `32 * N / chunk` segments, one per aligned chunk of `chunk / N` lanes,
/// each lane loading its `N` items of its segment (16-byte vector loads
/// where aligned and whole), `MAX` pads past the segment's end; then the
/// network's phases up to `chunk` (the whole network, unrolled, when
/// `chunk = 32 * N`). Grid-stride over warp tiles.
///
/// With `STABLE` (the stable kernels), equal keys keep their order: the
/// network sorts the keys beside their places ([`load_placed`]), and each
/// payload is then fetched from its key's place in the segment, every lane's
/// fetches before any lane's stores. With `known` (the sample sort's
/// buckets, which span narrowly), items of 8 bytes take the compact words
/// where every segment's span in the warp allows ([`by_words`]: the span
/// found by shuffles within the segment's lanes, sooner than the known
/// one's two dependent loads).
///
/// # Safety
/// `items` holds every segment of `bounds`, each of at most `chunk` items.
#[inline(always)]
pub unsafe fn sort_chunks<K: PlacedKey + SpanKey, V: Word, const N: usize, const STABLE: bool>(
    items: Items<K, V>,
    bounds: Bounds,
    chunk: u32,
    known: Option<span::Known<K>>,
) {
    crate::arch::chain_launch();
    let chunk = chunk as usize;
    let lane = lane_id() as usize;
    // `chunk` and `N` are powers of two: a segment spans `2^shift` lanes
    // (shifts and masks in the loop, not divisions by a run-time value).
    let shift = (chunk / N).trailing_zeros();
    let per_warp = WARP_SIZE as usize >> shift;
    let whole = chunk == WARP_SIZE as usize * N;
    let net = WarpNetwork { lane: lane as u32, chunk: if whole { None } else { Some(chunk) } };
    let compact = takes_words::<K, V>(known.is_some());
    let mut first = global_warp() * per_warp;
    while first < bounds.count {
        // SAFETY: the segments lie inside the arrays.
        let (start, len) = unsafe { bounds.get(first + (lane >> shift)) };
        let t = lane & ((1 << shift) - 1);
        // SAFETY: as above; this warp owns its segments.
        let seg = unsafe { items.offset(start) };
        // SAFETY (every load and store): as above.
        if compact && unsafe {
            let keys = load_keys::<K, V, N>(&seg, t, len);
            by_words(&[seg], &[len], &[keys], t, 1 << shift, net)
        } {
            first += grid_threads() / WARP_SIZE as usize * per_warp;
            continue;
        }
        let x = if STABLE {
            let mut w = unsafe { load_placed::<K, V, N>(&seg, t, len) }; // SAFETY: as above.
            net.sort(core::array::from_mut(&mut w));
            let x = unsafe { gather_placed(&w, seg.vals, t, len) }; // SAFETY: the segment's payloads.
            sync_warp();
            x
        } else {
            let mut x = unsafe { load_blocked::<K, V, N>(&seg, t, len) }; // SAFETY: as above.
            net.sort(core::array::from_mut(&mut x));
            x
        };
        unsafe { store_blocked(&seg, t, len, &x) }; // SAFETY: this warp's segment, its loads done.
        first += grid_threads() / WARP_SIZE as usize * per_warp;
    }
}

/// Sorts the segments of `bounds` a warp each (each at most `32 * N`
/// items, in registers), `B` consecutive segments per warp sorted together
/// (their networks interleaved, so that short segments keep enough loads in
/// flight: `config::warp_sort_batch`). Grid-stride. `STABLE` and `known`
/// as for [`sort_chunks`].
///
/// # Safety
/// `items` holds every segment of `bounds`, each of at most `32 * N` items.
#[inline(always)]
pub unsafe fn sort_warps<K: PlacedKey + SpanKey, V: Word, const N: usize, const B: usize, const STABLE: bool>(
    items: Items<K, V>,
    bounds: Bounds,
    known: Option<span::Known<K>>,
) {
    crate::arch::chain_launch();
    let lane = lane_id() as usize;
    let compact = takes_words::<K, V>(known.is_some());
    let net = WarpNetwork { lane: lane as u32, chunk: None };
    let mut first = global_warp() * B;
    while first < bounds.count {
        // SAFETY: the segments lie inside the arrays; past the end, (0, 0).
        let segs: [(usize, usize); B] = core::array::from_fn(|b| unsafe { bounds.get(first + b) });
        let lens = segs.map(|s| s.1);
        // SAFETY (every load and store): as above (nothing is read from an
        // empty segment); this warp owns these segments.
        if compact && unsafe {
            let seg: [Items<K, V>; B] = segs.map(|(start, _)| items.offset(start));
            let keys: [[K; N]; B] = core::array::from_fn(|b| load_keys::<K, V, N>(&seg[b], lane, lens[b]));
            by_words(&seg, &lens, &keys, lane, WARP_SIZE, net)
        } {
            first += grid_threads() / WARP_SIZE as usize * B;
            continue;
        }
        let xs: [[Pair<K, V>; N]; B] = if STABLE {
            let mut ws: [[K::Placed; N]; B] =
                core::array::from_fn(|b| unsafe { load_placed::<K, V, N>(&items.offset(segs[b].0), lane, segs[b].1) });
            net.sort(&mut ws);
            let xs = core::array::from_fn(|b| {
                let (start, len) = segs[b];
                unsafe { gather_placed(&ws[b], items.offset(start).vals, lane, len) }
            });
            sync_warp();
            xs
        } else {
            let mut xs: [[Pair<K, V>; N]; B] =
                core::array::from_fn(|b| unsafe { load_blocked::<K, V, N>(&items.offset(segs[b].0), lane, segs[b].1) });
            net.sort(&mut xs);
            xs
        };
        for (x, &(start, len)) in xs.iter().zip(&segs) {
            // SAFETY: as above; this warp owns these segments.
            unsafe { store_blocked(&items.offset(start), lane, len, x) };
        }
        first += grid_threads() / WARP_SIZE as usize * B;
    }
}

/// Whether items of these keys and payloads take the compact words where
/// the host knows their keys' spans (`known`: the sample sort's buckets):
/// items of 8 bytes (`u32` keys with 4-byte payloads, `u64` keys alone),
/// whose network then moves half of what theirs does. (`u32` keys alone
/// are such words already; wider items' kernels spilled with them:
/// `docs/PERFORMANCE.md`.)
#[inline(always)]
fn takes_words<K: Key, V: Word>(known: bool) -> bool {
    let bytes = size_of::<Pair<K, V>>();
    known && crate::config::compact_words(bytes as u32)
}

/// The span of listed segment `j` of `bounds` where `known` holds it
/// (none past the segments).
#[inline(always)]
fn known_span<K: SpanKey>(known: Option<span::Known<K>>, bounds: &Bounds, j: usize) -> Option<(K, K)> {
    // SAFETY: j is one of the listed entries.
    known.filter(|_| j < bounds.count).and_then(|k| unsafe { k.of(j) })
}

/// The words of a segment of `len` items from its known span, where the
/// span allows them (see [`max_shift`]).
#[inline(always)]
fn known_words<K: SpanKey, V: Word>(span: Option<(K, K)>, len: usize) -> Option<span::Words<K>> {
    span.map(|(lo, hi)| span::Words::new(lo, hi, len)).filter(|w| w.shift <= max_shift::<V>())
}

/// The most low bits the compact words may lose: none with payloads (their
/// words sort exactly, ties by place), 32 for keys alone (sorted again
/// where equal words left them out of order).
#[inline(always)]
fn max_shift<V: Word>() -> u32 {
    if size_of::<V>() == 0 { u32::BITS } else { 0 }
}

/// A warp's `B` segments (`segs`, of `lens` items) by the compact words
/// (see [`by_compact`]), one segment an aligned group of `lanes` lanes
/// (this lane its group's `t`-th, `keys` its `N` keys of each, lane-blocked
/// with pads), if every group's span allows: whether they were (else
/// nothing is written). `net` sorts the words; each key
/// comes from its word (or, for keys alone, from its place in the segment),
/// each payload from its place, every lane's reads before any lane's
/// stores; keys alone that equal words left out of order go through `net`
/// again, over the items. Called by the whole warp.
///
/// # Safety
/// Each segment of `segs` holds its `lens` items, and this warp owns them.
#[inline(always)]
unsafe fn by_words<K: SpanKey, V: Word, const N: usize, const B: usize>(
    segs: &[Items<K, V>; B],
    lens: &[usize; B],
    keys: &[[K; N]; B],
    t: usize,
    lanes: u32,
    net: WarpNetwork,
) -> bool {
    let words: [span::Words<K>; B] = core::array::from_fn(|b| {
        let (lo, hi) = span::group_span(&keys[b], t, lens[b], lanes);
        span::Words::new(lo, hi, lens[b])
    });
    if !warp::all(words.iter().all(|w| w.shift <= max_shift::<V>())) {
        return false;
    }
    let mut w: [[Pair<u32, ()>; N]; B] =
        core::array::from_fn(|b| core::array::from_fn(|r| words[b].word(keys[b][r], t * N + r, lens[b])));
    net.sort(&mut w);
    let keys_alone = size_of::<V>() == 0;
    let mut x: [[Pair<K, V>; N]; B] = core::array::from_fn(|b| {
        core::array::from_fn(|r| {
            if t * N + r >= lens[b] {
                return Pair::pad();
            }
            let at = words[b].place(w[b][r].k);
            // SAFETY: a real item's place lies below its segment's length.
            if keys_alone { unsafe { segs[b].get(at) } } else { Pair { k: words[b].key(w[b][r].k, 0), v: unsafe { *segs[b].vals.add(at) } } }
        })
    });
    // Every lane's reads of the segments before any lane's stores.
    sync_warp();
    if keys_alone && warp::any(words.iter().any(|w| w.shift > 0)) {
        let keys: [[K; N]; B] = x.map(|x| x.map(|p| p.k));
        if warp::any(keys.iter().zip(lens).any(|(k, &len)| span::group_out_of_order(k, t, len, lanes))) {
            net.sort(&mut x);
        }
    }
    for b in 0..B {
        // SAFETY: this warp's segment, every lane's reads done.
        unsafe { store_blocked(&segs[b], t, lens[b], &x[b]) };
    }
    true
}

/// The block's segment `seg` of `len` items sorted by the compact network,
/// if its keys' span allows: whether it was. `keys` are this thread's, as
/// [`load_blocked`] places them, and `vals` their payloads if loaded (else
/// they are read from `seg` once the network is done). The span is the
/// `known` one where that allows the words (no reduction, no barrier);
/// else it is found first (a reduction and a barrier; every key equal, the
/// segment is in order already). Each item then
/// becomes a `u32` word, its key's offset from the smallest above its place
/// in the segment (`span::Words`), and the network sorts the words; each
/// key is the smallest plus its word's high bits, each payload fetched from
/// the place in its low bits, staged in the second half of the shared
/// memory (the network's words take the first). With payloads the whole
/// offset must fit the word (ties then order by place: stable). Keys alone
/// (`u64`) may lose up to 32 low bits of their offsets: those bits are
/// staged instead, and each run of keys with equal words is put in order
/// by rank (`span::order_runs`; where runs are long, the network over the
/// keys sorts them again). A span found that does not fit costs a
/// reduction and two barriers.
///
/// # Safety
/// As [`sort_blocks`] (shared memory of a tile of 8-byte items, which no
/// thread reads any more); called by the whole block.
#[inline(always)]
unsafe fn by_compact<K: SpanKey, V: Word>(
    seg: &Items<K, V>,
    keys: &[K; KEYS_PER_LANE as usize],
    vals: Option<&[V; KEYS_PER_LANE as usize]>,
    known: Option<(K, K)>,
    warp: u32,
    lane: u32,
    len: usize,
) -> bool {
    const N: usize = KEYS_PER_LANE as usize;
    let (t, tile) = (crate::arch::thread_idx() as usize, block_dim() as usize * N);
    let smem: *mut u8 = dynamic_smem();
    let keys_alone = size_of::<V>() == 0;
    let known = known_words::<K, V>(known, len);
    let words = match known {
        Some(words) => words,
        None => {
            // SAFETY: the whole block; the shared memory is free and holds
            // far more than two keys a warp.
            let (lo, hi) = unsafe { span::span(smem.cast(), keys, t, len) };
            let words = span::Words::new(lo, hi, len);
            if lo >= hi || words.shift > max_shift::<V>() {
                // Every warp has read the span before the shared memory is used again.
                sync_block();
                // Every key equal (or fewer than two): in order already.
                return lo >= hi;
            }
            words
        }
    };
    // SAFETY: a tile of `u32` words, then a tile of payloads of at most 4
    // bytes (or of the keys' low words).
    let staged: *mut u8 = unsafe { smem.add(tile * size_of::<u32>()) };
    let lows = keys_alone && words.shift > 0;
    if lows {
        // SAFETY: this thread's places, inside the tile.
        unsafe { <u32 as Word>::write_run(staged.cast::<u32>().add(t * N), &keys.map(|k| k.above(words.lo, 0))) };
    } else if let Some(vals) = vals.filter(|_| !keys_alone) {
        // SAFETY: as above.
        unsafe { V::write_run(staged.cast::<V>().add(t * N), vals) };
    }
    let mut w: [Pair<u32, ()>; N] = core::array::from_fn(|r| words.word(keys[r], t * N + r, len));
    if known.is_none() {
        // Every warp has read the span: the network may take the shared memory.
        sync_block();
    }
    let b: Block<Pair<u32, ()>> = Block { smem: smem.cast(), warp, lane };
    b.sort(&mut w, tile, len);
    if vals.is_none() && !keys_alone {
        // SAFETY: the segment's len payloads into the second half.
        unsafe { span::stage(seg.vals, staged.cast(), t, len) };
    }
    sync_block();
    let firsts: *mut u32 = smem.cast();
    if lows {
        // The words' half is free past the barrier: each thread's first
        // word, for the thread before it (`span::ties`).
        // SAFETY: a word a thread, inside the first half.
        unsafe { *firsts.add(t) = w[0].k };
    }
    let mut x: [Pair<K, V>; N] = core::array::from_fn(|r| {
        if t * N + r >= len {
            return Pair::pad();
        }
        let at = words.place(w[r].k);
        // SAFETY: a real item's place lies below len, staged above.
        let low = if lows { unsafe { *staged.cast::<u32>().add(at) } } else { 0 };
        let v = if keys_alone { V::default() } else { unsafe { *staged.cast::<V>().add(at) } };
        Pair { k: words.key(w[r].k, low), v }
    });
    // Every thread has read its staged words and written its first word
    // (the barrier), then whether any words tie (a barrier reduction).
    // SAFETY: the next thread's first word, where it has a real item.
    if lows && { sync_block(); sync_block_or(span::ties(&w, || unsafe { *firsts.add(t + 1) }, t, len, words.place_bits)) } {
        // Equal words in the block (every thread is past the reads of the
        // shared memory): their keys put in order.
        let mut keys = x.map(|p| p.k);
        // SAFETY: the whole block; a tile of keys.
        if !unsafe { span::order_runs(smem.cast(), &mut keys, &words, t, len) } {
            // Long runs of equal words (keys clustered far apart): the
            // network over the keys (every thread is past the reads).
            let b: Block<Pair<K, ()>> = Block { smem: smem.cast(), warp, lane };
            let mut y = keys.map(|k| Pair { k, v: () });
            b.sort(&mut y, tile, len);
            keys = y.map(|p| p.k);
        }
        x = keys.map(|k| Pair { k, v: V::default() });
    }
    // SAFETY: this block's segment, its loads done.
    unsafe { store_blocked(seg, t, len, &x) };
    true
}

/// Sorts the segments of `bounds` a block each (grid-stride), a tile of
/// `blockDim * KEYS_PER_LANE` items (at least every segment's length) in
/// registers and shared memory. With `known` (the sample sort's buckets),
/// `u32` keys with 4-byte payloads and `u64` keys alone take the compact
/// network where their span allows ([`by_compact`]: the known span, or one
/// found in the keys loaded for the network); other segments the network
/// over their items. With `STABLE` as for
/// [`sort_chunks`], each payload fetched from the segment's payloads staged
/// in the shared memory the network is done with.
///
/// # Safety
/// `items` holds every segment of `bounds`; shared memory holds one tile
/// of items (and of placed keys, with `STABLE`).
#[inline(always)]
pub unsafe fn sort_blocks<K: PlacedKey + SpanKey, V: Word, const STABLE: bool>(
    items: Items<K, V>,
    bounds: Bounds,
    known: Option<span::Known<K>>,
) {
    crate::arch::chain_launch();
    const N: usize = KEYS_PER_LANE as usize;
    let t = crate::arch::thread_idx();
    let (warp, lane) = (t / WARP_SIZE, t % WARP_SIZE);
    let tile = block_dim() as usize * N;
    let t = t as usize;
    // Only where the host knows the segments' spans (the sample sort's
    // buckets), since a span found that does not fit costs its look.
    let compact = takes_words::<K, V>(known.is_some());
    let mut j = block_idx() as usize;
    while j < bounds.count {
        if j != block_idx() as usize {
            // Every thread is past the last segment's reads of the shared memory.
            sync_block();
        }
        // SAFETY: j < count; the segment lies inside the arrays and this block owns it.
        let (start, len) = unsafe { bounds.get(j) };
        let seg = unsafe { items.offset(start) }; // SAFETY: as above.
        let x = if STABLE {
            let b: Block<K::Placed> = Block { smem: dynamic_smem(), warp, lane };
            let keys = unsafe { load_keys::<K, V, N>(&seg, t, len) }; // SAFETY: as above.
            // SAFETY: the whole block; the segment's items.
            if compact && unsafe { by_compact(&seg, &keys, None, known_span(known, &bounds, j), warp, lane, len) } {
                j += grid_dim() as usize;
                continue;
            }
            let mut w: [K::Placed; N] = core::array::from_fn(|r| keys[r].placed((t * N + r) as u32));
            b.sort(&mut w, tile, len);
            // Every thread is past the network: its slots take the payloads.
            let staged: *mut V = dynamic_smem();
            sync_block();
            let own = (t * N).min(len)..((t + 1) * N).min(len);
            // SAFETY: this thread's payloads of the segment, into its own slots of the tile.
            if own.len() == N {
                unsafe { V::write_run(staged.add(own.start), &V::read_run::<N>(seg.vals.add(own.start))) };
            } else {
                own.for_each(|i| unsafe { *staged.add(i) = *seg.vals.add(i) });
            }
            sync_block();
            let x = unsafe { gather_placed(&w, staged, t, len) }; // SAFETY: the payloads staged above.
            // The staged payloads are read before the next segment's network reuses the slots.
            sync_block();
            x
        } else {
            let b: Block<Pair<K, V>> = Block { smem: dynamic_smem(), warp, lane };
            if compact {
                let x = unsafe { load_blocked::<K, V, N>(&seg, t, len) }; // SAFETY: as above.
                let (keys, vals) = (x.map(|p| p.k), x.map(|p| p.v));
                // SAFETY: the whole block; the segment's items.
                let span = known_span(known, &bounds, j);
                if unsafe { by_compact(&seg, &keys, Some(&vals), span, warp, lane, len) } {
                    j += grid_dim() as usize;
                    continue;
                }
            }
            // Loaded again where the compact words did not fit (rare): so
            // the items need not stay in registers beside the words.
            let mut x = unsafe { load_blocked::<K, V, N>(&seg, t, len) }; // SAFETY: as above.
            b.sort(&mut x, tile, len);
            x
        };
        unsafe { store_blocked(&seg, t, len, &x) }; // SAFETY: this block's segment, its loads done.
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
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = crate::kernel_name!(segment_classes_count))]
pub unsafe extern "ptx-kernel" fn segment_classes_count(off: *const u32, segs: u64, odd_sorted: u32, counters: *mut u32) {
    // SAFETY: the host passes segs + 1 offsets, the counters and the shared memory.
    unsafe { count_classes(off, segs, odd_sorted, counters) }
}

/// Lists the segments of each class (see [`list_classes`]).
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = crate::kernel_name!(segment_classes_list))]
pub unsafe extern "ptx-kernel" fn segment_classes_list(
    off: *const u32,
    segs: u64,
    odd_sorted: u32,
    n: u64,
    counters: *mut u32,
    lists: *mut u64,
    ids: *mut u32,
    room: u64,
) {
    // SAFETY: the host passes segs + 1 offsets, the counted counters, `room` list entries (and ids, or null) and the shared memory.
    unsafe { list_classes(off, segs, odd_sorted, n, counters, lists, ids, room) }
}

/// Boundary descents of 32-bit keys (see [`boundary_descents`]).
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = concat!(crate::kernel_name!(segment_boundaries), "_u32"))]
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
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = concat!(crate::kernel_name!(segment_boundaries), "_u64"))]
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

/// Defines a segmented kernel: parameters `(keys, vals, lists, count, n,
/// len)` (the items and their [`Bounds`]) and `args`, running
/// `call(items, bounds, passed...)` (`passed` made of the `args`).
#[cfg(target_arch = "nvptx64")]
macro_rules! segmented_kernel {
    (
        $export:expr, $(#[$m:meta])*
        fn $f:ident<$K:ty, $V:ty>($($arg:ident: $t:ty),*) => $call:expr; [$($passed:expr),*]
    ) => {
        $(#[$m])*
        #[unsafe(export_name = $export)]
        pub unsafe extern "ptx-kernel" fn $f(
            keys: *mut <$K as $crate::item::Key>::Mem,
            vals: *mut $V,
            lists: *const u64,
            count: u64,
            n: u64,
            len: u64,
            $($arg: $t),*
        ) {
            let bounds = Bounds::new(lists, count, n, len);
            // SAFETY: the host passes the arrays, and segments the kernel
            // sorts (its plan chose the kernel by their length).
            unsafe { $call(Items { keys, vals }, bounds, $($passed),*) }
        }
    };
}

/// The segmented kernels of one item type: the chunk kernel, a warp kernel
/// per width (every width of `config::warp_sort_widths!`, or the entries
/// given after `;`) and the block kernel, over the caller's segments (no
/// span known: the network over the items alone); after `@stable`, the
/// stable kernels (`segmented_*_stable_*`) of the widths the size classes
/// use (`config::class_warp_widths!`); after `@known`, the kernels of the
/// sample sort's buckets, told each listed segment's span (`span::Known`:
/// compact words where it allows), of the same widths. All three make their entry points
/// in one arm (`@entry`), given the parameters past the items and bounds
/// and what the sorts are told of the spans.
#[cfg(target_arch = "nvptx64")]
macro_rules! entries {
    (@warps all widths) => {
        crate::warp_sort_widths!(width_modules, warp);
    };
    (@warps $(($module:ident, $k:literal, $w:literal)),*) => {
        width_modules!(warp; $(($module, $k, $w)),*);
    };
    (@stable $K:ty, $V:ty, $sfx:ident) => {
        crate::class_warp_widths!(
            entries,
            (@kernels true, (segmented_chunks_stable, segmented_warp_stable, segmented_block_stable), $K, $V, $sfx)
        );
    };
    (@known $stable:literal, $names:tt, $K:ty, $V:ty, $sfx:ident) => {
        crate::class_warp_widths!(
            entries,
            (
                @entry $stable, $names, $K, $V, $sfx,
                (spans: *const $K, ids: *const u32) => Some(span::Known::new(spans, ids)),
                ", told each listed segment's span (`spans` and `ids`: `span::Known`)"
            )
        );
    };
    // A width list's call back (`class_warp_widths!`): the arm's head, then the widths.
    (($($head:tt)*); $($widths:tt)*) => {
        entries!($($head)*; $($widths)*);
    };
    (@kernels $stable:literal, $names:tt, $K:ty, $V:ty, $sfx:ident; $($widths:tt)*) => {
        entries!(@entry $stable, $names, $K, $V, $sfx, () => None, ""; $($widths)*);
    };
    (
        @entry $stable:literal, ($chunks:ident, $warp:ident, $block:ident), $K:ty, $V:ty, $sfx:ident,
        ($($arg:ident: $t:ty),*) => $known:expr, $told:literal; $($widths:tt)*
    ) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            segmented_kernel!(
                concat!(crate::kernel_name!($chunks), "_", stringify!($sfx)),
                #[doc = concat!("Segments of up to `chunk <= 256` items, several per warp, 8 keys per lane", $told, ".")]
                fn chunks<$K, $V>(chunk: u32 $(, $arg: $t)*)
                    => sort_chunks::<$K, $V, { KEYS_PER_LANE as usize }, $stable>; [chunk, $known]
            );
            macro_rules! warp {
                ($k:literal, $w:literal) => {
                    segmented_kernel!(
                        concat!(crate::kernel_name!($warp), $w, "_", stringify!($sfx)),
                        #[doc = concat!("Segments of up to `32 * k` items, a warp each", $told, ".")]
                        fn k<$K, $V>($($arg: $t),*)
                            => sort_warps::<$K, $V, $k, { warp_sort_batch($k) as usize }, $stable>; [$known]
                    );
                };
            }
            entries!(@warps $($widths)*);
            segmented_kernel!(
                concat!(crate::kernel_name!($block), "_", stringify!($sfx)),
                #[doc = concat!("Segments of up to `blockDim * KEYS_PER_LANE` items, a block each", $told, ".")]
                fn block<$K, $V>($($arg: $t),*) => sort_blocks::<$K, $V, $stable>; [$known]
            );
        }
    };
    ($K:ty, $V:ty, $sfx:ident) => {
        entries!($K, $V, $sfx; all widths);
    };
    ($K:ty, $V:ty, $sfx:ident; $($widths:tt)*) => {
        entries!(@kernels false, (segmented_chunks, segmented_warp, segmented_block), $K, $V, $sfx; $($widths)*);
    };
}
#[cfg(target_arch = "nvptx64")]
crate::for_items!(entries);

/// The block kernel of `u32` keys alone (`segmented_block_dual_u32`) under
/// the launch bound of two blocks of the largest tile a multiprocessor
/// (`config::DUAL_BLOCK_THREADS_PER_SM`): the same sort as
/// `segmented_block_u32`, in 32 registers a thread. The host runs it for
/// the largest tiles (`Policy::dual_block_min_tile`), where a block of
/// 1,024 threads alone on a multiprocessor idles it at each barrier;
/// smaller tiles run faster with the registers of one block.
#[cfg(all(target_arch = "nvptx64", not(warpsort_custom)))]
pub mod dual {
    use super::*;
    segmented_kernel!(
        concat!(crate::kernel_name!(segmented_block_dual), "_u32"),
        /// Segments of up to `blockDim * KEYS_PER_LANE` `u32` keys, a block each.
        fn block<u32, ()>() => sort_blocks::<u32, (), false>; [None]
    );
}

/// The stable segmented kernels' entry points: items with 4-byte payloads,
/// which are values (the sample sort's stable buckets) or ranks moved as
/// values (the stable segmented sorts, whose ranks ascend in each segment:
/// no segmented kernel compares ranks).
#[cfg(target_arch = "nvptx64")]
pub mod stable {
    use super::*;
    macro_rules! stable_entries {
        ($K:ty, $V:ty, $sfx:ident) => {
            entries!(@stable $K, $V, $sfx);
        };
    }
    crate::for_stable_tiles!(stable_entries);
}

/// The kernels of the sample sort's buckets (`segmented_*_known_*`), told
/// each listed segment's span: the items of 8 bytes, which take the compact
/// words (`config::compact_words`; the host's plan takes them for the same
/// items), unstable and stable (`u32` payloads, values or ranks). Other
/// items' buckets take the caller's kernels: the span would not change
/// their network.
#[cfg(target_arch = "nvptx64")]
pub mod known {
    use super::*;
    entries!(@known false, (segmented_chunks_known, segmented_warp_known, segmented_block_known), u32, u32, u32_u32);
    entries!(@known false, (segmented_chunks_known, segmented_warp_known, segmented_block_known), u64, (), u64);
    /// The stable kernels of the sample sort's buckets.
    pub mod stable {
        use super::*;
        entries!(
            @known true,
            (segmented_chunks_stable_known, segmented_warp_stable_known, segmented_block_stable_known),
            u32, u32, u32_u32
        );
    }
}
