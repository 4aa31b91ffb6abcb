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

/// A key held in the bytes of its own word (`u32` or `u64`: a primitive
/// key, or fields that fill the key's bytes exactly) onto its ordered word
/// and back, in registers: a byte permutation (where each field's bytes
/// go), IEEE fix-ups of float fields (sign-dependent), then one `xor`
/// (signed fields' sign bits, descending fields' bits). What the sample
/// sort's first pass reads keys through, so that no pass of their own
/// encodes them ([`View::encode`]; [`map32`], [`map64`] and
/// [`Fields::pack`] are the same bijections, one key at a time).
///
/// ```
/// use warpsort_kernels::ordered::{field, map32, mode, Fields, View};
/// // (u32, f32) stored as {a: u32 at 0, b: f32 at 4}: a in the high half.
/// let f = Fields::new(8).with(0, 4, 0).with(4, 4, field::FLOAT);
/// let v = View::of_fields(f, 64, 0).unwrap();
/// let raw = |a: u32, b: f32| a as u64 | (b.to_bits() as u64) << 32;
/// let key = raw(7, -1.5);
/// assert_eq!(v.encode(key), f.pack(64, |i| [7, (-1.5f32).to_bits() as u64][i]));
/// assert!(v.encode(raw(7, -1.5)) < v.encode(raw(7, 0.5)) && v.encode(raw(7, 0.5)) < v.encode(raw(8, -9.0)));
/// assert_eq!(v.decode(v.encode(key)), key);
/// // A primitive key's view is its mapping.
/// let d = View::of_mode(mode::FLOAT | mode::DESCENDING, 32);
/// assert_eq!(d.encode(2.5f32.to_bits() as u64), map32(2.5f32.to_bits(), mode::FLOAT | mode::DESCENDING) as u64);
/// // Fields that leave bytes uncovered (padding) have no view.
/// assert_eq!(View::of_fields(Fields::new(8).with(0, 4, 0).with(4, 2, 0), 64, 0), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct View {
    /// The byte permutations, eight nibbles each: in the low half, byte
    /// `j` of the ordered word is byte `nibble j` of the stored key; in
    /// the high half, the inverse.
    pub perm: u64,
    /// What the ordered word is `xor`ed with last.
    pub flip: u64,
    /// Up to two float fields, a byte each (bit 7: present; bit 6: 64
    /// bits wide, else 32; bits 0..6: the ordered word's bit that holds
    /// the field's sign).
    pub floats: u32,
}

/// The byte permutation that moves no byte.
const SAME_BYTES: u32 = 0x7654_3210;

impl View {
    /// The ordered words themselves: nothing to do.
    pub const IDENTITY: View = View { perm: SAME_BYTES as u64 | (SAME_BYTES as u64) << 32, flip: 0, floats: 0 };

    /// Whether keys are their ordered words already.
    #[inline(always)]
    pub const fn is_identity(self) -> bool {
        self.perm == Self::IDENTITY.perm && self.flip == 0 && self.floats == 0
    }

    /// A primitive key of `word_bits` (32 or 64) under the `mode` bits
    /// ([`map32`], [`map64`]; `mode::DECODE` ignored).
    pub const fn of_mode(m: u32, word_bits: u32) -> View {
        let sign = 1u64 << (word_bits - 1);
        let mut v = Self::IDENTITY;
        if m & mode::FLOAT != 0 {
            v.floats = float_entry(word_bits - 1, word_bits);
        } else if m & mode::SIGNED != 0 {
            v.flip = sign;
        }
        if m & mode::DESCENDING != 0 {
            v.flip ^= low_mask(word_bits / 8);
        }
        v
    }

    /// Keys stored as `fields` in words of `word_bits` (32 or 64), under
    /// `m` (`mode::DESCENDING` or 0): `None` unless the key is exactly a
    /// word and its fields cover every byte of it (no padding), at most
    /// two of them floats.
    pub const fn of_fields(fields: Fields, word_bits: u32, m: u32) -> Option<View> {
        if fields.stride() * 8 != word_bits || fields.bits() != word_bits {
            return None;
        }
        let (mut fwd, mut inv) = (0u32, 0u32);
        let (mut flip, mut floats, mut float_fields) = (0u64, 0u32, 0);
        let (mut i, mut pos) = (0, word_bits);
        while i < fields.count() {
            let (at, bytes, flags) = fields.field(i);
            pos -= bytes * 8;
            let mut b = 0;
            while b < bytes {
                // Byte b of the field (little-endian; a byte string's
                // first byte is its most significant).
                let to = pos / 8 + if flags & field::BIG_ENDIAN != 0 { bytes - 1 - b } else { b };
                fwd |= (at + b) << (4 * to);
                inv |= to << (4 * (at + b));
                b += 1;
            }
            let sign = pos + bytes * 8 - 1;
            if flags & field::FLOAT != 0 {
                if float_fields == 2 {
                    return None;
                }
                floats |= float_entry(sign, bytes * 8) << (8 * float_fields);
                float_fields += 1;
            } else if flags & field::SIGNED != 0 {
                flip ^= 1 << sign;
            }
            if flags & field::DESCENDING != 0 {
                flip ^= low_mask(bytes) << pos;
            }
            i += 1;
        }
        if word_bits == 32 {
            // Bytes 4..8 of a 32-bit word stay (zero) where they are.
            fwd |= SAME_BYTES & 0xffff_0000;
            inv |= SAME_BYTES & 0xffff_0000;
        }
        if m & mode::DESCENDING != 0 {
            flip ^= low_mask(word_bits / 8);
        }
        Some(View { perm: fwd as u64 | (inv as u64) << 32, flip, floats })
    }

