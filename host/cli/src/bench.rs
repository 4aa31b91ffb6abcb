//! The benchmark: warpsort's algorithms beside NVIDIA CUB on the same GPU, the
//! same inputs, timed the same way (CUDA events around the sort only, the input
//! restored from a pristine copy before each run, warm-up, median of `reps`).

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use warpsort::cudarc::driver::CudaSlice;
use warpsort_testkit::data::{Dist, FromPattern, keys};
use warpsort::kernels::config::PAPER_BUFFERS;
use warpsort::{
    Algorithm, Gpu, MergeKernel, Order, PaperConfig, PaperLoads, Payload, SortKey, SortOptions, TileSort,
    MergeSortConfig,
};

/// Benchmark errors: warpsort's, the driver's, or a message.
type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

pub struct Options {
    quick: bool,
    reps: usize,
    cub: Option<PathBuf>,
    out: PathBuf,
    suites: Vec<String>,
    /// PTX to load instead of the embedded kernels.
    pub ptx: Option<PathBuf>,
}

impl Options {
    pub fn parse(args: &[String]) -> std::result::Result<Self, String> {
        let mut o =
            Options { quick: false, reps: 10, cub: None, out: PathBuf::from("."), suites: Vec::new(), ptx: None };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = || it.next().cloned().ok_or(format!("{a} needs a value"));
            match a.as_str() {
                "--quick" => o.quick = true,
                "--reps" => o.reps = val()?.parse().map_err(|e| format!("--reps: {e}"))?,
                "--cub" => o.cub = Some(PathBuf::from(val()?)),
                "--out" => o.out = PathBuf::from(val()?),
                "--suite" => o.suites = val()?.split(',').map(str::to_string).collect(),
                "--ptx" => o.ptx = Some(PathBuf::from(val()?)),
                _ => return Err(format!("unknown option {a}")),
            }
        }
        o.reps = o.reps.max(1);
        Ok(o)
    }

    fn wants(&self, suite: &str) -> bool {
        self.suites.is_empty() || self.suites.iter().any(|s| s == suite)
    }
}

/// One measured row.
struct Row {
    suite: &'static str,
    algo: String,
    dtype: &'static str,
    pairs: bool,
    dist: &'static str,
    n: usize,
    ms: f64,
    /// Bytes moved per key for GB/s (read + write of keys and values, once).
    bytes_per_key: usize,
    verified: bool,
}

struct Bench<'a> {
    gpu: &'a Gpu,
    opts: &'a Options,
    rows: Vec<Row>,
    log: std::fs::File,
}

/// The median (mean of the two middle values for an even count, as the CUB harness).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) { (v[m - 1] + v[m]) / 2.0 } else { v[m] }
}

impl Row {
    /// A row for `n` u32 keys, key-only, uniform (copy and segment suites).
    fn u32_keys(suite: &'static str, algo: String, n: usize, ms: f64, verified: bool) -> Row {
        Row { suite, algo, dtype: "u32", pairs: false, dist: "uniform", n, ms, bytes_per_key: 8, verified }
    }
}

