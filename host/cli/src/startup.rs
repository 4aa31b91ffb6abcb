//! `warpsort startup-probe` (hidden): what a new user's process sees. Run as
//! a child by the benchmark's `startup` suite, it times from its own start
//! (the parent's spawn, given by `--spawned-at-ns`) to the end of its first
//! sort, `Gpu::new()` alone, and then the first call of every other
//! operation, each alone, on host slices of 2^20 keys; every result is
//! checked on the CPU. It prints one JSON object ([`Probe`]) on stdout.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};
use warpsort::{Gpu, Order, SortKey, SortOptions};
use warpsort_testkit::cpu;
use warpsort_testkit::data::{Dist, FromPattern, keys, random_offsets};

/// Keys each operation sorts.
pub const N: usize = 1 << 20;

/// Segment length of the rows operation.
const ROW_LEN: usize = 256;

/// An operation whose first call the probe times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// `sort_slice` of u32 keys.
    Sort,
    /// `sort_pairs_slice` of u32 keys and u32 values.
    Pairs,
    /// `argsort_slice` of u32 keys.
    Argsort,
    /// `sort_segments` of u32 rows of 256 (copied to the GPU and back).
    SegmentsRows,
    /// `sort_segments_by_offsets_slice` of u32 keys, random lengths up to 8192.
    SegmentsOffsets,
    /// `sort_slice` of f64 keys.
    SortF64,
    /// `sort_pairs_slice` with `stable`, u32 keys of few values.
    StableSort,
}

impl Op {
    /// The row label of the operation's first call.
    pub fn label(self) -> String {
        format!("first-{}", self.to_possible_value().expect("no skipped variants").get_name())
    }

    /// The key type (and `key:value` where values are not u32).
    pub fn dtype(self) -> &'static str {
        if self == Op::SortF64 { "f64" } else { "u32" }
    }

    /// Whether values travel with the keys.
    pub fn pairs(self) -> bool {
        matches!(self, Op::Pairs | Op::StableSort)
    }
}

/// `warpsort startup-probe`'s options.
#[derive(Args, Clone, Debug)]
pub struct ProbeArgs {
    /// Unix time (nanoseconds) the parent spawned this process at; default: when `main` began.
    #[arg(long, value_name = "NS")]
    pub spawned_at_ns: Option<u64>,
    /// The operation called first, timed from process start (the others follow).
    #[arg(long, value_enum, default_value = "sort")]
    pub op: Op,
    /// Load the kernels from this PTX file instead of the embedded PTX.
    #[arg(long, value_name = "FILE")]
    pub ptx: Option<PathBuf>,
}

/// One operation's first call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FirstCall {
    /// The operation.
    pub op: Op,
    /// Milliseconds: from process start for the first operation, else the call alone.
    pub ms: f64,
    /// Whether the result matched the CPU reference.
    pub verified: bool,
}

/// What the probe prints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The GPU's name.
    pub gpu: String,
    /// From the spawn to `main`.
    pub process_start_ms: f64,
    /// `Gpu::new()` (or `Gpu::with_ptx`) alone.
    pub gpu_new_ms: f64,
    /// The first call of each operation, the one timed from process start first.
    pub calls: Vec<FirstCall>,
    /// The first operation called again (a warm call, for reference).
    pub again: FirstCall,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Nanoseconds since the Unix epoch now.
pub fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// Runs `call` on `input`'s copy (timed) and compares with `reference` (untimed).
fn timed<T: Clone, R>(
    input: &T,
    call: impl FnOnce(&mut T) -> warpsort::Result<R>,
    check: impl FnOnce(&T, R) -> bool,
) -> warpsort::Result<(Duration, bool)> {
    let mut data = input.clone();
    let t = Instant::now();
    let r = call(&mut data)?;
    let d = t.elapsed();
    Ok((d, check(&data, r)))
}

/// Keys sorted and compared with the CPU reference sort.
fn sort_keys<K: SortKey>(gpu: &Gpu) -> warpsort::Result<(Duration, bool)>
where
    K::Bits: FromPattern,
{
    let k: Vec<K> = keys(Dist::Uniform, N, 1);
    let mut want = k.clone();
    cpu::sort(&mut want, Order::Ascending);
    let same = |a: &[K], b: &[K]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    timed(&k, |k| gpu.sort_slice(k), |got, ()| same(got, &want))
}

