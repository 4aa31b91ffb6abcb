//! The sample sort (`Algorithm::SampleSort`, issue 15) against the CPU
//! reference: sizes around its chunks, every distribution at sizes where
//! both distribution passes are full (and one value making 90% of the
//! input), key types and orders, pairs and stable pairs (the exact stable
//! order), and `small`: one sort of each kind, short enough for
//! compute-sanitizer.

use warpsort::{Algorithm, Gpu, Order, SortKey, SortOptions};
use warpsort_testkit::data::FromPattern;
use warpsort_testkit::{Dist, check_sort, check_sort_pairs, cpu, keys, seed};

warpsort_testkit::tests_main! {
    gpu: [
        sizes_around_the_chunks,
        every_distribution,
        key_types_and_orders,
        stable_pairs_keep_input_order,
        small,
    ],
}

fn opts(order: Order, stable: bool) -> SortOptions {
    SortOptions { algorithm: Algorithm::SampleSort, order, stable, ..Default::default() }
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

/// A stable key-value sort against the CPU's stable order, exactly.
fn stable<K: SortKey>(g: &Gpu, dist: Dist, n: usize, order: Order)
where
    K::Bits: FromPattern,
{
    let input: Vec<K> = keys(dist, n, seed("sample stable", n));
    let vals: Vec<u32> = (0..n as u32).collect();
    let (mut dk, mut dv) = (g.stream().clone_htod(&input).unwrap(), g.stream().clone_htod(&vals).unwrap());
    g.sort_pairs(&mut dk, &mut dv, &opts(order, true)).unwrap();
    let (mut wk, mut wv) = (input, vals);
    cpu::sort_pairs(&mut wk, &mut wv, order);
    let (gk, gv) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
    assert!(gk.iter().zip(&wk).all(|(a, b)| a.to_bits() == b.to_bits()), "{} {} n={n}: keys", K::NAME, dist.name());
    assert!(gv == wv, "{} {} n={n} {order:?}: not the stable order", K::NAME, dist.name());
}

fn stable_pairs_keep_input_order(g: &Gpu) {
    for order in [Order::Ascending, Order::Descending] {
        for dist in [Dist::FewUnique, Dist::AllEqual, Dist::Zipf, Dist::Uniform] {
            stable::<u32>(g, dist, 1_000_003, order);
            stable::<f64>(g, dist, 300_007, order);
        }
    }
}

/// One of each, small (for compute-sanitizer): keys, pairs, stable pairs,
/// 64-bit keys.
fn small(g: &Gpu) {
    check_sort::<u32>(g, Dist::Uniform, 70_001, &opts(Order::Ascending, false));
    check_sort_pairs::<u32>(g, Dist::FewUnique, 70_001, &opts(Order::Descending, false));
    stable::<u32>(g, Dist::FewUnique, 70_001, Order::Ascending);
    check_sort::<u64>(g, Dist::Zipf, 70_001, &opts(Order::Ascending, false));
}
