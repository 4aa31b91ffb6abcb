//! The sample sort's tune suite: the chunk of each distribution pass and the
//! samples a way (`SampleSortConfig`), one at a time beside the tuned
//! default, against n: the evidence of the `SAMPLE` tuning in `policy.rs`.

use warpsort::{Algorithm, SampleSortConfig, SortKey, SortOptions};
use warpsort_testkit::data::Dist;

use crate::bench::{Bench, Result, input, progress};

/// Chunks tried for either pass.
const CHUNKS: [usize; 6] = [1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16, 1 << 17];
/// Samples a way tried.
const OVERSAMPLES: [u32; 4] = [4, 8, 16, 32];

/// Every configuration of one row set: the tuned one, then each parameter
/// alone, with its name.
fn configs() -> Vec<(String, SampleSortConfig)> {
    let tuned = SampleSortConfig::default();
    let mut out = vec![("sample tuned".to_string(), tuned)];
    out.extend(CHUNKS.map(|c| (format!("sample chunk={c}"), SampleSortConfig { chunk: c, ..tuned })));
    out.extend(CHUNKS.map(|c| (format!("sample second_chunk={c}"), SampleSortConfig { second_chunk: c, ..tuned })));
    out.extend(OVERSAMPLES.map(|o| (format!("sample oversample={o}"), SampleSortConfig { oversample: o, ..tuned })));
    out
}

/// The rows of `keys` (with `u32` values when `pairs`) for every configuration.
fn rows<K: SortKey>(b: &mut Bench, keys: &[K], pairs: bool) -> Result<()> {
    for (name, cfg) in configs() {
        let o = SortOptions { sample_sort: cfg, ..SortOptions::algorithm(Algorithm::SampleSort) };
        // A configuration the GPU refuses (shared memory) is reported, not fatal.
        if let Err(e) = b.sort_row_with::<K, u32>("tune-sample", name.clone(), o, Dist::Uniform, pairs, keys) {
            println!("tune-sample {name}: not run: {e}");
        }
    }
    Ok(())
}

/// Runs the suite: `u32` keys and pairs from 2^22 to 2^28, `u64` keys to 2^26.
pub fn tune_sample(b: &mut Bench) -> Result<()> {
    let ns: &[usize] = if b.opts.quick { &[1 << 22, 1 << 24] } else { &[1 << 22, 1 << 24, 1 << 26, 1 << 28] };
    for &n in ns {
        progress(&format!("the sample sort's chunks and samples, n = 2^{}", n.trailing_zeros()));
        let keys = input::<u32>(Dist::Uniform, n);
        rows(b, &keys, false)?;
        rows(b, &keys, true)?;
        if n <= 1 << 26 {
            rows(b, &input::<u64>(Dist::Uniform, n), false)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_configuration_is_valid_and_named_once() {
        let all = configs();
        assert!(all.iter().all(|(_, c)| c.validate().is_ok()));
        let mut names: Vec<_> = all.iter().map(|(n, _)| n.clone()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }
}
