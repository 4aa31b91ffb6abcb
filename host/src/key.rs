//! What the host sorts: key types mapped onto the unsigned patterns the kernels
//! order (`warpsort_kernels::ordered`), and payload types.

use std::cmp::{Ordering, Reverse};
use std::fmt::Debug;

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use warpsort_kernels::ordered::{self, Fields, field, mode};

/// The unsigned pattern a key is sorted as on the device: one word (`u32`
/// or `u64`), or for keys wider than 64 bits several `u64` words compared
/// most significant first (`[u64; N]`).
pub trait Bits: DeviceRepr + ValidAsZeroBits + Copy + Default + Ord + Debug + Send + Sync + 'static {
    /// Bits of each word: 32 or 64.
    const WORD_BITS: u32;
    /// How many words.
    const WORDS: usize;
    /// Applies a key mapping (`ordered::mode` bits; several words take only
    /// `DESCENDING`, which inverts every word).
    fn map(self, mode: u32) -> Self;
    /// From its words, most significant first.
    fn from_words(word: impl Fn(usize) -> u64) -> Self;
    /// Word `j`.
    fn word(self, j: usize) -> u64;
}
impl Bits for u32 {
    const WORD_BITS: u32 = 32;
    const WORDS: usize = 1;
    fn map(self, m: u32) -> Self {
        ordered::map32(self, m)
    }
    fn from_words(word: impl Fn(usize) -> u64) -> Self {
        word(0) as u32
    }
    fn word(self, _: usize) -> u64 {
        self as u64
    }
}
impl Bits for u64 {
    const WORD_BITS: u32 = 64;
    const WORDS: usize = 1;
    fn map(self, m: u32) -> Self {
        ordered::map64(self, m)
    }
    fn from_words(word: impl Fn(usize) -> u64) -> Self {
        word(0)
    }
    fn word(self, _: usize) -> u64 {
        self
    }
}
impl<const N: usize> Bits for [u64; N]
where
    [u64; N]: Default,
{
    const WORD_BITS: u32 = 64;
    const WORDS: usize = N;
    fn map(self, m: u32) -> Self {
        if m & mode::DESCENDING != 0 { self.map(|w| !w) } else { self }
    }
    fn from_words(word: impl Fn(usize) -> u64) -> Self {
        std::array::from_fn(word)
    }
    fn word(self, j: usize) -> u64 {
        self[j]
    }
}

/// A key type warpsort sorts. Adding a type is one impl: its bit width and how
/// its bits map onto an unsigned order.
///
/// ```
/// use warpsort::SortKey;
/// use std::cmp::{Ordering, Reverse};
/// assert_eq!((-0.0f32).key_cmp(&0.0), Ordering::Less); // total order, as f32::total_cmp
/// assert_eq!(f32::NAN.key_cmp(&f32::INFINITY), Ordering::Greater);
/// ```
pub trait SortKey: DeviceRepr + ValidAsZeroBits + Copy + PartialEq + Debug + Send + Sync + 'static {
    /// The device word.
    type Bits: Bits;
    /// Name used in reports.
    const NAME: &'static str;
    /// How the bits map onto the unsigned order (`ordered::mode` bits).
    const MODE: u32;
    /// Keys stored other than as their device word (16-bit keys, [`Tuple`]s,
    /// byte strings): where their fields lie and how each orders. Around
    /// every sort the device encodes them into a copy of ordered words and
    /// decodes them back. `None` (the default): the key's own bits are its
    /// word, mapped in place under `MODE`. Either way the device orders
    /// `to_bits().map(MODE)`.
    const FIELDS: Option<Fields> = None;
    /// The raw bits.
    fn to_bits(self) -> Self::Bits;
    /// From raw bits.
    fn from_bits(b: Self::Bits) -> Self;
    /// The sort order (IEEE total order for floats).
    fn key_cmp(&self, other: &Self) -> Ordering {
        self.to_bits().map(Self::MODE).cmp(&other.to_bits().map(Self::MODE))
    }
    /// The key whose ordered pattern is `o` (every pattern is some key).
    fn from_ordered(o: Self::Bits) -> Self {
        Self::from_bits(o.map(Self::MODE | mode::DECODE))
    }
}