impl Bench<'_> {
    /// Times `f` on a fresh copy of `pristine` (restored before every run, untimed).
    fn time<K: SortKey>(
        &self,
        pristine: &CudaSlice<K>,
        work: &mut CudaSlice<K>,
        mut f: impl FnMut(&mut CudaSlice<K>) -> warpsort::Result<()>,
    ) -> Result<f64> {
        let s = self.gpu.stream();
        self.time_reset(|timed| if timed { f(work) } else { Ok(s.memcpy_dtod(pristine, work)?) })
    }

    /// Times `step(true)` after an untimed `step(false)` (the reset) before
    /// every run (warm-up, median of `reps`).
    fn time_reset(&self, mut step: impl FnMut(bool) -> warpsort::Result<()>) -> Result<f64> {
        let s = self.gpu.stream();
        let ctx = self.gpu.context();
        let flags = Some(warpsort::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let (start, stop) = (ctx.new_event(flags)?, ctx.new_event(flags)?);
        let mut times = Vec::new();
        for i in 0..self.opts.reps + 2 {
            step(false)?;
            start.record(s)?;
            step(true)?;
            stop.record(s)?;
            stop.synchronize()?;
            if i >= 2 {
                times.push(start.elapsed_ms(&stop)? as f64);
            }
        }
        Ok(median(times))
    }

    /// One segmented sort of `input` cut by `offsets` (equal rows of `rows`
    /// items when given, else by the offsets), keys or key-value, timed,
    /// verified on the GPU (segmented check and fingerprint), pushed as a row.
    fn segments_row(
        &mut self,
        label: String,
        input: &[u32],
        offsets: &[u32],
        rows: Option<usize>,
        pairs: bool,
    ) -> Result<()> {
        use warpsort::Segments;
        let (gpu, s) = (self.gpu, self.gpu.stream().clone());
        let n = input.len();
        let keys0 = s.clone_htod(input)?;
        let vals0 = s.clone_htod(&(0..n as u32).collect::<Vec<_>>())?;
        let (mut keys, mut vals) = (s.clone_dtod(&keys0)?, s.clone_dtod(&vals0)?);
        let off = s.clone_htod(offsets)?;
        let segs = match rows {
            Some(len) => Segments::Rows(len),
            None => Segments::Offsets(&off),
        };
        let asc = Order::Ascending;
        let before = gpu.check_segments(&keys0, pairs.then_some(&vals0), segs, asc)?;
        let ms = self.time_reset(|timed| match (timed, rows, pairs) {
            (false, _, _) => {
                s.memcpy_dtod(&keys0, &mut keys)?;
                if pairs {
                    s.memcpy_dtod(&vals0, &mut vals)?;
                }
                Ok(())
            }
            (true, Some(len), false) => gpu.sort_segments(&mut keys, len, asc),
            (true, Some(len), true) => gpu.sort_segments_pairs(&mut keys, &mut vals, len, asc),
            (true, None, false) => gpu.sort_segments_by_offsets(&mut keys, &off, asc),
            (true, None, true) => gpu.sort_segments_by_offsets_pairs(&mut keys, &mut vals, &off, asc),
        })?;
        let after = gpu.check_segments(&keys, pairs.then_some(&vals), segs, asc)?;
        let bytes_per_key = if pairs { 16 } else { 8 };
        self.push(Row { pairs, bytes_per_key, ..Row::u32_keys("segments", label, n, ms, after.confirms(&before)) });
        Ok(())
    }

    fn push(&mut self, r: Row) {
        let rate = r.n as f64 / (r.ms / 1e3);
        let gbs = (r.n * r.bytes_per_key) as f64 / (r.ms / 1e3) / 1e9;
        println!(
            "{:<9} {:<22} {:<4} {:<5} {:<10} {:>11} {:>10.3} ms {:>8.2} Gkeys/s {:>8.1} GB/s  {}",
            r.suite,
            r.algo,
            r.dtype,
            if r.pairs { "pairs" } else { "keys" },
            r.dist,
            r.n,
            r.ms,
            rate / 1e9,
            gbs,
            if r.verified { "verified" } else { "WRONG" }
        );
        let _ = writeln!(
            self.log,
            "{{\"suite\":\"{}\",\"algo\":\"{}\",\"dtype\":\"{}\",\"pairs\":{},\"dist\":\"{}\",\"n\":{},\"ms\":{:.6},\"keys_per_s\":{:.1},\"gb_per_s\":{:.3},\"verified\":{},\"gpu\":\"{}\"}}",
            r.suite,
            r.algo,
            r.dtype,
            r.pairs,
            r.dist,
            r.n,
            r.ms,
            rate,
            gbs,
            r.verified,
            self.gpu.info().name
        );
        self.rows.push(r);
    }

    /// Runs one warpsort sort (keys or pairs) and pushes its row.
    fn sort_row<K: SortKey>(
        &mut self,
        suite: &'static str,
        algo: Algorithm,
        dist: Dist,
        pairs: bool,
        input: &[K],
    ) -> Result<()> {
        self.sort_row_with::<K, u32>(suite, algo.name().into(), SortOptions::algorithm(algo), dist, pairs, input)
    }

    /// [`Bench::sort_row`] with explicit options and label; values (when
    /// `pairs`) of type `V`, the input positions. A stable sort's result is
    /// also checked for stability (on the host).
    fn sort_row_with<K: SortKey, V: Position>(
        &mut self,
        suite: &'static str,
        label: String,
        opts: SortOptions,
        dist: Dist,
        pairs: bool,
        input: &[K],
    ) -> Result<()> {
        let n = input.len();
        let s = self.gpu.stream().clone();
        let pristine = s.clone_htod(input)?;
        let mut work = s.clone_dtod(&pristine)?;
        let vals_init: Vec<V> = (0..n).map(V::at).collect();
        let vals_pristine = s.clone_htod(&vals_init)?;
        let mut vals = s.clone_dtod(&vals_pristine)?;
        let before = self.gpu.check(&pristine, pairs.then_some(&vals_pristine), Order::Ascending)?;
        let gpu = self.gpu;
        let ms = self.time(&pristine, &mut work, |w| {
            if pairs {
                s.memcpy_dtod(&vals_pristine, &mut vals)?;
                gpu.sort_pairs(w, &mut vals, &opts)
            } else {
                gpu.sort_with(w, &opts)
            }
        })?;
        let after = self.gpu.check(&work, pairs.then_some(&vals), Order::Ascending)?;
        let stable = !(pairs && opts.stable) || {
            let (k, v) = (s.clone_dtoh(&work)?, s.clone_dtoh(&vals)?);
            (1..n).all(|i| k[i - 1].to_bits() != k[i].to_bits() || v[i - 1].position() < v[i].position())
        };
        let bytes = 2 * (std::mem::size_of::<K>() + if pairs { std::mem::size_of::<V>() } else { 0 });
        self.push(Row {
            suite,
            algo: label,
            dtype: if pairs { pair_dtype::<K, V>() } else { K::NAME },
            pairs,
            dist: dist.name(),
            n,
            ms,
            bytes_per_key: bytes,
            verified: after.confirms(&before) && stable,
        });
        Ok(())
    }

    /// Times [`Gpu::argsort_into`] (keys unchanged, `u32` positions written
    /// to a buffer allocated once) and verifies the permutation on the host:
    /// a permutation of `0..n` that sorts the keys, equal keys in input order
    /// when `opts.stable`.
    fn argsort_row<K: SortKey>(
        &mut self,
        suite: &'static str,
        opts: SortOptions,
        dist: Dist,
        input: &[K],
    ) -> Result<()> {
        let n = input.len();
        let s = self.gpu.stream().clone();
        let pristine = s.clone_htod(input)?;
        let mut work = s.clone_dtod(&pristine)?;
        let mut idx = s.alloc_zeros::<u32>(n)?;
        let gpu = self.gpu;
        let ms = self.time(&pristine, &mut work, |w| gpu.argsort_into(w, &mut idx, &opts))?;
        let p = s.clone_dtoh(&idx)?;
        let mut seen = vec![false; n];
        let perm = p.iter().all(|&i| (i as usize) < n && !std::mem::replace(&mut seen[i as usize], true));
        let sorted = perm
            && p.windows(2).all(|w| match input[w[0] as usize].key_cmp(&input[w[1] as usize]) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Equal => !opts.stable || w[0] < w[1],
                std::cmp::Ordering::Greater => false,
            });
        let label = if opts.stable { "warpsort argsort stable" } else { "warpsort argsort" };
        self.push(Row {
            suite,
            algo: label.into(),
            dtype: K::NAME,
            pairs: false,
            dist: dist.name(),
            n,
            ms,
            // Reads the keys, writes the positions; the sort moves both.
            bytes_per_key: 2 * (std::mem::size_of::<K>() + 4),
            verified: sorted,
        });
        Ok(())
    }

    /// Runs the CUB harness on the same input and pushes its rows (`tag`
    /// appended to CUB's algorithm names).
    fn cub_rows<K: SortKey>(
        &mut self,
        suite: &'static str,
        dist: Dist,
        pairs: bool,
        input: &[K],
        segments: Option<&[u32]>,
        tag: &str,
    ) {
        let (mode, dtype) = if pairs { ("1", pair_dtype::<K, u32>()) } else { ("0", K::NAME) };
        self.cub_rows_as(
            suite,
            dist,
            CubMode { arg: mode, dtype, pairs, val_bytes: if pairs { 4 } else { 0 } },
            input,
            segments,
            tag,
        );
    }

    /// [`Bench::cub_rows`] in any of the harness's modes.
    fn cub_rows_as<K: SortKey>(
        &mut self,
        suite: &'static str,
        dist: Dist,
        mode: CubMode,
        input: &[K],
        segments: Option<&[u32]>,
        tag: &str,
    ) {
        let Some(cub) = self.opts.cub.clone() else { return };
        let dir = std::env::temp_dir();
        let file = dir.join("warpsort-cub-input.bin");
        // SAFETY: SortKey types are plain old data; the bytes are the keys' representation.
        let bytes = unsafe { std::slice::from_raw_parts(input.as_ptr() as *const u8, std::mem::size_of_val(input)) };
        if std::fs::write(&file, bytes).is_err() {
            return;
        }
        let mut cmd = Command::new(&cub);
        cmd.arg(&file).arg(K::NAME).arg(mode.arg).arg(self.opts.reps.max(10).to_string());
        if let Some(seg) = segments {
            let sf = dir.join("warpsort-cub-segments.bin");
            let sb: Vec<u8> = seg.iter().flat_map(|v| v.to_le_bytes()).collect();
            let _ = std::fs::write(&sf, sb);
            cmd.arg(sf);
        }
        let out = match cmd.output() {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            Ok(o) => {
                eprintln!("cub_bench failed: {}", String::from_utf8_lossy(&o.stderr));
                return;
            }
            Err(e) => {
                eprintln!("cannot run {}: {e}", cub.display());
                return;
            }
        };
        for line in out.lines() {
            let field = |k: &str| {
                line.split(&format!("\"{k}\":"))
                    .nth(1)
                    .map(|s| s.trim_start_matches('"').split(['"', ',', '}']).next().unwrap_or("").to_string())
            };
            let (Some(algo), Some(ms)) = (field("algo"), field("ms_median").and_then(|m| m.parse::<f64>().ok())) else {
                continue;
            };
            let verified = field("verified").as_deref() == Some("true");
            let bytes = 2 * (std::mem::size_of::<K>() + mode.val_bytes);
            self.push(Row {
                suite,
                algo: format!("{algo}{tag}"),
                dtype: mode.dtype,
                pairs: mode.pairs,
                dist: dist.name(),
                n: input.len(),
                ms,
                bytes_per_key: bytes,
                verified,
            });
        }
    }
}

