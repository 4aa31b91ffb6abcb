//! Element-wise kernels of argsort and the stable sorts: the index sequence
//! `0, 1, …, n - 1` (the payload whose sorted order is the permutation), and
//! the gather that applies a permutation to a payload array.

use crate::arch::{global_thread, grid_threads};

/// Writes `out[i] = i` for every `i < n` (as `T`).
///
/// # Safety
/// `out` holds `n` values.
#[inline(always)]
pub unsafe fn iota<T: Copy>(out: *mut T, n: u64, from: impl Fn(usize) -> T) {
    let mut i = global_thread();
    while i < n as usize {
        // SAFETY: i < n.
        unsafe { *out.add(i) = from(i) };
        i += grid_threads();
    }
}

/// Writes `dst[i] = src[idx[i]]` for every `i < n`.
///
/// # Safety
/// `idx` and `dst` hold `n` values, every `idx[i]` is below `src`'s length,
/// and `dst` does not overlap `src`.
#[inline(always)]
pub unsafe fn gather<T: Copy>(src: *const T, idx: *const u32, dst: *mut T, n: u64) {
    let mut i = global_thread();
    while i < n as usize {
        // SAFETY: i < n; the caller bounds the indices.
        unsafe { *dst.add(i) = *src.add(*idx.add(i) as usize) };
        i += grid_threads();
    }
}

/// `out[i] = i` as `u32` (the host launches it only for `n <= 2^32`).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn iota_u32(out: *mut u32, n: u64) {
    // SAFETY: the host passes `n` slots.
    unsafe { iota(out, n, |i| i as u32) }
}

/// `out[i] = i` as `u64`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn iota_u64(out: *mut u64, n: u64) {
    // SAFETY: the host passes `n` slots.
    unsafe { iota(out, n, |i| i as u64) }
}

/// `dst[i] = src[idx[i]]` for 32-bit values.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gather_u32(src: *mut u32, idx: *mut u32, dst: *mut u32, n: u64) {
    // SAFETY: the host passes a permutation of `0..n` and `n`-value arrays.
    unsafe { gather(src, idx, dst, n) }
}

/// `dst[i] = src[idx[i]]` for 64-bit values.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gather_u64(src: *mut u64, idx: *mut u32, dst: *mut u64, n: u64) {
    // SAFETY: the host passes a permutation of `0..n` and `n`-value arrays.
    unsafe { gather(src, idx, dst, n) }
}
