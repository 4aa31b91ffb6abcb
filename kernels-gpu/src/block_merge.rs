//! Merges in shared memory: the serial merge (one thread's run of outputs),
//! GPU-Warpsort's block-merge pass (the tuned steps 2-4) and step 1 by warp
//! sorts and block merges.
//!
//! A block-merge pass merges pairs of sorted runs of `run` items into runs
//! of `2 * run`, cut into tiles of `blockDim * N` outputs, one block each
//! (the paper's step-3 split, done exactly by merge path: every block gets
//! the same work whatever the data). A block's tile:
//! 1. reads where its A and B pieces start (`parts`, one merge-path search
//!    per tile by `merge_path::partition`),
//! 2. stages `A ++ B` in shared memory with coalesced loads,
//! 3. gives every thread `N` consecutive outputs: a merge-path search in
//!    shared memory finds where they start, the serial merge makes them,
//! 4. writes them back through shared memory so that the global stores
//!    coalesce (blocked to striped, through `config::skewed` slots): each
//!    warp its own outputs, after a warp barrier only.
//!
//! A pass waits mostly on latency (Nsight Compute on an H200: 59% of issue
//! slots, 56% of DRAM bandwidth), and its inner loop is written for few
//! instructions: 32-bit tile-local indices, predicates combined with
//! `&`/`|` (selects, no short-circuit branches), no bounds clamp (spare slots
//! take the reads past the inputs), unskewed input slots for 4-byte items
//! (wider items are staged skewed: [`input_slot`]).

use crate::arch::{block_dim, block_idx, dynamic_smem, lane_id, sync_block, sync_warp, thread_idx};
use crate::config::{MERGE_READ_AHEAD, SAMPLE_STRIDE, WARP_SIZE, merge_inputs_skewed, merge_pass_out_region, skewed};
use crate::item::{Item, Items, Key, Pair, PlacedKey, Word};
use crate::merge_path::{Pass, Samples, merge_path_by};
use crate::network::warp_sort;
use crate::tile::{load_blocked, store_blocked};

/// The serial merge's state: the next unconsumed A and B slots of `A ++ B`
/// and the items there. With `AHEAD`, also the items after them, loaded a
/// step ahead so that a step's comparison never waits for a shared-memory
/// load (software pipelining of the merge path): faster where the merge is
/// latency-bound (step 1's rounds, 4-byte items' passes), slower where the
/// two extra items cost occupancy (passes over wider items, on an H200).
/// With `B_PADDED`, B is followed by pads (which order after every item):
/// an exhausted B then offers a pad that A's items never pass, so B's end
/// needs no check of its own.
struct Cursor<I, const AHEAD: bool, const B_PADDED: bool> {
    ai: u32,
    bj: u32,
    a_end: u32,
    b_end: u32,
    xa: I,
    xb: I,
    na: I,
    nb: I,
}

impl<I: Item, const AHEAD: bool, const B_PADDED: bool> Cursor<I, AHEAD, B_PADDED> {
    /// At slot `ai` of A (slots `..a_end`) and slot `bj` of B (`..b_end`).
    #[inline(always)]
    fn new(at: &impl Fn(u32) -> I, ai: u32, a_end: u32, bj: u32, b_end: u32) -> Self {
        let (xa, xb) = (at(ai), at(bj));
        let (na, nb) = if AHEAD { (at(ai + 1), at(bj + 1)) } else { (xa, xb) };
        Cursor { ai, bj, a_end, b_end, xa, xb, na, nb }
    }

    /// The next output (ties from A first). Past both ends it makes junk the
    /// caller drops, reading one slot further each step (and up to
    /// `config::MERGE_READ_AHEAD` past where it stands).
    #[inline(always)]
    fn step(&mut self, at: &impl Fn(u32) -> I) -> I {
        let b_left = B_PADDED || self.bj < self.b_end;
        let take_b = b_left & ((self.ai >= self.a_end) | self.xa.gt(&self.xb));
        let out = if take_b { self.xb } else { self.xa };
        let taken = if take_b { self.bj } else { self.ai };
        if AHEAD {
            let ahead = at(taken + MERGE_READ_AHEAD);
            if take_b {
                (self.xb, self.nb) = (self.nb, ahead);
            } else {
                (self.xa, self.na) = (self.na, ahead);
            }
        } else {
            let x = at(taken + 1);
            if take_b { self.xb = x } else { self.xa = x }
        }
        if take_b { self.bj += 1 } else { self.ai += 1 }
        out
    }
}

