//! The sample sort's distribution pass (`distribute`) run on the CPU under
//! the emulator (`arch::launch`), against a reference: the classification
//! against sorted splitters, the scan of the counts, and whole passes (one
//! and two levels, keys and values) over sizes and distributions: every key
//! kept once with its value (read, or made: the positions), every key in the bucket its splitters give,
//! buckets in order, none much larger than its share except equality
//! buckets.
#![cfg(feature = "emulate")]

mod common;

use common::Ptr;
use warpsort_kernels::arch::{block_idx, launch, thread_idx};
use warpsort_kernels::config::distribute::{
    BUCKETS, BlockWork, DIRECTORY_CELLS, FINAL_BUCKETS, MAX_OVERSAMPLE, MIN_OVERSAMPLE, SAMPLE_ITEMS, SCAN_ITEMS,
    SCAN_PART, SCAN_THREADS, SPLITTER_KEYS, SegmentWork, WAYS, blocks, count_smem_bytes, sample_smem_bytes,
    sample_threads, scan_smem_bytes, scatter_smem_bytes, segments, tables_smem_bytes,
};
use warpsort_kernels::distribute::{
    CellWord, PART_PREFIX, PART_SUM, bucket_of_label, bucket_offsets, bucket_spans, classify_all, count, directory,
    directory_of, first_tables, sample_splitters, scan_counts, scatter, tables,
};
use warpsort_kernels::encode::{EncodedWord, Encoding, Plain};
use warpsort_kernels::item::Key;
use warpsort_kernels::ordered::{Fields, View, field, mode};

