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
use warpsort_kernels::span::{Known, SpanKey};

const N: usize = KEYS_PER_LANE as usize;

/// What a kernel is told of its segments' spans.
#[derive(Clone, Copy, Debug)]
enum Spans {
    /// Nothing: the caller's own segments (the network over the items).
    Unknown,
    /// A table in which no span is known (each found by a reduction).
    Found,
    /// Each segment's span widened by this much on both sides (within the
    /// keys' range), as splitters bound a sample sort's bucket.
    Given(u64),
}

/// The kernels under test, each told `Spans`.
#[derive(Clone, Copy, Debug)]
enum Kernel {
    /// `sort_chunks` with this chunk (segments up to it).
    Chunks(u32, Spans),
    /// `sort_warps` with 16 keys a lane (segments up to 512).
    Warps(Spans),
    /// `sort_blocks` with blocks of this many threads (segments up to 8
    /// keys a thread): 128, and 96 (three warps: the tile of 768 runs the
    /// network of 1024, its fourth warp absent).
    Blocks(u32, Spans),
}

/// Keys as `u64` and back (the tests' spans widened in `u64`).
trait TestKey: PlacedKey<Mem = Self> + SpanKey + Into<u64> + TryFrom<u64> + std::fmt::Debug {}
impl TestKey for u32 {}
impl TestKey for u64 {}

impl Kernel {
    fn spans(self) -> Spans {
        match self {
            Kernel::Chunks(_, s) | Kernel::Warps(s) | Kernel::Blocks(_, s) => s,
        }
    }

    fn capacity(self) -> usize {
        match self {
            Kernel::Chunks(c, _) => c as usize,
            Kernel::Warps(_) => 32 * 16,
            Kernel::Blocks(threads, _) => threads as usize * N,
        }
    }
}

/// The spans table `kernel` is told of (two keys a listed segment, the
/// entries' segments in reverse, as `list_classes` lists in any order),
/// and those segments.
fn spans_of<K: TestKey>(kernel: Kernel, keys: &[K], list: &[u64]) -> (Vec<K>, Vec<u32>) {
    let top: u64 = K::PAD.into();
    let mut spans = vec![K::default(); 2 * list.len()];
    let ids: Vec<u32> = (0..list.len() as u32).rev().collect();
    for (j, &e) in list.iter().enumerate() {
        let own = &keys[(e as u32) as usize..(e >> 32) as usize];
        let (lo, hi) = match (kernel.spans(), own.iter().min(), own.iter().max()) {
            (Spans::Given(slack), Some(&lo), Some(&hi)) => {
                let widen = |x: u64| K::try_from(x.min(top)).unwrap_or(K::PAD);
                (widen(lo.into().saturating_sub(slack)), widen(hi.into().saturating_add(slack)))
            }
            _ => (K::PAD, K::default()),
        };
        let s = ids[j] as usize;
        (spans[2 * s], spans[2 * s + 1]) = (lo, hi);
    }
    (spans, ids)
}

