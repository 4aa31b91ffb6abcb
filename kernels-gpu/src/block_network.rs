//! Stages of the bitonic network whose strides cross warps: the items go
//! through the block's shared memory, with a block barrier on each side.
//!
//! Shared-memory slot of warp `w`, lane `l`, register `r` is
//! `w * 32N + r * 32 + l`: for every register the 32 lanes touch 32
//! consecutive words, and the partner lane of a flip (`31 - l`) is a
//! permutation of them, so no stage has a bank conflict.

use crate::arch::{block_dim, sync_block};
use crate::config::WARP_SIZE;
use crate::item::Item;
use crate::network::{keep, warp_half_cleaners, warp_sort};

const W: usize = WARP_SIZE as usize;

/// The widest item whose warps of pads skip their work in [`Block::sort`]:
/// wider items fill the 64 registers of a 1024-thread block already, and
/// the predicate made them spill, so they run the whole network.
const SKIP_MAX_ITEM_BYTES: usize = 8;

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

    /// Publishes `x`, then keeps of each item and the item at its partner
    /// slot the one `keep_low` asks for. Every warp takes part, a warp of
    /// pads too (see [`Block::sort`]): skipping its exchanges made the
    /// pairs' kernels spill, and they are the few stages of a phase. A
    /// partner warp past the block's `warps` holds pads only (above every
    /// warp of the block): the items stay, and the warp skips the loads.
    #[inline(always)]
    fn exchange<const N: usize>(&self, x: &mut [I; N], partner: (u32, u32), mirror: bool, keep_low: bool, warps: u32) {
        for (r, item) in x.iter().enumerate() {
            // SAFETY: slots lie inside the tile's shared memory (blockDim * N items).
            unsafe { *self.smem.add(Self::slot::<N>(self.warp, self.lane, r)) = *item };
        }
        sync_block();
        if partner.0 < warps {
            for (r, item) in x.iter_mut().enumerate() {
                let pr = if mirror { N - 1 - r } else { r };
                // SAFETY: as above (a warp of the block); the barrier made every slot visible.
                let y = unsafe { *self.smem.add(Self::slot::<N>(partner.0, partner.1, pr)) };
                // Each kept as loaded: the fewest registers beside the branch.
                *item = keep(*item, y, keep_low);
            }
        }
        // Every partner's slots are read before the next exchange writes them.
        sync_block();
    }

    /// Half-cleaner across warps: partner warp `warp ^ m` (of the block's
    /// `warps`).
    #[inline(always)]
    fn half_clean<const N: usize>(&self, x: &mut [I; N], m: u32, warps: u32) {
        self.exchange(x, (self.warp ^ m, self.lane), false, self.warp & m == 0, warps);
    }

    /// Flip across warps: partner warp `warp ^ m`, mirrored lane and register.
    #[inline(always)]
    fn flip<const N: usize>(&self, x: &mut [I; N], m: u32, warps: u32) {
        let keep_low = self.warp & ((m + 1) >> 1) == 0;
        self.exchange(x, (self.warp ^ m, WARP_SIZE - 1 - self.lane), true, keep_low, warps);
    }

    /// Half-cleaners of strides `from, from/2, …, 1` over the block's tile
    /// (`from` at least half a warp tile: those across warps through shared
    /// memory, then every stride inside the warps in registers); a warp of
    /// pads (`!live`) skips the strides inside warps. Every warp of the
    /// network is in the block.
    #[inline(always)]
    pub fn half_cleaners<const N: usize>(&self, x: &mut [I; N], from: usize, live: bool) {
        self.half_cleaners_of(x, from, live, block_dim() / WARP_SIZE);
    }

    #[inline(always)]
    fn half_cleaners_of<const N: usize>(&self, x: &mut [I; N], from: usize, live: bool, warps: u32) {
        let warp_tile = W * N;
        let mut j = from;
        while j >= warp_tile {
            self.half_clean(x, (j / warp_tile) as u32, warps);
            j /= 2;
        }
        if live {
            warp_half_cleaners(x, self.lane);
        }
    }

    /// Sorts the block's tile of `tile = blockDim * N` items (a whole
    /// number of warps' tiles), of which those at and past `len` are `MAX`
    /// pads: the full bitonic network of the power of two at or above
    /// `tile` (the warp phases in registers, larger phases through shared
    /// memory for their strides across warps), whose slots past the tile
    /// are pads no warp holds.
    ///
    /// In this network a pad never moves, and a compare-exchange of an item
    /// with a pad above it keeps both (`network`'s flip form). So a warp
    /// whose items are all pads skips the stages inside warps, most of the
    /// network (a tile of eight warps: 36 stages of the warp sort, then 8 a
    /// phase, against 6 across warps in all), and only takes part in the
    /// exchanges across warps: a tile filled to 60% costs about 60% of a
    /// full one in those stages, at warp grain. A tile between two powers of
    /// two (the segmented sort's classes at three quarters of a power) runs
    /// the larger power's network without the warps past the block: their
    /// slots are pads, so their partners keep their items and skip the loads.
    #[inline(always)]
    pub fn sort<const N: usize>(&self, x: &mut [I; N], tile: usize, len: usize) {
        let warp_tile = W * N;
        let warps = (tile / warp_tile) as u32;
        // Whether this warp holds an item (`len <= tile`), decided once.
        let live = size_of::<I>() > SKIP_MAX_ITEM_BYTES || (self.warp as usize) * warp_tile < len;
        if live {
            warp_sort(x, self.lane);
        }
        let mut s = 2 * warp_tile;
        while s <= tile.next_power_of_two() {
            self.flip(x, (s / warp_tile - 1) as u32, warps);
            self.half_cleaners_of(x, s / 4, live, warps);
            s *= 2;
        }
    }
}
