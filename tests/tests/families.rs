//! One small sort through every kernel family, each against the CPU
//! reference: short enough to run under compute-sanitizer's memcheck,
//! racecheck and synccheck (`compute-sanitizer --tool racecheck
//! ./families-* --test-threads=1`).

use warpsort::{
    Algorithm, Gpu, MergeKernel, MergeSortConfig, Order, Presorted, SegmentKernel, SortKey, SortOptions, TileSort,
};
use warpsort_testkit::data::{random_offsets, sorted_runs};
use warpsort_testkit::{Dist, check_sort, check_sort_pairs, cpu, keys};

warpsort_testkit::tests_main! {
    gpu: [merge_sorts, sample_sort, presorted_input, bitonic_and_paper, segmented_family, permutations_and_checks],
}

/// Two tiles' worth and more: step 1, partitions and merge passes.
const N: usize = 20_000;

fn merge_sorts(g: &Gpu) {
    let configs = [
        MergeSortConfig::default(),
        MergeSortConfig { tile_sort: TileSort::BlockBitonic, tile: 4096, ..Default::default() },
        MergeSortConfig { merge: MergeKernel::WarpBitonic, ..Default::default() },
    ];
    for merge_sort in configs {
        let o = SortOptions { merge_sort, ..Default::default() };
        check_sort::<u32>(g, Dist::Uniform, N, &o);
        check_sort_pairs::<u64>(g, Dist::FewUnique, N, &SortOptions { order: Order::Descending, ..o });
        // Stable: values with their keys (the stable step 1), or ranked positions.
        check_sort_pairs::<u32>(g, Dist::FewUnique, N, &SortOptions { stable: true, ..o });
    }
    check_sort::<i16>(g, Dist::Gaussian, N, &SortOptions::default());
    check_sort::<f64>(g, Dist::Uniform, N, &SortOptions { stable: true, ..Default::default() });
}

/// The sample sort's passes (sampling, counts, scan, scatter) and its
/// buckets' kernels: keys, and stable pairs.
fn sample_sort(g: &Gpu) {
    let o = SortOptions::algorithm(Algorithm::SampleSort);
    check_sort::<u32>(g, Dist::Uniform, 5 * N, &o);
    check_sort_pairs::<u32>(g, Dist::FewUnique, 5 * N, &SortOptions { stable: true, ..o });
}

/// The order scan, the reversal and the merge of runs (sorts that scan).
fn presorted_input(g: &Gpu) {
    let scan = SortOptions { presorted: Presorted::Always, ..Default::default() };
    for dist in [Dist::Sorted, Dist::Reverse, Dist::Uniform] {
        check_sort::<u32>(g, dist, N, &scan);
        check_sort_pairs::<u64>(g, dist, N, &SortOptions { stable: true, ..scan });
    }
    let mut input: Vec<u32> = keys(Dist::Uniform, N, 5);
    sorted_runs(&mut input, 5, Order::Ascending, 5);
    let mut d = g.stream().clone_htod(&input).unwrap();
    g.sort_with(&mut d, &scan).unwrap();
    input.sort_unstable();
    assert_eq!(g.stream().clone_dtoh(&d).unwrap(), input, "five runs merged");
}

fn bitonic_and_paper(g: &Gpu) {
    for algorithm in [Algorithm::Bitonic, Algorithm::BitonicNaive, Algorithm::WarpsortPaper] {
        let o = SortOptions::algorithm(algorithm);
        check_sort::<u32>(g, Dist::Uniform, N, &o);
        check_sort_pairs::<f32>(g, Dist::Uniform, N, &o);
    }
}

fn same_bits<K: SortKey>(a: &[K], b: &[K]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

fn segmented_family(g: &Gpu) {
    let s = g.stream();
    // Rows by every kernel of the family (3,000: a tile of three quarters of
    // a power of two; 5,000: the dual block kernel), and past a block's tile.
    let kernels = [
        (20, Some(SegmentKernel::WarpChunks { chunk: 32 })),
        (200, Some(SegmentKernel::Warp { keys_per_lane: 8 })),
        (400, None),
        (3000, None),
        (5000, None),
        (9000, None),
    ];
    for (len, kernel) in kernels {
        let input: Vec<u32> = keys(Dist::Uniform, N, len as u64);
        let mut d = s.clone_htod(&input).unwrap();
        match kernel {
            Some(k) => g.sort_segments_with(&mut d, len, Order::Ascending, k).unwrap(),
            None => g.sort_segments(&mut d, len, Order::Ascending).unwrap(),
        }
        let mut want = input.clone();
        cpu::sort_segments(&mut want, len, Order::Ascending);
        assert_eq!(s.clone_dtoh(&d).unwrap(), want, "rows of {len}");
    }
    // Offsets of every class, stable pairs, argsort.
    let off = random_offsets(3 * N, 12_000, 7);
    let n = *off.last().unwrap() as usize;
    let input: Vec<f32> = keys(Dist::FewUnique, n, 3);
    let d_off = s.clone_htod(&off).unwrap();
    let mut d = s.clone_htod(&input).unwrap();
    g.sort_segments_by_offsets(&mut d, &d_off, Order::Descending).unwrap();
    let mut want = input.clone();
    cpu::sort_by_offsets(&mut want, &off, Order::Descending);
    assert!(same_bits(&s.clone_dtoh(&d).unwrap(), &want), "offsets");
    let stable = SortOptions { stable: true, ..Default::default() };
    let (mut dk, mut dv) = (s.clone_htod(&input).unwrap(), s.clone_htod(&(0..n as u32).collect::<Vec<_>>()).unwrap());
    g.sort_segments_by_offsets_pairs_with(&mut dk, &mut dv, &d_off, &stable).unwrap();
    let (mut wk, mut wv) = (input.clone(), (0..n as u32).collect::<Vec<_>>());
    cpu::sort_pairs_segments(&mut wk, &mut wv, &cpu::by_offsets(&off), Order::Ascending);
    assert_eq!(s.clone_dtoh(&dv).unwrap(), wv, "stable offsets pairs");
    let p = g.argsort_segments(&s.clone_htod(&input).unwrap(), 700, &stable).unwrap();
    assert_eq!(s.clone_dtoh(&p).unwrap(), cpu::argsort_segments(&input, &cpu::rows(n, 700), Order::Ascending, true));
}

fn permutations_and_checks(g: &Gpu) {
    let s = g.stream();
    let input: Vec<i64> = keys(Dist::FewUnique, N, 9);
    let d = s.clone_htod(&input).unwrap();
    let stable = SortOptions { stable: true, ..Default::default() };
    let p = g.argsort64(&d, &stable).unwrap();
    let got: Vec<usize> = s.clone_dtoh(&p).unwrap().into_iter().map(|x| x as usize).collect();
    assert_eq!(got, cpu::argsort(&input, Order::Ascending));
    let p = g.argsort(&d, &SortOptions::default()).unwrap();
    let got: Vec<usize> = s.clone_dtoh(&p).unwrap().into_iter().map(|x| x as usize).collect();
    assert!(cpu::is_argsort_of(&input, &got, Order::Ascending));
    assert!(!g.is_sorted(&d, Order::Ascending).unwrap());
    let rows = warpsort::Segments::Rows(1000);
    assert!(!g.is_sorted_segments(&d, rows, Order::Ascending).unwrap());
}
