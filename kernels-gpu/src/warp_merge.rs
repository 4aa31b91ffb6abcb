//! GPU-Warpsort's merge pass as a warp bitonic merge (`MergeKernel::WarpBitonic`
//! on the host): every pass merges pairs of sorted runs of length `run` into
//! runs of `2 * run`, cut into merge-path windows of `32 * N` outputs (`N`
//! keys per lane, `config::MERGE_KEYS_PER_LANE`), one warp each.
//!
//! A window's inputs are a piece of A and a piece of B that together hold its
//! outputs. The warp loads the A piece ascending and the B piece *reversed*
//! (coalesced: the paper's "reverse while storing", here into registers), which
//! makes one bitonic sequence, then runs the barrier-free bitonic merge (the
//! paper's step-2 network, `log2(32 N)` half-cleaner stages).

use crate::arch::{global_warp, grid_threads, lane_id};
use crate::config::WARP_SIZE;
use crate::item::{Item, Items, Key, Padded, Pair, Word};
use crate::merge_path::Pass;
use crate::network::striped_half_cleaners;

/// Loads one window (A piece ascending, pads, B piece descending: bitonic),
/// merges it and stores the `count` outputs, all striped.
#[inline(always)]
unsafe fn merge_window<I: Item, const N: usize>(
    lane: u32,
    count: usize,
    load: impl Fn(usize) -> I,
    store: impl Fn(usize, I),
) {
    let mut x: [I; N] = core::array::from_fn(|r| load(r * WARP_SIZE as usize + lane as usize));
    striped_half_cleaners(&mut x, lane);
    for (r, item) in x.iter().enumerate() {
        let e = r * WARP_SIZE as usize + lane as usize;
        if e < count {
            store(e, *item);
        }
    }
}

/// One merge pass, `src` runs of `run` into `dst` runs of `2 * run`.
///
/// # Safety
/// `src` and `dst` hold `n` items, `parts` the output of
/// [`crate::merge_path::partition`] for
/// this pass; `run` is a multiple of `WARP_TILE`.
#[inline(always)]
pub unsafe fn merge_pass<K: Key, V: Word, const N: usize>(
    src: Items<K, V>,
    dst: Items<K, V>,
    n: u64,
    run: u64,
    parts: *const u64,
) {
    let pass = Pass { n: n as usize, run: run as usize, split: run as usize, pairs: core::ptr::null() };
    let lane = lane_id();
    let w_len = WARP_SIZE as usize * N;
    let windows = pass.n.div_ceil(w_len);
    let mut w = global_warp();
    while w < windows {
        let o = w * w_len;
        let (_, a_end, b_end) = pass.pair(o);
        let count = w_len.min(b_end - o);
        // SAFETY: parts has one slot per window.
        let a0 = unsafe { *parts.add(w) } as usize;
        let a1 = if o + w_len < b_end { (unsafe { *parts.add(w + 1) }) as usize } else { a_end };
        let la = a1 - a0;
        let lb = count - la;
        // First B input of the window: outputs before it took (a0 - a) from A.
        let b0 = a_end + (o - pass.pair(o).0) - (a0 - pass.pair(o).0);
        let from_a = |e: usize| e < la;
        let from_b = |e: usize| e >= w_len - lb;
        // SAFETY (loads): A indices a0 + e < a1, B indices b0 + (W-1-e) < b0 + lb.
        let get = |e: usize| unsafe {
            if from_a(e) {
                src.get(a0 + e)
            } else if from_b(e) {
                src.get(b0 + (w_len - 1 - e))
            } else {
                Pair::pad()
            }
        };
        // SAFETY (stores): o + e < o + count <= n; the window is this warp's.
        let put = |e: usize, p: Pair<K, V>| unsafe { dst.set(o + e, p) };
        if count == w_len || core::mem::size_of::<V>() == 0 {
            unsafe { merge_window::<_, N>(lane, count, get, put) };
        } else {
            // A short last window pads the middle; keep the pads after real
            // MAX keys so that no payload is dropped.
            let get_padded = |e: usize| Padded { item: get(e), pad: (!from_a(e) && !from_b(e)) as u32 };
            let put_padded = |e: usize, p: Padded<Pair<K, V>>| put(e, p.item);
            unsafe { merge_window::<_, N>(lane, count, get_padded, put_padded) };
        }
        w += grid_threads() / WARP_SIZE as usize;
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
                        concat!(crate::kernel_name!(merge_pass), $w, "_", stringify!($sfx)),
                        /// One bitonic merge pass over merge-path windows of `32 * N` outputs.
                        fn pass<$K, $V>(n: u64, run: u64, parts: *mut u64) => merge_pass::<$K, $V, $n>
                    );
                };
            }
            crate::merge_pass_widths!(width_modules, pass);
        }
    };
}
crate::for_items!(entries);
crate::for_ranked!(entries);
