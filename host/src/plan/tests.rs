//! Properties of the plans that must hold on every GPU (every tuning table).

use super::*;
use crate::options::{MergeKernel, MergeSortConfig, PaperConfig, Presorted, TileSort};
use crate::policy::{ALL, HOPPER};

fn options() -> Vec<SortOptions> {
    let mut all: Vec<SortOptions> = Algorithm::ALL.iter().map(|&a| SortOptions::algorithm(a)).collect();
    for (tile_sort, merge, tile) in [
        (TileSort::BlockBitonic, MergeKernel::Block, 4096),
        (TileSort::WarpMerge, MergeKernel::WarpBitonic, 8192),
        (TileSort::WarpMerge, MergeKernel::Block, 2048),
    ] {
        let merge_sort = MergeSortConfig { tile, tile_sort, merge, ..Default::default() };
        all.push(SortOptions { merge_sort, ..Default::default() });
    }
    let paper = PaperConfig { sequences: 64, buffer: 128, ..Default::default() };
    all.push(SortOptions { algorithm: Algorithm::WarpsortPaper, paper, ..Default::default() });
    all
}

fn shapes() -> Vec<SortShape> {
    let mut s: Vec<SortShape> = [(2, 0), (4, 0), (4, 4), (4, 8), (8, 0), (8, 4), (8, 8), (2, 8)]
        .into_iter()
        .map(|(k, v)| SortShape::new(k, v))
        .collect();
    s.push(SortShape::new(4, 0).ranked());
    s.push(SortShape::new(8, 0).ranked());
    s
}

/// Storage reserved for `n` items serves every shorter sort: the plans'
/// storage grows with `n`, for every GPU, option and item shape.
#[test]
fn temporary_storage_grows_with_n() {
    let mut sizes: Vec<usize> = vec![0, 1, 2, 255, 256, 257, 4095, 4096, 4097, 8192, 8193, 16384, 16385];
    sizes.extend((10..=26).flat_map(|p| [(1usize << p) - 1, 1 << p, (1 << p) + 1, 3 << (p - 1)]));
    // Where `Auto` leaves the sample sort for the merge sort again.
    sizes.extend([3 << 25, (3 << 25) + 1, 1 << 27, 3 << 26, (3 << 26) + 1, 1 << 28, (1 << 28) + 1]);
    sizes.sort();
    for p in ALL {
        for o in options() {
            for shape in shapes() {
                let mut last = 0;
                for &n in &sizes {
                    let plan = SortPlan::new(&o, shape, n, p).unwrap();
                    assert!(
                        plan.temp_bytes >= last,
                        "{}: {o:?} {shape:?}: {} bytes for n = {n} after {last}",
                        p.name,
                        plan.temp_bytes
                    );
                    assert!(plan.temp_bytes <= SortPlan::temp_bytes_any_gpu(&o, shape, n));
                    last = plan.temp_bytes;
                }
            }
        }
    }
}

/// The merge sort needs a second buffer of the items, a 32nd of them as
/// samples and a word per merge window: `n + c` of the paper's `2n + c`;
/// nothing up to one tile; the bitonic sorts nothing.
#[test]
fn temporary_storage_is_n_plus_c() {
    let o = SortOptions::default();
    for p in ALL {
        assert_eq!(SortPlan::new(&o, SortShape::new(4, 0), 8192, p).unwrap().temp_bytes, 0);
        let n = 1 << 20;
        let keys = SortPlan::new(&o, SortShape::new(4, 0), n, p).unwrap().temp_bytes;
        assert!(keys >= n * 4 && keys < n * 4 + n / 4, "{keys}");
        let pairs = SortPlan::new(&o, SortShape::new(8, 4), n, p).unwrap().temp_bytes;
        assert!(pairs >= n * 12 && pairs < n * 12 + n, "{pairs}");
        let bitonic = SortOptions::algorithm(Algorithm::Bitonic);
        assert_eq!(SortPlan::new(&bitonic, SortShape::new(4, 4), n, p).unwrap().temp_bytes, 0);
        // 16-bit keys: their widened copy, then the sort of 32-bit patterns.
        let narrow = SortPlan::new(&o, SortShape::new(2, 0), n, p).unwrap();
        assert_eq!(narrow.temp_bytes, n * 4 + keys);
        assert_eq!((narrow.widened, narrow.algo_at), (Some(0), n * 4));
    }
}

