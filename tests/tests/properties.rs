//! Property tests of what every sort relies on, on the CPU: the key
//! encodings (order-preserving bijections, descending as their inverse
//! order) and the CPU references against the standard library's
//! `sort_by(total_cmp)` / `sort`, for every key type and both orders, with
//! NaN, +-0, +-inf, MIN and MAX mixed into every input.

use std::cmp::Ordering;

use proptest::prelude::*;
use warpsort::{Bits, Order, SortKey};
use warpsort_testkit::cpu;
use warpsort_testkit::data::FromPattern;
use warpsort_testkit::generate::{Edges, key, keys};
use warpsort_testkit::harness::CpuTest;

fn bits<K: SortKey>(v: &[K]) -> Vec<K::Bits> {
    v.iter().map(|k| k.to_bits()).collect()
}

/// The standard library's order for the type: `total_cmp` for floats, `Ord` otherwise.
trait StdOrder: SortKey {
    fn std_cmp(&self, other: &Self) -> Ordering;
}
macro_rules! std_order {
    (ord: $($t:ty),*) => {$( impl StdOrder for $t { fn std_cmp(&self, o: &Self) -> Ordering { self.cmp(o) } } )*};
    (total: $($t:ty),*) => {$( impl StdOrder for $t { fn std_cmp(&self, o: &Self) -> Ordering { self.total_cmp(o) } } )*};
}
std_order!(ord: u16, i16, u32, i32, u64, i64);
std_order!(total: f32, f64);

fn encoding_preserves_order<K: Edges + StdOrder>(a: K, b: K)
where
    K::Bits: FromPattern,
{
    use warpsort::kernels::ordered::mode::{DECODE, DESCENDING};
    assert_eq!(a.key_cmp(&b), a.std_cmp(&b), "{a:?} vs {b:?}");
    let (oa, ob) = (a.to_bits().map(K::MODE), b.to_bits().map(K::MODE));
    assert_eq!(oa.cmp(&ob), a.std_cmp(&b));
    assert_eq!(K::from_ordered(oa).to_bits(), a.to_bits(), "round trip of {a:?}");
    let (da, db) = (a.to_bits().map(K::MODE | DESCENDING), b.to_bits().map(K::MODE | DESCENDING));
    assert_eq!(da.cmp(&db), b.std_cmp(&a), "descending inverts the order");
    assert_eq!(da.map(K::MODE | DESCENDING | DECODE), a.to_bits());
}

fn reference_matches_std<K: Edges + StdOrder>(v: Vec<K>, seg: usize)
where
    K::Bits: FromPattern,
{
    let mut want = v.clone();
    want.sort_by(|a, b| a.std_cmp(b));
    let mut asc = v.clone();
    cpu::sort(&mut asc, Order::Ascending);
    assert_eq!(bits(&asc), bits(&want));
    let mut desc = v.clone();
    cpu::sort(&mut desc, Order::Descending);
    want.reverse();
    assert_eq!(bits(&desc), bits(&want));
    let mut segs = v.clone();
    cpu::sort_segments(&mut segs, seg, Order::Ascending);
    for (got, orig) in segs.chunks(seg).zip(v.chunks(seg)) {
        let mut w = orig.to_vec();
        w.sort_by(|a, b| a.std_cmp(b));
        assert_eq!(bits(got), bits(&w));
    }
}

fn pair_check_accepts_sorts_only<K: Edges + StdOrder>(v: Vec<K>)
where
    K::Bits: FromPattern,
{
    let vals: Vec<u32> = (0..v.len() as u32).collect();
    let (mut k, mut p) = (v.clone(), vals.clone());
    cpu::sort_pairs(&mut k, &mut p, Order::Ascending);
    assert!(cpu::is_pair_sort_of(&v, &vals, &k, &p, Order::Ascending));
    // Two values swapped between distinct keys: no longer the same pairs.
    if let Some(i) = (1..k.len()).find(|&i| k[i - 1].to_bits() != k[i].to_bits()) {
        p.swap(i - 1, i);
        assert!(!cpu::is_pair_sort_of(&v, &vals, &k, &p, Order::Ascending));
    }
}

macro_rules! properties {
    ($($name:ident: $t:ty),*) => {$(
        mod $name {
            use super::*;
            proptest! {
                #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]
                fn encoding_preserves_order(a in key::<$t>(), b in key::<$t>()) {
                    super::encoding_preserves_order(a, b);
                }
                fn reference_matches_std(v in keys::<$t>(300), seg in 1usize..40) {
                    super::reference_matches_std(v, seg);
                }
                fn pair_check_accepts_sorts_only(v in keys::<$t>(100)) {
                    super::pair_check_accepts_sorts_only(v);
                }
            }
            /// The tests above, named by their paths in this binary.
            pub(super) const TESTS: [CpuTest; 3] = [
                (concat!(stringify!($name), "::encoding_preserves_order"), encoding_preserves_order),
                (concat!(stringify!($name), "::reference_matches_std"), reference_matches_std),
                (concat!(stringify!($name), "::pair_check_accepts_sorts_only"), pair_check_accepts_sorts_only),
            ];
        }
    )*};
}
properties!(u16_keys: u16, i16_keys: i16, u32_keys: u32, i32_keys: i32, f32_keys: f32, u64_keys: u64, i64_keys: i64, f64_keys: f64);

fn main() -> std::process::ExitCode {
    let tests = [
        u16_keys::TESTS,
        i16_keys::TESTS,
        u32_keys::TESTS,
        i32_keys::TESTS,
        f32_keys::TESTS,
        u64_keys::TESTS,
        i64_keys::TESTS,
        f64_keys::TESTS,
    ];
    warpsort_testkit::harness::run(&[], &tests.concat())
}
