//! Reusable temporary storage: a second sort of the same size allocates
//! nothing, through the storage a `Gpu` caches and through a caller's
//! `Scratch`, on one stream and across streams; results stay right.

use warpsort::{Algorithm, Gpu, Order, Scratch, SortKey, SortOptions};
use warpsort_testkit::cpu;
use warpsort_testkit::{Dist, keys};

warpsort_testkit::tests_main! {
    gpu: [
        a_second_sort_allocates_nothing,
        a_callers_scratch_grows_only_when_too_small,
        scratch_and_handles_across_streams,
        concurrent_sorts_on_one_handle,
    ],
    cpu: [temporary_storage_grows_with_n],
}

/// A handle of its own (on a stream of its own, sharing the loaded kernels):
/// its cache and allocation count see only this test.
fn own_gpu(g: &Gpu) -> Gpu {
    g.with_stream(g.context().new_stream().unwrap()).unwrap()
}

fn want<K: SortKey>(v: &[K], order: Order) -> Vec<K::Bits> {
    let mut w = v.to_vec();
    cpu::sort(&mut w, order);
    w.iter().map(|k| k.to_bits()).collect()
}

fn bits<K: SortKey>(v: &[K]) -> Vec<K::Bits> {
    v.iter().map(|k| k.to_bits()).collect()
}

fn a_second_sort_allocates_nothing(g: &Gpu) {
    let g = own_gpu(g);
    let n = 300_001;
    let input: Vec<u32> = keys(Dist::Uniform, n, 1);
    let mut d = g.stream().clone_htod(&input).unwrap();
    assert_eq!((g.scratch_allocations(), g.scratch_capacity()), (0, 0));
    g.sort(&mut d).unwrap();
    let (allocs, cap) = (g.scratch_allocations(), g.scratch_capacity());
    assert_eq!(allocs, 1);
    assert!(cap >= Gpu::sort_temp_bytes(&SortOptions::default(), n, 4, 0));
    for _ in 0..3 {
        g.stream().memcpy_htod(&input, &mut d).unwrap();
        g.sort(&mut d).unwrap();
        assert_eq!(bits(&g.stream().clone_dtoh(&d).unwrap()), want(&input, Order::Ascending));
    }
    // Smaller sorts, descending, f32 keys of the same width: all fit.
    let small: Vec<f32> = keys(Dist::Gaussian, 100_000, 2);
    let mut ds = g.stream().clone_htod(&small).unwrap();
    g.sort_with(&mut ds, &SortOptions { order: Order::Descending, ..Default::default() }).unwrap();
    assert_eq!(bits(&g.stream().clone_dtoh(&ds).unwrap()), want(&small, Order::Descending));
    assert_eq!((g.scratch_allocations(), g.scratch_capacity()), (allocs, cap), "no new allocation");

    // Host slices keep their device copy in the same storage: the first may
    // grow it, the second of the same size allocates nothing.
    let mut h = input.clone();
    g.sort_slice(&mut h).unwrap();
    let after_first = g.scratch_allocations();
    assert!(after_first <= allocs + 1);
    let mut h2 = input.clone();
    g.sort_slice(&mut h2).unwrap();
    assert_eq!(g.scratch_allocations(), after_first, "a second host-slice sort allocated");
    assert_eq!(bits(&h2), want(&input, Order::Ascending));
    let vals: Vec<u32> = (0..n as u32).collect();
    let (mut hk, mut hv) = (input.clone(), vals.clone());
    g.sort_pairs_slice(&mut hk, &mut hv, &SortOptions::default()).unwrap();
    let after_pairs = g.scratch_allocations();
    let (mut hk, mut hv) = (input.clone(), vals.clone());
    g.sort_pairs_slice(&mut hk, &mut hv, &SortOptions::default()).unwrap();
    assert_eq!(g.scratch_allocations(), after_pairs);
    warpsort_testkit::assert_pairs(&input, &hk, &hv, Order::Ascending, "host pairs through the cache");

    g.release_scratch().unwrap();
    assert_eq!(g.scratch_capacity(), 0);
    g.sort(&mut d).unwrap();
    assert_eq!(g.scratch_allocations(), after_pairs + 1, "released storage is allocated again");
}

