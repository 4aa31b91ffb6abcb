//! The sample sort (`Algorithm::SampleSort`, issue 15) against the CPU
//! reference: sizes around its chunks, every distribution at sizes where
//! both distribution passes are full (and one value making 90% of the
//! input), key types and orders, composite keys (one word, and wider ones
//! sorted a word a pass), pairs and stable pairs (the exact stable order),
//! argsort (the default's reading the caller's keys in place), parameters asked for (`SampleSortConfig`), `small`: one sort of each kind (keys read through their view
//! among them), short enough for compute-sanitizer, and `large`: sizes where each segment's splitters come
//! from more samples; and the default (`Algorithm::Auto`), which runs it where
//! the GPU's table says. (The tests that run `Algorithm::ALL` cover it too.)

use std::cmp::Reverse;

use warpsort::kernels::config::distribute::{MAX_OVERSAMPLE, MIN_OVERSAMPLE};
use warpsort::{Algorithm, Gpu, Order, Presorted, SampleSortConfig, SortKey, SortOptions, Tuple};
use warpsort_testkit::data::FromPattern;
use warpsort_testkit::{Dist, check_sort, check_sort_pairs, cpu, keys, seed};

warpsort_testkit::tests_main! {
    gpu: [
        sizes_around_the_chunks,
        every_distribution,
        key_types_and_orders,
        composite_keys,
        stable_pairs_keep_input_order,
        asked_parameters,
        argsort,
        small,
        large,
        the_default_chooses,
    ],
}

fn opts(order: Order, stable: bool) -> SortOptions {
    SortOptions { algorithm: Algorithm::SampleSort, order, stable, ..Default::default() }
}

/// The sample sort with parameters asked for.
fn asked(cfg: SampleSortConfig, order: Order, stable: bool) -> SortOptions {
    SortOptions { sample_sort: cfg, ..opts(order, stable) }
}

/// Every samples a way (the sampling in one round and in two), the
/// shortest and longest chunks of either pass; a parameter out of range is
/// a `BadConfig` that leaves the keys as they were.
fn asked_parameters(g: &Gpu) {
    let (min, max) = (SampleSortConfig::MIN_CHUNK, SampleSortConfig::MAX_CHUNK);
    let mut o = MIN_OVERSAMPLE;
    while o <= MAX_OVERSAMPLE {
        let cfg = SampleSortConfig { oversample: o, ..Default::default() };
        for dist in [Dist::Uniform, Dist::Zipf] {
            check_sort::<u32>(g, dist, 3_000_017, &asked(cfg, Order::Ascending, false));
        }
        check_sort::<u64>(g, Dist::Gaussian, 1_000_003, &asked(cfg, Order::Descending, false));
        o *= 2;
    }
    for (chunk, second_chunk) in [(min, min), (max, max), (min, max), (max, min)] {
        let cfg = SampleSortConfig { chunk, second_chunk, oversample: 0 };
        check_sort::<u32>(g, Dist::Uniform, 5_000_011, &asked(cfg, Order::Ascending, false));
        check_sort_pairs::<u64>(g, Dist::FewUnique, 1_000_003, &asked(cfg, Order::Ascending, false));
        stable::<u32>(g, Dist::FewUnique, 1_000_003, &asked(cfg, Order::Descending, true));
    }
    for bad in [
        SampleSortConfig { chunk: min - 1, ..Default::default() },
        SampleSortConfig { second_chunk: max + 1, ..Default::default() },
        SampleSortConfig { oversample: 2 * MAX_OVERSAMPLE, ..Default::default() },
        SampleSortConfig { oversample: 3, ..Default::default() },
    ] {
        let mut d = g.stream().clone_htod(&[2u32, 1, 3]).unwrap();
        let got = g.sort_with(&mut d, &asked(bad, Order::Ascending, false));
        assert!(matches!(got, Err(warpsort::Error::BadConfig(_))), "{bad:?}: {got:?}");
        assert_eq!(g.stream().clone_dtoh(&d).unwrap(), [2, 1, 3]);
    }
}

