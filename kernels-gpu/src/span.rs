//! A segment's keys, their span (the smallest and the largest), and the
//! compact words a narrow span allows. The segmented kernels
//! (`segmented::sort_blocks`, `sort_warps`, `sort_chunks`) sort a segment
//! whose span is narrow as one `u32` word an item, its key less the
//! smallest (shifted right where it does not fit) above its place in the
//! segment ([`Words`]): the sample sort's buckets are such segments (each
//! lies between two splitters, so its keys differ in their low bits only),
//! and a network over words compares and moves half of what one over keys
//! beside payloads (or over `u64` keys) does. Words that lost low bits may
//! tie where their keys differ: [`ties`] finds such words in a block,
//! [`order_runs`] ranks their keys. Where the caller knows a segment's
//! span beforehand ([`Known`]: a bucket's splitters bound it), the block
//! kernel takes it instead of [`span`]'s reduction. The keys are a block's tile (or a warp
//! group's segment) lane-blocked (`tile::load_blocked`: item `r` of thread
//! `t` is place `t * N + r`).

use crate::arch::{block_dim, sync_block, sync_block_or};
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
    /// `(self - lo) >> shift`, where it fits 32 bits.
    fn above(self, lo: Self, shift: u32) -> u32;
    /// `lo + offset` (`offset` below the span).
    fn plus(lo: Self, offset: u64) -> Self;
    /// The next key up, if any.
    fn next_up(self) -> Option<Self>;
    /// The next key down, if any.
    fn next_down(self) -> Option<Self>;
}

macro_rules! span_key {
    ($t:ty) => {
        impl SpanKey for $t {
            #[inline(always)]
            fn span_bits(lo: Self, hi: Self) -> u32 {
                <$t>::BITS - hi.wrapping_sub(lo).leading_zeros()
            }
            #[inline(always)]
            fn above(self, lo: Self, shift: u32) -> u32 {
                (self.wrapping_sub(lo) as u64 >> shift) as u32
            }
            #[inline(always)]
            fn plus(lo: Self, offset: u64) -> Self {
                lo.wrapping_add(offset as $t)
            }
            #[inline(always)]
            fn next_up(self) -> Option<Self> {
                self.checked_add(1)
            }
            #[inline(always)]
            fn next_down(self) -> Option<Self> {
                self.checked_sub(1)
            }
        }
    };
}
span_key!(u32);
span_key!(u64);

/// Each listed segment's span where the caller knows it before any key is
/// read: the sample sort's final buckets, each between two splitters
/// (`distribute::bucket_spans` writes their table, `segmented::list_classes`
/// each listed segment's bucket). A segment whose span is known takes its
/// words from it, with no reduction over its keys and no barrier.
#[derive(Clone, Copy)]
pub struct Known<K> {
    /// Two keys a segment, the smallest and the largest it may hold
    /// (`lo > hi`: not known).
    spans: *const K,
    /// The segment of each listed entry.
    ids: *const u32,
}

impl<K: SpanKey> Known<K> {
    /// The spans of `spans` (two keys a segment) for the segments `ids`
    /// names, a listed entry each (the `_known` kernels' parameters; the
    /// caller's own segments have no table: `None` in the kernels).
    #[inline(always)]
    pub fn new(spans: *const K, ids: *const u32) -> Self {
        Known { spans, ids }
    }

    /// The span of listed entry `j`, where it is known.
    ///
    /// # Safety
    /// `j` is a listed entry; the table holds its segment.
    #[inline(always)]
    pub unsafe fn of(&self, j: usize) -> Option<(K, K)> {
        // SAFETY: the caller's contract.
        let (lo, hi) = unsafe {
            let s = *self.ids.add(j) as usize;
            (*self.spans.add(2 * s), *self.spans.add(2 * s + 1))
        };
        (lo <= hi).then_some((lo, hi))
    }
}

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

/// How a segment's keys become compact words: each key's offset from the
/// smallest (`lo`), shifted right by `shift`, above its place in the
/// segment (`place_bits` of them). With `shift` 0 the words sort exactly as
/// the keys, ties by place; else equal words may hold keys out of order.
#[derive(Clone, Copy)]
pub struct Words<K> {
    /// The segment's smallest key.
    pub lo: K,
    /// The low bits of an offset its word loses.
    pub shift: u32,
    /// The bits of a place.
    pub place_bits: u32,
}