macro_rules! key {
    ($t:ty, $bits:ty, $mode:expr, |$x:ident| $to:expr, |$b:ident| $from:expr $(, $fields:expr)?) => {
        impl SortKey for $t {
            type Bits = $bits;
            const NAME: &'static str = stringify!($t);
            const MODE: u32 = $mode;
            $(const FIELDS: Option<Fields> = Some($fields);)?
            fn to_bits(self) -> $bits {
                let $x = self;
                $to
            }
            fn from_bits($b: $bits) -> Self {
                $from
            }
        }
    };
}
key!(u32, u32, 0, |x| x, |b| b);
key!(i32, u32, mode::SIGNED, |x| x as u32, |b| b as i32);
key!(f32, u32, mode::FLOAT, |x| x.to_bits(), |b| f32::from_bits(b));
// 16-bit keys sort as 32-bit words with the key in the high half: a field.
key!(u16, u32, 0, |x| (x as u32) << 16, |b| (b >> 16) as u16, Fields::new(2).with(0, 2, 0));
key!(
    i16,
    u32,
    mode::SIGNED,
    |x| ((x as u16) as u32) << 16,
    |b| (b >> 16) as u16 as i16,
    Fields::new(2).with(0, 2, field::SIGNED)
);
// Byte strings in byte order (`memcmp`'s): big-endian fields of 8 bytes.
key!([u8; 4], u32, 0, |x| u32::from_be_bytes(x), |b| b.to_be_bytes(), Fields::new(4).with(0, 4, field::BIG_ENDIAN));
key!([u8; 8], u64, 0, |x| u64::from_be_bytes(x), |b| b.to_be_bytes(), Fields::new(8).with(0, 8, field::BIG_ENDIAN));
key!(
    [u8; 16],
    [u64; 2],
    0,
    |x| std::array::from_fn(|j| u64::from_be_bytes(x[8 * j..8 * j + 8].try_into().expect("8 bytes"))),
    |b| std::array::from_fn(|i| b[i / 8].to_be_bytes()[i % 8]),
    Fields::new(16).with(0, 8, field::BIG_ENDIAN).with(8, 8, field::BIG_ENDIAN)
);
key!(
    [u8; 32],
    [u64; 4],
    0,
    |x| std::array::from_fn(|j| u64::from_be_bytes(x[8 * j..8 * j + 8].try_into().expect("8 bytes"))),
    |b| std::array::from_fn(|i| b[i / 8].to_be_bytes()[i % 8]),
    Fields::new(32).with(0, 8, field::BIG_ENDIAN).with(8, 8, field::BIG_ENDIAN).with(16, 8, field::BIG_ENDIAN).with(
        24,
        8,
        field::BIG_ENDIAN
    )
);
key!(u64, u64, 0, |x| x, |b| b);
key!(i64, u64, mode::SIGNED, |x| x as u64, |b| b as i64);
key!(f64, u64, mode::FLOAT, |x| x.to_bits(), |b| f64::from_bits(b));

/// A field of a [`Tuple`] key: a primitive number, or [`Reverse`] of one
/// (that field descending).
///
/// ```
/// use std::cmp::Reverse;
/// use warpsort::Field;
/// assert_eq!(<Reverse<i16> as Field>::NAME, "Reverse<i16>");
/// assert_eq!(<f64 as Field>::BYTES, 8);
/// ```
pub trait Field: Copy + PartialEq + Debug + Send + Sync + 'static {
    /// Name used in reports.
    const NAME: &'static str;
    /// Its size: 1, 2, 4 or 8 bytes.
    const BYTES: u32;
    /// How it orders (`warpsort_kernels::ordered::field` flags).
    const FLAGS: u32;
    /// Its size as a type ([`width`]): what decides a [`Tuple`]'s words.
    type Width;
    /// Its bits, zero-extended.
    fn to_field(self) -> u64;
    /// From its bits.
    fn from_field(b: u64) -> Self;
}

