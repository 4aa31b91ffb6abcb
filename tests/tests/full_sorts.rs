//! The full-array sorts (GPU-Warpsort, fused and naive bitonic, the sample sort) against the CPU
//! reference over sizes, distributions, key types, orders and key-value.

use warpsort::{Algorithm, Gpu, MergeKernel, MergeSortConfig, Order, PaperConfig, PaperLoads, SortOptions, TileSort};
use warpsort_testkit::{Dist, LARGE, SIZES, assert_pairs, check_sort, check_sort_pairs, keys, seed};

warpsort_testkit::tests_main! {
    gpu: [
        every_size,
        every_distribution,
        every_key_type_and_order,
        millions,
        host_slices_and_errors_lose_nothing,
        a_first_merge_sizes,
        every_warpsort_configuration,
        every_paper_configuration,
        small_wide_keys,
    ],
}

fn opts(algorithm: Algorithm, order: Order) -> SortOptions {
    SortOptions { algorithm, order, ..Default::default() }
}

fn every_size(g: &Gpu) {
    for a in Algorithm::ALL {
        for &n in SIZES {
            check_sort::<u32>(g, Dist::Uniform, n, &opts(a, Order::Ascending));
            check_sort_pairs::<u32>(g, Dist::Uniform, n, &opts(a, Order::Ascending));
        }
    }
}

fn every_distribution(g: &Gpu) {
    for a in Algorithm::ALL {
        for dist in Dist::ALL {
            check_sort::<u32>(g, dist, 300_001, &opts(a, Order::Ascending));
            check_sort_pairs::<u32>(g, dist, 300_001, &opts(a, Order::Ascending));
        }
    }
}

fn every_key_type_and_order(g: &Gpu) {
    for a in Algorithm::ALL {
        for order in [Order::Ascending, Order::Descending] {
            for dist in [Dist::Uniform, Dist::FewUnique, Dist::Sorted] {
                let o = opts(a, order);
                check_sort::<i32>(g, dist, 70_000, &o);
                check_sort::<f32>(g, dist, 70_000, &o);
                check_sort::<u64>(g, dist, 70_000, &o);
                check_sort::<i64>(g, dist, 70_000, &o);
                check_sort::<f64>(g, dist, 70_000, &o);
                check_sort_pairs::<f32>(g, dist, 70_000, &o);
                check_sort_pairs::<u64>(g, dist, 70_000, &o);
            }
        }
    }
}

/// One sort of 64-bit keys alone and with 32- and 64-bit values by each
/// algorithm, small (for compute-sanitizer: the networks' one-compare
/// exchanges of wide keys, in every kernel family that sorts them).
fn small_wide_keys(g: &Gpu) {
    for a in Algorithm::ALL {
        let o = opts(a, Order::Ascending);
        check_sort::<u64>(g, Dist::FewUnique, 70_001, &o);
        check_sort_pairs::<u64>(g, Dist::Uniform, 70_001, &o);
        check_sort_pairs::<f32>(g, Dist::Zipf, 70_001, &opts(a, Order::Descending));
        // 16-byte items: a u64 key and a u64 value (its input position).
        let input: Vec<u64> = keys(Dist::FewUnique, 70_001, seed("wide", 70_001));
        let vals: Vec<u64> = (0..input.len() as u64).collect();
        let (mut dk, mut dv) = (g.stream().clone_htod(&input).unwrap(), g.stream().clone_htod(&vals).unwrap());
        g.sort_pairs(&mut dk, &mut dv, &o).unwrap_or_else(|e| panic!("{a:?}: {e}"));
        let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
        let ov: Vec<u32> = ov.into_iter().map(|v| u32::try_from(v).unwrap()).collect();
        assert_pairs(&input, &ok, &ov, Order::Ascending, &format!("{a:?} u64 key + u64 value"));
    }
}

fn millions(g: &Gpu) {
    for a in [Algorithm::MergeSort, Algorithm::Bitonic, Algorithm::WarpsortPaper, Algorithm::SampleSort] {
        check_sort::<u32>(g, Dist::Uniform, LARGE, &opts(a, Order::Ascending));
        check_sort_pairs::<u32>(g, Dist::Gaussian, LARGE + 3, &opts(a, Order::Ascending));
    }
    check_sort::<f32>(g, Dist::Staggered, 3_000_017, &opts(Algorithm::MergeSort, Order::Descending));
}

fn host_slices_and_errors_lose_nothing(g: &Gpu) {
    let mut v = vec![5i32, -3, 0, i32::MIN, i32::MAX];
    g.sort_slice(&mut v).unwrap();
    assert_eq!(v, [i32::MIN, -3, 0, 5, i32::MAX]);
    let mut k = vec![3u32, 1, 2];
    let mut vals = vec![0u32, 1];
    let r = g.sort_pairs_slice(&mut k, &mut vals, &SortOptions::default());
    assert!(matches!(r, Err(warpsort::Error::LengthMismatch { keys: 3, values: 2 })));
    assert_eq!((k, vals), (vec![3, 1, 2], vec![0, 1]), "inputs unchanged on error");
}

