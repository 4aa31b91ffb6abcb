//! CPU references: what every kernel must compute, written the obvious way.
//! Long sorts run on every core (rayon's stable parallel sort: the same
//! result), so that a GPU test of 2^28 keys waits seconds, not minutes, for
//! its reference.

use std::cmp::Ordering;

use rayon::slice::ParallelSliceMut;
use warpsort::{Order, SortKey};

/// Slices from this length sort on every core.
const PARALLEL_FROM: usize = 1 << 16;

/// Stable sort of `v` by `cmp`, on every core when `v` is long.
fn stable_sort_by<T: Send>(v: &mut [T], cmp: impl Fn(&T, &T) -> Ordering + Sync) {
    if v.len() >= PARALLEL_FROM { v.par_sort_by(cmp) } else { v.sort_by(cmp) }
}

/// The reference sort (stable, so key-value results compare exactly after
/// grouping equal keys).
///
/// ```
/// let mut v = vec![f32::NAN, -0.0, 0.0, f32::NEG_INFINITY];
/// warpsort_testkit::cpu::sort(&mut v, warpsort::Order::Ascending);
/// assert_eq!(v[0], f32::NEG_INFINITY);
/// assert!(v[3].is_nan());
/// ```
pub fn sort<K: SortKey>(keys: &mut [K], order: Order) {
    match order {
        Order::Ascending => stable_sort_by(keys, |a, b| a.key_cmp(b)),
        Order::Descending => stable_sort_by(keys, |a, b| b.key_cmp(a)),
    }
}

/// Sorts each `seg_len` chunk independently.
pub fn sort_segments<K: SortKey>(keys: &mut [K], seg_len: usize, order: Order) {
    for chunk in keys.chunks_mut(seg_len.max(1)) {
        sort(chunk, order);
    }
}

/// Sorts each segment `offsets[s]..offsets[s + 1]` independently (offsets
/// as [`warpsort::Gpu::sort_segments_by_offsets`] takes them).
///
/// ```
/// let mut v = vec![3u32, 1, 2, 9, 8];
/// warpsort_testkit::cpu::sort_by_offsets(&mut v, &[0, 3, 3, 5], warpsort::Order::Ascending);
/// assert_eq!(v, [1, 2, 3, 8, 9]);
/// ```
pub fn sort_by_offsets<K: SortKey>(keys: &mut [K], offsets: &[u32], order: Order) {
    for w in offsets.windows(2) {
        sort(&mut keys[w[0] as usize..w[1] as usize], order);
    }
}

/// Reference key-value sort (stable).
pub fn sort_pairs<K: SortKey, V: Copy + Send>(keys: &mut [K], vals: &mut [V], order: Order) {
    let mut pairs: Vec<(K, V)> = keys.iter().copied().zip(vals.iter().copied()).collect();
    match order {
        Order::Ascending => stable_sort_by(&mut pairs, |a, b| a.0.key_cmp(&b.0)),
        Order::Descending => stable_sort_by(&mut pairs, |a, b| b.0.key_cmp(&a.0)),
    }
    for (i, (k, v)) in pairs.into_iter().enumerate() {
        keys[i] = k;
        vals[i] = v;
    }
}

/// Reference argsort (stable): the positions of `keys` in sorted order,
/// equal keys in input order — what [`Gpu::argsort`](warpsort::Gpu::argsort)
/// with `stable` returns exactly.
///
/// ```
/// use warpsort::Order;
/// use warpsort_testkit::cpu;
/// let keys = [2.0f32, -1.0, 2.0, 0.0];
/// let p = cpu::argsort(&keys, Order::Descending);
/// assert_eq!(p, [0, 2, 3, 1]);
/// assert!(cpu::is_argsort_of(&keys, &[2, 0, 3, 1], Order::Descending));
/// assert!(!cpu::is_argsort_of(&keys, &[2, 0, 1, 3], Order::Descending));
/// ```
pub fn argsort<K: SortKey>(keys: &[K], order: Order) -> Vec<usize> {
    let mut p: Vec<usize> = (0..keys.len()).collect();
    match order {
        Order::Ascending => stable_sort_by(&mut p, |&a, &b| keys[a].key_cmp(&keys[b])),
        Order::Descending => stable_sort_by(&mut p, |&a, &b| keys[b].key_cmp(&keys[a])),
    }
    p
}

/// Whether `p` is a permutation of `0..keys.len()` that sorts `keys` in
/// `order` (any order among equal keys: what an unstable argsort must return).
pub fn is_argsort_of<K: SortKey>(keys: &[K], p: &[usize], order: Order) -> bool {
    let mut seen = vec![false; keys.len()];
    if p.len() != keys.len() || p.iter().any(|&i| i >= keys.len() || std::mem::replace(&mut seen[i], true)) {
        return false;
    }
    p.windows(2).all(|w| match order {
        Order::Ascending => keys[w[0]].key_cmp(&keys[w[1]]).is_le(),
        Order::Descending => keys[w[0]].key_cmp(&keys[w[1]]).is_ge(),
    })
}

