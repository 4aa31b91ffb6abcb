//! Keys as ordered bit patterns. The kernels sort unsigned integers; these
//! bijections map signed integers and IEEE floats onto unsigned integers whose
//! unsigned order is the key order (floats in total order, as `f32::total_cmp`:
//! -NaN < -inf < … < -0.0 < +0.0 < … < +inf < NaN). A descending sort inverts
//! the bits on the way in and out. Host and device share these functions.
//!
//! ```
//! use warpsort_kernels::ordered::*;
//! assert!(f32_to_ordered((-0.0f32).to_bits()) < f32_to_ordered(0.0f32.to_bits()));
//! assert_eq!(ordered_to_f32(f32_to_ordered(1.5f32.to_bits())), 1.5f32.to_bits());
//! ```

/// How the host asks a key-mapping kernel to transform keys (bit set).
pub mod mode {
    /// Signed integer: flip the sign bit.
    pub const SIGNED: u32 = 1;
    /// IEEE float: flip the sign bit of positives, all bits of negatives.
    pub const FLOAT: u32 = 2;
    /// Descending: invert every bit of the ordered pattern.
    pub const DESCENDING: u32 = 4;
    /// Map back from the ordered pattern instead of onto it.
    pub const DECODE: u32 = 8;
}

/// `i32` bits onto ordered `u32`.
#[inline(always)]
pub const fn i32_to_ordered(bits: u32) -> u32 {
    bits ^ 0x8000_0000
}
/// Inverse of [`i32_to_ordered`].
#[inline(always)]
pub const fn ordered_to_i32(o: u32) -> u32 {
    o ^ 0x8000_0000
}
/// `f32` bits onto ordered `u32` (IEEE total order).
#[inline(always)]
pub const fn f32_to_ordered(bits: u32) -> u32 {
    bits ^ (((bits as i32 >> 31) as u32) | 0x8000_0000)
}
/// Inverse of [`f32_to_ordered`].
#[inline(always)]
pub const fn ordered_to_f32(o: u32) -> u32 {
    o ^ ((((!o) as i32 >> 31) as u32) | 0x8000_0000)
}
/// `i64` bits onto ordered `u64`.
#[inline(always)]
pub const fn i64_to_ordered(bits: u64) -> u64 {
    bits ^ (1 << 63)
}
/// Inverse of [`i64_to_ordered`].
#[inline(always)]
pub const fn ordered_to_i64(o: u64) -> u64 {
    o ^ (1 << 63)
}
/// `f64` bits onto ordered `u64` (IEEE total order).
#[inline(always)]
pub const fn f64_to_ordered(bits: u64) -> u64 {
    bits ^ (((bits as i64 >> 63) as u64) | (1 << 63))
}
/// Inverse of [`f64_to_ordered`].
#[inline(always)]
pub const fn ordered_to_f64(o: u64) -> u64 {
    o ^ ((((!o) as i64 >> 63) as u64) | (1 << 63))
}

/// Defines `map32`/`map64`: encode onto the ordered pattern (then invert for
/// descending), or decode (undo the inversion, then map back).
macro_rules! mapper {
    ($name:ident, $t:ty, $signed:ident, $float:ident, $unsigned_back:ident, $float_back:ident) => {
        /// Applies `mode` (the `mode` bits) to a key of this width.
        #[inline(always)]
        pub const fn $name(x: $t, m: u32) -> $t {
            let descending = m & mode::DESCENDING != 0;
            if m & mode::DECODE == 0 {
                let o = if m & mode::FLOAT != 0 {
                    $float(x)
                } else if m & mode::SIGNED != 0 {
                    $signed(x)
                } else {
                    x
                };
                if descending { !o } else { o }
            } else {
                let o = if descending { !x } else { x };
                if m & mode::FLOAT != 0 {
                    $float_back(o)
                } else if m & mode::SIGNED != 0 {
                    $unsigned_back(o)
                } else {
                    o
                }
            }
        }
    };
}
mapper!(map32, u32, i32_to_ordered, f32_to_ordered, ordered_to_i32, ordered_to_f32);
mapper!(map64, u64, i64_to_ordered, f64_to_ordered, ordered_to_i64, ordered_to_f64);

