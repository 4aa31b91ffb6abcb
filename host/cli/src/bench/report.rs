//! The benchmark's report: one [`Row`] per measurement, printed as a table
//! line and appended to `results.jsonl` (one JSON object a line, the keys
//! `cargo xtask plot` and earlier runs' rows use).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// One measured row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The suite (`sizes`, `dists`, `fig14`, `startup`, ...).
    pub suite: &'static str,
    /// What was measured: the algorithm and its parameters, or CUB's name.
    pub algo: String,
    /// The key type, or `key:value` for pairs with 64-bit values.
    pub dtype: &'static str,
    /// Whether values travelled with the keys.
    pub pairs: bool,
    /// The input distribution (or the suite's own case, e.g. `cache-on`).
    pub dist: &'static str,
    /// Keys sorted.
    pub n: usize,
    /// Median milliseconds.
    pub ms: f64,
    /// Bytes moved per key for GB/s (read + write of keys and values, once).
    pub bytes_per_key: usize,
    /// Whether the result was checked and found right.
    pub verified: bool,
}

impl Row {
    /// A row for `n` u32 keys, key-only, uniform (copy and segment suites).
    pub fn u32_keys(suite: &'static str, algo: String, n: usize, ms: f64, verified: bool) -> Row {
        Row { suite, algo, dtype: "u32", pairs: false, dist: "uniform", n, ms, bytes_per_key: 8, verified }
    }

    /// Keys per second.
    pub fn keys_per_s(&self) -> f64 {
        self.n as f64 / (self.ms / 1e3)
    }

    /// Gigabytes per second moved (see [`Row::bytes_per_key`]).
    pub fn gb_per_s(&self) -> f64 {
        (self.n * self.bytes_per_key) as f64 / (self.ms / 1e3) / 1e9
    }

    /// The table line printed for the row.
    pub fn line(&self) -> String {
        format!(
            "{:<9} {:<22} {:<4} {:<5} {:<10} {:>11} {:>10.3} ms {:>8.2} Gkeys/s {:>8.1} GB/s  {}",
            self.suite,
            self.algo,
            self.dtype,
            if self.pairs { "pairs" } else { "keys" },
            self.dist,
            self.n,
            self.ms,
            self.keys_per_s() / 1e9,
            self.gb_per_s(),
            if self.verified { "verified" } else { "WRONG" }
        )
    }

    /// The row as one `results.jsonl` line (no newline), measured on `gpu`.
    pub fn json(&self, gpu: &str) -> String {
        let record = Record {
            suite: self.suite,
            algo: &self.algo,
            dtype: self.dtype,
            pairs: self.pairs,
            dist: self.dist,
            n: self.n,
            ms: round(self.ms, 1e6),
            keys_per_s: round(self.keys_per_s(), 10.0),
            gb_per_s: round(self.gb_per_s(), 1e3),
            verified: self.verified,
            gpu,
        };
        serde_json::to_string(&record).expect("a row of strings, numbers and booleans serializes")
    }
}

/// `x` rounded to `1 / scale` (the precision the rows have always had);
/// infinities and NaN (no time measured) become 0, which JSON can hold.
fn round(x: f64, scale: f64) -> f64 {
    if x.is_finite() { (x * scale).round() / scale } else { 0.0 }
}

/// The JSON form of a row: these keys, in this order.
#[derive(Serialize)]
struct Record<'a> {
    suite: &'a str,
    algo: &'a str,
    dtype: &'a str,
    pairs: bool,
    dist: &'a str,
    n: usize,
    ms: f64,
    keys_per_s: f64,
    gb_per_s: f64,
    verified: bool,
    gpu: &'a str,
}

/// The rows so far, the JSONL log they are appended to, and the failures
/// that are not rows (a CUB harness that failed, a log that could not be
/// written): all of them make the benchmark fail at the end.
pub struct Report {
    /// Every row pushed, in order.
    pub rows: Vec<Row>,
    gpu: String,
    path: PathBuf,
    log: File,
    failures: Vec<String>,
}

impl Report {
    /// Creates `dir` (when missing) and `dir/results.jsonl` (emptied) for
    /// rows measured on `gpu`.
    pub fn create(dir: &Path, gpu: &str) -> std::io::Result<Report> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("results.jsonl");
        let log = File::create(&path)?;
        Ok(Report { rows: Vec::new(), gpu: gpu.to_string(), path, log, failures: Vec::new() })
    }

    /// Prints the row, appends it to the log (one write, so that a run cut
    /// short keeps whole lines) and keeps it.
    pub fn push(&mut self, row: Row) {
        println!("{}", row.line());
        let line = row.json(&self.gpu) + "\n";
        if let Err(e) = self.log.write_all(line.as_bytes()) {
            self.fail(format!("cannot write {}: {e}", self.path.display()));
        }
        self.rows.push(row);
    }

    /// Reports a failure that has no row: a `FAILED` line at once among the
    /// rows, counted in [`Report::finish`].
    pub fn fail(&mut self, message: String) {
        println!("FAILED    {message}");
        self.failures.push(message);
    }

    /// The median time of the last row of `suite` labelled `algo` (key-only
    /// or pairs as `pairs`), if one was measured.
    pub fn last_ms(&self, suite: &str, algo: &str, pairs: bool) -> Option<f64> {
        self.rows.iter().rev().find(|r| r.suite == suite && r.pairs == pairs && r.algo == algo).map(|r| r.ms)
    }

    /// Prints the summary; an error when a row failed verification or
    /// something else failed.
    pub fn finish(&self) -> Result<(), String> {
        let wrong = self.rows.iter().filter(|r| !r.verified).count();
        println!("{} measurements, {} unverified; results in {}", self.rows.len(), wrong, self.path.display());
        let mut problems = Vec::new();
        if wrong > 0 {
            problems.push(format!("{wrong} results failed verification"));
        }
        if !self.failures.is_empty() {
            problems.push(format!("{} other failures (the FAILED lines above)", self.failures.len()));
        }
        if problems.is_empty() { Ok(()) } else { Err(problems.join(", ")) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Row {
        Row { pairs: true, bytes_per_key: 16, ..Row::u32_keys("sizes", "warpsort".into(), 1 << 20, 0.5, true) }
    }

    #[test]
    fn json_keeps_the_keys_in_order() {
        let j = row().json("NVIDIA H200");
        assert_eq!(
            j,
            "{\"suite\":\"sizes\",\"algo\":\"warpsort\",\"dtype\":\"u32\",\"pairs\":true,\"dist\":\"uniform\",\
             \"n\":1048576,\"ms\":0.5,\"keys_per_s\":2097152000.0,\"gb_per_s\":33.554,\"verified\":true,\
             \"gpu\":\"NVIDIA H200\"}"
        );
    }

    #[test]
    fn line_has_the_table_format() {
        let l = row().line();
        assert_eq!(
            l,
            "sizes     warpsort               u32  pairs uniform        1048576      0.500 ms     2.10 Gkeys/s     33.6 GB/s  verified"
        );
    }

    #[test]
    fn names_with_quotes_are_escaped() {
        let r = Row { algo: "a\"b".into(), ..row() };
        assert!(r.json("g").contains("\"algo\":\"a\\\"b\""));
    }
}