thread_local! {
    /// Whether [`pass_with_tables`] has the scatter make its values (each
    /// its place in the input: the positions that `vals` holds) instead of
    /// reading them, as the argsort's first pass does.
    static MADE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Threads of the emulated blocks: the kernels stride by `block_dim()`, so
/// any count is correct; fewer OS threads run the tests faster than the
/// GPU's `THREADS`.
const EMU_THREADS: u32 = 64;

/// A xorshift generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `n` keys of a distribution by name.
fn input(dist: &str, n: usize, seed: u64) -> Vec<u32> {
    let mut r = Rng(seed | 1);
    let mut v: Vec<u32> = (0..n)
        .map(|i| match dist {
            "all-equal" => 7,
            "few-unique" => (r.next() % 5) as u32,
            "dominating" => {
                if !r.next().is_multiple_of(10) {
                    42
                } else {
                    r.next() as u32
                }
            }
            "zipf" => {
                // Rank r with probability about 1/r over 2^20 ranks.
                let u = (r.next() >> 11) as f64 / (1u64 << 53) as f64;
                (2f64.powf(u * 20.0)) as u32
            }
            "staggered" => (i % 97) as u32 * 1000 + (r.next() % 1000) as u32,
            _ => r.next() as u32,
        })
        .collect();
    match dist {
        "sorted" => v.sort_unstable(),
        "reverse" => v.sort_unstable_by(|a, b| b.cmp(a)),
        _ => {}
    }
    v
}

/// The blocks and segments of one pass over `segs` (key ranges in order,
/// tiling `0..n`), chunks of `chunk` keys, and `IDLE` idle blocks past
/// them (as the second pass's grid has: their counts must still sum to n).
fn plan(segs: &[(u64, u64)], chunk: u64) -> (Vec<BlockWork>, Vec<SegmentWork>) {
    let mut b: Vec<BlockWork> = blocks(segs, chunk).collect();
    b.extend([BlockWork::default(); IDLE]);
    (b, segments(segs, chunk).collect())
}

/// Idle blocks the tests' passes launch past their work.
const IDLE: usize = 3;

/// The second pass's tables made by the kernel (`distribute::tables`) from
/// the first pass's `BUCKETS + 1` offsets, for `max_blocks` blocks.
fn device_tables(offsets: &[u32], chunk: u64, max_blocks: usize, threads: u32) -> (Vec<BlockWork>, Vec<SegmentWork>) {
    assert_eq!(offsets.len(), BUCKETS as usize + 1);
    let (b, sg) = (
        vec![BlockWork { count: 77, ..Default::default() }; max_blocks],
        vec![SegmentWork::default(); BUCKETS as usize],
    );
    let (o, bp, sp) = (Ptr::of(offsets), Ptr::of(&b), Ptr::of(&sg));
    // SAFETY: BUCKETS + 1 offsets, BUCKETS segments, max_blocks blocks, the shared bytes asked.
    launch(1, threads, tables_smem_bytes(threads) as usize, || unsafe {
        tables(o.get().cast_const(), chunk, sp.get(), bp.get(), max_blocks as u64)
    });
    (b, sg)
}

/// The first pass's tables of `n` keys made as its sampling makes them
/// (`distribute::first_tables`, one block of `threads`), and the segment
/// each thread was given back.
fn device_first_tables(n: u64, chunk: u64, threads: u32) -> (Vec<BlockWork>, Vec<SegmentWork>) {
    let count = n.div_ceil(chunk) as usize;
    let (b, sg) = (vec![BlockWork { count: 77, ..Default::default() }; count], vec![SegmentWork::default(); 1]);
    let given = vec![SegmentWork::default(); threads as usize];
    let (bp, sp, gp) = (Ptr::of(&b), Ptr::of(&sg), Ptr::of(&given));
    // SAFETY: one segment, a block a chunk; a slot a thread for what it was given.
    launch(1, threads, 0, || unsafe {
        let seg = first_tables(n, chunk, sp.get(), bp.get());
        *gp.get().add(thread_idx() as usize) = seg;
    });
    assert!(given.iter().all(|g| *g == sg[0]), "n={n} chunk={chunk}: every thread given the segment");
    (b, sg)
}

/// What one pass made: the keys and values by bucket, each segment's
/// splitters, where every bucket starts.
struct Pass<T> {
    keys: Vec<T>,
    vals: Vec<u32>,
    splitters: Vec<T>,
    offsets: Vec<u32>,
}

/// A key word of the pass: `u32` or `u64`.
trait Word: EncodedWord + CellWord + Key + std::fmt::Debug + Send + Sync + 'static {}
impl Word for u32 {}
impl Word for u64 {}

/// Samples a way of the tests' passes (the sort's at 2^26 keys).
const OVERSAMPLE: u32 = 16;

/// Runs one distribution pass over `segs` of `keys` (with `vals`),
/// `OVERSAMPLE` samples a way.
fn pass<T: Word>(keys: &[T], vals: &[u32], segs: &[(u64, u64)], chunk: u64) -> Pass<T> {
    pass_sampled(keys, vals, segs, chunk, OVERSAMPLE, Plain)
}

/// Runs one distribution pass over `segs` of `keys` (with `vals`, stably;
/// keys alone, in any order within a bucket, when `vals` is empty),
/// `oversample` samples a way, each key read through `enc`.
fn pass_sampled<T: Word>(
    keys: &[T],
    vals: &[u32],
    segs: &[(u64, u64)],
    chunk: u64,
    oversample: u32,
    enc: impl Encoding<T> + Sync,
) -> Pass<T> {
    pass_with_tables(keys, vals, segs, plan(segs, chunk), oversample, enc)
}

/// [`pass_sampled`] by the tables given (`BlockWork` entries, idle ones
/// past the work among them, and `SegmentWork` ones).
fn pass_with_tables<T: Word>(
    keys: &[T],
    vals: &[u32],
    segs: &[(u64, u64)],
    (blocks, segments): (Vec<BlockWork>, Vec<SegmentWork>),
    oversample: u32,
    enc: impl Encoding<T> + Sync,
) -> Pass<T> {
    let n = keys.len();
    let kb = size_of::<T>();
    let splitters = vec![T::default(); segs.len() * WAYS as usize];
    let (k, v, sg, bl, sp) = (Ptr::of(keys), Ptr::of(vals), Ptr::of(&segments), Ptr::of(&blocks), Ptr::of(&splitters));
    // SAFETY (each launch): the buffers are sized as the kernel asks.
    let threads = sample_threads(oversample);
    launch(segs.len() as u32, threads, sample_smem_bytes(kb as u32, oversample) as usize, || unsafe {
        let (k, seg, sp) = (k.get().cast_const(), *sg.get().add(block_idx() as usize), sp.get());
        sample_splitters::<T, { SAMPLE_ITEMS as usize }>(k, seg, sp, oversample, enc)
    });
    let m = blocks.len() * BUCKETS as usize;
    // Not zeroed: every count is written, the idle blocks' zeros too.
    let counts = vec![0xdead_u32; m];
    let labels = vec![u8::MAX; n];
    let (c, lb) = (Ptr::of(&counts), Ptr::of(&labels));
    launch(blocks.len() as u32, EMU_THREADS, count_smem_bytes(kb as u32) as usize, || unsafe {
        count(k.get().cast_const(), bl.get().cast_const(), sp.get().cast_const(), c.get(), lb.get(), enc)
    });
    let starts = scan(&counts, EMU_THREADS, 0);
    let st = Ptr::of(&starts);
    assert_eq!(starts[m], n as u64, "the counts sum to n");
    let (out_keys, out_vals) = (vec![T::default(); n], vec![u32::MAX; vals.len()]);
    let (ok, ov) = (Ptr::of(&out_keys), Ptr::of(&out_vals));
    let val_bytes = if vals.is_empty() { 0 } else { 4 };
    let made = MADE.get();
    launch(blocks.len() as u32, EMU_THREADS, scatter_smem_bytes(kb as u32, val_bytes) as usize, || unsafe {
        let (ks, ls, bs, ss) =
            (k.get().cast_const(), lb.get().cast_const(), bl.get().cast_const(), sp.get().cast_const());
        // SAFETY: the scatter reads the values of places below n.
        let value = |i: usize| if made { i as u32 } else { *v.get().add(i) };
        if vals.is_empty() {
            scatter::<T, u32, false>(ks, ls, |_| 0, ok.get(), std::ptr::null_mut(), bs, ss, st.get(), enc)
        } else {
            scatter::<T, u32, true>(ks, ls, value, ok.get(), ov.get(), bs, ss, st.get(), enc)
        }
    });
    let offsets = vec![0u32; segs.len() * BUCKETS as usize + 1];
    let of = Ptr::of(&offsets);
    launch(3, 64, 0, || unsafe {
        bucket_offsets(sg.get().cast_const(), st.get().cast_const(), of.get(), segs.len() as u64, n as u64)
    });
    Pass { keys: out_keys, vals: out_vals, splitters, offsets }
}

/// Checks a pass whose values were the input positions: the keys and
/// values a permutation of the input's, each value with its key, bucket
/// offsets rising to `n` and within their segment, every key in the bucket
/// its segment's splitters give, each bucket in input order; returns
/// the largest bucket that is not an equality bucket.
fn check<T: Word>(keys: &[T], segs: &[(u64, u64)], p: &Pass<T>, what: &str) -> u64 {
    let n = keys.len();
    let mut seen = vec![false; n];
    for (i, (&k, &v)) in p.keys.iter().zip(&p.vals).enumerate() {
        let v = v as usize;
        assert!(v < n && !std::mem::replace(&mut seen[v], true), "{what}: value {v} at {i} lost or doubled");
        assert_eq!(keys[v], k, "{what}: value {v} at {i} moved without its key");
    }
    assert!(p.offsets.windows(2).all(|w| w[0] <= w[1]) && *p.offsets.last().unwrap() == n as u32, "{what}: offsets");
    let mut largest = 0;
    for (s, &(start, end)) in segs.iter().enumerate() {
        let b = BUCKETS as usize;
        assert_eq!(p.offsets[s * b] as u64, start, "{what}: segment {s} starts where it did");
        let next = if s + 1 < segs.len() { p.offsets[(s + 1) * b] as u64 } else { n as u64 };
        assert_eq!(next, end, "{what}: segment {s} ends where it did");
        if start == end {
            continue;
        }
        let split = &p.splitters[s * WAYS as usize..][..WAYS as usize - 1];
        assert!(split.windows(2).all(|w| w[0] <= w[1]), "{what}: segment {s}'s splitters unsorted");
        for j in 0..b {
            let (lo, hi) = (p.offsets[s * b + j] as u64, p.offsets[s * b + j + 1] as u64);
            for i in lo..hi {
                let got = reference_bucket(split, p.keys[i as usize]) as usize;
                assert_eq!(got, j, "{what}: key {:?} at {i} in bucket {j} of segment {s}", p.keys[i as usize]);
            }
            let moved = &p.vals[lo as usize..hi as usize];
            assert!(moved.windows(2).all(|w| w[0] < w[1]), "{what}: bucket {j} of segment {s} not in input order");
            if j % 2 == 0 {
                largest = largest.max(hi - lo);
            }
        }
    }
    largest
}

/// Checks a pass of keys alone against the stable pass `with` of the same
/// keys with their positions (checked by [`check`]): the same buckets,
/// each holding the same keys.
fn check_keys_alone<T: Word + Ord>(alone: &Pass<T>, with: &Pass<T>, what: &str) {
    assert_eq!(alone.offsets, with.offsets, "{what}: keys alone, the buckets' offsets");
    assert_eq!(alone.splitters, with.splitters, "{what}: keys alone, the splitters");
    for w in alone.offsets.windows(2) {
        let (lo, hi) = (w[0] as usize, w[1] as usize);
        let (mut a, mut b) = (alone.keys[lo..hi].to_vec(), with.keys[lo..hi].to_vec());
        a.sort_unstable();
        b.sort_unstable();
        assert!(a == b, "{what}: keys alone, the bucket at {lo}..{hi} holds other keys");
    }
}

/// The bucket of `k` among sorted splitters `split` (`WAYS - 1`): `2i`
/// between splitters `i - 1` and `i`, `2i + 1` equal to splitter `i`.
fn reference_bucket<T: PartialOrd>(split: &[T], k: T) -> u32 {
    let below = split.iter().filter(|&s| *s < k).count();
    2 * below as u32 + (below < split.len() && split[below] == k) as u32
}

/// `split` (`WAYS - 1` sorted splitters) with the pad past them that the
/// kernels load: the last again.
fn padded<T: Copy>(split: &[T]) -> Vec<T> {
    let mut sorted = split.to_vec();
    sorted.push(*split.last().unwrap());
    sorted
}

#[test]
fn labels_give_the_buckets() {
    let split: Vec<u32> = (1..WAYS).map(|i| i * 10).collect();
    let sorted = padded(&split);
    for k in (0..WAYS * 10 + 20).chain([u32::MAX, 1 << 31]) {
        let below = split.iter().filter(|&&s| s < k).count() as u32;
        // SAFETY: WAYS keys.
        assert_eq!(unsafe { bucket_of_label(sorted.as_ptr(), below, k) }, reference_bucket(&split, k), "key {k}");
    }
}

/// Random splitters of `T` over `spread` values from `base` (sorted, with
/// their pad), and keys around them: equal to one, between, below the
/// least and above the greatest.
fn splitters_and_keys<T: Word>(r: &mut Rng, base: u64, spread: u64) -> (Vec<T>, Vec<T>) {
    let mut split: Vec<u64> = (0..WAYS - 1).map(|_| base.wrapping_add(r.next() % spread)).collect();
    split.sort_unstable();
    let mut keys: Vec<u64> = (0..64).map(|_| base.wrapping_add(r.next() % (spread + 2))).collect();
    keys.extend((0..16).map(|_| split[(r.next() % split.len() as u64) as usize]));
    keys.extend([split[0], split[0].saturating_sub(1), 0, split[WAYS as usize - 2], u64::MAX]);
    let t = |v: &[u64]| v.iter().map(|&x| T::from_u64(x)).collect::<Vec<T>>();
    let (mut sorted, keys) = (t(&split), t(&keys));
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (padded(&sorted), keys)
}

/// Every key of [`splitters_and_keys`] classified through the splitters'
/// directory, four at a time as the count kernel runs them, against the
/// reference; the directory made by a block (`directory`, emulated) is the
/// host's (`directory_of`).
fn classify_against_the_reference<T: Word>(seed: u64) {
    let mut r = Rng(seed);
    for round in 0..300 {
        // Few values, spread ones, all of the word, clustered ones far up.
        let spread = [1u64, 4, 64, 1 << 20, 1 << 32, u64::MAX / 3][round % 6];
        let base = if round % 4 == 3 { r.next() >> 1 } else { 0 };
        let (sorted, keys) = splitters_and_keys::<T>(&mut r, base, spread);
        let split = &sorted[..WAYS as usize - 1];
        let (d, entries) = directory_of(&sorted);
        assert!(d.depth >= 1 && d.depth <= 8, "{d:?}");
        for chunk in keys.chunks_exact(4) {
            let four: [T; 4] = std::array::from_fn(|i| chunk[i]);
            // SAFETY: WAYS splitters in order with their pad, and their directory.
            let got = unsafe { classify_all(sorted.as_ptr(), entries.as_ptr(), d, &four) };
            for (k, b) in four.iter().zip(got) {
                assert_eq!(b, reference_bucket(split, *k), "key {k:?} among {split:?} ({d:?})");
            }
        }
        if round % 10 == 0 {
            let firsts = vec![0u8; DIRECTORY_CELLS as usize + 1];
            let (made, widest) = (vec![0u16; entries.len()], vec![u32::MAX; 1]);
            let (s, f, m, w) = (Ptr::of(&sorted), Ptr::of(&firsts), Ptr::of(&made), Ptr::of(&widest));
            launch(1, EMU_THREADS, 0, || {
                // SAFETY: WAYS keys in order, the regions the directory asks.
                let got = unsafe { directory(s.get().cast_const(), f.get(), m.get(), w.get()) };
                assert_eq!(got, d, "the block's directory's shape");
            });
            assert_eq!(made, entries.to_vec(), "the block's directory ({d:?})");
        }
    }
}

#[test]
fn classify_matches_the_reference() {
    classify_against_the_reference::<u32>(99);
    classify_against_the_reference::<u64>(7);
}

/// `scan_counts` of `counts` by blocks of `threads`, the first `done`
/// parts published already as sums alone (as if their blocks had not
/// finished their look-back): the starts it writes (`u64::MAX` where it
/// writes none).
fn scan(counts: &[u32], threads: u32, done: usize) -> Vec<u64> {
    let m = counts.len();
    let part = (threads * SCAN_ITEMS) as usize;
    let parts = m.div_ceil(part).max(1);
    let mut state = vec![0u64; parts + 1];
    state[0] = done as u64;
    for p in 0..done {
        state[1 + p] = PART_SUM | counts[p * part..m.min((p + 1) * part)].iter().sum::<u32>() as u64;
    }
    let starts = vec![u64::MAX; m + 1];
    let (c, s, st) = (Ptr::of(counts), Ptr::of(&starts), Ptr::of(&state));
    // SAFETY: m counts, m + 1 starts, a state word a part and the ticket, zero past the published ones.
    launch((parts - done) as u32, threads, scan_smem_bytes(threads) as usize, || unsafe {
        scan_counts(c.get().cast_const(), s.get(), m as u64, st.get())
    });
    assert!(state[1 + done..].iter().all(|&w| w & !0xffff_ffff == PART_PREFIX), "every part ends with its prefix");
    starts
}

#[test]
fn the_scan_of_the_counts() {
    for m in [0usize, 1, 5, 127, 128, 129, 1000, 1024, 1025, 4099, 20_000, 100_003] {
        let counts: Vec<u32> = (0..m as u32).map(|i| i * 7 % 13).collect();
        assert_prefix_sums(&counts, &scan(&counts, 64, 0), &format!("m={m}"));
    }
    // The kernel's block size: parts of SCAN_PART.
    let counts: Vec<u32> = (0..3 * SCAN_PART + 17).map(|i| i % 1000).collect();
    assert_prefix_sums(&counts, &scan(&counts, SCAN_THREADS, 0), "SCAN_THREADS");
}

#[test]
fn the_scans_look_back_walks_past_parts_that_published_sums_alone() {
    // 100 parts of 1024 counts; the look-back of the later ones reads
    // windows of 32 parts back to the first part.
    let counts: Vec<u32> = (0..100 * 1024 + 5).map(|i| i * 11 % 17).collect();
    let mut want = vec![0u64];
    for &c in &counts {
        want.push(want.last().unwrap() + c as u64);
    }
    for done in [1, 31, 32, 33, 64, 100] {
        let starts = scan(&counts, 64, done);
        let from = done * 1024;
        assert_eq!(starts[from..], want[from..], "done={done}");
        assert!(starts[..from].iter().all(|&s| s == u64::MAX), "done={done}: the published parts untouched");
    }
}

/// `starts` is the exclusive prefix sum of `counts`, the total last.
fn assert_prefix_sums(counts: &[u32], starts: &[u64], what: &str) {
    let mut at = 0;
    for (i, &c) in counts.iter().enumerate() {
        assert_eq!(starts[i], at, "{what} i={i}");
        at += c as u64;
    }
    assert_eq!(starts[counts.len()], at, "{what}: the total");
}

#[test]
fn the_second_pass_tables_made_on_the_gpu_are_the_hosts() {
    let mut r = Rng(99);
    let b = BUCKETS as usize;
    // Offsets of the first pass's buckets: random, some empty; one bucket
    // of everything; every bucket empty but the last; equal buckets.
    let mut cases: Vec<Vec<u32>> = Vec::new();
    for n in [0u32, 1, 1000, 100_003, 1 << 22] {
        let mut cuts: Vec<u32> = (0..b - 1)
            .map(|_| if r.next().is_multiple_of(3) { 0 } else { (r.next() % (n as u64 + 1)) as u32 })
            .collect();
        cuts.sort_unstable();
        cases.push([0].into_iter().chain(cuts).chain([n]).collect());
        cases.push([0].into_iter().chain(std::iter::repeat_n(n / 2, b - 1)).chain([n]).collect());
        cases.push(std::iter::repeat_n(0, b).chain([n]).collect());
        cases.push((0..=b as u32).map(|i| (i as u64 * n as u64 / b as u64) as u32).collect());
    }
    for off in &cases {
        let segs: Vec<(u64, u64)> = off.windows(2).map(|w| (w[0] as u64, w[1] as u64)).collect();
        for chunk in [1u64, 7, 4096, 16384] {
            let want: Vec<BlockWork> = blocks(&segs, chunk).collect();
            let want_segs: Vec<SegmentWork> = segments(&segs, chunk).collect();
            let max_blocks = want.len() + 5;
            for threads in [64, 512] {
                let (got, got_segs) = device_tables(off, chunk, max_blocks, threads);
                let what = format!("n={} chunk={chunk} threads={threads}", off[b]);
                assert!(got_segs == want_segs, "{what}: segments");
                assert!(got[..want.len()] == want[..], "{what}: blocks");
                assert!(got[want.len()..].iter().all(|w| *w == BlockWork::default()), "{what}: idle blocks");
            }
        }
    }
}

#[test]
fn the_first_pass_tables_made_by_its_sampling_are_the_hosts() {
    for n in [0u64, 1, 1000, 100_003, 1 << 22] {
        for chunk in [1u64, 7, 4096, 16384] {
            if n / chunk > 1 << 16 {
                continue; // (the same loop, longer)
            }
            let whole = [(0, n)];
            let want: Vec<BlockWork> = blocks(&whole, chunk).collect();
            let want_segs: Vec<SegmentWork> = segments(&whole, chunk).collect();
            for threads in [64, 512] {
                let (got, got_segs) = device_first_tables(n, chunk, threads);
                let what = format!("n={n} chunk={chunk} threads={threads}");
                assert!(got_segs == want_segs, "{what}: the segment");
                assert!(got == want, "{what}: blocks");
            }
        }
    }
}

#[test]
fn one_pass_over_sizes_and_distributions() {
    let dists = ["uniform", "sorted", "reverse", "all-equal", "few-unique", "dominating", "zipf", "staggered"];
    for n in [0usize, 1, 31, 33, 1000, 8193, 100_003] {
        for dist in dists {
            let keys = input(dist, n, n as u64 * 31 + dist.len() as u64);
            let vals: Vec<u32> = (0..n as u32).collect();
            let segs = [(0, n as u64)];
            let p = pass(&keys, &vals, &segs, 4096);
            let largest = check(&keys, &segs, &p, &format!("{dist} n={n}"));
            check_keys_alone(&pass(&keys, &[], &segs, 4096), &p, &format!("{dist} n={n}"));
            // A bucket between splitters holds about its share, n / WAYS,
            // give or take the sampling: never 4 times that.
            if n >= 8193 {
                let share = n as u64 / WAYS as u64;
                assert!(
                    largest <= 4 * share + OVERSAMPLE as u64,
                    "{dist} n={n}: a bucket of {largest} (share {share})"
                );
            }
        }
    }
}

/// The positions the scatter makes (argsort's first pass) are the ones it
/// reads: the same pass, item for item, for keys and values of up to 8
/// bytes (held from the first read) and wider (`u64` keys: read again).
#[test]
fn positions_made_are_those_read() {
    for (dist, n) in [("uniform", 100_003usize), ("few-unique", 65_536), ("sorted", 4097)] {
        let keys = input(dist, n, n as u64 + 5);
        let wide: Vec<u64> = keys.iter().map(|&k| (k as u64) << 20 | 0x5a5a).collect();
        let vals: Vec<u32> = (0..n as u32).collect();
        let segs = [(0, n as u64)];
        let (read, read_wide) = (pass(&keys, &vals, &segs, 4096), pass(&wide, &vals, &segs, 4096));
        MADE.set(true);
        let (made, made_wide) = (pass(&keys, &vals, &segs, 4096), pass(&wide, &vals, &segs, 4096));
        MADE.set(false);
        check(&keys, &segs, &made, &format!("{dist} n={n} made"));
        check(&wide, &segs, &made_wide, &format!("u64 {dist} n={n} made"));
        assert!(made.keys == read.keys && made.vals == read.vals, "{dist} n={n}: made and read differ");
        assert!(made_wide.keys == read_wide.keys && made_wide.vals == read_wide.vals, "u64 {dist} n={n}: differ");
    }
}

#[test]
fn more_samples_make_even_buckets() {
    // The most samples a way (half as many for u64 keys, as the sort's
    // shared memory allows): every bucket between splitters within twice
    // its share, where the tests' 16 a way allow about 4 times.
    let n = 65_537usize;
    let share = n as u64 / WAYS as u64;
    let segs = [(0, n as u64)];
    let vals: Vec<u32> = (0..n as u32).collect();
    for dist in ["uniform", "zipf"] {
        let keys = input(dist, n, 11);
        let p = pass_sampled(&keys, &vals, &segs, 16384, MAX_OVERSAMPLE, Plain);
        let largest = check(&keys, &segs, &p, &format!("{dist} oversampled"));
        assert!(largest <= 2 * share, "{dist}: a bucket of {largest} (share {share})");
    }
    let wide: Vec<u64> = input("uniform", n, 13).iter().map(|&k| (k as u64) << 20 | 0x5a5a).collect();
    let p = pass_sampled(&wide, &vals, &segs, 16384, MAX_OVERSAMPLE / 2, Plain);
    let largest = check(&wide, &segs, &p, "u64 oversampled");
    assert!(largest <= 2 * share, "u64: a bucket of {largest} (share {share})");
}

#[test]
fn a_pass_over_u64_keys() {
    // Keys whose high halves decide, whose low halves decide, and both.
    for (what, n) in [("high", 50_001usize), ("low", 50_001), ("mixed", 70_003)] {
        let mut r = Rng(n as u64);
        let keys: Vec<u64> = (0..n)
            .map(|_| match what {
                "high" => (r.next() % 1000) << 40,
                "low" => r.next() % 100_000,
                _ => r.next(),
            })
            .collect();
        let vals: Vec<u32> = (0..n as u32).collect();
        let segs = [(0, n as u64)];
        let p = pass(&keys, &vals, &segs, 4096);
        let largest = check(&keys, &segs, &p, &format!("u64 {what}"));
        check_keys_alone(&pass(&keys, &[], &segs, 4096), &p, &format!("u64 {what}"));
        let share = n as u64 / WAYS as u64;
        assert!(largest <= 4 * share + OVERSAMPLE as u64, "u64 {what}: a bucket of {largest} (share {share})");
    }
}

#[test]
fn two_passes_then_each_bucket_sorted_is_the_sort() {
    for (dist, n) in [("uniform", 100_003usize), ("dominating", 100_003), ("few-unique", 100_000), ("sorted", 65_536)] {
        let keys = input(dist, n, 7);
        let vals: Vec<u32> = (0..n as u32).collect();
        // The first pass's tables made as its sampling makes them.
        let first = pass_with_tables(
            &keys,
            &vals,
            &[(0, n as u64)],
            device_first_tables(n as u64, 8192, EMU_THREADS),
            OVERSAMPLE,
            Plain,
        );
        check(&keys, &[(0, n as u64)], &first, dist);
        // The first pass's buckets are the second's segments, its tables
        // made by the kernel (idle blocks past them) as the sort makes them.
        let segs: Vec<(u64, u64)> = first.offsets.windows(2).map(|w| (w[0] as u64, w[1] as u64)).collect();
        let (host_blocks, _) = plan(&segs, 2048);
        let tables = device_tables(&first.offsets, 2048, host_blocks.len() + 2, EMU_THREADS);
        // The fewest samples a way in the second pass: 512 segments of
        // 4096 samples each, sorted by emulated warps' shuffles, made this
        // test the emulator's slowest by far (its buckets' balance is
        // `more_samples_make_even_buckets`'s).
        let second = pass_with_tables(&first.keys, &vals, &segs, tables, MIN_OVERSAMPLE, Plain);
        check(&first.keys, &segs, &second, dist);
        // Keys alone through both passes: the same buckets, the same keys in each.
        let alone = pass_sampled(&first.keys, &[], &segs, 2048, MIN_OVERSAMPLE, Plain);
        check_keys_alone(&alone, &second, dist);
        // Each final bucket's span from both passes' splitters holds its
        // keys; only the first and the last range buckets are open.
        let splitters: Vec<u32> = second.splitters.iter().chain(&first.splitters).copied().collect();
        assert_eq!(splitters.len(), SPLITTER_KEYS as usize);
        let spans = vec![0u32; 2 * FINAL_BUCKETS as usize];
        let (sp, out) = (Ptr::of(&splitters), Ptr::of(&spans));
        // SAFETY: both passes' splitters, two keys a final bucket.
        launch(3, 64, 0, || unsafe { bucket_spans(sp.get().cast_const(), out.get()) });
        let mut open = 0;
        for (j, w) in second.offsets.windows(2).enumerate() {
            let (lo, hi) = (spans[2 * j], spans[2 * j + 1]);
            let own = &second.keys[w[0] as usize..w[1] as usize];
            if lo <= hi {
                assert!(j % 2 == 0 && own.iter().all(|k| (lo..=hi).contains(k)), "{dist}: bucket {j} past {lo}..={hi}");
            } else if j % 2 == 0 && !own.is_empty() {
                open += 1;
            }
        }
        assert!(open <= 2, "{dist}: {open} range buckets with keys and no span");
        // Every final bucket sorted on its own: the whole input sorted.
        let mut got = second.keys.clone();
        for w in second.offsets.windows(2) {
            got[w[0] as usize..w[1] as usize].sort_unstable();
        }
        let mut want = keys.clone();
        want.sort_unstable();
        assert!(got == want, "{dist} n={n}: the buckets sorted are not the sort");
        // The values followed their keys through both passes.
        let moved = second.vals.iter().map(|&v| first.vals[v as usize]);
        assert!(moved.zip(&second.keys).all(|(v, &k)| keys[v as usize] == k), "{dist}: values");
        let largest = (0..second.offsets.len() - 1)
            .filter(|j| j % 2 == 0)
            .map(|j| (second.offsets[j + 1] - second.offsets[j]) as u64)
            .max()
            .unwrap();
        let share = n as u64 / (WAYS * WAYS) as u64;
        eprintln!("{dist} n={n}: largest bucket {largest}, share {share}");
    }
}

/// A pass over keys as stored, read through their view, is the pass over
/// their ordered words: the same splitters, buckets and (ordered) keys
/// with the same values, keys alone in the same buckets. Floats (both
/// orders, with -0.0, infinities and NaNs among them), signed keys, and
/// tuples filling a `u64` (`(u32, u32)`, `(f32, i32)` descending, an
/// 8-byte string).
#[test]
fn a_first_pass_through_a_view_is_the_pass_of_the_ordered_words() {
    fn same<T: Word + Ord>(stored: &[T], view: View, what: &str) {
        let words: Vec<T> = stored.iter().map(|&k| Encoding::<T>::apply(view, k)).collect();
        let n = stored.len();
        let (vals, segs) = ((0..n as u32).collect::<Vec<_>>(), [(0, n as u64)]);
        let want = pass(&words, &vals, &segs, 4096);
        check(&words, &segs, &want, what);
        let got = pass_sampled(stored, &vals, &segs, 4096, OVERSAMPLE, view);
        assert_eq!((&got.splitters, &got.offsets), (&want.splitters, &want.offsets), "{what}: splitters, buckets");
        assert!(got.keys == want.keys && got.vals == want.vals, "{what}: the items");
        let alone = pass_sampled(stored, &[], &segs, 4096, OVERSAMPLE, view);
        check_keys_alone(&alone, &want, what);
    }
    let n = 20_011;
    let mut r = Rng(5);
    let special = [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, 1.5, -1.5];
    let floats: Vec<u32> = (0..n)
        .map(|i| if i % 7 == 0 { special[i % 8].to_bits() } else { (r.next() as u32 >> 8) ^ (i as u32) << 31 })
        .collect();
    for m in [mode::FLOAT, mode::FLOAT | mode::DESCENDING] {
        same(&floats, View::of_mode(m, 32), &format!("f32 mode {m}"));
    }
    let signed: Vec<u64> = (0..n).map(|_| r.next() >> (r.next() % 64)).collect();
    same(&signed, View::of_mode(mode::SIGNED, 64), "i64");
    let tuples: Vec<u64> = (0..n).map(|_| r.next() & 0xffff_0000_00ff_ffff).collect();
    let layouts = [
        ("(u32, u32)", Fields::new(8).with(0, 4, 0).with(4, 4, 0), 0),
        (
            "(f32, Reverse<i32>) descending",
            Fields::new(8).with(4, 4, field::FLOAT).with(0, 4, field::SIGNED | field::DESCENDING),
            mode::DESCENDING,
        ),
        ("[u8; 8]", Fields::new(8).with(0, 8, field::BIG_ENDIAN), 0),
    ];
    for (what, f, m) in layouts {
        same(&tuples, View::of_fields(f, 64, m).unwrap(), what);
    }
}
