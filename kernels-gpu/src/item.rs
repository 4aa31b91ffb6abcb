//! What the networks sort: a key with an optional payload, and how it crosses
//! lanes (shuffles of 32-bit words).

use crate::arch;

/// A value that moves between lanes with `shfl.sync` (64-bit values as two
/// 32-bit shuffles; `()` as none).
pub trait Word: Copy + Default {
    /// The value of lane `lane ^ mask` (`shfl.sync.bfly`).
    fn shfl_bfly(self, mask: u32) -> Self;
    /// The value of lane `src` (`shfl.sync.idx`).
    fn shfl_idx(self, src: u32) -> Self;
    /// The value of lane `lane - delta` (`shfl.sync.up`).
    fn shfl_up(self, delta: u32) -> Self;
    /// The value of lane `lane + delta` (`shfl.sync.down`).
    fn shfl_down(self, delta: u32) -> Self;

    /// As a payload: whether it breaks ties between equal keys ([`Rank`]
    /// does, which makes a sort of `(key, Rank)` items stable). A constant,
    /// so that plain pairs compare keys only, as if this did not exist.
    const BREAKS_TIES: bool = false;

    /// As a payload that [breaks ties](Word::BREAKS_TIES): whether this one
    /// orders after `other` between equal keys.
    #[inline(always)]
    fn tie_gt(&self, _other: &Self) -> bool {
        false
    }

    /// Reads `N` consecutive values (a thread's run of a lane-blocked tile).
    /// Scalar here; `u32` and `u64` use 16-byte vector loads when aligned.
    ///
    /// # Safety
    /// `p` addresses `N` readable values.
    #[inline(always)]
    unsafe fn read_run<const N: usize>(p: *const Self) -> [Self; N] {
        // SAFETY: the caller guarantees N values.
        core::array::from_fn(|r| unsafe { *p.add(r) })
    }

    /// Writes `N` consecutive values (see [`Word::read_run`]).
    ///
    /// # Safety
    /// `p` addresses `N` writable values this thread owns.
    #[inline(always)]
    unsafe fn write_run<const N: usize>(p: *mut Self, v: &[Self; N]) {
        for (r, x) in v.iter().enumerate() {
            // SAFETY: the caller guarantees N values.
            unsafe { *p.add(r) = *x };
        }
    }
}

/// `read_run`/`write_run` in 16-byte pieces of `L` lanes when the run is
/// aligned: reads through `$load` (`ld.global.v4.u32`/`v2.u64`), writes
/// through `core::simd` vectors (`st.global.v4`/`v2`). A lane-blocked tile
/// then moves in whole 16-byte pieces instead of a strided scalar access per
/// key.
macro_rules! vector_runs {
    ($t:ty, $v:ty, $l:literal, $load:path) => {
        #[inline(always)]
        unsafe fn read_run<const N: usize>(p: *const Self) -> [Self; N] {
            let mut out = [0 as $t; N];
            // SAFETY: the caller guarantees N values; vectors only when aligned.
            unsafe {
                if N % $l == 0 && (p as usize) % 16 == 0 {
                    for c in 0..N / $l {
                        let v = $load(p.add(c * $l));
                        for i in 0..$l {
                            out[c * $l + i] = v[i];
                        }
                    }
                } else {
                    for (r, o) in out.iter_mut().enumerate() {
                        *o = *p.add(r);
                    }
                }
            }
            out
        }
        #[inline(always)]
        unsafe fn write_run<const N: usize>(p: *mut Self, v: &[Self; N]) {
            // SAFETY: as for read_run.
            unsafe {
                if N % $l == 0 && (p as usize) % 16 == 0 {
                    for c in 0..N / $l {
                        let chunk: [$t; $l] = core::array::from_fn(|i| v[c * $l + i]);
                        (p.add(c * $l) as *mut $v).write(<$v>::from_array(chunk));
                    }
                } else {
                    for (r, x) in v.iter().enumerate() {
                        *p.add(r) = *x;
                    }
                }
            }
        }
    };
}

impl Word for u32 {
    vector_runs!(u32, core::simd::u32x4, 4, arch::ld_global_v4_u32);
    #[inline(always)]
    fn shfl_bfly(self, mask: u32) -> Self {
        arch::shfl_bfly(self, mask)
    }
    #[inline(always)]
    fn shfl_idx(self, src: u32) -> Self {
        arch::shfl_idx(self, src)
    }
    #[inline(always)]
    fn shfl_up(self, delta: u32) -> Self {
        arch::shfl_up(self, delta)
    }
    #[inline(always)]
    fn shfl_down(self, delta: u32) -> Self {
        arch::shfl_down(self, delta)
    }
}

