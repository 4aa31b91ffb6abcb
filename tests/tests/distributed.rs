//! The distributed sort over every GPU of the machine (one rank where there
//! is one GPU), against the CPU reference: every key type and order, keys
//! and pairs (stable too), sizes not divisible by the GPUs and a GPU with no
//! keys, skewed and duplicate-heavy inputs (shares stay balanced), exact
//! input sizes, host slices, ranks on threads bootstrapped by an id, and
//! more than 2^31 keys (checked on the GPUs). NCCL calls of two tests must
//! not interleave: the tests take one lock.

use std::sync::Mutex;

use warpsort::{Balance, Cluster, DistOptions, Gpu, NcclId, Order, Peer, SortKey, SortOptions};
use warpsort_testkit::data::FromPattern;
use warpsort_testkit::{Dist, cpu, keys, seed};

warpsort_testkit::tests_main! {
    gpu: [
        every_key_type_and_order,
        pairs_and_stable_pairs,
        skewed_inputs_stay_balanced,
        exact_input_sizes,
        host_slice_over_the_gpus,
        peers_on_threads,
        beyond_2_pow_31_keys,
    ],
    cpu: [nccl_id_round_trips_as_text],
}

static NCCL: Mutex<()> = Mutex::new(());

fn cluster() -> (std::sync::MutexGuard<'static, ()>, Cluster) {
    let lock = NCCL.lock().unwrap_or_else(|e| e.into_inner());
    let c = Cluster::all().expect("a cluster of every GPU (is libnccl.so on LD_LIBRARY_PATH?)");
    eprintln!("distributed tests over {} GPU(s)", c.gpus().len());
    (lock, c)
}

/// Splits `n` keys over `p` GPUs unevenly: GPU 1 (or the only one) gets
/// none when `empty`, the rest uneven shares.
fn split(n: usize, p: usize, empty: bool) -> Vec<usize> {
    if p == 1 {
        return vec![n];
    }
    let weights: Vec<usize> = (0..p).map(|i| if empty && i == 1 { 0 } else { 2 + i % 3 }).collect();
    let total: usize = weights.iter().sum();
    let mut sizes: Vec<usize> = weights.iter().map(|w| n * w / total).collect();
    let rest = n - sizes.iter().sum::<usize>();
    sizes[0] += rest;
    sizes
}

/// Sorts `data` (one vector per GPU) over the cluster and checks the
/// concatenated shares against the CPU sort; returns the share sizes.
fn check_keys<K: SortKey>(c: &Cluster, data: &[Vec<K>], opts: &DistOptions, what: &str) -> Vec<usize> {
    let bufs: Vec<_> = c.gpus().iter().zip(data).map(|(g, d)| g.stream().clone_htod(d).unwrap()).collect();
    let shares = c.sort(&bufs, opts).unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut got = Vec::new();
    let mut sizes = Vec::new();
    for (g, s) in c.gpus().iter().zip(&shares) {
        let part = g.stream().clone_dtoh(s).unwrap();
        sizes.push(part.len());
        got.extend(part);
    }
    let mut want: Vec<K> = data.concat();
    cpu::sort(&mut want, opts.sort.order);
    let bits = |v: &[K]| v.iter().map(|k| k.to_bits()).collect::<Vec<_>>();
    assert!(bits(&got) == bits(&want), "{what}: the shares are not the sorted input");
    // The input is only read.
    for (g, (b, d)) in c.gpus().iter().zip(bufs.iter().zip(data)) {
        assert!(bits(&g.stream().clone_dtoh(b).unwrap()) == bits(d), "{what}: the input changed");
    }
    sizes
}

fn key_type<K: SortKey>(c: &Cluster)
where
    K::Bits: FromPattern,
{
    let p = c.gpus().len();
    for n in [0, 1, 33, 8193, 1_000_003] {
        for order in [Order::Ascending, Order::Descending] {
            for empty in [false, true] {
                let sizes = split(n, p, empty);
                let data: Vec<Vec<K>> =
                    sizes.iter().enumerate().map(|(i, &m)| keys::<K>(Dist::Uniform, m, seed(K::NAME, n + i))).collect();
                let opts = DistOptions { sort: SortOptions { order, ..Default::default() }, ..Default::default() };
                let shares = check_keys(c, &data, &opts, &format!("{} n={n} {order:?} sizes={sizes:?}", K::NAME));
                if n >= 8193 {
                    for s in &shares {
                        assert!(s.abs_diff(n / p) * 20 <= n / p, "{} n={n}: shares {shares:?}", K::NAME);
                    }
                }
            }
        }
    }
}

fn every_key_type_and_order(_: &Gpu) {
    let (_lock, c) = cluster();
    key_type::<u32>(&c);
    key_type::<i32>(&c);
    key_type::<f32>(&c);
    key_type::<u64>(&c);
    key_type::<i64>(&c);
    key_type::<f64>(&c);
    key_type::<u16>(&c);
    key_type::<i16>(&c);
    let report = c.last_report().expect("a report");
    assert_eq!(report.gpus, c.gpus().len());
    assert_eq!(report.phases.len(), 5);
}

