//! GPU-Warpsort's split, done exactly by merge path (the paper's step 3,
//! tuned): every merge pass cuts its outputs into equal windows, and a
//! merge-path search finds each window's inputs, so every block or warp gets
//! the same work whatever the data (sorted input included).
//!
//! - [`merge_path_by`]: the binary search along a cross diagonal, over any
//!   accessor (shared memory inside the merges, global memory here);
//! - [`Samples`]: every `SAMPLE_STRIDE`-th item of a pass's sorted runs,
//!   written by the kernel that made them;
//! - [`partition`]: one search per window. A search in global memory reads
//!   a scattered 32-byte sector per probe, and those reads, not their
//!   latency, bound it (more probes a round only made it slower), so it
//!   searches the samples first (a compact array that stays in L2), then
//!   only the `2 * SAMPLE_STRIDE` items that bracket the answer.

use crate::arch::{global_thread, grid_threads};
use crate::config::{SAMPLE_STRIDE, pair_table};
use crate::item::{Item, Items, Key, Pair, Word};

/// The runs a window's outputs come from: `n` items in pairs of sorted
/// runs, a pair every `2 * run` items, its first run `split` long. A sort's
/// passes have `split == run`, a power of two (the host's tiles are powers
/// of two and double each pass); a merge of two runs of any lengths is one
/// pair (`2 * run >= n`) split where the second run starts. A round of
/// merges of runs of any lengths has a table of its pairs instead
/// (`pairs`, laid as `config::pair_table` says; null for the others).
#[derive(Clone, Copy)]
pub(crate) struct Pass {
    pub n: usize,
    pub run: usize,
    pub split: usize,
    pub pairs: *const u64,
}

impl Pass {
    /// `(a_begin, a_end, b_end)` of the pair that output index `o` belongs
    /// to (a pass without a table).
    #[inline(always)]
    pub fn pair(&self, o: usize) -> (usize, usize, usize) {
        let a = o / (2 * self.run) * (2 * self.run);
        (a, (a + self.split).min(self.n), (a + 2 * self.run).min(self.n))
    }

    /// Windows of `w_len` outputs in the pass.
    #[inline(always)]
    pub fn windows(&self, w_len: usize) -> usize {
        if self.pairs.is_null() {
            return self.n.div_ceil(w_len);
        }
        // SAFETY: a table holds its header (the host's contract).
        unsafe { *self.pairs.add(pair_table::WINDOWS) as usize }
    }

    /// `(o, a_begin, a_end, b_end)`: where window `w` (of `w_len` outputs)
    /// starts, and its pair. With a table, the pair is the last whose first
    /// window is not past `w` (a search of a few words that stay in L1).
    #[inline(always)]
    pub fn window(&self, w: usize, w_len: usize) -> (usize, usize, usize, usize) {
        if self.pairs.is_null() {
            let o = w * w_len;
            let (a, a_end, b_end) = self.pair(o);
            return (o, a, a_end, b_end);
        }
        // SAFETY: the table holds its header and `PAIRS` entries (the host's
        // contract), and pair 0's first window is 0, so `i` is a pair.
        let word = |i: usize| unsafe { *self.pairs.add(i) as usize };
        let entry = |i: usize, f: usize| word(pair_table::FIRST + pair_table::ENTRY * i + f);
        let i = first_fail(1, word(pair_table::PAIRS), |i| entry(i, 0) <= w) - 1;
        let a = entry(i, 1);
        (a + (w - entry(i, 0)) * w_len, a, entry(i, 2), entry(i, 3))
    }
}

/// The first `i` in `lo..hi` for which `goes_first(i)` fails (`hi` when
/// none does); `goes_first` holds below it (binary search).
#[inline(always)]
pub fn first_fail<X: Index>(mut lo: X, mut hi: X, goes_first: impl Fn(X) -> bool) -> X {
    while lo < hi {
        let mid = (lo + hi) >> 1;
        if goes_first(mid) { lo = mid + X::ONE } else { hi = mid }
    }
    lo
}

/// Merge path over two sorted sequences given by accessors: how many of the
/// first `diag` outputs come from A (ties from A first). Indices are `usize`
/// in global memory and `u32` inside a tile (half the integer instructions
/// of 64-bit arithmetic).
#[inline(always)]
pub fn merge_path_by<I: Item, X: Index>(a: impl Fn(X) -> I, la: X, b: impl Fn(X) -> I, lb: X, diag: X) -> X {
    first_fail(diag.saturating_sub(lb), diag.min(la), |m| !a(m).gt(&b(diag - X::ONE - m)))
}

