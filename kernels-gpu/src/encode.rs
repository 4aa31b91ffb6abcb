//! Keys onto their ordered words and back, element-wise: primitive keys
//! mapped in place (`map_keys`), keys stored as fields
//! (tuples, byte strings, 16-bit keys) encoded into words and decoded back
//! (`encode_keys`). The entry points are `checks`'; the bodies build under
//! the emulator too, so that their tests run on a CPU.

use crate::arch::{global_thread, grid_threads};
use crate::ordered::{Fields, Window, low_mask, map32, map64};

/// Maps every key onto its ordered pattern under `mode`, or back
/// (`EncodedWord::map`: `ordered::map32` or `map64`).
///
/// # Safety
/// `keys` holds `n` keys.
#[inline(always)]
pub unsafe fn map_keys<W: EncodedWord>(keys: *mut W, n: u64, mode: u32) {
    // SAFETY: i < n.
    each_key(n, |i| unsafe { *keys.add(i) = (*keys.add(i)).map(mode) });
}

/// An ordered word, `u32` or `u64`: what keys map onto and their fields
/// encode into.
pub trait EncodedWord: Copy {
    /// Its bits.
    const BITS: u32;
    /// This key onto its ordered pattern under `mode`, or back
    /// (`ordered::map32`, `map64`).
    fn map(self, mode: u32) -> Self;
    /// From the low bits of `p`.
    fn from_u64(p: u64) -> Self;
    /// Zero-extended.
    fn to_u64(self) -> u64;
}
impl EncodedWord for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn map(self, mode: u32) -> Self {
        map32(self, mode)
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
    fn map(self, mode: u32) -> Self {
        map64(self, mode)
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
/// into `raw` (only the fields' bytes are written). Where one aligned
/// access holds a key's fields (`window`, from [`Fields::window`]:
/// `(u32, u32)`, `[u8; 8]`, each word of `[u8; 16]`, 16-bit keys) each key
/// is read, or written, in one access and its fields taken by shifts;
/// otherwise field by field.
///
/// # Safety
/// `raw` holds `n` keys of `fields.stride()` bytes with each field aligned
/// to its size, `words` holds `n` words; `window` is `fields.window` of
/// `raw`'s alignment, or [`Window::NONE`].
#[inline(always)]
pub unsafe fn encode_keys<W: EncodedWord>(raw: *mut u8, words: *mut W, n: u64, fields: Fields, window: Window, mode: u32) {
    let decode = mode & crate::ordered::mode::DECODE != 0;
    let flip = if mode & crate::ordered::mode::DESCENDING != 0 { u64::MAX } else { 0 };
    let stride = fields.stride() as usize;
    // The key's bits in field `f` of a window of bytes at `off`.
    let shift = move |f: usize, off: u32| 8 * (fields.field(f).0 - off);
    // The launch's choice made once, each loop over the keys by itself.
    match (window.get(), decode) {
        // SAFETY (this loop and the next): i < n; the window lies inside
        // key i, aligned to its bytes (`Fields::window`).
        (Some((off, bytes)), false) => each_key(n, |i| unsafe {
            let bits = read_field(raw.add(i * stride + off as usize), bytes);
            let p = fields.pack(W::BITS, |f| (bits >> shift(f, off)) & low_mask(fields.field(f).1));
            *words.add(i) = W::from_u64(p ^ flip);
        }),
        // SAFETY: as above.
        (Some((off, bytes)), true) => each_key(n, |i| unsafe {
            // The window's bytes that no field covers keep theirs.
            let (mut bits, mut covered) = (0, 0);
            fields.unpack(W::BITS, (*words.add(i)).to_u64() ^ flip, |f, v| {
                bits |= v << shift(f, off);
                covered |= low_mask(fields.field(f).1) << shift(f, off);
            });
            let at = raw.add(i * stride + off as usize);
            if covered != low_mask(bytes) {
                bits |= read_field(at, bytes) & !covered;
            }
            write_field(at, bytes, bits);
        }),
        // SAFETY (this loop and the next): i < n; each field lies inside key i.
        (None, false) => each_key(n, |i| unsafe {
            let key = raw.add(i * stride);
            let p = fields.pack(W::BITS, |f| {
                let (at, bytes, _) = fields.field(f);
                read_field(key.add(at as usize), bytes)
            });
            *words.add(i) = W::from_u64(p ^ flip);
        }),
        // SAFETY: as above.
        (None, true) => each_key(n, |i| unsafe {
            let key = raw.add(i * stride);
            fields.unpack(W::BITS, (*words.add(i)).to_u64() ^ flip, |f, v| {
                let (at, bytes, _) = fields.field(f);
                write_field(key.add(at as usize), bytes, v);
            });
        }),
    }
}

/// Runs `f(i)` for every `i < n` this thread covers (grid-stride).
#[inline(always)]
fn each_key(n: u64, mut f: impl FnMut(usize)) {
    let mut i = global_thread();
    while i < n as usize {
        f(i);
        i += grid_threads();
    }
}