/// Per-field flags of [`Fields`].
pub mod field {
    /// A signed integer field: flip its sign bit.
    pub const SIGNED: u32 = 1;
    /// An IEEE float field (4 or 8 bytes): total order.
    pub const FLOAT: u32 = 2;
    /// The field descending: invert its ordered bits.
    pub const DESCENDING: u32 = 4;
    /// Bytes compared in memory order (a byte string): the first byte is the
    /// most significant.
    pub const BIG_ENDIAN: u32 = 8;
}

/// A key stored other than as its device word (a tuple, a byte string, a
/// 16-bit key): where each of its fields lies in the key's bytes and how it
/// maps onto its part of one ordered word, the first field in the highest
/// bits, later fields below it (bits below the last field are zero). Host
/// and device share it; the host passes it to `encode_keys` as one `u64`.
///
/// Layout of the `u64`: field `i` in bits `12 i .. 12 i + 12` (byte offset:
/// 6 bits, log2 of its bytes: 2 bits, [`field`] flags: 4 bits), the number
/// of fields in bits 48..51, the key's size in bytes (the stride between
/// keys) in bits 51..58.
///
/// ```
/// use warpsort_kernels::ordered::{field, Fields};
/// // (u32, i16) stored as {a: u32 at 0, b: i16 at 4}, 8 bytes a key.
/// let f = Fields::new(8).with(0, 4, 0).with(4, 2, field::SIGNED);
/// assert_eq!((f.count(), f.stride(), f.bits()), (2, 8, 48));
/// let p = f.pack(64, |i| [7, (-1i16) as u16 as u64][i]);
/// assert_eq!(p, 7 << 32 | 0x7fff << 16);
/// let mut v = [0; 2];
/// f.unpack(64, p, |i, b| v[i] = b);
/// assert_eq!(v, [7, 0xffff]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fields(pub u64);

impl Fields {
    /// The most fields a key has.
    pub const MAX: usize = 4;

    /// No fields yet, keys of `stride` bytes (at most 127).
    pub const fn new(stride: u32) -> Self {
        assert!(stride > 0 && stride < 128, "a key of 1 to 127 bytes");
        Fields((stride as u64) << 51)
    }

    /// One more field, after the others in significance: `bytes` (1, 2, 4
    /// or 8) at byte `offset` (below 64) with [`field`] `flags`.
    pub const fn with(self, offset: u32, bytes: u32, flags: u32) -> Self {
        let n = self.count();
        assert!(n < Self::MAX, "at most four fields");
        assert!(offset < 64 && offset + bytes <= self.stride(), "a field inside the key");
        assert!(bytes.is_power_of_two() && bytes <= 8, "fields of 1, 2, 4 or 8 bytes");
        assert!(flags & field::FLOAT == 0 || bytes >= 4, "float fields of 4 or 8 bytes");
        let f = offset as u64 | (bytes.trailing_zeros() as u64) << 6 | (flags as u64 & 15) << 8;
        Fields((self.0 & !(7 << 48)) | f << (12 * n) | ((n + 1) as u64) << 48)
    }

    /// How many fields.
    #[inline(always)]
    pub const fn count(self) -> usize {
        ((self.0 >> 48) & 7) as usize
    }

    /// Bytes of one key.
    #[inline(always)]
    pub const fn stride(self) -> u32 {
        ((self.0 >> 51) & 127) as u32
    }

    /// Field `i`: its byte offset, bytes and flags.
    #[inline(always)]
    pub const fn field(self, i: usize) -> (u32, u32, u32) {
        let f = (self.0 >> (12 * i)) as u32;
        (f & 63, 1 << ((f >> 6) & 3), (f >> 8) & 15)
    }

    /// Bits of the ordered word the fields fill.
    pub const fn bits(self) -> u32 {
        let mut b = 0;
        let mut i = 0;
        while i < self.count() {
            b += self.field(i).1 * 8;
            i += 1;
        }
        b
    }

    /// Fields `from..to` alone (the same key size).
    pub const fn range(self, from: usize, to: usize) -> Self {
        let mut f = Fields::new(self.stride());
        let mut i = from;
        while i < to {
            let (at, bytes, flags) = self.field(i);
            f = f.with(at, bytes, flags);
            i += 1;
        }
        f
    }

