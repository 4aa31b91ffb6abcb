//! GPU-Warpsort as published (Ye et al. 2010), kept selectable beside the
//! tuned pipeline (`Algorithm::WarpsortPaper` on the host):
//!
//! 1. Step 1 is `block_sort_*` run with one warp a block: tiles of
//!    `PAPER_TILE` keys, the barrier-free warp network.
//! 2. Step 2, [`merge_pass`]: a warp merges a pair of sequences through a
//!    `t`-item buffer ([`merge`], the paper's Fig. 4), until `l` sequences
//!    are left.
//! 3. Step 3: [`sample`] draws `s * k` random items of the input (before
//!    step 1), the host sorts them (one block sort), and [`split`] cuts each
//!    of the `l` sequences at every `k`-th sample into `s` groups.
//! 4. Step 4, [`final_round`]: every group's `l` pieces are merged pairwise
//!    by warps, one launch per level of the merge tree; [`group_starts`]
//!    says where each piece lands.

use crate::arch::{global_thread, global_warp, grid_threads, lane_id};
use crate::config::WARP_SIZE;
use crate::item::{Item, Items, Key, Padded, Pair, Word};
use crate::merge_path::first_fail;
use crate::network::{cmpx, striped_half_cleaners};

const W: usize = WARP_SIZE as usize;

/// The paper's warp merge (Fig. 4) of `ca` half-buffer chunks of A and `cb`
/// of B. The buffer holds `t = 2 * 32 * H` items striped over the warp (lane
/// `l`, register `r`: element `32 r + l`); its upper half `keep` stays in
/// registers, sorted. Every round fetches the next chunk of A or of B,
/// whichever's last fetched item is smaller (`a_max <= b_max`: nothing
/// unfetched can then belong in the lower half), reversed, so that `keep`
/// and the chunk form one bitonic sequence; the last phase of the bitonic
/// network (`log t` half-cleaner stages, no barrier) sorts it, and the lower
/// half is emitted.
///
/// `chunk(from_a, c, reversed)` is chunk `c` of A or B, ascending or
/// reversed; `emit(c, half)` stores output chunk `c`.
#[inline(always)]
pub fn merge<I: Item, const H: usize>(
    lane: u32,
    ca: usize,
    cb: usize,
    chunk: impl Fn(bool, usize, bool) -> [I; H],
    emit: impl Fn(usize, &[I; H]),
) {
    if ca + cb == 0 {
        return;
    }
    let first_a = ca > 0;
    let mut keep = chunk(first_a, 0, false);
    // The largest item of a chunk: the last ascending, the first reversed.
    let last = keep[H - 1].shfl_idx(WARP_SIZE - 1);
    let (mut a_max, mut b_max) = (last, last);
    let (mut na, mut nb) = if first_a { (1, 0) } else { (0, 1) };
    let mut out = 0;
    while na + nb < ca + cb {
        let take_a = if na == ca {
            false
        } else if nb == cb || na == 0 {
            true
        } else if nb == 0 {
            false
        } else {
            !a_max.gt(&b_max)
        };
        let mut low = chunk(take_a, if take_a { na } else { nb }, true);
        let max = low[0].shfl_idx(0);
        if take_a {
            (a_max, na) = (max, na + 1);
        } else {
            (b_max, nb) = (max, nb + 1);
        }
        // Stride t/2: `keep` (ascending) against the chunk (descending)
        // sits in the same lane and register; then each half is bitonic.
        for (lo, hi) in low.iter_mut().zip(keep.iter_mut()) {
            cmpx(lo, hi);
        }
        striped_half_cleaners(&mut low, lane);
        striped_half_cleaners(&mut keep, lane);
        emit(out, &low);
        out += 1;
    }
    emit(out, &keep);
}

/// A half-buffer chunk `get(0..32H)`, striped. Reversed, either loaded
/// coalesced (lane `l` reads element `l`) and turned around in registers by
/// one `shfl.sync.bfly 31` (the paper's Fig. 5(b)), or read in reverse
/// order directly (Fig. 5(a), `coalesced == false`).
#[inline(always)]
fn load_chunk<I: Item, const H: usize>(lane: u32, get: impl Fn(usize) -> I, reversed: bool, coalesced: bool) -> [I; H] {
    let e = |r: usize| r * W + lane as usize;
    if reversed && !coalesced {
        return core::array::from_fn(|r| get(W * H - 1 - e(r)));
    }
    let x: [I; H] = core::array::from_fn(|r| get(e(r)));
    if reversed { core::array::from_fn(|r| x[H - 1 - r].shfl_bfly(WARP_SIZE - 1)) } else { x }
}

