//! Keys onto their ordered words and back: primitive keys and keys that
//! fill their words mapped in place through their [`View`] (`map_keys`),
//! or read through it by the kernels that take an [`Encoding`]; other
//! keys stored as fields (tuples with padding, byte strings, 16-bit keys)
//! encoded into words and decoded back (`encode_keys`). The entry points are `checks`'; the bodies build under
//! the emulator too, so that their tests run on a CPU.

use crate::arch::{global_thread, grid_threads};
use crate::ordered::{Fields, View};

/// Maps every key in place onto its ordered word through `view`, or
/// (`decode`) back.
///
/// # Safety
/// `keys` holds `n` keys.
#[inline(always)]
pub unsafe fn map_keys<W: EncodedWord>(keys: *mut W, n: u64, view: View, decode: bool) {
    let mut i = global_thread();
    while i < n as usize {
        // SAFETY: i < n.
        unsafe { *keys.add(i) = (*keys.add(i)).through(view, decode) };
        i += grid_threads();
    }
}

/// What a kernel that reads keys applies to each as it reads it: nothing
/// ([`Plain`]: the keys are ordered words), or a [`View`]'s encoding (the
/// keys are stored in their words' bytes), so that no pass of its own
/// encodes them.
pub trait Encoding<W>: Copy {
    /// The ordered word of the key read as `k`.
    fn apply(self, k: W) -> W;
}

/// Keys that are their ordered words.
#[derive(Clone, Copy)]
pub struct Plain;

impl<W> Encoding<W> for Plain {
    #[inline(always)]
    fn apply(self, k: W) -> W {
        k
    }
}

impl<W: EncodedWord> Encoding<W> for View {
    #[inline(always)]
    fn apply(self, k: W) -> W {
        k.through(self, false)
    }
}

/// An ordered word, `u32` or `u64`: what keys map onto and their fields
/// encode into.
pub trait EncodedWord: Copy {
    /// Its bits.
    const BITS: u32;
    /// The key stored as this word onto its ordered word through `view`
    /// ([`View::encode`]), or (`decode`) back, in operations of its width.
    fn through(self, view: View, decode: bool) -> Self;
    /// From the low bits of `p`.
    fn from_u64(p: u64) -> Self;
    /// Zero-extended.
    fn to_u64(self) -> u64;
}
impl EncodedWord for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn through(self, view: View, decode: bool) -> Self {
        if decode { view.decode32(self) } else { view.encode32(self) }
    }
    #[inline(always)]
    fn from_u64(p: u64) -> Self {
        p as u32
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self as u64
    }
}
impl EncodedWord for u64 {
    const BITS: u32 = 64;
    #[inline(always)]
    fn through(self, view: View, decode: bool) -> Self {
        if decode { view.decode(self) } else { view.encode(self) }
    }
    #[inline(always)]
    fn from_u64(p: u64) -> Self {
        p
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self
    }
}

/// Reads a field of `bytes` (1, 2, 4 or 8) at `p`, zero-extended.
///
/// # Safety
/// `p` addresses `bytes` readable bytes, aligned to `bytes`.
#[inline(always)]
unsafe fn read_field(p: *const u8, bytes: u32) -> u64 {
    // SAFETY: the caller's guarantee.
    unsafe {
        match bytes {
            1 => *p as u64,
            2 => *(p as *const u16) as u64,
            4 => *(p as *const u32) as u64,
            _ => *(p as *const u64),
        }
    }
}

/// Writes the low `bytes` of `v` as a field at `p`.
///
/// # Safety
/// `p` addresses `bytes` writable bytes, aligned to `bytes`.
#[inline(always)]
unsafe fn write_field(p: *mut u8, bytes: u32, v: u64) {
    // SAFETY: the caller's guarantee.
    unsafe {
        match bytes {
            1 => *p = v as u8,
            2 => *(p as *mut u16) = v as u16,
            4 => *(p as *mut u32) = v as u32,
            _ => *(p as *mut u64) = v,
        }
    }
}

/// Keys stored as fields (tuples, byte strings, 16-bit keys; `fields` says
/// where, see [`Fields`]) encoded into their ordered words at `words`
/// (inverted for `mode::DESCENDING`), or with `mode::DECODE` decoded back
/// into `raw` (only the fields' bytes are written).
///
/// # Safety
/// `raw` holds `n` keys of `fields.stride()` bytes with each field aligned
/// to its size, `words` holds `n` words.
#[inline(always)]
pub unsafe fn encode_keys<W: EncodedWord>(raw: *mut u8, words: *mut W, n: u64, fields: Fields, mode: u32) {
    let decode = mode & crate::ordered::mode::DECODE != 0;
    let flip = if mode & crate::ordered::mode::DESCENDING != 0 { u64::MAX } else { 0 };
    let stride = fields.stride() as usize;
    let mut i = global_thread();
    while i < n as usize {
        // SAFETY: i < n, and each field lies inside key i.
        unsafe {
            let key = raw.add(i * stride);
            if decode {
                fields.unpack(W::BITS, (*words.add(i)).to_u64() ^ flip, |f, v| {
                    let (at, bytes, _) = fields.field(f);
                    write_field(key.add(at as usize), bytes, v);
                });
            } else {
                let p = fields.pack(W::BITS, |f| {
                    let (at, bytes, _) = fields.field(f);
                    read_field(key.add(at as usize), bytes)
                });
                *words.add(i) = W::from_u64(p ^ flip);
            }
        }
        i += grid_threads();
    }
}
