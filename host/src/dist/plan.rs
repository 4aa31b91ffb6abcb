//! The distributed sort's decisions, made on the CPU from what the GPUs
//! share (their sizes, their samples, their bucket counts): where each GPU's
//! sorted keys split ([`splitters`]; searched on the GPU by
//! `Gpu::bucket_ends`), what moves where in the
//! exchange ([`Exchange`]) and in the rebalance to exact sizes
//! ([`rebalance`]). Every GPU computes the same answers from the same
//! inputs, so no decision travels.
//!
//! Every key is ordered by `(key, gpu, position)`: its ordered pattern, the
//! GPU it starts on, and its place in that GPU's locally sorted (stably, when
//! asked) keys. No two keys tie, so a splitter cuts duplicates anywhere and
//! buckets stay balanced whatever the input; merging the received runs in
//! GPU order keeps a stable sort stable.

pub(crate) use crate::plan::splitters::{Splitter, sample_positions, splitters};

/// Samples each GPU contributes: enough that every bucket is within
/// `2 / SAMPLES_PER_GPU_PER_GPU` of its target share (1.6%), at most 4096.
pub(crate) fn samples_per_gpu(gpus: usize) -> usize {
    (SAMPLES_PER_GPU_PER_GPU * gpus).clamp(256, 4096)
}
const SAMPLES_PER_GPU_PER_GPU: usize = 128;

/// Global ranks where buckets should end: equal shares, or each GPU's
/// input size.
pub(crate) fn targets(sizes: &[usize], even: bool) -> Vec<usize> {
    let (p, n) = (sizes.len(), sizes.iter().sum::<usize>());
    if even {
        (1..p).map(|t| (t as u128 * n as u128 / p as u128) as usize).collect()
    } else {
        starts(sizes).into_iter().skip(1).collect()
    }
}

/// Where each of `sizes` starts when laid one after another.
fn starts(sizes: &[usize]) -> Vec<usize> {
    sizes.iter().scan(0, |acc, &s| Some(std::mem::replace(acc, *acc + s))).collect()
}

/// The all-to-all exchange: `counts[src][dst]` keys of `src`'s bucket `dst`
/// go to `dst`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Exchange {
    pub counts: Vec<Vec<usize>>,
}

impl Exchange {
    pub fn gpus(&self) -> usize {
        self.counts.len()
    }

    /// Where bucket `dst` starts in `src`'s sorted keys.
    pub fn send_at(&self, src: usize, dst: usize) -> usize {
        self.counts[src][..dst].iter().sum()
    }

    /// Where the run from `src` starts in what `dst` receives.
    pub fn recv_at(&self, src: usize, dst: usize) -> usize {
        (0..src).map(|q| self.counts[q][dst]).sum()
    }

    /// The runs `dst` receives, in GPU order.
    pub fn runs(&self, dst: usize) -> Vec<usize> {
        self.counts.iter().map(|row| row[dst]).collect()
    }

    /// Keys `dst` receives.
    pub fn received(&self, dst: usize) -> usize {
        self.runs(dst).iter().sum()
    }

    /// Keys that cross from one GPU to another.
    pub fn crossing(&self) -> usize {
        let all: usize = self.counts.iter().flatten().sum();
        all - (0..self.gpus()).map(|q| self.counts[q][q]).sum::<usize>()
    }
}

/// One piece of the rebalance: `len` keys from `from_at` of the source's
/// sorted share to `to_at` of GPU `to`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Move {
    pub to: usize,
    pub from_at: usize,
    pub to_at: usize,
    pub len: usize,
}