impl<K: SpanKey> Words<K> {
    /// The words of a segment of `len` items whose keys span `lo..=hi`
    /// (`lo > hi` when it holds none: its words are pads).
    #[inline(always)]
    pub fn new(lo: K, hi: K, len: usize) -> Self {
        let place_bits = u32::BITS - (len.max(2) as u32 - 1).leading_zeros();
        let bits = if lo < hi { K::span_bits(lo, hi) } else { 0 };
        Words { lo, shift: bits.saturating_sub(u32::BITS - place_bits), place_bits }
    }

    /// The word of key `k` at place `at`: `u32::MAX` for a pad (`at >=
    /// len`; a real word may equal it only at the last place, which is
    /// then what a pad at a real item's position gives back).
    #[inline(always)]
    pub fn word(&self, k: K, at: usize, len: usize) -> Pair<u32, ()> {
        let word = if at < len { k.above(self.lo, self.shift) << self.place_bits | at as u32 } else { u32::MAX };
        Pair { k: word, v: () }
    }

    /// The place of a word.
    #[inline(always)]
    pub fn place(&self, word: u32) -> usize {
        (word & ((1 << self.place_bits) - 1)) as usize
    }

    /// The key of a word, `low` holding the low bits its offset lost (the
    /// low 32 bits of the offset, `k.above(lo, 0)`; unused when `shift` is
    /// 0).
    #[inline(always)]
    pub fn key(&self, word: u32, low: u32) -> K {
        let lost = (1u64 << self.shift) - 1;
        K::plus(self.lo, ((word >> self.place_bits) as u64) << self.shift | low as u64 & lost)
    }
}

/// The smallest and the largest of the keys at places below `len` of a
/// segment held by an aligned group of `lanes` lanes (a power of two; `N`
/// keys a lane, lane-blocked, this lane the group's `t`-th), in each of
/// its lanes; `(PAD, 0)` when `len` is 0. Called by the whole warp.
#[inline(always)]
pub fn group_span<K: SpanKey, const M: usize>(keys: &[K; M], t: usize, len: usize, lanes: u32) -> (K, K) {
    let (mut lo, mut hi) = (K::PAD, K::default());
    for (r, &k) in keys.iter().enumerate() {
        if t * M + r < len {
            lo = lo.min(k);
            hi = hi.max(k);
        }
    }
    let mut m = 1;
    while m < lanes {
        lo = lo.min(lo.shfl_bfly(m));
        hi = hi.max(hi.shfl_bfly(m));
        m *= 2;
    }
    (lo, hi)
}

/// Whether a group's keys (as [`group_span`]'s) are out of order anywhere
/// in this lane's places or between its last and the next lane's first.
/// Called by the whole warp.
#[inline(always)]
pub fn group_out_of_order<K: Key, const M: usize>(keys: &[K; M], t: usize, len: usize, lanes: u32) -> bool {
    let next = warp::shfl_down(keys[0], 1);
    let mut bad = false;
    for r in 1..M {
        bad |= t * M + r < len && keys[r - 1] > keys[r];
    }
    bad | (t + 1 < lanes as usize && (t + 1) * M < len && keys[M - 1] > next)
}

/// Whether any two neighbours among a block's sorted words (thread
/// `thread`'s `N`, lane-blocked; `next` gives the next thread's first)
/// at places below `len` are equal in their high bits (above
/// `place_bits`): keys that may be out of order.
#[inline(always)]
pub fn ties(w: &[Pair<u32, ()>; N], next: impl FnOnce() -> u32, thread: usize, len: usize, place_bits: u32) -> bool {
    let base = thread * N;
    let mut tie = false;
    for r in 1..N {
        tie |= base + r < len && w[r - 1].k >> place_bits == w[r].k >> place_bits;
    }
    tie || base + N < len && w[N - 1].k >> place_bits == next() >> place_bits
}

/// The longest stretch on either side of a key that [`order_runs`] looks
/// through for keys of its word's high bits.
pub const MAX_RUN: usize = 16;

/// The bits of a key's move in [`order_runs`] (a thread's keys' moves in
/// one `u64`), and what is added to the move to keep it positive (a key
/// moves fewer than [`MAX_RUN`] places either way).
const MOVE_BITS: u32 = 6;
const MOVE_BIAS: usize = 32;

