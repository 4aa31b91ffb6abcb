//! The startup suite: process start-up as a new user sees it. The benchmark
//! runs itself as a child (`warpsort startup-probe`, see [`crate::startup`])
//! twice: with `CUDA_CACHE_DISABLE=1` (a fresh machine: the driver compiles
//! the PTX) and with the driver's cache (warmed by one run first), and
//! writes a row per timing: `dist` `cache-off` or `cache-on`, `ms` the time.

use std::process::Command;
use std::time::SystemTime;

use crate::bench::report::Row;
use crate::bench::{Bench, Result, progress};
use crate::startup::{N, Probe, unix_ns};

/// Runs the probe once, with the driver's cache or without.
fn run_probe(b: &Bench, cache: bool) -> std::result::Result<Probe, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let mut cmd = Command::new(&exe);
    cmd.arg("startup-probe");
    if let Some(ptx) = &b.opts.ptx {
        cmd.arg("--ptx").arg(ptx);
    }
    if cache {
        cmd.env_remove("CUDA_CACHE_DISABLE");
    } else {
        cmd.env("CUDA_CACHE_DISABLE", "1");
    }
    cmd.arg("--spawned-at-ns").arg(unix_ns(SystemTime::now()).to_string());
    let out = cmd.output().map_err(|e| format!("cannot run {} startup-probe: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("startup-probe failed ({}): {}", out.status, stderr.trim()));
    }
    serde_json::from_str(stdout.trim()).map_err(|e| format!("startup-probe printed {stdout:?}: {e}"))
}

/// The rows of one probe.
fn rows(p: &Probe, dist: &'static str) -> Vec<Row> {
    let row = |algo: String, dtype: &'static str, pairs: bool, n: usize, ms: f64, verified: bool| {
        let key = if dtype == "f64" { 8 } else { 4 };
        let bytes_per_key = 2 * (key + if pairs { 4 } else { 0 });
        Row { suite: "startup", algo, dtype, pairs, dist, n, ms, bytes_per_key, verified }
    };
    let mut out = vec![
        row("process-start".into(), "u32", false, 0, p.process_start_ms, true),
        row("gpu-new".into(), "u32", false, 0, p.gpu_new_ms, true),
    ];
    for c in &p.calls {
        out.push(row(c.op.label(), c.op.dtype(), c.op.pairs(), N, c.ms, c.verified));
    }
    let a = &p.again;
    out.push(row(a.op.label().replacen("first-", "again-", 1), a.op.dtype(), a.op.pairs(), N, a.ms, a.verified));
    out
}

/// Runs the suite.
pub fn startup(b: &mut Bench) -> Result<()> {
    for (dist, cache) in [("cache-off", false), ("cache-on", true)] {
        if cache {
            progress("start-up: one probe to fill the driver's cache");
            if let Err(e) = run_probe(b, true) {
                b.report.fail(format!("startup {dist} (warming the cache): {e}"));
                continue;
            }
        }
        progress(&format!("start-up of a new process ({dist}), first calls of 2^20 keys"));
        match run_probe(b, cache) {
            Ok(p) => rows(&p, dist).into_iter().for_each(|r| b.report.push(r)),
            Err(e) => b.report.fail(format!("startup {dist}: {e}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::startup::{FirstCall, Op};

    #[test]
    fn a_probe_makes_a_row_per_timing() {
        let calls = vec![
            FirstCall { op: Op::Sort, ms: 400.0, verified: true },
            FirstCall { op: Op::SortF64, ms: 2.0, verified: false },
        ];
        let again = FirstCall { op: Op::Sort, ms: 0.5, verified: true };
        let p = Probe { gpu: "G".into(), process_start_ms: 1.0, gpu_new_ms: 350.0, calls, again };
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains("\"op\":\"sort-f64\""), "{json}");
        let rows = rows(&serde_json::from_str(&json).unwrap(), "cache-on");
        let algos: Vec<&str> = rows.iter().map(|r| r.algo.as_str()).collect();
        assert_eq!(algos, ["process-start", "gpu-new", "first-sort", "first-sort-f64", "again-sort"]);
        assert!(rows.iter().all(|r| r.suite == "startup" && r.dist == "cache-on"));
        assert_eq!((rows[3].dtype, rows[3].ms, rows[3].verified), ("f64", 2.0, false));
    }
}