/// `Auto` runs the sample sort where the GPU's table lists the items and
/// `n`, the merge sort elsewhere; either way the merge sort is planned (the
/// sample sort gives way to it while a graph is captured), and the scan of
/// the order comes first from the policy's size on. Other algorithms run as
/// asked.
#[test]
fn auto_follows_the_table() {
    let o = SortOptions::default();
    for p in ALL {
        for shape in shapes() {
            let kind = shape.kind;
            let range = p.sample_range(kind);
            for n in [2, 1000, 1 << 20, 3 << 20, 1 << 22, 3 << 21, 1 << 23, 1 << 24, 1 << 25, 1 << 26, 1 << 28] {
                let plan = SortPlan::new(&o, shape, n, p).unwrap();
                let sample = range.is_some_and(|r| (r.min_items..=r.max_items).contains(&n));
                match plan.algo {
                    Algo::Sample { merge, .. } => {
                        assert!(sample, "{kind:?} n={n}");
                        assert_eq!(
                            Some(merge),
                            SortPlan::new(&SortOptions::algorithm(Algorithm::MergeSort), shape, n, p)
                                .unwrap()
                                .algo
                                .merge()
                                .copied()
                        );
                    }
                    Algo::MergeSort(_) => assert!(!sample, "{kind:?} n={n}"),
                    other => panic!("{kind:?} n={n}: {other:?}"),
                }
                assert_eq!(plan.presorted.is_some(), n >= p.presorted_min_items, "{kind:?} n={n}");
                let never = SortOptions { presorted: Presorted::Never, ..o };
                assert_eq!(SortPlan::new(&never, shape, n, p).unwrap().presorted, None);
                let no_waits = SortPlan::new(&o.without_waits(), shape, n, p).unwrap();
                assert!(matches!(no_waits.algo, Algo::MergeSort(_)) && no_waits.presorted.is_none());
            }
        }
        let kind_at = |kb, vb, n| SortPlan::new(&o, SortShape::new(kb, vb), n, p).unwrap().algo;
        assert!(matches!(kind_at(8, 0, 1 << 24), Algo::Sample { .. }), "8-byte keys");
        assert!(matches!(kind_at(4, 0, 1 << 26), Algo::Sample { .. }), "4-byte keys at 2^26");
        assert!(matches!(kind_at(4, 0, 1 << 20), Algo::MergeSort(_)), "4-byte keys at 2^20");
        let stable = SortPlan::new(&o, SortShape::new(4, 0).ranked(), 1 << 26, p).unwrap();
        assert!(matches!(stable.algo, Algo::Sample { .. }), "the stable sort of 4-byte keys at 2^26");
        let stable = SortPlan::new(&o, SortShape::new(4, 0).ranked(), 1 << 20, p).unwrap();
        assert!(matches!(stable.algo, Algo::MergeSort(_)), "the stable sort of 4-byte keys at 2^20");
        for algorithm in [Algorithm::MergeSort, Algorithm::Bitonic, Algorithm::WarpsortPaper] {
            let plan = SortPlan::new(&SortOptions::algorithm(algorithm), SortShape::new(8, 0), 1 << 24, p).unwrap();
            assert!(!matches!(plan.algo, Algo::Sample { .. }), "{algorithm:?}");
        }
    }
}

