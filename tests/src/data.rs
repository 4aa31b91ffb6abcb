//! Test and benchmark inputs: the distributions of the GPU sorting literature
//! (uniform, sorted, reverse, all equal, few unique, Gaussian, bucket,
//! staggered) and the skewed ones that break distribution sorts (Zipf, one
//! value making most of the input), deterministic from a seed, for any key
//! type.

use rayon::slice::ParallelSliceMut;
use warpsort::{Bits, Order, SortKey};

/// A key distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dist {
    /// Every bit pattern equally likely (NaNs and infinities included for floats).
    Uniform,
    /// Uniform, then sorted ascending.
    Sorted,
    /// Uniform, then sorted descending.
    Reverse,
    /// One key repeated (the paper's "zero" distribution).
    AllEqual,
    /// 16 distinct keys.
    FewUnique,
    /// The mean of four uniform keys (Helman et al.'s Gaussian).
    Gaussian,
    /// `p = 32` chunks, each spread evenly over all `p` buckets of the key range.
    Bucket,
    /// `p = 32` chunks, chunk `i` drawn from one bucket, staggered (Helman et al.).
    Staggered,
    /// Zipf's law over 2^20 distinct keys (exponent 1): key of rank `r`
    /// with probability proportional to `1 / r`.
    Zipf,
    /// One value makes 90% of the input, the rest uniform, shuffled.
    Dominant,
}

impl Dist {
    /// Every distribution.
    pub const ALL: [Dist; 10] = [
        Dist::Uniform,
        Dist::Sorted,
        Dist::Reverse,
        Dist::AllEqual,
        Dist::FewUnique,
        Dist::Gaussian,
        Dist::Bucket,
        Dist::Staggered,
        Dist::Zipf,
        Dist::Dominant,
    ];

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Dist::Uniform => "uniform",
            Dist::Sorted => "sorted",
            Dist::Reverse => "reverse",
            Dist::AllEqual => "all-equal",
            Dist::FewUnique => "few-unique",
            Dist::Gaussian => "gaussian",
            Dist::Bucket => "bucket",
            Dist::Staggered => "staggered",
            Dist::Zipf => "zipf",
            Dist::Dominant => "dominant",
        }
    }

    /// By short name.
    pub fn from_name(s: &str) -> Option<Dist> {
        Dist::ALL.into_iter().find(|d| d.name() == s)
    }
}

/// splitmix64: a small, fast, seedable generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `n` ordered patterns (64-bit, high bits significant) from `dist`.
fn ordered64(dist: Dist, n: usize, seed: u64) -> Vec<u64> {
    const P: usize = 32;
    let mut rng = Rng::new(seed);
    let bucket = |b: usize, r: u64| ((b as u64) << 59) | (r >> 5); // bucket b of 32 over the range
    let mut v: Vec<u64> = match dist {
        Dist::Uniform | Dist::Sorted | Dist::Reverse => (0..n).map(|_| rng.next_u64()).collect(),
        Dist::AllEqual => vec![rng.next_u64(); n],
        Dist::FewUnique => {
            let vals: Vec<u64> = (0..16).map(|_| rng.next_u64()).collect();
            (0..n).map(|_| vals[(rng.next_u64() >> 60) as usize]).collect()
        }
        Dist::Gaussian => {
            (0..n).map(|_| ((0..4).map(|_| (rng.next_u64() >> 2) as u128).sum::<u128>()) as u64).collect()
        }
        Dist::Bucket => {
            let chunk = n.div_ceil(P).max(1);
            (0..n).map(|i| bucket((i % chunk) * P / chunk, rng.next_u64())).collect()
        }
        Dist::Staggered => {
            let chunk = n.div_ceil(P).max(1);
            (0..n)
                .map(|i| {
                    let c = i / chunk;
                    let b = if c < P / 2 { 2 * c + 1 } else { 2 * c - P };
                    bucket(b % P, rng.next_u64())
                })
                .collect()
        }
        Dist::Zipf => {
            // Distinct keys: random patterns, ranked by frequency.
            const DISTINCT: usize = 1 << 20;
            let vals: Vec<u64> = (0..DISTINCT.min(n.max(1))).map(|_| rng.next_u64()).collect();
            // Inverse transform of the continuous 1/r density on [1, D + 1): r = (D + 1)^u.
            let top = (vals.len() + 1) as f64;
            (0..n)
                .map(|_| {
                    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    vals[(top.powf(u) as usize - 1).min(vals.len() - 1)]
                })
                .collect()
        }
        Dist::Dominant => {
            let common = rng.next_u64();
            (0..n).map(|_| if rng.next_u64() % 10 < 9 { common } else { rng.next_u64() }).collect()
        }
    };
    match dist {
        Dist::Sorted => v.par_sort_unstable(),
        Dist::Reverse => v.par_sort_unstable_by(|a, b| b.cmp(a)),
        _ => {}
    }
    v
}

/// Narrows a 64-bit ordered pattern to a key type's width (high bits kept).
pub trait FromPattern: Bits {
    /// The pattern's high bits.
    fn from_pattern(p: u64) -> Self;
}
impl FromPattern for u32 {
    fn from_pattern(p: u64) -> Self {
        (p >> 32) as u32
    }
}
impl FromPattern for u64 {
    fn from_pattern(p: u64) -> Self {
        p
    }
}

