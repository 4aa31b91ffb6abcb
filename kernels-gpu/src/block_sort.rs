//! Block sort: a block sorts a tile of `blockDim * KEYS_PER_LANE` items. Warp
//! phases run in registers; phases whose strides cross warps exchange through
//! shared memory with barriers (`block_network`). Also the fused half-cleaner
//! kernel of the full-array bitonic sort.

use crate::arch::{block_dim, block_idx, dynamic_smem, grid_dim, thread_idx};
use crate::block_network::Block;
use crate::config::{BLOCK_TILE, KEYS_PER_LANE, WARP_SIZE};
use crate::item::{Items, Key, Pair, Word};
use crate::merge_path::Samples;
use crate::tile::{load_blocked, store_blocked};

const N: usize = KEYS_PER_LANE as usize;

#[inline(always)]
fn block<K: Key, V: Word>() -> Block<Pair<K, V>> {
    let t = thread_idx();
    Block { smem: dynamic_smem(), warp: t / WARP_SIZE, lane: t % WARP_SIZE }
}

/// Sorts every segment `[s * seg, (s + 1) * seg)` of `src` into the same place
/// of `dst` (may be `src`), one block each. The network covers a tile of
/// `blockDim * KEYS_PER_LANE` items (a power of two, at least `seg`); the rest
/// of the tile is `MAX` pads.
///
/// Records the samples of `dst` (GPU-Warpsort's step 1, when given).
///
/// # Safety
/// `src` and `dst` hold `n` items, `samples` (if any) room for their
/// samples; shared memory holds one tile.
#[inline(always)]
pub unsafe fn sort_tiles<K: Key, V: Word>(src: Items<K, V>, dst: Items<K, V>, n: u64, seg: u64, samples: Samples<K, V>) {
    let (n, seg) = (n as usize, seg as usize);
    let tile = block_dim() as usize * N;
    let b = block::<K, V>();
    let t = thread_idx() as usize;
    let mut tile_idx = block_idx() as usize;
    while tile_idx * seg < n {
        let start = tile_idx * seg;
        let len = seg.min(n - start);
        // SAFETY: the segment lies inside both arrays; this block owns it.
        let mut x = unsafe { load_blocked::<K, V, N>(&src.offset(start), t, len) };
        b.sort(&mut x, tile, len);
        unsafe { store_blocked(&dst.offset(start), t, len, &x) };
        if t * N < len {
            // SAFETY: below n; this thread's first item.
            unsafe { samples.record(start + t * N, x[0]) };
        }
        tile_idx += grid_dim() as usize;
    }
}

/// The fused stages of the full-array bitonic sort: every half-cleaner with a
/// stride below [`BLOCK_TILE`], for one tile per block, in registers and
/// shared memory, in place.
///
/// # Safety
/// `items` holds `n` items; the block has `BLOCK_THREADS` threads and one
/// tile of shared memory.
#[inline(always)]
pub unsafe fn merge_tiles<K: Key, V: Word>(items: Items<K, V>, n: u64) {
    let n = n as usize;
    let tile = BLOCK_TILE as usize;
    let b = block::<K, V>();
    let t = thread_idx() as usize;
    let mut tile_idx = block_idx() as usize;
    while tile_idx * tile < n {
        let start = tile_idx * tile;
        let len = tile.min(n - start);
        // SAFETY: the tile lies inside the array; this block owns it.
        let it = unsafe { items.offset(start) };
        let mut x = unsafe { load_blocked::<K, V, N>(&it, t, len) };
        b.half_cleaners(&mut x, tile / 2, true);
        unsafe { store_blocked(&it, t, len, &x) };
        tile_idx += grid_dim() as usize;
    }
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            src_dst_kernel!(
                concat!(crate::kernel_name!(block_sort), "_", stringify!($sfx)),
                /// Block sort of segments of `seg <= blockDim * KEYS_PER_LANE` items, `src` to `dst`.
                fn sort<$K, $V>(n: u64, seg: u64) + samples => sort_tiles::<$K, $V>
            );
            /// Fused bitonic half-cleaners of strides below BLOCK_TILE.
            #[unsafe(export_name = concat!(crate::kernel_name!(bitonic_fused), "_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn fused(keys: *mut <$K as $crate::item::Key>::Mem, vals: *mut $V, n: u64) {
                // SAFETY: the host passes `n` items and a tile of shared memory.
                unsafe { merge_tiles::<$K, $V>(Items { keys, vals }, n) }
            }
        }
    };
}
crate::for_items!(entries);
crate::for_ranked!(entries);
