//! The multigpu suite: the distributed sort of uniform `u32` keys over 1, 2,
//! 4 and 8 GPUs (as many as there are) beside one GPU's sort of the same
//! keys, and NCCL's own all-to-all of the bytes the sort's exchange moved;
//! at the first size also key-value sorts (`u32` values, the input
//! positions), stable and not, and a host slice sorted over the GPUs
//! beside one GPU's host sort. Every result is checked (each share sorted,
//! the shares in order, the fingerprints of the shares the input's; the
//! stable ones' values rising within equal keys, on the host).

use std::time::Instant;

use rayon::slice::ParallelSliceMut;
use warpsort::cudarc::driver::CudaSlice;
use warpsort::{Cluster, DistOptions, Gpu, Order, SortOptions};
use warpsort_testkit::data::Dist;

use crate::bench::report::Row;
use crate::bench::timing::median;
use crate::bench::{Bench, Result, progress, uniform_u64};

/// Whether `shares` (share `i` on `gpus[i]`) are the sorted `inputs`.
fn verified(gpus: &[Gpu], inputs: &[CudaSlice<u32>], shares: &[CudaSlice<u32>]) -> Result<bool> {
    let (mut before, mut after, mut ok) = (0u64, 0u64, true);
    let mut last: Option<u32> = None;
    for (g, (i, s)) in gpus.iter().zip(inputs.iter().zip(shares)) {
        before = before.wrapping_add(g.check::<u32, u32>(i, None, Order::Ascending)?.fingerprint);
        let c = g.check::<u32, u32>(s, None, Order::Ascending)?;
        after = after.wrapping_add(c.fingerprint);
        ok &= c.descents == 0;
        if !s.is_empty() {
            let first = g.stream().clone_dtoh(&s.slice(0..1))?[0];
            ok &= last.is_none_or(|l| l <= first);
            last = Some(g.stream().clone_dtoh(&s.slice(s.len() - 1..))?[0]);
        }
    }
    Ok(ok && before == after)
}

pub fn multigpu(b: &mut Bench) -> Result<()> {
    let gpus = Gpu::device_count()?;
    let sizes: Vec<usize> = if b.opts.quick { vec![1 << 26, 1 << 28] } else { vec![1 << 28, 1 << 30, 1 << 32] };
    let counts: Vec<usize> = [1, 2, 4, 8].into_iter().filter(|&p| p <= gpus).collect();
    progress(&format!("distributed sort over {counts:?} GPUs ({gpus} present)"));
    let all: Vec<u32> = uniform_u64(*sizes.last().unwrap()).into_iter().map(|x| x as u32).collect();
    let clusters =
        counts.iter().map(|&p| Cluster::new(&(0..p).collect::<Vec<_>>())).collect::<warpsort::Result<Vec<_>>>()?;
    for &n in &sizes {
        progress(&format!("distributed sort, n = 2^{}", n.trailing_zeros()));
        let keys = &all[..n];
        // One GPU, the plain sort (kernels only, events).
        let one = {
            let (pristine, mut work) = b.upload(keys)?;
            let ms = b.time(&pristine, &mut work, |w| b.gpu.sort(w))?;
            let ok = b.gpu.check::<u32, u32>(&work, None, Order::Ascending)?;
            let want = b.gpu.check::<u32, u32>(&pristine, None, Order::Ascending)?;
            b.report.push(Row::u32_keys("multigpu", "warpsort-1gpu".into(), n, ms, ok.confirms(&want)));
            b.gpu.release_scratch()?;
            ms
        };
        for (c, &p) in clusters.iter().zip(&counts) {
            let cut = |i: usize| i * n / p;
            let inputs = (0..p)
                .map(|i| Ok(c.gpus()[i].stream().clone_htod(&keys[cut(i)..cut(i + 1)])?))
                .collect::<Result<Vec<_>>>()?;
            let opts = DistOptions { sort: SortOptions::default(), ..Default::default() };
            let run = |_| Ok(c.sort(&inputs, &opts)?);
            let (ms, ok) = timed(b, || Ok(()), run, |shares| verified(c.gpus(), &inputs, shares))?;
            let report = c.last_report();
            b.report.push(Row::u32_keys("multigpu", format!("warpsort-dist-{p}gpu"), n, ms, ok));
            let r = report.expect("a report");
            let phases: Vec<String> = r.phases.iter().map(|(name, t)| format!("{name} {t:.1}")).collect();
            println!("          {p} GPU(s): {:.2}x one GPU; phases (ms): {}", one / ms, phases.join(", "));
            if p > 1 {
                // NCCL's all-to-all of the bytes the exchange moved.
                let per_pair = r.crossing * r.item_bytes / (p * (p - 1));
                let a2a = c.all_to_all_ms(per_pair, 5)?;
                let exchange = r.phase_ms("exchange");
                let gbs = |ms: f64| (per_pair * (p - 1)) as f64 / (ms / 1e3) / 1e9;
                println!(
                    "          exchange {exchange:.2} ms ({:.0} GB/s a GPU), NCCL all-to-all of the same bytes {a2a:.2} ms ({:.0} GB/s a GPU): {:.0}%",
                    gbs(exchange),
                    gbs(a2a),
                    100.0 * a2a / exchange
                );
                b.report.push(Row::u32_keys("multigpu", format!("nccl-alltoall-{p}gpu"), n, a2a, true));
            }
            for g in c.gpus() {
                g.release_scratch()?;
            }
        }
        if n == sizes[0] {
            pair_rows(b, &clusters, keys)?;
            host_rows(b, &clusters, keys)?;
        }
    }
    Ok(())
}

