//! The custom suite: composite keys beside CUB sorting the same records, its
//! merge sort with the same comparator and its radix sort with a
//! decomposer over the fields (the harness's `u32x2`, `f32u32`, `b8`,
//! `u64u32` and `b16` records); the `u64` keys of the same ordered words, to
//! show what the encoding costs; ORDER BY of three columns (a stable
//! argsort of their tuples: one word, and three).

use std::cmp::Reverse;

use warpsort::{SortKey, SortOptions, Tuple};
use warpsort_testkit::data::{Dist, FromPattern};

use crate::bench::cub::{CubMode, Records};
use crate::bench::{Bench, Result, input, progress};

/// Runs the suite.
pub fn custom(b: &mut Bench) -> Result<()> {
    let ns: &[usize] = if b.opts.quick { &[1 << 20, 1 << 24] } else { &[1 << 24, 1 << 26] };
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
    }
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
    let r = Records { dtype, bytes: records, n: keys.len(), key_bytes: size_of::<K>() };
    for pairs in [false, true] {
        let mode =
            CubMode { arg: if pairs { "1" } else { "0" }, dtype: K::NAME, pairs, val_bytes: if pairs { 4 } else { 0 } };
        b.cub_rows_records("custom", u.name(), mode, r, None, "");
    }
    Ok(())
}
