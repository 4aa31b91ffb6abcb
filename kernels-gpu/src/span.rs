//! A block's keys and their span: the smallest and the largest. The
//! segmented block kernel (`segmented::sort_blocks`) sorts a segment whose
//! span is narrow as one `u32` word an item, its key less the smallest
//! above its place in the tile: the sample sort's buckets are such
//! segments (each lies between two splitters, so its keys differ in their
//! low bits only), and a network over words compares and moves half of
//! what one over keys beside payloads does. The keys are a block's tile
//! lane-blocked (`tile::load_blocked`: item `r` of thread `t` is place
//! `t * N + r`).

use crate::arch::{block_dim, sync_block};
use crate::config::{KEYS_PER_LANE, WARP_SIZE};
use crate::item::{Key, Pair, Word};
use crate::warp;

/// Items a thread holds: the block network's.
pub const N: usize = KEYS_PER_LANE as usize;

/// A key whose span is its largest less its smallest: an unsigned integer
/// (ordered words), whose `Default` is the smallest key.
pub trait SpanKey: Key {
    /// The bits of `hi - lo` (`lo <= hi`).
    fn span_bits(lo: Self, hi: Self) -> u32;
    /// `self - lo`, where it fits 32 bits.
    fn above(self, lo: Self) -> u32;
    /// `lo + offset`.
    fn plus(lo: Self, offset: u32) -> Self;
}

macro_rules! span_key {
    ($t:ty) => {
        impl SpanKey for $t {
            #[inline(always)]
            fn span_bits(lo: Self, hi: Self) -> u32 {
                <$t>::BITS - hi.wrapping_sub(lo).leading_zeros()
            }
            #[inline(always)]
            fn above(self, lo: Self) -> u32 {
                self.wrapping_sub(lo) as u32
            }
            #[inline(always)]
            fn plus(lo: Self, offset: u32) -> Self {
                lo.wrapping_add(offset as $t)
            }
        }
    };
}
span_key!(u32);
span_key!(u64);

/// The smallest and the largest of the block's keys at places below `len`
/// (`keys` thread `thread`'s, lane-blocked), in every thread; `(PAD, 0)`
/// when `len` is 0. Each warp's two go through `smem`.
///
/// # Safety
/// Called by the whole block (a barrier inside); `smem` holds two keys a
/// warp and is not in use until the block's next barrier.
#[inline(always)]
pub unsafe fn span<K: SpanKey>(smem: *mut K, keys: &[K; N], thread: usize, len: usize) -> (K, K) {
    let (warp, lane) = (thread as u32 / WARP_SIZE, thread as u32 % WARP_SIZE);
    let (mut lo, mut hi) = (K::PAD, K::default());
    for (r, &k) in keys.iter().enumerate() {
        if thread * N + r < len {
            lo = lo.min(k);
            hi = hi.max(k);
        }
    }
    let (lo, hi) = (warp::reduce(lo, K::min), warp::reduce(hi, K::max));
    if lane == 0 {
        // SAFETY: two keys a warp.
        unsafe {
            *smem.add(2 * warp as usize) = lo;
            *smem.add(2 * warp as usize + 1) = hi;
        }
    }
    sync_block();
    let (lo, hi) = if lane < block_dim() / WARP_SIZE {
        // SAFETY: as above; every warp's keys written before the barrier.
        unsafe { (*smem.add(2 * lane as usize), *smem.add(2 * lane as usize + 1)) }
    } else {
        (K::PAD, K::default())
    };
    (warp::reduce(lo, K::min), warp::reduce(hi, K::max))
}

/// A compact item: a key's offset from the segment's smallest above its
/// place (`place_bits` of them), or `u32::MAX` for a pad.
#[inline(always)]
pub fn compact<K: SpanKey>(k: K, lo: K, at: usize, len: usize, place_bits: u32) -> Pair<u32, ()> {
    let word = if at < len { k.above(lo) << place_bits | at as u32 } else { u32::MAX };
    Pair { k: word, v: () }
}

/// The key and place of a compact item (see [`compact`]).
#[inline(always)]
pub fn expand<K: SpanKey>(word: u32, lo: K, place_bits: u32) -> (K, usize) {
    (K::plus(lo, word >> place_bits), (word & ((1 << place_bits) - 1)) as usize)
}

/// Whether a span of `bits` fits a compact word beside a place in a tile of
/// `tile` items (a power of two): 21 bits in a tile of 2048, 19 in 8192.
#[inline(always)]
pub fn fits(bits: u32, tile: usize) -> bool {
    bits + tile.trailing_zeros() <= u32::BITS
}

/// Copies the segment's `len` payloads into `staged`, the block's threads
/// striding over them.
///
/// # Safety
/// Called by the whole block; `staged` holds `len` payloads and is not in
/// use; `vals` holds `len`.
#[inline(always)]
pub unsafe fn stage<V: Word>(vals: *const V, staged: *mut V, thread: usize, len: usize) {
    let mut i = thread;
    while i < len {
        // SAFETY: i < len.
        unsafe { *staged.add(i) = *vals.add(i) };
        i += block_dim() as usize;
    }
}
