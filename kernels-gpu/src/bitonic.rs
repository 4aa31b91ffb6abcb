//! The global stage of the full-array bitonic sort: one launch per stage,
//! one thread per compare-exchange, for any `n` (not only powers of two).
//!
//! The array is treated as padded to the next power of two with `MAX` keys
//! that are never stored: in the all-ascending network a compare-exchange
//! whose upper element is a pad never swaps, so pairs reaching past `n` are
//! skipped. Run alone for every stage this is the naive reference sort; the
//! fused sort uses it only for strides of at least `BLOCK_TILE`.

use crate::arch::{global_thread, grid_threads};
use crate::item::{Item, Items, Key, Word};

/// One stage of phase `2^log_s` with stride `2^log_j` (a flip when
/// `log_j == log_s - 1`, else a half-cleaner).
///
/// # Safety
/// `items` holds `n` items.
#[inline(always)]
pub unsafe fn global_stage<K: Key, V: Word>(items: Items<K, V>, n: u64, log_s: u32, log_j: u32) {
    let n = n as usize;
    let pairs = n.next_power_of_two() / 2;
    let flip = log_j + 1 == log_s;
    let mut p = global_thread();
    while p < pairs {
        let (i, q) = if flip {
            let (blk, o) = (p >> log_j, p & ((1 << log_j) - 1));
            let base = blk << log_s;
            (base + o, base + (1 << log_s) - 1 - o)
        } else {
            let (blk, o) = (p >> log_j, p & ((1 << log_j) - 1));
            let i = (blk << (log_j + 1)) + o;
            (i, i + (1 << log_j))
        };
        if q < n {
            // SAFETY: i < q < n; pairs of one stage are disjoint.
            unsafe {
                let (a, b) = (items.get(i), items.get(q));
                if a.gt(&b) {
                    items.set(i, b);
                    items.set(q, a);
                }
            }
        }
        p += grid_threads();
    }
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            /// One global bitonic stage.
            #[unsafe(export_name = concat!("bitonic_stage_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn stage(keys: *mut $K, vals: *mut $V, n: u64, log_s: u32, log_j: u32) {
                // SAFETY: the host passes arrays of `n` items.
                unsafe { global_stage::<$K, $V>(Items { keys, vals }, n, log_s, log_j) }
            }
        }
    };
}
crate::for_items!(entries);