/// Merges outputs `diag .. diag + N` of two sorted runs held as `A ++ B` (A
/// at slots `0..la`, B at `la..la + lb` of `at`), handing output `diag + r`
/// to `emit(r, item)`: a merge-path search finds where they start, then `N`
/// cursor steps (see [`Cursor`] for `AHEAD` and `B_PADDED`). Outputs past `la + lb` are
/// junk; making them reads slots up to `la + lb + N + MERGE_READ_AHEAD - 1`.
#[inline(always)]
fn merge_run<I: Item, const N: usize, const AHEAD: bool, const B_PADDED: bool>(
    at: impl Fn(u32) -> I,
    la: u32,
    lb: u32,
    diag: u32,
    mut emit: impl FnMut(usize, I),
) {
    let ai = merge_path_by(&at, la, |j| at(la + j), lb, diag);
    let mut c = Cursor::<I, AHEAD, B_PADDED>::new(&at, ai, la, la + diag - ai, la + lb);
    for r in 0..N {
        emit(r, c.step(&at));
    }
}

/// The shared-memory slot of input `e` of a block-merge tile: skewed or
/// not by the item's width (`config::merge_inputs_skewed` says why).
#[inline(always)]
fn input_slot<K: Key, V: Word>(e: u32) -> u32 {
    if merge_inputs_skewed(size_of::<Pair<K, V>>() as u32) { skewed(e) } else { e }
}

/// Stages this thread's `N` striped slots of a tile (`thread + r * threads`)
/// in shared memory: slot `r` gets the item `from(r)` points at, or a pad
/// where that is `None`. From sm_80 on by `cp.async` (every load of the tile
/// in flight, no registers held for them); before, through registers, all
/// `N` loads issued before the first store (loads in flight hide DRAM
/// latency). The caller's barrier then shows the tile to the block.
///
/// # Safety
/// Every `Some(p)` points at an item; shared memory holds the tile's slots.
#[inline(always)]
unsafe fn stage<K: Key, V: Word, const N: usize>(
    sm: *mut Pair<K, V>,
    threads: u32,
    from: impl Fn(u32) -> Option<Items<K, V>>,
) {
    let t = thread_idx();
    let slot = input_slot::<K, V>;
    #[cfg(target_feature = "sm_80")]
    {
        use core::mem::{offset_of, size_of};
        // Shared addresses: this thread's first slot, then a stride a slot
        // (`skewed(t + r * threads)` is `skewed(t) + r * skewed(threads)`:
        // `threads` is a multiple of 32).
        // SAFETY: slot t is in the tile.
        let first = crate::arch::shared_addr(unsafe { sm.add(slot(t) as usize) });
        let stride = slot(threads) * size_of::<Pair<K, V>>() as u32;
        let (k_at, v_at) = (offset_of!(Pair<K, V>, k) as u32, offset_of!(Pair<K, V>, v) as u32);
        for r in 0..N as u32 {
            // SAFETY: the caller's contract; slot t + r * threads is this thread's.
            unsafe {
                match from(r) {
                    Some(p) => {
                        crate::arch::cp_async(first + r * stride + k_at, p.keys);
                        crate::arch::cp_async(first + r * stride + v_at, p.vals);
                    }
                    None => *sm.add(slot(t + r * threads) as usize) = Pair::pad(),
                }
            }
        }
        crate::arch::cp_async_wait_all();
    }
    #[cfg(not(target_feature = "sm_80"))]
    {
        // SAFETY: the caller's contract.
        let staged: [Pair<K, V>; N] = core::array::from_fn(|r| match from(r as u32) {
            Some(p) => unsafe { p.get(0) },
            None => Pair::pad(),
        });
        for (r, p) in staged.iter().enumerate() {
            // SAFETY: slot t + r * threads is this thread's.
            unsafe { *sm.add(slot(t + r as u32 * threads) as usize) = *p };
        }
    }
}