/// An unsigned index type a merge-path search runs on.
pub trait Index:
    Copy + Ord + core::ops::Add<Output = Self> + core::ops::Sub<Output = Self> + core::ops::Shr<u32, Output = Self>
{
    /// One.
    const ONE: Self;
    /// `self - other`, or zero below it.
    fn saturating_sub(self, other: Self) -> Self;
}

impl Index for u32 {
    const ONE: Self = 1;
    #[inline(always)]
    fn saturating_sub(self, other: Self) -> Self {
        u32::saturating_sub(self, other)
    }
}

impl Index for usize {
    const ONE: Self = 1;
    #[inline(always)]
    fn saturating_sub(self, other: Self) -> Self {
        usize::saturating_sub(self, other)
    }
}

/// Every `SAMPLE_STRIDE`-th item of a pass's sorted runs (item `i` of the
/// samples is item `i * SAMPLE_STRIDE` of the runs), or none (null keys):
/// `n / 32` items, written by the kernel that sorted or merged the runs,
/// read by the next pass's [`partition`]. Payloads are kept only when they
/// take part in comparisons ([`Word::BREAKS_TIES`]: ranked items).
#[derive(Clone, Copy)]
pub struct Samples<K, V> {
    /// Sample keys (null: no samples).
    pub keys: *mut K,
    /// Sample payloads (read and written only for ranked items).
    pub vals: *mut V,
}

impl<K: Key, V: Word> Samples<K, V> {
    /// Whether there are samples to write or read.
    #[inline(always)]
    pub fn is_some(&self) -> bool {
        !self.keys.is_null()
    }

    /// Records `p`, item `e` of the runs, when `e` is a sample position.
    ///
    /// # Safety
    /// The samples hold `n / SAMPLE_STRIDE` (rounded up) items for runs of
    /// `n` items, `e < n`, and no other thread writes this sample.
    #[inline(always)]
    pub unsafe fn record(&self, e: usize, p: Pair<K, V>) {
        if self.is_some() && e.is_multiple_of(SAMPLE_STRIDE as usize) {
            let i = e / SAMPLE_STRIDE as usize;
            // SAFETY: i is below the sample count (the caller's contract).
            unsafe {
                *self.keys.add(i) = p.k;
                if V::BREAKS_TIES {
                    *self.vals.add(i) = p.v;
                }
            }
        }
    }

    /// Sample `i`.
    ///
    /// # Safety
    /// Sample `i` was recorded.
    #[inline(always)]
    unsafe fn get(&self, i: usize) -> Pair<K, V> {
        // SAFETY: the caller's contract.
        unsafe { Pair { k: *self.keys.add(i), v: if V::BREAKS_TIES { *self.vals.add(i) } else { V::default() } } }
    }
}

/// Merge path at `diag` of the pair A = `items[a..a_end]`, B =
/// `items[a_end..b_end]`, with the samples of those runs: a search over the
/// samples puts the answer within `SAMPLE_STRIDE` of `k * SAMPLE_STRIDE`, a
/// probe on each side checks that it is there (the predicate changes inside
/// the bracket), and a search of the bracket finds it; should the check
/// fail, the search covers the whole range. Positions `a`, `a_end` and
/// `diag` are multiples of `SAMPLE_STRIDE` (runs and windows are).
///
/// # Safety
/// The pair lies inside `items`, and `samples` holds every sample of it.
#[inline(always)]
unsafe fn split_by_samples<K: Key, V: Word>(
    items: Items<K, V>,
    samples: Samples<K, V>,
    (a, a_end, b_end): (usize, usize, usize),
    diag: usize,
) -> usize {
    let s = SAMPLE_STRIDE as usize;
    let (la, lb) = (a_end - a, b_end - a_end);
    // SAFETY (loads): A indices below la, B indices below lb, samples of both.
    let goes_first = |i: usize| unsafe { !items.get(a + i).gt(&items.get(a_end + diag - 1 - i)) };
    let (lo0, hi0) = (diag.saturating_sub(lb), diag.min(la));
    let k = merge_path_by(
        |i| unsafe { samples.get(a / s + i) },
        la.div_ceil(s),
        |j| unsafe { samples.get(a_end / s + j) },
        lb.div_ceil(s),
        diag / s,
    );
    let (lo, hi) = (lo0.max((k * s).saturating_sub(s)), hi0.min(k * s + s));
    let bracketed = lo <= hi && (lo == lo0 || goes_first(lo - 1)) && (hi == hi0 || !goes_first(hi));
    if bracketed { first_fail(lo, hi, goes_first) } else { first_fail(lo0, hi0, goes_first) }
}

