//! Properties of the plans that must hold on every GPU (every tuning table).

use super::*;
use crate::options::{MergeKernel, MergeSortConfig, PaperConfig, TileSort};
use crate::policy::ALL;

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

/// The launches a plan lists are the ones its launchers make: step 1, and
/// with merge passes the partition and the merge.
#[test]
fn plans_list_their_launches() {
    let o = SortOptions::default();
    let mut l = Vec::new();
    SortPlan::new(&o, SortShape::new(4, 0), 1000, &crate::policy::HOPPER).unwrap().launches(&mut l);
    assert_eq!(l.iter().map(|(k, _)| k.name()).collect::<Vec<_>>(), ["merge_tile_sort_u32"]);
    l.clear();
    SortPlan::new(&o, SortShape::new(4, 8), 1 << 22, &crate::policy::HOPPER).unwrap().launches(&mut l);
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
