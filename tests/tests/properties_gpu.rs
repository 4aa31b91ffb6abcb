//! Property tests on the GPU: the generators of `warpsort_testkit::generate`
//! (any bit pattern, mixed with NaN of both signs, +-0, +-inf, MIN, MAX and
//! subnormals) drive `sort` and `sort_pairs` for every key type, both orders,
//! every algorithm (both GPU-Warpsort merges) and every way in (device buffers, host slices, a caller's
//! `Scratch`), compared bit for bit with the CPU references. Lengths are
//! arbitrary up to 20 000 (mostly), with a few larger cases; case counts are
//! modest so that the whole suite takes seconds on the GPU machine. Without a
//! GPU, each test is reported ignored, generating nothing.

use std::cell::RefCell;
use std::fmt::Display;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use warpsort::{Algorithm, Gpu, MergeKernel, MergeSortConfig, Order, Scratch, SortKey, SortOptions};
use warpsort_testkit::cpu;
use warpsort_testkit::data::FromPattern;
use warpsort_testkit::generate::{Edges, keys};
use warpsort_testkit::harness::GpuTest;

/// Cases per key type and operation.
const CASES: u32 = 64;
/// Cases per key type of the larger lengths.
const LARGE_CASES: u32 = 4;

/// How the keys reach the sort.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `CudaSlice`s and the storage the `Gpu` caches.
    Device,
    /// Host slices (copied through the cached storage).
    Slice,
    /// `CudaSlice`s and one `Scratch` reused across all cases of a test.
    Scratch,
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        // Shrinking reruns the GPU sort: bounded, and the first failure is reported anyway.
        max_shrink_iters: 512,
        max_shrink_time: 30_000,
        ..Config::default()
    })
}

/// Mostly short inputs, some up to 20 000, sorted one of every way.
fn cases<K: Edges>(max_len: usize) -> impl Strategy<Value = Case<K>>
where
    K::Bits: FromPattern,
{
    let lens = prop_oneof![2 => keys::<K>(300), 3 => keys::<K>(max_len)];
    let order = prop_oneof![Just(Order::Ascending), Just(Order::Descending)];
    let algorithm = proptest::sample::select(Algorithm::ALL.to_vec());
    let merge = prop_oneof![Just(MergeKernel::Block), Just(MergeKernel::WarpBitonic)];
    let path = prop_oneof![Just(Path::Device), Just(Path::Slice), Just(Path::Scratch)];
    (lens, order, algorithm, merge, path)
}

/// Larger inputs (20 000 to 300 000 keys): several merge passes, partial tiles.
fn large_cases<K: Edges>() -> impl Strategy<Value = Case<K>>
where
    K::Bits: FromPattern,
{
    let lens = proptest::collection::vec(warpsort_testkit::generate::key::<K>(), 20_000..300_000);
    let order = prop_oneof![Just(Order::Ascending), Just(Order::Descending)];
    let algorithm = prop_oneof![3 => Just(Algorithm::MergeSort), 1 => Just(Algorithm::Bitonic)];
    let merge = prop_oneof![Just(MergeKernel::Block), Just(MergeKernel::WarpBitonic)];
    let path = prop_oneof![Just(Path::Device), Just(Path::Slice), Just(Path::Scratch)];
    (lens, order, algorithm, merge, path)
}

fn fail<E: Display>(what: &'static str) -> impl FnOnce(E) -> TestCaseError {
    move |e| TestCaseError::fail(format!("{what}: {e}"))
}

fn bits<K: SortKey>(v: &[K]) -> Vec<K::Bits> {
    v.iter().map(|k| k.to_bits()).collect()
}

/// Bit-for-bit equality with the CPU reference, reporting the first difference.
fn same_as_reference<K: SortKey>(input: &[K], got: &[K], order: Order) -> Result<(), TestCaseError> {
    let mut want = input.to_vec();
    cpu::sort(&mut want, order);
    if got.len() != want.len() {
        return Err(TestCaseError::fail(format!("{} keys back, {} sent", got.len(), want.len())));
    }
    if let Some(i) = bits(got).iter().zip(bits(&want)).position(|(a, b)| *a != b) {
        let end = (i + 4).min(got.len());
        return Err(TestCaseError::fail(format!(
            "{} n={} {order:?}: differs from the CPU reference first at {i}: got {:?}, want {:?}",
            K::NAME,
            input.len(),
            &got[i..end],
            &want[i..end]
        )));
    }
    Ok(())
}

fn sort_case<K: SortKey>(
    g: &Gpu,
    scratch: &RefCell<Scratch>,
    (input, order, algorithm, merge, path): Case<K>,
) -> Result<(), TestCaseError> {
    let mut o = SortOptions { order, ..SortOptions::algorithm(algorithm) };
    o.merge_sort = MergeSortConfig { merge, ..Default::default() };
    let got = match path {
        Path::Slice => {
            let mut h = input.clone();
            g.sort_slice_with(&mut h, &o).map_err(fail("sort_slice_with"))?;
            h
        }
        Path::Device | Path::Scratch => {
            let mut d = g.stream().clone_htod(&input).map_err(fail("upload"))?;
            match path {
                Path::Scratch => g.sort_with_scratch(&mut d, &o, &mut scratch.borrow_mut()),
                _ => g.sort_with(&mut d, &o),
            }
            .map_err(fail("sort"))?;
            g.stream().clone_dtoh(&d).map_err(fail("download"))?
        }
    };
    same_as_reference(&input, &got, order)
}

