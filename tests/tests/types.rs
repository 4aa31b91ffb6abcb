//! Payload widths, argsort and stable sorts against the CPU references: every
//! payload type (32 and 64 bits) with every key width, on every algorithm and
//! the segmented sorts; argsort with `u32` and `u64` positions; stable
//! key-value sorts and argsort checked for the exact stable order; 16-bit keys
//! (widened to 32-bit patterns and narrowed back) through every entry point.

use warpsort::{Algorithm, Gpu, MergeKernel, MergeSortConfig, Order, Payload, SortKey, SortOptions, TileSort};
use warpsort_testkit::cpu;
use warpsort_testkit::data::FromPattern;
use warpsort_testkit::{Dist, SIZES, check_segments, check_sort, check_sort_pairs, keys, seed};

warpsort_testkit::tests_main! {
    gpu: [
        payload_widths_every_algorithm_and_size,
        payload_types_every_key_type_and_order,
        payload_widths_every_distribution,
        stable_pairs_keep_input_order,
        every_merge_kernel_with_wide_and_ranked_items,
        stable_pairs_every_payload_and_key_type,
        argsort_every_algorithm_size_and_order,
        segments_with_64_bit_payloads,
        millions,
        stable_defaults_in_the_millions,
        host_slices_and_errors,
        sixteen_bit_keys,
        segments_by_offsets_with_64_bit_payloads,
    ],
}

/// A payload that carries its input position recognisably in every bit
/// width: 64-bit tags hold the position in both halves, so a payload whose
/// high half did not travel is caught.
trait Tag: Payload {
    fn tag(i: usize) -> Self;
    /// The position, or `None` for a value no tag has.
    fn position(self) -> Option<usize>;
}

macro_rules! tag32 {
    ($($t:ty: |$i:ident| $to:expr, |$v:ident| $bits:expr;)*) => {$(
        impl Tag for $t {
            fn tag($i: usize) -> Self {
                $to
            }
            fn position(self) -> Option<usize> {
                let $v = self;
                Some($bits as usize)
            }
        }
    )*};
}
tag32! {
    u32: |i| i as u32, |v| v;
    i32: |i| i as i32, |v| v as u32;
    f32: |i| f32::from_bits(i as u32), |v| v.to_bits();
}

macro_rules! tag64 {
    ($($t:ty: |$x:ident| $to:expr, |$v:ident| $bits:expr;)*) => {$(
        impl Tag for $t {
            fn tag(i: usize) -> Self {
                let $x = (i as u64) * 0x1_0000_0001;
                $to
            }
            fn position(self) -> Option<usize> {
                let $v = self;
                let b: u64 = $bits;
                ((b >> 32) == (b & 0xffff_ffff)).then_some((b & 0xffff_ffff) as usize)
            }
        }
    )*};
}
tag64! {
    u64: |x| x, |v| v;
    i64: |x| x as i64, |v| v as u64;
    f64: |x| f64::from_bits(x), |v| v.to_bits();
}

fn opts(algorithm: Algorithm, order: Order, stable: bool) -> SortOptions {
    SortOptions { algorithm, order, stable, ..Default::default() }
}

fn what<K: SortKey, V: Payload>(o: &SortOptions, dist: Dist, n: usize) -> String {
    format!("{o:?} {} keys, {} payload, {} n={n}", K::NAME, std::any::type_name::<V>(), dist.name())
}

/// Key-value sort with tagged payloads: keys bit-equal to the CPU reference,
/// every payload a distinct input position whose key it travelled with; with
/// `stable`, payloads exactly the stable reference's.
fn check_pairs<K: SortKey, V: Tag>(g: &Gpu, dist: Dist, n: usize, o: &SortOptions)
where
    K::Bits: FromPattern,
{
    let what = what::<K, V>(o, dist, n);
    let input: Vec<K> = keys(dist, n, seed(dist.name(), n) ^ 7);
    let tags: Vec<V> = (0..n).map(V::tag).collect();
    let mut dk = g.stream().clone_htod(&input).unwrap();
    let mut dv = g.stream().clone_htod(&tags).unwrap();
    g.sort_pairs(&mut dk, &mut dv, o).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
    let (mut want_k, mut want_v) = (input.clone(), tags.clone());
    cpu::sort_pairs(&mut want_k, &mut want_v, o.order);
    if let Some(i) = ok.iter().zip(&want_k).position(|(a, b)| a.to_bits() != b.to_bits()) {
        panic!("{what}: keys differ from the CPU reference first at {i}: got {:?}, want {:?}", ok[i], want_k[i]);
    }
    let mut seen = vec![false; n];
    for (i, (k, v)) in ok.iter().zip(&ov).enumerate() {
        let p = v.position().filter(|&p| p < n).unwrap_or_else(|| panic!("{what}: payload {v:?} at {i} is no tag"));
        assert!(!std::mem::replace(&mut seen[p], true), "{what}: payload of position {p} repeated");
        assert_eq!(input[p].to_bits(), k.to_bits(), "{what}: payload of position {p} travelled with the wrong key");
    }
    if o.stable {
        let i = ov.iter().zip(&want_v).position(|(a, b)| a.position() != b.position());
        assert!(i.is_none(), "{what}: not the stable order, first at {i:?}");
    }
}

