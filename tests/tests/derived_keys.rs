//! User key types with derived orders (`#[derive(Order)]`), sorted on
//! warpsort's own kernels as ordered words (`Gpu::sort_custom` and its kin
//! on a `Gpu::new` handle): one `u32` word, one `u64`, two and four words,
//! with descending, signed, float and byte-string fields. Every operation
//! (sorts on every algorithm, both directions, stable; key-value; argsort;
//! host slices; segmented sorts by rows and by offsets, keys and stable
//! pairs) at the sizes and over duplicate-heavy inputs,
//! against the CPU sorting by the same `less`. A hand-written order is
//! refused there, the keys unchanged.

use warpsort::cudarc::driver::DeviceRepr;
use warpsort::{Algorithm, Error, Gpu, Order as Direction, Segments, SortOptions};
use warpsort_key::Order;

warpsort_testkit::tests_main! {
    gpu: [
        one_word_keys,
        two_word_keys,
        four_word_keys,
        hand_written_orders_are_refused,
        given_ptx_is_warpsorts_own_kernels,
    ],
}

/// A `u32` word: `a` ascending, `b` descending.
#[derive(Clone, Copy, Debug, PartialEq, Order)]
#[repr(C)]
struct Small {
    a: u16,
    #[order(desc)]
    b: i16,
}

/// A `u64` word: a descending float, then a `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Order)]
#[repr(C)]
struct Pair {
    #[order(desc)]
    hi: f32,
    lo: u32,
}

/// Two words: a descending 12-byte name (8 + 4 big-endian bytes), then
/// a signed rank and a flag.
#[derive(Clone, Copy, Debug, PartialEq, Order)]
#[repr(C)]
struct Named {
    #[order(desc)]
    name: [u8; 12],
    rank: i16,
    flag: u16,
}

/// Four words.
#[derive(Clone, Copy, Debug, PartialEq, Order)]
#[repr(C)]
struct Big {
    a: u64,
    #[order(desc)]
    b: f64,
    c: i64,
    d: [u8; 8],
}

// SAFETY: plain `repr(C)` numbers without padding.
unsafe impl DeviceRepr for Small {}
// SAFETY: as above.
unsafe impl DeviceRepr for Pair {}
// SAFETY: as above.
unsafe impl DeviceRepr for Named {}
// SAFETY: as above.
unsafe impl DeviceRepr for Big {}

/// A key drawn from a random `u64` (its fields from its bits, few values
/// each when `few`).
trait Draw: Order + DeviceRepr + Send + Sync + std::fmt::Debug {
    fn draw(r: u64, few: bool) -> Self;
}

const FLOATS: [f64; 8] = [f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 1.5, -1.5];

impl Draw for Small {
    fn draw(r: u64, few: bool) -> Self {
        let m = if few { 3 } else { u64::MAX };
        Small { a: (r & m) as u16, b: (((r >> 16) & m) as i16).wrapping_sub(1) }
    }
}
impl Draw for Pair {
    fn draw(r: u64, few: bool) -> Self {
        let hi = if few { FLOATS[r as usize % 8] as f32 } else { f32::from_bits(r as u32) };
        Pair { hi, lo: (r >> 32) as u32 % if few { 2 } else { u32::MAX } }
    }
}
impl Draw for Named {
    fn draw(r: u64, few: bool) -> Self {
        let m = if few { 1 } else { 0xff };
        Named {
            name: std::array::from_fn(|j| ((r >> (j * 5)) & m) as u8),
            rank: ((r >> 40) & if few { 1 } else { 0xffff }) as i16,
            flag: ((r >> 56) & 1) as u16,
        }
    }
}
impl Draw for Big {
    fn draw(r: u64, few: bool) -> Self {
        let b = if few { FLOATS[(r >> 3) as usize % 8] } else { f64::from_bits(r.rotate_left(17)) };
        let m = if few { 1 } else { u64::MAX };
        Big { a: r & m, b, c: (((r >> 7) & m) as i64).wrapping_sub(1), d: ((r >> 11) & m).to_be_bytes() }
    }
}

/// `n` keys; `dist` 0 uniform, 1 few-unique, 2 all-equal, 3 sorted, 4
/// reversed.
fn input<T: Draw>(n: usize, dist: usize) -> Vec<T> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (n as u64) << 7 ^ dist as u64;
    let mut v: Vec<T> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            T::draw(if dist == 2 { 42 } else { x }, dist == 1)
        })
        .collect();
    match dist {
        3 => v.sort_by(Order::order),
        4 => v.sort_by(|a, b| b.order(a)),
        _ => {}
    }
    v
}

/// Whether `got` is `want` key for key (keys that order equal are the same
/// bits in these types).
fn same<T: Order>(got: &[T], want: &[T]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(a, b)| a.order(b).is_eq())
}

const SIZES: [usize; 5] = [0, 1, 33, 8193, 1_000_003];

