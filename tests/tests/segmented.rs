//! Segments given by offsets (warp chunks, block tiles and the merge sort
//! chosen per segment length) against the CPU reference per segment; bad
//! offsets; the segmented checks on the GPU.

use warpsort::{Error, Gpu, Order, SortKey};
use warpsort_testkit::cpu;
use warpsort_testkit::data::{FromPattern, random_offsets};
use warpsort_testkit::{Dist, assert_pairs, keys, seed};

warpsort_testkit::tests_main! {
    gpu: [
        every_segment_length_around_the_kernel_limits,
        no_keys_and_empty_segments,
        random_lengths_every_key_type_and_order,
        random_lengths_every_distribution,
        millions_of_keys_short_segments_and_one_long,
        more_short_segments_than_the_chunk_grid,
        chunk_classes_alone_and_joined,
        classes_between_powers_of_two_joined,
        classes_between_powers_of_two_alone,
        host_slices,
        bad_offsets_fail_and_leave_the_data_as_it_was,
        segmented_checks_count_only_descents_inside_segments,
    ],
}

/// Offsets of `count` segments of `len` items each.
fn equal(len: usize, count: usize) -> Vec<u32> {
    (0..=count).map(|s| (s * len) as u32).collect()
}

/// Sorts `dist` keys cut by `offsets` (keys, then key-value) on the GPU and
/// compares each segment with the CPU reference; the GPU's segmented check
/// must agree.
fn check<K: SortKey>(g: &Gpu, dist: Dist, offsets: &[u32], order: Order)
where
    K::Bits: FromPattern,
{
    let n = *offsets.last().unwrap() as usize;
    let what = format!("{} {} n={n} segments={} {order:?}", K::NAME, dist.name(), offsets.len() - 1);
    let input: Vec<K> = keys(dist, n, seed(dist.name(), n + offsets.len()));
    let d_off = g.stream().clone_htod(offsets).unwrap();
    let mut d = g.stream().clone_htod(&input).unwrap();
    let segs = warpsort::Segments::Offsets(&d_off);
    let before = g.check_segments::<K, u32>(&d, None, segs, order).unwrap();
    g.sort_segments_by_offsets(&mut d, &d_off, order).unwrap_or_else(|e| panic!("{what}: {e}"));
    let after = g.check_segments::<K, u32>(&d, None, segs, order).unwrap();
    let got = g.stream().clone_dtoh(&d).unwrap();
    let mut want = input.clone();
    cpu::sort_by_offsets(&mut want, offsets, order);
    if let Some(i) = got.iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits()) {
        let s = offsets.partition_point(|&o| o as usize <= i) - 1;
        let len = offsets[s + 1] - offsets[s];
        panic!(
            "{what}: differs from the CPU reference first at {i} (segment {s} of {len} items): got {:?}, want {:?}",
            &got[i..(i + 4).min(n)],
            &want[i..(i + 4).min(n)]
        );
    }
    assert!(after.confirms(&before), "{what}: GPU segmented check disagrees: {before:?} -> {after:?}");

    // Key-value: values are positions; each pair stays in its segment.
    let vals: Vec<u32> = (0..n as u32).collect();
    let mut dk = g.stream().clone_htod(&input).unwrap();
    let mut dv = g.stream().clone_htod(&vals).unwrap();
    g.sort_segments_by_offsets_pairs(&mut dk, &mut dv, &d_off, order).unwrap_or_else(|e| panic!("{what} pairs: {e}"));
    let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
    for w in offsets.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        let shifted: Vec<u32> = ov[a..b].iter().map(|v| v.wrapping_sub(a as u32)).collect();
        assert_pairs(&input[a..b], &ok[a..b], &shifted, order, &format!("{what} pairs, segment at {a}"));
    }
}

