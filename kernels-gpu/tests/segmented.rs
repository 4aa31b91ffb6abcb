//! The segmented sorts' kernels (`segmented`: several segments a warp, a
//! warp a segment, a block a segment) on the CPU under the emulator
//! (`arch::launch`), on segments given as a list (`start | end << 32`, as
//! `list_classes` makes them) of random lengths up to each kernel's
//! capacity, `u32` and `u64` keys, alone and with their positions: each
//! segment sorted, its positions a permutation of its own, every item
//! between segments untouched; and the stable kernels, whose equal keys keep
//! their positions in order. The sample sort's buckets are sorted by these
//! kernels.
#![cfg(feature = "emulate")]

mod common;

use common::{Ptr, random};
use warpsort_kernels::arch::launch;
use warpsort_kernels::config::{KEYS_PER_LANE, WARP_SIZE, warp_sort_batch};
use warpsort_kernels::item::{Items, Pair, PlacedKey, Word};
use warpsort_kernels::segmented::{Bounds, sort_blocks, sort_chunks, sort_warps};
use warpsort_kernels::span::SpanKey;

const N: usize = KEYS_PER_LANE as usize;

/// The kernels under test.
#[derive(Clone, Copy, Debug)]
enum Kernel {
    /// `sort_chunks` with this chunk (segments up to it).
    Chunks(u32, u32),
    /// `sort_warps` with 16 keys a lane (segments up to 512).
    Warps(u32),
    /// `sort_blocks` with blocks of 128 threads (segments up to 1024).
    /// Each kernel is told whether the keys span narrowly (the compact
    /// words) or not.
    Blocks(u32),
}

impl Kernel {
    fn capacity(self) -> usize {
        match self {
            Kernel::Chunks(c, _) => c as usize,
            Kernel::Warps(_) => 32 * 16,
            Kernel::Blocks(_) => 128 * N,
        }
    }
}

/// Runs `kernel` (its stable variant with `STABLE`) over the listed
/// segments of `keys` (and `vals`).
fn run<K: PlacedKey<Mem = K> + SpanKey, V: Word, const STABLE: bool>(
    kernel: Kernel,
    keys: &mut [K],
    vals: &mut [V],
    list: &[u64],
) {
    let (k, v, l) = (Ptr(keys.as_mut_ptr()), Ptr(vals.as_mut_ptr()), Ptr(list.as_ptr().cast_mut()));
    let (n, count) = (keys.len() as u64, list.len() as u64);
    let (grid, threads, smem) = match kernel {
        Kernel::Chunks(..) | Kernel::Warps(_) => (2, 2 * WARP_SIZE, 0),
        Kernel::Blocks(_) => (3, 128, 128 * N * size_of::<Pair<K, V>>().max(size_of::<K::Placed>())),
    };
    launch(grid, threads, smem, move || {
        let (k, v, l) = (k, v, l);
        let items = Items::<K, V> { keys: k.0, vals: v.0 };
        let bounds = Bounds::new(l.0, count, n, 0);
        // SAFETY: the list's segments lie inside the arrays, each within
        // the kernel's capacity; the shared memory holds a block's tile.
        unsafe {
            match kernel {
                Kernel::Chunks(c, narrow) => sort_chunks::<K, V, N, STABLE>(items, bounds, c, narrow),
                Kernel::Warps(narrow) => {
                    sort_warps::<K, V, 16, { warp_sort_batch(16) as usize }, STABLE>(items, bounds, narrow)
                }
                Kernel::Blocks(narrow) => sort_blocks::<K, V, STABLE>(items, bounds, narrow),
            }
        }
    });
}

/// Keys over the whole range, and of few values.
const WIDE: &[(u64, u64)] = &[(u64::MAX, 0), (5, 0)];
/// Keys of a narrow span far from 0, as a sample sort's buckets: 17 bits
/// and 12.
const NARROW: &[(u64, u64)] = &[(1 << 17, 0xfff0_0000), (1 << 12, 0xdead_beef)];

