//! Sorts past 2^31 items (the index arithmetic of every step in 64 bits)
//! and of 2^32 keys (past every 32-bit count), checked on the GPU (sorted,
//! and the same multiset as the input); host keys past 2^31 sorted beyond a
//! 2 GiB device limit, checked on the CPU. Skipped with a notice where the
//! GPU has not the ~40 GB (~50 GB for 2^32 keys) they need free.

use warpsort::{Algorithm, Error, Gpu, HostOptions, Order, SortOptions};

warpsort_testkit::tests_main! {
    gpu: [beyond_two_to_the_31, two_to_the_32_keys, host_keys_beyond_two_to_the_31_beyond_the_gpu],
}

/// Past `i32::MAX` and not a multiple of any tile.
const N: usize = (1 << 31) + 4099;

fn input(n: usize) -> Vec<u32> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u32
        })
        .collect()
}

fn beyond_two_to_the_31(g: &Gpu) {
    let (free, _) = g.context().mem_get_info().unwrap();
    let need = N * 4 * 5;
    if free < need {
        eprintln!("SKIPPED: sorts of 2^31 + 4099 keys need {need} bytes of GPU memory, {free} free");
        return;
    }
    let keys = input(N);
    let vals: Vec<u32> = (0..N as u32).collect();
    for algorithm in [Algorithm::MergeSort, Algorithm::WarpsortPaper] {
        let o = SortOptions { algorithm, ..Default::default() };
        let mut dk = g.stream().clone_htod(&keys).unwrap();
        let before = g.check::<u32, u32>(&dk, None, Order::Ascending).unwrap();
        g.sort_with(&mut dk, &o).unwrap();
        let after = g.check::<u32, u32>(&dk, None, Order::Ascending).unwrap();
        assert!(after.confirms(&before), "{algorithm:?} keys: {before:?} -> {after:?}");
        drop(dk);
        let mut dk = g.stream().clone_htod(&keys).unwrap();
        let mut dv = g.stream().clone_htod(&vals).unwrap();
        let before = g.check(&dk, Some(&dv), Order::Descending).unwrap();
        g.sort_pairs(&mut dk, &mut dv, &SortOptions { order: Order::Descending, ..o }).unwrap();
        let after = g.check(&dk, Some(&dv), Order::Descending).unwrap();
        assert!(after.confirms(&before), "{algorithm:?} pairs: {before:?} -> {after:?}");
    }
}

/// 2^32 keys, where a count of them no longer fits 32 bits: the default
/// sorts them (the merge sort: the sample sort's places are 32-bit), both
/// orders; the sample sort asked for them refuses with a typed error before
/// any work, the keys as they were.
fn two_to_the_32_keys(g: &Gpu) {
    const N32: usize = 1 << 32;
    let (free, _) = g.context().mem_get_info().unwrap();
    let need = N32 * 4 * 3;
    if free < need {
        eprintln!("SKIPPED: sorts of 2^32 keys need {need} bytes of GPU memory, {free} free");
        return;
    }
    let mut dk = g.stream().clone_htod(&input(N32)).unwrap();
    let before = g.check::<u32, u32>(&dk, None, Order::Ascending).unwrap();
    let sample = SortOptions { algorithm: Algorithm::SampleSort, ..Default::default() };
    match g.sort_with(&mut dk, &sample) {
        Err(Error::TooLong { len, max }) => assert_eq!((len, max), (N32, u32::MAX as usize)),
        other => panic!("the sample sort of 2^32 keys: {other:?}"),
    }
    let kept = g.check::<u32, u32>(&dk, None, Order::Ascending).unwrap();
    assert_eq!(kept, before, "the refused sort left the keys as they were");
    for order in [Order::Ascending, Order::Descending] {
        g.sort_with(&mut dk, &SortOptions { order, ..Default::default() }).unwrap();
        let after = g.check::<u32, u32>(&dk, None, order).unwrap();
        assert!(after.confirms(&before), "2^32 keys, {order:?}: {before:?} -> {after:?}");
    }
}

/// A wrapping sum of a hash of every key: equal for equal multisets.
fn fingerprint(keys: &[u32]) -> u64 {
    keys.iter().fold(0u64, |acc, &k| acc.wrapping_add((k as u64 ^ 0x9E37_79B9).wrapping_mul(0xbf58_476d_1ce4_e5b9)))
}

fn host_keys_beyond_two_to_the_31_beyond_the_gpu(g: &Gpu) {
    // Host memory for the keys and the sort's runs (2 x 8.6 GB), runs and
    // buckets within a 2 GiB device limit.
    let mut keys = input(N);
    let before = fingerprint(&keys);
    let o = HostOptions { memory_limit: Some(2 << 30), ..Default::default() };
    g.sort_host(&mut keys, &o).unwrap();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "2^31 + 4099 host keys sorted");
    assert_eq!(fingerprint(&keys), before, "same keys");
}
