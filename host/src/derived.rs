//! A user's key type whose order is field by field (`#[derive(Order)]`, its
//! fields in `warpsort_key::Order::FIELDS`) sorts as the built-in
//! [`Tuple`](crate::Tuple)s do: encoded on the GPU into ordered words by
//! the same [`Fields`], every operation on those words, with no kernels
//! built for the type. Here: the fields as [`Fields`] ([`fields_of`]), the
//! words they take ([`Word`]), and the key type the generic operations see
//! ([`Encoded`]: the user's bytes, `repr(transparent)`), with views of the
//! caller's buffers and slices as buffers and slices of it.

use std::fmt::{self, Debug};
use std::marker::PhantomData;
use std::mem::size_of;

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice, SyncOnDrop, ValidAsZeroBits};
use warpsort_kernels::ordered::{Fields, field};
use warpsort_key::{Encoding, Order};

use crate::key::{Bits, SortKey, pack_words, unpack_words};

/// The fields of `T`'s derived order as [`Fields`], or `None` where the
/// order is hand-written (no `FIELDS`), a field's bits do not order as
/// numbers, or the fields do not fit [`Fields`]: at most
/// [`Fields::MAX`] of them once arrays are split (an array of bytes into
/// big-endian pieces of up to 8, any other into its elements), each
/// starting in the first 64 bytes of a key under 128 bytes.
///
/// ```ignore
/// // #[derive(Order)] struct Trade { venue: u32, #[order(desc)] price: f32, id: u32 }
/// let f = fields_of::<Trade>().unwrap();
/// assert_eq!((f.count(), f.field(1)), (3, (4, 4, field::FLOAT | field::DESCENDING)));
/// ```
pub(crate) const fn fields_of<T: Order>() -> Option<Fields> {
    let stride = size_of::<T>();
    if T::FIELDS.is_empty() || stride == 0 || stride >= 128 {
        return None;
    }
    let mut f = Fields::new(stride as u32);
    let mut i = 0;
    while i < T::FIELDS.len() {
        let k = T::FIELDS[i];
        let Some(b) = k.bits else { return None };
        if !matches!(b.bytes, 1 | 2 | 4 | 8) || (matches!(b.encoding, Encoding::Float) && b.bytes < 4) {
            return None;
        }
        let desc = if k.desc { field::DESCENDING } else { 0 };
        let flags = match b.encoding {
            Encoding::Unsigned => 0,
            Encoding::Signed => field::SIGNED,
            Encoding::Float => field::FLOAT,
        };
        // Bytes compare one after the other as a big-endian string does.
        let string = b.bytes == 1 && flags == 0;
        let total = b.bytes * b.count;
        let mut at = 0;
        while at < total {
            let (len, flags) = if string {
                let rest = total - at;
                let len = if rest >= 8 { 8 } else { 1 << rest.ilog2() };
                (len, field::BIG_ENDIAN | desc)
            } else {
                (b.bytes, flags | desc)
            };
            let offset = k.offset + at;
            if f.count() == Fields::MAX || offset >= 64 || offset + len > stride {
                return None;
            }
            f = f.with(offset as u32, len as u32, flags);
            at += len;
        }
        i += 1;
    }
    Some(f)
}

/// The device word of a derived order's keys: as a [`Tuple`](crate::Tuple)
/// of the same fields sorts (one `u32` up to 4 bytes of fields, one `u64`
/// up to 8, else `u64` words that each take the fields that follow while
/// they fit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Word {
    U32,
    U64,
    Wide(usize),
}

impl Word {
    /// The word of keys of `fields`.
    pub fn of(fields: Fields) -> Self {
        match fields.bits() {
            0..=32 => Word::U32,
            33..=64 => Word::U64,
            _ => Word::Wide(fields.words(64).words),
        }
    }
}

/// Runs `$body` with `$b` naming the [`Bits`] of [`Word`] `$w`.
macro_rules! with_word {
    ($w:expr, $b:ident => $body:expr) => {
        match $w {
            $crate::derived::Word::U32 => {
                type $b = u32;
                $body
            }
            $crate::derived::Word::U64 => {
                type $b = u64;
                $body
            }
            $crate::derived::Word::Wide(2) => {
                type $b = [u64; 2];
                $body
            }
            $crate::derived::Word::Wide(3) => {
                type $b = [u64; 3];
                $body
            }
            $crate::derived::Word::Wide(_) => {
                type $b = [u64; 4];
                $body
            }
        }
    };
}
pub(crate) use with_word;