/// Splits a 64-bit word, applies a 32-bit shuffle to both halves, joins them.
#[inline(always)]
fn split64(v: u64, f: impl Fn(u32) -> u32) -> u64 {
    let lo = f(v as u32);
    let hi = f((v >> 32) as u32);
    ((hi as u64) << 32) | lo as u64
}

impl Word for u64 {
    vector_runs!(u64, core::simd::u64x2, 2, arch::ld_global_v2_u64);
    #[inline(always)]
    fn shfl_bfly(self, mask: u32) -> Self {
        split64(self, |w| arch::shfl_bfly(w, mask))
    }
    #[inline(always)]
    fn shfl_idx(self, src: u32) -> Self {
        split64(self, |w| arch::shfl_idx(w, src))
    }
    #[inline(always)]
    fn shfl_up(self, delta: u32) -> Self {
        split64(self, |w| arch::shfl_up(w, delta))
    }
    #[inline(always)]
    fn shfl_down(self, delta: u32) -> Self {
        split64(self, |w| arch::shfl_down(w, delta))
    }
}

impl Word for () {
    #[inline(always)]
    fn shfl_bfly(self, _: u32) -> Self {}
    #[inline(always)]
    fn shfl_idx(self, _: u32) -> Self {}
    #[inline(always)]
    fn shfl_up(self, _: u32) -> Self {}
    #[inline(always)]
    fn shfl_down(self, _: u32) -> Self {}
}

/// A payload that is the item's input position: items `(key, Rank)` order by
/// key, then by rank (lexicographic), so every two items differ and any sort
/// of them is the stable sort of the keys. The default, `u32::MAX`, is the
/// pad's rank: above every real position (the host sorts at most
/// `u32::MAX` ranked items, positions `0..u32::MAX - 1`).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Rank(pub u32);

impl Default for Rank {
    #[inline(always)]
    fn default() -> Self {
        Rank(u32::MAX)
    }
}

impl Word for Rank {
    const BREAKS_TIES: bool = true;
    #[inline(always)]
    fn shfl_bfly(self, mask: u32) -> Self {
        Rank(self.0.shfl_bfly(mask))
    }
    #[inline(always)]
    fn shfl_idx(self, src: u32) -> Self {
        Rank(self.0.shfl_idx(src))
    }
    #[inline(always)]
    fn shfl_up(self, delta: u32) -> Self {
        Rank(self.0.shfl_up(delta))
    }
    #[inline(always)]
    fn shfl_down(self, delta: u32) -> Self {
        Rank(self.0.shfl_down(delta))
    }
    #[inline(always)]
    fn tie_gt(&self, other: &Self) -> bool {
        self.0 > other.0
    }
    #[inline(always)]
    unsafe fn read_run<const N: usize>(p: *const Self) -> [Self; N] {
        // SAFETY: `Rank` is a transparent `u32`; the caller guarantees N values.
        unsafe { <u32 as Word>::read_run::<N>(p as *const u32) }.map(Rank)
    }
    #[inline(always)]
    unsafe fn write_run<const N: usize>(p: *mut Self, v: &[Self; N]) {
        // SAFETY: as for read_run.
        unsafe { <u32 as Word>::write_run::<N>(p as *mut u32, &v.map(|r| r.0)) }
    }
}

/// A stable sort's item: a key and its input position (see [`Rank`]).
pub type Ranked<K> = Pair<K, Rank>;

/// A built-in key beside its place in a tile or segment, as one item the
/// networks sort with ties in place order: how the stable kernels keep equal
/// keys in input order without moving their payloads through the network
/// (each payload is then fetched by its key's place: `block_merge`'s stable
/// step 1, `segmented`'s stable kernels). Pads placed at and past the end
/// order after every real key.
pub trait PlacedKey: Key {
    /// The key and its place.
    type Placed: Item;
    /// `self` at place `at`.
    fn placed(self, at: u32) -> Self::Placed;
    /// The key of a placed item.
    fn key_of(p: Self::Placed) -> Self;
    /// The place of a placed item.
    fn place_of(p: Self::Placed) -> u32;
}

impl PlacedKey for u32 {
    /// Key and place in one `u64` word (key high): the networks order words
    /// (one compare a compare-exchange, `arch::gt_u64`), no tie to break.
    type Placed = Pair<u64, ()>;
    #[inline(always)]
    fn placed(self, at: u32) -> Self::Placed {
        Pair { k: (self as u64) << 32 | at as u64, v: () }
    }
    #[inline(always)]
    fn key_of(p: Self::Placed) -> Self {
        (p.k >> 32) as u32
    }
    #[inline(always)]
    fn place_of(p: Self::Placed) -> u32 {
        p.k as u32
    }
}

