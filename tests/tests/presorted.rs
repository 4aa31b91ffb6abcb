//! Input already in order: the order scan alone against its CPU reference
//! (flags, descents, run starts; early stops only where the input needs a
//! full sort anyway), and sorts of sorted, reversed and run-made input
//! (with and without the scan) against the CPU reference: every key type,
//! both orders, pairs, stable pairs (a reversal must not reorder equal
//! keys), argsort, sizes around the tiles and the runs' limit; the sample
//! sort's scan of keys read through their view, and its first sampling
//! queued behind the scan.

use warpsort::kernels::config::{ORDER_SCAN_DESCENTS, order_scan};
use warpsort::{Algorithm, Bits, Gpu, Order, Presorted, SortKey, SortOptions, Tuple};
use warpsort_testkit::data::{FromPattern, sorted_runs};
use warpsort_testkit::{Dist, assert_pairs, cpu, keys, seed};

warpsort_testkit::tests_main! {
    gpu: [
        scan_matches_the_cpu_reference,
        presorted_keys_every_type_and_order,
        presorted_pairs_stable_and_argsort,
        scan_or_not_same_result_every_distribution,
        the_sample_sort_scans_keys_through_their_view,
        runs_merge_a_round_at_a_time,
        the_sample_sort_samples_behind_the_scan,
        the_sample_sort_samples_behind_the_scan_briefly,
    ],
}

/// Sizes: one tile and less (no scan: one tile sorts at once), around the
/// scan's warp step and the tiles, and millions.
const SIZES: &[usize] = &[0, 1, 2, 33, 8192, 8193, 16_385, 100_003, (1 << 20) + 5, 3_000_017];

/// How the input is laid out.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Sorted,
    /// Descending, every key distinct where the type allows.
    Reversed,
    /// Descending with runs of equal keys.
    ReversedTies,
    AllEqual,
    /// `r` ascending runs of uneven lengths.
    Runs(usize),
    /// Sorted but for one pair swapped.
    OneSwap,
}

const SHAPES: [Shape; 10] = [
    Shape::Sorted,
    Shape::Reversed,
    Shape::ReversedTies,
    Shape::AllEqual,
    Shape::Runs(2),
    Shape::Runs(3),
    Shape::Runs(17),
    Shape::Runs(ORDER_SCAN_DESCENTS + 1),
    Shape::Runs(ORDER_SCAN_DESCENTS + 2),
    Shape::OneSwap,
];

/// `n` keys of `K` shaped as `shape` in the order `order` sorts by.
fn shaped<K: SortKey>(shape: Shape, n: usize, order: Order, tag: u64) -> Vec<K>
where
    K::Bits: FromPattern,
{
    let s = seed(&format!("{shape:?}"), n) ^ tag;
    let mut v: Vec<K> = match shape {
        Shape::AllEqual => keys(Dist::AllEqual, n, s),
        Shape::ReversedTies => keys(Dist::FewUnique, n, s),
        _ => keys(Dist::Uniform, n, s),
    };
    let asc = |a: &K, b: &K| match order {
        Order::Ascending => a.key_cmp(b),
        Order::Descending => b.key_cmp(a),
    };
    match shape {
        Shape::Sorted | Shape::AllEqual => v.sort_by(asc),
        Shape::Reversed | Shape::ReversedTies => v.sort_by(|a, b| asc(b, a)),
        Shape::Runs(r) => sorted_runs(&mut v, r, order, s),
        Shape::OneSwap => {
            v.sort_by(asc);
            if n > 2 {
                v.swap(n / 3, 2 * n / 3);
            }
        }
    }
    v
}

fn opts(presorted: Presorted, order: Order, stable: bool) -> SortOptions {
    SortOptions { presorted, order, stable, ..Default::default() }
}

/// The scan's words from the GPU against the reference: exact where the
/// scan must list every descent; with no ascent, every flag and more
/// descents than listed; past that, only "more descents than listed, and an
/// ascent" (warps stop once they know).
fn check_scan<B: Bits>(g: &Gpu, input: &[B], what: &str) {
    let d = g.stream().clone_htod(input).unwrap();
    let got = g.scan_order(&d).unwrap();
    let want = order_scan::reference(input);
    let (c, f) = (order_scan::COUNT, order_scan::FLAGS);
    if want[c] as usize <= ORDER_SCAN_DESCENTS {
        assert_eq!(got[..order_scan::STARTS], want[..order_scan::STARTS], "{what}: flags and count");
        let mut starts = got[order_scan::STARTS..order_scan::STARTS + got[c] as usize].to_vec();
        starts.sort_unstable();
        assert_eq!(starts, want[order_scan::STARTS..order_scan::STARTS + want[c] as usize], "{what}: run starts");
    } else if want[f] & order_scan::ASCENT as u64 == 0 {
        // No ascent: every warp reads its keys (the count stops growing once
        // past the list).
        assert_eq!(got[f], want[f], "{what}: no ascent: every flag seen");
        assert!(got[c] as usize > ORDER_SCAN_DESCENTS && got[c] <= want[c], "{what}: descents {}", got[c]);
    } else {
        assert!(got[c] as usize > ORDER_SCAN_DESCENTS, "{what}: descents {} <= the list", got[c]);
        assert!(got[f] & order_scan::ASCENT as u64 != 0 && got[f] & !want[f] == 0, "{what}: flags {}", got[f]);
        assert!(got[c] <= want[c], "{what}: more descents than there are");
    }
}

