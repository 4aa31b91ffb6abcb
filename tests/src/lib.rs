//! What warpsort's GPU tests and its benchmark share, kept out of the
//! library's API: CPU references ([`cpu`]), input distributions ([`data`]),
//! result checks against the references (`check_*`, `assert_pairs`), and
//! the GPU tests' one GPU per binary with its ignore-or-fail rule, run by
//! the integration tests' [`harness`].

pub mod cpu;
pub mod data;
pub mod harness;

use std::sync::OnceLock;

pub use data::{Dist, keys};
use warpsort::Gpu;

/// Set to `1` to turn "no GPU" from a skip into a failure.
pub const REQUIRE_GPU: &str = "WARPSORT_REQUIRE_GPU";

/// The GPU, or `None` (with a printed notice) when there is none and
/// `WARPSORT_REQUIRE_GPU` is not `1`. Panics when a GPU is required but absent.
/// Opened once per process; the test [`harness`] opens it before any test
/// runs and reports GPU tests ignored where it is `None`.
pub fn gpu() -> Option<&'static Gpu> {
    open_gpu().ok()
}

/// The process's one GPU, or why there is none (printed once, as a
/// `SKIPPED` notice). Panics when a GPU is required but absent.
pub(crate) fn open_gpu() -> Result<&'static Gpu, &'static str> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| match Gpu::new() {
        Ok(g) => {
            eprintln!(
                "warpsort tests on {} (cc {:?}, kernels: {})",
                g.info().name,
                g.info().compute_capability,
                g.info().ptx
            );
            Ok(g)
        }
        Err(e) if std::env::var(REQUIRE_GPU).as_deref() == Ok("1") => {
            panic!("{REQUIRE_GPU}=1 but no GPU answered: {e}")
        }
        Err(e) => {
            // Straight to the stderr handle: libtest captures `eprintln!` of
            // passing tests, and a skip must be seen.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: GPU tests need a GPU ({e}); set {REQUIRE_GPU}=1 to make this a failure"
            );
            Err(e.to_string())
        }
    })
    .as_ref()
    .map_err(String::as_str)
}

/// Sizes every full sort is tried at: empty, one, around a warp, around the
/// tiles, powers of two and not.
pub const SIZES: &[usize] =
    &[0, 1, 2, 31, 32, 33, 100, 1000, 4095, 4096, 4097, 8192, 65_536, 100_003, 1 << 18, (1 << 20) + 5];

/// A size in the millions, for the sorts built for them.
pub const LARGE: usize = 1 << 24;

/// A seed that differs per call site but is fixed across runs.
pub fn seed(tag: &str, n: usize) -> u64 {
    tag.bytes().fold(n as u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
}

use data::FromPattern;
use warpsort::{Order, SortKey, SortOptions};

/// Sorts `dist` keys of type `K` on the GPU with `opts` and compares with the
/// CPU reference, bit for bit (also checks the GPU verifier agrees).
pub fn check_sort<K: SortKey>(g: &Gpu, dist: Dist, n: usize, opts: &SortOptions)
where
    K::Bits: FromPattern,
{
    let input: Vec<K> = keys(dist, n, seed(dist.name(), n));
    let mut d = g.stream().clone_htod(&input).unwrap();
    let before = g.check::<K, u32>(&d, None, opts.order).unwrap();
    g.sort_with(&mut d, opts).unwrap_or_else(|e| panic!("{opts:?} {} n={n} {}: {e}", K::NAME, dist.name()));
    let after = g.check::<K, u32>(&d, None, opts.order).unwrap();
    let got = g.stream().clone_dtoh(&d).unwrap();
    let mut want = input;
    cpu::sort(&mut want, opts.order);
    if let Some(i) = got.iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits()) {
        panic!(
            "{opts:?} {} n={n} {}: GPU result differs from the CPU reference first at {i}: got {:?}, want {:?}",
            K::NAME,
            dist.name(),
            &got[i..(i + 4).min(n)],
            &want[i..(i + 4).min(n)]
        );
    }
    assert!(after.confirms(&before), "GPU verifier disagrees: {before:?} -> {after:?}");
}

/// Key-value version of [`check_sort`]: values are the input positions; the
/// result must pair every key with a value it came with.
pub fn check_sort_pairs<K: SortKey>(g: &Gpu, dist: Dist, n: usize, opts: &SortOptions)
where
    K::Bits: FromPattern,
{
    let input: Vec<K> = keys(dist, n, seed(dist.name(), n) ^ 1);
    let vals: Vec<u32> = (0..n as u32).collect();
    let mut dk = g.stream().clone_htod(&input).unwrap();
    let mut dv = g.stream().clone_htod(&vals).unwrap();
    g.sort_pairs(&mut dk, &mut dv, opts).unwrap_or_else(|e| panic!("pairs {opts:?} n={n}: {e}"));
    let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
    assert_pairs(&input, &ok, &ov, opts.order, &format!("pairs {opts:?} {} n={n} {}", K::NAME, dist.name()));
}

