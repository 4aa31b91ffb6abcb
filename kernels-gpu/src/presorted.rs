//! Input already in order: the order scan (does the input ascend, descend,
//! or consist of a few ascending runs, and where do they start) and the
//! reversal that sorts a descending input in one pass.

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::arch::{global_thread, grid_threads, lane_id};
use crate::encode::Encoding;
use crate::item::Word;
#[cfg(target_arch = "nvptx64")]
use crate::ordered::View;
use crate::config::{ORDER_SCAN_DESCENTS, ORDER_SCAN_WARP_ITEMS, REVERSE_SWAPS, WARP_SIZE, order_scan};
use crate::warp;

/// Keys a lane reads at once (one 16-byte load of `u32` keys).
const RUN: usize = 4;
/// Steps of a warp's chunk: `RUN` keys a lane, 32 lanes a step.
const STEPS: usize = ORDER_SCAN_WARP_ITEMS as usize / (RUN * WARP_SIZE as usize);

/// What a lane saw in a chunk: the flags of `config::order_scan`, and its
/// descents.
#[derive(Clone, Copy)]
struct Seen {
    flags: u32,
    descents: u32,
}

impl Seen {
    #[inline(always)]
    fn pair<K: PartialOrd>(&mut self, a: K, b: K) {
        if a > b {
            self.descents += 1;
            self.flags |= order_scan::DESCENT;
        } else if a < b {
            self.flags |= order_scan::ASCENT;
        } else {
            self.flags |= order_scan::EQUAL;
        }
    }
}

/// A whole chunk at `start`, this lane's `RUN` keys of each step, and the
/// key after the chunk (`None` past the input).
///
/// # Safety
/// `keys` holds `n` keys.
#[inline(always)]
unsafe fn scan_full<K: Word + PartialOrd>(
    keys: *const K,
    start: usize,
    n: usize,
    enc: impl Encoding<K>,
) -> ([[K; RUN]; STEPS], Option<K>) {
    let lane = lane_id() as usize;
    // SAFETY: the chunk `start..start + ORDER_SCAN_WARP_ITEMS` lies within `n`.
    let mut v: [[K; RUN]; STEPS] =
        core::array::from_fn(|s| unsafe { K::read_run::<RUN>(keys.add(start + (s * WARP_SIZE as usize + lane) * RUN)) });
    // Spelled out, no loop: a loop of encodings this long would not be
    // unrolled, and `v` would go to local memory.
    const _: () = assert!(STEPS == 8 && RUN == 4, "the encodings below spell out 8 steps of 4 keys");
    macro_rules! encode {
        ($($s:literal)*) => {$(
            v[$s] = [enc.apply(v[$s][0]), enc.apply(v[$s][1]), enc.apply(v[$s][2]), enc.apply(v[$s][3])];
        )*};
    }
    encode!(0 1 2 3 4 5 6 7);
    let end = start + ORDER_SCAN_WARP_ITEMS as usize;
    // SAFETY: end < n.
    let next = if end < n { Some(enc.apply(unsafe { *keys.add(end) })) } else { None };
    (v, next)
}

/// Scans `n` keys (their ordered words: `enc` applied to each) for the order of every neighbouring
/// pair, a warp per `ORDER_SCAN_WARP_ITEMS` consecutive keys in a
/// grid-stride loop (each lane `RUN` consecutive keys a step, one 16-byte
/// load where aligned), into `out` (`config::order_scan`): the flags
/// `ASCENT | DESCENT | EQUAL` seen, the count of descents (`key(i) >
/// key(i + 1)`), and, while the count stays within `ORDER_SCAN_DESCENTS`,
/// every descent's `i + 1` (the start of an ascending run, in no particular
/// order). A warp stops once both an ascent and more descents than that are
/// known: the input then needs a full sort, whatever the rest holds (the
/// count then stops growing too).
///
/// # Safety
/// `keys` holds `n` keys; `out` holds `config::order_scan::WORDS` words, the
/// first `STARTS` zeroed.
#[inline(always)]
pub unsafe fn order_scan<K: Word + PartialOrd>(keys: *const K, n: u64, out: *mut u64, enc: impl Encoding<K>) {
    let n = n as usize;
    let lane = lane_id() as usize;
    let warps = grid_threads() / WARP_SIZE as usize;
    let items = ORDER_SCAN_WARP_ITEMS as usize;
    // SAFETY: the host passes `WORDS` aligned words.
    let (flags, count) =
        unsafe { (AtomicU64::from_ptr(out.add(order_scan::FLAGS)), AtomicU64::from_ptr(out.add(order_scan::COUNT))) };
    let listed = ORDER_SCAN_DESCENTS as u64;
    let mut chunk = global_thread() / WARP_SIZE as usize;
    while chunk * items < n {
        let start = chunk * items;
        let full = start + items <= n;
        let mut seen = Seen { flags: 0, descents: 0 };
        // The chunk's loads go out before the check of what is known.
        let (v, next) = if full {
            // SAFETY: the chunk lies within `n`.
            unsafe { scan_full(keys, start, n, enc) }
        } else {
            (core::array::from_fn(|_| [K::default(); RUN]), None)
        };
        let (known_flags, known) = (flags.load(Relaxed), count.load(Relaxed));
        if known > listed && known_flags & order_scan::ASCENT as u64 != 0 {
            return;
        }
        if full {
            for s in 0..STEPS {
                for r in 0..RUN - 1 {
                    seen.pair(v[s][r], v[s][r + 1]);
                }
                let right = warp::shfl_down(v[s][0], 1);
                let first_after = if s + 1 < STEPS { Some(warp::shfl_idx(v[s + 1][0], 0)) } else { next };
                match (lane == WARP_SIZE as usize - 1, first_after) {
                    (false, _) => seen.pair(v[s][RUN - 1], right),
                    (true, Some(b)) => seen.pair(v[s][RUN - 1], b),
                    (true, None) => {}
                }
            }
        } else {
            // The last, partial chunk: key by key, the same layout.
            for_each_pair(keys, start, n, enc, |a, b, _| seen.pair(a, b));
        }
        let flags_seen = warp::reduce(seen.flags, |x, y| x | y) as u64;
        let total = warp::reduce_sum(seen.descents);
        let mut base = u64::MAX;
        if lane == 0 {
            if flags_seen & !known_flags != 0 {
                flags.fetch_or(flags_seen, Relaxed);
            }
            if total > 0 && known <= listed {
                base = count.fetch_add(total as u64, Relaxed);
            }
        }
        let base = warp::shfl_idx(base, 0);
        if total > 0 && base != u64::MAX && base + total as u64 <= listed {
            // Few descents: each lane lists its own, packed in lane order.
            let mut slot = base as usize + warp::exclusive_scan(seen.descents) as usize;
            for_each_pair(keys, start, n, enc, |a, b, i| {
                if a > b {
                    // SAFETY: slot < ORDER_SCAN_DESCENTS (checked above).
                    unsafe { *out.add(order_scan::STARTS + slot) = (i + 1) as u64 };
                    slot += 1;
                }
            });
        }
        chunk += warps;
    }
}