/// One block-merge pass, `src` runs of `run` into `dst` runs of `2 * run`
/// (pairs as [`Pass`] reads `run` and `split`), recording the samples of
/// `dst` for the next pass's partition.
///
/// # Safety
/// `src` and `dst` hold `n` items, `samples` (if any) room for their
/// samples; `parts` is [`crate::merge_path::partition`]'s output for windows
/// of `blockDim * N`; that tile divides `2 * run` (or `2 * run >= n`: one
/// pair); shared memory holds
/// `config::merge_pass_smem_slots(tile, N)` items.
#[inline(always)]
pub unsafe fn merge_pass<K: Key, V: Word, const N: usize>(
    src: Items<K, V>,
    dst: Items<K, V>,
    n: u64,
    run: u64,
    split: u64,
    parts: *const u64,
    samples: Samples<K, V>,
) {
    // SAFETY: the caller's contract; the grid covers the pass from tile 0.
    unsafe { merge_tiles::<K, V, N>(src, dst, n, run, split, parts, 0, core::ptr::null(), samples) }
}

/// [`merge_pass`] over tiles `first..first + gridDim` of the pass only: a
/// merge launched a range of tiles at a time, each range's outputs ready
/// when its launch is done (a host sort's last merge, copied back a range
/// at a time).
///
/// A round of merges of runs of any lengths is one such launch over all its
/// pairs' tiles, from tile 0, with `pairs` their table
/// (`config::pair_table`; null for the others).
///
/// # Safety
/// As [`merge_pass`], with `parts` the whole pass's partition; tiles
/// `first..first + gridDim` lie within the pass; `pairs` is null or a
/// table whose pairs lie within the items (no samples).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn merge_tiles<K: Key, V: Word, const N: usize>(
    src: Items<K, V>,
    dst: Items<K, V>,
    n: u64,
    run: u64,
    split: u64,
    parts: *const u64,
    first: u64,
    pairs: *const u64,
    samples: Samples<K, V>,
) {
    const { assert!(N.is_power_of_two() && N <= WARP_SIZE as usize) };
    crate::arch::chain_launch();
    let pass = Pass { n: n as usize, run: run as usize, split: split as usize, pairs };
    let threads = block_dim();
    let per = N as u32;
    let tile = threads * per;
    let t = thread_idx();
    let b = first as usize + block_idx() as usize;
    let (o, a_begin, a_end, b_end) = pass.window(b, tile as usize);
    // Tile-local counts fit in u32 (a tile is at most 1024 * 16 items).
    let count = (tile as usize).min(b_end - o) as u32;
    // SAFETY: parts has one slot per tile.
    let a0 = unsafe { *parts.add(b) } as usize;
    let a1 = if o + (tile as usize) < b_end { (unsafe { *parts.add(b + 1) }) as usize } else { a_end };
    let la = (a1 - a0) as u32;
    let lb = count - la;
    // First B input of the tile: outputs before it took (a0 - a_begin) from
    // A, so (o - a0) from B. Element e >= la of the tile is B's b0 + e - la.
    let b_base = a_end + (o - a_begin) - (a0 - a_begin) - la as usize;

    let item_bytes = size_of::<Pair<K, V>>() as u32;
    let sm: *mut Pair<K, V> = dynamic_smem();
    let out = merge_pass_out_region(tile, per, item_bytes) as usize;
    // SAFETY (shared memory): inputs below `out`, outputs below
    // `out + skewed(tile)`: the launch's `merge_pass_smem_slots`.
    let slot = input_slot::<K, V>;
    let at = |i: u32| unsafe { *sm.add(slot(i) as usize) };
    let put = |i: u32, p: Pair<K, V>| unsafe { *sm.add(slot(i) as usize) = p };
    let out_at = |i: u32| unsafe { *sm.add(out + skewed(i) as usize) };
    let out_put = |slot: u32, p: Pair<K, V>| unsafe { *sm.add(out + slot as usize) = p };

    // Stage A ++ B, coalesced. Slot `e` of the tile is A's `a0 + e` below
    // `la`, B's `b_base + e` from there on, a pad past a short last tile.
    // A full tile (all but a sort's last) reads this thread's slots from two
    // base pointers and a stride (no 64-bit index arithmetic per slot).
    // SAFETY: A indices a0 + e < a1, B indices below b_base + count; the
    // tile's slots are below `tile`.
    unsafe {
        if count == tile {
            let (pa, pb) = (src.offset(a0 + t as usize), src.offset(b_base + t as usize));
            stage::<K, V, N>(sm, threads, |r| {
                Some(if t + r * threads < la { pa } else { pb }.offset((r * threads) as usize))
            });
        } else {
            stage::<K, V, N>(sm, threads, |r| {
                let e = t + r * threads;
                (e < count).then(|| src.offset(if e < la { a0 } else { b_base } + e as usize))
            });
        }
    }
    if t < per + MERGE_READ_AHEAD {
        // The spare slots past the tile: what junk steps read is initialised.
        put(tile + t, Pair::pad());
    }
    sync_block();

    // This thread's outputs [t * N, t * N + N) of the tile, straight into
    // the output region (threads past the end of a short last tile merge
    // from its end: junk that is never stored). `skewed(first) + r` is
    // `skewed(first + r)`: `first` is a multiple of N, which divides 32.
    let first = t * per;
    // Reading ahead pays for 4-byte items only (see `Cursor`).
    let (d, emit) = (first.min(count), |r: usize, p| out_put(skewed(first) + r as u32, p));
    if item_bytes <= 4 {
        merge_run::<_, N, true, true>(at, la, lb, d, emit);
    } else {
        merge_run::<_, N, false, true>(at, la, lb, d, emit);
    }
    // A warp's threads made the warp's own `32 * N` consecutive outputs, so
    // the warp stores them itself, striped (coalesced), after a warp barrier
    // only: no warp waits for the block's slowest merge. Slot
    // `skewed(chunk + lane + 32 * r)` is `skewed(chunk) + lane + skewed(32 * r)`.
    sync_warp();
    let lane = lane_id();
    let chunk = t / WARP_SIZE * WARP_SIZE * per;
    // SAFETY: o + e < o + count <= n for every e stored; the tile is this block's.
    let to = unsafe { dst.offset(o + (chunk + lane) as usize) };
    let from = out + (skewed(chunk) + lane) as usize;
    for r in 0..per {
        if chunk + lane + r * WARP_SIZE < count {
            // SAFETY: as above; the slot is in this warp's part of the output region.
            unsafe { to.set((r * WARP_SIZE) as usize, *sm.add(from + skewed(r * WARP_SIZE) as usize)) };
        }
    }
    // The samples among the warp's outputs, a lane each.
    let e = chunk + lane * SAMPLE_STRIDE;
    if lane < WARP_SIZE * per / SAMPLE_STRIDE && e < count {
        // SAFETY: a sample position of this block's tile, below n.
        unsafe { samples.record(o + e as usize, out_at(e)) };
    }
}

