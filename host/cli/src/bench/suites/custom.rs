//! The custom suite: composite keys beside CUB sorting the same records, its
//! merge sort with the same comparator and its radix sort with a
//! decomposer over the fields (the harness's `u32x2`, `f32u32`, `b8`,
//! `u64u32` and `b16` records); the `u64` keys of the same ordered words, to
//! show what the encoding costs; ORDER BY of three columns (a stable
//! argsort of their tuples: one word, and three; `Gpu::order_by` over device
//! columns beside the harness's `orderby3`, CUB's and Thrust's stable sorts
//! of an index array with a comparator over the columns); `u32` keys with
//! 64-byte records (argsort, then the keys and records gathered) beside the
//! harness's `rec64` pairs; a user key type (the `custom_key` example's
//! `Trade`, a derived order) both ways it sorts: by its `less` in the kernels
//! `warpsort-build` compiled for it in `build.rs`, and as ordered words on
//! warpsort's own kernels; beside the built-in tuple of the same fields, on
//! the same keys.

use std::cmp::Reverse;

use rayon::slice::ParallelSliceMut;
use trade_key::Trade;
use warpsort::{Column, Gpu, SortKey, SortOptions, Tuple};
use warpsort_key::Order;
use warpsort_testkit::data::{Dist, FromPattern};

use crate::bench::cub::{CubMode, Records};
use crate::bench::report::Row;
use crate::bench::{Bench, Result, input, progress};

/// Runs the suite.
pub fn custom(b: &mut Bench) -> Result<()> {
    let ns: &[usize] = if b.opts.quick { &[1 << 20, 1 << 24] } else { &[1 << 24, 1 << 26] };
    // Loaded once: the first load JIT-compiles the user key's PTX.
    let user = Gpu::with_key_kernels(0, TRADE_PTX)?;
    for &n in ns {
        progress(&format!("composite keys, n = 2^{}", n.trailing_zeros()));
        let pairs = input::<Tuple<(u32, u32)>>(Dist::Uniform, n);
        let records: Vec<u8> =
            pairs.iter().flat_map(|t| [t.0.0.to_le_bytes(), t.0.1.to_le_bytes()]).flatten().collect();
        rows(b, &pairs, "u32x2", &records)?;
        let floats = input::<Tuple<(f32, u32)>>(Dist::Uniform, n);
        let records: Vec<u8> =
            floats.iter().flat_map(|t| [t.0.0.to_bits().to_le_bytes(), t.0.1.to_le_bytes()]).flatten().collect();
        rows(b, &floats, "f32u32", &records)?;
        let bytes = input::<[u8; 8]>(Dist::Uniform, n);
        rows(b, &bytes, "b8", bytes.as_flattened())?;
        // Two words.
        let wide = input::<Tuple<(u64, u32)>>(Dist::Uniform, n);
        let records: Vec<u8> = wide
            .iter()
            .flat_map(|t| t.0.0.to_le_bytes().into_iter().chain(t.0.1.to_le_bytes()).chain([0; 4]))
            .collect();
        rows(b, &wide, "u64u32", &records)?;
        let uuids = input::<[u8; 16]>(Dist::Uniform, n);
        rows(b, &uuids, "b16", uuids.as_flattened())?;
        // The same ordered words as u64 keys: the sort without the encoding.
        let words: Vec<u64> = pairs.iter().map(|t| t.to_bits()).collect();
        b.sort_row_with::<u64, u32>(
            "custom",
            "warpsort u64 words".into(),
            SortOptions::default(),
            Dist::Uniform,
            false,
            &words,
        )?;
        // ORDER BY region (u16), revenue (f32) descending, id (u16): a stable argsort.
        let table = input::<Tuple<(u16, Reverse<f32>, u16)>>(Dist::FewUnique, n);
        let stable = SortOptions { stable: true, ..Default::default() };
        b.argsort_row("custom", stable, Dist::FewUnique, &table)?;
        let table = input::<Tuple<(u16, Reverse<f64>, u64)>>(Dist::Uniform, n);
        b.argsort_row("custom", stable, Dist::Uniform, &table)?;
        order_by_rows(b, n)?;
        record_rows(b, n)?;
        user_key_rows(b, &user, n)?;
    }
    Ok(())
}

/// The kernels `build.rs` compiled for [`Trade`].
const TRADE_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/warpsort_trade.ptx"));