fn a_callers_scratch_grows_only_when_too_small(g: &Gpu) {
    let g = own_gpu(g);
    let opts = SortOptions::default();
    let mut s = Scratch::new();
    assert_eq!((s.capacity(), s.allocations(), s.device_ptr()), (0, 0, 0));
    let sizes = [50_000, 200_000, 200_000, 10_000, 199_999, 4096, 2];
    let mut seen = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        let input: Vec<i64> = keys(Dist::FewUnique, n, i as u64);
        let mut d = g.stream().clone_htod(&input).unwrap();
        g.sort_with_scratch(&mut d, &opts, &mut s).unwrap();
        assert_eq!(bits(&g.stream().clone_dtoh(&d).unwrap()), want(&input, Order::Ascending), "n={n}");
        seen.push((s.allocations(), s.capacity(), s.device_ptr()));
    }
    // Allocated for 50 000, grown once for 200 000, then reused as is.
    assert_eq!(seen[0].0, 1);
    assert_eq!(seen[1].0, 2);
    assert!(seen[2..].iter().all(|&x| x == seen[1]), "{seen:?}");
    assert_eq!(g.scratch_allocations(), 0, "the Gpu's own cache was not used");

    // Reserved up front from the query: no sort allocates, key-value included.
    let n = 1 << 20;
    let need = Gpu::sort_temp_bytes(&opts, n, 8, 4);
    let mut s = Scratch::with_capacity(&g, need).unwrap();
    assert_eq!(s.allocations(), 1);
    let input: Vec<f64> = keys(Dist::Uniform, n, 9);
    let vals: Vec<u32> = (0..n as u32).collect();
    for order in [Order::Ascending, Order::Descending] {
        let mut dk = g.stream().clone_htod(&input).unwrap();
        let mut dv = g.stream().clone_htod(&vals).unwrap();
        let o = SortOptions { order, ..Default::default() };
        g.sort_pairs_with_scratch(&mut dk, &mut dv, &o, &mut s).unwrap();
        let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
        warpsort_testkit::assert_pairs(&input, &ok, &ov, order, "pairs with a reserved scratch");
    }
    assert_eq!(s.allocations(), 1, "the reserved storage sufficed");
    // u32 keys with u64 values move the values once, by sorted positions:
    // the query covers that too, stable or not.
    for o in [SortOptions::default(), SortOptions { stable: true, ..Default::default() }] {
        let need = Gpu::sort_temp_bytes(&o, n, 4, 8);
        let mut s = Scratch::with_capacity(&g, need).unwrap();
        let input: Vec<u32> = keys(Dist::FewUnique, n, 10);
        let vals: Vec<u64> = (0..n as u64).map(|i| i * 0x1_0000_0001).collect();
        let mut dk = g.stream().clone_htod(&input).unwrap();
        let mut dv = g.stream().clone_htod(&vals).unwrap();
        g.sort_pairs_with_scratch(&mut dk, &mut dv, &o, &mut s).unwrap();
        let (ok, ov) = (g.stream().clone_dtoh(&dk).unwrap(), g.stream().clone_dtoh(&dv).unwrap());
        // Each value's halves both hold its input position, once each.
        let pos: Vec<u32> = ov.iter().map(|&v| if v >> 32 == v & 0xffff_ffff { v as u32 } else { u32::MAX }).collect();
        warpsort_testkit::assert_pairs(&input, &ok, &pos, Order::Ascending, "u64 values with a reserved scratch");
        assert_eq!(s.allocations(), 1, "the reserved storage sufficed (stable: {})", o.stable);
    }
    s.reserve(&g, need / 2).unwrap();
    assert_eq!(s.allocations(), 1, "reserving less is a no-op");
    // Bitonic needs none, and leaves the storage alone.
    let mut d = g.stream().clone_htod(&input).unwrap();
    g.sort_with_scratch(&mut d, &SortOptions::algorithm(Algorithm::Bitonic), &mut s).unwrap();
    assert!(g.is_sorted(&d, Order::Ascending).unwrap());
    s.release().unwrap();
    assert_eq!(s.capacity(), 0);
}