macro_rules! fields {
    ($($t:ty, $u:ty, $flags:expr, |$x:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl Field for $t {
            const NAME: &'static str = stringify!($t);
            const BYTES: u32 = size_of::<$t>() as u32;
            const FLAGS: u32 = $flags;
            type Width = <width::Bytes<{ size_of::<$t>() }> as width::Sized>::Width;
            fn to_field(self) -> u64 {
                let $x = self;
                $to as u64
            }
            fn from_field($b: u64) -> Self {
                let $b = $b as $u;
                $from
            }
        }
    )*};
}
fields! {
    u8, u8, 0, |x| x, |b| b;
    i8, u8, field::SIGNED, |x| x as u8, |b| b as i8;
    u16, u16, 0, |x| x, |b| b;
    i16, u16, field::SIGNED, |x| x as u16, |b| b as i16;
    u32, u32, 0, |x| x, |b| b;
    i32, u32, field::SIGNED, |x| x as u32, |b| b as i32;
    f32, u32, field::FLOAT, |x| x.to_bits(), |b| f32::from_bits(b);
    u64, u64, 0, |x| x, |b| b;
    i64, u64, field::SIGNED, |x| x as u64, |b| b as i64;
    f64, u64, field::FLOAT, |x| x.to_bits(), |b| f64::from_bits(b);
}

impl<F: Field> Field for Reverse<F> {
    const NAME: &'static str = names::text(&<Self as names::Named>::TEXT);
    const BYTES: u32 = F::BYTES;
    const FLAGS: u32 = F::FLAGS ^ field::DESCENDING;
    type Width = F::Width;
    fn to_field(self) -> u64 {
        self.0.to_field()
    }
    fn from_field(b: u64) -> Self {
        Reverse(F::from_field(b))
    }
}

impl<F: Field> names::Named for Reverse<F> {
    const TEXT: names::Text = names::join(&["Reverse<", F::NAME, ">"]);
}

/// A composite key: a tuple of two or three [`Field`]s compared
/// lexicographically, each ascending or ([`Reverse`]) descending. Floats in
/// IEEE total order. The device sorts it as one ordered word when its
/// fields fit 32 or 64 bits together (the fields packed, the first in the
/// highest bits), else as several 64-bit words (`(u64, u32)`, `(i16, f64,
/// u64)`: see [`Bits`]).
///
/// `Tuple` is a transparent wrapper (cudarc's device buffers take only
/// types it knows): [`Tuple::slice`] views a slice of tuples as one of
/// `Tuple`s.
///
/// ```no_run
/// use std::cmp::Reverse;
/// use warpsort::{Gpu, Tuple};
/// let gpu = Gpu::new()?;
/// // ORDER BY region, revenue DESC.
/// let mut rows = vec![(2u16, Reverse(10.5f32)), (1, Reverse(3.0)), (2, Reverse(99.0))];
/// gpu.sort_slice(Tuple::slice(&mut rows))?;
/// assert_eq!(rows, [(1, Reverse(3.0)), (2, Reverse(99.0)), (2, Reverse(10.5))]);
/// # Ok::<(), warpsort::Error>(())
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Tuple<T>(pub T);

impl<T> Tuple<T> {
    /// A slice of tuples as a slice of `Tuple`s (no copy).
    pub fn slice(s: &mut [T]) -> &mut [Tuple<T>] {
        let len = s.len();
        // SAFETY: `Tuple<T>` is `repr(transparent)` over `T`.
        unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), len) }
    }
}

