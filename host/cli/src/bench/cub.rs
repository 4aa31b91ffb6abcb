//! The harnesses beside warpsort: CUB's, a separate executable (built from
//! `xtask/cub/cub_bench.cu`), and PyTorch's (`xtask/torch/torch_bench.py`,
//! `torch.sort`, with the same interface), each run as a child process on the
//! same input, written to a temporary file of its own. A harness prints one
//! JSON object a line per measurement; a harness that cannot run, exits with
//! an error no row explains, or prints a line that is not such an object is a
//! failure of the benchmark, reported where it happened and counted at the
//! end.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;
use warpsort::SortKey;
use warpsort_testkit::data::Dist;

use super::report::Row;
use super::{Bench, pair_dtype};

/// How the CUB harness is run: its mode argument (`0`, `1`, `v64`,
/// `argsort`, `stable`) and how its rows are labelled.
#[derive(Clone, Copy, Debug)]
pub struct CubMode {
    /// The harness's mode argument.
    pub arg: &'static str,
    /// The rows' `dtype`.
    pub dtype: &'static str,
    /// Whether the rows are key-value sorts.
    pub pairs: bool,
    /// Value bytes per key for GB/s (argsort: its `u32` positions).
    pub val_bytes: usize,
}

impl CubMode {
    /// Keys only (`0`), or pairs with `u32` values (`1`).
    pub fn keys_or_pairs<K: SortKey>(pairs: bool) -> CubMode {
        let (arg, dtype) = if pairs { ("1", pair_dtype::<K, u32>()) } else { ("0", K::NAME) };
        CubMode { arg, dtype, pairs, val_bytes: if pairs { 4 } else { 0 } }
    }
}

/// Keys as the harness reads them.
#[derive(Clone, Copy, Debug)]
pub struct Records<'a> {
    /// The harness's `dtype` argument.
    pub dtype: &'static str,
    /// The records, one after another.
    pub bytes: &'a [u8],
    /// How many.
    pub n: usize,
    /// Bytes of one key (for GB/s).
    pub key_bytes: usize,
}

/// One measurement line of the harness (other keys it prints are ignored).
#[derive(Debug, Deserialize, PartialEq)]
pub struct CubLine {
    /// CUB's algorithm (`cub_merge_sort`, `cub_radix_sort`, ...).
    pub algo: String,
    /// Median milliseconds.
    pub ms_median: f64,
    /// Whether the harness verified the result.
    pub verified: bool,
}

/// What one run of the harness gave: its measurements, and what went wrong.
#[derive(Debug, Default)]
pub struct CubOutput {
    /// The parsed lines.
    pub lines: Vec<CubLine>,
    /// Failures: lines that did not parse, an exit no row explains.
    pub problems: Vec<String>,
}

/// Reads the output of harness `name`: every non-empty line must be a
/// measurement. A failed exit is explained when a row says it was not
/// verified (the harness exits 1 then); otherwise it is a problem carrying
/// `stderr`'s end.
pub fn parse_output(name: &str, stdout: &str, exited_ok: bool, status: &str, stderr: &str) -> CubOutput {
    let mut out = CubOutput::default();
    for line in stdout.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match serde_json::from_str::<CubLine>(line) {
            Ok(l) => out.lines.push(l),
            Err(e) => out.problems.push(format!("{name} printed an unreadable line ({e}): {line}")),
        }
    }
    let explained = out.lines.iter().any(|l| !l.verified);
    if !exited_ok && !explained {
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        out.problems.push(format!("{name} failed ({status}): {}", tail.join(" | ")));
    } else if exited_ok && out.lines.is_empty() && out.problems.is_empty() {
        out.problems.push(format!("{name} printed no measurement"));
    }
    out
}

/// A temporary file (removed on drop) holding `bytes`.
fn temp_file(what: &str, bytes: &[u8]) -> Result<tempfile::NamedTempFile, String> {
    let mut f = tempfile::Builder::new()
        .prefix(&format!("warpsort-cub-{what}-"))
        .suffix(".bin")
        .tempfile()
        .map_err(|e| format!("cannot create a temporary file for CUB's {what}: {e}"))?;
    f.write_all(bytes).and_then(|()| f.flush()).map_err(|e| format!("cannot write CUB's {what}: {e}"))?;
    Ok(f)
}

