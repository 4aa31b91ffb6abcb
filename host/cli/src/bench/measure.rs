//! The measured operations: a full sort (keys or pairs), an argsort and a
//! segmented sort, each timed (see [`super::timing`]), verified and pushed as
//! a row.

use std::cmp::Ordering;

use warpsort::{Algorithm, Order, Payload, Segments, SortKey, SortOptions};
use warpsort_testkit::data::Dist;

use super::report::Row;
use super::{Bench, Result, pair_dtype};

/// A benchmark value: the input position `i` as a payload type.
pub trait Position: Payload {
    /// Position `i` as a value.
    fn at(i: usize) -> Self;
    /// The position a value holds.
    fn position(self) -> u64;
}
impl Position for u32 {
    fn at(i: usize) -> Self {
        i as u32
    }
    fn position(self) -> u64 {
        self as u64
    }
}
impl Position for u64 {
    fn at(i: usize) -> Self {
        i as u64
    }
    fn position(self) -> u64 {
        self
    }
}

impl Bench<'_> {
    /// Runs one warpsort sort (keys or pairs) and pushes its row.
    pub fn sort_row<K: SortKey>(
        &mut self,
        suite: &'static str,
        algo: Algorithm,
        dist: Dist,
        pairs: bool,
        input: &[K],
    ) -> Result<()> {
        self.sort_row_with::<K, u32>(suite, algo.name().into(), SortOptions::algorithm(algo), dist, pairs, input)
    }

    /// [`Bench::sort_row`] with explicit options and label; values (when
    /// `pairs`) of type `V`, the input positions. A stable sort's result is
    /// also checked for stability (on the host).
    pub fn sort_row_with<K: SortKey, V: Position>(
        &mut self,
        suite: &'static str,
        label: String,
        opts: SortOptions,
        dist: Dist,
        pairs: bool,
        input: &[K],
    ) -> Result<()> {
        self.sort_row_case::<K, V>(suite, label, opts, dist.name(), pairs, input)
    }

    /// [`Bench::sort_row_with`] of an input named `case` (a shape no
    /// [`Dist`] names: runs, one swap).
    pub fn sort_row_case<K: SortKey, V: Position>(
        &mut self,
        suite: &'static str,
        label: String,
        opts: SortOptions,
        case: &'static str,
        pairs: bool,
        input: &[K],
    ) -> Result<()> {
        let n = input.len();
        let s = self.gpu.stream().clone();
        let (pristine, mut work) = self.upload(input)?;
        let vals_init: Vec<V> = (0..n).map(V::at).collect();
        let vals_pristine = s.clone_htod(&vals_init)?;
        let mut vals = s.clone_dtod(&vals_pristine)?;
        let before = self.gpu.check(&pristine, pairs.then_some(&vals_pristine), Order::Ascending)?;
        let gpu = self.gpu;
        let ms = self.time(&pristine, &mut work, |w| {
            if pairs {
                s.memcpy_dtod(&vals_pristine, &mut vals)?;
                gpu.sort_pairs(w, &mut vals, &opts)
            } else {
                gpu.sort_with(w, &opts)
            }
        })?;
        let after = self.gpu.check(&work, pairs.then_some(&vals), Order::Ascending)?;
        let stable = !(pairs && opts.stable) || {
            let (k, v) = (s.clone_dtoh(&work)?, s.clone_dtoh(&vals)?);
            (1..n).all(|i| k[i - 1].to_bits() != k[i].to_bits() || v[i - 1].position() < v[i].position())
        };
        let bytes = 2 * (size_of::<K>() + if pairs { size_of::<V>() } else { 0 });
        self.report.push(Row {
            suite,
            algo: label,
            dtype: if pairs { pair_dtype::<K, V>() } else { K::NAME },
            pairs,
            dist: case,
            n,
            ms,
            bytes_per_key: bytes,
            verified: after.confirms(&before) && stable,
        });
        Ok(())
    }

    /// Times [`warpsort::Gpu::argsort_into`] (keys unchanged, `u32`
    /// positions written to a buffer allocated once) and verifies the
    /// permutation on the host: a permutation of `0..n` that sorts the keys,
    /// equal keys in input order when `opts.stable`.
    pub fn argsort_row<K: SortKey>(
        &mut self,
        suite: &'static str,
        opts: SortOptions,
        dist: Dist,
        input: &[K],
    ) -> Result<()> {
        let n = input.len();
        let s = self.gpu.stream().clone();
        let (pristine, mut work) = self.upload(input)?;
        let mut idx = s.alloc_zeros::<u32>(n)?;
        let gpu = self.gpu;
        let ms = self.time(&pristine, &mut work, |w| gpu.argsort_into(w, &mut idx, &opts))?;
        let p = s.clone_dtoh(&idx)?;
        let mut seen = vec![false; n];
        let perm = p.iter().all(|&i| (i as usize) < n && !std::mem::replace(&mut seen[i as usize], true));
        let sorted = perm
            && p.windows(2).all(|w| match input[w[0] as usize].key_cmp(&input[w[1] as usize]) {
                Ordering::Less => true,
                Ordering::Equal => !opts.stable || w[0] < w[1],
                Ordering::Greater => false,
            });
        let label = format!("{} argsort{}", opts.algorithm.name(), if opts.stable { " stable" } else { "" });
        self.report.push(Row {
            suite,
            algo: label,
            dtype: K::NAME,
            pairs: false,
            dist: dist.name(),
            n,
            ms,
            // Reads the keys, writes the positions; the sort moves both.
            bytes_per_key: 2 * (size_of::<K>() + 4),
            verified: sorted,
        });
        Ok(())
    }

    /// One segmented sort of `input` cut by `offsets` (equal rows of `rows`
    /// items when given, else by the offsets), keys or key-value, timed,
    /// verified on the GPU (segmented check and fingerprint), pushed as a row.
    pub fn segments_row(
        &mut self,
        label: String,
        input: &[u32],
        offsets: &[u32],
        rows: Option<usize>,
        pairs: bool,
    ) -> Result<()> {
        let (gpu, s) = (self.gpu, self.gpu.stream().clone());
        let n = input.len();
        let keys0 = s.clone_htod(input)?;
        let vals0 = s.clone_htod(&(0..n as u32).collect::<Vec<_>>())?;
        let (mut keys, mut vals) = (s.clone_dtod(&keys0)?, s.clone_dtod(&vals0)?);
        let off = s.clone_htod(offsets)?;
        let segs = match rows {
            Some(len) => Segments::Rows(len),
            None => Segments::Offsets(&off),
        };
        let asc = Order::Ascending;
        let before = gpu.check_segments(&keys0, pairs.then_some(&vals0), segs, asc)?;
        let ms = self.time_reset(|timed| match (timed, rows, pairs) {
            (false, _, _) => {
                s.memcpy_dtod(&keys0, &mut keys)?;
                if pairs {
                    s.memcpy_dtod(&vals0, &mut vals)?;
                }
                Ok(())
            }
            (true, Some(len), false) => gpu.sort_segments(&mut keys, len, asc),
            (true, Some(len), true) => gpu.sort_segments_pairs(&mut keys, &mut vals, len, asc),
            (true, None, false) => gpu.sort_segments_by_offsets(&mut keys, &off, asc),
            (true, None, true) => gpu.sort_segments_by_offsets_pairs(&mut keys, &mut vals, &off, asc),
        })?;
        let after = gpu.check_segments(&keys, pairs.then_some(&vals), segs, asc)?;
        let bytes_per_key = if pairs { 16 } else { 8 };
        let verified = after.confirms(&before);
        self.report.push(Row { pairs, bytes_per_key, ..Row::u32_keys("segments", label, n, ms, verified) });
        Ok(())
    }
}