fn scan_matches_the_cpu_reference(g: &Gpu) {
    for &n in SIZES.iter().chain(&[31, 32, 511, 512, 513, 4095, 4097]) {
        for shape in SHAPES {
            check_scan::<u32>(g, &shaped::<u32>(shape, n, Order::Ascending, 1), &format!("u32 {shape:?} n={n}"));
            check_scan::<u64>(g, &shaped::<u64>(shape, n, Order::Ascending, 2), &format!("u64 {shape:?} n={n}"));
        }
        for dist in Dist::ALL {
            check_scan::<u32>(g, &keys::<u32>(dist, n, seed(dist.name(), n)), &format!("u32 {} n={n}", dist.name()));
        }
    }
}

/// Sorts `input` with `o` and compares with the CPU reference bit for bit.
fn check_keys<K: SortKey>(g: &Gpu, input: &[K], o: &SortOptions, what: &str) {
    let mut d = g.stream().clone_htod(input).unwrap();
    g.sort_with(&mut d, o).unwrap_or_else(|e| panic!("{what}: {e}"));
    let got = g.stream().clone_dtoh(&d).unwrap();
    let mut want = input.to_vec();
    cpu::sort(&mut want, o.order);
    if let Some(i) = got.iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits()) {
        panic!("{what}: differs from the CPU reference first at {i}: got {:?}, want {:?}", got[i], want[i]);
    }
}

fn keys_of<K: SortKey>(g: &Gpu, n: usize)
where
    K::Bits: FromPattern,
{
    keys_with::<K>(g, n, 3, &[(Algorithm::Auto, Presorted::Always), (Algorithm::Auto, Presorted::Never)]);
}

/// Sorts every shape of `n` keys (inputs drawn with `tag`), both orders,
/// by each algorithm and scan of `runs`.
fn keys_with<K: SortKey>(g: &Gpu, n: usize, tag: u64, runs: &[(Algorithm, Presorted)])
where
    K::Bits: FromPattern,
{
    for order in [Order::Ascending, Order::Descending] {
        for shape in SHAPES {
            let input = shaped::<K>(shape, n, order, tag);
            for &(algorithm, p) in runs {
                let o = SortOptions { algorithm, ..opts(p, order, false) };
                check_keys(g, &input, &o, &format!("{} {order:?} {shape:?} {algorithm:?} {p:?} n={n}", K::NAME));
            }
        }
    }
}

fn presorted_keys_every_type_and_order(g: &Gpu) {
    for &n in SIZES {
        keys_of::<u32>(g, n);
        keys_of::<u64>(g, n);
        if n <= 100_003 {
            keys_of::<i32>(g, n);
            keys_of::<f32>(g, n);
            keys_of::<i64>(g, n);
            keys_of::<f64>(g, n);
            keys_of::<u16>(g, n);
            keys_of::<i16>(g, n);
        }
    }
}

/// Sorts `input` with its `u32` `vals` (input positions) by `o` and checks
/// the pairs (the exact stable order when `o.stable`).
fn check_pairs<K: SortKey + PartialOrd>(g: &Gpu, input: &[K], vals: &[u32], o: &SortOptions, what: &str) {
    let s = g.stream();
    let (mut dk, mut dv) = (s.clone_htod(input).unwrap(), s.clone_htod(vals).unwrap());
    g.sort_pairs(&mut dk, &mut dv, o).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (ok, ov) = (s.clone_dtoh(&dk).unwrap(), s.clone_dtoh(&dv).unwrap());
    assert_pairs(input, &ok, &ov, o.order, what);
    if o.stable {
        let (mut wk, mut wv) = (input.to_vec(), vals.to_vec());
        cpu::sort_pairs(&mut wk, &mut wv, o.order);
        assert_eq!(ov, wv, "{what}: not the stable order");
    }
}

