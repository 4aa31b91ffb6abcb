//! Splitters that cut sorted runs (one per GPU in the distributed sort, one
//! per pass-1 run in a host sort beyond the GPU) into buckets of the global
//! order, from the runs' regular samples.
//!
//! Every key is ordered by `(key, run, position)`: its ordered pattern, the
//! run it is in, its place there. No two keys tie, so a splitter cuts
//! duplicates anywhere and buckets stay balanced whatever the input; taking
//! each bucket's pieces in run order keeps a stable sort stable.

/// Where a run of `n` sorted keys takes its `samples` regular samples
/// (every key when it has fewer).
pub(crate) fn sample_positions(n: usize, samples: usize) -> Vec<usize> {
    let s = samples.min(n);
    (0..s).map(|j| (j as u128 * n as u128 / s as u128) as usize).collect()
}

/// A key in the global order: its ordered pattern, its run (GPU), its
/// position there (fields compare in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Splitter<B> {
    pub key: B,
    pub gpu: usize,
    pub pos: usize,
}

/// The splitters cutting the keys into `targets.len() + 1` buckets, bucket
/// `t` ending near global rank `targets[t]`: from every GPU's regular
/// samples (`samples[q]` taken at `sample_positions(sizes[q], ..)`), each
/// standing for `sizes[q] / samples` keys, the first sample whose estimated
/// rank reaches the target. `None`: past every key.
pub(crate) fn splitters<B: Ord + Copy>(
    sizes: &[usize],
    samples: &[Vec<B>],
    targets: &[usize],
) -> Vec<Option<Splitter<B>>> {
    let mut all = Vec::new();
    let mut weight = Vec::new();
    for (q, keys) in samples.iter().enumerate() {
        let positions = sample_positions(sizes[q], keys.len());
        weight.push(if keys.is_empty() { 0.0 } else { sizes[q] as f64 / keys.len() as f64 });
        all.extend(keys.iter().zip(positions).map(|(&key, pos)| Splitter { key, gpu: q, pos }));
    }
    all.sort_unstable();
    let mut out = vec![None; targets.len()];
    let mut next = 0;
    let mut before = 0.0f64;
    for s in &all {
        while next < targets.len() && targets[next] as f64 <= before {
            out[next] = Some(*s);
            next += 1;
        }
        before += weight[s.gpu];
    }
    out
}

/// How GPU `me` finds the end of a bucket in its sorted keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Query<B> {
    /// Its own sample: the bucket ends at the sample's position.
    At(usize),
    /// Another GPU's sample: the keys below `key` (a lower bound) or not
    /// above it (an upper bound, for a splitter from a later GPU).
    Search { key: B, upper: bool },
    /// Past every key.
    End,
}

/// The query for splitter `s` on GPU `me`: keys `(k, me, i)` come before
/// `(key, gpu, pos)` when `k < key`, or `k == key` and `me < gpu` (or
/// `me == gpu` and `i < pos`).
pub(crate) fn query<B: Copy>(me: usize, s: Option<Splitter<B>>) -> Query<B> {
    match s {
        None => Query::End,
        Some(s) if s.gpu == me => Query::At(s.pos),
        Some(s) => Query::Search { key: s.key, upper: me < s.gpu },
    }
}

/// Where each bucket ends in run `me`'s sorted keys `run` (searched on the
/// CPU), the last end being the run's length.
pub(crate) fn bucket_ends<B: Ord + Copy>(me: usize, run: &[B], cuts: &[Option<Splitter<B>>]) -> Vec<usize> {
    let mut ends: Vec<usize> = cuts
        .iter()
        .map(|&c| match query(me, c) {
            Query::At(pos) => pos,
            Query::Search { key, upper } => run.partition_point(|&k| if upper { k <= key } else { k < key }),
            Query::End => run.len(),
        })
        .collect();
    ends.push(run.len());
    ends
}
