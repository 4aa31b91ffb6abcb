//! The paper's own experiments on its own configuration
//! ([`Algorithm::WarpsortPaper`]) and on the tuned pipeline's options:
//! Fig. 11 (step 1 warp- against block-based), Fig. 12 (coalesced against
//! reversed loads), Fig. 13 (bitonic against rank-based merges), Fig. 14
//! (time per step), and sweeps of the paper's `t`, `l`, `s` and `k`.

use warpsort::kernels::config::PAPER_BUFFERS;
use warpsort::{Algorithm, MergeKernel, MergeSortConfig, PaperConfig, PaperLoads, SortOptions, TileSort};
use warpsort_testkit::data::Dist;

use super::steps::profile_sort;
use crate::bench::report::Row;
use crate::bench::{Bench, Result, input, progress};

/// Options of the paper's pipeline with `cfg`.
fn paper(cfg: PaperConfig) -> SortOptions {
    SortOptions { algorithm: Algorithm::WarpsortPaper, paper: cfg, ..Default::default() }
}

/// Options of the tuned pipeline with `cfg`.
fn tuned(cfg: MergeSortConfig) -> SortOptions {
    SortOptions { merge_sort: cfg, ..SortOptions::algorithm(Algorithm::MergeSort) }
}

/// Figs. 11-13 at `n`: (suite, label, options) of every row, then one loop runs them.
fn figures(b: &mut Bench, keys_in: &[u32], pairs: bool) -> Result<()> {
    let mut rows: Vec<(&'static str, String, SortOptions)> = Vec::new();
    for loads in [PaperLoads::Coalesced, PaperLoads::Reversed] {
        rows.push(("fig12", format!("paper loads={loads:?}"), paper(PaperConfig { loads, ..Default::default() })));
    }
    for merge in [MergeKernel::WarpBitonic, MergeKernel::Block] {
        rows.push((
            "fig13",
            format!("warpsort merge={merge:?}"),
            tuned(MergeSortConfig { merge, ..Default::default() }),
        ));
    }
    for tile_sort in [TileSort::WarpMerge, TileSort::BlockBitonic] {
        let o = tuned(MergeSortConfig { tile: 4096, tile_sort, ..Default::default() });
        rows.push(("fig11", format!("warpsort step1={tile_sort:?} tile=4096"), o));
    }
    for (suite, label, o) in rows {
        b.sort_row_with::<u32, u32>(suite, label, o, Dist::Uniform, pairs, keys_in)?;
    }
    Ok(())
}

/// Fig. 14: the time of each step (kernel times grouped by step), a row per step.
fn fig14(b: &mut Bench, keys_in: &[u32], pairs: bool) -> Result<()> {
    let n = keys_in.len();
    let what = if pairs { "pairs" } else { "keys" };
    progress(&format!("paper time per step (Fig. 14), n = 2^{}, {what}", n.trailing_zeros()));
    let (times, verified) = profile_sort::<u32, u32>(b, keys_in, pairs, &paper(PaperConfig::default()))?;
    let mut steps = [0.0f64; 4];
    for t in &times {
        let step = match t.kernel.as_str() {
            k if k.starts_with("block_sort") => 0, // and the 8192 samples' sort
            k if k.starts_with("paper_merge") => 1,
            k if k.starts_with("paper_final") => 3,
            _ => 2, // samples, split, group starts
        };
        steps[step] += t.ms;
        println!(
            "fig14     {what:<5} n=2^{:<3} {:<28} {:>3} launches {:>9.3} ms",
            n.trailing_zeros(),
            t.kernel,
            t.launches,
            t.ms
        );
    }
    for (i, ms) in steps.into_iter().enumerate() {
        b.report.push(Row {
            suite: "fig14",
            algo: format!("paper step {}", i + 1),
            dtype: if pairs { "u32:u32" } else { "u32" },
            pairs,
            dist: "uniform",
            n,
            ms,
            bytes_per_key: if pairs { 16 } else { 8 },
            verified,
        });
    }
    Ok(())
}

/// Runs the suite.
pub fn paper_suite(b: &mut Bench) -> Result<()> {
    let quick = b.opts.quick;
    let ns: Vec<usize> = if quick { vec![1 << 20, 1 << 22] } else { vec![1 << 20, 1 << 22, 1 << 24] };
    for &n in &ns {
        let keys_in = input::<u32>(Dist::Uniform, n);
        for pairs in [false, true] {
            progress(&format!("paper experiments (Figs. 11-13), n = 2^{}, pairs {pairs}", n.trailing_zeros()));
            figures(b, &keys_in, pairs)?;
        }
        for pairs in [false, true] {
            fig14(b, &keys_in, pairs)?;
        }
    }
    // The paper's parameters at one size.
    let n = if quick { 1 << 22 } else { 1 << 24 };
    let keys_in = input::<u32>(Dist::Uniform, n);
    progress(&format!("paper parameters t, l, s, k, n = 2^{}", n.trailing_zeros()));
    let d = PaperConfig::default();
    let mut cfgs: Vec<(String, PaperConfig)> = Vec::new();
    for buffer in PAPER_BUFFERS {
        cfgs.push((format!("t={buffer}"), PaperConfig { buffer, ..d }));
    }
    for l in [128, 256, 1024, 2048] {
        cfgs.push((format!("l={l}"), PaperConfig { sequences: l, ..d }));
    }
    for (groups, oversampling) in [(256, 32), (512, 16), (2048, 4), (8192, 1)] {
        cfgs.push((format!("s={groups} k={oversampling}"), PaperConfig { groups, oversampling, ..d }));
    }
    for (label, cfg) in cfgs {
        b.sort_row_with::<u32, u32>(
            "paper-params",
            format!("paper {label}"),
            paper(cfg),
            Dist::Uniform,
            false,
            &keys_in,
        )?;
    }
    Ok(())
}
