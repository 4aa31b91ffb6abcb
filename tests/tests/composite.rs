//! Composite keys through every operation, against the CPU reference (whose
//! order, `key_cmp`, the library's CPU tests hold against plain Rust
//! comparisons field by field): `Tuple`s of two and three fields with
//! `Reverse` fields, byte strings in `memcmp` order; keys of one word (up
//! to 64 bits of fields) and wider ones (several words, sorted word by
//! word). Full sorts on every algorithm, key-value (stable and not),
//! argsort, segmented sorts (rows and offsets), host slices in core and
//! beyond a memory limit (wider keys: refused there, input unchanged).

use std::cmp::Reverse;

use warpsort::{Algorithm, Column, Gpu, HostOptions, Order, SortKey, SortOptions, Tuple};
use warpsort_testkit::data::FromPattern;
use warpsort_testkit::{Dist, check_segments, check_sort, check_sort_pairs, cpu, keys, seed};

warpsort_testkit::tests_main! {
    gpu: [
        full_sorts_every_algorithm_size_and_order,
        wide_keys_every_algorithm_size_and_order,
        every_distribution,
        stable_pairs_and_argsort,
        segments_by_offsets,
        host_slices_in_core_and_beyond,
        a_table_ordered_by_columns,
        order_by_device_columns,
        the_order_by_example,
        the_custom_key_example,
    ],
}

type U32U32 = Tuple<(u32, u32)>;
type F32DescI16 = Tuple<(f32, Reverse<i16>)>;
type Three = Tuple<(i16, Reverse<f32>, u8)>;
type U16U16 = Tuple<(u16, u16)>;
type U64U32 = Tuple<(u64, u32)>;
type Wide3 = Tuple<(i16, Reverse<f64>, u64)>;
type U32x3 = Tuple<(u32, u32, u32)>;

/// The sizes the issue names: empty, one, a warp and one, past a tile, a
/// million and three.
const SIZES: [usize; 5] = [0, 1, 33, 8193, 1_000_003];

fn opts(algorithm: Algorithm, order: Order, stable: bool) -> SortOptions {
    SortOptions { algorithm, order, stable, ..Default::default() }
}

/// Sort and key-value sort of `K` at every size, in both orders, on `algos`.
fn sorts<K: SortKey>(g: &Gpu, algos: &[Algorithm])
where
    K::Bits: FromPattern,
{
    for &a in algos {
        for order in [Order::Ascending, Order::Descending] {
            let o = opts(a, order, false);
            for n in SIZES {
                check_sort::<K>(g, Dist::Uniform, n, &o);
                check_sort::<K>(g, Dist::FewUnique, n, &o);
                check_sort_pairs::<K>(g, Dist::FewUnique, n, &o);
            }
        }
    }
    for seg in [1, 32, 100, 4096, 20_000] {
        check_segments::<K>(g, Dist::FewUnique, 70_001, seg, Order::Descending);
    }
}

fn full_sorts_every_algorithm_size_and_order(g: &Gpu) {
    sorts::<U32U32>(g, &Algorithm::ALL);
    sorts::<F32DescI16>(g, &[Algorithm::MergeSort]);
    sorts::<Three>(g, &[Algorithm::MergeSort, Algorithm::Bitonic]);
    sorts::<U16U16>(g, &[Algorithm::MergeSort]);
    sorts::<[u8; 8]>(g, &Algorithm::ALL);
    sorts::<[u8; 4]>(g, &[Algorithm::MergeSort]);
}

fn wide_keys_every_algorithm_size_and_order(g: &Gpu) {
    sorts::<U64U32>(g, &Algorithm::ALL);
    sorts::<Wide3>(g, &[Algorithm::MergeSort]);
    sorts::<U32x3>(g, &[Algorithm::MergeSort, Algorithm::Bitonic]);
    sorts::<[u8; 16]>(g, &Algorithm::ALL);
    sorts::<[u8; 32]>(g, &[Algorithm::MergeSort]);
}