/// A key of the user's type `T`, sorted by the ordered words `B` of its
/// derived order: the generic operations' view of it.
#[repr(transparent)]
pub(crate) struct Encoded<T, B>(T, PhantomData<fn() -> B>);

impl<T: Copy, B> Clone for Encoded<T, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Copy, B> Copy for Encoded<T, B> {}

// SAFETY: `repr(transparent)` over `T`, which the device moves as plain
// bytes (`DeviceRepr`).
unsafe impl<T: DeviceRepr, B> DeviceRepr for Encoded<T, B> {}
// SAFETY: `Order`'s contract: all-zero bytes are a value of a key type.
unsafe impl<T: Order, B> ValidAsZeroBits for Encoded<T, B> {}

impl<T: Order + DeviceRepr + Send + Sync, B: Bits> PartialEq for Encoded<T, B> {
    fn eq(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits()
    }
}

impl<T: Order + DeviceRepr + Send + Sync, B: Bits> Debug for Encoded<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({:?})", std::any::type_name::<T>(), self.to_bits())
    }
}

impl<T: Order + DeviceRepr + Send + Sync, B: Bits> SortKey for Encoded<T, B> {
    type Bits = B;
    const NAME: &'static str = "user type";
    const MODE: u32 = 0;
    const FIELDS: Option<Fields> = fields_of::<T>();
    fn to_bits(self) -> B {
        let f = Self::FIELDS.expect("an encoded key type has fields");
        let at = (&raw const self.0).cast::<u8>();
        pack_words(f, |i| {
            let (offset, bytes, _) = f.field(i);
            let mut v = [0u8; 8];
            // SAFETY: `fields_of` placed field `i` inside the key's
            // `size_of::<T>()` bytes, on one of `T`'s own fields (initialised).
            unsafe { std::ptr::copy_nonoverlapping(at.add(offset as usize), v.as_mut_ptr(), bytes as usize) };
            u64::from_le_bytes(v)
        })
    }
    fn from_bits(b: B) -> Self {
        let f = Self::FIELDS.expect("an encoded key type has fields");
        let v = unpack_words(f, b);
        let mut key = [0u8; 128];
        for (i, &x) in v.iter().enumerate().take(f.count()) {
            let (offset, bytes, _) = f.field(i);
            key[offset as usize..(offset + bytes) as usize].copy_from_slice(&x.to_le_bytes()[..bytes as usize]);
        }
        // SAFETY: `fields_of` keeps keys under 128 bytes; each field's bytes
        // are its value, every other byte zero, and all-zero bytes are a
        // value of `T` (`Order`'s contract), so the bytes are a `T`.
        Encoded(unsafe { std::ptr::read_unaligned(key.as_ptr().cast::<T>()) }, PhantomData)
    }
}

impl<T: Order, B> Encoded<T, B> {
    /// A slice of `T` as one of `Encoded` keys (no copy).
    pub fn slice(s: &mut [T]) -> &mut [Self] {
        let len = s.len();
        // SAFETY: `Encoded<T, B>` is `repr(transparent)` over `T`.
        unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), len) }
    }
}

/// A caller's device buffer of `T` seen as one of `K` (a `repr(transparent)`
/// view of `T`): the same memory, the same stream and events.
pub(crate) struct Retyped<'a, P, T, K> {
    buf: &'a mut P,
    _types: PhantomData<fn() -> (T, K)>,
}

impl<'a, P: DeviceSlice<T>, T, K> Retyped<'a, P, T, K> {
    pub fn new(buf: &'a mut P) -> Self {
        Retyped { buf, _types: PhantomData }
    }
}

impl<P: DeviceSlice<T>, T, K> DeviceSlice<K> for Retyped<'_, P, T, K> {
    fn len(&self) -> usize {
        self.buf.len()
    }
    fn stream(&self) -> &std::sync::Arc<CudaStream> {
        self.buf.stream()
    }
}

impl<P: DevicePtrMut<T>, T, K> DevicePtrMut<K> for Retyped<'_, P, T, K> {
    fn device_ptr_mut<'b>(&'b mut self, stream: &'b CudaStream) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'b>) {
        self.buf.device_ptr_mut(stream)
    }
}

/// [`Retyped`] for a buffer that is only read.
pub(crate) struct RetypedRef<'a, P, T, K> {
    buf: &'a P,
    _types: PhantomData<fn() -> (T, K)>,
}

impl<'a, P: DeviceSlice<T>, T, K> RetypedRef<'a, P, T, K> {
    pub fn new(buf: &'a P) -> Self {
        RetypedRef { buf, _types: PhantomData }
    }
}

