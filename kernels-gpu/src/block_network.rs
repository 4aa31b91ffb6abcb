//! Stages of the bitonic network whose strides cross warps: the items go
//! through the block's shared memory, with a block barrier on each side.
//!
//! Shared-memory slot of warp `w`, lane `l`, register `r` is
//! `w * 32N + r * 32 + l`: for every register the 32 lanes touch 32
//! consecutive words, and the partner lane of a flip (`31 - l`) is a
//! permutation of them, so no stage has a bank conflict.

use crate::arch::sync_block;
use crate::config::WARP_SIZE;
use crate::item::Item;
use crate::network::{keep, warp_half_cleaners, warp_sort};

const W: usize = WARP_SIZE as usize;

/// A block's view of its tile: shared memory and this thread's coordinates.
pub struct Block<I> {
    /// Dynamic shared memory, one slot per item of the tile.
    pub smem: *mut I,
    /// Warp index within the block.
    pub warp: u32,
    /// Lane index within the warp.
    pub lane: u32,
}

impl<I: Item> Block<I> {
    #[inline(always)]
    fn slot<const N: usize>(warp: u32, lane: u32, r: usize) -> usize {
        warp as usize * W * N + r * W + lane as usize
    }

    /// Publishes `x`, then returns the items at the partner slots `f(r)`.
    #[inline(always)]
    fn exchange<const N: usize>(&self, x: &[I; N], partner_warp: u32, partner_lane: u32, mirror: bool) -> [I; N] {
        for (r, item) in x.iter().enumerate() {
            // SAFETY: slots lie inside the tile's shared memory (blockDim * N items).
            unsafe { *self.smem.add(Self::slot::<N>(self.warp, self.lane, r)) = *item };
        }
        sync_block();
        let mut y = *x;
        for (r, out) in y.iter_mut().enumerate() {
            let pr = if mirror { N - 1 - r } else { r };
            // SAFETY: as above; the barrier made every slot visible.
            *out = unsafe { *self.smem.add(Self::slot::<N>(partner_warp, partner_lane, pr)) };
        }
        sync_block();
        y
    }

    /// Half-cleaner across warps: partner warp `warp ^ m`.
    #[inline(always)]
    pub fn half_clean<const N: usize>(&self, x: &mut [I; N], m: u32) {
        let y = self.exchange(x, self.warp ^ m, self.lane, false);
        let keep_low = self.warp & m == 0;
        for r in 0..N {
            x[r] = keep(x[r], y[r], keep_low);
        }
    }

    /// Flip across warps: partner warp `warp ^ m`, mirrored lane and register.
    #[inline(always)]
    pub fn flip<const N: usize>(&self, x: &mut [I; N], m: u32) {
        let y = self.exchange(x, self.warp ^ m, WARP_SIZE - 1 - self.lane, true);
        let keep_low = self.warp & ((m + 1) >> 1) == 0;
        for r in 0..N {
            x[r] = keep(x[r], y[r], keep_low);
        }
    }

    /// Half-cleaners of strides `from, from/2, …, 1` over the block's tile
    /// (`from` at least half a warp tile: those across warps through shared
    /// memory, then every stride inside the warps in registers).
    #[inline(always)]
    pub fn half_cleaners<const N: usize>(&self, x: &mut [I; N], from: usize) {
        let warp_tile = W * N;
        let mut j = from;
        while j >= warp_tile {
            self.half_clean(x, (j / warp_tile) as u32);
            j /= 2;
        }
        warp_half_cleaners(x, self.lane);
    }

    /// Sorts the block's tile of `tile = blockDim * N` items (the full bitonic
    /// network: the warp phases in registers, larger phases through shared
    /// memory for their strides across warps).
    #[inline(always)]
    pub fn sort<const N: usize>(&self, x: &mut [I; N], tile: usize) {
        let warp_tile = W * N;
        warp_sort(x, self.lane);
        let mut s = 2 * warp_tile;
        while s <= tile {
            self.flip(x, (s / warp_tile - 1) as u32);
            self.half_cleaners(x, s / 4);
            s *= 2;
        }
    }
}