/// Implements [`SortKey`] for tuples of the [`Field`]s `$f` (at `$i`).
macro_rules! tuple_key {
    ($t:ty; $($f:ident $i:tt),*) => {
        // SAFETY: tuples of numbers: plain bits, no pointers, every bit
        // pattern of the fields valid (padding is never read as a value).
        unsafe impl<$($f: Field),*> DeviceRepr for Tuple<($($f,)*)> {}
        // SAFETY: as above; zero is a number of every field type.
        unsafe impl<$($f: Field),*> ValidAsZeroBits for Tuple<($($f,)*)> {}

        impl<$($f: Field),*> Tuple<($($f,)*)> {
            const NAME_TEXT: names::Text = names::join(&["(", $($f::NAME, if $i + 1 < Self::ARITY { ", " } else { "" },)* ")"]);
            const ARITY: usize = [$($i),*].len();
        }

        impl<$($f: Field),*> SortKey for Tuple<($($f,)*)>
        where
            ($($f::Width,)*): width::Pack,
        {
            type Bits = <($($f::Width,)*) as width::Pack>::Bits;
            const NAME: &'static str = names::text(&Self::NAME_TEXT);
            const MODE: u32 = 0;
            const FIELDS: Option<Fields> =
                Some(Fields::new(size_of::<Self>() as u32)$(.with(std::mem::offset_of!($t, $i) as u32, $f::BYTES, $f::FLAGS))*);
            fn to_bits(self) -> Self::Bits {
                let v = [$(self.0.$i.to_field()),*];
                pack_words(Self::FIELDS.expect("a tuple has fields"), |i| v[i])
            }
            fn from_bits(b: Self::Bits) -> Self {
                let v = unpack_words(Self::FIELDS.expect("a tuple has fields"), b);
                Tuple(($($f::from_field(v[$i]),)*))
            }
        }
    };
}
tuple_key!((A, B); A 0, B 1);
tuple_key!((A, B, C); A 0, B 1, C 2);

/// The ordered words of a key stored as `fields` whose field `i` holds
/// `value(i)`.
pub(crate) fn pack_words<B: Bits>(fields: Fields, value: impl Fn(usize) -> u64) -> B {
    let w = fields.words(B::WORD_BITS);
    B::from_words(|j| fields.word(&w, j).pack(B::WORD_BITS, |i| value(w.starts[j] + i)))
}

/// The fields' values of the key whose ordered words are `b`.
pub(crate) fn unpack_words<B: Bits>(fields: Fields, b: B) -> [u64; Fields::MAX] {
    let (w, mut v) = (fields.words(B::WORD_BITS), [0; Fields::MAX]);
    for j in 0..w.words {
        fields.word(&w, j).unpack(B::WORD_BITS, b.word(j), |i, x| v[w.starts[j] + i] = x);
    }
    v
}

/// Field sizes as types, and the words a [`Tuple`] of fields of those sizes
/// sorts as: one `u32` up to 4 bytes, one `u64` up to 8, else `u64` words
/// that each take the fields that follow while they fit.
pub mod width {
    /// A field of 1 byte.
    pub struct W1;
    /// A field of 2 bytes.
    pub struct W2;
    /// A field of 4 bytes.
    pub struct W4;
    /// A field of 8 bytes.
    pub struct W8;

    /// `N` bytes, as a type.
    pub struct Bytes<const N: usize>;

    /// The width type of a size.
    pub trait Sized {
        /// `W1`, `W2`, `W4` or `W8`.
        type Width;
    }
    impl Sized for Bytes<1> {
        type Width = W1;
    }
    impl Sized for Bytes<2> {
        type Width = W2;
    }
    impl Sized for Bytes<4> {
        type Width = W4;
    }
    impl Sized for Bytes<8> {
        type Width = W8;
    }

    /// The words fields of these widths pack into.
    pub trait Pack {
        /// `u32`, `u64` or `[u64; N]`.
        type Bits: super::Bits;
    }

