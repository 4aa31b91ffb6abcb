//! Sorts of host memory (`Gpu::sort_host`, `Gpu::sort_pairs_host` and the
//! plain host-slice sorts, which take the same path) against the CPU
//! reference: on the GPU and beyond it (small memory limits force runs
//! merged from host memory), sizes around every staging and run boundary,
//! every key type and order, pairs and stable pairs, every distribution,
//! pinned slices copied directly, progress, and every fault: before the last
//! pass the slices are untouched; a failed merge pass leaves every item
//! exactly once. Limits the items fit once but not twice keep the sorted
//! runs on the GPU and merge them a bucket at a time as they copy back.
//! The staged copies alone (`Gpu::copy_to_device`, `Gpu::copy_to_host`) go
//! both ways at every size around a slot and past the ring.

use std::sync::Mutex;

use warpsort::cudarc::driver::PinnedHostSlice;
use warpsort::{Error, Fault, Gpu, HostOptions, Order, Phase, Progress, SortKey, SortOptions};
use warpsort_testkit::data::FromPattern;
use warpsort_testkit::{Dist, cpu, keys, seed};

warpsort_testkit::tests_main! {
    gpu: [
        sizes_around_every_boundary,
        every_key_type_and_order,
        pairs_and_stable_pairs,
        every_distribution,
        argsort_of_host_keys,
        pinned_slices,
        progress_is_reported,
        faults_before_the_last_pass_lose_nothing,
        a_failed_merge_pass_keeps_every_item,
        beyond_the_gpu_at_scale,
        fitting_the_gpu_once,
        staged_copies_both_ways,
    ],
}

/// Where each test's sorts run: in core (no limit), and beyond the GPU
/// under limits that make many runs and buckets.
const LIMITS: [Option<usize>; 3] = [None, Some(512 << 10), Some(3 << 20)];

/// Staging buffers of 4 KiB: every size crosses many slots.
const SMALL_STAGING: usize = 4096;

fn host(order: Order, limit: Option<usize>, staging: usize) -> HostOptions<'static> {
    HostOptions {
        sort: SortOptions { order, ..Default::default() },
        memory_limit: limit,
        staging_bytes: staging,
        ..Default::default()
    }
}

fn check_keys<K: SortKey>(g: &Gpu, input: &[K], o: &HostOptions, what: &str) {
    let mut got = input.to_vec();
    g.sort_host(&mut got, o).unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut want = input.to_vec();
    cpu::sort(&mut want, o.sort.order);
    if let Some(i) = got.iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits()) {
        panic!("{what} ({} {:?} n={}): differs first at {i}: {:?} vs {:?}", K::NAME, o, input.len(), got[i], want[i]);
    }
}

fn sizes_around_every_boundary(g: &Gpu) {
    let slot = SMALL_STAGING / 4;
    let mut sizes = vec![0, 1, 2, 31, 32, 33, 1000, 4095, 4096, 4097, 8193, 65_536, 100_003, 1_000_003];
    sizes.extend([slot - 1, slot, slot + 1, 2 * slot - 1, 2 * slot + 1, 5 * slot]);
    for n in sizes {
        let input: Vec<u32> = keys(Dist::Uniform, n, seed("host sizes", n));
        for limit in LIMITS {
            for staging in [0, SMALL_STAGING] {
                check_keys(g, &input, &host(Order::Ascending, limit, staging), "u32 keys");
            }
        }
        let vals: Vec<u32> = (0..n as u32).collect();
        for limit in LIMITS {
            check_pairs(g, &input, &vals, &host(Order::Ascending, limit, SMALL_STAGING), "u32 pairs");
        }
    }
    // In core, several runs merged as they are sorted (runs of at least 16
    // MiB of items; eight, cut short at the end, from 128 MiB).
    for n in [(1 << 23) + 5, (1 << 24) + 3, 5 << 22, (1 << 25) + 3] {
        let input: Vec<u32> = keys(Dist::Uniform, n, seed("host runs", n));
        check_keys(g, &input, &host(Order::Descending, None, 0), "u32 keys in runs");
        let vals: Vec<u32> = (0..n as u32).collect();
        check_pairs(
            g,
            &input,
            &vals,
            &HostOptions { sort: SortOptions { stable: true, ..Default::default() }, ..Default::default() },
            "stable pairs in runs",
        );
    }
    // The last merge copied back a range at a time: keys decoded a range
    // at a time from their patterns (floats) and into the caller's layout
    // (16-bit keys, stored as fields), 16-byte items, eight runs each.
    let n = (1 << 24) + 3;
    let input: Vec<i16> = keys(Dist::Uniform, (1 << 25) + 3, seed("host runs i16", n));
    check_keys(g, &input, &host(Order::Descending, None, 0), "i16 keys in runs");
    let input: Vec<f64> = keys(Dist::Gaussian, n, seed("host runs f64", n));
    let vals: Vec<u64> = (0..n as u64).collect();
    for stable in [false, true] {
        let o = HostOptions { sort: SortOptions { stable, ..Default::default() }, ..Default::default() };
        check_pairs(g, &input, &vals, &o, "f64 keys, u64 values in runs");
    }
}

