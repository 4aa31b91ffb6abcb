//! The steps suite: GPU-Warpsort's time per kernel (the profiler's CUDA
//! events around each launch) for keys, pairs and 16-byte pairs, step 1
//! alone at every tile size, the sample sort's kernels (`u32` keys and
//! pairs, `u64` keys, `(u32, u32)` keys with their encoding; `u32` keys at
//! 2^28 too), and the fused
//! bitonic sort's kernels.

use warpsort::{Algorithm, KernelTime, MergeSortConfig, Order, Presorted, SortKey, SortOptions, TileSort, Tuple};
use warpsort_testkit::data::Dist;

use crate::bench::measure::Position;
use crate::bench::{Bench, Result, input, progress};

/// Profiles one sort of `keys_in` (keys only, or with the positions as `V`
/// values when `pairs`) after an untimed warm-up of the same sort: the time
/// of each kernel, and whether the result checks out on the GPU.
pub fn profile_sort<K: SortKey, V: Position>(
    b: &Bench,
    keys_in: &[K],
    pairs: bool,
    o: &SortOptions,
) -> Result<(Vec<KernelTime>, bool)> {
    let (gpu, s) = (b.gpu, b.gpu.stream());
    let mut k = s.clone_htod(keys_in)?;
    let mut v = s.clone_htod(&(0..keys_in.len()).map(V::at).collect::<Vec<_>>())?;
    let sort = |k: &mut _, v: &mut _| if pairs { gpu.sort_pairs(k, v, o) } else { gpu.sort_with(k, o) };
    sort(&mut k, &mut v)?; // warm-up
    s.memcpy_htod(keys_in, &mut k)?;
    let before = gpu.check(&k, pairs.then_some(&v), Order::Ascending)?;
    gpu.profile_begin();
    let sorted = sort(&mut k, &mut v);
    let times = gpu.profile_end()?;
    sorted?;
    let verified = gpu.check(&k, pairs.then_some(&v), Order::Ascending)?.confirms(&before);
    Ok((times, verified))
}

/// [`profile_sort`] whose result must verify (a failure of the run otherwise).
fn profiled<K: SortKey, V: Position>(
    b: &mut Bench,
    keys_in: &[K],
    pairs: bool,
    o: &SortOptions,
) -> Result<Vec<KernelTime>> {
    let (times, verified) = profile_sort::<K, V>(b, keys_in, pairs, o)?;
    if !verified {
        b.report.fail(format!("steps: the profiled sort ({o:?}, pairs {pairs}) is wrong"));
    }
    Ok(times)
}

/// Prints a profile's lines: `label` and `what` (keys, pairs, a pair type).
fn print_steps(label: &str, what: &str, times: &[KernelTime]) {
    for t in times {
        println!("steps     {label:<26} {what:<5} {:<28} {:>2} launches {:>9.3} ms", t.kernel, t.launches, t.ms);
    }
}

/// Runs the suite.
pub fn steps(b: &mut Bench) -> Result<()> {
    let n = 1 << 24;
    let keys_in = input::<u32>(Dist::Uniform, n);
    let merge_sort = |cfg| SortOptions { merge_sort: cfg, ..SortOptions::algorithm(Algorithm::MergeSort) };
    let warp_merge = MergeSortConfig { tile: 8192, tile_sort: TileSort::WarpMerge, ..Default::default() };
    for (label, cfg) in [("default", MergeSortConfig::default()), ("step1=WarpMerge tile=8192", warp_merge)] {
        for pairs in [false, true] {
            let what = if pairs { "pairs" } else { "keys" };
            progress(&format!("GPU-Warpsort time per step ({label}), n = 2^24, {what}"));
            let times = profiled::<u32, u32>(b, &keys_in, pairs, &merge_sort(cfg))?;
            print_steps(label, what, &times);
        }
    }
    progress("GPU-Warpsort time per step (default), n = 2^24, u32 key + u64 value");
    let times = profiled::<u32, u64>(b, &keys_in, true, &SortOptions::algorithm(Algorithm::MergeSort))?;
    print_steps("default", "u32:u64", &times);
    // Step 1 alone at every tile size: what each merge round in shared
    // memory costs (the merge passes run with small windows, unreported).
    progress("step 1 per tile size, n = 2^24, keys");
    for (tile_sort, tiles) in [
        (TileSort::WarpMerge, &[512usize, 1024, 2048, 4096, 8192, 16_384][..]),
        (TileSort::BlockBitonic, &[512, 1024, 2048, 4096, 8192][..]),
    ] {
        for &tile in tiles {
            let cfg =
                MergeSortConfig { tile, tile_sort, outputs_per_thread: 8, merge_threads: 64, ..Default::default() };
            // Step 1 alone: no order scan before it (`Presorted::Auto` scans
            // from 2^24 on, and its launch would come first).
            let o = SortOptions { presorted: Presorted::Never, ..merge_sort(cfg) };
            let times = profiled::<u32, u32>(b, &keys_in, false, &o)?;
            if let Some(t) = times.first() {
                println!("steps     step1 tile={tile:<6} {:<36} {:>9.3} ms", t.kernel, t.ms);
            }
        }
    }
    // The sample sort's kernels (issue 15): each beside the copy's rate.
    let sample_sizes: &[usize] = if b.opts.no_sample { &[] } else { &[1 << 24, 1 << 26] };
    for &m in sample_sizes {
        let keys_in = if m == n { keys_in.clone() } else { input::<u32>(Dist::Uniform, m) };
        sample_steps(b, &keys_in, "keys", false)?;
        sample_steps(b, &keys_in, "pairs", true)?;
        drop(keys_in);
        sample_steps(b, &input::<u64>(Dist::Uniform, m), "u64", false)?;
        sample_steps(b, &input::<Tuple<(u32, u32)>>(Dist::Uniform, m), "u32x2", false)?;
    }
    // 2^28 keys: the final buckets average 4096 there (1024 at 2^26).
    if !b.opts.no_sample {
        sample_steps(b, &input::<u32>(Dist::Uniform, 1 << 28), "keys", false)?;
    }
    progress("fused bitonic time per kernel, n = 2^24, keys");
    let times = profiled::<u32, u32>(b, &keys_in, false, &SortOptions::algorithm(Algorithm::Bitonic))?;
    for t in times {
        println!("steps     {:<32} {} launches {:>9.3} ms", t.kernel, t.launches, t.ms);
    }
    Ok(())
}

/// The sample sort's kernels on `keys_in` (`what`: their name in the lines),
/// with the positions as `u32` values when `pairs`, and their sum.
fn sample_steps<K: SortKey>(b: &mut Bench, keys_in: &[K], what: &str, pairs: bool) -> Result<()> {
    let m = keys_in.len();
    progress(&format!("sample sort time per kernel, n = 2^{}, {what}", m.trailing_zeros()));
    let times = profiled::<K, u32>(b, keys_in, pairs, &SortOptions::algorithm(Algorithm::SampleSort))?;
    let label = format!("sample n=2^{}", m.trailing_zeros());
    print_steps(&label, what, &times);
    let total: f64 = times.iter().map(|t| t.ms).sum();
    println!("steps     {label} {what}: {total:.3} ms in all, {:.2} Gkeys/s", m as f64 / total / 1e6);
    Ok(())
}