    macro_rules! pack {
        ($(($($w:ident),*) => $bits:ty;)*) => {$(
            impl Pack for ($($w,)*) {
                type Bits = $bits;
            }
        )*};
    }
    // Generated: the greedy packing of every combination of two and three widths.
    pack! {
    (W1, W1) => u32;
    (W1, W2) => u32;
    (W1, W4) => u64;
    (W1, W8) => [u64; 2];
    (W2, W1) => u32;
    (W2, W2) => u32;
    (W2, W4) => u64;
    (W2, W8) => [u64; 2];
    (W4, W1) => u64;
    (W4, W2) => u64;
    (W4, W4) => u64;
    (W4, W8) => [u64; 2];
    (W8, W1) => [u64; 2];
    (W8, W2) => [u64; 2];
    (W8, W4) => [u64; 2];
    (W8, W8) => [u64; 2];
    (W1, W1, W1) => u32;
    (W1, W1, W2) => u32;
    (W1, W1, W4) => u64;
    (W1, W1, W8) => [u64; 2];
    (W1, W2, W1) => u32;
    (W1, W2, W2) => u64;
    (W1, W2, W4) => u64;
    (W1, W2, W8) => [u64; 2];
    (W1, W4, W1) => u64;
    (W1, W4, W2) => u64;
    (W1, W4, W4) => [u64; 2];
    (W1, W4, W8) => [u64; 2];
    (W1, W8, W1) => [u64; 3];
    (W1, W8, W2) => [u64; 3];
    (W1, W8, W4) => [u64; 3];
    (W1, W8, W8) => [u64; 3];
    (W2, W1, W1) => u32;
    (W2, W1, W2) => u64;
    (W2, W1, W4) => u64;
    (W2, W1, W8) => [u64; 2];
    (W2, W2, W1) => u64;
    (W2, W2, W2) => u64;
    (W2, W2, W4) => u64;
    (W2, W2, W8) => [u64; 2];
    (W2, W4, W1) => u64;
    (W2, W4, W2) => u64;
    (W2, W4, W4) => [u64; 2];
    (W2, W4, W8) => [u64; 2];
    (W2, W8, W1) => [u64; 3];
    (W2, W8, W2) => [u64; 3];
    (W2, W8, W4) => [u64; 3];
    (W2, W8, W8) => [u64; 3];
    (W4, W1, W1) => u64;
    (W4, W1, W2) => u64;
    (W4, W1, W4) => [u64; 2];
    (W4, W1, W8) => [u64; 2];
    (W4, W2, W1) => u64;
    (W4, W2, W2) => u64;
    (W4, W2, W4) => [u64; 2];
    (W4, W2, W8) => [u64; 2];
    (W4, W4, W1) => [u64; 2];
    (W4, W4, W2) => [u64; 2];
    (W4, W4, W4) => [u64; 2];
    (W4, W4, W8) => [u64; 2];
    (W4, W8, W1) => [u64; 3];
    (W4, W8, W2) => [u64; 3];
    (W4, W8, W4) => [u64; 3];
    (W4, W8, W8) => [u64; 3];
    (W8, W1, W1) => [u64; 2];
    (W8, W1, W2) => [u64; 2];
    (W8, W1, W4) => [u64; 2];
    (W8, W1, W8) => [u64; 3];
    (W8, W2, W1) => [u64; 2];
    (W8, W2, W2) => [u64; 2];
    (W8, W2, W4) => [u64; 2];
    (W8, W2, W8) => [u64; 3];
    (W8, W4, W1) => [u64; 2];
    (W8, W4, W2) => [u64; 2];
    (W8, W4, W4) => [u64; 2];
    (W8, W4, W8) => [u64; 3];
    (W8, W8, W1) => [u64; 3];
    (W8, W8, W2) => [u64; 3];
    (W8, W8, W4) => [u64; 3];
    (W8, W8, W8) => [u64; 3];
    }
}

/// Names of composite keys made at compile time.
mod names {
    /// A name's bytes and length.
    pub type Text = ([u8; 96], usize);

    /// A type whose name is made from others'.
    pub trait Named {
        const TEXT: Text;
    }

    /// `parts` one after another (at most 96 bytes).
    pub const fn join(parts: &[&str]) -> Text {
        let (mut b, mut n, mut i) = ([0u8; 96], 0, 0);
        while i < parts.len() {
            let p = parts[i].as_bytes();
            let mut j = 0;
            while j < p.len() {
                b[n] = p[j];
                n += 1;
                j += 1;
            }
            i += 1;
        }
        (b, n)
    }

