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
//! A field-by-field order is a derive; any other is a hand-written `less`:
//!
//! ```
//! use warpsort_key::Order;
//!
//! /// A trade: by venue ascending, then by price descending (IEEE total
//! /// order), then by id.
//! #[derive(Clone, Copy, Debug, PartialEq, Order)]
//! #[repr(C)]
//! pub struct Trade {
//!     pub venue: u32,
//!     #[order(desc)]
//!     pub price: f32,
//!     pub id: u32,
//! }
//!
//! /// Points by distance from the origin.
//! #[derive(Clone, Copy)]
//! #[repr(C)]
//! pub struct Point {
//!     pub x: f32,
//!     pub y: f32,
//! }
//!
//! impl Order for Point {
//!     fn less(&self, other: &Self) -> bool {
//!         self.x * self.x + self.y * self.y < other.x * other.x + other.y * other.y
//!     }
//! }
//!
//! let (a, b) = (Trade { venue: 1, price: 9.5, id: 2 }, Trade { venue: 1, price: 2.0, id: 1 });
//! assert!(a.less(&b) && !b.less(&a));
//! assert!(Point { x: 1.0, y: 0.0 }.less(&Point { x: -2.0, y: 0.5 }));
//! ```
#![no_std]
#![deny(missing_docs)]

use core::cmp::Ordering;

/// `#[derive(Order)]`: the fields in declaration order, each ascending or
/// `#[order(desc)]`, compared by [`FieldOrder`] (what [`by_fields!`] does).
pub use warpsort_key_derive::Order;

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

    /// The fields of a field-by-field order, most significant first, with
    /// where each lies in the type (`#[derive(Order)]` writes it). With
    /// them a sort can encode each key into ordered words and sort those,
    /// as warpsort's built-in tuples, with no kernels built for the type
    /// (`warpsort::Gpu::sort_custom` on a handle from `Gpu::new`). Empty,
    /// the default, for a hand-written `less`: only kernels compiled with
    /// it sort the type. A hand-written list must give exactly the order of
    /// `less`.
    ///
    /// ```
    /// use warpsort_key::{Encoding, FieldBits, Order};
    /// #[derive(Clone, Copy, Order)]
    /// #[repr(C)]
    /// struct Trade {
    ///     venue: u32,
    ///     #[order(desc)]
    ///     price: f32,
    /// }
    /// let f = Trade::FIELDS;
    /// assert_eq!((f.len(), f[1].offset, f[1].desc), (2, 4, true));
    /// assert_eq!(f[1].bits, Some(FieldBits { encoding: Encoding::Float, bytes: 4, count: 1 }));
    /// ```
    const FIELDS: &'static [KeyField] = &[];

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
///
/// ```
/// assert!(std::path::Path::new(warpsort_key::SOURCE_DIR).join("src/lib.rs").exists());
/// ```
pub const SOURCE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// The largest key type the kernels sort, in bytes.
///
/// ```
/// assert!(warpsort_key::fits::<[u64; 4]>() && warpsort_key::MAX_KEY_BYTES == 32);
/// ```
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

/// How one field of a key orders, for `#[derive(Order)]` and
/// [`by_fields!`]: integers, `bool` and `char` by value, floats in IEEE
/// total order (as `f32::total_cmp`: -NaN < -inf < -0 < +0 < +inf < NaN,
/// the order of warpsort's float keys), arrays element by element.
///
/// ```
/// use warpsort_key::FieldOrder;
/// assert!((-0.0f32).field_less(&0.0) && 1.0f64.field_less(&f64::NAN));
/// assert!([1u8, 2].field_less(&[1, 3]));
/// ```
pub trait FieldOrder {
    /// Whether `self` orders strictly before `other`.
    fn field_less(&self, other: &Self) -> bool;

    /// How the field's bits order, where `field_less` is the order of its
    /// bits read as numbers ([`FieldBits`]); `None` (the default) for a
    /// field type of the user's own.
    const BITS: Option<FieldBits> = None;
}

/// How a field's bits give its order: `count` numbers of `bytes` bytes
/// each (an array's elements, the first most significant), each ordered
/// as [`Encoding`] says. What lets a sort encode a derived order into
/// ordered words.
///
/// ```
/// use warpsort_key::{Encoding, FieldBits, FieldOrder};
/// assert_eq!(<[i16; 3]>::BITS, Some(FieldBits { encoding: Encoding::Signed, bytes: 2, count: 3 }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldBits {
    /// How each number orders.
    pub encoding: Encoding,
    /// Bytes of each number: 1, 2, 4 or 8.
    pub bytes: usize,
    /// How many numbers.
    pub count: usize,
}

/// How the bits of one number order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// An unsigned integer (also `bool` and `char`).
    Unsigned,
    /// A two's-complement signed integer.
    Signed,
    /// An IEEE float, in total order.
    Float,
}

