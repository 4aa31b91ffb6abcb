//! The benchmark: warpsort's algorithms beside NVIDIA CUB on the same GPU, the
//! same inputs, timed the same way (CUDA events around the sort only, the input
//! restored from a pristine copy before each run, warm-up, median of `reps`).
//!
//! - [`options`]: the command line (`warpsort bench --help`);
//! - [`timing`]: the event timing loop and the median;
//! - [`measure`]: a sort, argsort or segmented sort timed, verified, reported;
//! - [`cub`]: the CUB harness run beside warpsort;
//! - [`report`]: the rows, printed and written to `results.jsonl`;
//! - [`suites`]: one function per suite.

pub mod cub;
pub mod measure;
pub mod options;
pub mod report;
pub mod suites;
pub mod timing;

use clap::ValueEnum;
use warpsort::{Gpu, Payload, SortKey};
use warpsort_testkit::data::{Dist, FromPattern, keys};

pub use options::{BenchArgs, Suite};
use report::Report;

/// Benchmark errors: warpsort's, the driver's, or a message.
pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A benchmark run: the GPU, the options and the rows so far.
pub struct Bench<'a> {
    /// The GPU measured.
    pub gpu: &'a Gpu,
    /// The command line.
    pub opts: &'a BenchArgs,
    /// The rows and failures so far.
    pub report: Report,
    /// The device-to-device copy's bandwidth (GB/s) once the copy suite ran.
    pub copy_gbs: Option<f64>,
}

/// The `dtype` of a key-value row: `K` alone for `u32` values (as the rows
/// before 64-bit payloads), `key:value` otherwise.
pub fn pair_dtype<K: SortKey, V: Payload>() -> &'static str {
    match (K::NAME, size_of::<V>()) {
        (k, 4) => k,
        ("u32", _) => "u32:u64",
        ("i32", _) => "i32:u64",
        ("f32", _) => "f32:u64",
        ("u64", _) => "u64:u64",
        ("i64", _) => "i64:u64",
        _ => "f64:u64",
    }
}

/// splitmix64's finaliser.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Uniform 64-bit keys made on all cores (inputs of billions would take a
/// minute on one): key `i` is a hash of `i`.
pub fn uniform_u64(n: usize) -> Vec<u64> {
    use rayon::prelude::*;
    (0..n).into_par_iter().map(|i| mix64(i as u64 ^ 0x9e37_79b9)).collect()
}

/// A progress line on stderr.
pub fn progress(msg: &str) {
    eprintln!("[bench] {msg}");
}

/// The benchmark input: `n` keys of `dist`, seeded by `n`.
pub fn input<K: SortKey>(dist: Dist, n: usize) -> Vec<K>
where
    K::Bits: FromPattern,
{
    keys(dist, n, 42 + n as u64)
}

/// Whether `suite` runs: asked for, or the copy that the warp suite compares with.
fn runs(opts: &BenchArgs, suite: Suite) -> bool {
    opts.wants(suite) || (suite == Suite::Copy && opts.wants(Suite::Warp))
}

/// Runs the suites asked for, in their listed order, and fails when any
/// result is wrong or any measurement failed.
pub fn run(gpu: &Gpu, opts: &BenchArgs) -> Result<()> {
    let info = gpu.info();
    println!(
        "GPU: {} (cc {}.{}, {} SMs, kernels: {})",
        info.name, info.compute_capability.0, info.compute_capability.1, info.sms, info.ptx
    );
    let report = Report::create(&opts.out, &info.name)
        .map_err(|e| format!("cannot write results into {}: {e}", opts.out.display()))?;
    let mut b = Bench { gpu, opts, report, copy_gbs: None };
    for &suite in Suite::value_variants() {
        if runs(opts, suite) {
            suites::run(suite, &mut b)?;
        }
    }
    Ok(b.report.finish()?)
}