/// Key-value sorts (values: input positions; stable: the exact stable order),
/// 64-bit values, and argsort, of shaped input.
fn pairs_of<K: SortKey + PartialOrd>(g: &Gpu, n: usize)
where
    K::Bits: FromPattern,
{
    let s = g.stream();
    for order in [Order::Ascending, Order::Descending] {
        for shape in SHAPES {
            let input = shaped::<K>(shape, n, order, 4);
            let vals: Vec<u32> = (0..n as u32).collect();
            for stable in [false, true] {
                let o = opts(Presorted::Always, order, stable);
                let what = format!("{} pairs {order:?} {shape:?} stable={stable} n={n}", K::NAME);
                check_pairs(g, &input, &vals, &o, &what);
                // 64-bit values.
                let wide: Vec<u64> = (0..n as u64).map(|i| i * 0x1_0000_0001).collect();
                let (mut dk, mut dw) = (s.clone_htod(&input).unwrap(), s.clone_htod(&wide).unwrap());
                g.sort_pairs(&mut dk, &mut dw, &o).unwrap_or_else(|e| panic!("{what} u64: {e}"));
                let got: Vec<u32> = s.clone_dtoh(&dw).unwrap().into_iter().map(|v| (v >> 32) as u32).collect();
                assert_pairs(&input, &s.clone_dtoh(&dk).unwrap(), &got, order, &format!("{what}, u64 values"));
                // Argsort.
                let dk = s.clone_htod(&input).unwrap();
                let p: Vec<usize> =
                    s.clone_dtoh(&g.argsort(&dk, &o).unwrap()).unwrap().into_iter().map(|x| x as usize).collect();
                if stable {
                    assert_eq!(p, cpu::argsort(&input, order), "{what}: stable argsort");
                } else {
                    assert!(cpu::is_argsort_of(&input, &p, order), "{what}: argsort");
                }
            }
        }
    }
}

fn presorted_pairs_stable_and_argsort(g: &Gpu) {
    for &n in SIZES.iter().filter(|&&n| n <= (1 << 20) + 5) {
        pairs_of::<u32>(g, n);
        if n <= 100_003 {
            pairs_of::<u64>(g, n);
            pairs_of::<u16>(g, n);
            pairs_of::<f32>(g, n);
        }
    }
}

/// Inputs the scan sends to the full sort (and those it does not): the
/// same result with and without it.
fn scan_or_not_same_result_every_distribution(g: &Gpu) {
    for n in [8193, 100_003, (1 << 20) + 5] {
        for dist in Dist::ALL {
            let input: Vec<u32> = keys(dist, n, seed(dist.name(), n));
            for order in [Order::Ascending, Order::Descending] {
                check_keys(
                    g,
                    &input,
                    &opts(Presorted::Always, order, false),
                    &format!("u32 {} {order:?} n={n}", dist.name()),
                );
            }
            let input: Vec<f64> = keys(dist, n, seed(dist.name(), n) ^ 9);
            check_keys(
                g,
                &input,
                &opts(Presorted::Always, Order::Ascending, false),
                &format!("f64 {} n={n}", dist.name()),
            );
        }
    }
}

/// The sample sort reads keys that are not their own ordered words (floats,
/// signed keys, the descending order, tuples and byte strings filling a
/// word) through their view, the order scan too: input found sorted stays,
/// reversed is reversed as stored, runs are mapped and merged, the rest
/// sorted; pairs and stable pairs alike.
fn the_sample_sort_scans_keys_through_their_view(g: &Gpu) {
    fn keys_viewed<K: SortKey>(g: &Gpu, n: usize)
    where
        K::Bits: FromPattern,
    {
        keys_with::<K>(g, n, 5, &[(Algorithm::SampleSort, Presorted::Always)]);
    }
    for n in [100_003, (1 << 20) + 5] {
        keys_viewed::<f32>(g, n);
        keys_viewed::<i64>(g, n);
        keys_viewed::<Tuple<(u32, u32)>>(g, n);
        keys_viewed::<[u8; 8]>(g, n);
    }
    keys_viewed::<i32>(g, 100_003);
    keys_viewed::<f64>(g, 100_003);
    for order in [Order::Ascending, Order::Descending] {
        for shape in SHAPES {
            let n = 200_003;
            let input = shaped::<f32>(shape, n, order, 6);
            let vals: Vec<u32> = (0..n as u32).collect();
            for stable in [false, true] {
                let o = SortOptions { algorithm: Algorithm::SampleSort, ..opts(Presorted::Always, order, stable) };
                check_pairs(
                    g,
                    &input,
                    &vals,
                    &o,
                    &format!("sample sort f32 pairs {order:?} {shape:?} stable={stable}"),
                );
            }
        }
    }
}