/// Step 1 by warps and merges: sorts every tile of `seg` items (the last may
/// be shorter) of `src` into `dst`, one block each. Every warp sorts
/// `32 * N` items in registers with the barrier-free bitonic network (the
/// paper's step 1), then the block merges the warps' runs in shared memory,
/// doubling the run length each round: each thread merges its `N` outputs
/// into registers, and writes them back blocked for the next round. The last
/// round's outputs go straight from registers to global memory.
///
/// Pads (`MAX` keys past the end of the last tile) start at the tile's top;
/// the network never moves them and merges take ties from the lower run
/// first, so no pad ever passes a real item and only pads are dropped.
///
/// Records the samples of `dst` for the first merge pass's partition.
///
/// With `STABLE`, equal keys keep their input order (the stable key-value
/// sort's tiles): the warp's network, the one step that is not stable, sorts
/// each key beside its position in the tile ([`PlacedKey`]), and every
/// item is then fetched by that position from the tile staged in shared
/// memory. The
/// merges after it take ties from the lower run first, which holds the
/// earlier positions, so the tile comes out in input order among equal keys
/// and the merge passes keep it so.
///
/// # Safety
/// `src` and `dst` hold `n` items, `samples` (if any) room for their
/// samples; `seg == blockDim * N`, a power of two; shared memory holds
/// `config::tile_merge_smem_slots(seg)` items.
#[inline(always)]
pub unsafe fn sort_tiles<K: PlacedKey, V: Word, const N: usize, const STABLE: bool>(
    src: Items<K, V>,
    dst: Items<K, V>,
    n: u64,
    seg: u64,
    samples: Samples<K, V>,
) {
    const { assert!(N.is_power_of_two() && N <= WARP_SIZE as usize) };
    crate::arch::chain_launch();
    let n = n as usize;
    let tile = seg as u32;
    let per = N as u32;
    let t = thread_idx();
    let lane = lane_id();
    let start = block_idx() as usize * tile as usize;
    if start >= n {
        return;
    }
    let len = (tile as usize).min(n - start) as u32;

    let sm: *mut Pair<K, V> = dynamic_smem();
    // SAFETY (shared memory): slots below `skewed(tile + MERGE_READ_AHEAD - 1) + 1`.
    let at = |i: u32| unsafe { *sm.add(skewed(i) as usize) };
    let put = |slot: u32, p: Pair<K, V>| unsafe { *sm.add(slot as usize) = p };
    if t < MERGE_READ_AHEAD {
        // The spare slots the merges read past a pair's last run.
        put(skewed(tile + t), Pair::pad());
    }

    // This thread's run: elements [first, first + N) of the tile.
    let first = t * per;
    // SAFETY: reads below len only.
    let mut x = unsafe {
        load_blocked::<K, V, N>(&src.offset(start + first.min(len) as usize), 0, len.saturating_sub(first) as usize)
    };
    if STABLE {
        for (r, p) in x.iter().enumerate() {
            put(skewed(first) + r as u32, *p);
        }
        sync_warp();
        let mut placed: [K::Placed; N] = core::array::from_fn(|r| x[r].k.placed(first + r as u32));
        warp_sort(&mut placed, lane);
        for (slot, &p) in x.iter_mut().zip(&placed) {
            // A position within this warp's run of the tile, staged above.
            *slot = at(K::place_of(p));
        }
        // The lanes' fetches are done before the merges below overwrite the slots.
        sync_warp();
    } else {
        warp_sort(&mut x, lane);
    }

    let mut run = WARP_SIZE * per;
    while run < tile {
        for (r, p) in x.iter().enumerate() {
            put(skewed(first) + r as u32, *p);
        }
        sync_block();
        let pair = first / (2 * run) * (2 * run);
        merge_run::<_, N, true, false>(|i| at(pair + i), run, run, first - pair, |r, p| x[r] = p);
        sync_block();
        run *= 2;
    }
    // SAFETY: this thread's run of the tile, stored below len.
    unsafe { store_blocked(&dst.offset(start + first.min(len) as usize), 0, len.saturating_sub(first) as usize, &x) };
    if first < len {
        // SAFETY: below n; this thread's first item.
        unsafe { samples.record(start + first as usize, x[0]) };
    }
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            macro_rules! pass {
                ($n:literal, $w:literal) => {
                    src_dst_kernel!(
                        concat!(crate::kernel_name!(block_merge), $w, "_", stringify!($sfx)),
                        /// One block-merge pass over merge-path tiles of `blockDim * N` outputs.
                        fn pass<$K, $V>(n: u64, run: u64, split: u64, parts: *mut u64) + samples => merge_pass::<$K, $V, $n>
                    );
                    src_dst_kernel!(
                        concat!(crate::kernel_name!(block_merge_from), $w, "_", stringify!($sfx)),
                        /// The same pass over tiles `first..first + gridDim` only, or a round of merges of runs by its pairs' table.
                        fn pass_from<$K, $V>(n: u64, run: u64, split: u64, parts: *mut u64, first: u64, pairs: *mut u64) + samples => merge_tiles::<$K, $V, $n>
                    );
                };
            }
            src_dst_kernel!(
                concat!(crate::kernel_name!(merge_tile_sort), "_", stringify!($sfx)),
                /// Step 1 by warp sorts and block merges: tiles of `seg = blockDim * TILE_MERGE_KEYS_PER_LANE` items.
                fn tile_sort<$K, $V>(n: u64, seg: u64) + samples => sort_tiles::<$K, $V, { crate::config::TILE_MERGE_KEYS_PER_LANE as usize }, false>
            );
            crate::block_merge_widths!(width_modules, pass);
        }
    };
}
crate::for_items!(entries);
crate::for_ranked!(entries);

/// The stable step 1 (`sort_tiles` with `STABLE`), for the items a stable
/// key-value sort moves with its keys: 4-byte payloads (values, or the
/// positions whose values are gathered after the sort).
macro_rules! stable_entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Stable step 1 for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            src_dst_kernel!(
                concat!(crate::kernel_name!(merge_tile_sort_stable), "_", stringify!($sfx)),
                /// Step 1 by warp sorts of (key, position) and block merges, equal keys in input order.
                fn tile_sort_stable<$K, $V>(n: u64, seg: u64) + samples => sort_tiles::<$K, $V, { crate::config::TILE_MERGE_KEYS_PER_LANE as usize }, true>
            );
        }
    };
}

/// The stable step 1's entry points.
pub mod stable {
    use super::*;
    crate::for_stable_tiles!(stable_entries);
}