/// One field of a field-by-field order ([`Order::FIELDS`]).
///
/// ```
/// use warpsort_key::KeyField;
/// let f = KeyField::of::<u64>(8, true);
/// assert_eq!((f.offset, f.desc, f.bits.map(|b| b.bytes)), (8, true, Some(8)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyField {
    /// Its byte offset in the key type.
    pub offset: usize,
    /// How its bits order; `None`: not as numbers.
    pub bits: Option<FieldBits>,
    /// Whether it orders descending.
    pub desc: bool,
}

impl KeyField {
    /// A field of type `F` at byte `offset`, descending if `desc`.
    pub const fn of<F: FieldOrder>(offset: usize, desc: bool) -> Self {
        KeyField { offset, bits: F::BITS, desc }
    }
}

macro_rules! field_by_value {
    ($encoding:ident: $($t:ty),*) => {$(
        impl FieldOrder for $t {
            #[inline(always)]
            fn field_less(&self, other: &Self) -> bool {
                self < other
            }
            const BITS: Option<FieldBits> =
                Some(FieldBits { encoding: Encoding::$encoding, bytes: core::mem::size_of::<$t>(), count: 1 });
        }
    )*};
}
field_by_value!(Unsigned: u8, u16, u32, u64, usize, bool, char);
field_by_value!(Signed: i8, i16, i32, i64, isize);

macro_rules! field_float {
    ($($t:ty, $i:ty, $u:ty);*) => {$(
        impl FieldOrder for $t {
            #[inline(always)]
            fn field_less(&self, other: &Self) -> bool {
                // The bits as a signed integer, the negatives' magnitude bits
                // flipped: ordered as the IEEE total order.
                let key = |x: $t| {
                    let b = x.to_bits() as $i;
                    b ^ ((((b >> (<$i>::BITS - 1)) as $u) >> 1) as $i)
                };
                key(*self) < key(*other)
            }
            const BITS: Option<FieldBits> =
                Some(FieldBits { encoding: Encoding::Float, bytes: core::mem::size_of::<$t>(), count: 1 });
        }
    )*};
}
field_float!(f32, i32, u32; f64, i64, u64);

impl<T: FieldOrder, const N: usize> FieldOrder for [T; N] {
    #[inline(always)]
    fn field_less(&self, other: &Self) -> bool {
        for i in 0..N {
            if self[i].field_less(&other[i]) {
                return true;
            }
            if other[i].field_less(&self[i]) {
                return false;
            }
        }
        false
    }
    const BITS: Option<FieldBits> = match T::BITS {
        Some(b) => Some(FieldBits { count: b.count * N, ..b }),
        None => None,
    };
}

/// A field-by-field order for a hand-written [`Order::less`] (what
/// `#[derive(Order)]` writes): `by_fields!(a, b; f, desc g, h)` compares
/// field `f` ascending, then `g` descending, then `h`, by [`FieldOrder`],
/// stopping at the first field that differs.
///
/// ```
/// use warpsort_key::by_fields;
/// struct P { x: i32, y: f32 }
/// let (a, b) = (P { x: 1, y: 5.0 }, P { x: 1, y: f32::NAN });
/// assert!(by_fields!(&a, &b; x, y));
/// assert!(by_fields!(&b, &a; x, desc y));
/// // After a descending field that ties, the next is ascending again.
/// let (c, d) = (P { x: 1, y: 2.0 }, P { x: 2, y: 2.0 });
/// assert!(by_fields!(&c, &d; desc y, x));
/// ```
#[macro_export]
macro_rules! by_fields {
    ($a:expr, $b:expr; $($rest:tt)+) => {{
        let (a, b) = ($a, $b);
        $crate::by_fields!(@go a, b; $($rest)+)
    }};
    (@go $a:ident, $b:ident; desc $f:ident $(, $($rest:tt)+)?) => {
        $crate::by_fields!(@cmp $a, $b; $b, $a, $f; $($($rest)+)?)
    };
    (@go $a:ident, $b:ident; $f:ident $(, $($rest:tt)+)?) => {
        $crate::by_fields!(@cmp $a, $b; $a, $b, $f; $($($rest)+)?)
    };
    // Field `f` of `x` before that of `y` (`x, y` are `a, b` or, for a
    // descending field, `b, a`); the rest compare `a` with `b` again.
    (@cmp $a:ident, $b:ident; $x:ident, $y:ident, $f:ident; $($rest:tt)*) => {
        if $crate::FieldOrder::field_less(&$x.$f, &$y.$f) {
            true
        } else if $crate::FieldOrder::field_less(&$y.$f, &$x.$f) {
            false
        } else {
            $crate::by_fields!(@next $a, $b; $($rest)*)
        }
    };
    (@next $a:ident, $b:ident; ) => { false };
    (@next $a:ident, $b:ident; $($rest:tt)+) => { $crate::by_fields!(@go $a, $b; $($rest)+) };
}