fn every_distribution(g: &Gpu) {
    for dist in Dist::ALL {
        for order in [Order::Ascending, Order::Descending] {
            let o = opts(Algorithm::MergeSort, order, false);
            check_sort::<Three>(g, dist, 300_007, &o);
            check_sort::<[u8; 8]>(g, dist, 300_007, &o);
            check_sort_pairs::<F32DescI16>(g, dist, 100_003, &o);
            check_sort::<[u8; 16]>(g, dist, 300_007, &o);
            check_sort_pairs::<Wide3>(g, dist, 100_003, &o);
        }
    }
}

/// Stable key-value sorts give exactly the stable reference's values, and
/// argsort (stable or not, `u32` and `u64` positions) a sorting permutation
/// (exactly the stable one when stable), the keys untouched.
fn stable<K: SortKey>(g: &Gpu, n: usize)
where
    K::Bits: FromPattern,
{
    for order in [Order::Ascending, Order::Descending] {
        for dist in [Dist::FewUnique, Dist::AllEqual, Dist::Uniform] {
            let what = format!("{} {order:?} {} n={n}", K::NAME, dist.name());
            let input: Vec<K> = keys(dist, n, seed(dist.name(), n) ^ 5);
            let vals: Vec<u64> = (0..n as u64).map(|i| i << 21 | i).collect();
            let mut dk = g.stream().clone_htod(&input).unwrap();
            let mut dv = g.stream().clone_htod(&vals).unwrap();
            g.sort_pairs(&mut dk, &mut dv, &opts(Algorithm::MergeSort, order, true)).unwrap();
            let (mut wk, mut wv) = (input.clone(), vals.clone());
            cpu::sort_pairs(&mut wk, &mut wv, order);
            let gk = g.stream().clone_dtoh(&dk).unwrap();
            assert!(gk.iter().zip(&wk).all(|(a, b)| a.to_bits() == b.to_bits()), "stable {what}: keys differ");
            assert_eq!(g.stream().clone_dtoh(&dv).unwrap(), wv, "stable {what}: values differ");
            for stable in [false, true] {
                let o = opts(Algorithm::MergeSort, order, stable);
                let d = g.stream().clone_htod(&input).unwrap();
                let p32: Vec<usize> =
                    g.stream().clone_dtoh(&g.argsort(&d, &o).unwrap()).unwrap().iter().map(|&p| p as usize).collect();
                let p64: Vec<usize> =
                    g.stream().clone_dtoh(&g.argsort64(&d, &o).unwrap()).unwrap().iter().map(|&p| p as usize).collect();
                let after = g.stream().clone_dtoh(&d).unwrap();
                assert!(
                    after.iter().zip(&input).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "argsort {what}: keys changed"
                );
                for p in [&p32, &p64] {
                    assert!(cpu::is_argsort_of(&input, p, order), "argsort {what} stable {stable}: not sorting");
                    if stable {
                        assert_eq!(*p, cpu::argsort(&input, order), "argsort {what}: not the stable permutation");
                    }
                }
                let host = g.argsort_slice(&input, &o).unwrap();
                assert!(cpu::is_argsort_of(&input, &host.iter().map(|&p| p as usize).collect::<Vec<_>>(), order));
            }
        }
    }
}

fn stable_pairs_and_argsort(g: &Gpu) {
    for n in [0, 1, 33, 8193, 100_003] {
        stable::<U32U32>(g, n);
        stable::<Three>(g, n);
        stable::<[u8; 8]>(g, n);
        stable::<U64U32>(g, n);
        stable::<[u8; 32]>(g, n);
    }
    stable::<Wide3>(g, 300_007);
    stable::<F32DescI16>(g, 1_000_003);
}

fn segments_by_offsets(g: &Gpu) {
    by_offsets::<Three>(g);
    by_offsets::<Wide3>(g);
    by_offsets::<[u8; 16]>(g);
}

