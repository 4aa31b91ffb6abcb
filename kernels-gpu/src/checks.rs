//! Element-wise kernels around the sorts: mapping keys onto their ordered bit
//! patterns and back (keys stored as fields, e.g. tuples and 16-bit keys, encoded into
//! ordered words), and verifying a result on the GPU (sortedness by warp
//! vote, a multiset fingerprint by warp reduction).

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::arch::{global_thread, grid_threads, lane_id};
use crate::ordered::{Fields, map32, map64, mix64};
use crate::warp;

/// Applies `ordered::map32` with `mode` to every key.
///
/// # Safety
/// `keys` holds `n` keys.
#[inline(always)]
pub unsafe fn map_keys32(keys: *mut u32, n: u64, mode: u32) {
    let mut i = global_thread();
    while i < n as usize {
        // SAFETY: i < n.
        unsafe { *keys.add(i) = map32(*keys.add(i), mode) };
        i += grid_threads();
    }
}

/// Applies `ordered::map64` with `mode` to every key.
///
/// # Safety
/// `keys` holds `n` keys.
#[inline(always)]
pub unsafe fn map_keys64(keys: *mut u64, n: u64, mode: u32) {
    let mut i = global_thread();
    while i < n as usize {
        // SAFETY: i < n.
        unsafe { *keys.add(i) = map64(*keys.add(i), mode) };
        i += grid_threads();
    }
}

/// A word a key's fields encode into: `u32` or `u64`.
pub trait EncodedWord: Copy {
    /// Its bits.
    const BITS: u32;
    /// From the low bits of `p`.
    fn from_u64(p: u64) -> Self;
    /// Zero-extended.
    fn to_u64(self) -> u64;
}
impl EncodedWord for u32 {
    const BITS: u32 = 32;
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


/// A key or payload widened for fingerprinting (`()` as 0).
pub trait Bits64: Copy {
    /// The value as 64 bits.
    fn bits64(self) -> u64;
    /// Its ordered pattern under `mode` (`ordered::map32`/`map64`), widened.
    fn ordered(self, mode: u32) -> u64;
}
impl Bits64 for () {
    #[inline(always)]
    fn bits64(self) -> u64 {
        0
    }
    #[inline(always)]
    fn ordered(self, _: u32) -> u64 {
        0
    }
}
impl Bits64 for u32 {
    #[inline(always)]
    fn bits64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn ordered(self, mode: u32) -> u64 {
        map32(self, mode) as u64
    }
}
impl Bits64 for u64 {
    #[inline(always)]
    fn bits64(self) -> u64 {
        self
    }
    #[inline(always)]
    fn ordered(self, mode: u32) -> u64 {
        map64(self, mode)
    }
}

/// Adds to `*descents` the number of `i` with `key(i) > key(i + 1)` (keys
/// compared by their ordered patterns under `mode`) and to
/// `*sum` the sum of `mix64(key(i) ^ mix64(val(i)))`. Sorted, with the same
/// fingerprint as the input, means a correct sort.
///
/// # Safety
/// `keys` and `vals` hold `n` items; the counters are valid and aligned.
#[inline(always)]
pub unsafe fn verify<K: Bits64, V: Bits64>(
    keys: *const K,
    vals: *const V,
    n: u64,
    mode: u32,
    descents: *mut u32,
    sum: *mut u64,
) {
    let n = n as usize;
    let mut base = global_thread() - lane_id() as usize;
    let mut bad = 0u32;
    let mut acc = 0u64;
    // Warp-uniform loop so that the votes see the whole warp.
    while base < n {
        let i = base + lane_id() as usize;
        let mut descent = false;
        if i < n {
            // SAFETY: i < n (and i + 1 < n for the neighbour).
            let (k, v) = unsafe { ((*keys.add(i)).bits64(), (*vals.add(i)).bits64()) };
            acc = acc.wrapping_add(mix64(k ^ mix64(v)));
            if i + 1 < n {
                // SAFETY: i + 1 < n.
                let (a, b) = unsafe { (*keys.add(i), *keys.add(i + 1)) };
                descent = a.ordered(mode) > b.ordered(mode);
            }
        }
        bad += warp::popc(descent);
        base += grid_threads();
    }
    let acc = warp::reduce_sum_u64(acc);
    if lane_id() == 0 {
        // SAFETY: the host passes valid, aligned counters.
        unsafe {
            AtomicU32::from_ptr(descents).fetch_add(bad, Relaxed);
            AtomicU64::from_ptr(sum).fetch_add(acc, Relaxed);
        }
    }
}

macro_rules! entries {
    ($K:ty, $V:ty, $sfx:ident) => {
        #[doc = concat!("Entry points for `", stringify!($K), "` keys and `", stringify!($V), "` payloads.")]
        pub mod $sfx {
            use super::*;
            /// Sortedness and fingerprint of a key(-value) array.
            #[unsafe(export_name = concat!(crate::kernel_name!(verify), "_", stringify!($sfx)))]
            pub unsafe extern "ptx-kernel" fn k(
                keys: *mut <$K as $crate::item::Key>::Mem,
                vals: *mut $V,
                n: u64,
                mode: u32,
                descents: *mut u32,
                sum: *mut u64,
            ) {
                // SAFETY: the host passes `n` items and valid counters.
                unsafe { verify(keys, vals, n, mode, descents, sum) }
            }
        }
    };
}
crate::for_items!(entries);

/// Maps 32-bit keys onto/from their ordered patterns.
#[unsafe(export_name = concat!(crate::kernel_name!(map_keys), "_u32"))]
pub unsafe extern "ptx-kernel" fn map_keys_u32(keys: *mut u32, n: u64, mode: u32) {
    // SAFETY: the host passes `n` keys.
    unsafe { map_keys32(keys, n, mode) }
}

/// Maps 64-bit keys onto/from their ordered patterns.
#[unsafe(export_name = concat!(crate::kernel_name!(map_keys), "_u64"))]
pub unsafe extern "ptx-kernel" fn map_keys_u64(keys: *mut u64, n: u64, mode: u32) {
    // SAFETY: the host passes `n` keys.
    unsafe { map_keys64(keys, n, mode) }
}

/// Encodes keys stored as fields into 32-bit ordered words, or decodes them.
#[unsafe(export_name = concat!(crate::kernel_name!(encode_keys), "_u32"))]
pub unsafe extern "ptx-kernel" fn encode_keys_u32(raw: *mut u8, words: *mut u32, n: u64, fields: u64, mode: u32) {
    // SAFETY: the host passes `n` keys laid out as `fields` says and `n` words.
    unsafe { encode_keys(raw, words, n, Fields(fields), mode) }
}

/// Encodes keys stored as fields into 64-bit ordered words, or decodes them.
#[unsafe(export_name = concat!(crate::kernel_name!(encode_keys), "_u64"))]
pub unsafe extern "ptx-kernel" fn encode_keys_u64(raw: *mut u8, words: *mut u64, n: u64, fields: u64, mode: u32) {
    // SAFETY: the host passes `n` keys laid out as `fields` says and `n` words.
    unsafe { encode_keys(raw, words, n, Fields(fields), mode) }
}