/// Calls `f(key(i), key(i + 1), i)` (ordered words: `enc` applied) for
/// this lane's pairs of the chunk at `start` (the lane-blocked layout of
/// [`order_scan`]) within `n`.
#[inline(always)]
fn for_each_pair<K: Copy>(
    keys: *const K,
    start: usize,
    n: usize,
    enc: impl Encoding<K>,
    mut f: impl FnMut(K, K, usize),
) {
    let lane = lane_id() as usize;
    for s in 0..STEPS {
        for r in 0..RUN {
            let i = start + (s * WARP_SIZE as usize + lane) * RUN + r;
            if i + 1 < n {
                // SAFETY: i + 1 < n, and the host passes `n` keys.
                unsafe { f(enc.apply(*keys.add(i)), enc.apply(*keys.add(i + 1)), i) };
            }
        }
    }
}

/// Reverses `n` values in place: `p[i]` and `p[n - 1 - i]` swapped for
/// every `i < n / 2`, a warp's lanes on consecutive `i` (both sides
/// coalesced), `REVERSE_SWAPS` of them a thread a step (all loads before the stores).
///
/// # Safety
/// `p` holds `n` values.
#[inline(always)]
pub unsafe fn reverse<T: Copy + Default>(p: *mut T, n: u64) {
    let (n, half) = (n as usize, n as usize / 2);
    let lane = lane_id() as usize;
    let warp = WARP_SIZE as usize;
    let mut base = (global_thread() - lane) * REVERSE_SWAPS as usize;
    while base < half {
        let at = |k: usize| base + k * warp + lane;
        let mut front = [T::default(); REVERSE_SWAPS as usize];
        let mut back = [T::default(); REVERSE_SWAPS as usize];
        for k in 0..REVERSE_SWAPS as usize {
            if at(k) < half {
                // SAFETY: at(k) < n / 2, so both it and its mirror are below n.
                unsafe { (front[k], back[k]) = (*p.add(at(k)), *p.add(n - 1 - at(k))) };
            }
        }
        for k in 0..REVERSE_SWAPS as usize {
            if at(k) < half {
                // SAFETY: as above; the two positions are distinct.
                unsafe { (*p.add(at(k)), *p.add(n - 1 - at(k))) = (back[k], front[k]) };
            }
        }
        base += grid_threads() * REVERSE_SWAPS as usize;
    }
}

#[cfg(target_arch = "nvptx64")]
macro_rules! entries {
    ($($t:ident),*) => {$(
        #[doc = concat!("Entry points for `", stringify!($t), "` words.")]
        pub mod $t {
            use super::*;
            /// The order of neighbouring keys (see [`order_scan`](super::order_scan)),
            /// read through the view `(perm, flip, floats)` (`ordered::View`).
            #[unsafe(export_name = concat!(crate::kernel_name!(order_scan), "_", stringify!($t)))]
            pub unsafe extern "ptx-kernel" fn scan(keys: *mut $t, n: u64, out: *mut u64, perm: u64, flip: u64, floats: u32) {
                // SAFETY: the host passes `n` keys and the zeroed result words.
                // The view applied also when it is the identity: the scan
                // is bound by memory, and one body keeps its loops unrolled.
                unsafe { order_scan(keys, n, out, View { perm, flip, floats }) }
            }
            /// Values reversed in place.
            #[unsafe(export_name = concat!(crate::kernel_name!(reverse), "_", stringify!($t)))]
            pub unsafe extern "ptx-kernel" fn rev(p: *mut $t, n: u64) {
                // SAFETY: the host passes `n` values.
                unsafe { reverse(p, n) }
            }
        }
    )*};
}
#[cfg(target_arch = "nvptx64")]
entries!(u32, u64);