/// Every operation on keys of `T` against the CPU.
fn every_operation<T: Draw>(g: &Gpu, algos: &[Algorithm]) {
    let s = g.stream();
    for n in SIZES {
        for dist in 0..5 {
            let keys: Vec<T> = input(n, dist);
            let what = format!("{} n={n} dist={dist}", std::any::type_name::<T>());
            let mut asc = keys.clone();
            asc.sort_by(Order::order); // stable
            let mut desc = keys.clone();
            desc.sort_by(|a, b| b.order(a));
            for &algorithm in algos {
                for (order, want) in [(Direction::Ascending, &asc), (Direction::Descending, &desc)] {
                    for stable in [false, true] {
                        if stable && algorithm != Algorithm::MergeSort {
                            continue;
                        }
                        let o = SortOptions { algorithm, order, stable, ..Default::default() };
                        let mut d = s.clone_htod(&keys).unwrap();
                        g.sort_custom(&mut d, &o).unwrap();
                        assert!(same(&s.clone_dtoh(&d).unwrap(), want), "{what}: {o:?}");
                    }
                }
            }
            // Stable key-value and argsort: exactly the CPU's stable permutation.
            let mut perm: Vec<u32> = (0..n as u32).collect();
            perm.sort_by(|&a, &b| keys[a as usize].order(&keys[b as usize]));
            let stable = SortOptions { stable: true, ..Default::default() };
            let vals: Vec<u32> = (0..n as u32).collect();
            let (mut dk, mut dv) = (s.clone_htod(&keys).unwrap(), s.clone_htod(&vals).unwrap());
            g.sort_custom_pairs(&mut dk, &mut dv, &stable).unwrap();
            assert!(same(&s.clone_dtoh(&dk).unwrap(), &asc), "{what}: stable pairs, keys");
            assert_eq!(s.clone_dtoh(&dv).unwrap(), perm, "{what}: stable pairs, values");
            let d = s.clone_htod(&keys).unwrap();
            let mut p = s.alloc_zeros::<u32>(n.max(1)).unwrap();
            let mut p = p.slice_mut(0..n);
            g.argsort_custom(&d, &mut p, &stable).unwrap();
            assert_eq!(s.clone_dtoh(&p).unwrap(), perm, "{what}: stable argsort");
            // Unstable key-value with 64-bit values: each value with its key.
            let vals: Vec<u64> = (0..n as u64).map(|i| i << 32 | i).collect();
            let (mut dk, mut dv) = (s.clone_htod(&keys).unwrap(), s.clone_htod(&vals).unwrap());
            g.sort_custom_pairs(&mut dk, &mut dv, &SortOptions::default()).unwrap();
            let (gk, gv) = (s.clone_dtoh(&dk).unwrap(), s.clone_dtoh(&dv).unwrap());
            let mut seen = vec![false; n];
            assert!(same(&gk, &asc), "{what}: pairs, keys");
            assert!(
                gv.iter().zip(&gk).all(|(&v, k)| {
                    let i = (v & 0xffff_ffff) as usize;
                    v >> 32 == i as u64 && keys[i].order(k).is_eq() && !std::mem::replace(&mut seen[i], true)
                }),
                "{what}: pairs, values"
            );
            // Host slices.
            let mut host = keys.clone();
            g.sort_custom_slice(&mut host, &SortOptions::descending()).unwrap();
            assert!(same(&host, &desc), "{what}: host slice");
        }
    }
}