/// Keys of several words: the first holds the pattern's top 16 bits (so
/// that uniform keys tie there often and the next words decide), the
/// second the whole pattern, the rest mixes of it (a monotone map: sorted
/// patterns stay sorted).
impl<const N: usize> FromPattern for [u64; N]
where
    [u64; N]: Bits,
{
    fn from_pattern(p: u64) -> Self {
        std::array::from_fn(|j| match j {
            0 => p & 0xffff << 48,
            1 => p,
            _ => p.rotate_left(8 * j as u32) ^ 0x9e37_79b9_7f4a_7c15,
        })
    }
}

/// `n` keys of type `K` from `dist`: the distribution is laid over the key
/// type's order (so "sorted" is sorted as the sort sees it, and float keys
/// cover NaNs, infinities and both zeros).
///
/// ```
/// use warpsort_testkit::data::{keys, Dist};
/// let v: Vec<f32> = keys(Dist::Sorted, 1000, 7);
/// assert!(v.windows(2).all(|w| w[0].total_cmp(&w[1]).is_le()));
/// ```
pub fn keys<K: SortKey>(dist: Dist, n: usize, seed: u64) -> Vec<K>
where
    K::Bits: FromPattern,
{
    ordered64(dist, n, seed).into_iter().map(|p| K::from_ordered(K::Bits::from_pattern(p))).collect()
}

/// `keys` made into up to `runs` ascending runs (in the order `order`
/// sorts by): cut at `runs - 1` random places, each piece sorted.
///
/// ```
/// use warpsort::Order;
/// let mut v: Vec<u32> = warpsort_testkit::data::keys(warpsort_testkit::Dist::Uniform, 1000, 1);
/// warpsort_testkit::data::sorted_runs(&mut v, 4, Order::Ascending, 7);
/// assert!(v.windows(2).filter(|w| w[0] > w[1]).count() <= 3);
/// ```
pub fn sorted_runs<K: SortKey>(keys: &mut [K], runs: usize, order: Order, seed: u64) {
    let n = keys.len();
    let mut rng = Rng::new(seed);
    let mut cuts: Vec<usize> = (1..runs).map(|_| (rng.next_u64() as usize) % n.max(1)).collect();
    cuts.extend([0, n]);
    cuts.sort_unstable();
    for w in cuts.windows(2) {
        // Unstable: keys equal in the sort order are bit-identical.
        match order {
            Order::Ascending => keys[w[0]..w[1]].sort_unstable_by(|a, b| a.key_cmp(b)),
            Order::Descending => keys[w[0]..w[1]].sort_unstable_by(|a, b| b.key_cmp(a)),
        }
    }
}

/// Offsets of random-length segments covering `n` items (as
/// [`warpsort::Gpu::sort_segments_by_offsets`] takes them): lengths log-uniform
/// from 1 to `max_len`, a fifth of them empty and a tenth of one item, the
/// last cut to end at `n`.
///
/// ```
/// let off = warpsort_testkit::data::random_offsets(10_000, 5000, 7);
/// assert_eq!((off[0], *off.last().unwrap()), (0, 10_000));
/// assert!(off.windows(2).all(|w| w[0] <= w[1]));
/// ```
pub fn random_offsets(n: usize, max_len: usize, seed: u64) -> Vec<u32> {
    let mut rng = Rng::new(seed);
    let mut off = vec![0u32];
    let mut at = 0usize;
    let log_max = (max_len.max(1) as f64).log2();
    while at < n {
        let r = rng.next_u64();
        let len = match r % 10 {
            0 | 1 => 0,
            2 => 1,
            _ => {
                let u = (r >> 11) as f64 / (1u64 << 53) as f64;
                (u * log_max).exp2() as usize
            }
        };
        at = (at + len).min(n);
        off.push(at as u32);
    }
    off
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_have_their_shape() {
        let n = 10_000;
        let sorted: Vec<u32> = keys(Dist::Sorted, n, 1);
        assert!(sorted.is_sorted());
        let rev: Vec<u32> = keys(Dist::Reverse, n, 1);
        assert!(rev.windows(2).all(|w| w[0] >= w[1]));
        let eq: Vec<u32> = keys(Dist::AllEqual, n, 1);
        assert!(eq.iter().all(|k| *k == eq[0]));
        let mut few: Vec<u32> = keys(Dist::FewUnique, n, 1);
        few.sort_unstable();
        few.dedup();
        assert!(few.len() <= 16);
        assert_eq!(keys::<u64>(Dist::Uniform, 100, 9), keys::<u64>(Dist::Uniform, 100, 9), "deterministic");
        let stag: Vec<u32> = keys(Dist::Staggered, 64, 3);
        assert_eq!(stag[0] >> 27, 1, "chunk 0 of staggered draws from bucket 1");
        let mut zipf: Vec<u64> = keys(Dist::Zipf, n, 1);
        let first = zipf[0];
        zipf.sort_unstable();
        let top = zipf.chunk_by(|a, b| a == b).map(|c| c.len()).max().unwrap();
        assert!(top > n / 20 && top < n / 2, "the most frequent Zipf key: {top} of {n}");
        assert!(zipf.contains(&first));
        let mut dom: Vec<u32> = keys(Dist::Dominant, n, 1);
        dom.sort_unstable();
        let common = dom.chunk_by(|a, b| a == b).map(|c| c.len()).max().unwrap();
        assert!((8500..9500).contains(&common), "{common} of {n} the dominant value");
    }
}