fn sizes_around_the_chunks(g: &Gpu) {
    for n in [2, 3, 64, 127, 128, 129, 4095, 4096, 4097, 8191, 8193, 16_385, 65_537, 262_143, 1 << 20, (1 << 22) + 7] {
        check_sort::<u32>(g, Dist::Uniform, n, &opts(Order::Ascending, false));
        check_sort_pairs::<u32>(g, Dist::Uniform, n, &opts(Order::Ascending, false));
    }
}

fn every_distribution(g: &Gpu) {
    for dist in Dist::ALL {
        for n in [1_000_003, 1 << 24] {
            check_sort::<u32>(g, dist, n, &opts(Order::Ascending, false));
        }
        check_sort_pairs::<u64>(g, dist, 2_000_003, &opts(Order::Descending, false));
    }
}

fn key_types_and_orders(g: &Gpu) {
    for order in [Order::Ascending, Order::Descending] {
        for dist in [Dist::Uniform, Dist::FewUnique, Dist::Sorted] {
            let o = opts(order, false);
            check_sort::<i32>(g, dist, 500_001, &o);
            check_sort::<f32>(g, dist, 500_001, &o);
            check_sort::<u64>(g, dist, 500_001, &o);
            check_sort::<f64>(g, dist, 500_001, &o);
            check_sort::<u16>(g, dist, 500_001, &o);
            check_sort_pairs::<i64>(g, dist, 500_001, &o);
        }
    }
}

fn composite_keys(g: &Gpu) {
    for order in [Order::Ascending, Order::Descending] {
        let o = opts(order, false);
        for n in [33, 8193, 300_007] {
            check_sort::<Tuple<(u32, u32)>>(g, Dist::FewUnique, n, &o);
            check_sort_pairs::<Tuple<(u32, u32)>>(g, Dist::Uniform, n, &o);
            check_sort::<[u8; 8]>(g, Dist::Uniform, n, &o);
            check_sort::<Tuple<(i16, Reverse<f64>, u64)>>(g, Dist::FewUnique, n, &o);
            check_sort_pairs::<[u8; 16]>(g, Dist::Uniform, n, &o);
        }
    }
}

fn argsort(g: &Gpu) {
    for n in [1, 4097, 1_000_003] {
        let input: Vec<f32> = keys(Dist::FewUnique, n, seed("sample argsort", n));
        let d = g.stream().clone_htod(&input).unwrap();
        let p = g.argsort(&d, &opts(Order::Ascending, true)).unwrap();
        let want: Vec<u32> = cpu::argsort(&input, Order::Ascending).into_iter().map(|i| i as u32).collect();
        assert_eq!(g.stream().clone_dtoh(&p).unwrap(), want, "stable argsort n={n}");
    }
    // The default's argsort where it takes the sample sort, whose scan,
    // sampling and first pass read the caller's keys in place (ordered
    // input copies them first): every distribution, keys read through a
    // view (f32, descending) and as they are (u32), stable and not.
    let n = 3 << 20;
    for dist in Dist::ALL {
        for stable in [false, true] {
            argsort_in_place::<u32>(g, dist, n, Order::Ascending, stable);
        }
    }
    for dist in [Dist::Uniform, Dist::Sorted, Dist::Reverse, Dist::Dominant] {
        argsort_in_place::<f32>(g, dist, n + 5, Order::Descending, false);
        argsort_in_place::<i64>(g, dist, n + 7, Order::Ascending, true);
    }
}

