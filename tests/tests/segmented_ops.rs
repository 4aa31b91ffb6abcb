//! What `torch.sort(x, dim=-1, stable=True)` users expect of segmented
//! sorts: argsort of rows and of segments given by offsets, stable
//! key-value sorts of both, and rows of any length (past 8192 items the
//! merge sort sorts each row). Every key type, both orders, segment lengths
//! 0, 1, 31, 33, 8191, 8193 and 100000, each against the CPU reference.

use std::ops::Range;

use warpsort::{Gpu, Order, SortKey, SortOptions};
use warpsort_testkit::cpu;
use warpsort_testkit::data::{Dist, FromPattern, keys};
use warpsort_testkit::seed;

warpsort_testkit::tests_main! {
    gpu: [
        keys_u16,
        keys_i16,
        keys_u32,
        keys_i32,
        keys_f32,
        keys_u64,
        keys_i64,
        keys_f64,
        long_rows_every_distribution,
    ],
}

/// The segment lengths every operation is tried on.
const LENGTHS: &[usize] = &[1, 31, 33, 8191, 8193, 100_000];

/// How the keys are cut, for the GPU call and the CPU reference.
#[derive(Clone, Debug)]
enum Cut {
    Rows(usize),
    Offsets(Vec<u32>),
}

impl Cut {
    fn segments(&self, n: usize) -> Vec<Range<usize>> {
        match self {
            Cut::Rows(len) => cpu::rows(n, *len),
            Cut::Offsets(off) => cpu::by_offsets(off),
        }
    }
}

/// The cuts of `n` keys tried for a length: rows of it (the last shorter),
/// and offsets mixing it with empty, one-item and shorter segments.
fn cuts(len: usize) -> Vec<(usize, Cut)> {
    let n = 3 * len + len / 2 + 1;
    let mut off = vec![0u32];
    for l in [len, 0, 1, len / 3, len, 0, len / 2 + 1] {
        off.push(off.last().unwrap() + l as u32);
    }
    let total = *off.last().unwrap() as usize;
    vec![
        (0, Cut::Rows(len)),
        (1, Cut::Rows(len)),
        (n, Cut::Rows(len)),
        (0, Cut::Offsets(vec![0])),
        (total, Cut::Offsets(off)),
    ]
}

fn input<K: SortKey>(n: usize, len: usize, dist: Dist) -> Vec<K>
where
    K::Bits: FromPattern,
{
    keys(dist, n, seed(K::NAME, n + len))
}