/// Moves turning shares of `have` keys (in global order, GPU after GPU)
/// into shares of `want` (the same total), per source GPU.
pub(crate) fn rebalance(have: &[usize], want: &[usize]) -> Vec<Vec<Move>> {
    let (hs, ws) = (starts(have), starts(want));
    (0..have.len())
        .map(|src| {
            let (h0, h1) = (hs[src], hs[src] + have[src]);
            (0..want.len())
                .filter_map(|to| {
                    let (lo, hi) = (h0.max(ws[to]), h1.min(ws[to] + want[to]));
                    (lo < hi).then(|| Move { to, from_at: lo - h0, to_at: lo - ws[to], len: hi - lo })
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::splitters::bucket_ends;

    /// The buckets' sizes when GPU `q` holds `data[q]` (sorted) and cuts it
    /// at the splitters' queries.
    fn bucket_sizes(data: &[Vec<u32>], even: bool) -> Vec<Vec<usize>> {
        let sizes: Vec<usize> = data.iter().map(Vec::len).collect();
        let s = samples_per_gpu(data.len());
        let samples: Vec<Vec<u32>> =
            data.iter().map(|d| sample_positions(d.len(), s).iter().map(|&i| d[i]).collect()).collect();
        let cuts = splitters(&sizes, &samples, &targets(&sizes, even));
        data.iter()
            .enumerate()
            .map(|(me, d)| {
                let ends = bucket_ends(me, d, &cuts);
                let mut prev = 0;
                ends.iter().map(|&e| std::mem::replace(&mut prev, e).abs_diff(e)).collect()
            })
            .collect()
    }

    fn sorted(mut v: Vec<u32>) -> Vec<u32> {
        v.sort();
        v
    }

    #[test]
    fn buckets_stay_balanced_on_duplicates_and_skew() {
        let mut x = 12345u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let inputs: Vec<Vec<Vec<u32>>> = vec![
            (0..4).map(|_| (0..100_000).map(|_| rnd() as u32).collect()).collect(),
            (0..4).map(|_| vec![7u32; 100_000]).collect(),
            (0..4).map(|q| (0..100_000).map(|i| if i % 10 == 0 { rnd() as u32 } else { q as u32 }).collect()).collect(),
            (0..3).map(|q| (0..(q + 1) * 50_000).map(|_| (rnd() % 3) as u32).collect()).collect(),
        ];
        for data in inputs {
            let data: Vec<Vec<u32>> = data.into_iter().map(sorted).collect();
            let n: usize = data.iter().map(Vec::len).sum();
            let p = data.len();
            let b = bucket_sizes(&data, true);
            for t in 0..p {
                let got: usize = b.iter().map(|row| row[t]).sum();
                let share = n / p;
                assert!(got.abs_diff(share) * 20 <= share, "bucket {t}: {got} of {n} keys over {p} GPUs");
            }
            // Every key lands in one bucket.
            for (q, row) in b.iter().enumerate() {
                assert_eq!(row.iter().sum::<usize>(), data[q].len());
            }
        }
    }

    #[test]
    fn no_keys_anywhere_or_on_one_gpu() {
        let b = bucket_sizes(&[vec![], vec![]], true);
        assert_eq!(b, vec![vec![0, 0], vec![0, 0]]);
        let b = bucket_sizes(&[vec![], (0..1000).collect()], true);
        assert_eq!(b[0], vec![0, 0]);
        assert!(b[1][0].abs_diff(500) <= 25, "{b:?}");
    }

    #[test]
    fn targets_are_equal_shares_or_input_sizes() {
        assert_eq!(targets(&[10, 0, 5], true), [5, 10]);
        assert_eq!(targets(&[10, 0, 5], false), [10, 10]);
        assert_eq!(targets(&[7], true), Vec::<usize>::new());
        assert_eq!(targets(&[], false), Vec::<usize>::new());
    }

    #[test]
    fn exchange_offsets() {
        let e = Exchange { counts: vec![vec![1, 2, 3], vec![4, 5, 6], vec![0, 0, 7]] };
        assert_eq!((e.send_at(1, 2), e.recv_at(1, 2), e.recv_at(2, 2)), (9, 3, 9));
        assert_eq!((e.runs(0), e.received(2), e.crossing()), (vec![1, 4, 0], 16, 15));
    }

    #[test]
    fn rebalance_moves_the_overlaps() {
        let m = rebalance(&[3, 5, 2], &[4, 4, 2]);
        assert_eq!(m[0], [Move { to: 0, from_at: 0, to_at: 0, len: 3 }]);
        assert_eq!(m[1], [Move { to: 0, from_at: 0, to_at: 3, len: 1 }, Move { to: 1, from_at: 1, to_at: 0, len: 4 }]);
        assert_eq!(m[2], [Move { to: 2, from_at: 0, to_at: 0, len: 2 }]);
        assert!(rebalance(&[0, 0], &[0, 0]).iter().all(Vec::is_empty));
    }

    #[test]
    fn sample_positions_are_regular() {
        assert_eq!(sample_positions(10, 4), [0, 2, 5, 7]);
        assert_eq!(sample_positions(3, 4), [0, 1, 2]);
        assert!(sample_positions(0, 4).is_empty());
    }
}
