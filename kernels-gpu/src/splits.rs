//! Merge-path splits made consistent for orders that may not be strict
//! weak orders (a build for a user's key type, `warpsort_custom`).
//!
//! A merge pass cuts its outputs into windows; window `w` starts at
//! `parts[w]` in A, each split found by its own merge-path search. Under a
//! strict weak order the splits of a pair's windows rise by at most a window
//! each, so the windows take A and B piece by piece, each item once. Under
//! another order two searches may disagree: window `w + 1` may start before
//! window `w` in A, or more than a window after it, and items would be
//! merged twice or not at all. [`check`] finds such a pass (every window
//! against the next, in parallel); [`repair`], only then, walks each pair's
//! windows in order and clamps every split into what the one before allows.
//! Then every pass is a permutation, whatever the order says.

use crate::arch::{global_thread, grid_threads};
use crate::merge_path::Pass;

/// Where the window whose first output is `o` may start in A, as `(lo,
/// hi)`: the merge-path bounds of its diagonal.
#[inline(always)]
fn bounds(pass: &Pass, o: usize) -> (usize, usize) {
    let (a, a_end, b_end) = pass.pair(o);
    let (la, lb, d) = (a_end - a, b_end - a_end, o - a);
    (a + d.saturating_sub(lb), a + d.min(la))
}

/// Sets `*flag` to 1 if some window's split does not follow from the one
/// before it (the next starts before it in A, or more than a window after).
///
/// # Safety
/// `parts` holds one split per window of the pass, `flag` one word.
#[inline(always)]
pub unsafe fn check(n: u64, run: u64, split: u64, window: u64, parts: *const u64, flag: *mut u32) {
    let pass = Pass { n: n as usize, run: run as usize, split: split as usize, pairs: core::ptr::null() };
    let w_len = window as usize;
    let windows = pass.n.div_ceil(w_len);
    let mut w = global_thread();
    while w + 1 < windows {
        let o = w * w_len;
        let next = o + w_len;
        // The next window opens the next pair: nothing to chain.
        if pass.pair(next).0 == pass.pair(o).0 {
            // SAFETY: w + 1 < windows.
            let (p0, p1) = unsafe { (*parts.add(w) as usize, *parts.add(w + 1) as usize) };
            if p1 < p0 || p1 - p0 > w_len {
                // SAFETY: one word; every writer writes the same value.
                unsafe { core::ptr::write_volatile(flag, 1) };
            }
        }
        w += grid_threads();
    }
}

/// Clamps the splits of every pair, window by window, into the range the
/// split before allows (and the window's own diagonal allows): one thread
/// a pair, and only when [`check`] flagged the pass (then it clears the
/// flag for the next one).
///
/// # Safety
/// As for [`check`]; launched after it, on the same stream.
#[inline(always)]
pub unsafe fn repair(n: u64, run: u64, split: u64, window: u64, parts: *mut u64, flag: *mut u32) {
    // SAFETY: one word, written by `check` before this launch.
    if unsafe { core::ptr::read_volatile(flag) } == 0 {
        return;
    }
    let pass = Pass { n: n as usize, run: run as usize, split: split as usize, pairs: core::ptr::null() };
    let w_len = window as usize;
    let windows = pass.n.div_ceil(w_len);
    let pair_len = 2 * pass.run;
    let pairs = pass.n.div_ceil(pair_len);
    let per_pair = pair_len.div_ceil(w_len);
    let mut p = global_thread();
    while p < pairs {
        let first = p * pair_len / w_len;
        let last = (first + per_pair).min(windows);
        // SAFETY: first < windows (the pair has outputs).
        let mut q = unsafe { *parts.add(first) } as usize;
        for w in first + 1..last {
            let (lo, hi) = bounds(&pass, w * w_len);
            let (lo, hi) = (lo.max(q), hi.min(q + w_len));
            // SAFETY: w < windows.
            let p_w = unsafe { *parts.add(w) } as usize;
            q = p_w.clamp(lo, hi);
            // SAFETY: as above; this thread owns its pair's windows.
            unsafe { *parts.add(w) = q as u64 };
        }
        p += grid_threads();
    }
}

/// Flags a merge pass whose splits do not chain ([`check`]).
#[unsafe(export_name = crate::kernel_name!(split_check))]
pub unsafe extern "ptx-kernel" fn split_check(
    n: u64,
    run: u64,
    split: u64,
    window: u64,
    parts: *mut u64,
    flag: *mut u32,
) {
    // SAFETY: the host passes the pass's splits and a zeroed flag.
    unsafe { check(n, run, split, window, parts, flag) }
}

/// Clamps a flagged merge pass's splits into a chain ([`repair`]).
#[unsafe(export_name = crate::kernel_name!(split_repair))]
pub unsafe extern "ptx-kernel" fn split_repair(
    n: u64,
    run: u64,
    split: u64,
    window: u64,
    parts: *mut u64,
    flag: *mut u32,
) {
    // SAFETY: as for split_check, after it.
    unsafe { repair(n, run, split, window, parts, flag) }
}