/// `Trade` (venue, price descending, id: `#[derive(Order)]`) sorted by
/// [`Gpu::sort_custom`] and [`Gpu::sort_custom_pairs`] (`u32` values, the
/// input positions) on a handle with its kernels (by `less`) and on the
/// bench's own (as ordered words), beside the built-in
/// `(u32, Reverse<f32>, u32)` tuple of the same fields and the same keys;
/// verified against the CPU's sort by the same `less` (keys bit for bit,
/// values a permutation carried with their keys).
fn user_key_rows(b: &mut Bench, user: &Gpu, n: usize) -> Result<()> {
    type Builtin = Tuple<(u32, Reverse<f32>, u32)>;
    let tuples = input::<Builtin>(Dist::Uniform, n);
    let ws = SortOptions::default();
    for pairs in [false, true] {
        b.sort_row_with::<Builtin, u32>("custom", "warpsort".into(), ws, Dist::Uniform, pairs, &tuples)?;
    }
    let trades: Vec<Trade> = tuples.iter().map(|t| Trade { venue: t.0.0, price: t.0.1.0, id: t.0.2 }).collect();
    drop(tuples);
    let mut want = trades.clone();
    want.par_sort_unstable_by(Order::order); // equal in this order: the same bits
    let positions: Vec<u32> = (0..n as u32).collect();
    let builtin = b.gpu;
    for (gpu, algo) in [(user, "warpsort user type (warpsort-build)"), (builtin, "warpsort user type (derived)")] {
        user_key_run(b, gpu, algo, &trades, &want, &positions)?;
    }
    Ok(())
}

/// [`user_key_rows`] on one handle.
fn user_key_run(
    b: &mut Bench,
    user: &Gpu,
    algo: &str,
    trades: &[Trade],
    want: &[Trade],
    positions: &[u32],
) -> Result<()> {
    type Builtin = Tuple<(u32, Reverse<f32>, u32)>;
    let (n, ws) = (trades.len(), SortOptions::default());
    let bits = |t: &Trade| (t.venue, t.price.to_bits(), t.id);
    let s = user.stream().clone();
    let pristine = s.clone_htod(trades)?;
    let mut work = s.clone_dtod(&pristine)?;
    let vals_pristine = s.clone_htod(positions)?;
    let mut vals = s.clone_dtod(&vals_pristine)?;
    for pairs in [false, true] {
        let ms = b.time_reset_on(user, |timed| match (timed, pairs) {
            (false, _) => {
                s.memcpy_dtod(&pristine, &mut work)?;
                Ok(s.memcpy_dtod(&vals_pristine, &mut vals)?)
            }
            (true, false) => user.sort_custom(&mut work, &ws),
            (true, true) => user.sort_custom_pairs(&mut work, &mut vals, &ws),
        })?;
        let got = s.clone_dtoh(&work)?;
        let mut verified = got.len() == n && got.iter().zip(want).all(|(g, w)| bits(g) == bits(w));
        if pairs {
            let v = s.clone_dtoh(&vals)?;
            let mut seen = vec![false; n];
            verified &= v.iter().zip(&got).all(|(&i, g)| {
                let i = i as usize;
                i < n && bits(&trades[i]) == bits(g) && !std::mem::replace(&mut seen[i], true)
            });
        }
        b.report.push(Row {
            suite: "custom",
            algo: algo.into(),
            dtype: Builtin::NAME,
            pairs,
            dist: Dist::Uniform.name(),
            n,
            ms,
            bytes_per_key: 2 * (size_of::<Trade>() + if pairs { 4 } else { 0 }),
            verified,
        });
    }
    Ok(())
}