/// Random segments up to `kernel`'s capacity, with gaps between them (left
/// as they are), keys from `make` (`base + r % spread` for each of
/// `spreads`, `r` random); keys alone and with positions.
fn sorts<K: PlacedKey<Mem = K> + SpanKey + std::fmt::Debug>(
    kernel: Kernel,
    spreads: &[(u64, u64)],
    make: impl Fn(u64) -> K,
) {
    let cap = kernel.capacity() as u64;
    let mut list = Vec::new();
    let mut at = 0u64;
    // Lengths 0, 1, the capacity, and random ones; a gap of 0-2 after each.
    for (i, r) in random(14, cap).into_iter().enumerate() {
        let len = match i {
            0 => 0,
            1 => 1,
            2 | 3 => cap,
            _ => r % (cap + 1),
        };
        list.push(at | (at + len) << 32);
        at += len + (r >> 40) % 3;
    }
    let n = at as usize;
    for &(spread, base) in spreads {
        let input: Vec<K> = random(n, spread ^ cap).into_iter().map(|r| make(base + r % spread)).collect();
        let mut want = input.clone();
        for &e in &list {
            want[(e as u32) as usize..(e >> 32) as usize].sort();
        }
        let mut keys = input.clone();
        run::<K, (), false>(kernel, &mut keys, &mut vec![(); n], &list);
        assert_eq!(keys, want, "{kernel:?}, keys alone, spread {spread}");
        let (mut keys, mut pos): (Vec<K>, Vec<u32>) = (input.clone(), (0..n as u32).collect());
        run::<K, u32, false>(kernel, &mut keys, &mut pos, &list);
        assert_eq!(keys, want, "{kernel:?}, pairs, spread {spread}");
        for &e in &list {
            let (a, b) = ((e as u32) as usize, (e >> 32) as usize);
            let mut own: Vec<u32> = pos[a..b].to_vec();
            own.sort();
            assert!(own.iter().copied().eq(a as u32..b as u32), "{kernel:?}: positions of {a}..{b}");
            assert!(pos[a..b].iter().zip(&keys[a..b]).all(|(&p, k)| input[p as usize] == *k), "{kernel:?}");
        }
        let outside = (0..n).filter(|&i| !list.iter().any(|&e| ((e as u32) as usize..(e >> 32) as usize).contains(&i)));
        assert!(outside.into_iter().all(|i| pos[i] == i as u32), "{kernel:?}: an item between segments moved");
        // Stable: each segment as a stable sort of (key, position) leaves it.
        let mut stable: Vec<(K, u32)> = input.iter().copied().zip(0..n as u32).collect();
        for &e in &list {
            stable[(e as u32) as usize..(e >> 32) as usize].sort_by_key(|p| p.0);
        }
        let (mut keys, mut pos): (Vec<K>, Vec<u32>) = (input.clone(), (0..n as u32).collect());
        run::<K, u32, true>(kernel, &mut keys, &mut pos, &list);
        let got: Vec<(K, u32)> = keys.into_iter().zip(pos).collect();
        assert!(got == stable, "{kernel:?}, stable, spread {spread}");
    }
}

/// Every kernel told the keys span narrowly or not: wide spans by the
/// network over the items, narrow ones (and few values) of `u32` keys with
/// payloads and of `u64` keys alone by the compact words (17 bits fit a
/// word beside a place in a segment of up to 1024, and 12); told nothing,
/// every segment by the network over the items. Then `u64` keys alone whose
/// words lose low bits: spans of 40 bits (equal words rare), and keys of
/// few high parts with low bits the words lose (runs of equal words out of
/// order, which the network over the keys sorts again).
fn every_span(kernel: impl Fn(u32) -> Kernel) {
    for (narrow, spreads) in [(1, WIDE), (1, NARROW), (0, &NARROW[..1])] {
        sorts::<u32>(kernel(narrow), spreads, |r| r as u32);
        sorts::<u64>(kernel(narrow), spreads, |r| r);
    }
    sorts::<u64>(kernel(1), &[(1 << 40, 0xdead_0000_0000)], |r| r);
    sorts::<u64>(kernel(1), &[(u64::MAX, 0)], |r| (r >> 52) << 30 | r & 0xff);
    sorts::<u64>(kernel(1), &[(u64::MAX, 0)], |r| (r >> 61) << 40 | r & 0xf_ffff);
}

