//! Warp sort: each warp sorts one segment of up to `32 * N` items entirely in
//! registers (the bitonic network of `network::warp_sort`: no shared memory, no
//! barrier). Short segments and idle lanes hold `MAX` pads.

use crate::arch::{global_warp, grid_threads, lane_id};
use crate::config::{WARP_SIZE, warp_sort_batch};
use crate::item::{Items, Key, Pair, Word};
use crate::network;
use crate::tile::{load_blocked, store_blocked};

/// Sorts every segment `[s * seg, min((s + 1) * seg, n))`, one warp per `B`
/// consecutive segments (sorted together for memory-level parallelism),
/// grid-stride. Requires `seg <= 32 * N`.
///
/// # Safety
/// `items` holds `n` items.
#[inline(always)]
pub unsafe fn sort_segments<K: Key, V: Word, const N: usize, const B: usize>(items: Items<K, V>, n: u64, seg: u32) {
    let (n, seg) = (n as usize, seg as usize);
    let lane = lane_id() as usize;
    let segments = n.div_ceil(seg);
    let mut first = global_warp() * B;
    while first < segments {
        let mut xs = [[Pair::pad(); N]; B];
        for (b, x) in xs.iter_mut().enumerate() {
            let start = (first + b) * seg;
            if start < n {
                // SAFETY: the segment lies inside the arrays.
                *x = unsafe { load_blocked::<K, V, N>(&items.offset(start), lane, seg.min(n - start)) };
            }
        }
        network::warp_sort_batch(&mut xs, lane as u32);
        for (b, x) in xs.iter().enumerate() {
            let start = (first + b) * seg;
            if start < n {
                // SAFETY: as above; this warp owns these segments.
                unsafe { store_blocked(&items.offset(start), lane, seg.min(n - start), x) };
            }
        }
        first += grid_threads() / WARP_SIZE as usize * B;
    }
}

/// Sorts segments of `seg <= chunk` items with the `N`-keys-per-lane layout:
/// a warp tile of `32 * N` items holds `32 * N / chunk` segments, one per
/// aligned chunk (padded with `MAX` past `seg`), and runs the network's phases
/// up to `chunk` only. Grid-stride over warp tiles.
///
/// # Safety
/// `items` holds `n` items; `chunk` is a power of two, `seg <= chunk <= 32 * N`.
#[inline(always)]
pub unsafe fn sort_chunked<K: Key, V: Word, const N: usize>(items: Items<K, V>, n: u64, seg: u32, chunk: u32) {
    let (n, seg, chunk) = (n as usize, seg as usize, chunk as usize);
    let lane = lane_id() as usize;
    let per_warp = WARP_SIZE as usize * N / chunk;
    let segments = n.div_ceil(seg);
    let at = |first: usize, r: usize| {
        let e = lane * N + r;
        let (s, p) = (first + e / chunk, e % chunk);
        let i = s * seg + p;
        (p < seg && i < n).then_some(i)
    };
    let mut first = global_warp() * per_warp;
    while first < segments {
        // Segments that fill their chunks lie contiguously: the vector tile path.
        let tile = first * seg;
        let full = seg == chunk && tile + WARP_SIZE as usize * N <= n;
        let mut x = [Pair::pad(); N];
        if full {
            // SAFETY: the warp's tile lies below n.
            x = unsafe { load_blocked::<K, V, N>(&items.offset(tile), lane, WARP_SIZE as usize * N) };
        } else {
            for (r, slot) in x.iter_mut().enumerate() {
                if let Some(i) = at(first, r) {
                    // SAFETY: i < n.
                    *slot = unsafe { items.get(i) };
                }
            }
        }
        network::warp_sort_chunks(&mut x, lane as u32, chunk);
        if full {
            // SAFETY: as above; this warp owns its segments.
            unsafe { store_blocked(&items.offset(tile), lane, WARP_SIZE as usize * N, &x) };
        } else {
            for (r, item) in x.iter().enumerate() {
                if let Some(i) = at(first, r) {
                    // SAFETY: i < n; this warp owns its segments.
                    unsafe { items.set(i, *item) };
                }
            }
        }
        first += grid_threads() / WARP_SIZE as usize * per_warp;
    }
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            macro_rules! one {
                ($n:literal, $name:literal) => {
                    #[unsafe(export_name = concat!($name, "_", stringify!($sfx)))]
                    /// Batched warp sort of fixed-size segments.
                    pub unsafe extern "ptx-kernel" fn k(keys: *mut $K, vals: *mut $V, n: u64, seg: u32) {
                        // SAFETY: the host passes arrays of `n` items.
                        unsafe {
                            sort_segments::<$K, $V, $n, { warp_sort_batch($n) as usize }>(Items { keys, vals }, n, seg)
                        }
                    }
                };
            }
            crate::warp_sort_widths!(width_modules, one);
            /// Segments of up to `chunk <= 256` keys, several per warp, 8 keys per lane.
            #[unsafe(export_name = concat!("warp_sort_chunks_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn chunks(keys: *mut $K, vals: *mut $V, n: u64, seg: u32, chunk: u32) {
                // SAFETY: the host passes arrays of `n` items and seg <= chunk <= 256.
                unsafe {
                    sort_chunked::<$K, $V, { crate::config::KEYS_PER_LANE as usize }>(
                        Items { keys, vals },
                        n,
                        seg,
                        chunk,
                    )
                }
            }
        }
    };
}
crate::for_items!(entries);