    /// The fields split into the ordered words of a key wider than one
    /// word, most significant first: each word of `word_bits` takes the
    /// fields that follow while they fit (no field spans two words). Word
    /// `j` holds fields `starts[j]..starts[j + 1]`; `words` says how many.
    ///
    /// ```
    /// use warpsort_kernels::ordered::Fields;
    /// // (u32, u64, u16): u32 | u64 | u16.
    /// let f = Fields::new(24).with(0, 4, 0).with(8, 8, 0).with(16, 2, 0);
    /// let w = f.words(64);
    /// assert_eq!((w.words, &w.starts[..4]), (3, &[0, 1, 2, 3][..]));
    /// assert_eq!(Fields::new(8).with(0, 4, 0).with(4, 4, 0).words(64).words, 1);
    /// ```
    pub const fn words(self, word_bits: u32) -> Words {
        let mut w = Words { words: 0, starts: [0; Self::MAX + 1] };
        let (mut i, mut used) = (0, word_bits);
        while i < self.count() {
            let bits = self.field(i).1 * 8;
            if used + bits > word_bits {
                w.starts[w.words] = i;
                w.words += 1;
                used = 0;
            }
            used += bits;
            i += 1;
        }
        w.starts[w.words] = self.count();
        w
    }

    /// Word `j` of [`Fields::words`] as fields of its own.
    pub const fn word(self, w: &Words, j: usize) -> Self {
        self.range(w.starts[j], w.starts[j + 1])
    }

    /// The ordered word (of `word_bits`, 32 or 64, in a `u64`) of a key
    /// whose field `i` holds the bits `value(i)` (zero-extended, in the
    /// key's own byte order).
    #[inline(always)]
    pub fn pack(self, word_bits: u32, value: impl Fn(usize) -> u64) -> u64 {
        let (mut p, mut pos) = (0, word_bits);
        for i in 0..self.count() {
            let (_, bytes, flags) = self.field(i);
            pos -= bytes * 8;
            p |= field_to_ordered(value(i), bytes, flags) << pos;
        }
        p
    }

    /// Gives `field(i, bits)` the bits of each field of the key whose
    /// ordered word is `p` (the inverse of [`Fields::pack`]; bits below the
    /// last field are ignored).
    #[inline(always)]
    pub fn unpack(self, word_bits: u32, p: u64, mut field: impl FnMut(usize, u64)) {
        let mut pos = word_bits;
        for i in 0..self.count() {
            let (_, bytes, flags) = self.field(i);
            pos -= bytes * 8;
            field(i, ordered_to_field((p >> pos) & low_mask(bytes), bytes, flags));
        }
    }
}

/// How [`Fields::words`] splits a key's fields into ordered words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Words {
    /// How many words.
    pub words: usize,
    /// Word `j` holds fields `starts[j]..starts[j + 1]`.
    pub starts: [usize; Fields::MAX + 1],
}

/// The low `bytes` bytes set.
#[inline(always)]
const fn low_mask(bytes: u32) -> u64 {
    if bytes >= 8 { u64::MAX } else { (1 << (bytes * 8)) - 1 }
}

/// A field of `bytes` (its bits zero-extended in `v`) onto its ordered
/// pattern under [`field`] `flags`.
#[inline(always)]
pub const fn field_to_ordered(v: u64, bytes: u32, flags: u32) -> u64 {
    let w = bytes * 8;
    let v = if flags & field::BIG_ENDIAN != 0 { v.swap_bytes() >> (64 - w) } else { v };
    let o = if flags & field::FLOAT != 0 {
        if w == 32 { f32_to_ordered(v as u32) as u64 } else { f64_to_ordered(v) }
    } else if flags & field::SIGNED != 0 {
        v ^ (1 << (w - 1))
    } else {
        v
    };
    if flags & field::DESCENDING != 0 { !o & low_mask(bytes) } else { o }
}

/// Inverse of [`field_to_ordered`].
#[inline(always)]
pub const fn ordered_to_field(o: u64, bytes: u32, flags: u32) -> u64 {
    let w = bytes * 8;
    let o = if flags & field::DESCENDING != 0 { !o & low_mask(bytes) } else { o };
    let v = if flags & field::FLOAT != 0 {
        if w == 32 { ordered_to_f32(o as u32) as u64 } else { ordered_to_f64(o) }
    } else if flags & field::SIGNED != 0 {
        o ^ (1 << (w - 1))
    } else {
        o
    };
    if flags & field::BIG_ENDIAN != 0 { v.swap_bytes() >> (64 - w) } else { v }
}

/// A 64-bit mix (splitmix64's finaliser) so that sums of hashes fingerprint
/// a multiset.
#[inline(always)]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