/// The default argsort of `n` keys of `dist`: a sorting permutation (the
/// stable one with `stable`), the keys as they were.
fn argsort_in_place<K: SortKey>(g: &Gpu, dist: Dist, n: usize, order: Order, stable: bool)
where
    K::Bits: FromPattern,
{
    let what = format!("default argsort {} n={n} {order:?} stable={stable}", dist.name());
    let input: Vec<K> = keys(dist, n, seed("sample argsort in place", n));
    let d = g.stream().clone_htod(&input).unwrap();
    let o = SortOptions { order, stable, ..Default::default() };
    let p: Vec<usize> =
        g.stream().clone_dtoh(&g.argsort(&d, &o).unwrap()).unwrap().into_iter().map(|p| p as usize).collect();
    let after = g.stream().clone_dtoh(&d).unwrap();
    assert!(after.iter().zip(&input).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: the keys changed");
    match stable {
        true => assert!(p == cpu::argsort(&input, order), "{what}: not the stable permutation"),
        false => assert!(cpu::is_argsort_of(&input, &p, order), "{what}: not a sorting permutation"),
    }
}

/// A stable key-value sort with `o` (stable) against the CPU's stable
/// order, exactly.
fn stable<K: SortKey>(g: &Gpu, dist: Dist, n: usize, o: &SortOptions)
where
    K::Bits: FromPattern,
{
    let input: Vec<K> = keys(dist, n, seed("sample stable", n));
    let vals: Vec<u32> = (0..n as u32).collect();
    let (mut dk, mut dv) = (g.stream().clone_htod(&input).unwrap(), g.stream().clone_htod(&vals).unwrap());
    g.sort_pairs(&mut dk, &mut dv, o).unwrap();
    let (mut wk, mut wv) = (input, vals);
    cpu::sort_pairs(&mut wk, &mut wv, o.order);
    let (gk, gv) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
    assert!(gk.iter().zip(&wk).all(|(a, b)| a.to_bits() == b.to_bits()), "{} {} n={n}: keys", K::NAME, dist.name());
    assert!(gv == wv, "{} {} n={n} {o:?}: not the stable order", K::NAME, dist.name());
}

fn stable_pairs_keep_input_order(g: &Gpu) {
    for order in [Order::Ascending, Order::Descending] {
        for dist in [Dist::FewUnique, Dist::AllEqual, Dist::Zipf, Dist::Uniform] {
            stable::<u32>(g, dist, 1_000_003, &opts(order, true));
            stable::<f64>(g, dist, 300_007, &opts(order, true));
        }
    }
    // Buckets of about 64 and 1024 keys (the stable warp and block
    // kernels), ties among them (Zipf's tail; a uniform 2^25 draws ties too).
    for n in [(1 << 22) + 3, 1 << 25] {
        for dist in [Dist::Zipf, Dist::Uniform, Dist::Gaussian] {
            stable::<u32>(g, dist, n, &opts(Order::Ascending, true));
        }
    }
    stable::<f64>(g, Dist::Zipf, (1 << 23) + 1, &opts(Order::Descending, true));
    stable::<i64>(g, Dist::Uniform, (1 << 22) + 1, &opts(Order::Ascending, true));
}

/// One of each, small (for compute-sanitizer): keys, pairs, stable pairs,
/// 64-bit keys.
fn small(g: &Gpu) {
    check_sort::<u32>(g, Dist::Uniform, 70_001, &opts(Order::Ascending, false));
    check_sort_pairs::<u32>(g, Dist::FewUnique, 70_001, &opts(Order::Descending, false));
    stable::<u32>(g, Dist::FewUnique, 70_001, &opts(Order::Ascending, true));
    check_sort::<u64>(g, Dist::Zipf, 70_001, &opts(Order::Ascending, false));
    // Keys read through their view: the first pass's `_viewed` kernels, the
    // order scan through it, the mapping back in place.
    check_sort::<f32>(g, Dist::Uniform, 70_001, &opts(Order::Descending, false));
    check_sort_pairs::<Tuple<(u32, u32)>>(g, Dist::FewUnique, 70_001, &opts(Order::Ascending, false));
    let scanned = SortOptions { presorted: Presorted::Always, ..opts(Order::Ascending, false) };
    check_sort::<i64>(g, Dist::Reverse, 70_001, &scanned);
    check_sort::<f32>(g, Dist::Gaussian, 70_001, &scanned);
    // The sampling in two rounds (the most samples a way).
    let wide = SampleSortConfig { oversample: MAX_OVERSAMPLE, ..Default::default() };
    check_sort::<u32>(g, Dist::Uniform, 70_001, &asked(wide, Order::Ascending, false));
}

/// Sizes past 2^27, where each segment's splitters come from 32 or 64
/// samples a way (`SamplePlan::oversample`): keys, pairs of 64-bit keys,
/// stable pairs.
fn large(g: &Gpu) {
    for (dist, n) in [(Dist::Uniform, (1 << 27) + 5), (Dist::Uniform, (1 << 28) + 3), (Dist::Zipf, 1 << 28)] {
        check_sort::<u32>(g, dist, n, &opts(Order::Ascending, false));
    }
    check_sort_pairs::<u64>(g, Dist::Gaussian, (1 << 27) + 1, &opts(Order::Descending, false));
    // Buckets of about 8192 keys: many long ones, by the stable merge sort.
    stable::<u32>(g, Dist::Uniform, (1 << 28) + 3, &opts(Order::Ascending, true));
}

/// The default (`Algorithm::Auto`) runs the sample sort where the GPU's
/// table lists the items and `n` (the kernels it launches tell), the merge
/// sort elsewhere, and sorts right either way; input already in order is
/// found by the scan first, with no distribution pass.
///
/// On a handle of its own: a handle's profiler records every launch through
/// it, and the binary's other tests sort on the shared one from their own
/// threads at the same time (their scatters made this test fail at random).
fn the_default_chooses(_shared: &Gpu) {
    let own = Gpu::new().expect("a second handle on the GPU the binary opened");
    let g = &own;
    let ran_sample = |run: &dyn Fn()| {
        g.profile_begin();
        run();
        let times = g.profile_end().unwrap();
        times.iter().any(|t| t.kernel.starts_with("distribute_scatter"))
    };
    let d = SortOptions::default();
    let desc = SortOptions::descending();
    let stably = SortOptions { stable: true, ..d };
    // (what, whether the table (every GPU's today) says the sample sort, the sort)
    let cases: [(&str, bool, &dyn Fn()); 15] = [
        ("u32 keys 2^25 + 3", true, &|| check_sort::<u32>(g, Dist::Uniform, (1 << 25) + 3, &d)),
        ("f32 keys 2^25, descending", true, &|| check_sort::<f32>(g, Dist::Gaussian, 1 << 25, &desc)),
        ("u32 keys 2^20", false, &|| check_sort::<u32>(g, Dist::Uniform, 1 << 20, &d)),
        ("u32 keys 2^25, sorted", false, &|| check_sort::<u32>(g, Dist::Sorted, 1 << 25, &d)),
        // Found in order through the keys' view: no distribution pass.
        ("f32 keys 2^25, sorted", false, &|| check_sort::<f32>(g, Dist::Sorted, 1 << 25, &d)),
        ("i64 keys 2^24, reversed", false, &|| check_sort::<i64>(g, Dist::Reverse, 1 << 24, &d)),
        ("(u32, u32) keys 2^23, descending", true, &|| {
            check_sort::<Tuple<(u32, u32)>>(g, Dist::Uniform, 1 << 23, &desc)
        }),
        ("u64 keys 2^23 + 1", true, &|| check_sort::<u64>(g, Dist::Zipf, (1 << 23) + 1, &d)),
        ("i64 keys with u32 values 2^22", true, &|| check_sort_pairs::<i64>(g, Dist::FewUnique, 1 << 22, &desc)),
        ("u32 keys 2^20 + 1 with stable values", false, &|| stable::<u32>(g, Dist::FewUnique, (1 << 20) + 1, &stably)),
        ("u32 keys 2^25 with stable values", true, &|| stable::<u32>(g, Dist::Zipf, 1 << 25, &stably)),
        ("f64 keys 2^22 + 7 with stable values", true, &|| stable::<f64>(g, Dist::FewUnique, (1 << 22) + 7, &stably)),
        ("f64 keys 2^20 + 7 with stable values", false, &|| stable::<f64>(g, Dist::FewUnique, (1 << 20) + 7, &stably)),
        ("u32 keys 2^24 - 5 with u32 values", true, &|| check_sort_pairs::<u32>(g, Dist::Uniform, (1 << 24) - 5, &d)),
        ("u32 keys 2^22 + 5 with u32 values", true, &|| check_sort_pairs::<u32>(g, Dist::Uniform, (1 << 22) + 5, &d)),
    ];
    for (what, sample, run) in cases {
        assert_eq!(ran_sample(run), sample, "{what}: whether the sample sort ran");
    }
}