/// Puts the block's keys in order where their words lost low bits: `keys`
/// (thread `thread`'s `N` at places below `len`, lane-blocked) are sorted
/// by `words`' high bits, so only runs of keys with equal high bits may be
/// out of order. Each key in such a run takes its rank among the run's keys
/// (ties by place) through `sorted`; whether every run was at most
/// [`MAX_RUN`] long on either side of each of its keys (else nothing moved,
/// and the caller sorts the keys).
///
/// # Safety
/// Called by the whole block (barriers inside); `sorted` holds the tile's
/// keys and is not in use until the first barrier (nor after the last).
#[inline(always)]
pub unsafe fn order_runs<K: SpanKey>(sorted: *mut K, keys: &mut [K; N], words: &Words<K>, thread: usize, len: usize) -> bool {
    const _: () = assert!(N as u32 * MOVE_BITS <= u64::BITS && MAX_RUN < MOVE_BIAS, "a thread's moves fit a u64");
    let base = thread * N;
    for (r, &k) in keys.iter().enumerate() {
        if base + r < len {
            // SAFETY (every access of `sorted`): places below len, inside the tile.
            unsafe { *sorted.add(base + r) = k };
        }
    }
    sync_block();
    let high = |k: K| k.above(words.lo, words.shift);
    let key_at = |p: usize| unsafe { *sorted.add(p) };
    // Bit r: key r shares its high bits with a neighbour. (Bits and shifts,
    // not arrays indexed in a loop with a call: those would go to local
    // memory.)
    let mut runs = 0u32;
    for r in 0..N {
        let p = base + r;
        if p < len {
            let h = high(keys[r]);
            let before = p > 0 && high(if r > 0 { keys[r - 1] } else { key_at(p - 1) }) == h;
            let after = p + 1 < len && high(if r + 1 < N { keys[r + 1] } else { key_at(p + 1) }) == h;
            runs |= ((before || after) as u32) << r;
        }
    }
    // `MOVE_BITS` a key in a run: its move plus `MOVE_BIAS`.
    let (mut moves, mut long, mut m) = (0u64, false, runs);
    while m != 0 {
        let r = m.trailing_zeros() as usize;
        m &= m - 1;
        // SAFETY: `sorted` holds the tile's keys, below len.
        let (place, longer) = unsafe { rank_in_run(sorted, base + r, len, words.lo, words.shift) };
        moves |= ((place + MOVE_BIAS - (base + r)) as u64) << (MOVE_BITS as usize * r);
        long |= longer;
    }
    // Every thread has read `sorted`.
    if sync_block_or(long) {
        return false;
    }
    for (r, &k) in keys.iter().enumerate() {
        if runs >> r & 1 != 0 {
            let place = base + r + (moves >> (MOVE_BITS as usize * r) & ((1 << MOVE_BITS) - 1)) as usize - MOVE_BIAS;
            unsafe { *sorted.add(place) = k };
        }
    }
    sync_block();
    for (r, k) in keys.iter_mut().enumerate() {
        if runs >> r & 1 != 0 {
            *k = key_at(base + r);
        }
    }
    // Every thread has read its keys before `sorted` is used again.
    sync_block();
    true
}

/// The place of the key at `p` in `sorted` (sorted by the high bits of
/// their offsets from `lo`, shifted right by `shift`), in order among the
/// keys of its high bits around it (ties by place), and whether that run
/// reaches past [`MAX_RUN`] on either side.
///
/// # Safety
/// `sorted` holds `len` keys, `p < len`.
#[inline(always)]
unsafe fn rank_in_run<K: SpanKey>(sorted: *const K, p: usize, len: usize, lo: K, shift: u32) -> (usize, bool) {
    let high = |k: K| k.above(lo, shift);
    // SAFETY: places below len.
    let key_at = |j: usize| unsafe { *sorted.add(j) };
    let (k, h) = (key_at(p), high(key_at(p)));
    let (mut a, mut b) = (p, p + 1);
    while a > 0 && p - a < MAX_RUN && high(key_at(a - 1)) == h {
        a -= 1;
    }
    while b < len && b - p <= MAX_RUN && high(key_at(b)) == h {
        b += 1;
    }
    let rank = (a..b).filter(|&j| key_at(j) < k || (key_at(j) == k && j < p)).count();
    (a + rank, p - a == MAX_RUN || b - p > MAX_RUN)
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