impl PlacedKey for u64 {
    /// Key and place as a ranked item ([`Ranked`]).
    type Placed = Ranked<u64>;
    #[inline(always)]
    fn placed(self, at: u32) -> Self::Placed {
        Pair { k: self, v: Rank(at) }
    }
    #[inline(always)]
    fn key_of(p: Self::Placed) -> Self {
        p.k
    }
    #[inline(always)]
    fn place_of(p: Self::Placed) -> u32 {
        p.v.0
    }
}

/// A sort key as the kernels see it, in registers and shared memory: an
/// unsigned integer whose order is the order to sort by (the host maps
/// signed and float keys onto it), or a user's key with a pad flag
/// ([`crate::custom::Custom`]).
pub trait Key: Word + Ord {
    /// How a key lies in global memory (the integer itself; the user's type).
    type Mem: Copy;
    /// Whether a key is one integer: a key-only compare-exchange needs no
    /// tie rule (equal keys are the same key; see [`Key::MIN_MAX`]), and
    /// the pad is an immediate. A user's key is neither: its compare-exchanges
    /// ask `gt` once, and its pads are made from a real key
    /// ([`Key::as_pad`]), since a choice between a loaded item and a
    /// constant in memory becomes a choice between their addresses, which
    /// puts the items in local memory.
    const SCALAR: bool;
    /// Whether `min`/`max` of two keys is one instruction (`IMNMX`: 32-bit
    /// words). A key-only compare-exchange of other scalar keys (`u64`)
    /// compares once and selects ([`Key::after`]).
    const MIN_MAX: bool = false;
    /// `self > other`, the one comparison the networks make. `u64`
    /// overrides it with [`crate::arch::gt_u64`], a compare LLVM cannot
    /// turn into `umin`/`umax` (two compares a compare-exchange on GPUs
    /// without a 64-bit minimum).
    #[inline(always)]
    fn after(&self, other: &Self) -> bool {
        self > other
    }
    /// A key that orders after every real key: pads partial tiles.
    const PAD: Self;
    /// A pad made from this key (for keys that are not [`Key::SCALAR`]).
    fn as_pad(self) -> Self;
    /// `a` if `take`, else `b` (a user's key: word by word, so that the
    /// choice is between values, not between their addresses).
    #[inline(always)]
    fn choose(take: bool, a: Self, b: Self) -> Self {
        if take { a } else { b }
    }
    /// A pad made at run time (for keys that are not [`Key::SCALAR`]:
    /// `PAD` is then an aggregate in memory, copied wherever it is used).
    #[inline(always)]
    fn make_pad() -> Self {
        Self::PAD
    }
    /// The key stored as `m`.
    fn load(m: Self::Mem) -> Self;
    /// The key as stored (never called on a pad).
    fn store(self) -> Self::Mem;

    /// Reads `N` consecutive stored keys (a thread's run of a lane-blocked tile).
    ///
    /// # Safety
    /// `p` addresses `N` readable keys.
    #[inline(always)]
    unsafe fn read_run<const N: usize>(p: *const Self::Mem) -> [Self; N] {
        // SAFETY: the caller guarantees N keys.
        core::array::from_fn(|r| Self::load(unsafe { *p.add(r) }))
    }

    /// Writes `N` consecutive keys (see [`Key::read_run`]).
    ///
    /// # Safety
    /// `p` addresses `N` writable keys this thread owns.
    #[inline(always)]
    unsafe fn write_run<const N: usize>(p: *mut Self::Mem, v: &[Self; N]) {
        for (r, x) in v.iter().enumerate() {
            // SAFETY: the caller guarantees N keys.
            unsafe { *p.add(r) = x.store() };
        }
    }
}

