//! Element-wise kernels of argsort and the stable sorts: the index sequence
//! `0, 1, …, n - 1` (the payload whose sorted order is the permutation), each
//! item's position in its row (segmented argsort of rows), and the gather
//! that applies a permutation to a payload array.

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

/// Writes `out[i] = i % row` for every `i < n`: each item's position in its
/// row (the argsort of equal rows, `torch.sort(x, dim=-1)`'s indices).
///
/// # Safety
/// `out` holds `n` values; `row > 0`.
#[inline(always)]
pub unsafe fn iota_rows(out: *mut u32, n: u64, row: u64) {
    let mut i = global_thread();
    while i < n as usize {
        // SAFETY: i < n; the position in a row fits the row's u32 length.
        unsafe { *out.add(i) = (i % row as usize) as u32 };
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
#[unsafe(export_name = concat!(crate::kernel_name!(iota), "_u32"))]
pub unsafe extern "ptx-kernel" fn iota_u32(out: *mut u32, n: u64) {
    // SAFETY: the host passes `n` slots.
    unsafe { iota(out, n, |i| i as u32) }
}

/// `out[i] = i` as `u64`.
#[unsafe(export_name = concat!(crate::kernel_name!(iota), "_u64"))]
pub unsafe extern "ptx-kernel" fn iota_u64(out: *mut u64, n: u64) {
    // SAFETY: the host passes `n` slots.
    unsafe { iota(out, n, |i| i as u64) }
}

/// `out[i] = i % row` as `u32` (see [`iota_rows`]).
#[unsafe(export_name = concat!(crate::kernel_name!(iota_rows), "_u32"))]
pub unsafe extern "ptx-kernel" fn iota_rows_u32(out: *mut u32, n: u64, row: u64) {
    // SAFETY: the host passes `n` slots and rows of at most u32::MAX items.
    unsafe { iota_rows(out, n, row) }
}

/// `dst[i] = src[idx[i]]` for 32-bit values.
#[unsafe(export_name = concat!(crate::kernel_name!(gather), "_u32"))]
pub unsafe extern "ptx-kernel" fn gather_u32(src: *mut u32, idx: *mut u32, dst: *mut u32, n: u64) {
    // SAFETY: the host passes a permutation of `0..n` and `n`-value arrays.
    unsafe { gather(src, idx, dst, n) }
}

/// `dst[i] = src[idx[i]]` for 64-bit values.
#[unsafe(export_name = concat!(crate::kernel_name!(gather), "_u64"))]
pub unsafe extern "ptx-kernel" fn gather_u64(src: *mut u64, idx: *mut u32, dst: *mut u64, n: u64) {
    // SAFETY: the host passes a permutation of `0..n` and `n`-value arrays.
    unsafe { gather(src, idx, dst, n) }
}

/// `dst[i] = src[idx[i]]` for records of `units` units of `T` (a thread
/// per unit, so that a warp reads whole records).
///
/// # Safety
/// `src` holds records up to the largest `idx[i]`, `idx` `n` positions,
/// `dst` `n` records not overlapping `src`.
#[inline(always)]
unsafe fn gather_units<T: Copy>(src: *const T, idx: *const u32, dst: *mut T, n: u64, units: u32) {
    let (total, units) = (n as usize * units as usize, units as usize);
    let mut t = global_thread();
    while t < total {
        let (i, u) = (t / units, t % units);
        // SAFETY: t < n * units; the caller bounds the indices.
        unsafe { *dst.add(t) = *src.add(*idx.add(i) as usize * units + u) };
        t += grid_threads();
    }
}

/// `dst[i] = src[idx[i]]` for records of `units` units of `unit` bytes (4,
/// 2 or 1: the widest that divides the record): keys wider than a word,
/// table columns, payloads of any size.
#[unsafe(export_name = crate::kernel_name!(gather_records))]
pub unsafe extern "ptx-kernel" fn gather_records(src: *mut u8, idx: *mut u32, dst: *mut u8, n: u64, units: u32, unit: u32) {
    // SAFETY: the host passes `n` positions within `src` and `n` records at `dst`.
    unsafe {
        match unit {
            4 => gather_units(src as *const u32, idx, dst as *mut u32, n, units),
            2 => gather_units(src as *const u16, idx, dst as *mut u16, n, units),
            _ => gather_units(src as *const u8, idx, dst, n, units),
        }
    }
}
