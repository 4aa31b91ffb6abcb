//! Every decision of a host sort, made before any item moves: whether it
//! fits on the GPU twice (its runs sorted as they arrive, then merged),
//! once (the runs kept there, merged bucket by bucket as they copy back) or
//! not (sorted runs written to host memory, then merged bucket by bucket),
//! the run and bucket sizes that fit the memory limit, and (once, or
//! beyond the GPU) the buckets: splitters from the sorted runs' samples, ordered by
//! `(key, run, position)` as the distributed sort's, so duplicates cut
//! anywhere and a stable sort stays stable.

use std::ops::Range;

use warpsort_kernels::ordered::Fields;

use crate::error::{Error, Result};
use crate::launch::ItemKind;
use crate::options::SortOptions;
use crate::plan::SortShape;
use crate::plan::merge_runs::MergeRunsPlan;
use crate::plan::permute::PairsPlan;
use crate::plan::splitters::{Splitter, bucket_ends, sample_positions, splitters};
use crate::policy::{Policy, STREAMING};

/// The fewest items a run or a bucket may hold beyond the GPU: a limit
/// below what this needs is refused ([`Error::MemoryLimit`]).
pub(crate) const MIN_ITEMS: usize = 1 << 12;

/// The most samples [`buckets`] takes from one run.
pub(crate) const MAX_SAMPLES: usize = 1 << 16;

/// What is sorted: `n` items of `kind` (keys as ordered patterns, values)
/// from host keys that are their own words or are stored as `fields`
/// (16-bit keys, tuples, byte strings: encoded on the GPU from a copy as
/// the host holds them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Work {
    pub n: usize,
    pub kind: ItemKind,
    pub fields: Option<Fields>,
}

impl Work {
    fn item_bytes(&self) -> usize {
        self.kind.item_bytes()
    }

    /// Device bytes per item for the copy of keys stored as fields as the
    /// host holds them (0 for keys that are their own words).
    pub fn raw_bytes(&self) -> usize {
        self.fields.map_or(0, |f| f.stride() as usize)
    }
}

/// How a host sort runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// Everything on the GPU: runs sorted as they arrive, merged, copied back.
    InCore { runs: Vec<Range<usize>>, merge: Option<MergeRunsPlan>, run_temp: usize },
    /// Once on the GPU, not twice: runs sorted as they arrive and kept
    /// there, then buckets of at most `bucket` items (cut by splitters from
    /// the runs' samples) gathered from the runs, merged and copied back a
    /// bucket at a time: one pass over the bus, as `InCore`.
    Resident { runs: Vec<Range<usize>>, bucket: usize, run_temp: usize },
    /// Beyond the GPU (or the limit): runs of at most `run` items sorted
    /// and written to host memory, then buckets of at most `bucket` items
    /// merged on the GPU into place.
    OutOfCore { runs: Vec<Range<usize>>, run: usize, bucket: usize, run_temp: usize },
}

/// A host sort's plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StreamPlan {
    pub work: Work,
    pub route: Route,
    /// The most device memory it allocates at once.
    pub device_bytes: usize,
}

/// Device bytes of the sort of one run of `len` items.
pub(crate) fn run_temp(opts: &SortOptions, w: &Work, len: usize, p: &Policy) -> Result<usize> {
    let (kb, vb) = (w.kind.key_bytes(), w.kind.val_bytes());
    Ok(PairsPlan::new(opts, SortShape::new(kb, vb), len, p)?.temp_bytes())
}

/// Cuts `n` items into `k` runs as even as can be.
pub(crate) fn cut(n: usize, k: usize) -> Vec<Range<usize>> {
    cut_weighted(n, &vec![1; k])
}

/// Cuts `n` items into runs in proportion to `weights`.
pub(crate) fn cut_weighted(n: usize, weights: &[usize]) -> Vec<Range<usize>> {
    let total: usize = weights.iter().sum();
    let (mut sum, mut start) = (0, 0);
    weights
        .iter()
        .map(|w| {
            sum += w;
            let end = sum * n / total;
            std::mem::replace(&mut start, end)..end
        })
        .collect()
}