/// Runs the harness `exe` on `keys` (bytes of `dtype` keys) in `mode`, cut
/// into `segments` when given (a `.py` harness by `python3`).
pub fn run_harness(
    exe: &Path,
    dtype: &str,
    mode: &str,
    reps: usize,
    keys: &[u8],
    segments: Option<&[u32]>,
) -> Result<CubOutput, String> {
    let input = temp_file("keys", keys)?;
    let mut cmd = if exe.extension().is_some_and(|e| e == "py") {
        let mut c = Command::new("python3");
        c.arg(exe);
        c
    } else {
        Command::new(exe)
    };
    cmd.arg(input.path()).arg(dtype).arg(mode).arg(reps.to_string());
    let seg_file = match segments {
        Some(seg) => Some(temp_file("segments", bytemuck::cast_slice(seg))?),
        None => None,
    };
    if let Some(f) = &seg_file {
        cmd.arg(f.path());
    }
    let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let name = harness_name(exe);
    Ok(parse_output(&name, &text(&out.stdout), out.status.success(), &out.status.to_string(), &text(&out.stderr)))
}

/// A harness's name in reports: its file's.
fn harness_name(exe: &Path) -> String {
    exe.file_name().map_or_else(|| exe.display().to_string(), |f| f.to_string_lossy().into_owned())
}

/// Whether PyTorch's harness runs beside CUB's: for the README's first
/// table (suites `sizes` and `types`, from 2^24 keys on), of the key words
/// `torch.sort` takes, unsegmented, in the modes it has.
pub fn torch_runs(suite: &str, dtype: &str, mode: &str, n: usize, segmented: bool) -> bool {
    matches!(suite, "sizes" | "types")
        && n >= 1 << 24
        && !segmented
        && matches!(dtype, "u32" | "i32" | "f32" | "u64" | "i64" | "f64")
        && matches!(mode, "0" | "1" | "v64" | "argsort" | "stable")
}