/// Milliseconds of `run`: the median of up to 5 runs after a first one,
/// whose result `check` verifies; `setup` makes each run's input, untimed.
fn timed<S, T>(
    b: &Bench,
    mut setup: impl FnMut() -> Result<S>,
    mut run: impl FnMut(S) -> Result<T>,
    check: impl FnOnce(&T) -> Result<bool>,
) -> Result<(f64, bool)> {
    let first = run(setup()?)?;
    let ok = check(&first)?;
    drop(first);
    let mut times = Vec::new();
    for _ in 0..b.opts.reps().min(5) {
        let input = setup()?;
        let start = Instant::now();
        run(input)?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok((median(times), ok))
}

/// Key-value rows, stable and not: one GPU's `sort_pairs`, then each
/// cluster's, the values the input positions.
fn pair_rows(b: &mut Bench, clusters: &[Cluster], keys: &[u32]) -> Result<()> {
    let n = keys.len();
    progress(&format!("distributed key-value sorts, n = 2^{}", n.trailing_zeros()));
    for stable in [false, true] {
        let sort = SortOptions { stable, ..Default::default() };
        let label = |who: String| if stable { format!("{who} stable") } else { who };
        b.sort_row_with::<u32, u32>("multigpu", label("warpsort-1gpu".into()), sort, Dist::Uniform, true, keys)?;
        b.gpu.release_scratch()?;
        for c in clusters {
            let p = c.gpus().len();
            let cut = |i: usize| i * n / p;
            let (mut ks, mut vs) = (Vec::new(), Vec::new());
            for (i, g) in c.gpus().iter().enumerate() {
                let vals: Vec<u32> = (cut(i) as u32..cut(i + 1) as u32).collect();
                ks.push(g.stream().clone_htod(&keys[cut(i)..cut(i + 1)])?);
                vs.push(g.stream().clone_htod(&vals)?);
            }
            let opts = DistOptions { sort, ..Default::default() };
            let (ms, ok) = timed(
                b,
                || Ok(()),
                |_| Ok(c.sort_pairs(&ks, &vs, &opts)?),
                |shares| {
                    let (mut before, mut after, mut ok) = (0u64, 0u64, true);
                    let mut last: Option<(u32, u32)> = None;
                    for (g, ((k, v), (sk, sv))) in c.gpus().iter().zip(ks.iter().zip(&vs).zip(shares)) {
                        before = before.wrapping_add(g.check(k, Some(v), Order::Ascending)?.fingerprint);
                        let check = g.check(sk, Some(sv), Order::Ascending)?;
                        after = after.wrapping_add(check.fingerprint);
                        ok &= check.descents == 0;
                        let (hk, hv) = (g.stream().clone_dtoh(sk)?, g.stream().clone_dtoh(sv)?);
                        for (&k, &v) in hk.iter().zip(&hv) {
                            ok &= last.is_none_or(|(lk, lv)| lk < k || (lk == k && (!stable || lv < v)));
                            last = Some((k, v));
                        }
                    }
                    Ok(ok && before == after)
                },
            )?;
            b.report.push(Row {
                pairs: true,
                bytes_per_key: 16,
                ..Row::u32_keys("multigpu", label(format!("warpsort-dist-{p}gpu")), n, ms, ok)
            });
            for g in c.gpus() {
                g.release_scratch()?;
            }
        }
    }
    Ok(())
}

/// A host slice of the keys sorted over each cluster (`Cluster::sort_slice`)
/// beside one GPU's host sort (`Gpu::sort_slice`), host time of the whole
/// call, verified on the host.
fn host_rows(b: &mut Bench, clusters: &[Cluster], keys: &[u32]) -> Result<()> {
    let n = keys.len();
    progress(&format!("host slices over the GPUs, n = 2^{}", n.trailing_zeros()));
    let mut want = keys.to_vec();
    want.par_sort_unstable();
    let gpu = b.gpu;
    type HostSort<'a> = Box<dyn Fn(&mut [u32]) -> warpsort::Result<()> + 'a>;
    let mut runs: Vec<(String, HostSort)> = vec![("warpsort-1gpu host slice".into(), Box::new(|k| gpu.sort_slice(k)))];
    for c in clusters {
        let label = format!("warpsort-dist-{}gpu host slice", c.gpus().len());
        runs.push((label, Box::new(|k| c.sort_slice(k, &DistOptions::default()))));
    }
    for (label, sort) in runs {
        // A fresh copy of the input for every run, made untimed.
        let run = |mut work: Vec<u32>| {
            sort(&mut work)?;
            Ok(work)
        };
        let (ms, ok) = timed(b, || Ok(keys.to_vec()), run, |work| Ok(*work == want))?;
        b.report.push(Row::u32_keys("multigpu", label, n, ms, ok));
    }
    Ok(())
}