impl StreamPlan {
    /// The plan for `w` within `limit` bytes of device memory.
    pub fn new(opts: &SortOptions, w: Work, limit: usize, p: &Policy) -> Result<Self> {
        let (n, ib, nb) = (w.n, w.item_bytes(), w.raw_bytes());
        let longest_run = if opts.stable { crate::api::sort::STABLE_MAX_LEN } else { usize::MAX };
        // On the GPU: the items, a second copy to merge into, the runs' sort.
        let k = (n * ib / STREAMING.min_run_bytes.max(1)).clamp(1, STREAMING.runs).max(n.div_ceil(longest_run));
        let weights = &STREAMING.run_weights;
        let longest_weighted = (n * weights.iter().max().unwrap_or(&1)).div_ceil(weights.iter().sum());
        let weighted = k == weights.len() && longest_weighted <= longest_run;
        let runs = if weighted { cut_weighted(n, weights) } else { cut(n, k) };
        let longest = runs.iter().map(|r| r.len()).max().unwrap_or(0);
        let temp = run_temp(opts, &w, longest, p)?;
        let merge = (k > 1).then(|| MergeRunsPlan::new(w.kind, &runs.iter().map(|r| r.len()).collect::<Vec<_>>(), p));
        let parts = merge.as_ref().map_or(0, |m| m.parts_bytes);
        let copies = if merge.is_some() { 2 } else { 1 };
        let in_core = n * (copies * ib + nb) + temp + parts;
        if in_core <= limit {
            return Ok(StreamPlan {
                work: w,
                route: Route::InCore { runs, merge, run_temp: temp },
                device_bytes: in_core,
            });
        }
        // Once: the items, then the sort of one run; then a bucket's
        // gathered pieces, a merge buffer, two outputs (one merged while the
        // other copies back), partitions. At least `STREAMING.runs` buckets.
        let resident_bucket = |g: usize| -> usize {
            let parts = MergeRunsPlan::parts_bytes_up_to(w.kind, g, p);
            2 * g * ib + 2 * g * (ib + nb) + parts
        };
        // (`STREAMING.runs` runs whatever their bytes: the sort of one is
        // all the room it needs beside the items.)
        let items = n * (ib + nb);
        let k = STREAMING.runs.min(n / MIN_ITEMS).max(2).max(n.div_ceil(longest_run));
        let once = cut(n, k);
        let once_temp = run_temp(opts, &w, once.iter().map(|r| r.len()).max().unwrap_or(0), p)?;
        if items + once_temp <= limit {
            let cap = n.div_ceil(STREAMING.runs).max(MIN_ITEMS);
            let bucket = largest(cap, |g| items + resident_bucket(g) <= limit);
            if bucket >= MIN_ITEMS {
                let device_bytes = (items + once_temp).max(items + resident_bucket(bucket));
                let route = Route::Resident { runs: once, bucket, run_temp: once_temp };
                return Ok(StreamPlan { work: w, route, device_bytes });
            }
        }
        // Beyond it: two run slots and the sort of one; two bucket slots
        // (gathered runs, merged output), a merge buffer, partitions.
        let phase1 = |r: usize| -> Result<usize> { Ok(2 * r * (ib + nb) + run_temp(opts, &w, r, p)?) };
        let phase2 = |g: usize| -> usize {
            let parts = MergeRunsPlan::parts_bytes_up_to(w.kind, g, p);
            2 * g * (2 * ib + nb) + g * ib + parts
        };
        // At least `STREAMING.runs` runs and buckets (where they stay above
        // the smallest), so that copies in both directions overlap the sorts.
        let cap = n.div_ceil(STREAMING.runs).max(MIN_ITEMS);
        let run = largest(longest_run.min(cap), |r| phase1(r).is_ok_and(|b| b <= limit));
        let bucket = largest(cap, |g| phase2(g) <= limit);
        let needed = phase1(MIN_ITEMS)?.max(phase2(MIN_ITEMS));
        if run < MIN_ITEMS || bucket < MIN_ITEMS {
            return Err(Error::MemoryLimit { limit, needed });
        }
        let runs = cut(n, n.div_ceil(run));
        let longest = runs.iter().map(|r| r.len()).max().unwrap_or(0);
        let run_temp = run_temp(opts, &w, longest, p)?;
        let device_bytes = phase1(longest)?.max(phase2(bucket));
        Ok(StreamPlan { work: w, route: Route::OutOfCore { runs, run: longest, bucket, run_temp }, device_bytes })
    }
}

/// The largest `x` in `0..=max` with `fits(x)` (`fits` holds up to some
/// point and not beyond); 0 when none.
fn largest(max: usize, fits: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, max);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) { lo = mid } else { hi = mid - 1 }
    }
    lo
}

