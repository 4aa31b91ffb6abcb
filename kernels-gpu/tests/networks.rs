//! The block's bitonic network (`block_network::Block::sort`, what the
//! segmented sort's block kernel and the merge sort's tiles run) on the CPU
//! under the emulator (`arch::launch`): a tile of `u32` or `u64` keys, alone
//! or with their positions, loaded lane-blocked with pads past its length
//! (`tile::load_blocked`), sorted and stored, against the CPU's sort. What a
//! new network for these tiles must pass before it meets a GPU.
#![cfg(feature = "emulate")]

mod common;

use common::{Ptr, random};
use warpsort_kernels::arch::{dynamic_smem, launch, thread_idx};
use warpsort_kernels::block_network::Block;
use warpsort_kernels::config::{KEYS_PER_LANE, WARP_SIZE};
use warpsort_kernels::item::{Items, Key, Pair, Word};
use warpsort_kernels::tile::{load_blocked, store_blocked};

const N: usize = KEYS_PER_LANE as usize;

/// Sorts `keys[..len]` (with `vals` beside them) in one block of `threads`
/// threads, a tile of `threads * N`.
fn block_sort<K: Key<Mem = K>, V: Word>(keys: &mut [K], vals: &mut [V], threads: u32) {
    let (len, tile) = (keys.len(), threads as usize * N);
    assert!(len <= tile && vals.len() == len);
    let (k, v) = (Ptr(keys.as_mut_ptr()), Ptr(vals.as_mut_ptr()));
    launch(1, threads, tile * size_of::<Pair<K, V>>(), move || {
        let (k, v) = (k, v);
        let t = thread_idx();
        let items = Items::<K, V> { keys: k.0, vals: v.0 };
        let b: Block<Pair<K, V>> = Block { smem: dynamic_smem(), warp: t / WARP_SIZE, lane: t % WARP_SIZE };
        // SAFETY: the arrays hold `len` items; the thread owns its N slots.
        let mut x = unsafe { load_blocked::<K, V, N>(&items, t as usize, len) };
        b.sort(&mut x, tile, len);
        // SAFETY: as above.
        unsafe { store_blocked(&items, t as usize, len, &x) };
    });
}

/// Every length from one key to a full tile of `threads` threads, keys
/// from `make` (distinct, few distinct, or one value), with and without
/// positions: keys in order, positions a permutation that keeps each key's.
fn sorts<K: Key<Mem = K> + std::fmt::Debug>(make: impl Fn(u64) -> K) {
    for threads in [WARP_SIZE * 2, WARP_SIZE * 8] {
        let (tile, wt) = (threads as usize * N, WARP_SIZE as usize * N);
        // Lengths on both sides of each warp's share (the warps past the
        // length hold only pads and skip their work).
        for len in [1, 2, 33, wt - 1, wt, wt + 1, 2 * wt + 5, tile / 2 + 1, tile - wt - 1, tile - wt, tile - 3, tile] {
            if len > tile {
                continue;
            }
            for (d, spread) in [u64::MAX, 7, 0].into_iter().enumerate() {
                let seed = (len * 3 + d) as u64;
                let input: Vec<K> = random(len, seed).into_iter().map(|r| make(r % spread.max(1))).collect();
                let mut want = input.clone();
                want.sort();
                let mut keys = input.clone();
                block_sort::<K, ()>(&mut keys, &mut vec![(); len], threads);
                assert_eq!(keys, want, "keys alone, {len} of a tile of {tile}, spread {spread}");
                let (mut keys, mut pos): (Vec<K>, Vec<u32>) = (input.clone(), (0..len as u32).collect());
                block_sort(&mut keys, &mut pos, threads);
                assert_eq!(keys, want, "pairs, {len} of a tile of {tile}, spread {spread}");
                let mut seen = vec![false; len];
                for (i, &p) in pos.iter().enumerate() {
                    assert!(!seen[p as usize], "position {p} twice");
                    seen[p as usize] = true;
                    assert_eq!(input[p as usize], keys[i], "position {p} away from its key");
                }
            }
        }
    }
}

#[test]
fn the_block_network_sorts_u32_tiles() {
    sorts::<u32>(|r| r as u32);
}

#[test]
fn the_block_network_sorts_u64_tiles() {
    sorts::<u64>(|r| r);
}
