//! Warp-level primitives for kernel authors: identity, shuffles, votes,
//! reductions, scans and ballot-based compaction. None of them uses
//! shared memory or a barrier; every lane of the warp must call them together.
//!
//! ```ignore
//! // A warp's sum, in every lane, by a butterfly of five `shfl.sync.bfly`s:
//! let total = warpsort_kernels::warp::reduce_sum(x);
//! ```

use crate::arch;
use crate::config::{LOG_WARP_SIZE, WARP_SIZE};
use crate::item::Word;

/// This thread's lane (0..32), from `%laneid`.
#[inline(always)]
pub fn lane_id() -> u32 {
    arch::lane_id()
}

/// This thread's warp within its block (`threadIdx.x / 32`).
#[inline(always)]
pub fn warp_id() -> u32 {
    arch::thread_idx() >> LOG_WARP_SIZE
}

/// The value of lane `src` (any 32- or 64-bit word): `shfl.sync.idx`, which
/// also broadcasts one lane's value to the warp.
#[inline(always)]
pub fn shfl_idx<T: Word>(x: T, src: u32) -> T {
    x.shfl_idx(src)
}

/// The value of lane `lane ^ mask`: `shfl.sync.bfly`, the butterfly.
#[inline(always)]
pub fn shfl_bfly<T: Word>(x: T, mask: u32) -> T {
    x.shfl_bfly(mask)
}

/// The value of lane `lane - delta`; lanes below `delta` keep their own.
#[inline(always)]
pub fn shfl_up<T: Word>(x: T, delta: u32) -> T {
    x.shfl_up(delta)
}

/// The value of lane `lane + delta`; lanes past `31 - delta` keep their own.
#[inline(always)]
pub fn shfl_down<T: Word>(x: T, delta: u32) -> T {
    x.shfl_down(delta)
}

/// True in every lane when any lane's `pred` holds.
#[inline(always)]
pub fn any(pred: bool) -> bool {
    arch::any(pred)
}

/// True in every lane when every lane's `pred` holds.
#[inline(always)]
pub fn all(pred: bool) -> bool {
    arch::all(pred)
}

/// Bit `i` set when lane `i`'s `pred` holds.
#[inline(always)]
pub fn ballot(pred: bool) -> u32 {
    arch::ballot(pred)
}

/// How many lanes' `pred` holds.
#[inline(always)]
pub fn popc(pred: bool) -> u32 {
    arch::ballot(pred).count_ones()
}

/// Butterfly all-reduce: `op` over the 32 lanes' values, in every lane.
#[inline(always)]
pub fn reduce<T: Word>(mut x: T, op: impl Fn(T, T) -> T) -> T {
    let mut m = WARP_SIZE / 2;
    while m > 0 {
        x = op(x, x.shfl_bfly(m));
        m /= 2;
    }
    x
}

/// Wrapping sum of the warp's values, in every lane.
#[inline(always)]
pub fn reduce_sum(x: u32) -> u32 {
    reduce(x, u32::wrapping_add)
}

/// Wrapping 64-bit sum of the warp's values, in every lane.
#[inline(always)]
pub fn reduce_sum_u64(x: u64) -> u64 {
    reduce(x, u64::wrapping_add)
}

/// Minimum of the warp's values, in every lane.
#[inline(always)]
pub fn reduce_min(x: u32) -> u32 {
    reduce(x, u32::min)
}

/// Maximum of the warp's values, in every lane.
#[inline(always)]
pub fn reduce_max(x: u32) -> u32 {
    reduce(x, u32::max)
}

/// Inclusive prefix sum (Kogge-Stone over `shfl.sync.up`): lane `i` gets the
/// sum of lanes `0..=i`.
#[inline(always)]
pub fn inclusive_scan(mut x: u32) -> u32 {
    let lane = lane_id();
    let mut d = 1;
    while d < WARP_SIZE {
        let y = arch::shfl_up(x, d);
        if lane >= d {
            x = x.wrapping_add(y);
        }
        d *= 2;
    }
    x
}

/// Exclusive prefix sum: lane `i` gets the sum of lanes `0..i` (lane 0: 0).
#[inline(always)]
pub fn exclusive_scan(x: u32) -> u32 {
    inclusive_scan(x).wrapping_sub(x)
}

/// Ballot-based compaction: where the lanes whose `keep` holds write, packed
/// in lane order, and how many do (`(slot, count)`; `slot` is meaningful only
/// where `keep` holds).
#[inline(always)]
pub fn compact_slot(keep: bool) -> (u32, u32) {
    let mask = arch::ballot(keep);
    let below = mask & ((1u32 << lane_id()) - 1);
    (below.count_ones(), mask.count_ones())
}