    /// The text as a `str`.
    pub const fn text(t: &'static Text) -> &'static str {
        match std::str::from_utf8(t.0.split_at(t.1).0) {
            Ok(s) => s,
            Err(_) => panic!("names are UTF-8"),
        }
    }
}

/// A payload that travels with its key in a key-value sort: any 32- or
/// 64-bit plain value. The kernels only move its bits, so each width has one
/// set of kernels; adding a type of either width is one word in this module.
///
/// ```
/// fn moves<V: warpsort::Payload>() {}
/// moves::<f64>();
/// moves::<i32>();
/// ```
pub trait Payload: DeviceRepr + ValidAsZeroBits + Copy + PartialEq + Debug + Send + Sync + 'static {}

/// Implements [`Payload`] for types of the width of `$w` (`u32` or `u64`).
macro_rules! payload {
    ($w:ident: $($t:ty),*) => {$(
        impl Payload for $t {}
        const _: () = assert!(std::mem::size_of::<$t>() == std::mem::size_of::<$w>());
    )*};
}
payload!(u32: u32, i32, f32);
payload!(u64: u64, i64, f64);

/// An index type of [`Gpu::argsort`](crate::Gpu::argsort): `u32` (up to
/// `u32::MAX` items) or `u64` (any length).
pub trait SortIndex: Payload {
    /// The largest length whose positions this type holds.
    const MAX_LEN: usize;
    /// Position `i` (at most [`SortIndex::MAX_LEN`]).
    #[doc(hidden)]
    fn position(i: usize) -> Self;
}
impl SortIndex for u32 {
    const MAX_LEN: usize = u32::MAX as usize;
    fn position(i: usize) -> Self {
        i as u32
    }
}
impl SortIndex for u64 {
    const MAX_LEN: usize = usize::MAX;
    fn position(i: usize) -> Self {
        i as u64
    }
}

/// Sort direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Order {
    /// Smallest first.
    #[default]
    Ascending,
    /// Largest first.
    Descending,
}

