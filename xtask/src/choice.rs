//! `cargo xtask choice RESULTS.jsonl`: the rows of `warpsort bench --suite
//! choice` (the merge sort against the sample sort for each kind of items a
//! full sort sees, against `n`) as the table of merge sort time over sample
//! sort time, and the `SampleRange` entries of `host/src/policy.rs` they
//! imply: over the longest run of measured sizes where the sample sort wins
//! by at least [`MARGIN`], from midway between the size before the run and
//! its first to midway between its last and the size after it (the run's
//! own end where no size lies beyond).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::plot::{Row, parse};

/// How much faster the sample sort must be to be chosen: it waits once for
/// the GPU, the merge sort does not, and runs on one machine repeat within
/// about 1%.
const MARGIN: f64 = 1.01;

/// The kind of items a row of the suite measured, as `ItemKind` names it
/// (`None`: not a row of the suite).
fn kind(r: &Row) -> Option<&'static str> {
    let stable = r.algo.ends_with(" stable");
    Some(match (r.dtype.as_str(), r.pairs, stable) {
        ("u32", false, false) => "U32",
        ("u32", true, false) => "U32U32",
        ("u32:u64", true, false) => "U32U64",
        ("u32", true, true) => "U32Rank",
        ("u64", false, false) => "U64",
        ("u64", true, false) => "U64U32",
        ("u64:u64", true, false) => "U64U64",
        ("u64", true, true) => "U64Rank",
        _ => return None,
    })
}

/// Each kind's `(n, merge sort time / sample sort time)`, `n` increasing.
type Ratios = BTreeMap<&'static str, Vec<(u64, f64)>>;

/// [`Ratios`] from the suite's rows (every one must be verified).
fn ratios(rows: &[Row]) -> Result<Ratios, String> {
    let mut times: BTreeMap<&'static str, BTreeMap<u64, [Option<f64>; 2]>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.suite == "choice") {
        let Some(k) = kind(r) else { continue };
        if !r.verified {
            return Err(format!("{} {} n={}: not verified", r.algo, r.dtype, r.n));
        }
        let slot = if r.algo.starts_with("merge-sort") {
            0
        } else if r.algo.starts_with("sample") {
            1
        } else {
            continue;
        };
        times.entry(k).or_default().entry(r.n).or_default()[slot] = Some(r.ms);
    }
    Ok(times
        .into_iter()
        .map(|(k, by_n)| {
            let r = by_n.into_iter().filter_map(|(n, t)| Some((n, t[0]? / t[1]?))).collect();
            (k, r)
        })
        .collect())
}

/// The sizes the sample sort takes, from `(n, ratio)` in increasing `n`:
/// `None` where it wins by [`MARGIN`] at no size.
fn range(ratios: &[(u64, f64)]) -> Option<(u64, u64)> {
    let wins = |i: usize| ratios[i].1 >= MARGIN;
    let (mut best, mut at) = (None::<(usize, usize)>, 0);
    while at < ratios.len() {
        if !wins(at) {
            at += 1;
            continue;
        }
        let start = at;
        while at < ratios.len() && wins(at) {
            at += 1;
        }
        if best.is_none_or(|(s, e)| at - start > e - s) {
            best = Some((start, at));
        }
    }
    let (start, end) = best?;
    let n = |i: usize| ratios[i].0;
    let min = if start == 0 { n(0) } else { (n(start - 1) + n(start)) / 2 };
    let max = if end == ratios.len() { n(end - 1) } else { (n(end - 1) + n(end)) / 2 };
    Some((min, max))
}

/// `n` as `policy.rs` writes it: `1 << k`, `3 << k`, or the number.
fn bound(n: u64) -> String {
    let k = n.trailing_zeros();
    match n >> k {
        1 | 3 => format!("{} << {k}", n >> k),
        _ => n.to_string(),
    }
}

/// The `SampleRange` lines `rows` imply, one per kind the sample sort wins.
fn entries(rows: &[Row]) -> Result<Vec<String>, String> {
    Ok(ratios(rows)?
        .iter()
        .filter_map(|(k, r)| {
            let (min, max) = range(r)?;
            Some(format!(
                "SampleRange {{ kind: ItemKind::{k}, min_items: {}, max_items: {} }},",
                bound(min),
                bound(max)
            ))
        })
        .collect())
}

/// The ratio table (Markdown) and the table entries.
pub fn choice(input: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let rows = parse(&text)?;
    let ratios = ratios(&rows)?;
    let sizes: std::collections::BTreeSet<u64> = ratios.values().flatten().map(|&(n, _)| n).collect();
    let mut out = String::from("| items |");
    sizes.iter().for_each(|n| write!(out, " 2^{} |", n.trailing_zeros()).unwrap());
    out += "\n|---|";
    sizes.iter().for_each(|_| out += "---:|");
    for (k, r) in &ratios {
        write!(out, "\n| {k} |").unwrap();
        for n in &sizes {
            match r.iter().find(|(m, _)| m == n) {
                Some((_, x)) => write!(out, " {x:.2} |").unwrap(),
                None => out += " |",
            }
        }
    }
    println!("merge sort time / sample sort time\n\n{out}\n");
    for e in entries(&rows)? {
        println!("    {e}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_the_longest_run_of_wins_between_midpoints() {
        let p = |k: u32| 1u64 << k;
        let r = [(p(20), 0.5), (p(21), 0.9), (p(22), 1.05), (p(23), 1.2), (p(24), 0.98)];
        assert_eq!(range(&r), Some((3 << 20, 3 << 22)));
        // Winning at the ends: the measured sizes themselves.
        assert_eq!(range(&[(p(20), 1.2), (p(21), 1.3)]), Some((p(20), p(21))));
        // Within the margin is no win; of two runs the longer one.
        assert_eq!(range(&[(p(20), 1.005), (p(21), 0.99)]), None);
        let two = [(p(20), 1.1), (p(21), 0.9), (p(22), 1.1), (p(23), 1.1), (p(24), 0.9)];
        assert_eq!(range(&two), Some((3 << 20, 3 << 22)));
        assert_eq!((bound(3 << 23), bound(1 << 28), bound(1000)), ("3 << 23".into(), "1 << 28".into(), "1000".into()));
    }

    /// Hopper's table in `host/src/policy.rs` is what the run it cites
    /// implies, entry for entry.
    #[test]
    fn hoppers_table_is_what_its_run_implies() {
        let root = crate::root();
        let run = root.join("docs/runs/2026-11-29g/call3-choice-ea6096b-h200.jsonl");
        let rows = parse(&std::fs::read_to_string(run).unwrap()).unwrap();
        let policy = std::fs::read_to_string(root.join("host/src/policy.rs")).unwrap();
        let table = &policy[policy.find("const HOPPER_SAMPLE").unwrap()..];
        let table: Vec<&str> = table[..table.find("];").unwrap()]
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("SampleRange {"))
            .collect();
        let mut derived = entries(&rows).unwrap();
        let order = |l: &String| table.iter().position(|t| t == l);
        derived.sort_by_key(order);
        assert_eq!(derived, table);
    }
}