/// Pairs (u32 positions as values) sorted, checked against the CPU's stable sort.
fn sort_pairs(gpu: &Gpu, dist: Dist, opts: &SortOptions) -> warpsort::Result<(Duration, bool)> {
    let input = (keys::<u32>(dist, N, 2), (0..N as u32).collect::<Vec<_>>());
    let (mut wk, mut wv) = input.clone();
    cpu::sort_pairs(&mut wk, &mut wv, Order::Ascending);
    let check = |(k, v): &(Vec<u32>, Vec<u32>), ()| {
        if opts.stable {
            (k, v) == (&wk, &wv)
        } else {
            cpu::is_pair_sort_of(&input.0, &input.1, k, v, Order::Ascending)
        }
    };
    timed(&input, |(k, v)| gpu.sort_pairs_slice(k, v, opts), check)
}

/// Calls `op` once on fresh input: its time and whether it was right.
pub fn call(gpu: &Gpu, op: Op) -> warpsort::Result<(Duration, bool)> {
    let asc = Order::Ascending;
    match op {
        Op::Sort => sort_keys::<u32>(gpu),
        Op::SortF64 => sort_keys::<f64>(gpu),
        Op::Pairs => sort_pairs(gpu, Dist::Uniform, &SortOptions::default()),
        Op::StableSort => sort_pairs(gpu, Dist::FewUnique, &SortOptions { stable: true, ..Default::default() }),
        Op::Argsort => {
            let k: Vec<u32> = keys(Dist::Uniform, N, 3);
            let check = |k: &Vec<u32>, p: Vec<u32>| {
                cpu::is_argsort_of(k, &p.iter().map(|&i| i as usize).collect::<Vec<_>>(), asc)
            };
            timed(&k, |k| gpu.argsort_slice(k, &SortOptions::default()), check)
        }
        Op::SegmentsRows => {
            let k: Vec<u32> = keys(Dist::Uniform, N, 4);
            let mut want = k.clone();
            cpu::sort_segments(&mut want, ROW_LEN, asc);
            let s = gpu.stream();
            let rows = |k: &mut Vec<u32>| -> warpsort::Result<()> {
                let mut d = s.clone_htod(k)?;
                gpu.sort_segments(&mut d, ROW_LEN, asc)?;
                *k = s.clone_dtoh(&d)?;
                Ok(())
            };
            timed(&k, rows, |got, ()| *got == want)
        }
        Op::SegmentsOffsets => {
            let k: Vec<u32> = keys(Dist::Uniform, N, 5);
            let off = random_offsets(N, 8192, 5);
            let mut want = k.clone();
            cpu::sort_by_offsets(&mut want, &off, asc);
            timed(&k, |k| gpu.sort_segments_by_offsets_slice(k, &off, asc), |got, ()| *got == want)
        }
    }
}

/// Opens the GPU as `warpsort` does: the embedded PTX, or `ptx`.
pub fn open_gpu(ptx: Option<&std::path::Path>) -> Result<Gpu, String> {
    match ptx {
        None => Gpu::new().map_err(|e| format!("no GPU: {e}")),
        Some(path) => {
            let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            Gpu::with_ptx(0, &src).map_err(|e| e.to_string())
        }
    }
}

/// Runs the probe; `main_at` is when `main` began.
pub fn probe(args: &ProbeArgs, main_at: SystemTime) -> Result<Probe, String> {
    let spawned = args.spawned_at_ns.unwrap_or(unix_ns(main_at));
    let since_spawn = |t: SystemTime| (unix_ns(t).saturating_sub(spawned)) as f64 / 1e6;
    let before_open = SystemTime::now();
    let t = Instant::now();
    let gpu = open_gpu(args.ptx.as_deref())?;
    let gpu_new_ms = ms(t.elapsed());
    let fail = |op: Op, e: warpsort::Error| format!("{}: {e}", op.label());
    // From the spawn: to `Gpu::new`, `Gpu::new`, the call (its input made
    // and its reference computed outside the timing, as a user has data).
    let (d, verified) = call(&gpu, args.op).map_err(|e| fail(args.op, e))?;
    let first = since_spawn(before_open) + gpu_new_ms + ms(d);
    let mut calls = vec![FirstCall { op: args.op, ms: first, verified }];
    for &op in Op::value_variants().iter().filter(|&&op| op != args.op) {
        let (d, verified) = call(&gpu, op).map_err(|e| fail(op, e))?;
        calls.push(FirstCall { op, ms: ms(d), verified });
    }
    let (d, verified) = call(&gpu, args.op).map_err(|e| fail(args.op, e))?;
    let again = FirstCall { op: args.op, ms: ms(d), verified };
    let gpu_name = gpu.info().name.clone();
    Ok(Probe { gpu: gpu_name, process_start_ms: since_spawn(main_at), gpu_new_ms, calls, again })
}
