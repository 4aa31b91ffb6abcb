//! Keys of a user's type, ordered by the user's `warpsort_key::Order::less`
//! (compiled into these kernels by `warpsort-build`).
//!
//! A user's order has no greatest key to pad partial tiles with, so in
//! registers and shared memory a key carries a pad flag ([`Custom`]): pads
//! order after every real key whatever `less` says, and `less` is asked only
//! about two real keys. In global memory the keys are the user's own values
//! ([`Key::Mem`] is `T`).
//!
//! The sorts built for these keys are the bitonic ones: compare-exchange
//! networks, which permute their items whatever the comparator answers, so
//! an order that is not a strict weak order never loses or duplicates an
//! item; pads never move below real items, so none is ever written out.

use core::cmp::Ordering;
use core::mem::{MaybeUninit, size_of};

use warpsort_key::Order;

use crate::arch;
use crate::item::{Key, Word};

/// A user's key in registers and shared memory: the key, and 1 for a pad.
#[repr(C)]
pub struct Custom<T> {
    /// The key: a real key's value; zero bytes in a pad, never compared
    /// nor stored.
    pub key: T,
    /// 1 where this is a pad.
    pub pad: u32,
}

impl<T: Copy> Clone for Custom<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Copy> Copy for Custom<T> {}

impl<T: Order> Default for Custom<T> {
    #[inline(always)]
    fn default() -> Self {
        Self::PAD
    }
}

impl<T: Order> Custom<T> {
    /// Strictly after `other`: a pad after every real key, two real keys by
    /// `less` (which sees real keys only).
    #[inline(always)]
    fn after(&self, other: &Self) -> bool {
        if (self.pad | other.pad) != 0 { self.pad > other.pad } else { other.key.less(&self.key) }
    }

    /// `self` with `f` applied to each of its 32-bit words (a shuffle):
    /// through a union with a word array of fixed length, indexed by
    /// constants once the loop unrolls, so the words stay in registers.
    #[inline(always)]
    fn map_words(self, f: impl Fn(u32) -> u32) -> Self {
        let mut w = AsWords { words: [0; WORDS] };
        w.key = self;
        for i in 0..size_of::<Self>() / 4 {
            // SAFETY: the first `size / 4` words are the key's bytes (its
            // size is a multiple of 4, at most `4 * WORDS`).
            unsafe { w.words[i] = f(w.words[i]) };
        }
        // SAFETY: the words were the key's, each moved whole from a lane
        // holding a key of the same type.
        unsafe { w.key }
    }
}

/// The most 32-bit words of a [`Custom`]: the largest key and its flag.
const WORDS: usize = (warpsort_key::MAX_KEY_BYTES + 8) / 4;

/// A key seen as words ([`Custom::map_words`]).
#[repr(C)]
union AsWords<T: Copy> {
    key: Custom<T>,
    words: [u32; WORDS],
}

impl<T: Order> PartialEq for Custom<T> {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        !self.after(other) && !other.after(self)
    }
}
impl<T: Order> Eq for Custom<T> {}

impl<T: Order> PartialOrd for Custom<T> {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    #[inline(always)]
    fn gt(&self, other: &Self) -> bool {
        self.after(other)
    }
    #[inline(always)]
    fn lt(&self, other: &Self) -> bool {
        other.after(self)
    }
    #[inline(always)]
    fn ge(&self, other: &Self) -> bool {
        !other.after(self)
    }
    #[inline(always)]
    fn le(&self, other: &Self) -> bool {
        !self.after(other)
    }
}

impl<T: Order> Ord for Custom<T> {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        if self.after(other) {
            Ordering::Greater
        } else if other.after(self) {
            Ordering::Less
        } else {
            Ordering::Equal
        }
    }
}

impl<T: Order> Word for Custom<T> {
    #[inline(always)]
    fn shfl_bfly(self, mask: u32) -> Self {
        self.map_words(|w| arch::shfl_bfly(w, mask))
    }
    #[inline(always)]
    fn shfl_idx(self, src: u32) -> Self {
        self.map_words(|w| arch::shfl_idx(w, src))
    }
    #[inline(always)]
    fn shfl_up(self, delta: u32) -> Self {
        self.map_words(|w| arch::shfl_up(w, delta))
    }
    #[inline(always)]
    fn shfl_down(self, delta: u32) -> Self {
        self.map_words(|w| arch::shfl_down(w, delta))
    }
}

impl<T: Order> Key for Custom<T> {
    type Mem = T;
    // `min`/`max` would call `less` twice where a compare-exchange's two
    // sides must agree on one answer.
    const SCALAR: bool = false;
    // SAFETY: `warpsort_key::Order` asks that all-zero bytes be a key
    // (evaluated at compile time: a type where they are not fails to build).
    const PAD: Self = Custom { key: unsafe { MaybeUninit::zeroed().assume_init() }, pad: 1 };
    #[inline(always)]
    fn choose(take: bool, a: Self, b: Self) -> Self {
        let (a, b) = (AsWords { key: a }, AsWords { key: b });
        let mut out = AsWords { words: [0; WORDS] };
        for i in 0..size_of::<Self>() / 4 {
            // SAFETY: the first `size / 4` words of each are its key's bytes.
            unsafe { out.words[i] = if take { a.words[i] } else { b.words[i] } };
        }
        // SAFETY: each word is the same word of a key of this type.
        unsafe { out.key }
    }
    #[inline(always)]
    fn make_pad() -> Self {
        // Zero bytes written at run time (a memset the registers absorb).
        // SAFETY: as for `PAD`.
        Custom { key: unsafe { MaybeUninit::zeroed().assume_init() }, pad: 1 }
    }
    #[inline(always)]
    fn as_pad(self) -> Self {
        Custom { key: self.key, pad: 1 }
    }
    #[inline(always)]
    fn load(m: T) -> Self {
        Custom { key: m, pad: 0 }
    }
    #[inline(always)]
    fn store(self) -> T {
        self.key
    }
}

/// The user's key type these kernels are built for: `warpsort-build` writes
/// `pub type UserKey = ::their_crate::TheirType;` into the file named by
/// `WARPSORT_CUSTOM_KEY`.
#[cfg(warpsort_custom)]
mod user {
    include!(env!("WARPSORT_CUSTOM_KEY"));
}
#[cfg(warpsort_custom)]
pub use user::UserKey;

#[cfg(warpsort_custom)]
const _: () = {
    use crate::config::custom_item_bytes;
    use crate::item::{Pair, Rank};
    use core::mem::align_of;
    type K = Custom<UserKey>;
    assert!(warpsort_key::fits::<UserKey>(), "a key type's size is a multiple of 4 up to 32 bytes, its alignment at most 8");
    let (kb, ka) = (size_of::<UserKey>(), align_of::<UserKey>());
    assert!(size_of::<Pair<K, ()>>() == custom_item_bytes(kb, ka, 0));
    assert!(size_of::<Pair<K, u32>>() == custom_item_bytes(kb, ka, 4));
    assert!(size_of::<Pair<K, u64>>() == custom_item_bytes(kb, ka, 8));
    assert!(size_of::<Pair<K, Rank>>() == custom_item_bytes(kb, ka, 4));
};