/// Merges `la` items of `a` and `lb` of `b` into `out` with one warp
/// ([`merge`] through a buffer of `64 * H`). Past their ends A and B read as
/// pads that order after every real item, so no payload is lost.
///
/// # Safety
/// `a`, `b` hold `la`, `lb` items, `out` room for `la + lb` this warp owns.
#[inline(always)]
unsafe fn merge_into<K: Key, V: Word, const H: usize>(
    a: Items<K, V>,
    la: usize,
    b: Items<K, V>,
    lb: usize,
    out: Items<K, V>,
    coalesced: bool,
) {
    let lane = lane_id();
    let half = W * H;
    let total = la + lb;
    let (ca, cb) = (la.div_ceil(half), lb.div_ceil(half));
    let len = move |from_a: bool| if from_a { la } else { lb };
    // SAFETY: reads below `la` or `lb` only.
    let get = move |from_a: bool, i: usize| unsafe {
        if from_a { a.get_or_pad(i, la) } else { b.get_or_pad(i, lb) }
    };
    let put = |c: usize, r: usize, p: Pair<K, V>| {
        let e = c * half + r * W + lane as usize;
        if e < total {
            // SAFETY: below la + lb; the caller gives the warp `out`.
            unsafe { out.set(e, p) };
        }
    };
    if core::mem::size_of::<V>() == 0 {
        // Keys alone: a pad is a MAX key, as good as a real one.
        let chunk = |from_a, c: usize, rev| load_chunk(lane, |i| get(from_a, c * half + i), rev, coalesced);
        merge::<_, H>(lane, ca, cb, chunk, |c, x| x.iter().enumerate().for_each(|(r, p)| put(c, r, *p)));
    } else {
        let padded = |from_a: bool, i: usize| Padded { item: get(from_a, i), pad: (i >= len(from_a)) as u32 };
        let chunk = |from_a, c: usize, rev| load_chunk(lane, |i| padded(from_a, c * half + i), rev, coalesced);
        merge::<_, H>(lane, ca, cb, chunk, |c, x| x.iter().enumerate().for_each(|(r, p)| put(c, r, p.item)));
    }
}

/// Step 2, one pass: a warp per pair of sequences of `run` items (the last
/// ones shorter), `src` to `dst`.
///
/// # Safety
/// `src` and `dst` hold `n` items.
#[inline(always)]
pub unsafe fn merge_pass<K: Key, V: Word, const H: usize>(
    src: Items<K, V>,
    dst: Items<K, V>,
    n: u64,
    run: u64,
    coalesced: u32,
) {
    let (n, run) = (n as usize, run as usize);
    let pairs = n.div_ceil(2 * run);
    let mut p = global_warp();
    while p < pairs {
        let a0 = 2 * p * run;
        let la = run.min(n - a0);
        let lb = run.min(n - a0 - la);
        // SAFETY: the pair lies below n; this warp owns its outputs.
        unsafe { merge_into::<K, V, H>(src.offset(a0), la, src.offset(a0 + la), lb, dst.offset(a0), coalesced != 0) };
        p += grid_threads() / W;
    }
}

/// splitmix64: the `i`-th random sample position's hash.
#[inline(always)]
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Step 3's samples: `count` items of `src` at pseudo-random positions.
///
/// # Safety
/// `src` holds `n > 0` items, `dst` room for `count`.
#[inline(always)]
pub unsafe fn sample<K: Key, V: Word>(src: Items<K, V>, n: u64, dst: Items<K, V>, count: u64) {
    let mut i = global_thread();
    while i < count as usize {
        // SAFETY: the position is below n, i below count.
        unsafe { dst.set(i, src.get((mix(i as u64) % n) as usize)) };
        i += grid_threads();
    }
}