fn every_segment_length_around_the_kernel_limits(g: &Gpu) {
    let lengths =
        [0, 1, 2, 7, 8, 9, 31, 32, 33, 64, 255, 256, 257, 511, 512, 513, 1024, 4097, 8191, 8192, 8193, 100_000];
    for len in lengths {
        let count = (40_000 / len.max(1)).clamp(3, 5000);
        check::<u32>(g, Dist::Uniform, &equal(len, count), Order::Ascending);
        check::<u32>(g, Dist::FewUnique, &equal(len, count), Order::Descending);
    }
    // One segment of each length, next to each other.
    let mut off = vec![0u32];
    for len in lengths {
        off.push(off.last().unwrap() + len as u32);
    }
    check::<u32>(g, Dist::Uniform, &off, Order::Ascending);
}

fn no_keys_and_empty_segments(g: &Gpu) {
    check::<u32>(g, Dist::Uniform, &[0], Order::Ascending);
    check::<u32>(g, Dist::Uniform, &[0, 0, 0], Order::Ascending);
    check::<u32>(g, Dist::Uniform, &[0, 0, 5, 5, 6, 6, 40, 40], Order::Ascending);
    check::<u64>(g, Dist::Uniform, &[0, 1, 2, 3], Order::Descending);
}

fn random_lengths_every_key_type_and_order(g: &Gpu) {
    for (i, max_len) in [40usize, 600, 20_000].into_iter().enumerate() {
        let off = random_offsets(150_000, max_len, 11 + i as u64);
        for order in [Order::Ascending, Order::Descending] {
            check::<u32>(g, Dist::Uniform, &off, order);
            check::<i32>(g, Dist::Gaussian, &off, order);
            check::<f32>(g, Dist::Uniform, &off, order);
            check::<u64>(g, Dist::Uniform, &off, order);
            check::<i64>(g, Dist::FewUnique, &off, order);
            check::<f64>(g, Dist::Gaussian, &off, order);
        }
    }
}

fn random_lengths_every_distribution(g: &Gpu) {
    let off = random_offsets(200_000, 10_000, 3);
    for dist in Dist::ALL {
        check::<u32>(g, dist, &off, Order::Ascending);
        check::<f32>(g, dist, &off, Order::Descending);
    }
}

fn millions_of_keys_short_segments_and_one_long(g: &Gpu) {
    check::<u32>(g, Dist::Uniform, &equal(32, 1 << 17), Order::Ascending);
    check::<u32>(g, Dist::Uniform, &random_offsets(1 << 22, 300, 5), Order::Ascending);
    check::<u32>(g, Dist::Uniform, &[0, 3, 3 + (1 << 21), (1 << 21) + 40], Order::Ascending);
}

/// Offsets of segments of each of `lens`, `per_class` times each, in a
/// shuffled order.
fn shuffled(lens: &[usize], per_class: usize) -> Vec<u32> {
    let mut all: Vec<usize> = lens.iter().flat_map(|&l| std::iter::repeat_n(l, per_class)).collect();
    let r = warpsort_testkit::data::keys::<u64>(Dist::Uniform, all.len(), per_class as u64);
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by_key(|&i| r[i]);
    all = order.into_iter().map(|i| all[i]).collect();
    let mut off = vec![0u32];
    for l in all {
        off.push(off.last().unwrap() + l as u32);
    }
    off
}

/// Few segments in a class of the chunk kernel (3 a length: they join the
/// next chunk's launch, up to the largest chunk's) and many (1,100 a
/// length: each class its own launch), at and around each chunk.
fn chunk_classes_alone_and_joined(g: &Gpu) {
    let bounds = [2usize, 5, 8, 9, 16, 17, 31, 32, 33, 64, 65, 128, 129, 200, 256, 257];
    for per_class in [3usize, 1100] {
        let off = shuffled(&bounds, per_class);
        check::<u32>(g, Dist::Uniform, &off, Order::Ascending);
        check::<f32>(g, Dist::Gaussian, &off, Order::Descending);
        check::<u64>(g, Dist::FewUnique, &off, Order::Ascending);
        check::<i16>(g, Dist::Zipf, &off, Order::Descending);
    }
}