/// Where every bucket ends in each sorted run (`ends[r][b]`), buckets of at
/// most `bucket` items, in global order: bucket `b` is the pieces
/// `ends[r][b - 1]..ends[r][b]` of the runs (of `sizes`), in run order.
/// `sample(r, positions)` reads run `r`'s keys at `positions`; `ends(r,
/// cuts)` finds where each cut falls in run `r` (`splitters::bucket_ends`
/// on the CPU, or the same search on the GPU).
pub(crate) fn buckets<B: Ord + Copy>(
    sizes: &[usize],
    bucket: usize,
    mut sample: impl FnMut(usize, &[usize]) -> Result<Vec<B>>,
    mut ends: impl FnMut(usize, &[Option<Splitter<B>>]) -> Result<Vec<usize>>,
) -> Result<Vec<Vec<usize>>> {
    let n: usize = sizes.iter().sum();
    let fill = (bucket * STREAMING.bucket_fill_eighths / 8).max(1);
    let mut count = n.div_ceil(fill).max(1);
    loop {
        let s = (STREAMING.samples_per_bucket * count).clamp(256, MAX_SAMPLES);
        let mut samples = Vec::with_capacity(sizes.len());
        for (r, &len) in sizes.iter().enumerate() {
            samples.push(sample(r, &sample_positions(len, s))?);
        }
        let targets: Vec<usize> = (1..count).map(|t| (t as u128 * n as u128 / count as u128) as usize).collect();
        let cuts = splitters(sizes, &samples, &targets);
        let all = (0..sizes.len()).map(|r| ends(r, &cuts)).collect::<Result<Vec<_>>>()?;
        let largest = (0..count)
            .map(|b| all.iter().map(|e| e[b] - if b == 0 { 0 } else { e[b - 1] }).sum::<usize>())
            .max()
            .unwrap_or(0);
        if largest <= bucket {
            return Ok(all);
        }
        count *= 2;
    }
}