/// Runs `kernel` (its stable variant with `STABLE`) over the listed
/// segments of `keys` (and `vals`).
fn run<K: TestKey, V: Word, const STABLE: bool>(kernel: Kernel, keys: &mut [K], vals: &mut [V], list: &[u64]) {
    let (spans, ids) = spans_of(kernel, keys, list);
    let told = !matches!(kernel.spans(), Spans::Unknown);
    let (s, i) = (Ptr(spans.as_ptr().cast_mut()), Ptr(ids.as_ptr().cast_mut()));
    let (k, v, l) = (Ptr(keys.as_mut_ptr()), Ptr(vals.as_mut_ptr()), Ptr(list.as_ptr().cast_mut()));
    let (n, count) = (keys.len() as u64, list.len() as u64);
    let (grid, threads, smem) = match kernel {
        Kernel::Chunks(..) | Kernel::Warps(_) => (2, 2 * WARP_SIZE, 0),
        Kernel::Blocks(threads, _) => {
            (3, threads, threads as usize * N * size_of::<Pair<K, V>>().max(size_of::<K::Placed>()))
        }
    };
    launch(grid, threads, smem, move || {
        let (k, v, l, s, i) = (k, v, l, s, i);
        let items = Items::<K, V> { keys: k.0, vals: v.0 };
        let bounds = Bounds::new(l.0, count, n, 0);
        let known = told.then(|| Known::new(s.0.cast_const(), i.0.cast_const()));
        // SAFETY: the list's segments lie inside the arrays, each within
        // the kernel's capacity, the spans' table holds theirs; the shared
        // memory holds a block's tile.
        unsafe {
            match kernel {
                Kernel::Chunks(c, _) => sort_chunks::<K, V, N, STABLE>(items, bounds, c, known),
                Kernel::Warps(_) => {
                    sort_warps::<K, V, 16, { warp_sort_batch(16) as usize }, STABLE>(items, bounds, known)
                }
                Kernel::Blocks(..) => sort_blocks::<K, V, STABLE>(items, bounds, known),
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
fn sorts<K: TestKey>(kernel: Kernel, spreads: &[(u64, u64)], make: impl Fn(u64) -> K) {
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

/// Every kernel told each of `told` (the block kernel reads the spans; the
/// warps' find theirs by shuffles whatever they are told): each segment's
/// span (exactly, and wider, as a sample sort's splitters bound its
/// buckets), a table of no known span (each found by a reduction), or
/// nothing (`Spans::Unknown`, always): wide spans by the network over the
/// items, narrow ones (and few values) of `u32` keys with payloads and of
/// `u64` keys alone by the compact words (17 bits fit a word beside a
/// place in a segment of up to 1024, and 12; 2^20 more on each side fits
/// too); told nothing, every segment by the network over the items. Then
/// `u64` keys alone whose words lose low bits: spans of 40 bits (equal
/// words rare), and keys of few high parts with low bits the words lose
/// (runs of equal words out of order, which the network over the keys sorts
/// again).
fn every_span(told: &[Spans], kernel: impl Fn(Spans) -> Kernel) {
    for &spans in told {
        for spreads in [WIDE, NARROW] {
            sorts::<u32>(kernel(spans), spreads, |r| r as u32);
            sorts::<u64>(kernel(spans), spreads, |r| r);
        }
        sorts::<u64>(kernel(spans), &[(1 << 40, 0xdead_0000_0000)], |r| r);
        sorts::<u64>(kernel(spans), &[(u64::MAX, 0)], |r| (r >> 52) << 30 | r & 0xff);
        sorts::<u64>(kernel(spans), &[(u64::MAX, 0)], |r| (r >> 61) << 40 | r & 0xf_ffff);
    }
    sorts::<u32>(kernel(Spans::Unknown), &NARROW[..1], |r| r as u32);
    sorts::<u64>(kernel(Spans::Unknown), &NARROW[..1], |r| r);
}

#[test]
fn several_segments_a_warp() {
    for chunk in [N as u32, 64, 32 * N as u32] {
        every_span(&[Spans::Found], |spans| Kernel::Chunks(chunk, spans));
    }
}

#[test]
fn a_warp_a_segment() {
    every_span(&[Spans::Found], Kernel::Warps);
}

#[test]
fn a_block_a_segment() {
    every_span(&[Spans::Found, Spans::Given(0), Spans::Given(1 << 20)], |s| Kernel::Blocks(128, s));
}

/// A block of three warps, whose tile (768, a class between powers of two)
/// runs the network of 1,024 with its fourth warp's slots as pads; and of
/// five (1,280, the network of 2,048).
#[test]
fn a_block_of_warps_between_powers_of_two() {
    every_span(&[Spans::Found], |s| Kernel::Blocks(96, s));
    every_span(&[Spans::Unknown], |s| Kernel::Blocks(160, s));
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
        let ids = vec![u32::MAX; off.len()];
        let (o, c, l, i) = (Ptr::of(off), Ptr(counters.as_mut_ptr()), Ptr::of(&lists), Ptr::of(&ids));
        for list in [false, true] {
            // SAFETY: segs + 1 offsets, the counters, an entry (and id) per segment, the shared words.
            launch(3, 2 * WARP_SIZE, SEGMENT_CLASSES_SMEM as usize, move || unsafe {
                let (o, c, l, i) = (o, c, l, i);
                if list {
                    list_classes(o.0.cast_const(), segs, odd_sorted.into(), n, c.0, l.0, i.0, segs);
                } else {
                    count_classes(o.0.cast_const(), segs, odd_sorted.into(), c.0);
                }
            });
        }
        (counters, lists, ids)
    };
    for odd_sorted in [false, true] {
        let (counters, lists, ids) = run(&off, odd_sorted);
        assert_eq!(counters[0], u32::MAX, "no decrease");
        for (&e, &i) in lists.iter().zip(&ids).filter(|p| *p.0 != u64::MAX) {
            let i = i as usize;
            assert_eq!(e, off[i] as u64 | (off[i + 1] as u64) << 32, "entry {e:#x}'s id {i}");
        }
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
    let (counters, lists, _) = run(&bad, false);
    assert_eq!(counters[0], 999, "the first decrease");
    assert!(lists.iter().all(|&e| e == u64::MAX), "bad offsets list nothing");
}