/// Runs merged a round a launch (each round's merges one partition and one
/// block merge over a table of its pairs, its runs without a partner
/// copied): every count of runs the scan merges, runs of random lengths
/// (many shorter than a window) and of equal ones, keys and stable pairs,
/// both orders. Small enough for compute-sanitizer.
fn runs_merge_a_round_at_a_time(g: &Gpu) {
    for n in [40_000, (1 << 18) + 3] {
        for runs in [2, 3, 4, 5, 9, 16, 31, ORDER_SCAN_DESCENTS + 1] {
            for order in [Order::Ascending, Order::Descending] {
                let tag = (n * 64 + runs) as u64;
                let mut equal: Vec<u32> = keys(Dist::Uniform, n, seed("equal runs", n) ^ tag);
                for run in equal.chunks_mut(n.div_ceil(runs)) {
                    run.sort_by(|a, b| if order == Order::Ascending { a.cmp(b) } else { b.cmp(a) });
                }
                for (input, lay) in [(shaped::<u32>(Shape::Runs(runs), n, order, tag), "random"), (equal, "equal")] {
                    let what = format!("{runs} {lay} runs {order:?} n={n}");
                    check_keys(g, &input, &opts(Presorted::Always, order, false), &what);
                    let vals: Vec<u32> = (0..n as u32).collect();
                    check_pairs(
                        g,
                        &input,
                        &vals,
                        &opts(Presorted::Always, order, true),
                        &format!("{what} stable pairs"),
                    );
                }
            }
        }
    }
}

/// The sample sort's first sampling, queued behind the order scan before
/// the host reads its words, runs only where they prove the input unordered:
/// every distribution (the sampling ran) and every shape (it did not, or,
/// for reversed runs of ties that a stable sort must not reverse, the input
/// is sampled again), `u32` and `u64` keys (their own ordered words: no
/// view) and `f32` keys (read through their view), keys, pairs and stable
/// pairs, both orders: the same result as the CPU reference.
fn the_sample_sort_samples_behind_the_scan(g: &Gpu) {
    for n in [100_003, (1 << 20) + 5] {
        for order in [Order::Ascending, Order::Descending] {
            sample_behind_scan::<u32>(g, n, &sample_inputs::<u32>(n, order, 7, &Dist::ALL, &SHAPES), order);
            sample_behind_scan::<u64>(g, n, &sample_inputs::<u64>(n, order, 8, &Dist::ALL, &SHAPES), order);
            sample_behind_scan::<f32>(g, n, &sample_inputs::<f32>(n, order, 9, &Dist::ALL, &SHAPES), order);
        }
    }
}

/// [`the_sample_sort_samples_behind_the_scan`] in a few sorts, small enough
/// for compute-sanitizer: sampled (uniform), not sampled (sorted, reversed,
/// runs), sampled again (reversed ties, stable).
fn the_sample_sort_samples_behind_the_scan_briefly(g: &Gpu) {
    let n = 100_003;
    let shapes = [Shape::Sorted, Shape::Reversed, Shape::ReversedTies, Shape::Runs(ORDER_SCAN_DESCENTS + 2)];
    for order in [Order::Ascending, Order::Descending] {
        sample_behind_scan::<u32>(g, n, &sample_inputs::<u32>(n, order, 10, &[Dist::Uniform], &shapes), order);
    }
}

/// Sorts each of `inputs` (`n` keys and what they are) by the sample sort
/// with the scan, keys, pairs and stable pairs, in `order`.
fn sample_behind_scan<K: SortKey + PartialOrd>(g: &Gpu, n: usize, inputs: &[(Vec<K>, String)], order: Order) {
    let vals: Vec<u32> = (0..n as u32).collect();
    let o = |stable| SortOptions { algorithm: Algorithm::SampleSort, ..opts(Presorted::Always, order, stable) };
    for (input, what) in inputs {
        check_keys(g, input, &o(false), &format!("sample sort {} {what} {order:?} n={n}", K::NAME));
        for stable in [false, true] {
            let what = format!("sample sort {} pairs {what} {order:?} stable={stable} n={n}", K::NAME);
            check_pairs(g, input, &vals, &o(stable), &what);
        }
    }
}

/// `n` keys of each of `dists` and `shapes` (in `order`), named.
fn sample_inputs<K: SortKey>(
    n: usize,
    order: Order,
    tag: u64,
    dists: &[Dist],
    shapes: &[Shape],
) -> Vec<(Vec<K>, String)>
where
    K::Bits: FromPattern,
{
    let drawn = dists.iter().map(|&d| (keys::<K>(d, n, seed(d.name(), n) ^ tag), d.name().to_string()));
    drawn.chain(shapes.iter().map(|&s| (shaped::<K>(s, n, order, tag), format!("{s:?}")))).collect()
}
