//! What the host sorts: key types mapped onto the unsigned patterns the kernels
//! order (`warpsort_kernels::ordered`), and payload types.

use std::cmp::Ordering;
use std::fmt::Debug;

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use warpsort_kernels::ordered::{self, mode};

/// The unsigned word a key is sorted as on the device: `u32` or `u64`.
pub trait Bits: DeviceRepr + ValidAsZeroBits + Copy + Default + Ord + Debug + Send + Sync + 'static {
    /// Applies a key mapping (`ordered::mode` bits).
    fn map(self, mode: u32) -> Self;
}
impl Bits for u32 {
    fn map(self, m: u32) -> Self {
        ordered::map32(self, m)
    }
}
impl Bits for u64 {
    fn map(self, m: u32) -> Self {
        ordered::map64(self, m)
    }
}

/// A key type warpsort sorts. Adding a type is one impl: its bit width and how
/// its bits map onto an unsigned order.
///
/// ```
/// use warpsort::SortKey;
/// use std::cmp::Ordering;
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
    ($t:ty, $bits:ty, $mode:expr, |$x:ident| $to:expr, |$b:ident| $from:expr) => {
        impl SortKey for $t {
            type Bits = $bits;
            const NAME: &'static str = stringify!($t);
            const MODE: u32 = $mode;
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
// 16-bit keys sort as 32-bit patterns with the key in the high half: the
// host widens them into scratch with one kernel and narrows them back.
key!(u16, u32, 0, |x| (x as u32) << 16, |b| (b >> 16) as u16);
key!(i16, u32, mode::SIGNED, |x| ((x as u16) as u32) << 16, |b| (b >> 16) as u16 as i16);
key!(u64, u64, 0, |x| x, |b| b);
key!(i64, u64, mode::SIGNED, |x| x as u64, |b| b as i64);
key!(f64, u64, mode::FLOAT, |x| x.to_bits(), |b| f64::from_bits(b));

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
}
impl SortIndex for u32 {
    const MAX_LEN: usize = u32::MAX as usize;
}
impl SortIndex for u64 {
    const MAX_LEN: usize = usize::MAX;
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
}