/// The block classes between two powers of two (tiles of 768 to 6,144) and
/// the powers themselves, the lengths at and around each class's bounds,
/// mixed: with few segments (3 a length) a class joins the next class's
/// launch. Every block tile's kernel (the dual one of the largest `u32`
/// tiles too) in a few milliseconds: what compute-sanitizer's racecheck
/// runs over.
fn classes_between_powers_of_two_joined(g: &Gpu) {
    let off = shuffled(CLASS_BOUNDS, 3);
    check::<u32>(g, Dist::Uniform, &off, Order::Ascending);
    check::<f32>(g, Dist::Gaussian, &off, Order::Descending);
    check::<u64>(g, Dist::FewUnique, &off, Order::Ascending);
}

/// As [`classes_between_powers_of_two_joined`] with many segments (1,100 a
/// length): each class takes a launch of its own (on an H200, from 8 x 132
/// = 1,056 segments).
fn classes_between_powers_of_two_alone(g: &Gpu) {
    check::<u32>(g, Dist::Uniform, &shuffled(CLASS_BOUNDS, 1100), Order::Ascending);
}

/// Segment lengths at and around the block classes' bounds.
const CLASS_BOUNDS: &[usize] = &[513, 700, 768, 769, 1025, 1536, 1537, 2049, 3072, 3073, 4097, 6144, 6145, 8192];

/// More segments of up to 256 items than the chunk kernel's grid covers at
/// once (Hopper caps it at 16 blocks of 8 warps a multiprocessor, 2,112
/// on an H200; a warp sorts 64 segments of 8, 16 of 32 at a time): its
/// warps take several rounds on GPUs of fewer than 256 multiprocessors.
fn more_short_segments_than_the_chunk_grid(g: &Gpu) {
    check::<u32>(g, Dist::Uniform, &equal(8, 3 << 20), Order::Ascending);
    check::<u32>(g, Dist::FewUnique, &equal(32, 1 << 19), Order::Descending);
    check::<u32>(g, Dist::Uniform, &random_offsets(1 << 24, 64, 13), Order::Ascending);
}