fn scratch_and_handles_across_streams(g: &Gpu) {
    let g = own_gpu(g);
    let side = g.with_stream(g.context().new_stream().unwrap()).unwrap();
    assert_eq!(side.scratch_capacity(), 0, "a stream copy has its own cache");
    let n = 150_000;
    let a: Vec<u32> = keys(Dist::Uniform, n, 3);
    let b: Vec<f32> = keys(Dist::Staggered, n, 4);
    let mut s = Scratch::new();
    for round in 0..3 {
        // The same scratch, alternately on the handle's stream and the side stream.
        let mut da = g.stream().clone_htod(&a).unwrap();
        g.sort_with_scratch(&mut da, &SortOptions::default(), &mut s).unwrap();
        let mut db = side.stream().clone_htod(&b).unwrap();
        side.sort_with_scratch(&mut db, &SortOptions::default(), &mut s).unwrap();
        assert_eq!(bits(&g.stream().clone_dtoh(&da).unwrap()), want(&a, Order::Ascending), "round {round}");
        assert_eq!(bits(&side.stream().clone_dtoh(&db).unwrap()), want(&b, Order::Ascending), "round {round}");
    }
    assert_eq!(s.allocations(), 1);
    // Plain sorts on the side stream use the side copy's cache, not the parent's.
    let mut db = side.stream().clone_htod(&b).unwrap();
    side.sort(&mut db).unwrap();
    side.synchronize().unwrap();
    assert_eq!((side.scratch_allocations(), g.scratch_allocations()), (1, 0));
    assert_eq!(bits(&side.stream().clone_dtoh(&db).unwrap()), want(&b, Order::Ascending));
    drop(s); // freed on the stream it was allocated on, after the side stream's work
    g.synchronize().unwrap();
    side.synchronize().unwrap();
}

fn concurrent_sorts_on_one_handle(g: &Gpu) {
    // Threads sharing one Gpu: one holds the cached storage, the others get
    // one-off storage, none waits on the cache or gets a wrong answer.
    let g = own_gpu(g);
    std::thread::scope(|t| {
        for i in 0..4u64 {
            let g = &g;
            t.spawn(move || {
                for round in 0..5u64 {
                    let mut v: Vec<u64> = keys(Dist::Uniform, 20_000 + (i * 1000 + round) as usize, i * 10 + round);
                    let w = want(&v, Order::Descending);
                    g.sort_slice_with(&mut v, &SortOptions { order: Order::Descending, ..Default::default() }).unwrap();
                    assert_eq!(bits(&v), w);
                }
            });
        }
    });
}

fn temporary_storage_grows_with_n() {
    // Scratch reserved for n items must serve every shorter sort, also
    // across the size where the merge passes change their block shape
    // (2^20 items on every tuning table) and the step-1 tile grows. A
    // host-side computation: no GPU needed (the plans' own test covers
    // every table and more sizes).
    let small = 1usize << 20;
    let ns = [1usize, 4096, 4097, 8193, 100_003, small - 1, small, small + 1, 2 * small, 2 * small + 7, 1 << 24];
    for (algorithm, stable) in [
        (Algorithm::MergeSort, false),
        (Algorithm::MergeSort, true),
        (Algorithm::WarpsortPaper, false),
        (Algorithm::Bitonic, false),
    ] {
        let opts = SortOptions { algorithm, stable, ..Default::default() };
        for (kb, vb) in [(4, 0), (4, 4), (8, 0), (4, 8), (8, 8), (2, 0), (2, 8)] {
            for w in ns.windows(2) {
                let (a, b) = (Gpu::sort_temp_bytes(&opts, w[0], kb, vb), Gpu::sort_temp_bytes(&opts, w[1], kb, vb));
                assert!(a <= b, "{algorithm:?} {kb}+{vb} bytes: {a} bytes for n = {}, {b} for n = {}", w[0], w[1]);
            }
        }
    }
}