/// Argsort with `u32` and `u64` positions: a permutation that sorts the keys
/// (exactly the stable one with `stable`), keys unchanged.
fn check_argsort<K: SortKey>(g: &Gpu, dist: Dist, n: usize, o: &SortOptions)
where
    K::Bits: FromPattern,
{
    let what = what::<K, u32>(o, dist, n);
    let input: Vec<K> = keys(dist, n, seed(dist.name(), n) ^ 11);
    let d = g.stream().clone_htod(&input).unwrap();
    let p32: Vec<usize> = g
        .stream()
        .clone_dtoh(&g.argsort(&d, o).unwrap_or_else(|e| panic!("argsort {what}: {e}")))
        .unwrap()
        .into_iter()
        .map(|p| p as usize)
        .collect();
    let p64: Vec<usize> = g
        .stream()
        .clone_dtoh(&g.argsort64(&d, o).unwrap_or_else(|e| panic!("argsort64 {what}: {e}")))
        .unwrap()
        .into_iter()
        .map(|p| p as usize)
        .collect();
    let after = g.stream().clone_dtoh(&d).unwrap();
    assert!(after.iter().zip(&input).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: argsort changed the keys");
    for (p, name) in [(&p32, "argsort"), (&p64, "argsort64")] {
        assert!(cpu::is_argsort_of(&input, p, o.order), "{name} {what}: not a sorting permutation");
        if o.stable {
            let want = cpu::argsort(&input, o.order);
            let i = p.iter().zip(&want).position(|(a, b)| a != b);
            assert!(i.is_none(), "{name} {what}: not the stable permutation, first at {i:?}");
        }
    }
}

/// Every payload type with a key type.
fn every_payload<K: SortKey>(g: &Gpu, dist: Dist, n: usize, o: &SortOptions)
where
    K::Bits: FromPattern,
{
    check_pairs::<K, u32>(g, dist, n, o);
    check_pairs::<K, i32>(g, dist, n, o);
    check_pairs::<K, f32>(g, dist, n, o);
    check_pairs::<K, u64>(g, dist, n, o);
    check_pairs::<K, i64>(g, dist, n, o);
    check_pairs::<K, f64>(g, dist, n, o);
}

fn payload_widths_every_algorithm_and_size(g: &Gpu) {
    for a in Algorithm::ALL {
        for &n in SIZES {
            let o = opts(a, Order::Ascending, false);
            check_pairs::<u32, u64>(g, Dist::Uniform, n, &o);
            check_pairs::<u64, u64>(g, Dist::FewUnique, n, &o);
        }
    }
}

fn payload_types_every_key_type_and_order(g: &Gpu) {
    for a in Algorithm::ALL {
        for order in [Order::Ascending, Order::Descending] {
            for dist in [Dist::Uniform, Dist::FewUnique] {
                let o = opts(a, order, false);
                let n = 70_001;
                every_payload::<u32>(g, dist, n, &o);
                every_payload::<f64>(g, dist, n, &o);
                check_pairs::<i32, f64>(g, dist, n, &o);
                check_pairs::<f32, u64>(g, dist, n, &o);
                check_pairs::<u64, i32>(g, dist, n, &o);
                check_pairs::<i64, u64>(g, dist, n, &o);
            }
        }
    }
}

fn payload_widths_every_distribution(g: &Gpu) {
    for dist in Dist::ALL {
        for a in [Algorithm::MergeSort, Algorithm::Bitonic] {
            let o = opts(a, Order::Ascending, false);
            check_pairs::<u32, u64>(g, dist, 300_001, &o);
            check_pairs::<u64, u64>(g, dist, 300_001, &o);
        }
    }
}

fn stable_pairs_keep_input_order(g: &Gpu) {
    for a in Algorithm::ALL {
        for order in [Order::Ascending, Order::Descending] {
            let o = opts(a, order, true);
            for dist in [Dist::FewUnique, Dist::AllEqual, Dist::Uniform, Dist::Sorted, Dist::Reverse] {
                for &n in SIZES {
                    check_pairs::<u32, u32>(g, dist, n, &o);
                }
                check_pairs::<u64, u64>(g, dist, 100_003, &o);
                check_pairs::<f32, u64>(g, dist, 4097, &o);
                check_pairs::<i64, f32>(g, dist, 8193, &o);
            }
        }
    }
}

fn every_merge_kernel_with_wide_and_ranked_items(g: &Gpu) {
    let configs = [TileSort::BlockBitonic, TileSort::WarpMerge].into_iter().flat_map(|tile_sort| {
        [MergeKernel::Block, MergeKernel::WarpBitonic].into_iter().flat_map(move |merge| {
            [0, 4, 8, 16].map(|outputs_per_thread| MergeSortConfig {
                tile_sort,
                merge,
                outputs_per_thread,
                ..Default::default()
            })
        })
    });
    for cfg in configs {
        if cfg.validate().is_err() {
            continue;
        }
        for order in [Order::Ascending, Order::Descending] {
            let o = SortOptions { order, merge_sort: cfg, ..Default::default() };
            let stable = SortOptions { stable: true, ..o };
            for n in [4097, 8193, 12_288, 100_003] {
                check_pairs::<u32, u64>(g, Dist::Uniform, n, &o);
                check_pairs::<u64, u64>(g, Dist::FewUnique, n, &o);
                check_pairs::<u32, u32>(g, Dist::FewUnique, n, &stable);
                check_pairs::<u64, u64>(g, Dist::AllEqual, n, &stable);
                check_argsort::<f32>(g, Dist::FewUnique, n, &stable);
            }
        }
    }
}

fn stable_pairs_every_payload_and_key_type(g: &Gpu) {
    let o = opts(Algorithm::MergeSort, Order::Descending, true);
    every_payload::<i32>(g, Dist::FewUnique, 50_000, &o);
    every_payload::<f32>(g, Dist::AllEqual, 50_000, &o);
    every_payload::<u64>(g, Dist::FewUnique, 50_000, &o);
    every_payload::<f64>(g, Dist::Gaussian, 50_000, &o);
}

fn argsort_every_algorithm_size_and_order(g: &Gpu) {
    for a in Algorithm::ALL {
        for order in [Order::Ascending, Order::Descending] {
            for stable in [false, true] {
                let o = opts(a, order, stable);
                for &n in SIZES {
                    check_argsort::<u32>(g, Dist::FewUnique, n, &o);
                }
                for dist in [Dist::Uniform, Dist::AllEqual, Dist::Sorted, Dist::Reverse] {
                    check_argsort::<f32>(g, dist, 20_001, &o);
                    check_argsort::<i64>(g, dist, 20_001, &o);
                }
                check_argsort::<i32>(g, Dist::FewUnique, 65_536, &o);
                check_argsort::<u64>(g, Dist::FewUnique, 65_536, &o);
                check_argsort::<f64>(g, Dist::Uniform, 65_536, &o);
            }
        }
    }
}

fn segments_with_64_bit_payloads(g: &Gpu) {
    for seg in [1, 31, 32, 100, 256, 512, 1000, 4096, 8192] {
        for n in [0, 1, seg, 10 * seg + 3, 50_000] {
            for order in [Order::Ascending, Order::Descending] {
                check_segment_pairs::<u32, u64>(g, Dist::FewUnique, n, seg, order);
                check_segment_pairs::<u64, u64>(g, Dist::Uniform, n, seg, order);
                check_segment_pairs::<f32, f64>(g, Dist::Uniform, n, seg, order);
                check_segment_pairs::<i64, i32>(g, Dist::FewUnique, n, seg, order);
            }
        }
    }
}

/// Segmented key-value sort with tagged payloads: each segment's keys as the
/// CPU reference's, each payload from the same segment and with its key.
fn check_segment_pairs<K: SortKey, V: Tag>(g: &Gpu, dist: Dist, n: usize, seg: usize, order: Order)
where
    K::Bits: FromPattern,
{
    let what = format!("segments of {seg} {} keys, {} payload, n={n}", K::NAME, std::any::type_name::<V>());
    let input: Vec<K> = keys(dist, n, seed(dist.name(), n + seg));
    let tags: Vec<V> = (0..n).map(V::tag).collect();
    let mut dk = g.stream().clone_htod(&input).unwrap();
    let mut dv = g.stream().clone_htod(&tags).unwrap();
    g.sort_segments_pairs(&mut dk, &mut dv, seg, order).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
    let mut want = input.clone();
    cpu::sort_segments(&mut want, seg, order);
    assert!(
        ok.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
        "{what}: keys differ from the CPU reference"
    );
    let mut seen = vec![false; n];
    for (i, (k, v)) in ok.iter().zip(&ov).enumerate() {
        let p = v.position().filter(|&p| p < n).unwrap_or_else(|| panic!("{what}: payload {v:?} at {i} is no tag"));
        assert_eq!(p / seg, i / seg, "{what}: payload of position {p} left its segment");
        assert!(!std::mem::replace(&mut seen[p], true), "{what}: payload of position {p} repeated");
        assert_eq!(input[p].to_bits(), k.to_bits(), "{what}: payload of position {p} travelled with the wrong key");
    }
}

fn millions(g: &Gpu) {
    let n = 3_000_017;
    check_pairs::<u32, u64>(g, Dist::Uniform, n, &opts(Algorithm::MergeSort, Order::Ascending, false));
    check_pairs::<u64, u64>(g, Dist::Gaussian, n, &opts(Algorithm::MergeSort, Order::Descending, false));
    check_pairs::<u32, u32>(g, Dist::FewUnique, n, &opts(Algorithm::MergeSort, Order::Ascending, true));
    check_pairs::<f64, u64>(g, Dist::FewUnique, n, &opts(Algorithm::Bitonic, Order::Descending, true));
    check_argsort::<f32>(g, Dist::FewUnique, 1 << 22, &opts(Algorithm::MergeSort, Order::Ascending, true));
    check_argsort::<u32>(g, Dist::Uniform, 1 << 22, &opts(Algorithm::MergeSort, Order::Descending, false));
}

/// The default's stable sorts where it moves 4-byte values with their keys
/// (the merge sort's stable step 1) from where it scans the input's order,
/// and `u64` keys on both sides of where it ranks them for the sample sort:
/// duplicate-heavy inputs, and descending ones with equal neighbours (which
/// must not be reversed).
fn stable_defaults_in_the_millions(g: &Gpu) {
    for order in [Order::Ascending, Order::Descending] {
        let o = opts(Algorithm::Auto, order, true);
        for dist in [Dist::FewUnique, Dist::Zipf, Dist::Dominant, Dist::Reverse, Dist::AllEqual] {
            check_pairs::<u32, u32>(g, dist, (1 << 24) + 3, &o);
        }
        for n in [(1 << 21) + 7, (1 << 22) + 7] {
            check_pairs::<u64, i32>(g, Dist::FewUnique, n, &o);
            check_pairs::<f64, f32>(g, Dist::Dominant, n, &o);
        }
        check_pairs::<i32, u64>(g, Dist::FewUnique, (1 << 22) + 1, &o);
        check_argsort::<f32>(g, Dist::Zipf, (1 << 22) + 1, &o);
    }
}

fn host_slices_and_errors(g: &Gpu) {
    let stable = opts(Algorithm::MergeSort, Order::Ascending, true);
    assert_eq!(g.argsort_slice(&[2.5f32, -1.0, 2.5, 0.0], &stable).unwrap(), [1, 3, 0, 2]);
    assert_eq!(g.argsort_slice::<u32>(&[], &stable).unwrap(), Vec::<u32>::new());
    let mut k = vec![2u32, 1, 2, 1];
    let mut v = vec![10u64, 11, 12, 13];
    g.sort_pairs_slice(&mut k, &mut v, &stable).unwrap();
    assert_eq!((k, v), (vec![1, 1, 2, 2], vec![11, 13, 10, 12]));
    // A wrong-length output buffer is refused before anything runs.
    let keys = g.stream().clone_htod(&[3u32, 1, 2]).unwrap();
    let mut short = g.stream().alloc_zeros::<u32>(2).unwrap();
    let r = g.argsort_into(&keys, &mut short, &stable);
    assert!(matches!(r, Err(warpsort::Error::LengthMismatch { keys: 3, values: 2 })));
    assert_eq!(g.stream().clone_dtoh(&keys).unwrap(), [3, 1, 2]);
    // Mismatched lengths leave a stable sort's inputs as they were.
    let mut k = vec![3u32, 1, 2];
    let mut v = vec![0u64, 1];
    assert!(g.sort_pairs_slice(&mut k, &mut v, &stable).is_err());
    assert_eq!((k, v), (vec![3, 1, 2], vec![0, 1]));
}

fn sixteen_bit_keys(g: &Gpu) {
    for a in Algorithm::ALL {
        for order in [Order::Ascending, Order::Descending] {
            let o = opts(a, order, false);
            for &n in SIZES {
                check_sort::<u16>(g, Dist::Uniform, n, &o);
                check_sort::<i16>(g, Dist::Uniform, n, &o);
            }
            for dist in Dist::ALL {
                check_sort::<i16>(g, dist, 70_001, &o);
                check_sort_pairs::<u16>(g, dist, 70_001, &o);
            }
            check_pairs::<i16, u64>(g, Dist::FewUnique, 70_001, &o);
            let stable = opts(a, order, true);
            check_pairs::<u16, u32>(g, Dist::FewUnique, 70_001, &stable);
            check_pairs::<i16, f64>(g, Dist::Uniform, 4097, &stable);
            check_argsort::<i16>(g, Dist::Uniform, 70_001, &o);
            check_argsort::<u16>(g, Dist::FewUnique, 70_001, &stable);
        }
    }
    for seg in [1, 32, 100, 512, 4096] {
        check_segments::<i16>(g, Dist::Uniform, 50_003, seg, Order::Descending);
        check_segments::<u16>(g, Dist::FewUnique, 50_003, seg, Order::Ascending);
        check_segment_pairs::<i16, u64>(g, Dist::Uniform, 50_003, seg, Order::Ascending);
    }
    // Segments given by offsets: every class (chunks, warp, block, long).
    let input: Vec<i16> = keys(Dist::Uniform, 30_000, 5);
    let offs: Vec<u32> = vec![0, 0, 1, 33, 600, 5000, 5001, 10_000, 30_000];
    let d_off = g.stream().clone_htod(&offs).unwrap();
    for order in [Order::Ascending, Order::Descending] {
        let mut d = g.stream().clone_htod(&input).unwrap();
        g.sort_segments_by_offsets(&mut d, &d_off, order).unwrap();
        let mut want = input.clone();
        for w in offs.windows(2) {
            cpu::sort(&mut want[w[0] as usize..w[1] as usize], order);
        }
        assert_eq!(g.stream().clone_dtoh(&d).unwrap(), want, "i16 segments by offsets, {order:?}");
        assert!(g.is_sorted_segments(&d, warpsort::Segments::Offsets(&d_off), order).unwrap());
    }
    let mut v = vec![3i16, i16::MIN, -1, i16::MAX, 0];
    g.sort_slice(&mut v).unwrap();
    assert_eq!(v, [i16::MIN, -1, 0, 3, i16::MAX]);
}

fn segments_by_offsets_with_64_bit_payloads(g: &Gpu) {
    let n = 40_000;
    let offs: Vec<u32> = vec![0, 0, 1, 33, 600, 5000, 5001, 10_000, 40_000];
    let d_off = g.stream().clone_htod(&offs).unwrap();
    let input: Vec<u64> = keys(Dist::FewUnique, n, 9);
    let tags: Vec<f64> = (0..n).map(<f64 as Tag>::tag).collect();
    for order in [Order::Ascending, Order::Descending] {
        let mut dk = g.stream().clone_htod(&input).unwrap();
        let mut dv = g.stream().clone_htod(&tags).unwrap();
        g.sort_segments_by_offsets_pairs(&mut dk, &mut dv, &d_off, order).unwrap();
        let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
        for w in offs.windows(2) {
            let (lo, hi) = (w[0] as usize, w[1] as usize);
            let mut want = input[lo..hi].to_vec();
            cpu::sort(&mut want, order);
            assert_eq!(ok[lo..hi], want[..], "keys of segment {lo}..{hi}, {order:?}");
            for (i, v) in ov[lo..hi].iter().enumerate() {
                let p = v.position().unwrap_or(usize::MAX);
                assert!((lo..hi).contains(&p), "payload at {} from outside its segment", lo + i);
                assert_eq!(input[p], ok[lo + i], "payload of position {p} travelled with the wrong key");
            }
        }
    }
}
