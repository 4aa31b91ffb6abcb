//! `cargo xtask readme RESULTS.jsonl...`: the README's first table (one
//! run of `warpsort bench --suite types,sizes`) and its distribution table
//! (`--suite dists`) rewritten from the runs' rows, each number where the
//! rows hold it; other lines stay as they are. Each row's label says what
//! it measures ([`spec`]); a test holds the README to the runs it cites.

use std::path::Path;

use crate::plot::{Row, parse};

/// What a first-table row measures: `(suite, warpsort's algo, dtype, pairs,
/// dist)`, then CUB's merge sort and radix sort rows and PyTorch's
/// (`torch_bench.py`) beside it (`None`: none).
struct Spec {
    suite: &'static str,
    algo: &'static str,
    dtype: &'static str,
    pairs: bool,
    dist: &'static str,
    merge: Option<&'static str>,
    radix: Option<&'static str>,
    torch: Option<&'static str>,
}

/// The [`Spec`] of a first-table row by its label's start.
fn spec(label: &str) -> Option<Spec> {
    let s = |suite, algo, dtype, pairs, merge, radix| {
        // torch.sort sorts keys and makes their positions at once (sort and
        // argsort alike); pairs gather the values by the positions.
        let torch = match (pairs, algo) {
            (_, "warpsort argsort stable") => None,
            (_, "warpsort stable") => Some("torch_sort_stable_gather"),
            (true, _) => Some("torch_sort_gather"),
            (false, _) => Some("torch_sort"),
        };
        Spec { suite, algo, dtype, pairs, dist: "uniform", merge, radix, torch }
    };
    let (m, r) = (Some("cub_merge_sort"), Some("cub_radix_sort"));
    let stable = (Some("cub_merge_sort_stable"), Some("cub_radix_sort_stable"));
    Some(match label {
        l if l.starts_with("full sort, u32 keys") => s("sizes", "warpsort", "u32", false, m, r),
        l if l.starts_with("full sort, u32 key + u32 value") => s("sizes", "warpsort", "u32", true, m, r),
        l if l.starts_with("full sort, u32 key + u64 value") => s("types", "warpsort", "u32:u64", true, m, r),
        l if l.starts_with("full sort, u64 keys") => s("types", "warpsort", "u64", false, m, r),
        l if l.starts_with("full sort, f32 keys") => s("types", "warpsort", "f32", false, m, r),
        l if l.starts_with("argsort") => {
            s("types", "warpsort argsort", "u32", false, Some("cub_merge_argsort"), Some("cub_radix_argsort_stable"))
        }
        l if l.starts_with("stable argsort") => {
            s("types", "warpsort argsort stable", "u32", false, None, Some("cub_radix_argsort_stable"))
        }
        l if l.starts_with("stable key-value, u32 + u32") => {
            s("types", "warpsort stable", "u32", true, stable.0, stable.1)
        }
        l if l.starts_with("stable key-value, few-unique") => {
            Spec { dist: "few-unique", ..s("types", "warpsort stable", "u32", true, stable.0, stable.1) }
        }
        l if l.starts_with("the merge sort alone") => s("sizes", "merge-sort", "u32", false, m, r),
        l if l.starts_with("the sample sort alone") => s("sizes", "sample", "u32", false, m, r),
        l if l.starts_with("GPU-Warpsort as published (") => s("sizes", "warpsort-paper", "u32", false, m, None),
        l if l.starts_with("GPU-Warpsort as published, u32 key") => s("sizes", "warpsort-paper", "u32", true, m, None),
        l if l.starts_with("full bitonic") => s("sizes", "bitonic", "u32", false, None, None),
        _ => return None,
    })
}

/// The distribution table's rows: label, then the `dists` suite's name.
const DISTS: [(&str, &str); 10] = [
    ("uniform", "uniform"),
    ("sorted", "sorted"),
    ("reverse", "reverse"),
    ("all equal", "all-equal"),
    ("few unique", "few-unique"),
    ("Gaussian", "gaussian"),
    ("bucket", "bucket"),
    ("staggered", "staggered"),
    ("Zipf (2^20 distinct keys)", "zipf"),
    ("one value 90%", "dominant"),
];

/// The rate (Gkeys/s) of the one row that matches, if the runs hold it
/// (an error when it is not verified, or not alone).
fn rate(
    rows: &[Row],
    suite: &str,
    algo: &str,
    dtype: &str,
    pairs: bool,
    dist: &str,
    n: u64,
) -> Result<Option<f64>, String> {
    let m: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            r.suite == suite && r.algo == algo && r.dtype == dtype && r.pairs == pairs && r.dist == dist && r.n == n
        })
        .collect();
    match m[..] {
        [] => Ok(None),
        [r] if r.verified => Ok(Some(r.keys_per_s / 1e9)),
        [_] => Err(format!("{suite} {algo} {dtype} n={n}: not verified")),
        _ => Err(format!("{suite} {algo} {dtype} {dist} n={n}: {} rows", m.len())),
    }
}

/// `x` as the tables print rates: one decimal, none from 100 on.
fn gkeys(x: f64) -> String {
    if x >= 100.0 { format!("{x:.0}") } else { format!("{x:.1}") }
}