#[test]
fn several_segments_a_warp() {
    for chunk in [N as u32, 64, 32 * N as u32] {
        every_span(|narrow| Kernel::Chunks(chunk, narrow));
    }
}

#[test]
fn a_warp_a_segment() {
    every_span(Kernel::Warps);
}

#[test]
fn a_block_a_segment() {
    every_span(Kernel::Blocks);
}

/// `count_classes` then `list_classes` (the blocks' shared counts, one
/// atomic a block and class) over offsets of lengths in every class, on a
/// grid whose threads take several segments each: the counts and each
/// class's list as a CPU reference makes them (the lists in any order),
/// odd segments left out with `odd_sorted`; offsets that decrease report
/// the first place and list nothing.
#[test]
fn classes_counted_and_listed() {
    use warpsort_kernels::config::{
        SEGMENT_CLASSES, SEGMENT_CLASSES_SMEM, SEGMENT_COUNTERS, SEGMENT_CURSORS, segment_class,
    };
    use warpsort_kernels::segmented::{count_classes, list_classes};
    let r = random(3000, 7);
    // Lengths 0 to past the block kernel's, most short (as buckets are).
    let lens: Vec<u32> = r.iter().map(|&x| (x % 9000) as u32 >> (x >> 60)).collect();
    let mut off = vec![0u32];
    for &l in &lens {
        off.push(off.last().unwrap() + l);
    }
    let n = *off.last().unwrap() as u64;
    let segs = lens.len() as u64;
    let run = |off: &[u32], odd_sorted: bool| {
        let mut counters = [0u32; SEGMENT_COUNTERS];
        counters[0] = u32::MAX;
        let lists = vec![u64::MAX; off.len()];
        let (o, c, l) = (Ptr::of(off), Ptr(counters.as_mut_ptr()), Ptr::of(&lists));
        for list in [false, true] {
            // SAFETY: segs + 1 offsets, the counters, an entry per segment, the shared words.
            launch(3, 2 * WARP_SIZE, SEGMENT_CLASSES_SMEM as usize, move || unsafe {
                let (o, c, l) = (o, c, l);
                if list {
                    list_classes(o.0.cast_const(), segs, odd_sorted.into(), n, c.0, l.0, segs);
                } else {
                    count_classes(o.0.cast_const(), segs, odd_sorted.into(), c.0);
                }
            });
        }
        (counters, lists)
    };
    for odd_sorted in [false, true] {
        let (counters, lists) = run(&off, odd_sorted);
        assert_eq!(counters[0], u32::MAX, "no decrease");
        let mut want: Vec<Vec<u64>> = vec![Vec::new(); SEGMENT_CLASSES];
        for i in 0..lens.len() {
            if !(odd_sorted && i % 2 == 1) {
                want[segment_class(lens[i]) as usize].push(off[i] as u64 | (off[i + 1] as u64) << 32);
            }
        }
        let mut at = 0;
        for (c, want) in want.iter_mut().enumerate().skip(1) {
            assert_eq!(counters[1 + c] as usize, want.len(), "class {c}, odd_sorted {odd_sorted}");
            assert_eq!(counters[SEGMENT_CURSORS + c] as usize, want.len(), "class {c}'s cursor");
            let mut got = lists[at..at + want.len()].to_vec();
            got.sort();
            want.sort();
            assert_eq!(&got, want, "class {c}'s list, odd_sorted {odd_sorted}");
            at += want.len();
        }
        assert!(lists[at..].iter().all(|&e| e == u64::MAX), "nothing listed past the classes");
    }
    let mut bad = off.clone();
    bad[1000] = bad[999] - 1;
    bad[2000] = 0;
    let (counters, lists) = run(&bad, false);
    assert_eq!(counters[0], 999, "the first decrease");
    assert!(lists.iter().all(|&e| e == u64::MAX), "bad offsets list nothing");
}
