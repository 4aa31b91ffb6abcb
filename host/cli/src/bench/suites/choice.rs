//! The choice suite: the merge sort against the sample sort for each kind
//! of items a full sort sees (key width, payload, ranks of a stable sort)
//! against `n`, the evidence of the table `Algorithm::Auto` reads.

use warpsort::{Algorithm, SortKey, SortOptions};
use warpsort_testkit::data::{Dist, FromPattern};

use crate::bench::measure::Position;
use crate::bench::{Bench, Result, input, progress};

/// Runs the suite: 2^20 to 2^28 items (to 2^24 with `--quick`): keys
/// alone, with `u32` values, stable, of 4- and 8-byte keys, and `u32` keys
/// with `u64` values (which the merge sort moves once, at the end).
pub fn choice(b: &mut Bench) -> Result<()> {
    let top = if b.opts.quick { 24 } else { 28 };
    for p in 20..=top {
        let n = 1usize << p;
        progress(&format!("merge sort against sample sort, n = 2^{p}"));
        both::<u32, u32>(b, n, false, false)?;
        both::<u32, u32>(b, n, true, false)?;
        both::<u32, u64>(b, n, true, false)?;
        both::<u32, u32>(b, n, true, true)?;
        both::<u64, u32>(b, n, false, false)?;
        both::<u64, u32>(b, n, true, false)?;
        both::<u64, u64>(b, n, true, false)?;
        both::<u64, u32>(b, n, true, true)?;
    }
    Ok(())
}

/// Uniform `K` keys (with `V` positions when `pairs`; `stable`) by either
/// algorithm, rows `merge-sort` and `sample`.
fn both<K: SortKey, V: Position>(b: &mut Bench, n: usize, pairs: bool, stable: bool) -> Result<()>
where
    K::Bits: FromPattern,
{
    let keys = input::<K>(Dist::Uniform, n);
    for algorithm in [Algorithm::MergeSort, Algorithm::SampleSort] {
        let opts = SortOptions { algorithm, stable, ..Default::default() };
        let label = format!("{}{}", algorithm.name(), if stable { " stable" } else { "" });
        b.sort_row_with::<K, V>("choice", label, opts, Dist::Uniform, pairs, &keys)?;
    }
    Ok(())
}