/// A first-table line rewritten from `rows`, or `None` when it is no such
/// row or the rows lack it.
fn first_table_line(line: &str, rows: &[Row]) -> Result<Option<String>, String> {
    let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
    let (Some(label), Some(size)) = (cells.first(), cells.get(1)) else { return Ok(None) };
    let (Some(sp), Some(log)) = (spec(label), size.strip_prefix("2^").and_then(|e| e.parse::<u32>().ok())) else {
        return Ok(None);
    };
    let n = 1u64 << log;
    let get = |algo: &str| rate(rows, sp.suite, algo, sp.dtype, sp.pairs, sp.dist, n);
    let Some(w) = get(sp.algo)? else { return Ok(None) };
    let (merge, ratio) = match sp.merge.map(get).transpose()?.flatten() {
        Some(c) => (gkeys(c), format!("{:.2}", w / c)),
        None => (String::new(), String::new()),
    };
    let radix = match sp.radix.map(get).transpose()?.flatten() {
        Some(r) if label.starts_with("argsort") => format!("{} (stable)", gkeys(r)),
        Some(r) => gkeys(r),
        None => String::new(),
    };
    let torch = match sp.torch.map(get).transpose()?.flatten() {
        Some(t) => format!("{} ({:.2})", gkeys(t), w / t),
        None => String::new(),
    };
    Ok(Some(format!("| {label} | {size} | {} | {merge} | {ratio} | {radix} | {torch} |", gkeys(w))))
}

/// A distribution-table line rewritten from `rows` (2^24 `u32` keys and
/// pairs beside CUB), or `None`.
fn dist_line(line: &str, rows: &[Row]) -> Result<Option<String>, String> {
    let label = line.trim().trim_matches('|').split('|').next().unwrap_or("").trim();
    let Some(&(_, dist)) = DISTS.iter().find(|(l, _)| *l == label) else { return Ok(None) };
    let mut cells = Vec::new();
    for pairs in [false, true] {
        for algo in ["warpsort", "cub_merge_sort", "cub_radix_sort"] {
            match rate(rows, "dists", algo, "u32", pairs, dist, 1 << 24)? {
                Some(x) => cells.push(gkeys(x)),
                None => return Ok(None),
            }
        }
    }
    Ok(Some(format!("| {label} | {} |", cells.join(" | "))))
}

/// The README's text with the first table's and the distribution table's
/// rows rewritten from `rows`.
pub fn rewrite(readme: &str, rows: &[Row]) -> Result<String, String> {
    #[derive(PartialEq)]
    enum In {
        Nothing,
        First,
        Dists,
    }
    let mut at = In::Nothing;
    let mut out = String::with_capacity(readme.len());
    for line in readme.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if bare.starts_with("| operation (uniform keys)") {
            at = In::First;
        } else if bare.starts_with("| distribution, 2^24 u32") {
            at = In::Dists;
        } else if !bare.starts_with('|') {
            at = In::Nothing;
        }
        let new = match at {
            In::First => first_table_line(bare, rows)?,
            In::Dists => dist_line(bare, rows)?,
            In::Nothing => None,
        };
        match new {
            Some(l) => {
                out.push_str(&l);
                out.push_str(&line[bare.len()..]);
            }
            None => out.push_str(line),
        }
    }
    Ok(out)
}

/// Rewrites `README.md` from the runs' rows and prints how many lines changed.
pub fn readme(root: &Path, runs: &[String]) -> Result<(), String> {
    let mut rows = Vec::new();
    for run in runs {
        rows.extend(parse(&std::fs::read_to_string(run).map_err(|e| format!("{run}: {e}"))?)?);
    }
    let path = root.join("README.md");
    let old = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    let new = rewrite(&old, &rows)?;
    let changed = old.lines().zip(new.lines()).filter(|(a, b)| a != b).count();
    std::fs::write(&path, new).map_err(|e| e.to_string())?;
    println!("README.md: {changed} table lines changed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's first and distribution tables are what the runs it
    /// cites say, number for number.
    #[test]
    fn the_readme_tables_are_their_runs() {
        let root = crate::root();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let mut rows = Vec::new();
        for run in ["call4-bench-types-sizes-cfb77c2-h200.jsonl", "call4-bench-dists-cfb77c2-h200.jsonl"] {
            // Cited by its log or its rows.
            assert!(readme.contains(run.trim_end_matches(".jsonl")), "the README cites {run}");
            let text = std::fs::read_to_string(root.join("docs/runs/2026-11-30b").join(run)).unwrap();
            rows.extend(parse(&text).unwrap());
        }
        let rewritten = rewrite(&readme, &rows).unwrap();
        for (a, b) in readme.lines().zip(rewritten.lines()) {
            assert_eq!(a, b, "a README table line differs from its run");
        }
        // Every row of both tables comes from the runs.
        let table = |header: &str| -> Vec<&str> {
            let at = readme.find(header).unwrap();
            readme[at..].lines().skip(2).take_while(|l| l.starts_with('|')).collect()
        };
        let first = table("| operation (uniform keys)");
        assert!(first.iter().all(|l| first_table_line(l, &rows).unwrap().is_some()), "a first-table row with no run");
        let dists = table("| distribution, 2^24 u32");
        assert_eq!(dists.len(), DISTS.len());
        assert!(dists.iter().all(|l| dist_line(l, &rows).unwrap().is_some()), "a distribution row with no run");
    }

    #[test]
    fn rates_print_as_the_tables_do() {
        assert_eq!((gkeys(21.26), gkeys(386.4), gkeys(9.04)), ("21.3".into(), "386".into(), "9.0".into()));
    }
}