/// Segmented sorts (rows and offsets; keys, and stable pairs whose values
/// are input positions) against each segment sorted on the CPU.
fn segmented<T: Draw>(g: &Gpu) {
    let s = g.stream();
    for n in [0, 33, 100_003] {
        for dist in [0, 1] {
            let keys: Vec<T> = input(n, dist);
            // Rows of several lengths, then uneven segments (empty ones, one
            // past 8192 items) by offsets.
            let mut cuts: Vec<(String, Vec<usize>)> = [1, 33, 4096, 20_000]
                .iter()
                .map(|&len| (format!("rows of {len}"), (0..=n.div_ceil(len)).map(|r| (r * len).min(n)).collect()))
                .collect();
            let uneven: Vec<usize> =
                [0, 0, 5, 5, 9000, 9100, 70_000].iter().map(|&o: &usize| o.min(n)).chain([n]).collect();
            cuts.push(("offsets".into(), uneven));
            for (i, (what, bounds)) in cuts.iter().enumerate() {
                let what = format!("{} n={n} dist={dist} {what}", std::any::type_name::<T>());
                let rows = i < 4;
                let offsets: Vec<u32> = bounds.iter().map(|&b| b as u32).collect();
                let doffsets = s.clone_htod(&offsets).unwrap();
                let cut = if rows { Segments::Rows([1, 33, 4096, 20_000][i]) } else { Segments::Offsets(&doffsets) };
                // The CPU: each segment sorted stably, positions alongside.
                let (mut want, mut perm): (Vec<T>, Vec<u32>) = (keys.clone(), (0..n as u32).collect());
                for w in bounds.windows(2) {
                    perm[w[0]..w[1]].sort_by(|&a, &b| keys[a as usize].order(&keys[b as usize]));
                    want[w[0]..w[1]].sort_by(Order::order);
                }
                for order in [Direction::Ascending, Direction::Descending] {
                    let o = SortOptions { order, ..Default::default() };
                    let mut d = s.clone_htod(&keys).unwrap();
                    g.sort_custom_segments(&mut d, cut, &o).unwrap();
                    let mut got = s.clone_dtoh(&d).unwrap();
                    if order == Direction::Descending {
                        for w in bounds.windows(2) {
                            got[w[0]..w[1]].reverse();
                        }
                    }
                    assert!(same(&got, &want), "{what}: keys {order:?}");
                }
                let stable = SortOptions { stable: true, ..Default::default() };
                let (mut dk, mut dv) =
                    (s.clone_htod(&keys).unwrap(), s.clone_htod(&(0..n as u32).collect::<Vec<_>>()).unwrap());
                g.sort_custom_segments_pairs(&mut dk, &mut dv, cut, &stable).unwrap();
                assert!(same(&s.clone_dtoh(&dk).unwrap(), &want), "{what}: stable pairs, keys");
                assert_eq!(s.clone_dtoh(&dv).unwrap(), perm, "{what}: stable pairs, values");
            }
        }
    }
}

fn one_word_keys(g: &Gpu) {
    every_operation::<Small>(g, &Algorithm::ALL);
    every_operation::<Pair>(g, &Algorithm::ALL);
    segmented::<Small>(g);
    segmented::<Pair>(g);
}

fn two_word_keys(g: &Gpu) {
    every_operation::<Named>(g, &Algorithm::ALL);
    segmented::<Named>(g);
}

fn four_word_keys(g: &Gpu) {
    every_operation::<Big>(g, &[Algorithm::MergeSort]);
    segmented::<Big>(g);
}

fn hand_written_orders_are_refused(g: &Gpu) {
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct Hand(u32);
    // SAFETY: a `u32`.
    unsafe impl DeviceRepr for Hand {}
    impl Order for Hand {
        fn less(&self, o: &Self) -> bool {
            self.0 % 7 < o.0 % 7
        }
    }
    let keys: Vec<Hand> = (0..1000).rev().map(Hand).collect();
    let s = g.stream();
    let mut d = s.clone_htod(&keys).unwrap();
    let e = g.sort_custom(&mut d, &SortOptions::default()).unwrap_err();
    assert!(matches!(e, Error::BadConfig(_)), "{e:?}");
    assert_eq!(s.clone_dtoh(&d).unwrap(), keys, "refused, yet changed");
    let mut host = keys.clone();
    assert!(matches!(g.sort_custom_slice(&mut host, &SortOptions::default()), Err(Error::BadConfig(_))));
    assert_eq!(host, keys);
    let e = g.sort_custom_segments(&mut d, Segments::Rows(10), &SortOptions::default()).unwrap_err();
    assert!(matches!(e, Error::BadConfig(_)), "{e:?}");
    assert_eq!(s.clone_dtoh(&d).unwrap(), keys, "refused, yet changed");
}

/// A handle on warpsort's own kernels from given PTX (`Gpu::with_ptx`, for
/// kernel authors comparing builds) sorts a derived order as ordered words,
/// as `Gpu::new` does, not by a user key type's kernels: given PTX with no
/// kernel at all, the sort misses a built-in kernel (none of the `_key`
/// ones `Gpu::with_key_kernels` loads), the keys unchanged.
fn given_ptx_is_warpsorts_own_kernels(g: &Gpu) {
    const EMPTY_PTX: &str = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry nothing()\n{\n\tret;\n}\n";
    let h = Gpu::with_ptx(g.context().ordinal(), EMPTY_PTX).unwrap();
    assert_eq!(h.info().ptx, "given PTX");
    let keys: Vec<Small> = (0..1000u16).rev().map(|i| Small { a: i % 13, b: i as i16 - 500 }).collect();
    let s = h.stream();
    let mut d = s.clone_htod(&keys).unwrap();
    match h.sort_custom(&mut d, &SortOptions::default()) {
        Err(Error::PtxLoad(m)) => {
            let name = m.split("kernel ").nth(1).and_then(|r| r.split(':').next()).unwrap_or_else(|| panic!("{m}"));
            assert!(!name.ends_with("_key") && !name.contains("_key_"), "a user key type's kernel: {m}");
        }
        r => panic!("expected a missing built-in kernel, got {r:?}"),
    }
    assert_eq!(s.clone_dtoh(&d).unwrap(), keys, "failed, yet changed");
}
