//! The types suite: key types, payload widths, argsort and the stable sort
//! beside the same operations in CUB (argsort: CUB's rows include its iota
//! kernel in the timing, as warpsort's include its own); each also by the
//! sample sort alone (rows `sample`; rows `warpsort` run the default, which
//! chooses between the merge sort and the sample sort).

use warpsort::{Algorithm, SortKey, SortOptions};
use warpsort_testkit::data::{Dist, FromPattern};

use crate::bench::cub::CubMode;
use crate::bench::{Bench, Result, input, progress};

/// Runs the suite.
pub fn types(b: &mut Bench) -> Result<()> {
    let ns: &[usize] = if b.opts.quick { &[1 << 20, 1 << 24] } else { &[1 << 20, 1 << 24, 1 << 26] };
    let ws = SortOptions::default();
    let stable = SortOptions { stable: true, ..ws };
    let u = Dist::Uniform;
    for &n in ns {
        progress(&format!("key types, payloads, argsort, stable, n = 2^{}", n.trailing_zeros()));
        keys_beside_cub::<u64>(b, n)?;
        keys_beside_cub::<f32>(b, n)?;
        let k = input::<u32>(u, n);
        b.sort_row_with::<u32, u32>("types", "warpsort".into(), ws, u, true, &k)?;
        b.cub_rows("types", u, true, &k, None, "");
        b.sort_row_with::<u32, u64>("types", "warpsort".into(), ws, u, true, &k)?;
        let v64 = CubMode { arg: "v64", dtype: "u32:u64", pairs: true, val_bytes: 8 };
        b.cub_rows_as("types", u, v64, &k, None, "");
        b.argsort_row("types", ws, u, &k)?;
        b.argsort_row("types", stable, u, &k)?;
        let argsort = CubMode { arg: "argsort", dtype: "u32", pairs: false, val_bytes: 4 };
        b.cub_rows_as("types", u, argsort, &k, None, "");
        b.sort_row_with::<u32, u32>("types", "warpsort stable".into(), stable, u, true, &k)?;
        let st = CubMode { arg: "stable", dtype: "u32", pairs: true, val_bytes: 4 };
        b.cub_rows_as("types", u, st, &k, None, "");
        // Stability matters where keys repeat.
        let few = input::<u32>(Dist::FewUnique, n);
        b.sort_row_with::<u32, u32>("types", "warpsort stable".into(), stable, Dist::FewUnique, true, &few)?;
        b.cub_rows_as("types", Dist::FewUnique, st, &few, None, "");
        // The sample sort of the same inputs.
        if b.opts.no_sample {
            continue;
        }
        let ss = SortOptions::algorithm(Algorithm::SampleSort);
        let ss_stable = SortOptions { stable: true, ..ss };
        b.sort_row_with::<u32, u32>("types", "sample".into(), ss, u, true, &k)?;
        b.sort_row_with::<u32, u64>("types", "sample".into(), ss, u, true, &k)?;
        b.argsort_row("types", ss, u, &k)?;
        b.sort_row_with::<u32, u32>("types", "sample stable".into(), ss_stable, u, true, &k)?;
        for dtype in [sample_keys::<u64>, sample_keys::<i64>, sample_keys::<f64>, sample_keys::<f32>] {
            dtype(b, n)?;
        }
    }
    Ok(())
}

/// The values suite: `u32` keys with `u64` values (uniform) against `n`,
/// unstable and stable, beside CUB's merge and radix sorts of the same
/// pairs: the sizes where the values move by sorted positions and where
/// they do not.
pub fn values(b: &mut Bench) -> Result<()> {
    let ns: Vec<usize> = if b.opts.quick {
        vec![1 << 12, 1 << 16, 1 << 20, 1 << 24]
    } else {
        [12, 13, 14, 16, 18, 20, 22, 24, 26, 28].map(|p| 1usize << p).to_vec()
    };
    let ws = SortOptions::default();
    let stable = SortOptions { stable: true, ..ws };
    let u = Dist::Uniform;
    let v64 = CubMode { arg: "v64", dtype: "u32:u64", pairs: true, val_bytes: 8 };
    for n in ns {
        progress(&format!("u32 keys with u64 values, n = 2^{}", n.trailing_zeros()));
        let k = input::<u32>(u, n);
        b.sort_row_with::<u32, u64>("values", "warpsort".into(), ws, u, true, &k)?;
        b.sort_row_with::<u32, u64>("values", "warpsort stable".into(), stable, u, true, &k)?;
        b.cub_rows_as("values", u, v64, &k, None, "");
    }
    Ok(())
}

/// Uniform `K` keys sorted by warpsort and by CUB (the keys dropped after).
fn keys_beside_cub<K: SortKey + bytemuck::Pod>(b: &mut Bench, n: usize) -> Result<()>
where
    K::Bits: FromPattern,
{
    let keys = input::<K>(Dist::Uniform, n);
    b.sort_row_with::<K, u32>("types", "warpsort".into(), SortOptions::default(), Dist::Uniform, false, &keys)?;
    b.cub_rows("types", Dist::Uniform, false, &keys, None, "");
    Ok(())
}

/// Uniform `K` keys sorted by the sample sort (CUB's rows of the same
/// distribution come from [`keys_beside_cub`] for the types it runs).
fn sample_keys<K: SortKey>(b: &mut Bench, n: usize) -> Result<()>
where
    K::Bits: FromPattern,
{
    let keys = input::<K>(Dist::Uniform, n);
    let ss = SortOptions::algorithm(Algorithm::SampleSort);
    b.sort_row_with::<K, u32>("types", "sample".into(), ss, Dist::Uniform, false, &keys)?;
    Ok(())
}
