//! Moving a warp's or block's tile between global memory and registers.

use crate::item::{Items, Key, Pair, Word};

/// Loads `N` consecutive items per lane (lane-blocked: element `t * N + r` of
/// the tile into register `r` of thread `t`), pads at and past `len`.
///
/// # Safety
/// `items` holds at least `len` items.
#[inline(always)]
pub unsafe fn load_blocked<K: Key, V: Word, const N: usize>(
    items: &Items<K, V>,
    thread: usize,
    len: usize,
) -> [Pair<K, V>; N] {
    let mut x = [Pair::pad(); N];
    let base = thread * N;
    if base + N <= len {
        // SAFETY: base + N <= len.
        let (k, v) = unsafe { (<K as Key>::read_run::<N>(items.keys.add(base)), V::read_run::<N>(items.vals.add(base))) };
        for (r, slot) in x.iter_mut().enumerate() {
            *slot = Pair { k: k[r], v: v[r] };
        }
    } else {
        for (r, slot) in x.iter_mut().enumerate() {
            // SAFETY: reads only below len.
            *slot = unsafe { items.get_or_pad(base + r, len) };
        }
    }
    x
}

/// Stores what [`load_blocked`] loaded, dropping the pads.
///
/// # Safety
/// `items` holds at least `len` items and this thread owns its `N` slots.
#[inline(always)]
pub unsafe fn store_blocked<K: Key, V: Word, const N: usize>(
    items: &Items<K, V>,
    thread: usize,
    len: usize,
    x: &[Pair<K, V>; N],
) {
    let base = thread * N;
    if base + N <= len {
        let k: [K; N] = core::array::from_fn(|r| x[r].k);
        let v: [V; N] = core::array::from_fn(|r| x[r].v);
        // SAFETY: base + N <= len; this thread owns the run.
        unsafe {
            <K as Key>::write_run(items.keys.add(base), &k);
            V::write_run(items.vals.add(base), &v);
        }
        return;
    }
    for (r, item) in x.iter().enumerate() {
        if base + r < len {
            // SAFETY: below len, owned by this thread.
            unsafe { items.set(base + r, *item) };
        }
    }
}