/// The integer keys: stored as themselves, padded with `MAX`.
macro_rules! integer_key {
    ($t:ty, $min_max:expr, $after:expr) => {
        impl Key for $t {
            type Mem = $t;
            const SCALAR: bool = true;
            const MIN_MAX: bool = $min_max;
            #[inline(always)]
            fn after(&self, other: &Self) -> bool {
                $after(*self, *other)
            }
            const PAD: Self = <$t>::MAX;
            #[inline(always)]
            fn as_pad(self) -> Self {
                <$t>::MAX
            }
            #[inline(always)]
            fn load(m: $t) -> Self {
                m
            }
            #[inline(always)]
            fn store(self) -> $t {
                self
            }
            #[inline(always)]
            unsafe fn read_run<const N: usize>(p: *const $t) -> [Self; N] {
                // SAFETY: the caller's contract.
                unsafe { <$t as Word>::read_run::<N>(p) }
            }
            #[inline(always)]
            unsafe fn write_run<const N: usize>(p: *mut $t, v: &[Self; N]) {
                // SAFETY: the caller's contract.
                unsafe { <$t as Word>::write_run::<N>(p, v) }
            }
        }
    };
}
integer_key!(u32, true, |a, b| a > b);
integer_key!(u64, false, arch::gt_u64);

/// Something a sorting network orders.
pub trait Item: Copy {
    /// Strictly after `other` in the sort order. Networks swap only on `gt`,
    /// so equal items never move past each other in a compare-exchange.
    fn gt(&self, other: &Self) -> bool;
    /// The item of lane `lane ^ mask`.
    fn shfl_bfly(self, mask: u32) -> Self;
    /// The item of lane `src`.
    fn shfl_idx(self, src: u32) -> Self;
    /// One side of a compare-exchange across lanes or warps: the smaller of
    /// `self` and `partner` when `keep_low` (this side holds the lower
    /// position), else the larger; ties keep `self`.
    #[inline(always)]
    fn keep(self, partner: Self, keep_low: bool) -> Self {
        let take_partner = if keep_low { self.gt(&partner) } else { partner.gt(&self) };
        choose!(take_partner, partner, self)
    }
    /// `a` if `take`, else `b`: every compare-exchange's choice.
    #[inline(always)]
    fn choose(take: bool, a: Self, b: Self) -> Self {
        if take { a } else { b }
    }
}

/// `a` if `take`, else `b`: every compare-exchange's choice. In the
/// built-in kernels a plain `if`; in a build for a user's key type
/// (`warpsort_custom`) [`Item::choose`], word by word, since an `if`
/// between two aggregates in memory becomes an `if` between their
/// addresses, which puts the items in local memory. (A build-time choice:
/// a run-time test on the type changes the built-in kernels' code.)
#[cfg(not(warpsort_custom))]
macro_rules! choose {
    ($take:expr, $a:expr, $b:expr) => {
        if $take { $a } else { $b }
    };
}
#[cfg(warpsort_custom)]
macro_rules! choose {
    ($take:expr, $a:expr, $b:expr) => {
        $crate::item::Item::choose($take, $a, $b)
    };
}
pub(crate) use choose;

/// A key and its payload (`V = ()` for key-only sorts).
#[derive(Clone, Copy)]
pub struct Pair<K, V> {
    /// The key.
    pub k: K,
    /// The payload that travels with it.
    pub v: V,
}

impl<K: Key, V: Word> Item for Pair<K, V> {
    #[inline(always)]
    fn gt(&self, other: &Self) -> bool {
        if V::BREAKS_TIES {
            // Ranked items: key, then rank.
            (self.k > other.k) | ((self.k == other.k) & self.v.tie_gt(&other.v))
        } else {
            self.k.after(&other.k)
        }
    }
    #[inline(always)]
    fn shfl_bfly(self, mask: u32) -> Self {
        Pair { k: self.k.shfl_bfly(mask), v: self.v.shfl_bfly(mask) }
    }
    #[inline(always)]
    fn shfl_idx(self, src: u32) -> Self {
        Pair { k: self.k.shfl_idx(src), v: self.v.shfl_idx(src) }
    }
    #[inline(always)]
    fn keep(self, partner: Self, keep_low: bool) -> Self {
        if core::mem::size_of::<V>() == 0 && K::MIN_MAX {
            // A key alone: `min`/`max` picked by the predicate (ptxas fuses
            // the select into one `VIMNMX`), no compare.
            let k = if keep_low { self.k.min(partner.k) } else { self.k.max(partner.k) };
            Pair { k, v: self.v }
        } else if core::mem::size_of::<V>() == 0 && K::SCALAR {
            // A wider key alone: one compare for either side (equal keys
            // are the same key, so the high side may take its partner's).
            let take_partner = self.k.after(&partner.k) == keep_low;
            choose!(take_partner, partner, self)
        } else if V::BREAKS_TIES {
            let take_partner = if keep_low { self.gt(&partner) } else { partner.gt(&self) };
            choose!(take_partner, partner, self)
        } else {
            // With a payload each side needs its own strict compare (equal
            // keys stay put). Plain `>` here: both compares and the choice
            // between them fold into predicates, where `after`'s opaque
            // results became registers.
            let take_partner = if keep_low { self.k > partner.k } else { partner.k > self.k };
            choose!(take_partner, partner, self)
        }
    }
    #[inline(always)]
    fn choose(take: bool, a: Self, b: Self) -> Self {
        Pair { k: K::choose(take, a.k, b.k), v: if take { a.v } else { b.v } }
    }
}