fn pairs_and_stable_pairs(_: &Gpu) {
    let (_lock, c) = cluster();
    let p = c.gpus().len();
    for n in [0, 33, 8193, 1_000_003] {
        for dist in [Dist::Uniform, Dist::FewUnique, Dist::AllEqual] {
            for order in [Order::Ascending, Order::Descending] {
                let sizes = split(n, p, true);
                let mut base = 0u64;
                let (mut ks, mut vs) = (Vec::new(), Vec::new());
                for (i, &m) in sizes.iter().enumerate() {
                    ks.push(keys::<u32>(dist, m, seed("pairs", n + i)));
                    vs.push((base..base + m as u64).collect::<Vec<u64>>());
                    base += m as u64;
                }
                for stable in [false, true] {
                    let what = format!("n={n} {} {order:?} stable={stable}", dist.name());
                    let opts =
                        DistOptions { sort: SortOptions { order, stable, ..Default::default() }, ..Default::default() };
                    let kb: Vec<_> = c.gpus().iter().zip(&ks).map(|(g, d)| g.stream().clone_htod(d).unwrap()).collect();
                    let vb: Vec<_> = c.gpus().iter().zip(&vs).map(|(g, d)| g.stream().clone_htod(d).unwrap()).collect();
                    let shares = c.sort_pairs(&kb, &vb, &opts).unwrap_or_else(|e| panic!("{what}: {e}"));
                    let (mut ok, mut ov) = (Vec::new(), Vec::new());
                    for (g, (k, v)) in c.gpus().iter().zip(&shares) {
                        ok.extend(g.stream().clone_dtoh(k).unwrap());
                        ov.extend(g.stream().clone_dtoh(v).unwrap());
                    }
                    let (ik, iv) = (ks.concat(), vs.concat());
                    if stable {
                        let (mut rk, mut rv) = (ik.clone(), iv.clone());
                        cpu::sort_pairs(&mut rk, &mut rv, order);
                        assert!(ok == rk && ov == rv, "{what}: not the stable order");
                    } else {
                        assert!(cpu::is_pair_sort_of(&ik, &iv, &ok, &ov, order), "{what}: not a sort of the pairs");
                    }
                }
            }
        }
    }
}

fn skewed_inputs_stay_balanced(_: &Gpu) {
    let (_lock, c) = cluster();
    let p = c.gpus().len();
    let n = 3_000_017;
    for dist in Dist::ALL {
        // Skewed across GPUs too: GPU i's keys from its own seed, GPU 0 with twice the keys.
        let sizes = split(n, p, false);
        let data: Vec<Vec<u64>> =
            sizes.iter().enumerate().map(|(i, &m)| keys::<u64>(dist, m, seed(dist.name(), i))).collect();
        let shares = check_keys(&c, &data, &DistOptions::default(), dist.name());
        for s in &shares {
            assert!(s.abs_diff(n / p) * 20 <= n / p, "{}: shares {shares:?}", dist.name());
        }
    }
}

fn exact_input_sizes(_: &Gpu) {
    let (_lock, c) = cluster();
    let p = c.gpus().len();
    for n in [0, 1, 8193, 2_000_003] {
        let sizes = split(n, p, true);
        let data: Vec<Vec<f32>> =
            sizes.iter().enumerate().map(|(i, &m)| keys::<f32>(Dist::Gaussian, m, seed("exact", n + i))).collect();
        for order in [Order::Ascending, Order::Descending] {
            let opts = DistOptions { sort: SortOptions { order, ..Default::default() }, balance: Balance::InputSizes };
            let got = check_keys(&c, &data, &opts, &format!("exact n={n} {order:?}"));
            assert_eq!(got, sizes, "n={n}: the shares keep the input sizes");
        }
    }
}

fn host_slice_over_the_gpus(_: &Gpu) {
    let (_lock, c) = cluster();
    for n in [0, 5, 100_003, 4_000_000] {
        let input: Vec<i64> = keys(Dist::Zipf, n, seed("slice", n));
        let mut got = input.clone();
        c.sort_slice(&mut got, &DistOptions::default()).unwrap();
        let mut want = input.clone();
        cpu::sort(&mut want, Order::Ascending);
        assert!(got == want, "n={n}");
        // Pairs, stable, descending: the values are the input positions.
        let vals: Vec<u32> = (0..n as u32).collect();
        let (mut gk, mut gv) = (input.clone(), vals.clone());
        let stable = DistOptions {
            sort: SortOptions { stable: true, order: Order::Descending, ..Default::default() },
            ..Default::default()
        };
        c.sort_pairs_slice(&mut gk, &mut gv, &stable).unwrap();
        let (mut wk, mut wv) = (input, vals);
        cpu::sort_pairs(&mut wk, &mut wv, Order::Descending);
        assert!(gk == wk && gv == wv, "stable descending pairs, n={n}");
    }
}