/// How the CUB harness is run: its mode argument (`0`, `1`, `v64`,
/// `argsort`, `stable`) and how its rows are labelled.
#[derive(Clone, Copy)]
struct CubMode {
    arg: &'static str,
    dtype: &'static str,
    pairs: bool,
    /// Value bytes per key for GB/s (argsort: its `u32` positions).
    val_bytes: usize,
}

/// A benchmark value: the input position `i` as a payload type.
trait Position: Payload {
    fn at(i: usize) -> Self;
    fn position(self) -> u64;
}
impl Position for u32 {
    fn at(i: usize) -> Self {
        i as u32
    }
    fn position(self) -> u64 {
        self as u64
    }
}
impl Position for u64 {
    fn at(i: usize) -> Self {
        i as u64
    }
    fn position(self) -> u64 {
        self
    }
}

/// The `dtype` of a key-value row: `K` alone for `u32` values (as the rows
/// before 64-bit payloads), `key:value` otherwise.
fn pair_dtype<K: SortKey, V: Payload>() -> &'static str {
    match (K::NAME, std::mem::size_of::<V>()) {
        (k, 4) => k,
        ("u32", _) => "u32:u64",
        ("i32", _) => "i32:u64",
        ("f32", _) => "f32:u64",
        ("u64", _) => "u64:u64",
        ("i64", _) => "i64:u64",
        _ => "f64:u64",
    }
}

