//! The global stage of the full-array bitonic sort: one launch per stage,
//! one thread per compare-exchange, for any `n` (not only powers of two).
//!
//! The array is treated as padded to the next power of two with `MAX` keys
//! that are never stored: in the all-ascending network a compare-exchange
//! whose upper element is a pad never swaps, so pairs reaching past `n` are
//! skipped. Run alone for every stage this is the naive reference sort; the
//! fused sort uses it only for strides of at least `BLOCK_TILE`.

use crate::arch::{global_thread, grid_threads};
use crate::item::{Item, Items, Key, Pair, Word};

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

/// `C` consecutive half-cleaner stages, strides `2^log_j` down to
/// `2^(log_j - C + 1)`, in one pass over memory: each thread owns the `2^C`
/// items those stages mix (a radix-`2^C` step), so the sort reads and writes
/// the array once per `C` stages instead of once per stage.
///
/// # Safety
/// `items` holds `n` items; `log_j + 1 >= C`.
#[inline(always)]
pub unsafe fn global_half_cleaners<K: Key, V: Word, const C: usize>(items: Items<K, V>, n: u64, log_j: u32) {
    let n = n as usize;
    let low = log_j + 1 - C as u32;
    let groups = n.next_power_of_two() >> C;
    let mut g = global_thread();
    while g < groups {
        // Insert C zero bits at positions low..=log_j of the group number.
        let base = ((g >> low) << (log_j + 1)) | (g & ((1 << low) - 1));
        let at = |t: usize| base + (t << low);
        if at(0) < n {
            let g_size = 1usize << C;
            let mut x = [Pair::<K, V>::pad(); 8];
            for (t, slot) in x.iter_mut().enumerate() {
                if t < g_size {
                    // SAFETY: reads only below n.
                    *slot = unsafe { items.get_or_pad(at(t), n) };
                }
            }
            for b in (0..C).rev() {
                for t in 0..8 {
                    let u = t | (1 << b);
                    if t & (1 << b) == 0 && u < g_size {
                        let (lo, hi) = (x[t], x[u]);
                        let swap = lo.gt(&hi);
                        x[t] = if swap { hi } else { lo };
                        x[u] = if swap { lo } else { hi };
                    }
                }
            }
            for (t, item) in x.iter().enumerate() {
                if t < g_size && at(t) < n {
                    // SAFETY: below n; groups are disjoint.
                    unsafe { items.set(at(t), *item) };
                }
            }
        }
        g += grid_threads();
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
            /// Two half-cleaner stages in one pass.
            #[unsafe(export_name = concat!("bitonic_hc2_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn hc2(keys: *mut $K, vals: *mut $V, n: u64, log_j: u32) {
                // SAFETY: the host passes arrays of `n` items.
                unsafe { global_half_cleaners::<$K, $V, 2>(Items { keys, vals }, n, log_j) }
            }
            /// Three half-cleaner stages in one pass.
            #[unsafe(export_name = concat!("bitonic_hc3_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn hc3(keys: *mut $K, vals: *mut $V, n: u64, log_j: u32) {
                // SAFETY: the host passes arrays of `n` items.
                unsafe { global_half_cleaners::<$K, $V, 3>(Items { keys, vals }, n, log_j) }
            }
        }
    };
}
crate::for_items!(entries);