impl Bench<'_> {
    /// Runs the CUB harness on the same input and pushes its rows (`tag`
    /// appended to CUB's algorithm names): keys only, or pairs with `u32` values.
    pub fn cub_rows<K: SortKey + bytemuck::Pod>(
        &mut self,
        suite: &'static str,
        dist: Dist,
        pairs: bool,
        input: &[K],
        segments: Option<&[u32]>,
        tag: &str,
    ) {
        self.cub_rows_as(suite, dist, CubMode::keys_or_pairs::<K>(pairs), input, segments, tag);
    }

    /// [`Bench::cub_rows`] in any of the harness's modes. Nothing without `--cub`.
    pub fn cub_rows_as<K: SortKey + bytemuck::Pod>(
        &mut self,
        suite: &'static str,
        dist: Dist,
        mode: CubMode,
        input: &[K],
        segments: Option<&[u32]>,
        tag: &str,
    ) {
        self.cub_rows_case(suite, dist.name(), mode, input, segments, tag);
    }

    /// [`Bench::cub_rows_as`] of an input named `case`.
    pub fn cub_rows_case<K: SortKey + bytemuck::Pod>(
        &mut self,
        suite: &'static str,
        case: &'static str,
        mode: CubMode,
        input: &[K],
        segments: Option<&[u32]>,
        tag: &str,
    ) {
        let records =
            Records { dtype: K::NAME, bytes: bytemuck::cast_slice(input), n: input.len(), key_bytes: size_of::<K>() };
        self.cub_rows_records(suite, case, mode, records, segments, tag);
    }

    /// [`Bench::cub_rows_case`] of keys given as the harness's records
    /// (composite keys: their fields in the layout the harness reads): CUB's
    /// harness, then PyTorch's where [`torch_runs`] and `--torch` say so.
    pub fn cub_rows_records(
        &mut self,
        suite: &'static str,
        case: &'static str,
        mode: CubMode,
        records: Records,
        segments: Option<&[u32]>,
        tag: &str,
    ) {
        let Some(cub) = self.opts.cub.clone() else { return };
        let torch = self
            .opts
            .torch
            .clone()
            .filter(|_| torch_runs(suite, records.dtype, mode.arg, records.n, segments.is_some()));
        let reps = self.opts.reps().max(10);
        for exe in std::iter::once(cub).chain(torch) {
            let out = match run_harness(&exe, records.dtype, mode.arg, reps, records.bytes, segments) {
                Ok(out) => out,
                Err(e) => CubOutput { lines: Vec::new(), problems: vec![e] },
            };
            for line in out.lines {
                self.report.push(Row {
                    suite,
                    algo: format!("{}{tag}", line.algo),
                    dtype: mode.dtype,
                    pairs: mode.pairs,
                    dist: case,
                    n: records.n,
                    ms: line.ms_median,
                    bytes_per_key: 2 * (records.key_bytes + mode.val_bytes),
                    verified: line.verified,
                });
            }
            let name = harness_name(&exe);
            for p in out.problems {
                self.report.fail(format!("{suite} {} {case} ({name} mode {}{tag}): {p}", mode.dtype, mode.arg));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"algo":"cub_merge_sort","dtype":"u32","pairs":false,"n":16,"segments":0,"reps":10,"ms_median":0.012000,"ms_min":0.011000,"keys_per_s":1.333333e+09,"verified":true}"#;

    #[test]
    fn reads_the_harness_lines() {
        let out = parse_output("cub_bench", &format!("{LINE}\n\n{}\n", LINE.replace("merge", "radix")), true, "0", "");
        assert!(out.problems.is_empty(), "{:?}", out.problems);
        assert_eq!(out.lines.len(), 2);
        assert_eq!(out.lines[1], CubLine { algo: "cub_radix_sort".into(), ms_median: 0.012, verified: true });
    }

    #[test]
    fn garbage_and_silent_failures_are_problems() {
        let out = parse_output("cub_bench", &format!("{LINE}\nSegmentation fault\n"), true, "0", "");
        assert_eq!((out.lines.len(), out.problems.len()), (1, 1));
        assert!(out.problems[0].contains("Segmentation fault"));
        let out = parse_output("cub_bench", "", false, "exit status: 2", "cub_bench: CUDA error out of memory\n");
        assert!(out.lines.is_empty() && out.problems[0].contains("out of memory"), "{:?}", out.problems);
        assert_eq!(parse_output("cub_bench", "", true, "0", "").problems.len(), 1, "no rows at all is a failure");
    }

    #[test]
    fn an_exit_explained_by_a_wrong_row_is_that_row() {
        let wrong = LINE.replace("\"verified\":true", "\"verified\":false");
        let out = parse_output("cub_bench", &wrong, false, "exit status: 1", "not sorted at index 3");
        assert_eq!(out.lines.len(), 1);
        assert!(!out.lines[0].verified && out.problems.is_empty());
    }

    #[test]
    fn torch_runs_beside_the_first_table_only() {
        assert!(torch_runs("sizes", "u32", "0", 1 << 24, false));
        assert!(torch_runs("types", "u64", "stable", 1 << 26, false));
        assert!(!torch_runs("sizes", "u32", "0", 1 << 22, false), "below the table's sizes");
        assert!(!torch_runs("dists", "u32", "0", 1 << 24, false));
        assert!(!torch_runs("types", "u32x2", "0", 1 << 24, false), "no composite keys");
        assert!(!torch_runs("types", "u32", "rec64", 1 << 24, false));
        assert!(!torch_runs("sizes", "u32", "0", 1 << 24, true), "no segments");
    }

    #[test]
    fn the_torch_harness_reports_like_cub() {
        let line = r#"{"algo":"torch_sort","dtype":"u32","pairs":false,"n":16,"segments":0,"reps":10,"ms_median":0.5,"ms_min":0.4,"keys_per_s":3.2e7,"verified":true}"#;
        let out = parse_output("torch_bench.py", line, true, "0", "");
        assert_eq!(out.lines, [CubLine { algo: "torch_sort".into(), ms_median: 0.5, verified: true }]);
        let out = parse_output(
            "torch_bench.py",
            "",
            false,
            "exit status: 2",
            "torch_bench: ModuleNotFoundError: No module named 'torch'",
        );
        assert!(
            out.problems[0].starts_with("torch_bench.py failed") && out.problems[0].contains("torch"),
            "{:?}",
            out.problems
        );
    }

    #[test]
    fn a_missing_harness_is_an_error() {
        let e = run_harness(Path::new("/nonexistent/cub_bench"), "u32", "0", 1, &[0; 8], Some(&[0, 2])).unwrap_err();
        assert!(e.contains("cannot run /nonexistent/cub_bench"), "{e}");
    }
}
