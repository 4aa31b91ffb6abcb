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
//!
//! Every stage takes its stride as a const parameter, and the phases are
//! spelled out (`phases!`): the whole network unrolls into straight-line
//! code, register indices and shuffle masks constant. (Written as loops over
//! run-time strides, LLVM kept the larger networks rolled: a jump table per
//! in-lane stage and register copies between iterations.)

use crate::item::Item;

/// Compare-exchange: afterwards `a` is not after `b`. Swaps only when `a`
/// is strictly after `b` (`min`/`max` for 32-bit keys, one compare and `selp` otherwise).
#[inline(always)]
pub fn cmpx<I: Item>(a: &mut I, b: &mut I) {
    let swap = a.gt(b);
    #[cfg(not(warpsort_custom))]
    let (lo, hi) = if swap { (*b, *a) } else { (*a, *b) };
    #[cfg(warpsort_custom)]
    let (lo, hi) = (crate::item::choose!(swap, *b, *a), crate::item::choose!(swap, *a, *b));
    *a = lo;
    *b = hi;
}

/// One side of a compare-exchange whose two items sit in different lanes
/// (or warps): the lane holding the lower position keeps the smaller item
/// ([`Item::keep`]).
#[inline(always)]
pub fn keep<I: Item>(own: I, partner: I, keep_low: bool) -> I {
    own.keep(partner, keep_low)
}

/// In-lane half-cleaner of stride `J` (< N).
#[inline(always)]
fn half_clean_lane<I: Item, const N: usize, const J: usize>(x: &mut [I; N]) {
    for r in 0..N {
        if r & J == 0 {
            let (a, b) = x.split_at_mut(r + J);
            cmpx(&mut a[r], &mut b[0]);
        }
    }
}

/// In-lane flip of block size `S` (<= N): `r` against `r ^ (S - 1)`.
#[inline(always)]
fn flip_lane<I: Item, const N: usize, const S: usize>(x: &mut [I; N]) {
    for r in 0..N {
        let p = r ^ (S - 1);
        if p > r {
            let (a, b) = x.split_at_mut(p);
            cmpx(&mut a[r], &mut b[0]);
        }
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

/// The half-cleaner of stride `J` on `B` warp tiles: in registers below
/// `N`, across lanes `lane ^ J/N` from `N` on.
#[inline(always)]
fn half_clean<I: Item, const N: usize, const B: usize, const J: usize>(xs: &mut [[I; N]; B], lane: u32) {
    for x in xs.iter_mut() {
        if J < N {
            half_clean_lane::<I, N, J>(x);
        } else {
            half_clean_across(x, lane, (J / N) as u32);
        }
    }
}

/// The flip of block size `S` on `B` warp tiles (see [`half_clean`]).
#[inline(always)]
fn flip<I: Item, const N: usize, const B: usize, const S: usize>(xs: &mut [[I; N]; B], lane: u32) {
    for x in xs.iter_mut() {
        if S <= N {
            flip_lane::<I, N, S>(x);
        } else {
            flip_across(x, lane, (S / N - 1) as u32);
        }
    }
}

/// Runs `$body!(S; J...)` for every phase of a network of up to 512 items:
/// the phase's size `S` and the strides of its half-cleaners. The one list
/// every network here is generated from.
macro_rules! phases {
    ($body:ident) => {
        $body!(2;);
        $body!(4; 1);
        $body!(8; 2, 1);
        $body!(16; 4, 2, 1);
        $body!(32; 8, 4, 2, 1);
        $body!(64; 16, 8, 4, 2, 1);
        $body!(128; 32, 16, 8, 4, 2, 1);
        $body!(256; 64, 32, 16, 8, 4, 2, 1);
        $body!(512; 128, 64, 32, 16, 8, 4, 2, 1);
    };
}

/// The largest warp tile [`phases!`] covers.
const MAX_WARP_TILE: usize = 512;

/// The phases of the network up to `chunk` items (a power of two, at most
/// `32 * N`), on `B` independent warp tiles at once: every stage is applied
/// to all of them before the next, so their shuffles and loads overlap
/// (instruction- and memory-level parallelism for short segments). Each
/// aligned chunk ends sorted.
#[inline(always)]
fn phases_up_to<I: Item, const N: usize, const B: usize>(xs: &mut [[I; N]; B], lane: u32, chunk: usize) {
    const { assert!(32 * N <= MAX_WARP_TILE) };
    macro_rules! phase {
        ($s:literal; $($j:literal),*) => {
            if $s <= 32 * N && $s <= chunk {
                flip::<I, N, B, $s>(xs, lane);
                $( half_clean::<I, N, B, $j>(xs, lane); )*
            }
        };
    }
    phases!(phase);
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
    phases_up_to(xs, lane, 32 * N);
}

/// Sorts each aligned chunk of `chunk` items (a power of two up to `32 * N`)
/// of the warp tile independently: the phases of the network up to `chunk`.
/// With `N = 8` a 32-item chunk spans 4 lanes, so 12 of its 15 stages are
/// compare-exchanges inside registers and only 3 are shuffles.
#[inline(always)]
pub fn warp_sort_chunks<I: Item, const N: usize>(x: &mut [I; N], lane: u32, chunk: usize) {
    phases_up_to(core::array::from_mut(x), lane, chunk);
}

/// Every half-cleaner inside a warp tile, strides `16 * N` down to 1: sorts
/// a bitonic warp tile (the end of every phase larger than a warp tile).
#[inline(always)]
pub fn warp_half_cleaners<I: Item, const N: usize>(x: &mut [I; N], lane: u32) {
    let xs = core::array::from_mut(x);
    macro_rules! strides {
        ($($j:literal),*) => {
            $( if $j <= 16 * N { half_clean::<I, N, 1, $j>(xs, lane); } )*
        };
    }
    strides!(256, 128, 64, 32, 16, 8, 4, 2, 1);
}

/// Half-cleaners of every stride of a warp tile held *striped* (lane `l`
/// register `r` holds element `r * 32 + l`): strides `16N … 32` are register
/// pairs inside each lane, strides `16 … 1` are `shfl.sync.bfly` exchanges.
/// Sorts a bitonic warp tile; the striped layout makes its loads and stores
/// coalesced.
#[inline(always)]
pub fn striped_half_cleaners<I: Item, const N: usize>(x: &mut [I; N], lane: u32) {
    macro_rules! in_lane {
        ($($j:literal),*) => {
            $( if $j < N { half_clean_lane::<I, N, $j>(x); } )*
        };
    }
    in_lane!(8, 4, 2, 1);
    let mut m = 16;
    while m > 0 {
        half_clean_across(x, lane, m);
        m /= 2;
    }
}
