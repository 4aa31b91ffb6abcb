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
