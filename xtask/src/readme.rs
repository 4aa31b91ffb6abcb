//! `cargo xtask readme RESULTS.jsonl...`: the README's first table (one
//! run of `warpsort bench --suite types,sizes`), its distribution table
//! (`--suite dists`), presorted table (`--suite presorted`), values table
//! (`--suite values`) and segmented table (`--suite segments`) rewritten
//! from the runs' rows, each number where the rows hold it; other lines
//! stay as they are. Each row's label says what it measures ([`spec`], the
//! tables' own columns below); a test holds the README to the runs it
//! cites.

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
    let cells = cells(line);
    let (Some(&label), Some(&size)) = (cells.first(), cells.get(1)) else { return Ok(None) };
    let (Some(sp), Some(n)) = (spec(label), power(size)) else { return Ok(None) };
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
    let label = cells(line).first().copied().unwrap_or("");
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

/// A presorted-table line (`u32` keys, then pairs: warpsort, without the
/// scan, CUB's merge and radix sorts) rewritten from `rows`, or `None`.
fn presorted_line(line: &str, rows: &[Row]) -> Result<Option<String>, String> {
    let cells = cells(line);
    let (Some(&dist), Some(n)) = (cells.first(), cells.get(1).and_then(|s| power(s))) else { return Ok(None) };
    let mut out = Vec::new();
    for pairs in [false, true] {
        for algo in ["warpsort", "warpsort-noscan", "cub_merge_sort", "cub_radix_sort"] {
            match rate(rows, "presorted", algo, "u32", pairs, dist, n)? {
                Some(x) => out.push(gkeys(x)),
                None => return Ok(None),
            }
        }
    }
    Ok(Some(format!("| {dist} | {} | {} |", cells[1], out.join(" | "))))
}

/// A values-table line (`u32` keys with `u64` values: warpsort, CUB's
/// merge sort, the ratio, CUB's radix sort, warpsort's stable sort; two
/// decimals) rewritten from `rows`, or `None`.
fn values_line(line: &str, rows: &[Row]) -> Result<Option<String>, String> {
    let cells = cells(line);
    let (Some(&label), Some(n)) = (cells.first(), cells.get(1).and_then(|s| power(s))) else { return Ok(None) };
    let get = |algo: &str| rate(rows, "values", algo, "u32:u64", true, "uniform", n);
    let (Some(w), Some(m), Some(r), Some(st)) =
        (get("warpsort")?, get("cub_merge_sort")?, get("cub_radix_sort")?, get("warpsort stable")?)
    else {
        return Ok(None);
    };
    Ok(Some(format!("| {label} | {} | {w:.2} | {m:.2} | {:.2} | {r:.2} | {st:.2} |", cells[1], w / m)))
}

/// A segmented-table line (2^24 `u32` keys: warpsort's rows, its offsets,
/// CUB's `DeviceSegmentedSort`, offsets over CUB) rewritten from `rows`,
/// or `None`. Rows of random lengths have no rows column.
fn segments_line(line: &str, rows: &[Row]) -> Result<Option<String>, String> {
    let label = cells(line).first().copied().unwrap_or("");
    let (what, pairs) = match label.rsplit_once(", ") {
        Some((what, "keys")) => (what, false),
        Some((what, "key-value")) => (what, true),
        _ => return Ok(None),
    };
    let seg = match (what.strip_prefix("segments of "), what.strip_prefix("random lengths ")) {
        (Some(len), _) => len.to_string(),
        (None, Some(range)) => format!("random{range}"),
        _ => return Ok(None),
    };
    let get = |algo: &str| rate(rows, "segments", &format!("{algo}/seg={seg}"), "u32", pairs, "uniform", 1 << 24);
    let (Some(o), Some(c)) = (get("warpsort_offsets")?, get("cub_segmented_sort")?) else { return Ok(None) };
    let by_rows = get("warpsort_rows")?.map(gkeys).unwrap_or_default();
    let ratio = o / c;
    let ratio = if ratio >= 10.0 { format!("{ratio:.0}x") } else { format!("{ratio:.1}x") };
    Ok(Some(format!("| {label} | {by_rows} | {} | {} | {ratio} |", gkeys(o), gkeys(c))))
}