impl Order {
    /// The key-mapping bits for this order.
    pub(crate) fn mode(self) -> u32 {
        match self {
            Order::Ascending => 0,
            Order::Descending => mode::DESCENDING,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_order<K: SortKey + PartialOrd>(sorted: &[K]) {
        for w in sorted.windows(2) {
            assert_eq!(w[0].key_cmp(&w[1]), Ordering::Less, "{:?} < {:?}", w[0], w[1]);
        }
        for k in sorted {
            assert_eq!(K::from_ordered(k.to_bits().map(K::MODE)).to_bits(), k.to_bits(), "round trip of {k:?}");
        }
    }

    #[test]
    fn float_keys_follow_total_order() {
        let nan_neg = f32::from_bits(0xffc0_0000);
        check_order(&[
            nan_neg,
            f32::NEG_INFINITY,
            f32::MIN,
            -1.0,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            1.0,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
        ]);
        check_order(&[f64::NEG_INFINITY, -2.5, -0.0, 0.0, 1e-300, f64::INFINITY, f64::NAN]);
        let mut v = vec![0.5f32, f32::NAN, -0.0, f32::NEG_INFINITY, 0.0, -7.0];
        let mut want = v.clone();
        want.sort_by(f32::total_cmp);
        v.sort_by(|a, b| a.key_cmp(b));
        assert_eq!(
            v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn integer_keys_follow_their_order() {
        check_order(&[i16::MIN, -1, 0, 1, i16::MAX]);
        check_order(&[0u16, 1, 0x8000, u16::MAX]);
        check_order(&[i32::MIN, -1, 0, 1, i32::MAX]);
        check_order(&[i64::MIN, -1, 0, i64::MAX]);
        check_order(&[0u32, 1, u32::MAX]);
        check_order(&[0u64, u64::MAX]);
    }

    #[test]
    fn descending_inverts_the_pattern() {
        let (a, b) =
            (3i32.to_bits().map(i32::MODE | mode::DESCENDING), 5i32.to_bits().map(i32::MODE | mode::DESCENDING));
        assert!(a > b);
        assert_eq!(a.map(i32::MODE | mode::DESCENDING | mode::DECODE), 3i32 as u32);
    }

    /// A few values of every field type, edges included.
    fn samples(seed: u64) -> impl Iterator<Item = u64> + Clone {
        let edges = [0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x8000_0000, 0xffff_ffff, 1 << 63, u64::MAX];
        let mut x = seed;
        edges.into_iter().chain((0..40).map(move |_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> (x % 61)
        }))
    }

    /// `key_cmp` of tuples is the lexicographic order of the fields, each in
    /// its own order (integers as Rust orders them, floats by `total_cmp`,
    /// `Reverse` reversed), and bits round-trip.
    #[test]
    fn tuples_order_field_by_field() {
        fn check<T: SortKey>(make: impl Fn(u64, u64, u64) -> T, want: impl Fn(&T, &T) -> Ordering) {
            let all: Vec<T> = samples(1)
                .zip(samples(2).cycle().skip(5))
                .zip(samples(3).cycle().skip(9))
                .map(|((a, b), c)| make(a, b, c))
                .collect();
            for x in &all {
                assert_eq!(T::from_bits(x.to_bits()).to_bits(), x.to_bits(), "{x:?} round trip");
                for y in &all {
                    assert_eq!(x.key_cmp(y), want(x, y), "{} {x:?} vs {y:?}", T::NAME);
                }
            }
        }
        check(|a, b, _| Tuple((a as u32, b as u32)), |x, y| x.0.cmp(&y.0));
        check(
            |a, b, _| Tuple((f32::from_bits(a as u32), b as i32)),
            |x, y| x.0.0.total_cmp(&y.0.0).then(x.0.1.cmp(&y.0.1)),
        );
        check(
            |a, b, c| Tuple((a as i16, Reverse(f32::from_bits(b as u32)), c as u8)),
            |x, y| x.0.0.cmp(&y.0.0).then(y.0.1.0.total_cmp(&x.0.1.0)).then(x.0.2.cmp(&y.0.2)),
        );
        check(|a, b, _| Tuple((Reverse(a as i8), b as u16)), |x, y| x.0.cmp(&y.0));
        check(|a, b, c| Tuple((a as u8, Reverse(b as u32), c as i16)), |x, y| x.0.cmp(&y.0));
        // Wider than a word: several u64 words.
        check(|a, b, _| Tuple((a, b as u32)), |x, y| x.0.cmp(&y.0));
        check(
            |a, b, c| Tuple((a as i16, f64::from_bits(b), c)),
            |x, y| x.0.0.cmp(&y.0.0).then(x.0.1.total_cmp(&y.0.1)).then(x.0.2.cmp(&y.0.2)),
        );
        check(|a, b, c| Tuple((a as u32, Reverse(b), c as u32)), |x, y| x.0.cmp(&y.0));
        assert_eq!(<Tuple<(i16, Reverse<f32>, u8)>>::NAME, "(i16, Reverse<f32>, u8)");
    }

    /// Fields pack into the fewest words that keep each field whole.
    #[test]
    fn tuples_pack_into_words() {
        fn words<K: SortKey>() -> usize {
            size_of::<K::Bits>()
        }
        assert_eq!(words::<Tuple<(u16, u16)>>(), 4);
        assert_eq!(words::<Tuple<(u8, u32)>>(), 8);
        assert_eq!(words::<Tuple<(u16, u16, u32)>>(), 8);
        assert_eq!(words::<Tuple<(u64, u32)>>(), 16);
        assert_eq!(words::<Tuple<(u32, u32, u32)>>(), 16);
        assert_eq!(words::<Tuple<(u32, u64, u32)>>(), 24);
        assert_eq!(words::<Tuple<(i16, f64, u64)>>(), 24);
        assert_eq!(words::<[u8; 32]>(), 32);
    }

    #[test]
    fn byte_strings_order_as_memcmp() {
        let all: Vec<[u8; 8]> = samples(4).map(|x| x.to_le_bytes()).collect();
        for x in &all {
            for y in &all {
                assert_eq!(x.key_cmp(y), x.as_slice().cmp(y.as_slice()));
                let (a, b) = ([x[0], x[1], x[2], x[3]], [y[0], y[1], y[2], y[3]]);
                assert_eq!(a.key_cmp(&b), a.cmp(&b));
                let wide = |x: &[u8; 8], y: &[u8; 8]| -> [u8; 32] {
                    std::array::from_fn(|i| [x, y][i / 8 % 2][i % 8] ^ i as u8)
                };
                let (a, b) = (wide(x, y), wide(y, x));
                assert_eq!(a.key_cmp(&b), a.cmp(&b));
                assert_eq!(<[u8; 32]>::from_bits(a.to_bits()), a);
                let (a, b): ([u8; 16], [u8; 16]) = (a[..16].try_into().unwrap(), b[8..24].try_into().unwrap());
                assert_eq!(a.key_cmp(&b), a.cmp(&b));
            }
        }
    }
}