fn progress(msg: &str) {
    eprintln!("[bench] {msg}");
}

fn sizes(opts: &Options) -> Vec<usize> {
    if opts.quick { vec![1 << 20, 1 << 22, 1 << 24] } else { (20..=28).step_by(2).map(|p| 1 << p).collect() }
}

fn input<K: SortKey>(dist: Dist, n: usize) -> Vec<K>
where
    K::Bits: FromPattern,
{
    keys(dist, n, 42 + n as u64)
}

pub fn run(gpu: &Gpu, opts: &Options) -> Result<()> {
    let info = gpu.info().clone();
    println!(
        "GPU: {} (cc {}.{}, {} SMs, {} PTX)",
        info.name, info.compute_capability.0, info.compute_capability.1, info.sms, info.ptx
    );
    let _ = std::fs::create_dir_all(&opts.out);
    let log = std::fs::File::create(opts.out.join("results.jsonl"))?;
    let mut b = Bench { gpu, opts, rows: Vec::new(), log };
    let s = gpu.stream().clone();

    // Device-to-device copy: the bandwidth ceiling every sort is compared with.
    let copy_n = 1usize << 26;
    let mut copy_gbs = 0.0;
    if opts.wants("copy") || opts.wants("warp") {
        progress("device-to-device copy");
        let src = s.clone_htod(&input::<u32>(Dist::Uniform, copy_n))?;
        let mut dst = s.clone_dtod(&src)?;
        let mut scratch = s.clone_dtod(&src)?;
        let ms = b.time(&src, &mut scratch, |_| Ok(s.memcpy_dtod(&src, &mut dst)?))?;
        // The timed region is one copy of `copy_n` keys: read + write.
        copy_gbs = (copy_n * 8) as f64 / (ms / 1e3) / 1e9;
        b.push(Row::u32_keys("copy", "memcpy-dtod".into(), copy_n, ms, true));
    }

    if opts.wants("warp") {
        progress("warp and block sorts of 2^26 keys in segments");
        use warpsort::SegmentKernel as S;
        let keys_in = input::<u32>(Dist::Uniform, copy_n);
        let pristine = s.clone_htod(&keys_in)?;
        let mut work = s.clone_dtod(&pristine)?;
        let cases = [
            (32, S::WarpChunks { chunk: 32 }),
            (32, S::Warp { keys_per_lane: 1 }),
            (128, S::WarpChunks { chunk: 128 }),
            (128, S::Warp { keys_per_lane: 4 }),
            (512, S::Warp { keys_per_lane: 16 }),
            (4096, S::Block { tile: 4096 }),
        ];
        for (seg, kernel) in cases {
            let ms = b.time(&pristine, &mut work, |w| gpu.sort_segments_with(w, seg, Order::Ascending, kernel))?;
            let mut host = s.clone_dtoh(&work)?;
            let mut want = keys_in.clone();
            warpsort_testkit::cpu::sort_segments(&mut want, seg, Order::Ascending);
            let verified = host == want && {
                host.sort_unstable();
                want.sort_unstable();
                host == want
            };
            let algo = format!("{kernel:?} seg={seg}").replace(' ', "");
            b.push(Row::u32_keys("warp", algo, copy_n, ms, verified));
            if seg == 32 && copy_gbs > 0.0 {
                let gbs = (copy_n * 8) as f64 / (ms / 1e3) / 1e9;
                println!(
                    "          32-key segments at {:.0}% of the device-to-device copy bandwidth ({gbs:.0} of {copy_gbs:.0} GB/s)",
                    100.0 * gbs / copy_gbs
                );
            }
        }
    }

    if opts.wants("segments") {
        // As the target: 2^24 keys in segments of 32 to 4096 (equal
        // rows and the same cut given as offsets) and random lengths, beside
        // CUB's DeviceSegmentedSort (and segmented radix sort) on the same input.
        let n = 1usize << 24;
        let keys_in = input::<u32>(Dist::Uniform, n);
        let mut cases: Vec<(String, Vec<u32>, Option<usize>)> = [32usize, 128, 1024, 4096]
            .into_iter()
            .map(|len| (format!("/seg={len}"), (0..=n / len).map(|i| (i * len) as u32).collect(), Some(len)))
            .collect();
        cases.push(("/seg=random1-8192".into(), warpsort_testkit::data::random_offsets(n, 8192, 42), None));
        for (tag, offsets, rows) in &cases {
            progress(&format!("segmented sorts of 2^24 keys, {}", &tag[1..]));
            for pairs in [false, true] {
                if let Some(len) = rows {
                    b.segments_row(format!("warpsort_rows{tag}"), &keys_in, offsets, Some(*len), pairs)?;
                }
                b.segments_row(format!("warpsort_offsets{tag}"), &keys_in, offsets, None, pairs)?;
                b.cub_rows("segments", Dist::Uniform, pairs, &keys_in, Some(offsets), tag);
                let ms = |algo: String| {
                    b.rows
                        .iter()
                        .rev()
                        .find(|r| r.suite == "segments" && r.pairs == pairs && r.algo == algo)
                        .map(|r| r.ms)
                };
                if let (Some(ours), Some(cub)) =
                    (ms(format!("warpsort_offsets{tag}")), ms(format!("cub_segmented_sort{tag}")))
                {
                    let what = if pairs { "pairs" } else { "keys" };
                    println!(
                        "          {what}{tag}: offsets API at {:.2}x CUB DeviceSegmentedSort's throughput",
                        cub / ours
                    );
                }
            }
        }
    }

    if opts.wants("sizes") {
        for n in sizes(opts) {
            progress(&format!("full sorts, n = 2^{}", n.trailing_zeros()));
            let keys_in = input::<u32>(Dist::Uniform, n);
            for pairs in [false, true] {
                b.sort_row("sizes", Algorithm::MergeSort, Dist::Uniform, pairs, &keys_in)?;
                b.sort_row("sizes", Algorithm::Bitonic, Dist::Uniform, pairs, &keys_in)?;
                b.sort_row("sizes", Algorithm::WarpsortPaper, Dist::Uniform, pairs, &keys_in)?;
                b.cub_rows("sizes", Dist::Uniform, pairs, &keys_in, None, "");
            }
        }
    }

    if opts.wants("naive") {
        let n = 1 << 24;
        progress("fused against naive bitonic sort, n = 2^24");
        let keys_in = input::<u32>(Dist::Uniform, n);
        b.sort_row("naive", Algorithm::Bitonic, Dist::Uniform, false, &keys_in)?;
        b.sort_row("naive", Algorithm::BitonicNaive, Dist::Uniform, false, &keys_in)?;
        let (f, nv) = (b.rows[b.rows.len() - 2].ms, b.rows[b.rows.len() - 1].ms);
        println!("          fused bitonic is {:.1}x the naive one-launch-per-stage sort", nv / f);
    }

    if opts.wants("dists") {
        let n = 1 << 24;
        for dist in Dist::ALL {
            progress(&format!("distribution {}, n = 2^24", dist.name()));
            let keys_in = input::<u32>(dist, n);
            for pairs in [false, true] {
                b.sort_row("dists", Algorithm::MergeSort, dist, pairs, &keys_in)?;
                b.sort_row("dists", Algorithm::WarpsortPaper, dist, pairs, &keys_in)?;
                b.cub_rows("dists", dist, pairs, &keys_in, None, "");
            }
        }
    }

    if opts.wants("types") {
        // Key types, payload widths, argsort and the stable sort beside the
        // same operations in CUB (argsort: CUB's rows include its iota kernel
        // in the timing, as warpsort's include its own).
        let ns: &[usize] = if opts.quick { &[1 << 20, 1 << 24] } else { &[1 << 20, 1 << 24, 1 << 26] };
        let ws = SortOptions::default();
        let stable = SortOptions { stable: true, ..ws };
        for &n in ns {
            progress(&format!("key types, payloads, argsort, stable, n = 2^{}", n.trailing_zeros()));
            let k64 = input::<u64>(Dist::Uniform, n);
            b.sort_row_with::<u64, u32>("types", "warpsort".into(), ws, Dist::Uniform, false, &k64)?;
            b.cub_rows("types", Dist::Uniform, false, &k64, None, "");
            drop(k64);
            let kf = input::<f32>(Dist::Uniform, n);
            b.sort_row_with::<f32, u32>("types", "warpsort".into(), ws, Dist::Uniform, false, &kf)?;
            b.cub_rows("types", Dist::Uniform, false, &kf, None, "");
            drop(kf);
            let k = input::<u32>(Dist::Uniform, n);
            b.sort_row_with::<u32, u32>("types", "warpsort".into(), ws, Dist::Uniform, true, &k)?;
            b.cub_rows("types", Dist::Uniform, true, &k, None, "");
            b.sort_row_with::<u32, u64>("types", "warpsort".into(), ws, Dist::Uniform, true, &k)?;
            let v64 = CubMode { arg: "v64", dtype: "u32:u64", pairs: true, val_bytes: 8 };
            b.cub_rows_as("types", Dist::Uniform, v64, &k, None, "");
            b.argsort_row("types", ws, Dist::Uniform, &k)?;
            b.argsort_row("types", stable, Dist::Uniform, &k)?;
            let argsort = CubMode { arg: "argsort", dtype: "u32", pairs: false, val_bytes: 4 };
            b.cub_rows_as("types", Dist::Uniform, argsort, &k, None, "");
            b.sort_row_with::<u32, u32>("types", "warpsort stable".into(), stable, Dist::Uniform, true, &k)?;
            let st = CubMode { arg: "stable", dtype: "u32", pairs: true, val_bytes: 4 };
            b.cub_rows_as("types", Dist::Uniform, st, &k, None, "");
            // Stability matters where keys repeat.
            let few = input::<u32>(Dist::FewUnique, n);
            b.sort_row_with::<u32, u32>("types", "warpsort stable".into(), stable, Dist::FewUnique, true, &few)?;
            b.cub_rows_as("types", Dist::FewUnique, st, &few, None, "");
        }
    }

    if opts.wants("tune") {
        // Step 1's tile and the merge pass's shape against n (the tile sets
        // the number of passes, the parallelism of step 1 at small n).
        let ns: &[usize] = if opts.quick { &[1 << 20, 1 << 24] } else { &[1 << 20, 1 << 22, 1 << 24, 1 << 26] };
        for &n in ns {
            progress(&format!("GPU-Warpsort step-1 tile and merge shape, n = 2^{}", n.trailing_zeros()));
            let keys_in = input::<u32>(Dist::Uniform, n);
            for pairs in [false, true] {
                let k = if pairs { 8 } else { 16 };
                for tile in [4096usize, 8192, 16_384] {
                    for t in [128, 256] {
                        let cfg = MergeSortConfig {
                            tile,
                            tile_sort: TileSort::WarpMerge,
                            merge: MergeKernel::Block,
                            outputs_per_thread: k,
                            merge_threads: t,
                        };
                        let o = SortOptions { merge_sort: cfg, ..Default::default() };
                        let name = format!("warpsort tile={tile} merge=Block k={k} threads={t}");
                        // A shape the GPU refuses (registers, shared memory) is reported, not fatal.
                        if let Err(e) =
                            b.sort_row_with::<u32, u32>("tune", name.clone(), o, Dist::Uniform, pairs, &keys_in)
                        {
                            println!("tune      {name}: not run: {e}");
                        }
                    }
                }
            }
        }
        let n = 1 << 24;
        progress("GPU-Warpsort parameters, n = 2^24");
        let keys_in = input::<u32>(Dist::Uniform, n);
        let step1 = [(TileSort::BlockBitonic, &[4096usize, 8192][..]), (TileSort::WarpMerge, &[4096, 8192][..])];
        for pairs in [false, true] {
            for (tile_sort, tiles) in step1 {
                for &tile in tiles {
                    for (k, t) in [(16, 128), (8, 128)] {
                        let cfg = MergeSortConfig {
                            tile,
                            tile_sort,
                            merge: MergeKernel::Block,
                            outputs_per_thread: k,
                            merge_threads: t,
                        };
                        let o = SortOptions { merge_sort: cfg, ..Default::default() };
                        let name = format!("warpsort tile={tile} step1={tile_sort:?} merge=Block k={k} threads={t}");
                        b.sort_row_with::<u32, u32>("tune", name, o, Dist::Uniform, pairs, &keys_in)?;
                    }
                }
            }
            // The warp bitonic merge of merge-path windows, for reference.
            for k in warpsort::kernels::config::MERGE_KEYS_PER_LANE {
                let cfg =
                    MergeSortConfig { merge: MergeKernel::WarpBitonic, outputs_per_thread: k, ..Default::default() };
                let o = SortOptions { merge_sort: cfg, ..Default::default() };
                let name = format!("warpsort merge=WarpBitonic k={k}");
                b.sort_row_with::<u32, u32>("tune", name, o, Dist::Uniform, pairs, &keys_in)?;
            }
        }
        // Wider items: 8-byte keys, and 16-byte pairs (u32 key, u64 value),
        // whose shared memory per block doubles and quadruples.
        let keys64 = input::<u64>(Dist::Uniform, n);
        for k in warpsort::kernels::config::BLOCK_MERGE_KEYS_PER_THREAD {
            for t in [128, 256] {
                let cfg = MergeSortConfig { outputs_per_thread: k, merge_threads: t, ..Default::default() };
                let o = SortOptions { merge_sort: cfg, ..Default::default() };
                let name = format!("warpsort merge=Block k={k} threads={t}");
                b.sort_row_with::<u64, u32>("tune", name.clone(), o, Dist::Uniform, false, &keys64)?;
                b.sort_row_with::<u32, u64>("tune", name, o, Dist::Uniform, true, &keys_in)?;
            }
        }
    }

    if opts.wants("steps") {
        let n = 1 << 24;
        let keys_in = input::<u32>(Dist::Uniform, n);
        let warp_merge = MergeSortConfig { tile: 8192, tile_sort: TileSort::WarpMerge, ..Default::default() };
        for (label, cfg) in [("default", MergeSortConfig::default()), ("step1=WarpMerge tile=8192", warp_merge)] {
            let o = SortOptions { merge_sort: cfg, ..Default::default() };
            for pairs in [false, true] {
                let what = if pairs { "pairs" } else { "keys" };
                progress(&format!("GPU-Warpsort time per step ({label}), n = 2^24, {what}"));
                let mut k = s.clone_htod(&keys_in)?;
                let mut v = s.clone_htod(&(0..n as u32).collect::<Vec<_>>())?;
                gpu.sort_pairs(&mut k, &mut v, &o)?; // warm-up
                s.memcpy_htod(&keys_in, &mut k)?;
                gpu.profile_begin();
                if pairs {
                    gpu.sort_pairs(&mut k, &mut v, &o)?
                } else {
                    gpu.sort_with(&mut k, &o)?
                }
                for t in gpu.profile_end()? {
                    println!(
                        "steps     {label:<26} {what:<5} {:<28} {:>2} launches {:>9.3} ms",
                        t.kernel, t.launches, t.ms
                    );
                }
            }
        }
        progress("GPU-Warpsort time per step (default), n = 2^24, u32 key + u64 value");
        let mut k = s.clone_htod(&keys_in)?;
        let mut v = s.clone_htod(&(0..n as u64).collect::<Vec<_>>())?;
        gpu.sort_pairs(&mut k, &mut v, &SortOptions::default())?; // warm-up
        s.memcpy_htod(&keys_in, &mut k)?;
        gpu.profile_begin();
        gpu.sort_pairs(&mut k, &mut v, &SortOptions::default())?;
        for t in gpu.profile_end()? {
            println!(
                "steps     {:<26} {:<5} {:<28} {:>2} launches {:>9.3} ms",
                "default", "u32:u64", t.kernel, t.launches, t.ms
            );
        }
        // Step 1 alone at every tile size: what each merge round in shared
        // memory costs (the merge passes run with small windows, unreported).
        progress("step 1 per tile size, n = 2^24, keys");
        for (tile_sort, tiles) in [
            (TileSort::WarpMerge, &[512usize, 1024, 2048, 4096, 8192, 16_384][..]),
            (TileSort::BlockBitonic, &[512, 1024, 2048, 4096, 8192][..]),
        ] {
            for &tile in tiles {
                let cfg =
                    MergeSortConfig { tile, tile_sort, outputs_per_thread: 8, merge_threads: 64, ..Default::default() };
                let mut k = s.clone_htod(&keys_in)?;
                gpu.sort_with(&mut k, &SortOptions { merge_sort: cfg, ..Default::default() })?; // warm-up
                s.memcpy_htod(&keys_in, &mut k)?;
                gpu.profile_begin();
                gpu.sort_with(&mut k, &SortOptions { merge_sort: cfg, ..Default::default() })?;
                let first = gpu.profile_end()?.into_iter().next();
                if let Some(t) = first {
                    println!("steps     step1 tile={tile:<6} {:<36} {:>9.3} ms", t.kernel, t.ms);
                }
            }
        }
        progress("fused bitonic time per kernel, n = 2^24, keys");
        let mut k = s.clone_htod(&keys_in)?;
        gpu.profile_begin();
        gpu.sort_with(&mut k, &SortOptions::algorithm(Algorithm::Bitonic))?;
        for t in gpu.profile_end()? {
            println!("steps     {:<32} {} launches {:>9.3} ms", t.kernel, t.launches, t.ms);
        }
    }

    if opts.wants("paper") {
        paper_suite(&mut b)?;
    }

    let wrong = b.rows.iter().filter(|r| !r.verified).count();
    println!(
        "{} measurements, {} unverified; results in {}",
        b.rows.len(),
        wrong,
        opts.out.join("results.jsonl").display()
    );
    if wrong > 0 {
        return Err(format!("{wrong} results failed verification").into());
    }
    Ok(())
}