fn host_slices(g: &Gpu) {
    let off = random_offsets(50_000, 3000, 9);
    let input: Vec<f32> = keys(Dist::Gaussian, 50_000, 1);
    let mut got = input.clone();
    g.sort_segments_by_offsets_slice(&mut got, &off, Order::Descending).unwrap();
    let mut want = input.clone();
    cpu::sort_by_offsets(&mut want, &off, Order::Descending);
    assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
    let mut k = input.clone();
    let mut v: Vec<u32> = (0..input.len() as u32).collect();
    g.sort_segments_by_offsets_pairs_slice(&mut k, &mut v, &off, Order::Descending).unwrap();
    assert!(k.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(k.iter().zip(&v).all(|(k, &v)| k.to_bits() == input[v as usize].to_bits()));
}

/// Offsets that break the contract, for `n` keys, with what the message names.
fn bad_offsets(n: u32) -> Vec<(Vec<u32>, &'static str)> {
    vec![
        (vec![], "empty"),
        (vec![1, n], "offsets[0] is 1"),
        (vec![0, 10, 5, n], "offsets[1] = 10 > offsets[2] = 5"),
        (vec![0, n / 2, n - 1], "but there are"),
        (vec![0, n / 2, n + 1], "but there are"),
        (vec![0, 4, 3, 2, 1, n], "offsets[1] = 4 > offsets[2] = 3"),
    ]
}

fn bad_offsets_fail_and_leave_the_data_as_it_was(g: &Gpu) {
    let n = 20_000u32;
    let input: Vec<f32> = keys(Dist::Uniform, n as usize, 2);
    let vals: Vec<u32> = (0..n).rev().collect();
    for (off, says) in bad_offsets(n) {
        let what = format!("offsets {off:?}");
        let expect = |r: warpsort::Result<()>| match r {
            Err(e @ Error::BadOffsets { .. }) => assert!(e.to_string().contains(says), "{what}: {e}"),
            r => panic!("{what}: expected BadOffsets, got {r:?}"),
        };
        // An empty device buffer cannot be allocated by every driver: the host check covers it.
        if !off.is_empty() {
            let d_off = g.stream().clone_htod(&off).unwrap();
            let mut dk = g.stream().clone_htod(&input).unwrap();
            let mut dv = g.stream().clone_htod(&vals).unwrap();
            expect(g.sort_segments_by_offsets(&mut dk, &d_off, Order::Descending));
            expect(g.sort_segments_by_offsets_pairs(&mut dk, &mut dv, &d_off, Order::Ascending));
            let segs = warpsort::Segments::Offsets(&d_off);
            assert!(matches!(g.is_sorted_segments(&dk, segs, Order::Ascending), Err(Error::BadOffsets { .. })));
            let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
            assert!(ok.iter().zip(&input).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: keys changed");
            assert_eq!(ov, vals, "{what}: values changed");
        }
        let (mut k, mut v) = (input.clone(), vals.clone());
        expect(g.sort_segments_by_offsets_slice(&mut k, &off, Order::Ascending));
        expect(g.sort_segments_by_offsets_pairs_slice(&mut k, &mut v, &off, Order::Ascending));
        assert!(k.iter().zip(&input).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: host keys changed");
        assert_eq!(v, vals, "{what}: host values changed");
    }
}

/// Descents inside segments, on the CPU.
fn cpu_descents<K: SortKey>(keys: &[K], offsets: &[u32], order: Order) -> u64 {
    offsets
        .windows(2)
        .map(|w| {
            let seg = &keys[w[0] as usize..w[1] as usize];
            let bad = |a: &K, b: &K| match order {
                Order::Ascending => a.key_cmp(b).is_gt(),
                Order::Descending => a.key_cmp(b).is_lt(),
            };
            seg.windows(2).filter(|p| bad(&p[0], &p[1])).count() as u64
        })
        .sum()
}

fn segmented_checks_count_only_descents_inside_segments(g: &Gpu) {
    use warpsort::Segments;
    for (n, max_len) in [(0usize, 10usize), (1, 10), (1000, 40), (100_003, 300), (300_000, 20_000)] {
        let off = random_offsets(n, max_len, n as u64);
        let input: Vec<i64> = keys(Dist::FewUnique, n, 4);
        for order in [Order::Ascending, Order::Descending] {
            let mut sorted = input.clone();
            cpu::sort_by_offsets(&mut sorted, &off, order);
            let d_off = g.stream().clone_htod(&off).unwrap();
            for keys in [&input, &sorted] {
                let d = g.stream().clone_htod(keys).unwrap();
                let c = g.check_segments::<i64, u32>(&d, None, Segments::Offsets(&d_off), order).unwrap();
                assert_eq!(c.descents, cpu_descents(keys, &off, order), "n={n} max_len={max_len} {order:?}");
            }
            let d = g.stream().clone_htod(&sorted).unwrap();
            assert!(g.is_sorted_segments(&d, Segments::Offsets(&d_off), order).unwrap());
            // Equal rows.
            for seg in [1usize, 7, 32, 4096] {
                let mut rows = input.clone();
                cpu::sort_segments(&mut rows, seg, order);
                let rows_off: Vec<u32> = (0..n.div_ceil(seg)).map(|s| (s * seg) as u32).chain([n as u32]).collect();
                for keys in [&input, &rows] {
                    let d = g.stream().clone_htod(keys).unwrap();
                    let c = g.check_segments::<i64, u32>(&d, None, Segments::Rows(seg), order).unwrap();
                    assert_eq!(c.descents, cpu_descents(keys, &rows_off, order), "rows of {seg}, n={n}");
                }
            }
        }
    }
    let d = g.stream().clone_htod(&[2u32, 1]).unwrap();
    assert!(matches!(g.is_sorted_segments(&d, Segments::Rows(0), Order::Ascending), Err(Error::BadSegment { .. })));
}
