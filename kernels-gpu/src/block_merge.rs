//! GPU-Warpsort's merge passes, block form (the tuned default): every pass
//! merges pairs of sorted runs of `run` items into runs of `2 * run`, cut into
//! tiles of `blockDim * N` outputs, one block each (the paper's step-3 split,
//! done exactly by merge path: every block gets the same work whatever the data).
//!
//! A block's tile:
//! 1. reads where its A and B pieces start (`parts`, one merge-path search per
//!    tile by `merge_partition` with `window = tile`),
//! 2. stages both pieces in shared memory with coalesced loads,
//! 3. gives every thread `N` consecutive outputs: a merge-path search in shared
//!    memory finds where they start, a serial merge of `N` steps produces them,
//! 4. writes them back through shared memory so the global stores coalesce.
//!
//! Shared memory is indexed with a skew of one slot per 32 (`skew`): a thread's
//! `N` consecutive slots and a warp's 32 consecutive slots then fall in
//! distinct banks (the blocked-to-striped transpose is conflict-free).

use crate::arch::{block_dim, block_idx, dynamic_smem, lane_id, sync_block, thread_idx};
use crate::network::warp_sort;
use crate::tile::load_blocked;
use crate::config::{WARP_SIZE, block_merge_smem_slots};
use crate::item::{Item, Items, Key, Pair, Word};
use crate::merge_path::{Pass, merge_path_by};

/// Shared-memory slot of tile element `e`: one skip every 32 slots. Indices
/// inside a tile are `u32`: 32-bit arithmetic is half the instructions of
/// `usize`'s 64-bit, and the merge is bound by instruction issue.
#[inline(always)]
fn skew(e: u32) -> usize {
    (e + e / WARP_SIZE) as usize
}

/// The serial merge's state: the next unconsumed A and B slots of `A ++ B`
/// in shared memory and the items there.
struct Cursor<I> {
    ai: u32,
    bj: u32,
    la: u32,
    end: u32,
    xa: I,
    xb: I,
}

impl<I: Item> Cursor<I> {
    /// At A index `ai` and B index `bi` of sequences of `la` and `lb` items;
    /// `at(i)` reads slot `i` of `A ++ B`, `i <= la + lb`.
    #[inline(always)]
    fn new(at: &impl Fn(u32) -> I, ai: u32, la: u32, bi: u32, lb: u32) -> Self {
        Cursor { ai, bj: la + bi, la, end: la + lb, xa: at(ai), xb: at(la + bi) }
    }

    /// The next output (ties from A first); past both ends, junk the caller
    /// drops. One shared-memory read per output: the side just taken advances
    /// (clamped, so that junk steps stay inside the tile).
    #[inline(always)]
    fn step(&mut self, at: &impl Fn(u32) -> I) -> I {
        let take_b = self.bj < self.end && (self.ai >= self.la || self.xa.gt(&self.xb));
        let out = if take_b { self.xb } else { self.xa };
        let next = if take_b { self.bj + 1 } else { self.ai + 1 }.min(self.end);
        let x = at(next);
        if take_b {
            self.bj = next;
            self.xb = x;
        } else {
            self.ai = next;
            self.xa = x;
        }
        out
    }
}

/// Merges `n` consecutive outputs, from A index `ai` and B index `bi` on, by
/// [`Cursor`] steps, handing each to `emit` as it is made (no register array).
#[inline(always)]
fn serial_merge<I: Item>(
    at: impl Fn(u32) -> I,
    ai: u32,
    la: u32,
    bi: u32,
    lb: u32,
    n: u32,
    mut emit: impl FnMut(u32, I),
) {
    let mut c = Cursor::new(&at, ai, la, bi, lb);
    for r in 0..n {
        emit(r, c.step(&at));
    }
}

/// One block-merge pass, `src` runs of `run` into `dst` runs of `2 * run`.
///
/// # Safety
/// `src` and `dst` hold `n` items; `parts` is [`crate::merge_path::partition`]'s
/// output for windows of `blockDim * N`; that tile divides `2 * run`; shared
/// memory holds `config::block_merge_smem_slots(tile)` items.
#[inline(always)]
pub unsafe fn merge_pass<K: Key, V: Word, const N: usize>(
    src: Items<K, V>,
    dst: Items<K, V>,
    n: u64,
    run: u64,
    parts: *const u64,
) {
    let pass = Pass { n: n as usize, run: run as usize };
    let threads = block_dim();
    let n_out = N as u32;
    let tile = threads * n_out;
    let t = thread_idx();
    let b = block_idx() as usize;
    let o = b * tile as usize;
    let (a_begin, a_end, b_end) = pass.pair(o);
    // Tile-local counts fit in u32 (a tile is at most 1024 * 16 items).
    let count = (tile as usize).min(b_end - o) as u32;
    // SAFETY: parts has one slot per tile.
    let a0 = unsafe { *parts.add(b) } as usize;
    let a1 = if o + (tile as usize) < b_end { (unsafe { *parts.add(b + 1) }) as usize } else { a_end };
    let la = (a1 - a0) as u32;
    let lb = count - la;
    // First B input of the tile: outputs before it took (a0 - a_begin) from A.
    let b0 = a_end + (o - a_begin) - (a0 - a_begin);

    // Two regions of shared memory: the inputs A ++ B, and the outputs.
    let sm: *mut Pair<K, V> = dynamic_smem();
    let region = block_merge_smem_slots(tile as usize) / 2;
    // SAFETY (shared memory): every slot index is below the region's size.
    let at = |i: u32| unsafe { *sm.add(skew(i)) };
    let put = |i: u32, p: Pair<K, V>| unsafe { *sm.add(skew(i)) = p };
    let out_at = |i: u32| unsafe { *sm.add(region + skew(i)) };
    let out_put = |i: u32, p: Pair<K, V>| unsafe { *sm.add(region + skew(i)) = p };

    // Stage A ++ B, coalesced: all `N` loads of a thread issued before the
    // first shared-memory store (loads in flight are what hide DRAM latency).
    let staged: [Pair<K, V>; N] = core::array::from_fn(|r| {
        let e = t + r as u32 * threads;
        // SAFETY: A indices a0 + e < a1, B indices b0 + (e - la) < b0 + lb.
        unsafe {
            if e < la {
                src.get(a0 + e as usize)
            } else if e < count {
                src.get(b0 + (e - la) as usize)
            } else {
                Pair::pad()
            }
        }
    });
    for (r, p) in staged.iter().enumerate() {
        put(t + r as u32 * threads, *p);
    }
    sync_block();

    // This thread's outputs [t * N, t * N + N) of the tile.
    // (Threads past the end of a short last tile merge from its end: junk
    // they do not store.)
    // Each output goes straight to the output region: blocked to striped
    // through shared memory, then coalesced stores.
    let diag = (t * n_out).min(count);
    let ai = merge_path_by(at, la, |j| at(la + j), lb, diag);
    serial_merge(at, ai, la, diag - ai, lb, n_out, |r, p| {
        if diag + r < count {
            out_put(diag + r, p)
        }
    });
    sync_block();
    for r in 0..n_out {
        let e = t + r * threads;
        if e < count {
            // SAFETY: o + e < o + count <= n; the tile is this block's.
            unsafe { dst.set(o + e as usize, out_at(e)) };
        }
    }
}