/// A table line's cells, trimmed.
fn cells(line: &str) -> Vec<&str> {
    line.trim().trim_matches('|').split('|').map(str::trim).collect()
}

/// `2^k` as a number.
fn power(size: &str) -> Option<u64> {
    size.strip_prefix("2^").and_then(|e| e.parse::<u32>().ok()).map(|k| 1u64 << k)
}

/// The README's text with the rows of the tables this module knows
/// rewritten from `rows`.
pub fn rewrite(readme: &str, rows: &[Row]) -> Result<String, String> {
    #[derive(PartialEq)]
    enum In {
        Nothing,
        First,
        Dists,
        Presorted,
        Values,
        Segments,
    }
    let mut at = In::Nothing;
    let mut out = String::with_capacity(readme.len());
    for line in readme.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if bare.starts_with("| operation (uniform keys)") {
            at = In::First;
        } else if bare.starts_with("| distribution, 2^24 u32") {
            at = In::Dists;
        } else if bare.starts_with("| presorted input, u32") {
            at = In::Presorted;
        } else if bare.starts_with("| u32 key + u64 value, Gkeys/s") {
            at = In::Values;
        } else if bare.starts_with("| segmented sort, 2^24 u32 keys") {
            at = In::Segments;
        } else if !bare.starts_with('|') {
            at = In::Nothing;
        }
        let new = match at {
            In::First => first_table_line(bare, rows)?,
            In::Dists => dist_line(bare, rows)?,
            In::Presorted => presorted_line(bare, rows)?,
            In::Values => values_line(bare, rows)?,
            In::Segments => segments_line(bare, rows)?,
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

    /// The runs the README's tables come from, each cited by its log or its rows.
    const RUNS: [&str; 5] = [
        "docs/runs/2026-12-01g/call3-bench-types-sizes-04aa134-h200.jsonl",
        "docs/runs/2026-12-01g/call3-bench-dists-04aa134-h200.jsonl",
        "docs/runs/2026-12-01g/call4-bench-presorted-04aa134-h200.jsonl",
        "docs/runs/2026-12-01g/call4-bench-values-04aa134-h200.jsonl",
        "docs/runs/2026-12-01g/call4-bench-segments-04aa134-h200.jsonl",
    ];

    /// The README's first, distribution, presorted, values and segmented
    /// tables are what the runs it cites say, number for number.
    #[test]
    fn the_readme_tables_are_their_runs() {
        let root = crate::root();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let mut rows = Vec::new();
        for run in RUNS {
            let name = run.rsplit('/').next().unwrap().trim_end_matches(".jsonl");
            assert!(readme.contains(name), "the README cites {run}");
            rows.extend(parse(&std::fs::read_to_string(root.join(run)).unwrap()).unwrap());
        }
        let rewritten = rewrite(&readme, &rows).unwrap();
        for (a, b) in readme.lines().zip(rewritten.lines()) {
            assert_eq!(a, b, "a README table line differs from its run");
        }
        // Every row of every table comes from the runs.
        let table = |header: &str| -> Vec<&str> {
            let at = readme.find(header).unwrap();
            readme[at..].lines().skip(2).take_while(|l| l.starts_with('|')).collect()
        };
        type Line = fn(&str, &[Row]) -> Result<Option<String>, String>;
        let tables: [(&str, Line); 5] = [
            ("| operation (uniform keys)", first_table_line),
            ("| distribution, 2^24 u32", dist_line),
            ("| presorted input, u32", presorted_line),
            ("| u32 key + u64 value, Gkeys/s", values_line),
            ("| segmented sort, 2^24 u32 keys", segments_line),
        ];
        assert_eq!(table(tables[1].0).len(), DISTS.len());
        for (header, line) in tables {
            let lines = table(header);
            assert!(!lines.is_empty(), "{header}: no rows");
            for l in lines {
                assert!(line(l, &rows).unwrap().is_some(), "{header}: a row with no run: {l}");
            }
        }
    }

    #[test]
    fn rates_print_as_the_tables_do() {
        assert_eq!((gkeys(21.26), gkeys(386.4), gkeys(9.04)), ("21.3".into(), "386".into(), "9.0".into()));
    }
}