fn each_type<K: SortKey>(g: &Gpu)
where
    K::Bits: FromPattern,
{
    for order in [Order::Ascending, Order::Descending] {
        for dist in [Dist::Uniform, Dist::FewUnique, Dist::Sorted] {
            let input: Vec<K> = keys(dist, 100_003, seed(dist.name(), 100_003));
            for limit in LIMITS {
                check_keys(g, &input, &host(order, limit, SMALL_STAGING * 4), dist.name());
            }
        }
    }
}

fn every_key_type_and_order(g: &Gpu) {
    each_type::<u32>(g);
    each_type::<i32>(g);
    each_type::<f32>(g);
    each_type::<u64>(g);
    each_type::<i64>(g);
    each_type::<f64>(g);
    each_type::<u16>(g);
    each_type::<i16>(g);
}

/// Checks a pair sort; stable sorts against the CPU's stable order
/// exactly, others as a sort that keeps each key with its value.
fn check_pairs<K: SortKey, V: warpsort::Payload + Ord>(g: &Gpu, k: &[K], v: &[V], o: &HostOptions, what: &str) {
    let (mut gk, mut gv) = (k.to_vec(), v.to_vec());
    g.sort_pairs_host(&mut gk, &mut gv, o).unwrap_or_else(|e| panic!("{what}: {e}"));
    if o.sort.stable {
        let (mut wk, mut wv) = (k.to_vec(), v.to_vec());
        cpu::sort_pairs(&mut wk, &mut wv, o.sort.order);
        assert!(gk.iter().zip(&wk).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: keys differ");
        assert!(gv == wv, "{what}: stable values differ ({} {:?} n={})", K::NAME, o, k.len());
    } else {
        assert!(cpu::is_pair_sort_of(k, v, &gk, &gv, o.sort.order), "{what}: not a pair sort ({} {:?})", K::NAME, o);
    }
}

fn pairs_of<K: SortKey>(g: &Gpu, n: usize)
where
    K::Bits: FromPattern,
{
    for dist in [Dist::Uniform, Dist::FewUnique, Dist::AllEqual] {
        let input: Vec<K> = keys(dist, n, seed(dist.name(), n) ^ 3);
        let v32: Vec<u32> = (0..n as u32).collect();
        let v64: Vec<u64> = (0..n as u64).map(|i| i << 20).collect();
        for stable in [false, true] {
            for order in [Order::Ascending, Order::Descending] {
                for limit in LIMITS {
                    let o = HostOptions {
                        sort: SortOptions { order, stable, ..Default::default() },
                        memory_limit: limit,
                        staging_bytes: SMALL_STAGING * 8,
                        ..Default::default()
                    };
                    check_pairs(g, &input, &v32, &o, dist.name());
                    check_pairs(g, &input, &v64, &o, dist.name());
                }
            }
        }
    }
}

fn pairs_and_stable_pairs(g: &Gpu) {
    pairs_of::<u32>(g, 70_001);
    pairs_of::<f32>(g, 70_001);
    pairs_of::<u64>(g, 70_001);
    pairs_of::<i16>(g, 70_001);
}

fn every_distribution(g: &Gpu) {
    for dist in Dist::ALL {
        let input: Vec<u32> = keys(dist, 300_001, seed(dist.name(), 300_001));
        let vals: Vec<u32> = (0..300_001).collect();
        for limit in LIMITS {
            check_keys(g, &input, &host(Order::Ascending, limit, 0), dist.name());
            let stable = HostOptions {
                sort: SortOptions { stable: true, ..Default::default() },
                memory_limit: limit,
                ..Default::default()
            };
            check_pairs(g, &input, &vals, &stable, dist.name());
        }
    }
}

fn argsort_of_host_keys(g: &Gpu) {
    for n in [0, 1, 33, 8193, 1_000_003] {
        for order in [Order::Ascending, Order::Descending] {
            let input: Vec<f64> = keys(Dist::FewUnique, n, seed("argsort", n));
            let o = SortOptions { order, stable: true, ..Default::default() };
            let p = g.argsort_slice(&input, &o).unwrap();
            let want: Vec<u32> = cpu::argsort(&input, order).into_iter().map(|i| i as u32).collect();
            assert_eq!(p, want, "stable argsort n={n} {order:?}");
            let p = g.argsort_slice(&input, &SortOptions { order, ..Default::default() }).unwrap();
            let p: Vec<usize> = p.into_iter().map(|i| i as usize).collect();
            assert!(cpu::is_argsort_of(&input, &p, order), "argsort n={n} {order:?}");
        }
    }
    // Beyond the GPU (limits below the streamed argsort's needs): a copy of
    // the keys sorted with their positions; u32 and u64 positions, stable
    // and not, keys of one word and stored as fields.
    argsort_beyond::<f64>(g, Dist::FewUnique);
    argsort_beyond::<u32>(g, Dist::Uniform);
    argsort_beyond::<i16>(g, Dist::Zipf);
    argsort_beyond::<i64>(g, Dist::AllEqual);
    // A fault in the host sort comes back as an error (the keys are only read).
    let input: Vec<u32> = keys(Dist::Uniform, 100_003, seed("argsort fault", 0));
    for phase in [Phase::Runs, Phase::Merge] {
        let o =
            HostOptions { memory_limit: Some(512 << 10), fault: Some(Fault { phase, after: 0 }), ..Default::default() };
        assert!(matches!(g.argsort_host::<u32, u32>(&input, &o), Err(Error::Injected(_))), "fault in {phase:?}");
    }
}

fn argsort_beyond<K: SortKey>(g: &Gpu, dist: Dist)
where
    K::Bits: FromPattern,
{
    let progressed = Mutex::new(0u64);
    let note = |p: Progress| *progressed.lock().unwrap() += u64::from(p.out_of_core);
    for n in [0, 1, 33, 4097, 100_003, 1_000_003] {
        let input: Vec<K> = keys(dist, n, seed("argsort beyond", n));
        for limit in [Some(512 << 10), Some(3 << 20)] {
            for order in [Order::Ascending, Order::Descending] {
                let stable = HostOptions {
                    sort: SortOptions { order, stable: true, ..Default::default() },
                    memory_limit: limit,
                    staging_bytes: SMALL_STAGING,
                    progress: Some(&note),
                    ..Default::default()
                };
                let what = format!("{} n={n} {order:?} limit {limit:?}", K::NAME);
                let p: Vec<u64> = g.argsort_host(&input, &stable).unwrap_or_else(|e| panic!("stable {what}: {e}"));
                let want: Vec<u64> = cpu::argsort(&input, order).into_iter().map(|i| i as u64).collect();
                assert_eq!(p, want, "stable argsort beyond the GPU, {what}");
                let plain = HostOptions { sort: SortOptions { order, ..Default::default() }, ..stable };
                let p: Vec<u32> = g.argsort_host(&input, &plain).unwrap_or_else(|e| panic!("{what}: {e}"));
                let p: Vec<usize> = p.into_iter().map(|i| i as usize).collect();
                assert!(cpu::is_argsort_of(&input, &p, order), "argsort beyond the GPU, {what}");
            }
        }
    }
    assert!(*progressed.lock().unwrap() > 0, "{}: no argsort went beyond the GPU", K::NAME);
}

/// Pinned host memory of `n` items holding `data`.
fn pinned<T: warpsort::cudarc::driver::DeviceRepr + warpsort::cudarc::driver::ValidAsZeroBits + Copy>(
    g: &Gpu,
    data: &[T],
) -> PinnedHostSlice<T> {
    // SAFETY: written in full below before anything reads it.
    let mut p = unsafe { g.context().alloc_pinned_with_flags::<T>(data.len(), 0) }.unwrap();
    p.as_mut_slice().unwrap().copy_from_slice(data);
    p
}

fn pinned_slices(g: &Gpu) {
    for n in [1, 4097, 1_000_003, (1 << 23) + 9] {
        let input: Vec<u64> = keys(Dist::Uniform, n, seed("pinned", n));
        let vals: Vec<u32> = (0..n as u32).collect();
        for limit in [None, Some(3 << 20)] {
            let o = host(Order::Ascending, limit, 0);
            let mut pk = pinned(g, &input);
            g.sort_host(pk.as_mut_slice().unwrap(), &o).unwrap();
            let mut want = input.clone();
            cpu::sort(&mut want, Order::Ascending);
            assert_eq!(pk.as_slice().unwrap(), &want[..], "pinned keys n={n} limit {limit:?}");
            let (mut pk, mut pv) = (pinned(g, &input), pinned(g, &vals));
            let stable = HostOptions { sort: SortOptions { stable: true, ..Default::default() }, ..o };
            g.sort_pairs_host(pk.as_mut_slice().unwrap(), pv.as_mut_slice().unwrap(), &stable).unwrap();
            let (mut wk, mut wv) = (input.clone(), vals.clone());
            cpu::sort_pairs(&mut wk, &mut wv, Order::Ascending);
            assert_eq!((pk.as_slice().unwrap(), pv.as_slice().unwrap()), (&wk[..], &wv[..]), "pinned pairs n={n}");
        }
    }
}

fn progress_is_reported(g: &Gpu) {
    let n = 1_000_003;
    let input: Vec<u32> = keys(Dist::Uniform, n, 5);
    for (limit, phases) in [(None, [Phase::Upload, Phase::Download]), (Some(1 << 20), [Phase::Runs, Phase::Merge])] {
        let seen: Mutex<Vec<Progress>> = Mutex::new(Vec::new());
        let record = |p: Progress| seen.lock().unwrap().push(p);
        let o =
            HostOptions { memory_limit: limit, staging_bytes: 1 << 16, progress: Some(&record), ..Default::default() };
        let mut v = input.clone();
        g.sort_host(&mut v, &o).unwrap();
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        let seen = seen.into_inner().unwrap();
        let total = (n * 4) as u64;
        for phase in phases {
            let mine: Vec<&Progress> = seen.iter().filter(|p| p.phase == phase).collect();
            assert!(mine.len() > 1, "{phase:?}: {} reports", mine.len());
            assert!(mine.windows(2).all(|w| w[0].done <= w[1].done), "{phase:?} goes back");
            assert_eq!(mine.last().unwrap().done, total, "{phase:?} ends at the total");
            assert!(mine.iter().all(|p| p.total == total && p.out_of_core == limit.is_some()));
        }
        let first_of = |ph| seen.iter().position(|p| p.phase == ph).unwrap();
        let last_of = |ph| seen.iter().rposition(|p| p.phase == ph).unwrap();
        assert!(last_of(phases[0]) < first_of(phases[1]), "phases in order");
    }
}

fn faults_before_the_last_pass_lose_nothing(g: &Gpu) {
    let n = 500_009;
    let input: Vec<i64> = keys(Dist::Uniform, n, 9);
    let vals: Vec<u32> = (0..n as u32).collect();
    let unchanged = |o: &HostOptions, what: &str, expect: &dyn Fn(&Error) -> bool| {
        let (mut k, mut v) = (input.clone(), vals.clone());
        let e = g.sort_host(&mut k, o).expect_err(what);
        assert!(expect(&e), "{what}: {e:?}");
        assert!(k == input, "{what}: keys changed");
        let e = g.sort_pairs_host(&mut k, &mut v, o).expect_err(what);
        assert!(expect(&e), "{what}: {e:?}");
        assert!(k == input && v == vals, "{what}: pairs changed");
    };
    let injected = |e: &Error| matches!(e, Error::Injected(_));
    for (limit, phase) in [(None, Phase::Upload), (Some(1 << 20), Phase::Runs)] {
        for after in [0, (n * 12 / 2) as u64] {
            let o = HostOptions { memory_limit: limit, fault: Some(Fault { phase, after }), ..Default::default() };
            unchanged(&o, &format!("fault in {phase:?} after {after} bytes"), &injected);
        }
    }
    // A limit below the smallest pieces.
    let o = HostOptions { memory_limit: Some(10_000), ..Default::default() };
    unchanged(&o, "memory limit", &|e| matches!(e, Error::MemoryLimit { limit: 10_000, .. }));
    // Pinned memory that cannot be had.
    let o = HostOptions { staging_bytes: 1 << 42, ..Default::default() };
    unchanged(&o, "pinned memory", &|e| {
        matches!(e, Error::OutOfPinnedMemory { .. }) && e.to_string().contains("page-locked")
    });
    // The handle still sorts.
    check_keys(g, &input, &HostOptions::default(), "after the faults");
    // A failed copy back on the GPU: an error, never a result called sorted.
    let mut k = input.clone();
    let o = HostOptions { fault: Some(Fault { phase: Phase::Download, after: 1 }), ..Default::default() };
    assert!(matches!(g.sort_host(&mut k, &o), Err(Error::Injected("download"))));
}

/// Multisets equal: every item once.
fn same_items<K: SortKey, V: Copy + Ord>(a: &[K], av: &[V], b: &[K], bv: &[V]) -> bool {
    let bag = |k: &[K], v: &[V]| {
        let mut p: Vec<_> = k.iter().map(|k| format!("{:?}", k.to_bits())).zip(v.iter().copied()).collect();
        p.sort_unstable();
        p
    };
    bag(a, av) == bag(b, bv)
}

fn a_failed_merge_pass_keeps_every_item(g: &Gpu) {
    let n = 300_007;
    for order in [Order::Ascending, Order::Descending] {
        let input: Vec<f32> = keys(Dist::Gaussian, n, 11);
        let vals: Vec<u64> = (0..n as u64).collect();
        for share in [0.0, 0.33, 0.999] {
            let fault =
                |item_bytes: usize| Fault { phase: Phase::Merge, after: ((n * item_bytes) as f64 * share) as u64 };
            let o = HostOptions {
                sort: SortOptions { order, ..Default::default() },
                memory_limit: Some(1 << 20),
                fault: Some(fault(12)),
                ..Default::default()
            };
            let (mut k, mut v) = (input.clone(), vals.clone());
            assert!(matches!(g.sort_pairs_host(&mut k, &mut v, &o), Err(Error::Injected("merge"))));
            assert!(same_items(&input, &vals, &k, &v), "merge fault at {share}: items lost or duplicated");
            let mut k = input.clone();
            let o = HostOptions { fault: Some(fault(4)), ..o };
            assert!(matches!(g.sort_host(&mut k, &o), Err(Error::Injected("merge"))));
            assert!(same_items(&input, &vec![0u8; n], &k, &vec![0u8; n]), "keys lost");
        }
    }
}

fn beyond_the_gpu_at_scale(g: &Gpu) {
    // Many runs of millions, buckets of millions: 2^27 + 7 keys in 256 MiB.
    let n = (1 << 27) + 7;
    let input: Vec<u32> = keys(Dist::Uniform, n, 13);
    let o = host(Order::Ascending, Some(256 << 20), 0);
    let mut v = input.clone();
    g.sort_host(&mut v, &o).unwrap();
    let mut want = input;
    want.sort_unstable();
    assert!(v == want, "2^27 + 7 keys beyond a 256 MiB limit");
    let n = (1 << 24) + 1;
    let k: Vec<u64> = keys(Dist::Zipf, n, 17);
    let vals: Vec<u32> = (0..n as u32).collect();
    let stable = HostOptions {
        sort: SortOptions { stable: true, ..Default::default() },
        memory_limit: Some(128 << 20),
        ..Default::default()
    };
    check_pairs(g, &k, &vals, &stable, "zipf u64 stable pairs beyond 128 MiB");
}

/// A limit `n` items of `key_bytes` and `val_bytes` fit once on the GPU,
/// not twice (the plan's item bytes: 16-bit keys widened beside their
/// narrow copy, pairs padded to the wider word).
fn once(n: usize, key_bytes: usize, val_bytes: usize) -> Option<usize> {
    let kb = key_bytes.max(4);
    let ib = (kb + val_bytes).next_multiple_of(kb.max(val_bytes)) + if key_bytes == 2 { 2 } else { 0 };
    Some(n * ib * 3 / 2 + (64 << 10))
}

fn once_type<K: SortKey>(g: &Gpu, n: usize)
where
    K::Bits: FromPattern,
{
    let kb = std::mem::size_of::<K>();
    for (order, dist) in [(Order::Ascending, Dist::Uniform), (Order::Descending, Dist::FewUnique)] {
        let input: Vec<K> = keys(dist, n, seed(dist.name(), n) ^ 5);
        check_keys(g, &input, &host(order, once(n, kb, 0), SMALL_STAGING * 4), "fitting once");
        let v64: Vec<u64> = (0..n as u64).map(|i| i << 20).collect();
        for stable in [false, true] {
            let o = HostOptions {
                sort: SortOptions { order, stable, ..Default::default() },
                memory_limit: once(n, kb, 8),
                ..Default::default()
            };
            check_pairs(g, &input, &v64, &o, "pairs fitting once");
        }
    }
}

fn fitting_the_gpu_once(g: &Gpu) {
    // Sizes around the runs' and buckets' edges; every distribution.
    for n in [65_537, 100_003, 131_072 * 8 + 1, 1_000_003] {
        for dist in Dist::ALL {
            let input: Vec<u32> = keys(dist, n, seed(dist.name(), n) ^ 7);
            check_keys(g, &input, &host(Order::Ascending, once(n, 4, 0), SMALL_STAGING), dist.name());
            let vals: Vec<u32> = (0..n as u32).collect();
            let stable = HostOptions {
                sort: SortOptions { stable: true, ..Default::default() },
                memory_limit: once(n, 4, 4),
                ..Default::default()
            };
            check_pairs(g, &input, &vals, &stable, dist.name());
        }
    }
    once_type::<i32>(g, 200_003);
    once_type::<f32>(g, 200_003);
    once_type::<u64>(g, 200_003);
    once_type::<f64>(g, 200_003);
    once_type::<i16>(g, 200_003);
    once_type::<u16>(g, 200_003);
    once_type::<i64>(g, 200_003);

    // The runs stay on the GPU: an upload, then buckets merged into place.
    let n = 1_000_003;
    let input: Vec<u32> = keys(Dist::Uniform, n, 19);
    let seen: Mutex<Vec<Progress>> = Mutex::new(Vec::new());
    let record = |p: Progress| seen.lock().unwrap().push(p);
    let o = HostOptions { memory_limit: once(n, 4, 0), progress: Some(&record), ..Default::default() };
    let mut v = input.clone();
    g.sort_host(&mut v, &o).unwrap();
    assert!(v.windows(2).all(|w| w[0] <= w[1]));
    let seen = seen.into_inner().unwrap();
    let phases: Vec<Phase> = seen.iter().map(|p| p.phase).fold(Vec::new(), |mut a, p| {
        if a.last() != Some(&p) {
            a.push(p);
        }
        a
    });
    assert_eq!(phases, [Phase::Upload, Phase::Merge], "{phases:?}");
    assert!(seen.iter().all(|p| !p.out_of_core));
    assert_eq!(seen.last().unwrap().done, (n * 4) as u64);

    // A failed bucket pass: every item once, mended from the runs on the GPU.
    let vals: Vec<u64> = (0..n as u64).collect();
    for share in [0.0, 0.4, 0.999] {
        let fault = |ib: usize| Some(Fault { phase: Phase::Merge, after: ((n * ib) as f64 * share) as u64 });
        let o = HostOptions { memory_limit: once(n, 4, 8), fault: fault(12), ..Default::default() };
        let (mut k, mut v) = (input.clone(), vals.clone());
        assert!(matches!(g.sort_pairs_host(&mut k, &mut v, &o), Err(Error::Injected("merge"))));
        assert!(same_items(&input, &vals, &k, &v), "fault at {share}: items lost or duplicated");
        let o = HostOptions { memory_limit: once(n, 4, 0), fault: fault(4), ..Default::default() };
        let mut k = input.clone();
        assert!(matches!(g.sort_host(&mut k, &o), Err(Error::Injected("merge"))));
        assert!(same_items(&input, &vec![0u8; n], &k, &vec![0u8; n]), "keys lost at {share}");
    }
    // Faults before the last pass: unchanged.
    for after in [0, (n * 2) as u64] {
        let o = HostOptions {
            memory_limit: once(n, 4, 0),
            fault: Some(Fault { phase: Phase::Upload, after }),
            ..Default::default()
        };
        let mut k = input.clone();
        assert!(matches!(g.sort_host(&mut k, &o), Err(Error::Injected("upload"))));
        assert!(k == input, "a fault in the upload changed the keys");
    }
}

/// `Gpu::copy_to_device` and `Gpu::copy_to_host`: bytes and words to the GPU
/// and back through the staging (sizes around a 4 MiB slot and past the ring
/// of sixteen), and straight from and to pinned memory; each copy follows
/// the work queued on the handle's stream; a host slice of another length
/// is refused before anything moves.
fn staged_copies_both_ways(g: &Gpu) {
    let slot = 4 << 20;
    let byte = |i: usize| (i.wrapping_mul(2_654_435_761) >> 13) as u8;
    for n in [0, 1, 33, slot - 1, slot, slot + 1, 16 * slot + 4099] {
        let data: Vec<u8> = (0..n).map(byte).collect();
        let d = g.copy_to_device(&data).unwrap();
        assert_eq!(g.stream().clone_dtoh(&d).unwrap(), data, "bytes up, n={n}");
        let mut back = vec![0u8; n];
        g.copy_to_host(&d, &mut back).unwrap();
        assert!(back == data, "bytes down, n={n}");
    }
    for n in [1, slot / 8 - 1, slot / 8 + 1, 17 * slot / 8 + 3] {
        let input: Vec<u64> = keys(Dist::Uniform, n, seed("staged copies", n));
        let mut want = input.clone();
        cpu::sort(&mut want, Order::Ascending);
        // Pageable both ways, the sort between them on the handle's stream.
        let mut d = g.copy_to_device(&input).unwrap();
        g.sort(&mut d).unwrap();
        let mut back = vec![0u64; n];
        g.copy_to_host(&d, &mut back).unwrap();
        assert!(back == want, "u64 sorted between the copies, n={n}");
        // Pinned both ways: copied directly.
        let from = pinned(g, &input);
        let d = g.copy_to_device(from.as_slice().unwrap()).unwrap();
        let mut to = pinned(g, &vec![0u64; n]);
        g.copy_to_host(&d, to.as_mut_slice().unwrap()).unwrap();
        assert!(to.as_slice().unwrap() == &input[..], "u64 pinned both ways, n={n}");
        // A host slice one longer: refused, left as it was.
        let mut longer = vec![7u64; n + 1];
        let e = g.copy_to_host(&d, &mut longer).unwrap_err();
        assert!(matches!(e, Error::CopyLength { device, host } if device == n && host == n + 1), "{e}");
        assert!(longer.iter().all(|&x| x == 7), "a refused copy wrote into the slice");
    }
}