/// Step 1 by warps and merges: sorts every tile of `seg` items (the last may be
/// shorter) of `src` into `dst`, one block each. Every warp sorts `32 * N`
/// items in registers with the barrier-free bitonic network (the paper's
/// step 1), then the block merges the warps' runs in shared memory, doubling
/// the run length each round (merge path per thread, serial merge of `N`
/// outputs), and stores the tile coalesced.
///
/// Pads (`MAX` keys past the end of the last tile) start at the tile's top;
/// merges take ties from the lower run first, so no pad ever passes a real
/// item and only pads are dropped.
///
/// # Safety
/// `src` and `dst` hold `n` items; `seg == blockDim * N`, a power of two;
/// shared memory holds `config::block_merge_smem_slots(seg)` items.
#[inline(always)]
pub unsafe fn sort_tiles<K: Key, V: Word, const N: usize>(src: Items<K, V>, dst: Items<K, V>, n: u64, seg: u64) {
    let n = n as usize;
    let tile = seg as u32;
    let threads = block_dim();
    let t = thread_idx();
    let (warp, lane) = (t / WARP_SIZE, lane_id());
    let n_out = N as u32;
    let warp_tile = WARP_SIZE * n_out;
    let start = block_idx() as usize * tile as usize;
    if start >= n {
        return;
    }
    let len = (tile as usize).min(n - start) as u32;

    let sm: *mut Pair<K, V> = dynamic_smem();
    let region = block_merge_smem_slots(tile as usize) / 2;
    // SAFETY (shared memory): slots below 2 * region.
    let at = |reg: usize, i: u32| unsafe { *sm.add(reg * region + skew(i)) };
    let put = |reg: usize, i: u32, p: Pair<K, V>| unsafe { *sm.add(reg * region + skew(i)) = p };

    // Warp runs, sorted in registers.
    let w0 = warp * warp_tile;
    // SAFETY: reads below len only.
    let mut x = unsafe {
        load_blocked::<K, V, N>(&src.offset(start + w0.min(len) as usize), lane as usize, len.saturating_sub(w0) as usize)
    };
    warp_sort(&mut x, lane);
    for (r, p) in x.iter().enumerate() {
        put(0, w0 + lane * n_out + r as u32, *p);
    }
    sync_block();

    // Merge rounds: runs of `run` into runs of `2 * run`, region to region.
    let mut reg = 0;
    let mut run = warp_tile;
    while run < tile {
        let o = t * n_out;
        let pair = o / (2 * run) * (2 * run);
        let diag = o - pair;
        let from = |i: u32| at(reg, pair + i);
        let ai = merge_path_by(from, run, |j| from(run + j), run, diag);
        let to = 1 - reg;
        serial_merge(from, ai, run, diag - ai, run, n_out, |r, p| put(to, o + r, p));
        sync_block();
        reg = to;
        run *= 2;
    }

    // Coalesced stores of the real items.
    let mut e = t;
    while e < len {
        // SAFETY: start + e < n; the tile is this block's.
        unsafe { dst.set(start + e as usize, at(reg, e)) };
        e += threads;
    }
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            macro_rules! pass {
                ($n:literal, $name:literal) => {
                    src_dst_kernel!(
                        concat!($name, "_", stringify!($sfx)),
                        /// One block-merge pass over merge-path tiles of `blockDim * N` outputs.
                        fn pass<$K, $V>(n: u64, run: u64, parts: *mut u64) => merge_pass::<$K, $V, $n>
                    );
                };
            }
            src_dst_kernel!(
                concat!("merge_tile_sort_", stringify!($sfx)),
                /// Step 1 by warp sorts and block merges: tiles of `seg = blockDim * 8` items.
                fn tile_sort<$K, $V>(n: u64, seg: u64) => sort_tiles::<$K, $V, { crate::config::KEYS_PER_LANE as usize }>
            );
            crate::block_merge_widths!(width_modules, pass);
        }
    };
}
crate::for_items!(entries);
crate::for_ranked!(entries);