/// The launches a plan lists are the ones its launchers make: step 1, and
/// with merge passes the partition and the merge.
#[test]
fn plans_list_their_launches() {
    let o = SortOptions::default();
    let mut l = Vec::new();
    SortPlan::new(&o, SortShape::new(4, 0), 1000, &crate::policy::HOPPER).unwrap().launches(&mut l);
    assert_eq!(l.iter().map(|(k, _)| k.name()).collect::<Vec<_>>(), ["merge_tile_sort_u32"]);
    l.clear();
    SortPlan::new(&o, SortShape::new(4, 8), 1 << 21, &crate::policy::HOPPER).unwrap().launches(&mut l);
    let names: Vec<_> = l.iter().map(|(k, s)| (k.name(), s.block)).collect();
    assert_eq!(
        names,
        [
            ("merge_tile_sort_u32_u64".to_string(), 256),
            ("merge_partition_u32_u64".into(), 32),
            ("block_merge16_u32_u64".into(), 128)
        ]
    );
    // Fewer than two items: nothing runs, but the options are checked.
    let bad = SortOptions { merge_sort: MergeSortConfig { tile: 1000, ..Default::default() }, ..o };
    for n in [0, 1] {
        assert!(SortPlan::new(&bad, SortShape::new(4, 0), n, &crate::policy::HOPPER).is_err());
        assert_eq!(SortPlan::new(&o, SortShape::new(4, 0), n, &crate::policy::HOPPER).unwrap().algo, Algo::Nothing);
    }
}

/// Stable key-value sorts: 4-byte values move with their keys where the
/// merge sort keeps ties in order by itself (its stable step 1) and where
/// the sample sort does (its stable buckets), the values are gathered by
/// ranked positions elsewhere (8-byte values, the bitonic tiles or merges);
/// a plan of unranked pairs that could not keep them is refused, never
/// unstable.
#[test]
fn stable_pairs_keep_ties_without_ranks_where_the_merge_sort_can() {
    use permute::PairsPlan;
    let stable = SortOptions { stable: true, ..Default::default() };
    let in_place =
        |opts: &SortOptions, kb, vb, n| match PairsPlan::new(opts, SortShape::new(kb, vb), n, &HOPPER).unwrap() {
            PairsPlan::WithKeys { plan, .. } => match plan.algo {
                Algo::MergeSort(m) => Some(if m.tile.stable { "merge, stable step 1" } else { "merge" }),
                Algo::Sample { sample, merge } => {
                    assert!(sample.buckets.stable && merge.tile.stable, "stable buckets, long ones too");
                    Some("sample, stable buckets")
                }
                _ => None,
            },
            PairsPlan::Gathered { plan, .. } => {
                assert!(plan.stable, "ranked positions");
                None
            }
        };
    let u64_sample = HOPPER.sample_range(ItemKind::U64Rank).unwrap();
    let (merge, sample) = (Some("merge, stable step 1"), Some("sample, stable buckets"));
    assert_eq!(in_place(&stable, 4, 4, 1 << 26), sample);
    assert_eq!(in_place(&stable, 4, 4, 1 << 20), merge);
    assert_eq!(in_place(&stable, 4, 4, 5), merge);
    assert_eq!(in_place(&stable, 8, 4, u64_sample.min_items - 1), merge);
    assert_eq!(in_place(&stable, 8, 4, u64_sample.min_items), sample);
    assert_eq!(in_place(&stable, 8, 4, u64_sample.max_items + 1), merge);
    let by_sample = SortOptions { algorithm: Algorithm::SampleSort, ..stable };
    assert_eq!(in_place(&by_sample, 4, 4, 1 << 20), sample);
    assert_eq!(in_place(&stable, 4, 8, 1 << 20), None);
    assert_eq!(in_place(&by_sample, 4, 8, 1 << 20), None, "8-byte values: ranked positions");
    let warp =
        SortOptions { merge_sort: MergeSortConfig { merge: MergeKernel::WarpBitonic, ..Default::default() }, ..stable };
    assert_eq!(in_place(&warp, 4, 4, 1 << 20), None);
    assert_eq!(in_place(&SortOptions { algorithm: Algorithm::Bitonic, ..stable }, 4, 4, 1 << 20), None);
    // The gathered positions' merge sort keeps their ties by its stable step 1 too.
    let PairsPlan::Gathered { plan, .. } = PairsPlan::new(&stable, SortShape::new(4, 8), 1 << 20, &HOPPER).unwrap()
    else {
        panic!("8-byte values are gathered")
    };
    assert!(matches!(plan.inner.algo, Algo::MergeSort(m) if m.tile.stable));
    // Unranked pairs the plan could not keep in order: refused.
    for opts in [warp, SortOptions { algorithm: Algorithm::Bitonic, ..stable }] {
        assert!(SortPlan::new(&opts, SortShape::new(4, 4), 1 << 20, &HOPPER).is_err());
    }
    // Storage grows across the sample sort's top for stable `u64` keys too.
    let t = |n| PairsPlan::new(&stable, SortShape::new(8, 4), n, &HOPPER).unwrap().temp_bytes();
    assert!(t(u64_sample.max_items + 1) >= t(u64_sample.max_items));
}

