//! Bitonic sorting networks over items held in registers.
//!
//! Every network here is the all-ascending ("flip") form of Batcher's bitonic
//! sort: phase `s` starts with a *flip* that pairs element `i` with
//! `i ^ (s - 1)` (the mirror image inside its block of `s`), then *half-cleaners*
//! pair `i` with `i ^ j` for `j = s/4, …, 1`. Every compare-exchange puts the
//! smaller item at the lower index, so all 32 lanes of a warp always perform the
//! same kind of operation (the paper's "same direction, no divergence"), and
//! a `MAX`-key pad at the top of a tile never moves: padding a partial tile is
//! exact, even for key-value sorts.
//!
//! Layout: a warp holds `32 * N` items, lane `l` register `r` holds element
//! `l * N + r` (lane-blocked). Strides below `N` are compare-exchanges inside a
//! lane; strides from `N` to `16 * N` are `shfl.sync.bfly` exchanges between
//! lanes; larger strides cross warps and go through shared memory
//! (`block_network`).

use crate::item::Item;

/// Compare-exchange: afterwards `a` is not after `b`. Swaps only when `a`
/// is strictly after `b` (`min`/`max` for plain keys, `selp` for pairs).
#[inline(always)]
pub fn cmpx<I: Item>(a: &mut I, b: &mut I) {
    let swap = a.gt(b);
    let (lo, hi) = if swap { (*b, *a) } else { (*a, *b) };
    *a = lo;
    *b = hi;
}

/// One side of a compare-exchange whose two items sit in different lanes
/// (or warps): the lane holding the lower position keeps the smaller item.
#[inline(always)]
pub fn keep<I: Item>(own: I, partner: I, keep_low: bool) -> I {
    let take_partner = if keep_low { own.gt(&partner) } else { partner.gt(&own) };
    if take_partner { partner } else { own }
}

/// In-lane half-cleaner of stride `J` (< N).
#[inline(always)]
fn half_clean_lane<I: Item, const N: usize, const J: usize>(x: &mut [I; N]) {
    let mut r = 0;
    while r < N {
        if r & J == 0 {
            let (a, b) = x.split_at_mut(r + J);
            cmpx(&mut a[r], &mut b[0]);
        }
        r += 1;
    }
}

/// In-lane flip of block size `S` (<= N): `r` against `r ^ (S - 1)`.
#[inline(always)]
fn flip_lane<I: Item, const N: usize, const S: usize>(x: &mut [I; N]) {
    let mut r = 0;
    while r < N {
        let p = r ^ (S - 1);
        if p > r {
            let (a, b) = x.split_at_mut(p);
            cmpx(&mut a[r], &mut b[0]);
        }
        r += 1;
    }
}

/// In-lane half-cleaner of a run-time stride `j < N`, dispatched to a
/// compile-time stride so that register indices stay constant (a run-time
/// index would move the array to local memory).
#[inline(always)]
pub fn half_clean_in_lane<I: Item, const N: usize>(x: &mut [I; N], j: usize) {
    match j {
        1 => half_clean_lane::<I, N, 1>(x),
        2 => half_clean_lane::<I, N, 2>(x),
        4 => half_clean_lane::<I, N, 4>(x),
        8 => half_clean_lane::<I, N, 8>(x),
        _ => {}
    }
}

/// In-lane flip of a run-time block size `s <= N` (see [`half_clean_in_lane`]).
#[inline(always)]
pub fn flip_in_lane<I: Item, const N: usize>(x: &mut [I; N], s: usize) {
    match s {
        2 => flip_lane::<I, N, 2>(x),
        4 => flip_lane::<I, N, 4>(x),
        8 => flip_lane::<I, N, 8>(x),
        16 => flip_lane::<I, N, 16>(x),
        _ => {}
    }
}

/// Cross-lane half-cleaner: partner lane `lane ^ m`, same register
/// (`shfl.sync.bfly`), the lower lane keeps the minimum.
#[inline(always)]
pub fn half_clean_across<I: Item, const N: usize>(x: &mut [I; N], lane: u32, m: u32) {
    let keep_low = lane & m == 0;
    for r in x.iter_mut() {
        let y = r.shfl_bfly(m);
        *r = keep(*r, y, keep_low);
    }
}

