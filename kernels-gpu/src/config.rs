//! Launch shapes and tile sizes: the one place both the device kernels and the
//! host launchers read them from.
//!
//! ```
//! use warpsort_kernels::config::*;
//! assert_eq!(WARP_SIZE * KEYS_PER_LANE, WARP_TILE);
//! assert_eq!(BLOCK_TILE, BLOCK_THREADS * KEYS_PER_LANE);
//! ```

/// Lanes in a warp.
pub const WARP_SIZE: u32 = 32;
/// `log2(WARP_SIZE)`.
pub const LOG_WARP_SIZE: u32 = 5;

/// Threads per block for kernels that run one independent job per warp
/// (warp sort, the warp merges, the primitives).
pub const WARP_KERNEL_THREADS: u32 = 256;

/// Keys per lane for the batched warp sorts: a warp sorts `32 * K` keys.
pub const WARP_SORT_KEYS_PER_LANE: [u32; 5] = [1, 2, 4, 8, 16];
/// Segments one warp sorts together (their networks interleaved, so that
/// short segments still keep enough loads in flight): 8 for 32-key segments,
/// down to 1 from 256 keys on.
pub const fn warp_sort_batch(keys_per_lane: u32) -> u32 {
    if keys_per_lane >= 8 { 1 } else { 8 / keys_per_lane }
}

/// The largest segment one warp sorts: `32 * 16`.
pub const WARP_SORT_MAX_SEGMENT: u32 = 512;

/// Keys each thread holds in registers in the block sort, the fused bitonic
/// stages and the GPU-Warpsort tile and merge kernels.
pub const KEYS_PER_LANE: u32 = 8;
/// Keys sorted or merged by one warp in registers: `32 * KEYS_PER_LANE`.
pub const WARP_TILE: u32 = WARP_SIZE * KEYS_PER_LANE;

/// Threads of the block sort kernel that sorts [`BLOCK_TILE`] keys (and of the
/// fused bitonic stages). Other tile sizes launch `tile / KEYS_PER_LANE` threads.
pub const BLOCK_THREADS: u32 = 512;
/// Keys per block tile: the fused shared-memory bitonic stages and GPU-Warpsort's
/// step-1 tile cover this many keys.
pub const BLOCK_TILE: u32 = BLOCK_THREADS * KEYS_PER_LANE;
/// The largest block sort tile (1024 threads of [`KEYS_PER_LANE`] keys).
pub const BLOCK_SORT_MAX_TILE: u32 = 1024 * KEYS_PER_LANE;
/// The smallest block sort tile (one warp).
pub const BLOCK_SORT_MIN_TILE: u32 = WARP_TILE;

/// Threads per block of the global (one-stage-per-launch) bitonic kernel.
pub const GLOBAL_STAGE_THREADS: u32 = 256;
/// Threads per block of element-wise kernels (key encoding, checks, fills).
pub const ELEMENTWISE_THREADS: u32 = 256;

/// Keys per lane GPU-Warpsort's merge windows may use: a warp merges a window
/// of `32 * k` outputs in registers (kernels `merge_pass{32k}_*`).
pub const MERGE_KEYS_PER_LANE: [u32; 3] = [4, 8, 16];
/// The default keys per lane of a key-only merge window (tuned on an H200).
pub const DEFAULT_MERGE_KEYS_PER_LANE: u32 = 8;
/// The default keys per lane of a key-value merge window (tuned on an H200:
/// pairs double the registers and shuffles per key).
pub const DEFAULT_MERGE_KEYS_PER_LANE_PAIRS: u32 = 4;

/// Threads per block of the block-merge passes (`block_merge{k}_*`): the
/// best of 128/256/512 on an H200 (`warpsort bench --suite tune`; small
/// blocks keep more independent tiles in flight per SM).
pub const MERGE_BLOCK_THREADS: u32 = 128;
/// Outputs per thread the block-merge passes may use (kernels
/// `block_merge{k}_*`): a block merges a tile of `MERGE_BLOCK_THREADS * k`.
pub const BLOCK_MERGE_KEYS_PER_THREAD: [u32; 2] = [8, 16];
/// The default outputs per thread of a block-merge pass (16 beat 8 on an
/// H200 for keys and pairs: the merge-path search is shared by more outputs).
pub const DEFAULT_BLOCK_MERGE_KEYS_PER_THREAD: u32 = 16;

/// Shared-memory items a block-merge tile of `tile` items needs: two regions
/// (inputs, outputs), each with one skipped slot every `WARP_SIZE`
/// (bank-conflict-free transposes) and one spare slot the serial merge may
/// read past its inputs.
pub const fn block_merge_smem_slots(tile: usize) -> usize {
    2 * (tile + tile / WARP_SIZE as usize + 1)
}