/// [`buckets`] of runs in host memory.
pub(crate) fn host_buckets<B: Ord + Copy>(runs: &[&[B]], bucket: usize) -> Vec<Vec<usize>> {
    let sizes: Vec<usize> = runs.iter().map(|r| r.len()).collect();
    let sample = |r: usize, at: &[usize]| Ok(at.iter().map(|&i| runs[r][i]).collect());
    let ends = |r: usize, cuts: &[Option<Splitter<B>>]| Ok(bucket_ends(r, runs[r], cuts));
    buckets(&sizes, bucket, sample, ends).expect("the CPU's search does not fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::HOPPER;

    fn work(n: usize, kb: usize, vb: usize) -> Work {
        Work { n, kind: ItemKind::new(kb, vb), fields: None }
    }

    #[test]
    fn fits_on_the_gpu_in_runs_or_goes_beyond() {
        let opts = SortOptions::default();
        let w = work(1 << 26, 4, 0);
        let p = StreamPlan::new(&opts, w, 80 << 30, &HOPPER).unwrap();
        let Route::InCore { runs, merge, .. } = &p.route else { panic!("{p:?}") };
        assert_eq!(runs.len(), STREAMING.runs);
        assert_eq!(merge.as_ref().unwrap().rounds.len(), 3);
        assert!(p.device_bytes >= 2 * (4 << 26));
        // Small: one run, no merge.
        let p = StreamPlan::new(&opts, work(1000, 4, 4), 80 << 30, &HOPPER).unwrap();
        assert!(matches!(&p.route, Route::InCore { runs, merge: None, .. } if runs.len() == 1));
        // A limit below the in-core need: runs and buckets within it.
        let limit = 64 << 20;
        let p = StreamPlan::new(&opts, w, limit, &HOPPER).unwrap();
        let Route::OutOfCore { runs, run, bucket, .. } = &p.route else { panic!("{p:?}") };
        assert!(p.device_bytes <= limit, "{} > {limit}", p.device_bytes);
        assert!(runs.len() > 1 && *run >= runs[0].len() && *bucket >= MIN_ITEMS);
        assert_eq!(runs.iter().map(|r| r.len()).sum::<usize>(), 1 << 26);
        // Too small a limit: refused, saying what is needed.
        let e = StreamPlan::new(&opts, w, 4096, &HOPPER).unwrap_err();
        assert!(matches!(e, Error::MemoryLimit { limit: 4096, needed } if needed > 4096), "{e:?}");
    }

    /// Runs on the GPU are cut in `run_weights`' proportions, one after
    /// another over every item, each about 1.22 times the next
    /// (`Streaming::run_weights` says why); a stable sort whose longest
    /// weighted run would pass its length limit cuts them even.
    #[test]
    fn runs_on_the_gpu_end_short() {
        let opts = SortOptions::default();
        for w in STREAMING.run_weights.windows(2) {
            let ratio = w[0] as f64 / w[1] as f64;
            assert!((1.18..1.27).contains(&ratio), "{:?}", STREAMING.run_weights);
        }
        for n in [1 << 26, (1 << 26) + 7, 3 << 28] {
            let p = StreamPlan::new(&opts, work(n, 4, 0), 1 << 50, &HOPPER).unwrap();
            let Route::InCore { runs, .. } = &p.route else { panic!("{p:?}") };
            let total: usize = STREAMING.run_weights.iter().sum();
            assert_eq!(runs.len(), STREAMING.run_weights.len());
            assert_eq!((runs[0].start, runs[runs.len() - 1].end), (0, n));
            for (r, w) in runs.iter().zip(STREAMING.run_weights) {
                assert!(r.len().abs_diff(n * w / total) <= 1, "{n}: {r:?} for weight {w}");
            }
            assert!(runs.windows(2).all(|p| p[0].end == p[1].start));
        }
        let stable = SortOptions { stable: true, ..Default::default() };
        let n = 8 * crate::api::sort::STABLE_MAX_LEN;
        let p = StreamPlan::new(&stable, work(n, 4, 0), 1 << 62, &HOPPER).unwrap();
        let Route::InCore { runs, .. } = &p.route else { panic!("{p:?}") };
        assert!(runs.iter().all(|r| r.len() == n / 8), "{runs:?}");
    }

    #[test]
    fn fitting_once_keeps_the_runs_on_the_gpu() {
        let opts = SortOptions::default();
        for (kb, vb) in [(4, 0), (2, 0), (8, 4), (4, 8)] {
            let w = work(1 << 26, kb, vb);
            let ib = w.kind.item_bytes() + w.raw_bytes();
            for limit in [(1 << 26) * ib * 5 / 4, (1 << 26) * ib * 3 / 2, (1 << 26) * ib * 7 / 4] {
                let p = StreamPlan::new(&opts, w, limit, &HOPPER).unwrap();
                let Route::Resident { runs, bucket, .. } = &p.route else { panic!("{kb}+{vb} {limit}: {p:?}") };
                assert!(p.device_bytes <= limit, "{} > {limit}", p.device_bytes);
                assert_eq!(runs.len(), STREAMING.runs);
                assert!(*bucket >= MIN_ITEMS && *bucket <= (1 << 26) / STREAMING.runs, "{bucket}");
            }
            // Twice fits: on the GPU; less than once: beyond it.
            let twice = StreamPlan::new(&opts, w, (1 << 26) * ib * 5 / 2, &HOPPER).unwrap();
            assert!(matches!(twice.route, Route::InCore { .. }), "{twice:?}");
            let under = StreamPlan::new(&opts, w, (1 << 26) * ib * 9 / 10, &HOPPER).unwrap();
            assert!(matches!(under.route, Route::OutOfCore { .. }), "{under:?}");
        }
    }

    #[test]
    fn every_limit_is_kept() {
        for (kb, vb, stable) in [(4, 0, false), (8, 8, false), (4, 8, true), (8, 4, true)] {
            let opts = SortOptions { stable, ..Default::default() };
            for limit in [1 << 20, 3 << 20, 100 << 20, 1 << 30] {
                let w = Work { n: 50_000_007, kind: ItemKind::new(kb, vb), fields: None };
                if let Ok(p) = StreamPlan::new(&opts, w, limit, &HOPPER) {
                    assert!(p.device_bytes <= limit, "{kb}+{vb} stable {stable}: {} > {limit}", p.device_bytes);
                }
            }
        }
    }

    #[test]
    fn buckets_cover_every_run_within_the_bound() {
        let mut x = 7u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let inputs: Vec<Vec<Vec<u32>>> = vec![
            (0..5).map(|_| (0..40_000).map(|_| rnd() as u32).collect()).collect(),
            (0..5).map(|_| vec![3u32; 40_000]).collect(),
            (0..3).map(|r| (0..(r + 1) * 20_000).map(|_| (rnd() % 4) as u32).collect()).collect(),
            vec![vec![], (0..10_000).collect(), vec![]],
        ];
        for data in inputs {
            let data: Vec<Vec<u32>> = data
                .into_iter()
                .map(|mut v| {
                    v.sort();
                    v
                })
                .collect();
            let runs: Vec<&[u32]> = data.iter().map(Vec::as_slice).collect();
            let n: usize = data.iter().map(Vec::len).sum();
            for bucket in [MIN_ITEMS, 10_000, n] {
                let ends = host_buckets(&runs, bucket);
                let count = ends[0].len();
                let mut merged = Vec::new();
                for b in 0..count {
                    let mut got = Vec::new();
                    for (r, e) in ends.iter().enumerate() {
                        let lo = if b == 0 { 0 } else { e[b - 1] };
                        got.extend_from_slice(&runs[r][lo..e[b]]);
                    }
                    assert!(got.len() <= bucket, "bucket {b}: {} > {bucket}", got.len());
                    got.sort();
                    merged.extend(got);
                }
                assert_eq!(merged.len(), n);
                assert!(merged.windows(2).all(|w| w[0] <= w[1]), "buckets out of order");
            }
        }
    }
}