/// The paper's own experiments on its own configuration
/// ([`Algorithm::WarpsortPaper`]) and on the tuned pipeline's options:
/// Fig. 11 (step 1 warp- against block-based), Fig. 12 (coalesced against
/// reversed loads), Fig. 13 (bitonic against rank-based merges), Fig. 14
/// (time per step), and sweeps of the paper's `t`, `l`, `s` and `k`.
fn paper_suite(b: &mut Bench) -> Result<()> {
    let (gpu, quick) = (b.gpu, b.opts.quick);
    let s = gpu.stream().clone();
    let ns: Vec<usize> = if quick { vec![1 << 20, 1 << 22] } else { vec![1 << 20, 1 << 22, 1 << 24] };
    let paper =
        |cfg: PaperConfig| SortOptions { algorithm: Algorithm::WarpsortPaper, paper: cfg, ..Default::default() };
    let tuned = |cfg: MergeSortConfig| SortOptions { merge_sort: cfg, ..Default::default() };
    for &n in &ns {
        let keys_in = input::<u32>(Dist::Uniform, n);
        for pairs in [false, true] {
            progress(&format!("paper experiments (Figs. 11-13), n = 2^{}, pairs {pairs}", n.trailing_zeros()));
            // (suite, label, options) of every row, then one loop runs them.
            let mut rows: Vec<(&'static str, String, SortOptions)> = Vec::new();
            for loads in [PaperLoads::Coalesced, PaperLoads::Reversed] {
                rows.push((
                    "fig12",
                    format!("paper loads={loads:?}"),
                    paper(PaperConfig { loads, ..Default::default() }),
                ));
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
                b.sort_row_with::<u32, u32>(suite, label, o, Dist::Uniform, pairs, &keys_in)?;
            }
        }
        // Fig. 14: the time of each step (kernel times grouped by step).
        for pairs in [false, true] {
            let what = if pairs { "pairs" } else { "keys" };
            progress(&format!("paper time per step (Fig. 14), n = 2^{}, {what}", n.trailing_zeros()));
            let o = paper(PaperConfig::default());
            let mut k = s.clone_htod(&keys_in)?;
            let mut v = s.clone_htod(&(0..n as u32).collect::<Vec<_>>())?;
            let sort = |k: &mut _, v: &mut _| if pairs { gpu.sort_pairs(k, v, &o) } else { gpu.sort_with(k, &o) };
            sort(&mut k, &mut v)?; // warm-up
            s.memcpy_htod(&keys_in, &mut k)?;
            let before = gpu.check(&k, pairs.then_some(&v), Order::Ascending)?;
            gpu.profile_begin();
            sort(&mut k, &mut v)?;
            let times = gpu.profile_end()?;
            let verified = gpu.check(&k, pairs.then_some(&v), Order::Ascending)?.confirms(&before);
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
                let algo = format!("paper step {}", i + 1);
                let bytes = if pairs { 16 } else { 8 };
                let dtype = if pairs { "u32:u32" } else { "u32" };
                b.push(Row {
                    suite: "fig14",
                    algo,
                    dtype,
                    pairs,
                    dist: "uniform",
                    n,
                    ms,
                    bytes_per_key: bytes,
                    verified,
                });
            }
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