/// Segments given by offsets of every class (chunks, warp, block, long):
/// keys, stable key-value and stable argsort (positions in their segment's
/// order, then the check of segments.
fn by_offsets<K: SortKey>(g: &Gpu)
where
    K::Bits: FromPattern,
{
    let offs: Vec<u32> = vec![0, 0, 1, 33, 600, 5000, 5001, 10_000, 30_000];
    let d_off = g.stream().clone_htod(&offs).unwrap();
    let input: Vec<K> = keys(Dist::FewUnique, 30_000, 9);
    for order in [Order::Ascending, Order::Descending] {
        let mut d = g.stream().clone_htod(&input).unwrap();
        g.sort_segments_by_offsets(&mut d, &d_off, order).unwrap();
        let mut want = input.clone();
        cpu::sort_by_offsets(&mut want, &offs, order);
        let got = g.stream().clone_dtoh(&d).unwrap();
        assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{} by offsets {order:?}", K::NAME);
        assert!(g.is_sorted_segments(&d, warpsort::Segments::Offsets(&d_off), order).unwrap());
        let stable = SortOptions { stable: true, order, ..Default::default() };
        let vals: Vec<u32> = (0..input.len() as u32).collect();
        let (mut dk, mut dv) = (g.stream().clone_htod(&input).unwrap(), g.stream().clone_htod(&vals).unwrap());
        g.sort_segments_by_offsets_pairs_with(&mut dk, &mut dv, &d_off, &stable).unwrap();
        let mut want: Vec<u32> = Vec::new();
        for w in offs.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            want.extend(cpu::argsort(&input[a..b], order).into_iter().map(|p| (a + p) as u32));
        }
        assert_eq!(g.stream().clone_dtoh(&dv).unwrap(), want, "{} stable pairs by offsets {order:?}", K::NAME);
    }
}