/// Writes `parts[w]`, the index in A where window `w` (of `window` outputs,
/// a multiple of `SAMPLE_STRIDE`) starts, one thread per window, launched in
/// small blocks (the host's policy) so that the searches spread over
/// every SM. With samples of the runs the search starts from them
/// ([`split_by_samples`]), else it is a binary search of the whole range.
///
/// # Safety
/// `items` holds `n` items, `samples` (if any) every sample of them, `parts`
/// one slot per window; `pairs` is null or a round's table
/// (`config::pair_table`) whose pairs lie within the items (no samples).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn partition<K: Key, V: Word>(
    items: Items<K, V>,
    samples: Samples<K, V>,
    n: u64,
    run: u64,
    split: u64,
    window: u64,
    parts: *mut u64,
    pairs: *const u64,
) {
    crate::arch::chain_launch();
    let pass = Pass { n: n as usize, run: run as usize, split: split as usize, pairs };
    let w_len = window as usize;
    let windows = pass.windows(w_len);
    let mut w = global_thread();
    while w < windows {
        let (o, a, a_end, b_end) = pass.window(w, w_len);
        let take = if samples.is_some() {
            // SAFETY: the pair lies inside the array; its samples exist.
            unsafe { split_by_samples(items, samples, (a, a_end, b_end), o - a) }
        } else {
            // SAFETY: A indices below a_end - a, B indices below b_end - a_end.
            let (ga, gb) = (|i| unsafe { items.get(a + i) }, |j| unsafe { items.get(a_end + j) });
            merge_path_by(ga, a_end - a, gb, b_end - a_end, o - a)
        };
        // SAFETY: parts has one slot per window.
        unsafe { *parts.add(w) = (a + take) as u64 };
        w += grid_threads();
    }
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            /// Merge-path partition of one merge pass into windows of `window` outputs.
            #[unsafe(export_name = concat!(crate::kernel_name!(merge_partition), "_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn part(
                keys: *mut <$K as $crate::item::Key>::Mem,
                vals: *mut $V,
                sample_keys: *mut $K,
                sample_vals: *mut $V,
                n: u64,
                run: u64,
                split: u64,
                window: u64,
                parts: *mut u64,
                pairs: *const u64,
            ) {
                let samples = Samples { keys: sample_keys, vals: sample_vals };
                // SAFETY: the host passes `n` items, their samples or null, one slot per window, a table or null.
                unsafe { partition::<$K, $V>(Items { keys, vals }, samples, n, run, split, window, parts, pairs) }
            }
        }
    };
}
crate::for_items!(entries);
crate::for_ranked!(entries);

/// Writes `out[i]`, how many of the `n` sorted ordered patterns in `keys`
/// go before `queries[i]`: those below it (`upper[i] == 0`, a lower bound)
/// or those not above it (an upper bound). One thread per query: the
/// distributed sort's bucket bounds, a few per GPU.
///
/// # Safety
/// `keys` holds `n` patterns sorted ascending; `queries`, `upper` and `out`
/// hold `q` entries.
#[inline(always)]
pub unsafe fn search_bounds<W: Copy + Ord>(keys: *const W, n: u64, queries: *const W, upper: *const u32, q: u64, out: *mut u64) {
    let mut i = global_thread();
    while i < q as usize {
        // SAFETY: i < q.
        let (x, up) = unsafe { (*queries.add(i), *upper.add(i) != 0) };
        // SAFETY: indices below n.
        let before = |j: usize| unsafe { if up { *keys.add(j) <= x } else { *keys.add(j) < x } };
        let at = first_fail(0usize, n as usize, before);
        // SAFETY: i < q.
        unsafe { *out.add(i) = at as u64 };
        i += grid_threads();
    }
}

/// Bounds of 32-bit ordered patterns ([`search_bounds`]).
#[unsafe(export_name = concat!(crate::kernel_name!(search_bounds), "_u32"))]
pub unsafe extern "ptx-kernel" fn search_bounds_u32(
    keys: *const u32,
    n: u64,
    queries: *const u32,
    upper: *const u32,
    q: u64,
    out: *mut u64,
) {
    // SAFETY: the host passes `n` sorted keys and `q` queries, flags and slots.
    unsafe { search_bounds(keys, n, queries, upper, q, out) }
}

/// Bounds of 64-bit ordered patterns ([`search_bounds`]).
#[unsafe(export_name = concat!(crate::kernel_name!(search_bounds), "_u64"))]
pub unsafe extern "ptx-kernel" fn search_bounds_u64(
    keys: *const u64,
    n: u64,
    queries: *const u64,
    upper: *const u32,
    q: u64,
    out: *mut u64,
) {
    // SAFETY: the host passes `n` sorted keys and `q` queries, flags and slots.
    unsafe { search_bounds(keys, n, queries, upper, q, out) }
}
