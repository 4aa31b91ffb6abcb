//! Warp sort: each warp sorts one segment of up to `32 * N` items entirely in
//! registers (the bitonic network of `network::warp_sort`: no shared memory, no
//! barrier). Short segments and idle lanes hold `MAX` pads.

use crate::arch::{global_warp, grid_threads, lane_id};
use crate::config::WARP_SIZE;
use crate::item::{Items, Key, Word};
use crate::network;
use crate::tile::{load_blocked, store_blocked};

/// Sorts every segment `[s * seg, min((s + 1) * seg, n))`, one warp each,
/// grid-stride over segments. Requires `seg <= 32 * N`.
///
/// # Safety
/// `items` holds `n` items.
#[inline(always)]
pub unsafe fn sort_segments<K: Key, V: Word, const N: usize>(items: Items<K, V>, n: u64, seg: u32) {
    let (n, seg) = (n as usize, seg as usize);
    let lane = lane_id();
    let segments = n.div_ceil(seg);
    let mut s = global_warp();
    while s < segments {
        let start = s * seg;
        let len = seg.min(n - start);
        // SAFETY: the segment lies inside the arrays.
        let it = unsafe { items.offset(start) };
        // SAFETY: `it` holds `len` items; this warp owns the segment.
        let mut x = unsafe { load_blocked::<K, V, N>(&it, lane as usize, len) };
        network::warp_sort(&mut x, lane);
        unsafe { store_blocked(&it, lane as usize, len, &x) };
        s += grid_threads() / WARP_SIZE as usize;
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
                        unsafe { sort_segments::<$K, $V, $n>(Items { keys, vals }, n, seg) }
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