/// Cross-lane flip: lanes `lane` and `lane ^ m` (`m = s/N - 1`) hold mirror
/// images, register `r` against the partner's register `N - 1 - r`.
#[inline(always)]
pub fn flip_across<I: Item, const N: usize>(x: &mut [I; N], lane: u32, m: u32) {
    let keep_low = lane & ((m + 1) >> 1) == 0;
    let mut y = *x;
    for r in 0..N {
        y[r] = x[N - 1 - r].shfl_bfly(m);
    }
    for r in 0..N {
        x[r] = keep(x[r], y[r], keep_low);
    }
}

/// Half-cleaners of strides `j = from, from/2, …, 1` (all within the warp):
/// turns a bitonic warp tile into a sorted one when `from = 16 * N`.
#[inline(always)]
pub fn warp_half_cleaners<I: Item, const N: usize>(x: &mut [I; N], lane: u32, from: usize) {
    let mut j = from;
    while j >= N && j > 0 {
        half_clean_across(x, lane, (j / N) as u32);
        j /= 2;
    }
    while j > 0 {
        half_clean_in_lane(x, j);
        j /= 2;
    }
}

/// Phase `s` (flip, then half-cleaners) for `s <= 32 * N`.
#[inline(always)]
pub fn warp_phase<I: Item, const N: usize>(x: &mut [I; N], lane: u32, s: usize) {
    warp_phase_batch(core::array::from_mut(x), lane, s);
}

/// [`warp_phase`] on `B` independent warp tiles at once: every stage is
/// applied to all of them before the next, so their shuffles and loads
/// overlap (instruction- and memory-level parallelism for short segments).
#[inline(always)]
pub fn warp_phase_batch<I: Item, const N: usize, const B: usize>(xs: &mut [[I; N]; B], lane: u32, s: usize) {
    for x in xs.iter_mut() {
        if s <= N {
            flip_in_lane(x, s);
        } else {
            flip_across(x, lane, (s / N - 1) as u32);
        }
    }
    let mut j = s / 4;
    while j >= N && j > 0 {
        for x in xs.iter_mut() {
            half_clean_across(x, lane, (j / N) as u32);
        }
        j /= 2;
    }
    while j > 0 {
        for x in xs.iter_mut() {
            half_clean_in_lane(x, j);
        }
        j /= 2;
    }
}

/// Sorts the warp's `32 * N` items (lane-blocked) ascending: the complete
/// bitonic network, no barrier, no shared memory.
///
/// The same source sorts a 32-key warp (`N = 1`: every stage is one
/// `shfl.sync.bfly` and a `min`/`max`) and the multi-key variants, whose
/// stages with strides below `N` run inside each lane's registers.
#[inline(always)]
pub fn warp_sort<I: Item, const N: usize>(x: &mut [I; N], lane: u32) {
    warp_sort_batch(core::array::from_mut(x), lane);
}

/// [`warp_sort`] of `B` independent warp tiles, stage by stage together.
#[inline(always)]
pub fn warp_sort_batch<I: Item, const N: usize, const B: usize>(xs: &mut [[I; N]; B], lane: u32) {
    let mut s = 2;
    while s <= 32 * N {
        warp_phase_batch(xs, lane, s);
        s *= 2;
    }
}

/// Sorts each aligned chunk of `chunk` items (a power of two up to `32 * N`)
/// of the warp tile independently: the phases of the network up to `chunk`.
/// With `N = 8` a 32-item chunk spans 4 lanes, so 12 of its 15 stages are
/// compare-exchanges inside registers and only 3 are shuffles.
#[inline(always)]
pub fn warp_sort_chunks<I: Item, const N: usize>(x: &mut [I; N], lane: u32, chunk: usize) {
    let mut s = 2;
    while s <= chunk {
        warp_phase(x, lane, s);
        s *= 2;
    }
}

/// Half-cleaners of every stride of a warp tile held *striped* (lane `l`
/// register `r` holds element `r * 32 + l`): strides `16N … 32` are register
/// pairs inside each lane, strides `16 … 1` are `shfl.sync.bfly` exchanges.
/// Sorts a bitonic warp tile; the striped layout makes its loads and stores
/// coalesced.
#[inline(always)]
pub fn striped_half_cleaners<I: Item, const N: usize>(x: &mut [I; N], lane: u32) {
    let mut jr = N / 2;
    while jr > 0 {
        half_clean_in_lane(x, jr);
        jr /= 2;
    }
    let mut m = 16;
    while m > 0 {
        half_clean_across(x, lane, m);
        m /= 2;
    }
}