/// One thread per GPU, each its own rank, joined by an id passed as text.
fn peers_on_threads(_: &Gpu) {
    let _lock = NCCL.lock().unwrap_or_else(|e| e.into_inner());
    let p = Gpu::device_count().unwrap();
    let id = NcclId::new().unwrap().to_hex();
    let n = 2_000_003;
    let sizes = split(n, p, true);
    let data: Vec<Vec<u32>> =
        sizes.iter().enumerate().map(|(i, &m)| keys::<u32>(Dist::Staggered, m, seed("peers", i))).collect();
    let results: Vec<(Vec<u32>, Vec<u32>, Vec<u64>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..p)
            .map(|rank| {
                let (id, mine) = (&id, &data[rank]);
                s.spawn(move || {
                    let id = NcclId::from_hex(id).unwrap();
                    let peer = Peer::new(Gpu::with_device(rank).unwrap(), &id, rank, p).unwrap();
                    assert_eq!((peer.rank(), peer.ranks()), (rank, p));
                    let keys = peer.gpu().stream().clone_htod(mine).unwrap();
                    let share = peer.sort(&keys, &DistOptions::default()).unwrap();
                    let report = peer.last_report().unwrap();
                    assert_eq!(report.keys, n);
                    // Host slices: the rank keeps as many keys as it had.
                    let mut host = mine.clone();
                    peer.sort_slice(&mut host, &DistOptions::default()).unwrap();
                    let (mut hk, mut hv) = (mine.clone(), vec![rank as u64; mine.len()]);
                    peer.sort_pairs_slice(&mut hk, &mut hv, &DistOptions::default()).unwrap();
                    assert_eq!(hk, host, "rank {rank}: host pairs' keys");
                    (peer.gpu().stream().clone_dtoh(&share).unwrap(), host, hv)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let got: Vec<u32> = results.iter().flat_map(|r| r.0.clone()).collect();
    let mut want = data.concat();
    want.sort_unstable();
    assert!(got == want, "the ranks' shares are not the sorted input");
    // Host slices of the same sizes as the inputs, in global order; the
    // values (each rank's number) a permutation of the input's.
    let hosts: Vec<u32> = results.iter().flat_map(|r| r.1.clone()).collect();
    assert!(hosts == want, "the ranks' host slices are not the sorted input");
    assert!(results.iter().zip(&data).all(|(r, d)| r.1.len() == d.len()), "host shares of other sizes");
    let mut ranks: Vec<u64> = results.iter().flat_map(|r| r.2.clone()).collect();
    ranks.sort_unstable();
    let mut input_ranks: Vec<u64> = data.iter().enumerate().flat_map(|(i, d)| vec![i as u64; d.len()]).collect();
    input_ranks.sort_unstable();
    assert!(ranks == input_ranks, "host pairs lost or invented values");
}

/// 2^31 + 4099 keys over the GPUs, checked on the GPUs: each share sorted,
/// the shares in order, the fingerprints of all shares the input's.
fn beyond_2_pow_31_keys(_: &Gpu) {
    let (_lock, c) = cluster();
    let p = c.gpus().len();
    let n = (1usize << 31) + 4099;
    let sizes = split(n, p, false);
    let mut before = 0u64;
    let mut bufs = Vec::new();
    for (i, (g, &m)) in c.gpus().iter().zip(&sizes).enumerate() {
        let data: Vec<u32> = keys(Dist::Uniform, m, seed("huge", i));
        let b = g.stream().clone_htod(&data).unwrap();
        before = before.wrapping_add(g.check::<u32, u32>(&b, None, Order::Ascending).unwrap().fingerprint);
        bufs.push(b);
    }
    let shares = c.sort(&bufs, &DistOptions::default()).unwrap();
    drop(bufs);
    let mut after = 0u64;
    let mut last: Option<u32> = None;
    for (g, s) in c.gpus().iter().zip(&shares) {
        let check = g.check::<u32, u32>(s, None, Order::Ascending).unwrap();
        assert_eq!(check.descents, 0, "a share is not sorted");
        after = after.wrapping_add(check.fingerprint);
        if !s.is_empty() {
            let first = g.stream().clone_dtoh(&s.slice(0..1)).unwrap()[0];
            assert!(last.is_none_or(|l| l <= first), "shares out of order");
            last = Some(g.stream().clone_dtoh(&s.slice(s.len() - 1..)).unwrap()[0]);
        }
    }
    assert_eq!(after, before, "the shares are not the input's keys");
    let report = c.last_report().unwrap();
    eprintln!("2^31 + 4099 keys on {p} GPU(s): {report:?}");
}

fn nccl_id_round_trips_as_text() {
    assert!(NcclId::from_hex("zz").is_err());
    assert!(NcclId::from_hex(&"g".repeat(256)).is_err());
    let text = "0a".repeat(128);
    assert_eq!(NcclId::from_hex(&text).unwrap().to_hex(), text);
}