/// Step 3's split: `bounds[g * l + j]`, for `g` in `0..=s`, is where group
/// `g` starts in sequence `j` (`[j * run, min((j + 1) * run, n))`).
/// Splitter `g` (for `0 < g < s`) is sample `g * k` of the sorted samples.
/// Items equal to a splitter are shared out evenly between the groups that
/// splitter and its equal neighbours bound, so equal keys (the paper's
/// zero distribution) still make groups of equal size.
///
/// # Safety
/// `seqs` holds `n` items, `samples` `s * k` sorted, `bounds` room for
/// `(s + 1) * l`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn split<K: Key, V: Word>(
    seqs: Items<K, V>,
    n: u64,
    run: u64,
    l: u64,
    samples: Items<K, V>,
    s: u64,
    k: u64,
    bounds: *mut u64,
) {
    let (n, run, l, s, k) = (n as usize, run as usize, l as usize, s as usize, k as usize);
    let mut t = global_thread();
    while t < (s + 1) * l {
        let (g, j) = (t / l, t % l);
        let start = j * run;
        let len = run.min(n - start);
        let bound = if g == 0 {
            0
        } else if g == s {
            len
        } else {
            // SAFETY: g * k < s * k samples; start + p < n.
            let splitter = |x: usize| unsafe { samples.get(x * k) };
            let item = |p: usize| unsafe { seqs.get(start + p) };
            let v = splitter(g);
            // Splitters equal to v: g0..=g1.
            let g0 = first_fail(1, g, |x| v.gt(&splitter(x)));
            let g1 = first_fail(g, s, |x| !splitter(x).gt(&v)) - 1;
            // Items equal to v: lb..ub.
            let lb = first_fail(0, len, |p| v.gt(&item(p)));
            let ub = first_fail(lb, len, |p| !item(p).gt(&v));
            lb + (ub - lb) * (g - g0 + 1) / (g1 - g0 + 2)
        };
        // SAFETY: t < (s + 1) * l.
        unsafe { *bounds.add(t) = bound as u64 };
        t += grid_threads();
    }
}

/// Inclusive warp scan of 64-bit values (`shfl.sync.up`).
#[inline(always)]
fn scan_u64(mut x: u64, lane: u32) -> u64 {
    let mut d = 1;
    while d < WARP_SIZE {
        let y = x.shfl_up(d);
        if lane >= d {
            x += y;
        }
        d *= 2;
    }
    x
}

/// Where step 4 puts the pieces, a warp per group `g`: entry
/// `g * (l + 1) + j` of `starts` is the length of group `g`'s pieces before
/// piece `j` (`j <= l`), `offsets[g]` where the group starts in the output
/// (the sum of its lower bounds over all sequences: everything before it).
///
/// # Safety
/// `bounds` holds `(s + 1) * l` entries, `starts` room for `s * (l + 1)`,
/// `offsets` for `s`.
#[inline(always)]
pub unsafe fn group_starts(bounds: *const u64, l: u64, s: u64, starts: *mut u64, offsets: *mut u64) {
    let (l, s) = (l as usize, s as usize);
    let lane = lane_id();
    let mut g = global_warp();
    while g < s {
        let (mut before, mut offset) = (0u64, 0u64);
        let mut j0 = 0;
        while j0 < l {
            let j = j0 + lane as usize;
            // SAFETY: j < l, g < s: inside bounds.
            let (lo, hi) = if j < l { unsafe { (*bounds.add(g * l + j), *bounds.add((g + 1) * l + j)) } } else { (0, 0) };
            let len = scan_u64(hi - lo, lane);
            if j < l {
                // SAFETY: g * (l + 1) + j < s * (l + 1).
                unsafe { *starts.add(g * (l + 1) + j) = before + len - (hi - lo) };
            }
            before += len.shfl_idx(WARP_SIZE - 1);
            offset += scan_u64(lo, lane).shfl_idx(WARP_SIZE - 1);
            j0 += W;
        }
        if lane == 0 {
            // SAFETY: as above.
            unsafe {
                *starts.add(g * (l + 1) + l) = before;
                *offsets.add(g) = offset;
            }
        }
        g += grid_threads() / W;
    }
}

