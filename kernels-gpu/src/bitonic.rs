//! The global stage of the full-array bitonic sort: one launch per stage,
//! one thread per compare-exchange, for any `n` (not only powers of two).
//!
//! The array is treated as padded to the next power of two with `MAX` keys
//! that are never stored: in the all-ascending network a compare-exchange
//! whose upper element is a pad never swaps, so pairs reaching past `n` are
//! skipped. Run alone for every stage this is the naive reference sort; the
//! fused sort uses it only for strides of at least `BLOCK_TILE`.

use crate::arch::{global_thread, grid_threads};
use crate::item::{Item, Items, Key, Pair, Word, choose};

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
                        x[t] = choose!(swap, hi, lo);
                        x[u] = choose!(swap, lo, hi);
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

/// A phase's flip and the `C - 1` half-cleaners after it, in one pass. The
/// flip pairs `i` with its mirror `s - 1 - i`, so a thread owns a group and
/// its mirror image: the `2^C` positions `t << low | l` and the `2^C`
/// positions `t << low | l'` with `l' = !l` below bit `low = log_s - C`.
/// The flip compares `(t, l)` with `(2^C - 1 - t, l')`; the half-cleaners
/// stay inside each side.
///
/// # Safety
/// `items` holds `n` items; `1 <= C <= 3`, `log_s > C`.
#[inline(always)]
pub unsafe fn global_flip_half_cleaners<K: Key, V: Word, const C: usize>(items: Items<K, V>, n: u64, log_s: u32) {
    let n = n as usize;
    let g_size = 1usize << C;
    let low = log_s - C as u32;
    let groups = n.next_power_of_two() >> (C + 1);
    let mut g = global_thread();
    while g < groups {
        let block = (g >> (low - 1)) << log_s;
        let l = g & ((1 << (low - 1)) - 1);
        let lm = ((1 << low) - 1) - l;
        let at = |t: usize, side: usize| block + (t << low) + side;
        // The group's smallest index is (0, l): nothing to do past n.
        if at(0, l) < n {
            let (mut a, mut b) = ([Pair::<K, V>::pad(); 8], [Pair::<K, V>::pad(); 8]);
            for t in 0..8 {
                if t < g_size {
                    // SAFETY: reads only below n.
                    unsafe {
                        a[t] = items.get_or_pad(at(t, l), n);
                        b[t] = items.get_or_pad(at(t, lm), n);
                    }
                }
            }
            // Flip: the lower of each mirrored pair keeps the minimum.
            for t in 0..4 {
                if t < g_size / 2 {
                    cmpx_at(&mut a, &mut b, t, g_size - 1 - t);
                    cmpx_at(&mut b, &mut a, t, g_size - 1 - t);
                }
            }
            for bit in (0..C - 1).rev() {
                for t in 0..8 {
                    let u = t | (1 << bit);
                    if t & (1 << bit) == 0 && u < g_size {
                        cmpx_in(&mut a, t, u);
                        cmpx_in(&mut b, t, u);
                    }
                }
            }
            for t in 0..8 {
                if t < g_size {
                    // SAFETY: below n; groups are disjoint.
                    unsafe {
                        if at(t, l) < n {
                            items.set(at(t, l), a[t]);
                        }
                        if at(t, lm) < n {
                            items.set(at(t, lm), b[t]);
                        }
                    }
                }
            }
        }
        g += grid_threads();
    }
}

/// Compare-exchange of `lo[i]` (lower position) and `hi[j]`.
#[inline(always)]
fn cmpx_at<I: Item>(lo: &mut [I; 8], hi: &mut [I; 8], i: usize, j: usize) {
    let (x, y) = (lo[i], hi[j]);
    let swap = x.gt(&y);
    lo[i] = choose!(swap, y, x);
    hi[j] = choose!(swap, x, y);
}

/// Compare-exchange of `x[i]` (lower position) and `x[j]`.
#[inline(always)]
fn cmpx_in<I: Item>(x: &mut [I; 8], i: usize, j: usize) {
    let (p, q) = (x[i], x[j]);
    let swap = p.gt(&q);
    x[i] = choose!(swap, q, p);
    x[j] = choose!(swap, p, q);
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            /// One global bitonic stage.
            #[unsafe(export_name = concat!(crate::kernel_name!(bitonic_stage), "_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn stage(keys: *mut <$K as $crate::item::Key>::Mem, vals: *mut $V, n: u64, log_s: u32, log_j: u32) {
                // SAFETY: the host passes arrays of `n` items.
                unsafe { global_stage::<$K, $V>(Items { keys, vals }, n, log_s, log_j) }
            }
            /// Two half-cleaner stages in one pass.
            #[unsafe(export_name = concat!(crate::kernel_name!(bitonic_hc), 2, "_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn hc2(keys: *mut <$K as $crate::item::Key>::Mem, vals: *mut $V, n: u64, log_j: u32) {
                // SAFETY: the host passes arrays of `n` items.
                unsafe { global_half_cleaners::<$K, $V, 2>(Items { keys, vals }, n, log_j) }
            }
            /// A flip and the two half-cleaners after it in one pass.
            #[unsafe(export_name = concat!(crate::kernel_name!(bitonic_flip), 3, "_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn flip3(keys: *mut <$K as $crate::item::Key>::Mem, vals: *mut $V, n: u64, log_s: u32) {
                // SAFETY: the host passes arrays of `n` items.
                unsafe { global_flip_half_cleaners::<$K, $V, 3>(Items { keys, vals }, n, log_s) }
            }
            /// A flip and the half-cleaner after it in one pass.
            #[unsafe(export_name = concat!(crate::kernel_name!(bitonic_flip), 2, "_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn flip2(keys: *mut <$K as $crate::item::Key>::Mem, vals: *mut $V, n: u64, log_s: u32) {
                // SAFETY: the host passes arrays of `n` items.
                unsafe { global_flip_half_cleaners::<$K, $V, 2>(Items { keys, vals }, n, log_s) }
            }
            /// Three half-cleaner stages in one pass.
            #[unsafe(export_name = concat!(crate::kernel_name!(bitonic_hc), 3, "_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn hc3(keys: *mut <$K as $crate::item::Key>::Mem, vals: *mut $V, n: u64, log_j: u32) {
                // SAFETY: the host passes arrays of `n` items.
                unsafe { global_half_cleaners::<$K, $V, 3>(Items { keys, vals }, n, log_j) }
            }
        }
    };
}
crate::for_items!(entries);
crate::for_ranked!(entries);
