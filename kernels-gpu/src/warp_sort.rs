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
            #[doc = "One segment size."]
            pub mod k32 {
                use super::*;
                one!(1, "warp_sort32");
            }
            #[doc = "One segment size."]
            pub mod k64 {
                use super::*;
                one!(2, "warp_sort64");
            }
            #[doc = "One segment size."]
            pub mod k128 {
                use super::*;
                one!(4, "warp_sort128");
            }
            #[doc = "One segment size."]
            pub mod k256 {
                use super::*;
                one!(8, "warp_sort256");
            }
            #[doc = "One segment size."]
            pub mod k512 {
                use super::*;
                one!(16, "warp_sort512");
            }
        }
    };
}
crate::for_items!(entries);