/// How key-value sorts move their values: once at the end when stable, and
/// when positions make the merge sort's items narrower (4-byte keys with
/// 8-byte values) from a size on when it merges; with the keys otherwise.
/// The gathered values reuse the sort's storage, so the storage stays that
/// of the sort that moves them with the keys, and it grows with `n` across
/// the switch.
#[test]
fn pairs_move_their_values_as_planned() {
    use permute::PairsPlan;
    let o = SortOptions::default();
    let stable = SortOptions { stable: true, ..o };
    let gathered = |opts: &SortOptions, kb, vb, n, p| match PairsPlan::new(opts, SortShape::new(kb, vb), n, p).unwrap()
    {
        PairsPlan::Gathered { plan, .. } => Some((plan.stable, plan.inner.shape.kind)),
        PairsPlan::WithKeys { .. } => None,
    };
    for p in ALL {
        let n = 1 << 20;
        assert_eq!(gathered(&o, 4, 8, n, p), Some((false, ItemKind::U32U32)));
        assert_eq!(gathered(&o, 2, 8, n, p), Some((false, ItemKind::U32U32)));
        let from = p.gather_values_min_items;
        assert_eq!(gathered(&o, 4, 8, from - 1, p), None, "below the policy's size");
        assert_eq!(gathered(&o, 4, 8, from, p), Some((false, ItemKind::U32U32)));
        for (kb, vb) in [(4, 4), (8, 4), (8, 8), (4, 0)] {
            assert_eq!(gathered(&o, kb, vb, n, p), None, "{kb}+{vb}");
        }
        assert_eq!(gathered(&SortOptions::algorithm(Algorithm::Bitonic), 4, 8, n, p), None);
        assert_eq!(gathered(&stable, 8, 8, n, p), Some((true, ItemKind::U64Rank)));
        assert_eq!(gathered(&stable, 4, 8, 3, p), Some((true, ItemKind::U32Rank)));
        assert_eq!(gathered(&stable, 4, 0, n, p), None);

        let with_keys = SortPlan::new(&o, SortShape::new(4, 8), n, p).unwrap().temp_bytes;
        let PairsPlan::Gathered { plan, temp_bytes } = PairsPlan::new(&o, SortShape::new(4, 8), n, p).unwrap() else {
            panic!("u32 keys with u64 values at 2^20 gather their values")
        };
        assert!(plan.temp_bytes <= with_keys && temp_bytes == with_keys, "{} > {with_keys}", plan.temp_bytes);

        let mut sizes: Vec<usize> = vec![0, 1, 2, 4095, 4096, 4097, 8191, 8192, 8193, 16385, from - 1, from + 1];
        sizes.extend((14..=24).flat_map(|p| [(1usize << p) - 1, 1 << p, (1 << p) + 1]));
        sizes.sort();
        for opts in options().into_iter().chain([stable]) {
            for (kb, vb) in [(4, 8), (2, 8), (8, 8), (4, 4), (8, 4)] {
                let mut last = 0;
                for &n in &sizes {
                    let t = PairsPlan::new(&opts, SortShape::new(kb, vb), n, p).unwrap().temp_bytes();
                    assert!(t >= last, "{}: {opts:?} {kb}+{vb}: {t} bytes for n = {n} after {last}", p.name);
                    assert!(t <= PairsPlan::temp_bytes_any_gpu(&opts, SortShape::new(kb, vb), n));
                    last = t;
                }
            }
        }
    }
}