/// ORDER BY region (`u16`), revenue (`f64`) descending, id (`u64`) over
/// device columns: `Gpu::order_by` timed (the permutation), verified on the
/// host (a permutation, rows in order, ties in input order); then the
/// harness on the same rows as 24-byte records.
fn order_by_rows(b: &mut Bench, n: usize) -> Result<()> {
    let p = input::<u64>(Dist::Uniform, n);
    let region: Vec<u16> = p.iter().map(|x| (x >> 58) as u16).collect();
    let revenue: Vec<f64> = p.iter().map(|x| ((x >> 20) % 100_000) as f64 / 100.0).collect();
    let id: Vec<u64> = p.iter().map(|x| x % 1_000_003).collect();
    let (gpu, s) = (b.gpu, b.gpu.stream().clone());
    let (dr, dv, di) = (s.clone_htod(&region)?, s.clone_htod(&revenue)?, s.clone_htod(&id)?);
    let columns = [Column::asc(&dr), Column::desc(&dv), Column::asc(&di)];
    let mut out = None;
    let ms = b.time_reset(|timed| {
        if timed {
            out = Some(gpu.order_by(&columns)?);
        }
        Ok(())
    })?;
    let perm = s.clone_dtoh(&out.expect("timed at least once"))?;
    // Rows in order, ties in input order.
    let before = |a: usize, b: usize| {
        let by = region[a].cmp(&region[b]).then(revenue[b].total_cmp(&revenue[a])).then(id[a].cmp(&id[b]));
        by.then(a.cmp(&b)).is_lt()
    };
    let mut seen = vec![false; n];
    let verified = perm.iter().all(|&i| (i as usize) < n && !std::mem::replace(&mut seen[i as usize], true))
        && perm.windows(2).all(|w| before(w[0] as usize, w[1] as usize));
    b.report.push(Row {
        suite: "custom",
        algo: "warpsort order_by".into(),
        dtype: "orderby3",
        pairs: false,
        dist: Dist::Uniform.name(),
        n,
        ms,
        bytes_per_key: 2 * (2 + 8 + 8 + 4),
        verified,
    });
    let records: Vec<u8> = (0..n)
        .flat_map(|i| {
            let r = region[i].to_le_bytes().into_iter().chain([0; 6]);
            r.chain(revenue[i].to_bits().to_le_bytes()).chain(id[i].to_le_bytes())
        })
        .collect();
    let mode = CubMode { arg: "0", dtype: "orderby3", pairs: false, val_bytes: 4 };
    let r = Records { dtype: "orderby3", bytes: &records, n, key_bytes: 18 };
    b.cub_rows_records("custom", Dist::Uniform.name(), mode, r, None, "");
    Ok(())
}

/// `u32` keys with 64-byte records: the argsort, then keys and records
/// gathered by it (`Gpu::gather`), timed together and verified on the host;
/// then the harness's key-value sorts of the same records (`rec64`).
fn record_rows(b: &mut Bench, n: usize) -> Result<()> {
    let keys = input::<u32>(Dist::Uniform, n);
    let records: Vec<[u32; 16]> = (0..n as u32).map(|i| [i; 16]).collect();
    let (gpu, s) = (b.gpu, b.gpu.stream().clone());
    let (dk, dr) = (s.clone_htod(&keys)?, s.clone_htod(&records)?);
    let mut out = None;
    let ms = b.time_reset(|timed| {
        if timed {
            let p = gpu.argsort(&dk, &SortOptions::default())?;
            out = Some((gpu.gather(&dk, &p)?, gpu.gather(&dr, &p)?));
        }
        Ok(())
    })?;
    let (ok, or) = out.expect("timed at least once");
    let (ok, or) = (s.clone_dtoh(&ok)?, s.clone_dtoh(&or)?);
    let mut seen = vec![false; n];
    let verified = ok.windows(2).all(|w| w[0] <= w[1])
        && or.iter().zip(&ok).all(|(r, &k)| {
            let v = r[0] as usize;
            v < n && r.iter().all(|&x| x as usize == v) && keys[v] == k && !std::mem::replace(&mut seen[v], true)
        });
    b.report.push(Row {
        suite: "custom",
        algo: "warpsort argsort + gather".into(),
        dtype: "u32:rec64",
        pairs: true,
        dist: Dist::Uniform.name(),
        n,
        ms,
        bytes_per_key: 2 * (4 + 64),
        verified,
    });
    let mode = CubMode { arg: "rec64", dtype: "u32:rec64", pairs: true, val_bytes: 64 };
    b.cub_rows_as("custom", Dist::Uniform, mode, &keys, None, "");
    Ok(())
}

/// warpsort's keys and key-value rows of `keys`, then the harness's rows of
/// the same keys as its `dtype` records.
fn rows<K: SortKey>(b: &mut Bench, keys: &[K], dtype: &'static str, records: &[u8]) -> Result<()>
where
    K::Bits: FromPattern,
{
    let u = Dist::Uniform;
    let ws = SortOptions::default();
    b.sort_row_with::<K, u32>("custom", "warpsort".into(), ws, u, false, keys)?;
    b.sort_row_with::<K, u32>("custom", "warpsort".into(), ws, u, true, keys)?;
    if !b.opts.no_sample {
        let ss = SortOptions::algorithm(warpsort::Algorithm::SampleSort);
        b.sort_row_with::<K, u32>("custom", "sample".into(), ss, u, false, keys)?;
    }
    let r = Records { dtype, bytes: records, n: keys.len(), key_bytes: size_of::<K>() };
    for pairs in [false, true] {
        let mode =
            CubMode { arg: if pairs { "1" } else { "0" }, dtype: K::NAME, pairs, val_bytes: if pairs { 4 } else { 0 } };
        b.cub_rows_records("custom", u.name(), mode, r, None, "");
    }
    Ok(())
}