fn pairs_case<K: SortKey>(
    g: &Gpu,
    scratch: &RefCell<Scratch>,
    (input, order, algorithm, merge, path): Case<K>,
) -> Result<(), TestCaseError> {
    let mut o = SortOptions { order, ..SortOptions::algorithm(algorithm) };
    o.merge_sort = MergeSortConfig { merge, ..Default::default() };
    let vals: Vec<u32> = (0..input.len() as u32).collect();
    let (ok, ov) = match path {
        Path::Slice => {
            let (mut k, mut v) = (input.clone(), vals.clone());
            g.sort_pairs_slice(&mut k, &mut v, &o).map_err(fail("sort_pairs_slice"))?;
            (k, v)
        }
        Path::Device | Path::Scratch => {
            let mut dk = g.stream().clone_htod(&input).map_err(fail("upload"))?;
            let mut dv = g.stream().clone_htod(&vals).map_err(fail("upload"))?;
            match path {
                Path::Scratch => g.sort_pairs_with_scratch(&mut dk, &mut dv, &o, &mut scratch.borrow_mut()),
                _ => g.sort_pairs(&mut dk, &mut dv, &o),
            }
            .map_err(fail("sort_pairs"))?;
            (
                g.stream().clone_dtoh(&dk).map_err(fail("download"))?,
                g.stream().clone_dtoh(&dv).map_err(fail("download"))?,
            )
        }
    };
    same_as_reference(&input, &ok, order)?;
    // Values were positions: a permutation, each with the key it came with.
    let mut seen = vec![false; input.len()];
    for (i, (k, &v)) in ok.iter().zip(&ov).enumerate() {
        let v = v as usize;
        prop_assert!(v < input.len() && !seen[v], "value {} at {} out of range or repeated", v, i);
        seen[v] = true;
        prop_assert_eq!(input[v].to_bits(), k.to_bits(), "value {} at {} travelled with the wrong key", v, i);
    }
    Ok(())
}

type Case<K> = (Vec<K>, Order, Algorithm, MergeKernel, Path);
/// One case of a property: the GPU, the test's `Scratch`, the case.
type CaseFn<K> = fn(&Gpu, &RefCell<Scratch>, Case<K>) -> Result<(), TestCaseError>;

fn check<K: Edges>(g: &Gpu, cases: u32, strategy: impl Strategy<Value = Case<K>>, case: CaseFn<K>)
where
    K::Bits: FromPattern,
{
    let scratch = RefCell::new(Scratch::new());
    if let Err(e) = runner(cases).run(&strategy, |c| case(g, &scratch, c)) {
        panic!("{} on the GPU: {e}", K::NAME);
    }
}

macro_rules! gpu_properties {
    ($($name:ident: $t:ty),*) => {$(
        mod $name {
            use super::*;

            fn sort_matches_the_cpu_reference(g: &Gpu) {
                check::<$t>(g, CASES, cases::<$t>(20_000), sort_case::<$t>);
            }

            fn sort_pairs_matches_the_cpu_reference(g: &Gpu) {
                check::<$t>(g, CASES, cases::<$t>(20_000), pairs_case::<$t>);
            }

            fn larger_sorts_match_the_cpu_reference(g: &Gpu) {
                check::<$t>(g, LARGE_CASES, large_cases::<$t>(), sort_case::<$t>);
                check::<$t>(g, LARGE_CASES / 2, large_cases::<$t>(), pairs_case::<$t>);
            }

            /// The tests above, named by their paths in this binary.
            pub(super) const TESTS: [GpuTest; 3] = [
                (concat!(stringify!($name), "::sort_matches_the_cpu_reference"), sort_matches_the_cpu_reference),
                (
                    concat!(stringify!($name), "::sort_pairs_matches_the_cpu_reference"),
                    sort_pairs_matches_the_cpu_reference,
                ),
                (
                    concat!(stringify!($name), "::larger_sorts_match_the_cpu_reference"),
                    larger_sorts_match_the_cpu_reference,
                ),
            ];
        }
    )*};
}
gpu_properties!(u32_keys: u32, i32_keys: i32, f32_keys: f32, u64_keys: u64, i64_keys: i64, f64_keys: f64);

fn main() -> std::process::ExitCode {
    let tests = [u32_keys::TESTS, i32_keys::TESTS, f32_keys::TESTS, u64_keys::TESTS, i64_keys::TESTS, f64_keys::TESTS];
    warpsort_testkit::harness::run(&tests.concat(), &[])
}