fn a_first_merge_sizes(g: &Gpu) {
    // Smallest sizes that need one, two and three merge passes.
    for n in [4097, 8192, 8193, 12_288, 16_385] {
        check_sort::<u32>(g, Dist::Uniform, n, &opts(Algorithm::MergeSort, Order::Ascending));
        check_sort_pairs::<u32>(g, Dist::Uniform, n, &opts(Algorithm::MergeSort, Order::Ascending));
    }
}

fn every_warpsort_configuration(g: &Gpu) {
    let merges = [(MergeKernel::WarpBitonic, [4, 8, 16].as_slice()), (MergeKernel::Block, [8, 16].as_slice())];
    for tile in [256, 1024, 2048, 4096, 8192, 16_384] {
        for (merge, ks) in merges {
            let shapes = ks.iter().flat_map(|k| [(k, 0), (k, 64), (k, 512)]);
            let shapes = shapes.flat_map(|(k, t)| [TileSort::WarpMerge, TileSort::BlockBitonic].map(|s| (k, t, s)));
            for (&outputs_per_thread, merge_threads, tile_sort) in shapes {
                let cfg = MergeSortConfig { tile, tile_sort, merge, outputs_per_thread, merge_threads };
                if cfg.validate().is_err() || (merge == MergeKernel::WarpBitonic && merge_threads != 0) {
                    continue;
                }
                let o = SortOptions { merge_sort: cfg, ..Default::default() };
                // 16-byte items (u64 key, u32 value) may need more shared
                // memory than a block gets: refused with the data untouched.
                let probe: Vec<u64> = (0..2 * tile as u64).rev().collect();
                let (mut pk, mut pv) =
                    (g.stream().clone_htod(&probe).unwrap(), g.stream().clone_htod(&vec![7u32; 2 * tile]).unwrap());
                let wide_fits = match g.sort_pairs(&mut pk, &mut pv, &o) {
                    Err(warpsort::Error::BadConfig(_)) => {
                        assert_eq!(g.stream().clone_dtoh(&pk).unwrap(), probe, "{cfg:?}: refused but changed");
                        false
                    }
                    r => {
                        r.unwrap();
                        true
                    }
                };
                for n in [tile + 1, 3 * tile - 5, 100_003] {
                    check_sort::<u32>(g, Dist::Uniform, n, &o);
                    check_sort_pairs::<u32>(g, Dist::FewUnique, n, &o);
                    check_sort::<u64>(g, Dist::Sorted, n, &o);
                    if wide_fits {
                        check_sort_pairs::<u64>(g, Dist::Reverse, n, &o);
                    }
                }
            }
        }
    }
    let mut d = g.stream().clone_htod(&[2u32, 1]).unwrap();
    let bad = SortOptions { merge_sort: MergeSortConfig { tile: 1000, ..Default::default() }, ..Default::default() };
    assert!(matches!(g.sort_with(&mut d, &bad), Err(warpsort::Error::BadConfig(_))));
    assert_eq!(g.stream().clone_dtoh(&d).unwrap(), [2, 1]);
}

fn every_paper_configuration(g: &Gpu) {
    // GPU-Warpsort as published: every buffer width and load pattern, with
    // few sequences and groups so that moderate sizes run all four steps
    // (several step-2 passes, deep step-4 merge trees, groups of equal keys),
    // and with many, so that step 2 alone finishes the sort.
    for buffer in [64, 128] {
        for loads in [PaperLoads::Coalesced, PaperLoads::Reversed] {
            for (sequences, groups, oversampling) in [(2, 2, 1), (4, 16, 4), (64, 300, 3), (1 << 20, 0, 0)] {
                let paper = PaperConfig { buffer, sequences, groups, oversampling, loads };
                let o = SortOptions { algorithm: Algorithm::WarpsortPaper, paper, ..Default::default() };
                for n in [257, 4097, 100_003] {
                    for dist in [Dist::Uniform, Dist::AllEqual, Dist::Sorted, Dist::FewUnique] {
                        check_sort::<u32>(g, dist, n, &o);
                        check_sort_pairs::<u32>(g, dist, n, &o);
                    }
                    check_sort_pairs::<u64>(g, Dist::Reverse, n, &o);
                }
            }
        }
    }
    let bad = SortOptions {
        algorithm: Algorithm::WarpsortPaper,
        paper: PaperConfig { sequences: 3, ..Default::default() },
        ..Default::default()
    };
    let mut d = g.stream().clone_htod(&[2u32, 1]).unwrap();
    assert!(matches!(g.sort_with(&mut d, &bad), Err(warpsort::Error::BadConfig(_))));
    assert_eq!(g.stream().clone_dtoh(&d).unwrap(), [2, 1]);
}