fn same_bits<K: SortKey>(a: &[K], b: &[K]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Stable key-value sorts and stable argsort, exactly as the CPU's stable
/// reference: duplicate-heavy keys, so that stability shows.
fn stable_ops<K: SortKey>(g: &Gpu)
where
    K::Bits: FromPattern,
{
    for &len in LENGTHS {
        for (n, cut) in cuts(len) {
            for order in [Order::Ascending, Order::Descending] {
                let what = format!("{} n={n} {cut:?} {order:?}", K::NAME).chars().take(120).collect::<String>();
                let input: Vec<K> = input(n, len, Dist::FewUnique);
                let segments = cut.segments(n);
                let opts = SortOptions { order, stable: true, ..Default::default() };
                let s = g.stream();
                // Key-value, values the positions (u64, as a wide payload).
                let vals: Vec<u64> = (0..n as u64).collect();
                let (mut dk, mut dv) = (s.clone_htod(&input).unwrap(), s.clone_htod(&vals).unwrap());
                let d_off = match &cut {
                    Cut::Offsets(off) => Some(s.clone_htod(off).unwrap()),
                    Cut::Rows(_) => None,
                };
                match (&cut, &d_off) {
                    (Cut::Rows(len), _) => g.sort_segments_pairs_with(&mut dk, &mut dv, *len, &opts),
                    (_, Some(off)) => g.sort_segments_by_offsets_pairs_with(&mut dk, &mut dv, off, &opts),
                    _ => unreachable!(),
                }
                .unwrap_or_else(|e| panic!("{what}: {e}"));
                let (mut want_k, mut want_v) = (input.clone(), vals.clone());
                cpu::sort_pairs_segments(&mut want_k, &mut want_v, &segments, order);
                assert!(same_bits(&s.clone_dtoh(&dk).unwrap(), &want_k), "{what}: stable pairs' keys");
                assert_eq!(s.clone_dtoh(&dv).unwrap(), want_v, "{what}: stable pairs' values");

                // Stable argsort: positions in the row (rows) or in the array (offsets).
                let dk = s.clone_htod(&input).unwrap();
                let p = match (&cut, &d_off) {
                    (Cut::Rows(len), _) => g.argsort_segments(&dk, *len, &opts),
                    (_, Some(off)) => g.argsort_segments_by_offsets(&dk, off, &opts),
                    _ => unreachable!(),
                }
                .unwrap_or_else(|e| panic!("{what}: argsort: {e}"));
                let relative = matches!(cut, Cut::Rows(_));
                let want = cpu::argsort_segments(&input, &segments, order, relative);
                assert_eq!(s.clone_dtoh(&p).unwrap(), want, "{what}: stable argsort");
                assert!(same_bits(&s.clone_dtoh(&dk).unwrap(), &input), "{what}: argsort changed the keys");
            }
        }
    }
}

/// Unstable argsort: a permutation of each segment that sorts it; rows of
/// any length, keys only.
fn unstable_ops<K: SortKey>(g: &Gpu)
where
    K::Bits: FromPattern,
{
    for &len in LENGTHS {
        for (n, cut) in cuts(len) {
            let order = if len % 2 == 0 { Order::Ascending } else { Order::Descending };
            let what = format!("{} n={n} {:?} {order:?}", K::NAME, matches!(cut, Cut::Rows(_)));
            let input: Vec<K> = input(n, len, Dist::Uniform);
            let segments = cut.segments(n);
            let opts = SortOptions::ordered(order);
            let s = g.stream();
            let dk = s.clone_htod(&input).unwrap();
            let (p, relative) = match &cut {
                Cut::Rows(len) => (g.argsort_segments(&dk, *len, &opts), true),
                Cut::Offsets(off) => {
                    let d_off = s.clone_htod(off).unwrap();
                    (g.argsort_segments_by_offsets(&dk, &d_off, &opts), false)
                }
            };
            let p = s.clone_dtoh(&p.unwrap_or_else(|e| panic!("{what}: {e}"))).unwrap();
            for r in &segments {
                let local: Vec<usize> =
                    p[r.clone()].iter().map(|&x| if relative { x as usize } else { x as usize - r.start }).collect();
                assert!(cpu::is_argsort_of(&input[r.clone()], &local, order), "{what}: segment {r:?}");
            }
            // Keys alone, and key-value with 32-bit values, not stable.
            let mut want = input.clone();
            for r in &segments {
                cpu::sort(&mut want[r.clone()], order);
            }
            let mut dk = s.clone_htod(&input).unwrap();
            let vals: Vec<u32> = (0..n as u32).collect();
            let mut dv = s.clone_htod(&vals).unwrap();
            match &cut {
                Cut::Rows(len) => {
                    g.sort_segments(&mut dk, *len, order).unwrap();
                    let mut dk2 = s.clone_htod(&input).unwrap();
                    g.sort_segments_pairs(&mut dk2, &mut dv, *len, order).unwrap();
                    assert!(same_bits(&s.clone_dtoh(&dk2).unwrap(), &want), "{what}: pairs' keys");
                }
                Cut::Offsets(off) => {
                    let d_off = s.clone_htod(off).unwrap();
                    g.sort_segments_by_offsets(&mut dk, &d_off, order).unwrap();
                    let mut dk2 = s.clone_htod(&input).unwrap();
                    g.sort_segments_by_offsets_pairs(&mut dk2, &mut dv, &d_off, order).unwrap();
                    assert!(same_bits(&s.clone_dtoh(&dk2).unwrap(), &want), "{what}: pairs' keys");
                }
            }
            assert!(same_bits(&s.clone_dtoh(&dk).unwrap(), &want), "{what}: keys");
            let v = s.clone_dtoh(&dv).unwrap();
            for r in &segments {
                for i in r.clone() {
                    let from = v[i] as usize;
                    assert!(r.contains(&from) && input[from].to_bits() == want[i].to_bits(), "{what}: value {i}");
                }
            }
        }
    }
}

macro_rules! every_key_type {
    ($($name:ident: $t:ty),*) => {$(
        fn $name(g: &Gpu) {
            stable_ops::<$t>(g);
            unstable_ops::<$t>(g);
        }
    )*};
}
every_key_type!(keys_u16: u16, keys_i16: i16, keys_u32: u32, keys_i32: i32, keys_f32: f32, keys_u64: u64, keys_i64: i64, keys_f64: f64);

/// Rows longer than a block's tile in bulk: many rows, every distribution.
fn long_rows_every_distribution(g: &Gpu) {
    for dist in Dist::ALL {
        for (n, len) in [(20 * 9000 + 17, 9000), (1 << 20, 1 << 17)] {
            let input: Vec<f32> = keys(dist, n, seed(dist.name(), len));
            let mut d = g.stream().clone_htod(&input).unwrap();
            g.sort_segments(&mut d, len, Order::Descending).unwrap();
            let mut want = input.clone();
            cpu::sort_segments(&mut want, len, Order::Descending);
            assert!(same_bits(&g.stream().clone_dtoh(&d).unwrap(), &want), "{} rows of {len}", dist.name());
        }
    }
}