/// Host slices: in core, and beyond limits that make many runs and buckets;
/// keys, and key-value stable and not.
fn host<K: SortKey>(g: &Gpu, n: usize, limits: &[Option<usize>])
where
    K::Bits: FromPattern,
{
    let input: Vec<K> = keys(Dist::FewUnique, n, seed("composite host", n));
    let vals: Vec<u32> = (0..n as u32).collect();
    for &limit in limits {
        for order in [Order::Ascending, Order::Descending] {
            for stable in [false, true] {
                let o = HostOptions {
                    sort: opts(Algorithm::MergeSort, order, stable),
                    memory_limit: limit,
                    staging_bytes: 1 << 15,
                    ..Default::default()
                };
                let what = format!("host {} {order:?} stable {stable} limit {limit:?} n={n}", K::NAME);
                let mut got = input.clone();
                g.sort_host(&mut got, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
                let mut want = input.clone();
                cpu::sort(&mut want, order);
                assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: keys differ");
                let (mut gk, mut gv) = (input.clone(), vals.clone());
                g.sort_pairs_host(&mut gk, &mut gv, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(cpu::is_pair_sort_of(&input, &vals, &gk, &gv, order), "{what}: not a pair sort");
                if stable {
                    let (mut wk, mut wv) = (input.clone(), vals.clone());
                    cpu::sort_pairs(&mut wk, &mut wv, order);
                    assert_eq!(gv, wv, "{what}: not the stable order");
                }
            }
        }
    }
}

fn host_slices_in_core_and_beyond(g: &Gpu) {
    let limits = [None, Some(512 << 10), Some(3 << 20)];
    for n in [0, 1, 33, 8193, 300_007] {
        host::<U32U32>(g, n, &limits);
        host::<Three>(g, n, &limits);
        host::<[u8; 8]>(g, n, &limits);
        host::<U16U16>(g, n, &limits);
        host::<U64U32>(g, n, &limits);
        host::<[u8; 16]>(g, n, &limits);
    }
    // Keys wider than a word beyond the limit (above, and here their
    // argsorts): one host sort of `(word, position)` per word.
    let input: Vec<Wide3> = keys(Dist::FewUnique, 300_007, 4);
    for order in [Order::Ascending, Order::Descending] {
        let o = HostOptions {
            sort: opts(Algorithm::MergeSort, order, true),
            memory_limit: Some(1 << 20),
            ..Default::default()
        };
        let p: Vec<u32> = g.argsort_host(&input, &o).unwrap();
        let want: Vec<u32> = cpu::argsort(&input, order).into_iter().map(|i| i as u32).collect();
        assert_eq!(p, want, "stable argsort of wide keys beyond the limit, {order:?}");
    }
    // A fault in a word's pass: an error, the keys as they were.
    let mut got = input.clone();
    let fault = Some(warpsort::Fault { phase: warpsort::Phase::Merge, after: 1 << 16 });
    let o = HostOptions { memory_limit: Some(1 << 20), fault, ..Default::default() };
    let e = g.sort_host(&mut got, &o).unwrap_err();
    assert!(matches!(e, warpsort::Error::Injected(_)), "{e:?}");
    assert!(got.iter().zip(&input).all(|(a, b)| a.to_bits() == b.to_bits()), "failed, yet changed");
    // Plain tuples sort in place through `Tuple::slice`.
    let mut rows = vec![(2u16, Reverse(10.5f32)), (1, Reverse(3.0)), (2, Reverse(99.0)), (1, Reverse(-0.0))];
    g.sort_slice(Tuple::slice(&mut rows)).unwrap();
    assert_eq!(rows, [(1, Reverse(3.0)), (1, Reverse(-0.0)), (2, Reverse(99.0)), (2, Reverse(10.5))]);
}

/// ORDER BY region (`u16` ascending), revenue (`f32` descending), id
/// (`u16` ascending) over a table of columns: the rows' keys built as
/// tuples, argsorted stably, the columns gathered by the permutation; then
/// the same with `f64` revenue and `u64` ids (a key of three words).
fn a_table_ordered_by_columns(g: &Gpu) {
    let n = 300_007;
    let region: Vec<u16> = (0..n).map(|i| (i * 7919 % 13) as u16).collect();
    let revenue: Vec<f64> = (0..n).map(|i| ((i * 104_729) % 1000) as f64 / 8.0 - 20.0).collect();
    let id: Vec<u64> = (0..n).map(|i| (i as u64 * 0x9e37_79b9) % 1000).collect();
    let rows: Vec<Wide3> = (0..n).map(|i| Tuple((region[i] as i16, Reverse(revenue[i]), id[i]))).collect();
    let perm = g.argsort_slice(&rows, &SortOptions { stable: true, ..Default::default() }).unwrap();
    let mut want: Vec<usize> = (0..n).collect();
    want.sort_by(|&a, &b| region[a].cmp(&region[b]).then(revenue[b].total_cmp(&revenue[a])).then(id[a].cmp(&id[b])));
    assert_eq!(perm.iter().map(|&p| p as usize).collect::<Vec<_>>(), want, "ORDER BY of three wide columns");
    narrow_table(g);
}

fn narrow_table(g: &Gpu) {
    let n = 200_003;
    let region: Vec<u16> = (0..n).map(|i| (i * 7919 % 13) as u16).collect();
    let revenue: Vec<f32> = (0..n).map(|i| ((i * 104_729) % 1000) as f32 / 8.0 - 20.0).collect();
    let id: Vec<u16> = (0..n).map(|i| (i % 65_521) as u16).collect();
    let rows: Vec<Tuple<(u16, Reverse<f32>, u16)>> =
        (0..n).map(|i| Tuple((region[i], Reverse(revenue[i]), id[i]))).collect();
    let perm = g.argsort_slice(&rows, &SortOptions { stable: true, ..Default::default() }).unwrap();
    let mut want: Vec<usize> = (0..n).collect();
    want.sort_by(|&a, &b| region[a].cmp(&region[b]).then(revenue[b].total_cmp(&revenue[a])).then(id[a].cmp(&id[b])));
    assert_eq!(perm.iter().map(|&p| p as usize).collect::<Vec<_>>(), want, "ORDER BY of three columns");
}

/// A table of device columns: three keys of different types and orders,
/// sizes around the edges, rows equal in every key keeping their order;
/// payload columns of 2, 8 and 64 bytes gathered by the permutation; bad
/// calls refused with typed errors, the columns untouched.
fn order_by_device_columns(g: &Gpu) {
    let s = g.stream();
    for n in [0usize, 1, 33, 8193, 1_000_003] {
        let region: Vec<u16> = (0..n).map(|i| (i * 7919 % 13) as u16).collect();
        let revenue: Vec<f64> = (0..n).map(|i| ((i * 104_729) % 1000) as f64 / 8.0 - 20.0).collect();
        let id: Vec<i64> = (0..n).map(|i| (i as i64 * 0x9e37_79b9) % 997 - 500).collect();
        let records: Vec<[u32; 16]> = (0..n).map(|i| std::array::from_fn(|w| (i * 16 + w) as u32)).collect();
        let (dr, dv, di, dx) = (
            s.clone_htod(&region).unwrap(),
            s.clone_htod(&revenue).unwrap(),
            s.clone_htod(&id).unwrap(),
            s.clone_htod(&records).unwrap(),
        );
        let p = g.order_by(&[Column::asc(&dr), Column::desc(&dv), Column::by(&di, Order::Ascending)]).unwrap();
        let mut want: Vec<usize> = (0..n).collect();
        want.sort_by(|&a, &b| {
            region[a].cmp(&region[b]).then(revenue[b].total_cmp(&revenue[a])).then(id[a].cmp(&id[b]))
        });
        let got: Vec<usize> = s.clone_dtoh(&p).unwrap().iter().map(|&x| x as usize).collect();
        assert_eq!(got, want, "ORDER BY region, revenue DESC, id over {n} rows");
        assert_eq!(
            s.clone_dtoh(&g.gather(&dr, &p).unwrap()).unwrap(),
            want.iter().map(|&i| region[i]).collect::<Vec<_>>()
        );
        let rev: Vec<u64> = s.clone_dtoh(&g.gather(&dv, &p).unwrap()).unwrap().iter().map(|x| x.to_bits()).collect();
        assert_eq!(rev, want.iter().map(|&i| revenue[i].to_bits()).collect::<Vec<_>>());
        assert_eq!(
            s.clone_dtoh(&g.gather(&dx, &p).unwrap()).unwrap(),
            want.iter().map(|&i| records[i]).collect::<Vec<_>>()
        );
        assert_eq!(s.clone_dtoh(&dr).unwrap(), region, "columns are only read");
    }
    let (a, b) = (s.clone_htod(&[1u32, 2, 3]).unwrap(), s.clone_htod(&[1u8, 2]).unwrap());
    assert!(matches!(g.order_by(&[Column::asc(&a), Column::asc(&b)]), Err(warpsort::Error::LengthMismatch { .. })));
    assert!(matches!(g.order_by(&[]), Err(warpsort::Error::BadConfig(_))));
    let short = s.clone_htod(&[0u32, 1]).unwrap();
    assert!(matches!(g.gather(&a, &short), Err(warpsort::Error::LengthMismatch { .. })));
    // One byte columns, descending, ties kept in input order.
    let bytes: Vec<i8> = (0..5000).map(|i| (i % 7) as i8 - 3).collect();
    let d = s.clone_htod(&bytes).unwrap();
    let p = g.order_by(&[Column::desc(&d)]).unwrap();
    let mut want: Vec<u32> = (0..5000).collect();
    want.sort_by(|&x, &y| bytes[y as usize].cmp(&bytes[x as usize]));
    assert_eq!(s.clone_dtoh(&p).unwrap(), want);
    assert_eq!(
        s.clone_dtoh(&g.gather(&d, &p).unwrap()).unwrap(),
        want.iter().map(|&i| bytes[i as usize]).collect::<Vec<_>>()
    );
}

/// `examples/order_by` (built beside the tests in the bundle; its folder in
/// `WARPSORT_EXAMPLES`) runs and checks itself against its CPU reference.
fn the_order_by_example(_: &Gpu) {
    let Ok(dir) = std::env::var("WARPSORT_EXAMPLES") else {
        eprintln!("WARPSORT_EXAMPLES unset: the order_by example is not run here");
        return;
    };
    let out = std::process::Command::new(std::path::Path::new(&dir).join("order_by")).arg("100003").output().unwrap();
    assert!(
        out.status.success(),
        "order_by example: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The user-written key types (`examples/custom_key`): every operation at
/// every size and distribution against the CPU, and an order with cycles
/// that must keep every item. The example checks and exits non-zero on any
/// difference.
fn the_custom_key_example(_: &Gpu) {
    let Ok(dir) = std::env::var("WARPSORT_EXAMPLES") else {
        eprintln!("WARPSORT_EXAMPLES unset: the custom_key example is not run here");
        return;
    };
    let out =
        std::process::Command::new(std::path::Path::new(&dir).join("custom_key")).arg("1048576").output().unwrap();
    assert!(
        out.status.success(),
        "custom_key example: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
}