impl<K: Key, V: Word> Pair<K, V> {
    /// A pad: the key's pad, the default payload (for a [`Rank`],
    /// `u32::MAX`: pads order after every real item, equal keys included).
    #[inline(always)]
    pub fn pad() -> Self {
        #[cfg(not(warpsort_custom))]
        return Pair { k: K::PAD, v: V::default() };
        #[cfg(warpsort_custom)]
        Pair { k: K::make_pad(), v: V::default() }
    }
}

/// An item that may be a pad: pads order after every real item, equal keys
/// included, so a key-value merge never emits a pad in place of a real `MAX` key.
#[derive(Clone, Copy)]
pub struct Padded<I> {
    /// The item (meaningless when `pad`).
    pub item: I,
    /// 1 where this slot is padding, else 0 (a `u32`, not a `bool`: a
    /// `bool` left padding bytes in the struct, which LLVM then carried
    /// through local memory wherever these items crossed a loop).
    pub pad: u32,
}

impl<I: Item> Item for Padded<I> {
    #[inline(always)]
    fn gt(&self, other: &Self) -> bool {
        (self.pad > other.pad) | ((self.pad == other.pad) & self.item.gt(&other.item))
    }
    #[inline(always)]
    fn shfl_bfly(self, mask: u32) -> Self {
        let pad = self.pad.shfl_bfly(mask);
        Padded { item: self.item.shfl_bfly(mask), pad }
    }
    #[inline(always)]
    fn shfl_idx(self, src: u32) -> Self {
        let pad = self.pad.shfl_idx(src);
        Padded { item: self.item.shfl_idx(src), pad }
    }
}

/// Where a kernel's items live in global memory: keys and, for key-value
/// sorts, a parallel payload array (unused and never dereferenced for `()`).
#[derive(Clone, Copy)]
pub struct Items<K: Key, V> {
    /// The keys, as stored.
    pub keys: *mut K::Mem,
    /// The payloads (`V = ()`: a dangling pointer to zero-sized values).
    pub vals: *mut V,
}

impl<K: Key, V: Word> Items<K, V> {
    /// Item `i`.
    ///
    /// # Safety
    /// `i` is in bounds of both arrays.
    #[inline(always)]
    pub unsafe fn get(&self, i: usize) -> Pair<K, V> {
        // SAFETY: the caller keeps `i` in bounds; zero-sized reads touch nothing.
        unsafe { Pair { k: K::load(*self.keys.add(i)), v: *self.vals.add(i) } }
    }

    /// Stores item `i`.
    ///
    /// # Safety
    /// `i` is in bounds of both arrays and no other thread accesses it concurrently.
    #[inline(always)]
    pub unsafe fn set(&self, i: usize, p: Pair<K, V>) {
        // SAFETY: the caller keeps `i` in bounds and owns the slot.
        unsafe {
            *self.keys.add(i) = p.k.store();
            *self.vals.add(i) = p.v;
        }
    }

    /// Item `i`, or a pad at and past `n`.
    ///
    /// # Safety
    /// Both arrays hold at least `n` items, and `n >= 1` in a build for a
    /// user's key type.
    #[inline(always)]
    pub unsafe fn get_or_pad(&self, i: usize, n: usize) -> Pair<K, V> {
        #[cfg(not(warpsort_custom))]
        // SAFETY: read only below `n`.
        return if i < n { unsafe { self.get(i) } } else { Pair::pad() };
        // A user's key: read a real item whatever `i` and make the pad from
        // it (see `choose!`).
        #[cfg(warpsort_custom)]
        {
            // SAFETY: `n >= 1`; the read stays below `n`.
            let p = unsafe { self.get(i.min(n - 1)) };
            if i < n { p } else { Pair { k: p.k.as_pad(), v: V::default() } }
        }
    }

    /// The same arrays advanced by `offset` items.
    ///
    /// # Safety
    /// The result stays within the arrays' allocations.
    #[inline(always)]
    pub unsafe fn offset(&self, offset: usize) -> Self {
        // SAFETY: the caller keeps the offset within the allocations.
        unsafe { Items { keys: self.keys.add(offset), vals: self.vals.add(offset) } }
    }
}