impl<P: DeviceSlice<T>, T, K> DeviceSlice<K> for RetypedRef<'_, P, T, K> {
    fn len(&self) -> usize {
        self.buf.len()
    }
    fn stream(&self) -> &std::sync::Arc<CudaStream> {
        self.buf.stream()
    }
}

impl<P: DevicePtr<T>, T, K> DevicePtr<K> for RetypedRef<'_, P, T, K> {
    fn device_ptr<'b>(&'b self, stream: &'b CudaStream) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'b>) {
        self.buf.device_ptr(stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;

    use crate::Tuple;

    #[derive(Clone, Copy, Debug, PartialEq, warpsort_key::Order)]
    #[repr(C)]
    struct Trade {
        venue: u32,
        #[order(desc)]
        price: f32,
        id: u32,
    }
    // SAFETY: plain `repr(C)` numbers.
    unsafe impl DeviceRepr for Trade {}

    #[derive(Clone, Copy, Debug, PartialEq, warpsort_key::Order)]
    #[repr(C)]
    struct Named {
        #[order(desc)]
        name: [u8; 12],
        rank: i16,
        flag: u16,
    }
    // SAFETY: as above.
    unsafe impl DeviceRepr for Named {}

    #[test]
    fn derived_fields_are_the_tuples() {
        // The same fields, offsets and flags as the built-in tuple, so the
        // same words and the same kernels.
        let t = <Tuple<(u32, Reverse<f32>, u32)> as SortKey>::FIELDS.unwrap();
        assert_eq!(fields_of::<Trade>(), Some(t));
        assert_eq!(Word::of(t), Word::Wide(2));
        // A byte string splits into big-endian pieces: 8 + 4 bytes.
        let n = fields_of::<Named>().unwrap();
        let d = field::BIG_ENDIAN | field::DESCENDING;
        assert_eq!((n.count(), n.field(0), n.field(1), n.field(2)), (4, (0, 8, d), (8, 4, d), (12, 2, field::SIGNED)));
        assert_eq!(Word::of(n), Word::Wide(2));
    }

    #[test]
    fn what_does_not_fit_has_no_fields() {
        #[derive(Clone, Copy, warpsort_key::Order)]
        #[repr(C)]
        struct Five {
            a: [u32; 5],
        }
        #[derive(Clone, Copy)]
        struct Hand(u32);
        impl warpsort_key::Order for Hand {
            fn less(&self, o: &Self) -> bool {
                self.0 > o.0
            }
        }
        #[derive(Clone, Copy, warpsort_key::Order)]
        #[repr(C)]
        struct Far {
            pad: [u32; 16],
            late: u32,
        }
        assert_eq!(fields_of::<Five>(), None); // five fields
        assert_eq!(fields_of::<Hand>(), None); // a hand-written order
        assert_eq!(fields_of::<Far>(), None); // more than four once split
    }

    /// A key's bytes (the test types have no padding).
    fn bytes<T>(x: &T) -> Vec<u8> {
        // SAFETY: `x` is `size_of::<T>()` initialised bytes.
        unsafe { std::slice::from_raw_parts((x as *const T).cast::<u8>(), size_of::<T>()) }.to_vec()
    }

    /// The encoded words order as `less`, and decode to the same key.
    fn round_trip<T: warpsort_key::Order + DeviceRepr + Send + Sync + Debug + PartialEq, B: Bits>(keys: &[T]) {
        for a in keys {
            let e = Encoded::<T, B>(*a, PhantomData);
            assert_eq!(bytes(&Encoded::<T, B>::from_bits(e.to_bits()).0), bytes(a), "{a:?}");
            for b in keys {
                let f = Encoded::<T, B>(*b, PhantomData);
                assert_eq!(e.key_cmp(&f), a.order(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn encoded_words_order_as_less() {
        let prices = [f32::NAN, -f32::NAN, f32::INFINITY, -0.0, 0.0, 1.5, -1.5];
        let trades: Vec<Trade> = (0..60u32)
            .map(|i| Trade { venue: i % 3, price: prices[i as usize % prices.len()], id: (i / 7) % 2 })
            .collect();
        round_trip::<Trade, [u64; 2]>(&trades);
        let named: Vec<Named> = (0..50u32)
            .map(|i| Named {
                name: std::array::from_fn(
                    |j| if j == 11 { (i % 3) as u8 } else { (i as usize * j % 5 / 4) as u8 * 200 },
                ),
                rank: (i % 5) as i16 - 2,
                flag: (i % 2) as u16,
            })
            .collect();
        round_trip::<Named, [u64; 2]>(&named);
    }
}
