//! The host suites: sorts of host memory end to end (`Gpu::sort_host`,
//! `Gpu::sort_pairs_host`) beside the bound the pinned copies set (one round
//! trip of the same bytes, each way timed alone), the same round trip of
//! pageable bytes through the staging alone and by plain copies, and rayon's
//! `par_sort_unstable` on all cores (`host`); and data beyond the GPU's
//! memory (`outofcore`), its time per phase beside the copy bound of its
//! passes over the bus (two beyond the GPU, one when the items fit it once). Every result is checked on the CPU: sorted, and the same multiset
//! (a fingerprint of every key, or key and value) as the input.

use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;
use warpsort::cudarc::driver::PinnedHostSlice;
use warpsort::{HostOptions, Payload, Phase, Progress, SortKey};

use crate::bench::report::Row;
use crate::bench::timing::median;
use crate::bench::{Bench, Result, mix64, progress, uniform_u64};

/// The pinned copy times (ms) of `bytes` up and down: the median of `reps`.
fn copy_bound(b: &Bench, bytes: usize, reps: usize) -> Result<(f64, f64)> {
    let ctx = b.gpu.context();
    // SAFETY: the buffer's contents are never read as values, only copied.
    let mut host: PinnedHostSlice<u8> = unsafe { ctx.alloc_pinned_with_flags(bytes, 0) }?;
    host.as_mut_slice()?.fill(1);
    let s = b.gpu.stream();
    // SAFETY: written by the copies before anything reads it.
    let mut dev = unsafe { s.alloc::<u8>(bytes) }?;
    let (mut up, mut down) = (Vec::new(), Vec::new());
    for _ in 0..reps + 1 {
        let t = Instant::now();
        s.memcpy_htod(&host, &mut dev)?;
        s.synchronize()?;
        up.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        s.memcpy_dtoh(&dev, &mut host)?;
        s.synchronize()?;
        down.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok((median(up[1..].to_vec()), median(down[1..].to_vec())))
}

/// What the machine's copies of pageable memory allow: round trips of the
/// same pageable bytes through the handle's staging (`Gpu::copy_to_device`,
/// `Gpu::copy_to_host`), and through plain pageable copies (cudarc's
/// `clone_htod`, `memcpy_dtoh`): the medians of `reps` (ms), each checked.
fn staged_round_trip(b: &Bench, bytes: usize, reps: usize) -> Result<((f64, bool), (f64, bool))> {
    let host: Vec<u64> = uniform_u64(bytes / 8);
    let mut back = vec![0u64; host.len()];
    let (mut staged, mut plain) = (Vec::new(), Vec::new());
    let (mut staged_ok, mut plain_ok) = (true, true);
    let s = b.gpu.stream();
    for _ in 0..reps + 1 {
        back.fill(0);
        let t = Instant::now();
        let d = b.gpu.copy_to_device(&host)?;
        b.gpu.copy_to_host(&d, &mut back)?;
        staged.push(t.elapsed().as_secs_f64() * 1e3);
        staged_ok &= back == host;
        drop(d);
        back.fill(0);
        let t = Instant::now();
        let d = s.clone_htod(&host)?;
        s.memcpy_dtoh(&d, &mut back)?;
        s.synchronize()?;
        plain.push(t.elapsed().as_secs_f64() * 1e3);
        plain_ok &= back == host;
    }
    if cfg!(feature = "trace") {
        warpsort::trace::take();
        let d = b.gpu.copy_to_device(&host)?;
        b.gpu.copy_to_host(&d, &mut back)?;
        print_trace("staged round trip");
    }
    Ok(((median(staged[1..].to_vec()), staged_ok), (median(plain[1..].to_vec()), plain_ok)))
}

/// With the feature `trace`: each step the last sort or copy marked, its
/// count and first and last time, the largest pause between two upload
/// DMAs queued, and the host's time queuing the runs' sorts.
fn print_trace(what: &str) {
    use warpsort::trace::step;
    let marks = warpsort::trace::take();
    let mut steps: Vec<(&str, usize, f64, f64)> = Vec::new();
    for &(w, t) in &marks {
        match steps.iter_mut().find(|s| s.0 == w) {
            Some(s) => (s.1, s.3) = (s.1 + 1, t),
            None => steps.push((w, 1, t, t)),
        }
    }
    println!("          trace of one {what} (ms):");
    for (w, k, a, z) in steps {
        println!("            {w:<42} x{k:<5} {:8.3} .. {:8.3}", a * 1e3, z * 1e3);
    }
    let gaps = |name: &str| -> (f64, f64) {
        let t: Vec<f64> = marks.iter().filter(|m| m.0 == name).map(|m| m.1).collect();
        let g: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        (g.iter().copied().fold(0.0, f64::max) * 1e3, g.iter().filter(|&&x| x > 100e-6).sum::<f64>() * 1e3)
    };
    let (up_max, up_long) = gaps(step::UP_DMA_QUEUED);
    let (dn_max, dn_long) = gaps(step::DOWN_DMA_QUEUED);
    let mut queuing = 0.0;
    let mut since = None;
    for &(w, t) in &marks {
        if w == step::RUN_QUEUING {
            since = Some(t);
        } else if w == step::RUN_QUEUED {
            queuing += since.take().map_or(0.0, |s| t - s);
        }
    }
    println!(
        "            upload DMAs queued: largest pause {up_max:.3} ms, pauses over 0.1 ms {up_long:.3} ms; download DMAs: {dn_max:.3}, {dn_long:.3}; queuing the runs' sorts {:.3} ms",
        queuing * 1e3
    );
}

/// A multiset fingerprint of keys (and values), order-free.
fn fingerprint<K: SortKey, V: Payload>(keys: &[K], vals: Option<&[V]>) -> u64 {
    let bits = |k: &K| format_bits(k.to_bits());
    match vals {
        None => keys.par_iter().map(|k| mix64(bits(k))).reduce(|| 0, u64::wrapping_add),
        Some(v) => keys
            .par_iter()
            .zip(v.par_iter())
            .map(|(k, v)| mix64(bits(k) ^ mix64(val_bits(v))))
            .reduce(|| 0, u64::wrapping_add),
    }
}

fn format_bits<B: warpsort::Bits>(b: B) -> u64 {
    let mut x = 0u64;
    // SAFETY: `B` is u32 or u64: plain bytes, copied into the low bytes.
    unsafe { std::ptr::copy_nonoverlapping((&raw const b).cast::<u8>(), (&raw mut x).cast::<u8>(), size_of::<B>()) };
    x
}

fn val_bits<V: Payload>(v: &V) -> u64 {
    let mut x = 0u64;
    // SAFETY: a payload is 4 or 8 plain bytes.
    unsafe { std::ptr::copy_nonoverlapping((v as *const V).cast::<u8>(), (&raw mut x).cast::<u8>(), size_of::<V>()) };
    x
}

fn is_sorted<K: SortKey>(keys: &[K]) -> bool {
    keys.par_windows(2).all(|w| w[0].key_cmp(&w[1]).is_le())
}

/// Keys of `K` from 64-bit hashes (u32 takes the low half).
trait FromHash: SortKey {
    fn from_hash(h: u64) -> Self;
}
impl FromHash for u32 {
    fn from_hash(h: u64) -> Self {
        h as u32
    }
}
impl FromHash for u64 {
    fn from_hash(h: u64) -> Self {
        h
    }
}

/// One host-suite case: `n` keys of `K` (with `u32` values when `pairs`).
fn host_case<K: FromHash>(b: &mut Bench, n: usize, pairs: bool) -> Result<()> {
    let dtype = K::NAME;
    let keys: Vec<K> = uniform_u64(n).into_iter().map(K::from_hash).collect();
    let vals: Vec<u32> = (0..n as u32).collect();
    let bytes = n * (size_of::<K>() + if pairs { 4 } else { 0 });
    let reps = b.opts.reps().min(5);
    let (up, down) = copy_bound(b, bytes, reps)?;
    let bound = up + down;
    let ((staged, staged_ok), (plain, plain_ok)) = staged_round_trip(b, bytes, reps)?;
    let want = fingerprint(&keys, pairs.then_some(&vals[..]));
    let mut times = Vec::new();
    let mut ok = true;
    let phases = Mutex::new(Phases::default());
    for rep in 0..reps + 1 {
        let (mut k, mut v) = (keys.clone(), vals.clone());
        let t = Instant::now();
        // The first (untimed) run says when each phase ran.
        let seen = |p: Progress| phases.lock().unwrap().saw(p.phase, t.elapsed().as_secs_f64());
        let opts =
            HostOptions { progress: (rep == 0).then_some(&seen as &(dyn Fn(Progress) + Sync)), ..Default::default() };
        if pairs {
            b.gpu.sort_pairs_host(&mut k, &mut v, &opts)?;
        } else {
            b.gpu.sort_host(&mut k, &opts)?;
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if rep == 0 {
            ok = is_sorted(&k) && fingerprint(&k, pairs.then_some(&v[..])) == want;
        } else {
            times.push(ms);
        }
    }
    let ms = median(times);
    if cfg!(feature = "trace") {
        let (mut k, mut v) = (keys.clone(), vals.clone());
        warpsort::trace::take();
        if pairs {
            b.gpu.sort_pairs_host(&mut k, &mut v, &HostOptions::default())?;
        } else {
            b.gpu.sort_host(&mut k, &HostOptions::default())?;
        }
        print_trace("sort");
    }
    // The caller's keys already in pinned memory: no staging copy.
    let pinned_ms = if pairs {
        None
    } else {
        // SAFETY: filled from `keys` before it is read.
        let mut p: PinnedHostSlice<K> = unsafe { b.gpu.context().alloc_pinned_with_flags(n, 0) }?;
        let mut t = Vec::new();
        let mut ok = true;
        for rep in 0..reps + 1 {
            p.as_mut_slice()?.copy_from_slice(&keys);
            let start = Instant::now();
            b.gpu.sort_host(p.as_mut_slice()?, &HostOptions::default())?;
            t.push(start.elapsed().as_secs_f64() * 1e3);
            if rep == 0 {
                ok = is_sorted(p.as_slice()?) && fingerprint::<K, u32>(p.as_slice()?, None) == want;
            }
        }
        Some((median(t[1..].to_vec()), ok))
    };
    let row = |algo: &str, ms: f64, verified: bool| Row {
        suite: "host",
        algo: algo.into(),
        dtype,
        pairs,
        dist: "uniform",
        n,
        ms,
        bytes_per_key: bytes / n,
        verified,
    };
    b.report.push(row("warpsort-host", ms, ok));
    if let Some((pms, pok)) = pinned_ms {
        b.report.push(row("warpsort-host-pinned", pms, pok));
        println!("          pinned keys: {:.0}% of the copy bound", 100.0 * bound / pms);
    }
    b.report.push(row("pinned-copy-bound", bound, true));
    b.report.push(row("staged-copy-round-trip", staged, staged_ok));
    b.report.push(row("pageable-copy-round-trip", plain, plain_ok));
    // rayon on all cores, and std at the smallest size.
    let rayon_ms = if pairs {
        let mut p: Vec<(K, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
        let t = Instant::now();
        p.par_sort_unstable_by(|a, b| a.0.key_cmp(&b.0));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        b.report.push(row("rayon-par-sort", ms, p.par_windows(2).all(|w| w[0].0.key_cmp(&w[1].0).is_le())));
        ms
    } else {
        let mut k = keys.clone();
        let t = Instant::now();
        k.par_sort_unstable_by(|a, b| a.key_cmp(b));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        b.report.push(row("rayon-par-sort", ms, is_sorted(&k)));
        ms
    };
    if n <= 1 << 24 && !pairs {
        let mut k = keys.clone();
        let t = Instant::now();
        k.sort_unstable_by(|a, b| a.key_cmp(b));
        b.report.push(row("std-sort", t.elapsed().as_secs_f64() * 1e3, is_sorted(&k)));
    }
    let gbs = |ms: f64| bytes as f64 / (ms / 1e3) / 1e9;
    println!(
        "          {dtype}{} n=2^{}: pinned up {up:.2} ms ({:.1} GB/s), down {down:.2} ms ({:.1} GB/s); warpsort {ms:.2} ms = {:.0}% of the copy bound, {:.1}x rayon",
        if pairs { " pairs" } else { "" },
        n.trailing_zeros(),
        gbs(up),
        gbs(down),
        100.0 * bound / ms,
        rayon_ms / ms
    );
    println!(
        "          the same bytes' round trip alone: staged {staged:.2} ms ({:.0}% of the copy bound; the sort reached {:.0}% of its rate), plain pageable copies {plain:.2} ms ({:.0}%)",
        100.0 * bound / staged,
        100.0 * staged / ms,
        100.0 * bound / plain
    );
    println!("          phases of the first run: {}", phases.into_inner().unwrap().line());
    Ok(())
}

pub fn host(b: &mut Bench) -> Result<()> {
    let sizes: Vec<usize> = if b.opts.quick { vec![1 << 24, 1 << 26] } else { vec![1 << 24, 1 << 26, 1 << 28] };
    for &n in &sizes {
        progress(&format!("host data, n = 2^{}", n.trailing_zeros()));
        host_case::<u32>(b, n, false)?;
        host_case::<u64>(b, n, false)?;
        host_case::<u32>(b, n, true)?;
    }
    Ok(())
}

/// When each phase was first and last reported (seconds from the start).
#[derive(Default)]
struct Phases(Vec<(Phase, f64, f64)>);

impl Phases {
    fn line(&self) -> String {
        let v: Vec<String> =
            self.0.iter().map(|(p, a, z)| format!("{} {:.1}..{:.1} ms", p.name(), a * 1e3, z * 1e3)).collect();
        v.join(", ")
    }

    fn saw(&mut self, phase: Phase, at: f64) {
        match self.0.iter_mut().find(|p| p.0 == phase) {
            Some(p) => p.2 = at,
            None => self.0.push((phase, at, at)),
        }
    }
}

pub fn outofcore(b: &mut Bench) -> Result<()> {
    let n = b.opts.outofcore_keys.unwrap_or(if b.opts.quick { 1 << 30 } else { 12 << 30 });
    let limit = b.opts.memory_limit.or(if b.opts.quick { Some(2 << 30) } else { None });
    let bytes = n * 4;
    progress(&format!("beyond the GPU: {n} u32 keys ({} GiB), device memory limit {limit:?}", bytes >> 30));
    let mut keys = vec![0u32; n];
    fill_uniform(&mut keys);
    // rayon first, on the same keys.
    let t = Instant::now();
    keys.par_sort_unstable();
    let rayon_ms = t.elapsed().as_secs_f64() * 1e3;
    let rayon_ok = keys.par_windows(2).all(|w| w[0] <= w[1]);
    fill_uniform(&mut keys);
    let want = fingerprint::<u32, u32>(&keys, None);
    // The first touch of memory a process has not used costs what the system
    // makes it cost (a virtual machine's host backs each page on first use):
    // measured apart, on a buffer of the size the sort keeps its runs in,
    // then freed for the sort to reuse.
    let touch = Instant::now();
    let mut fresh = vec![0u32; n];
    fresh.par_chunks_mut(1 << 20).for_each(|c| c.fill(1));
    let touch_ms = touch.elapsed().as_secs_f64() * 1e3;
    drop(fresh);
    let start = Instant::now();
    let phases = Mutex::new(Phases::default());
    let out_of_core = Mutex::new(false);
    let seen = |p: Progress| {
        phases.lock().unwrap().saw(p.phase, start.elapsed().as_secs_f64());
        *out_of_core.lock().unwrap() = p.out_of_core;
    };
    let opts = HostOptions { memory_limit: limit, progress: Some(&seen), ..Default::default() };
    let start_sort = Instant::now();
    b.gpu.sort_host(&mut keys, &opts)?;
    let ms = start_sort.elapsed().as_secs_f64() * 1e3;
    let ok = is_sorted(&keys) && fingerprint::<u32, u32>(&keys, None) == want;
    drop(keys);
    let (up, down) = copy_bound(b, 1 << 30, 5)?;
    let (up_gbs, down_gbs) = ((1u64 << 30) as f64 / (up / 1e3) / 1e9, (1u64 << 30) as f64 / (down / 1e3) / 1e9);
    let row = |algo: &str, ms: f64, verified: bool| Row {
        suite: "outofcore",
        algo: algo.into(),
        dtype: "u32",
        pairs: false,
        dist: "uniform",
        n,
        ms,
        bytes_per_key: 4,
        verified,
    };
    b.report.push(row("warpsort-outofcore", ms, ok));
    b.report.push(row("rayon-par-sort", rayon_ms, rayon_ok));
    // Its passes over the bus: two beyond the GPU (runs written to host
    // memory, then merged), one when the items fit the GPU once.
    let phases = phases.into_inner().unwrap();
    let passes = if phases.0.iter().any(|p| p.0 == Phase::Runs) { 2.0 } else { 1.0 };
    let (pass_up, pass_down) = (bytes as f64 / up_gbs / 1e6, bytes as f64 / down_gbs / 1e6);
    let (sequential, duplex) = (passes * (pass_up + pass_down), passes * pass_up.max(pass_down));
    let phases = phases.line();
    println!(
        "          {} keys ({} GiB), out of core: {}; {ms:.0} ms ({:.2} Gkeys/s); phases: {}; first touch of as much fresh host memory (before the sort, not in its time) {touch_ms:.0} ms",
        n,
        bytes >> 30,
        out_of_core.into_inner().unwrap(),
        n as f64 / ms / 1e6,
        phases
    );
    println!(
        "          pinned up {up_gbs:.1} GB/s, down {down_gbs:.1} GB/s: {passes} passes' bound {sequential:.0} ms up then down ({:.0}% reached), {duplex:.0} ms both ways at once ({:.0}%); {:.1}x rayon ({rayon_ms:.0} ms)",
        100.0 * sequential / ms,
        100.0 * duplex / ms,
        rayon_ms / ms
    );
    Ok(())
}

/// Uniform `u32` keys in place, on all cores (the same keys every time).
fn fill_uniform(keys: &mut [u32]) {
    keys.par_chunks_mut(1 << 20).enumerate().for_each(|(c, part)| {
        for (i, x) in part.iter_mut().enumerate() {
            *x = mix64(((c << 20) + i) as u64 ^ 0x9e37_79b9) as u32;
        }
    });
}
