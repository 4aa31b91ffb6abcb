//! The order of a key type that warpsort sorts on the GPU, written by the
//! user in Rust.
//!
//! A key crate (`no_std`) defines the type and implements [`Order`]; the
//! program that sorts builds warpsort's kernels for it with
//! `warpsort-build` (from its `build.rs`) and sorts `CudaSlice`s of it with
//! `warpsort::Gpu::sort_custom` and its kin. The same `less` runs on the
//! GPU, inside every compare-exchange, and on the host, where the results
//! are checked.
//!
//! ```
//! use warpsort_key::{Order, by_fields};
//!
//! /// A trade: by venue ascending, then by price descending.
//! #[derive(Clone, Copy, Debug, PartialEq)]
//! #[repr(C)]
//! pub struct Trade {
//!     pub venue: u32,
//!     pub price: f32,
//! }
//!
//! impl Order for Trade {
//!     fn less(&self, other: &Self) -> bool {
//!         by_fields!(self, other; venue, desc price)
//!     }
//! }
//!
//! let (a, b) = (Trade { venue: 1, price: 9.5 }, Trade { venue: 1, price: 2.0 });
//! assert!(a.less(&b) && !b.less(&a));
//! ```
#![no_std]
#![deny(missing_docs)]

use core::cmp::Ordering;

/// A key type's sort order.
///
/// `less` should be a strict weak order (irreflexive, transitive, with
/// transitive incomparability) and must be deterministic: the sorts call it
/// from every thread that compares two keys and expect the same answer. An
/// order that is not strict weak gives an unspecified order of the keys,
/// but the sorts never lose, duplicate or alter a key, nor touch memory
/// outside the buffers.
///
/// The type is moved between GPU threads 4 bytes at a time: its size is a
/// multiple of 4 (at most [`MAX_KEY_BYTES`]), its alignment at most 8, and
/// it has no padding bytes (`#[repr(C)]` with fields that fill it), and
/// all-zero bytes are a value of it (pads carry that value, never compared
/// nor written out; numbers and arrays of them qualify).
pub trait Order: Copy + 'static {
    /// Whether `self` sorts strictly before `other`.
    fn less(&self, other: &Self) -> bool;

    /// The order as an [`Ordering`] (for host-side checks and
    /// `slice::sort_by`).
    ///
    /// ```
    /// use warpsort_key::Order;
    /// #[derive(Clone, Copy)]
    /// struct Odd(u32);
    /// impl Order for Odd {
    ///     fn less(&self, o: &Self) -> bool { self.0 > o.0 }
    /// }
    /// let mut v = [Odd(1), Odd(3), Odd(2)];
    /// v.sort_by(Order::order);
    /// assert_eq!(v.map(|x| x.0), [3, 2, 1]);
    /// ```
    fn order(&self, other: &Self) -> Ordering {
        if self.less(other) {
            Ordering::Less
        } else if other.less(self) {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }
}

/// Where this crate's source lies on the machine that compiled it:
/// `warpsort-build` builds the kernels against this very crate.
pub const SOURCE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// The largest key type the kernels sort, in bytes.
pub const MAX_KEY_BYTES: usize = 32;

/// Whether `T` can be a key: its size a multiple of 4 up to
/// [`MAX_KEY_BYTES`], its alignment at most 8 (padding bytes cannot be
/// checked here: keep the type `#[repr(C)]` without any).
///
/// ```
/// assert!(warpsort_key::fits::<[u32; 3]>());
/// assert!(!warpsort_key::fits::<u16>());
/// assert!(!warpsort_key::fits::<[u64; 5]>());
/// ```
pub const fn fits<T>() -> bool {
    let (size, align) = (core::mem::size_of::<T>(), core::mem::align_of::<T>());
    size > 0 && size % 4 == 0 && size <= MAX_KEY_BYTES && align <= 8
}

/// A field-by-field order for [`Order::less`]: `by_fields!(a, b; f, desc g,
/// h)` compares field `f` ascending, then `g` descending, then `h`,
/// stopping at the first field that differs. Fields compare by
/// `PartialOrd` (floats: NaN is neither less nor greater, so it ties with
/// everything; map floats with `to_bits` tricks or `total_cmp` in a
/// hand-written `less` where that matters).
///
/// ```
/// use warpsort_key::by_fields;
/// struct P { x: i32, y: u32 }
/// let (a, b) = (P { x: 1, y: 5 }, P { x: 1, y: 7 });
/// assert!(by_fields!(&a, &b; x, y));
/// assert!(by_fields!(&b, &a; x, desc y));
/// ```
#[macro_export]
macro_rules! by_fields {
    ($a:expr, $b:expr; $($rest:tt)+) => {{
        let (a, b) = ($a, $b);
        $crate::by_fields!(@go a, b; $($rest)+)
    }};
    (@go $a:ident, $b:ident; desc $f:ident $(, $($rest:tt)+)?) => {
        if $b.$f < $a.$f { true } else if $a.$f < $b.$f { false } else { $crate::by_fields!(@next $a, $b; $($($rest)+)?) }
    };
    (@go $a:ident, $b:ident; $f:ident $(, $($rest:tt)+)?) => {
        if $a.$f < $b.$f { true } else if $b.$f < $a.$f { false } else { $crate::by_fields!(@next $a, $b; $($($rest)+)?) }
    };
    (@next $a:ident, $b:ident; ) => { false };
    (@next $a:ident, $b:ident; $($rest:tt)+) => { $crate::by_fields!(@go $a, $b; $($rest)+) };
}
