//! Element-wise kernels around the sorts: the entry points of mapping keys
//! in place onto their ordered words and back through their
//! `ordered::View`, of encoding keys stored as fields (e.g. tuples with
//! padding, 16-bit keys) into ordered words (`encode`), and
//! verifying a result on the GPU (sortedness by warp vote, a multiset
//! fingerprint by warp reduction).

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::arch::{global_thread, grid_threads, lane_id};
#[cfg(target_arch = "nvptx64")]
use crate::encode::{encode_keys, map_keys};
#[cfg(target_arch = "nvptx64")]
use crate::ordered::{Fields, View};
use crate::ordered::{map32, map64, mix64};
use crate::warp;

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

#[cfg(target_arch = "nvptx64")]
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
#[cfg(target_arch = "nvptx64")]
crate::for_items!(entries);

/// Maps 32-bit keys in place onto their ordered words through the view
/// `(perm, flip, floats)` (`ordered::View`), or (`decode` non-zero) back.
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = concat!(crate::kernel_name!(map_keys), "_u32"))]
pub unsafe extern "ptx-kernel" fn map_keys_u32(keys: *mut u32, n: u64, perm: u64, flip: u64, floats: u32, decode: u32) {
    // SAFETY: the host passes `n` keys.
    unsafe { map_keys(keys, n, View { perm, flip, floats }, decode != 0) }
}

/// Maps 64-bit keys in place onto their ordered words, or back (as
/// `map_keys_u32`).
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = concat!(crate::kernel_name!(map_keys), "_u64"))]
pub unsafe extern "ptx-kernel" fn map_keys_u64(keys: *mut u64, n: u64, perm: u64, flip: u64, floats: u32, decode: u32) {
    // SAFETY: the host passes `n` keys.
    unsafe { map_keys(keys, n, View { perm, flip, floats }, decode != 0) }
}

/// Encodes keys stored as fields into 32-bit ordered words, or decodes them.
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = concat!(crate::kernel_name!(encode_keys), "_u32"))]
pub unsafe extern "ptx-kernel" fn encode_keys_u32(raw: *mut u8, words: *mut u32, n: u64, fields: u64, mode: u32) {
    // SAFETY: the host passes `n` keys laid out as `fields` says and `n` words.
    unsafe { encode_keys(raw, words, n, Fields(fields), mode) }
}

/// Encodes keys stored as fields into 64-bit ordered words, or decodes them.
#[cfg(target_arch = "nvptx64")]
#[unsafe(export_name = concat!(crate::kernel_name!(encode_keys), "_u64"))]
pub unsafe extern "ptx-kernel" fn encode_keys_u64(raw: *mut u8, words: *mut u64, n: u64, fields: u64, mode: u32) {
    // SAFETY: the host passes `n` keys laid out as `fields` says and `n` words.
    unsafe { encode_keys(raw, words, n, Fields(fields), mode) }
}