    /// The ordered word of the key whose stored bytes are `x` (a `u32`
    /// key zero-extended).
    #[inline(always)]
    pub fn encode(self, x: u64) -> u64 {
        let p = permute_bytes(x, self.perm as u32);
        fix_floats(p, self.floats, 1) ^ self.flip
    }

    /// The stored bytes of the key whose ordered word is `o`: the inverse
    /// of [`View::encode`].
    #[inline(always)]
    pub fn decode(self, o: u64) -> u64 {
        let p = fix_floats(o ^ self.flip, self.floats, 0);
        permute_bytes(p, (self.perm >> 32) as u32)
    }
}

impl View {
    /// [`View::encode`] of a key of a `u32` word, in 32-bit operations (a
    /// float in such a word is the whole word).
    #[inline(always)]
    pub fn encode32(self, x: u32) -> u32 {
        let p = permute_bytes32(x, self.perm as u32);
        fix_float32(p, self.floats, 1) ^ self.flip as u32
    }

    /// [`View::decode`] of a key of a `u32` word.
    #[inline(always)]
    pub fn decode32(self, o: u32) -> u32 {
        let p = fix_float32(o ^ self.flip as u32, self.floats, 0);
        permute_bytes32(p, (self.perm >> 32) as u32)
    }
}

/// [`fix_floats`] in a `u32` word: the word is the float, if any.
#[inline(always)]
fn fix_float32(p: u32, floats: u32, negative: u32) -> u32 {
    if floats == 0 {
        return p;
    }
    p ^ if p >> 31 == negative { u32::MAX } else { 1 << 31 }
}

/// [`permute_bytes`] of a `u32` (bytes 4..8 zero), its low half kept.
#[inline(always)]
fn permute_bytes32(x: u32, sel: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        crate::arch::prmt(x, 0, sel & 0xffff)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        permute_bytes(x as u64, sel) as u32
    }
}

/// A float field's entry in [`View::floats`]: its sign at bit `sign` of
/// the word, `bits` wide.
const fn float_entry(sign: u32, bits: u32) -> u32 {
    0x80 | if bits == 64 { 0x40 } else { 0 } | sign
}

/// The IEEE total-order fix-up of each float field of `floats` in `p`:
/// where the sign bit equals `negative` (1 stored, 0 ordered), every bit
/// of the field flips, elsewhere its sign alone ([`f32_to_ordered`],
/// [`ordered_to_f32`]). Loop-free, so that loops over keys around it
/// unroll.
#[inline(always)]
fn fix_floats(p: u64, floats: u32, negative: u64) -> u64 {
    if floats == 0 {
        return p;
    }
    fix_float(fix_float(p, floats & 0xff, negative), floats >> 8, negative)
}

/// [`fix_floats`] of one entry (none when bit 7 is clear).
#[inline(always)]
fn fix_float(p: u64, e: u32, negative: u64) -> u64 {
    if e & 0x80 == 0 {
        return p;
    }
    let sign = e & 63;
    let bits = if e & 0x40 != 0 { 64 } else { 32 };
    let field = u64::MAX >> (64 - bits) << (sign + 1 - bits);
    p ^ if (p >> sign) & 1 == negative { field } else { 1 << sign }
}

/// `x`'s bytes rearranged: byte `j` of the result is byte
/// `(sel >> 4 j) & 7` of `x`. Two `prmt.b32` on the GPU.
#[inline(always)]
pub fn permute_bytes(x: u64, sel: u32) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let (lo, hi) = (x as u32, (x >> 32) as u32);
        crate::arch::prmt(lo, hi, sel & 0xffff) as u64 | (crate::arch::prmt(lo, hi, sel >> 16) as u64) << 32
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let mut out = 0;
        let mut j = 0;
        while j < 8 {
            out |= ((x >> (8 * ((sel >> (4 * j)) & 7))) & 0xff) << (8 * j);
            j += 1;
        }
        out
    }
}