/// Checks a key-value result whose input values were `0..n`.
pub fn assert_pairs<K: SortKey>(input: &[K], ok: &[K], ov: &[u32], order: Order, what: &str) {
    let mut want = input.to_vec();
    cpu::sort(&mut want, order);
    assert!(
        ok.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
        "{what}: keys differ from the CPU reference"
    );
    let mut seen = vec![false; input.len()];
    for (k, v) in ok.iter().zip(ov) {
        let v = *v as usize;
        assert!(v < input.len() && !seen[v], "{what}: value {v} out of range or repeated");
        seen[v] = true;
        assert_eq!(input[v].to_bits(), k.to_bits(), "{what}: value {v} travelled with the wrong key");
    }
}

/// Segmented sort against the CPU reference, keys and key-value.
pub fn check_segments<K: SortKey>(g: &Gpu, dist: Dist, n: usize, seg: usize, order: Order)
where
    K::Bits: FromPattern,
{
    let input: Vec<K> = keys(dist, n, seed(dist.name(), n + seg));
    let mut d = g.stream().clone_htod(&input).unwrap();
    g.sort_segments(&mut d, seg, order).unwrap();
    let got = g.stream().clone_dtoh(&d).unwrap();
    let mut want = input.clone();
    cpu::sort_segments(&mut want, seg, order);
    if let Some(i) = got.iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits()) {
        panic!(
            "segments of {seg}, {} n={n} {}: differs from the CPU reference first at {i} (segment {}, offset {}): got {:?}, want {:?}",
            K::NAME,
            dist.name(),
            i / seg,
            i % seg,
            &got[i..(i + 4).min(n)],
            &want[i..(i + 4).min(n)]
        );
    }
    // Key-value: values are positions; each segment's pairs stay in the segment.
    let vals: Vec<u32> = (0..n as u32).collect();
    let mut dk = g.stream().clone_htod(&input).unwrap();
    let mut dv = g.stream().clone_htod(&vals).unwrap();
    g.sort_segments_pairs(&mut dk, &mut dv, seg, order).unwrap();
    let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
    for (s, ((ik, okk), ovv)) in input.chunks(seg).zip(ok.chunks(seg)).zip(ov.chunks(seg)).enumerate() {
        let shifted: Vec<u32> = ovv.iter().map(|v| v.wrapping_sub((s * seg) as u32)).collect();
        assert_pairs(ik, okk, &shifted, order, &format!("segment pairs seg={seg} n={n}"));
    }
}

/// Key generators for property tests: any bit pattern of the key type, mixed
/// with the values sorts get wrong (NaN of both signs, +-0, +-inf, MIN, MAX,
/// subnormals). The CPU property tests (`tests/properties.rs`) and the GPU
/// ones (`tests/properties_gpu.rs`) draw from them.
pub mod generate {
    use crate::data::FromPattern;
    use proptest::prelude::*;
    use warpsort::SortKey;

    /// A key type with its edge values.
    pub trait Edges: SortKey
    where
        Self::Bits: FromPattern,
    {
        /// Values every generator mixes in.
        fn edges() -> Vec<Self>;
    }

    macro_rules! int_edges {
        ($($t:ty),*) => {$(
            impl Edges for $t {
                fn edges() -> Vec<Self> {
                    vec![<$t>::MIN, <$t>::MAX, 0, 1, (0 as $t).wrapping_sub(1), <$t>::MAX / 2]
                }
            }
        )*};
    }
    int_edges!(u16, i16, u32, i32, u64, i64);

    macro_rules! float_edges {
        ($($t:ident: $bits:ty),*) => {$(
            impl Edges for $t {
                fn edges() -> Vec<Self> {
                    let neg_nan = $t::from_bits($t::NAN.to_bits() | (1 << (<$bits>::BITS - 1)));
                    vec![
                        $t::NAN, neg_nan, 0.0, -0.0, $t::INFINITY, $t::NEG_INFINITY, $t::MIN, $t::MAX,
                        $t::MIN_POSITIVE, -$t::MIN_POSITIVE, $t::from_bits(1), -$t::from_bits(1), 1.0, -1.0,
                    ]
                }
            }
        )*};
    }
    float_edges!(f32: u32, f64: u64);

    /// One key: any bit pattern, or an edge value.
    pub fn key<K: Edges>() -> impl Strategy<Value = K>
    where
        K::Bits: FromPattern,
    {
        prop_oneof![
            any::<u64>().prop_map(|p| K::from_ordered(K::Bits::from_pattern(p))),
            proptest::sample::select(K::edges()),
        ]
    }

    /// Up to `max` keys.
    pub fn keys<K: Edges>(max: usize) -> impl Strategy<Value = Vec<K>>
    where
        K::Bits: FromPattern,
    {
        proptest::collection::vec(key::<K>(), 0..max)
    }
}