/// Step 4, level `round` of every group's merge tree: a warp per pair of
/// pieces (each `2^round` of the group's original pieces). Level 0 reads
/// the pieces from the sequences in `src`; later levels read the group's
/// own range of `src`, where the level before left them. Writes the group's
/// range of `dst`.
///
/// # Safety
/// `src` and `dst` hold `n` items; `bounds`, `starts` and `offsets` as
/// [`split`] and [`group_starts`] made them.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn final_round<K: Key, V: Word, const H: usize>(
    src: Items<K, V>,
    dst: Items<K, V>,
    run: u64,
    l: u64,
    bounds: *const u64,
    starts: *const u64,
    offsets: *const u64,
    s: u64,
    round: u32,
    coalesced: u32,
) {
    let (run, l, s) = (run as usize, l as usize, s as usize);
    let span = 1usize << round;
    let pairs = l.div_ceil(span).div_ceil(2);
    let mut w = global_warp();
    while w < s * pairs {
        let (g, m) = (w / pairs, w % pairs);
        // SAFETY: g < s, every j <= l.
        let at = |j: usize| unsafe { *starts.add(g * (l + 1) + j) } as usize;
        let bound = |g: usize, j: usize| unsafe { *bounds.add(g * l + j) } as usize;
        let offset = unsafe { *offsets.add(g) } as usize;
        let (j0, j1, j2) = (2 * m * span, (2 * m * span + span).min(l), (2 * m * span + 2 * span).min(l));
        // SAFETY: every piece lies inside its sequence (level 0) or the
        // group's range; this warp owns its output range.
        unsafe {
            let out = dst.offset(offset + at(j0));
            let (a, la, b, lb) = if round == 0 {
                let piece = |j: usize| (src.offset(j * run + bound(g, j)), bound(g + 1, j) - bound(g, j));
                let (a, la) = piece(j0);
                let (b, lb) = if j1 < l { piece(j1) } else { (a, 0) };
                (a, la, b, lb)
            } else {
                let piece = |j: usize| src.offset(offset + at(j));
                (piece(j0), at(j1) - at(j0), piece(j1), at(j2) - at(j1))
            };
            merge_into::<K, V, H>(a, la, b, lb, out, coalesced != 0);
        }
        w += grid_threads() / W;
    }
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            macro_rules! widths {
                ($h:literal, $t:literal) => {
                    src_dst_kernel!(
                        concat!(crate::kernel_name!(paper_merge), $t, "_", stringify!($sfx)),
                        /// Step 2: one pass of warp merges through a buffer of `t` items.
                        fn pass<$K, $V>(n: u64, run: u64, coalesced: u32) => merge_pass::<$K, $V, $h>
                    );
                    src_dst_kernel!(
                        concat!(crate::kernel_name!(paper_final), $t, "_", stringify!($sfx)),
                        /// Step 4: one level of every group's merge tree.
                        fn final_level<$K, $V>(
                            run: u64,
                            l: u64,
                            bounds: *const u64,
                            starts: *const u64,
                            offsets: *const u64,
                            s: u64,
                            round: u32,
                            coalesced: u32
                        ) => final_round::<$K, $V, $h>
                    );
                };
            }
            crate::paper_buffer_widths!(width_modules, widths);
            /// Step 3: random samples of the input.
            #[unsafe(export_name = concat!(crate::kernel_name!(paper_sample), "_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn sample_items(
                keys: *mut <$K as $crate::item::Key>::Mem,
                vals: *mut $V,
                n: u64,
                sample_keys: *mut $K,
                sample_vals: *mut $V,
                count: u64,
            ) {
                // SAFETY: the host passes `n` items and room for `count` samples.
                unsafe { sample(Items { keys, vals }, n, Items::<$K, $V> { keys: sample_keys, vals: sample_vals }, count) }
            }
            /// Step 3: the `l` sequences cut at the splitters.
            #[unsafe(export_name = concat!(crate::kernel_name!(paper_split), "_", stringify!($sfx)))]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "ptx-kernel" fn split_sequences(
                keys: *mut <$K as $crate::item::Key>::Mem,
                vals: *mut $V,
                n: u64,
                run: u64,
                l: u64,
                sample_keys: *mut $K,
                sample_vals: *mut $V,
                s: u64,
                k: u64,
                bounds: *mut u64,
            ) {
                let samples = Items::<$K, $V> { keys: sample_keys, vals: sample_vals };
                // SAFETY: the host passes the sequences, sorted samples and room for the bounds.
                unsafe { split(Items { keys, vals }, n, run, l, samples, s, k, bounds) }
            }
        }
    };
}
crate::for_items!(entries);
crate::for_ranked!(entries);

/// Step 4's piece starts and group offsets (see [`group_starts`]).
#[unsafe(export_name = crate::kernel_name!(paper_group_starts))]
pub unsafe extern "ptx-kernel" fn group_starts_kernel(
    bounds: *const u64,
    l: u64,
    s: u64,
    starts: *mut u64,
    offsets: *mut u64,
) {
    // SAFETY: the host passes tables of the sizes [`group_starts`] names.
    unsafe { group_starts(bounds, l, s, starts, offsets) }
}
