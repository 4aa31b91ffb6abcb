//! The tune suite: GPU-Warpsort's step-1 tile and merge pass shape against n
//! (the tile sets the number of passes, the parallelism of step 1 at small
//! n), then its parameters at 2^24, and the block merge's shape for wider items.

use warpsort::kernels::config::{BLOCK_MERGE_KEYS_PER_THREAD, MERGE_KEYS_PER_LANE};
use warpsort::{Algorithm, MergeKernel, MergeSortConfig, SortOptions, TileSort};
use warpsort_testkit::data::Dist;

use crate::bench::measure::Position;
use crate::bench::{Bench, Result, input, progress};

/// One tuned configuration's row: `K` keys, `V` values when `pairs`.
fn row<K: warpsort::SortKey, V: Position>(
    b: &mut Bench,
    name: String,
    cfg: MergeSortConfig,
    pairs: bool,
    keys: &[K],
) -> Result<()> {
    let o = SortOptions { merge_sort: cfg, ..SortOptions::algorithm(Algorithm::MergeSort) };
    b.sort_row_with::<K, V>("tune", name, o, Dist::Uniform, pairs, keys)
}

/// Runs the suite.
pub fn tune(b: &mut Bench) -> Result<()> {
    let ns: &[usize] = if b.opts.quick { &[1 << 20, 1 << 24] } else { &[1 << 20, 1 << 22, 1 << 24, 1 << 26] };
    for &n in ns {
        progress(&format!("GPU-Warpsort step-1 tile and merge shape, n = 2^{}", n.trailing_zeros()));
        let keys_in = input::<u32>(Dist::Uniform, n);
        for pairs in [false, true] {
            let k = if pairs { 8 } else { 16 };
            for tile in [4096usize, 8192, 16_384] {
                for t in [128, 256] {
                    let cfg = MergeSortConfig {
                        tile,
                        tile_sort: TileSort::WarpMerge,
                        merge: MergeKernel::Block,
                        outputs_per_thread: k,
                        merge_threads: t,
                    };
                    let name = format!("warpsort tile={tile} merge=Block k={k} threads={t}");
                    // A shape the GPU refuses (registers, shared memory) is reported, not fatal.
                    if let Err(e) = row::<u32, u32>(b, name.clone(), cfg, pairs, &keys_in) {
                        println!("tune      {name}: not run: {e}");
                    }
                }
            }
        }
    }
    let n = 1 << 24;
    progress("GPU-Warpsort parameters, n = 2^24");
    let keys_in = input::<u32>(Dist::Uniform, n);
    let step1 = [(TileSort::BlockBitonic, &[4096usize, 8192][..]), (TileSort::WarpMerge, &[4096, 8192][..])];
    for pairs in [false, true] {
        for (tile_sort, tiles) in step1 {
            for &tile in tiles {
                for (k, t) in [(16, 128), (8, 128)] {
                    let cfg = MergeSortConfig {
                        tile,
                        tile_sort,
                        merge: MergeKernel::Block,
                        outputs_per_thread: k,
                        merge_threads: t,
                    };
                    let name = format!("warpsort tile={tile} step1={tile_sort:?} merge=Block k={k} threads={t}");
                    row::<u32, u32>(b, name, cfg, pairs, &keys_in)?;
                }
            }
        }
        // The warp bitonic merge of merge-path windows, for reference.
        for k in MERGE_KEYS_PER_LANE {
            let cfg = MergeSortConfig { merge: MergeKernel::WarpBitonic, outputs_per_thread: k, ..Default::default() };
            row::<u32, u32>(b, format!("warpsort merge=WarpBitonic k={k}"), cfg, pairs, &keys_in)?;
        }
    }
    // Wider items: 8-byte keys, and 16-byte pairs (u32 key, u64 value),
    // whose shared memory per block doubles and quadruples.
    let keys64 = input::<u64>(Dist::Uniform, n);
    for k in BLOCK_MERGE_KEYS_PER_THREAD {
        for t in [128, 256] {
            let cfg = MergeSortConfig { outputs_per_thread: k, merge_threads: t, ..Default::default() };
            let name = format!("warpsort merge=Block k={k} threads={t}");
            row::<u64, u32>(b, name.clone(), cfg, false, &keys64)?;
            row::<u32, u64>(b, name, cfg, true, &keys_in)?;
        }
    }
    Ok(())
}