/// Whether a key-value result is a correct (not necessarily stable) sort of
/// the input: keys equal to the reference's, and each (key, value) pair of
/// the output a pair of the input, each used once.
pub fn is_pair_sort_of<K: SortKey, V: Copy + Ord + Send>(
    in_keys: &[K],
    in_vals: &[V],
    out_keys: &[K],
    out_vals: &[V],
    order: Order,
) -> bool {
    let mut ref_keys = in_keys.to_vec();
    sort(&mut ref_keys, order);
    if ref_keys.iter().zip(out_keys).any(|(a, b)| a.key_cmp(b).is_ne()) || out_keys.len() != in_keys.len() {
        return false;
    }
    // Each side's (key bits, value) pairs in one order: equal multisets.
    let pairs = |k: &[K], v: &[V]| {
        let mut p: Vec<(K::Bits, V)> = k.iter().map(|k| k.to_bits()).zip(v.iter().copied()).collect();
        p.par_sort_unstable();
        p
    };
    pairs(in_keys, in_vals) == pairs(out_keys, out_vals)
}

/// The warp shuffles, as the probe kernels apply them to each warp of `x`.
pub mod warp {
    /// `shfl.sync.idx` from `src`.
    pub fn shfl_idx<T: Copy>(x: &[T], src: u32) -> Vec<T> {
        x.chunks(32).flat_map(|w| (0..w.len()).map(move |_| w[src as usize % 32])).collect()
    }
    /// `shfl.sync.up`: lanes below `d` keep their own.
    pub fn shfl_up<T: Copy>(x: &[T], d: u32) -> Vec<T> {
        x.chunks(32)
            .flat_map(|w| (0..w.len()).map(move |l| if l >= d as usize { w[l - d as usize] } else { w[l] }))
            .collect()
    }
    /// `shfl.sync.down`: lanes past `31 - d` keep their own.
    pub fn shfl_down<T: Copy>(x: &[T], d: u32) -> Vec<T> {
        x.chunks(32)
            .flat_map(|w| (0..w.len()).map(move |l| if l + (d as usize) < 32 { w[l + d as usize] } else { w[l] }))
            .collect()
    }
    /// `shfl.sync.bfly` with `mask`.
    pub fn shfl_bfly<T: Copy>(x: &[T], mask: u32) -> Vec<T> {
        x.chunks(32).flat_map(|w| (0..w.len()).map(move |l| w[l ^ mask as usize])).collect()
    }
}

/// The segments `[start, end)` of `n` items cut into rows of `len` (the
/// last may be shorter).
pub fn rows(n: usize, len: usize) -> Vec<std::ops::Range<usize>> {
    (0..n).step_by(len.max(1)).map(|s| s..(s + len).min(n)).collect()
}

/// The segments `[offsets[s], offsets[s + 1])`.
pub fn by_offsets(offsets: &[u32]) -> Vec<std::ops::Range<usize>> {
    offsets.windows(2).map(|w| w[0] as usize..w[1] as usize).collect()
}

/// Reference stable key-value sort of each segment.
///
/// ```
/// use warpsort::Order;
/// use warpsort_testkit::cpu;
/// let (mut k, mut v) = (vec![2u32, 1, 2, 1, 0], vec![0u32, 1, 2, 3, 4]);
/// cpu::sort_pairs_segments(&mut k, &mut v, &cpu::rows(5, 3), Order::Descending);
/// assert_eq!((k, v), (vec![2, 2, 1, 1, 0], vec![0, 2, 1, 3, 4]));
/// ```
pub fn sort_pairs_segments<K: SortKey, V: Copy + Send>(
    keys: &mut [K],
    vals: &mut [V],
    segments: &[std::ops::Range<usize>],
    order: Order,
) {
    for s in segments {
        sort_pairs(&mut keys[s.clone()], &mut vals[s.clone()], order);
    }
}

/// Reference stable argsort of each segment: positions within the segment
/// (`relative`, as `torch.sort(x, dim=-1).indices`) or in the whole array.
///
/// ```
/// use warpsort::Order;
/// use warpsort_testkit::cpu;
/// let keys = [3u32, 1, 2, 9, 8];
/// assert_eq!(cpu::argsort_segments(&keys, &cpu::by_offsets(&[0, 3, 5]), Order::Ascending, false), [1, 2, 0, 4, 3]);
/// assert_eq!(cpu::argsort_segments(&keys, &cpu::rows(5, 3), Order::Ascending, true), [1, 2, 0, 1, 0]);
/// ```
pub fn argsort_segments<K: SortKey>(
    keys: &[K],
    segments: &[std::ops::Range<usize>],
    order: Order,
    relative: bool,
) -> Vec<u32> {
    let mut out = vec![0u32; keys.len()];
    for s in segments {
        for (j, p) in argsort(&keys[s.clone()], order).into_iter().enumerate() {
            out[s.start + j] = if relative { p as u32 } else { (s.start + p) as u32 };
        }
    }
    out
}
