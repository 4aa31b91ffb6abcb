//! A key type with its order written in Rust, sorted on the GPU.
//!
//! ```text
//! cargo run --release -p warpsort-examples --bin custom_key -- [N [LARGEST]]
//! ```
//!
//! `custom_key/key` is a `no_std` crate with two key types: `Trade` (venue
//! ascending, price descending, id ascending: `#[derive(Order)]`) and `Hand`
//! (rock, paper, scissors: a hand-written `less`, an order with cycles, not
//! a strict weak order). `build.rs`
//! compiles warpsort's kernels for each with `warpsort-build`. The program
//! sorts keys, key-value pairs (stable and not) and argsorts over sizes and
//! input distributions, both ways a derived order sorts: by `less` on a
//! handle with the type's kernels, and as ordered words on warpsort's own
//! (`Gpu::new`, no kernels built); checks every result against the CPU (the
//! same `less`), checks that the `Hand` sorts keep every item (merge and
//! bitonic sorts) and that warpsort's own kernels refuse `Hand`, and times a
//! sort of `N` trades (default 2^24) both ways beside the built-in tuple
//! with the same fields. It exits with an error at the first result that
//! differs.
//! `LARGEST` (default 1000003) caps the checked sizes.

use std::cmp::Reverse;
use std::time::Instant;

use trade_key::{Hand, Trade};
use warpsort::cudarc::driver::{CudaSlice, DeviceRepr};
use warpsort::{Algorithm, Error, Gpu, SortOptions, Tuple};
use warpsort_key::Order;

const TRADE_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/warpsort_trade.ptx"));
const HAND_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/warpsort_hand.ptx"));

type Fail = Box<dyn std::error::Error>;

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

/// `n` trades drawn from `dist`.
fn trades(dist: &str, n: usize, rng: &mut Rng) -> Vec<Trade> {
    let mut v: Vec<Trade> = (0..n)
        .map(|i| {
            let r = rng.next();
            let (venue, price) = match dist {
                "all-equal" => (7, 1.5),
                "few-unique" => ((r % 3) as u32, [0.5, -0.0, 0.0][(r >> 8) as usize % 3]),
                "dominating" if !r.is_multiple_of(10) => (3, 2.5),
                "special" => (
                    (r % 2) as u32,
                    [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0][(r >> 8) as usize % 6],
                ),
                _ => ((r % 1000) as u32, ((r >> 20) % 100_000) as f32 / 8.0 - 5000.0),
            };
            let id = if dist == "all-equal" { 42 } else { (r >> 40) as u32 % (n as u32).max(1) * 7 + i as u32 % 7 };
            Trade { venue, price, id }
        })
        .collect();
    match dist {
        "sorted" => v.sort_by(Order::order),
        "reverse" => v.sort_by(|a, b| b.order(a)),
        _ => {}
    }
    v
}

/// Whether two trades are the same bits (NaN payloads and zeros' signs included).
fn same(a: &[Trade], b: &[Trade]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| x.venue == y.venue && x.price.to_bits() == y.price.to_bits() && x.id == y.id)
}

/// Every operation on `keys`, checked against the CPU.
fn check_trades(gpu: &Gpu, keys: &[Trade], what: &str) -> Result<(), Fail> {
    let s = gpu.stream();
    let n = keys.len();
    let mut want = keys.to_vec();
    want.sort_by(Order::order); // stable
    let mut perm: Vec<u32> = (0..n as u32).collect();
    perm.sort_by(|&a, &b| keys[a as usize].order(&keys[b as usize]));
    let fail = |op: &str| -> Fail { format!("{op} of {n} trades ({what}) differs from the CPU").into() };
    let stable = SortOptions { stable: true, ..Default::default() };
    for opts in [SortOptions::default(), stable] {
        let mut d = s.clone_htod(keys)?;
        gpu.sort_custom(&mut d, &opts)?;
        if !same(&s.clone_dtoh(&d)?, &want) {
            return Err(fail("sort_custom"));
        }
    }
    // Key-value: the values are input positions.
    let idx: Vec<u32> = (0..n as u32).collect();
    let (mut dk, mut dv) = (s.clone_htod(keys)?, s.clone_htod(&idx)?);
    gpu.sort_custom_pairs(&mut dk, &mut dv, &stable)?;
    if !same(&s.clone_dtoh(&dk)?, &want) || s.clone_dtoh(&dv)? != perm {
        return Err(fail("stable sort_custom_pairs"));
    }
    let idx64: Vec<u64> = (0..n as u64).collect();
    let (mut dk, mut dv) = (s.clone_htod(keys)?, s.clone_htod(&idx64)?);
    gpu.sort_custom_pairs(&mut dk, &mut dv, &Default::default())?;
    let (gk, gv) = (s.clone_dtoh(&dk)?, s.clone_dtoh(&dv)?);
    let mut seen = vec![false; n];
    let moved = gv
        .iter()
        .zip(&gk)
        .all(|(&v, k)| !std::mem::replace(&mut seen[v as usize], true) && same(&[keys[v as usize]], &[*k]));
    if !same(&gk, &want) || !moved {
        return Err(fail("sort_custom_pairs"));
    }
    let d = s.clone_htod(keys)?;
    let mut p = s.alloc_zeros::<u32>(n.max(1))?;
    let mut p = p.slice_mut(0..n);
    gpu.argsort_custom(&d, &mut p, &stable)?;
    if s.clone_dtoh(&p)? != perm {
        return Err(fail("stable argsort_custom"));
    }
    let mut p64 = s.alloc_zeros::<u64>(n.max(1))?;
    let mut p64 = p64.slice_mut(0..n);
    gpu.argsort_custom(&d, &mut p64, &Default::default())?;
    let got: Vec<Trade> = s.clone_dtoh(&p64)?.iter().map(|&i| keys[i as usize]).collect();
    if !same(&got, &want) {
        return Err(fail("argsort_custom"));
    }
    let mut host = keys.to_vec();
    gpu.sort_custom_slice(&mut host, &Default::default())?;
    if !same(&host, &want) {
        return Err(fail("sort_custom_slice"));
    }
    Ok(())
}

/// Sorts by an order with cycles must keep every item, once.
fn check_hands(gpu: &Gpu, n: usize, rng: &mut Rng) -> Result<(), Fail> {
    let s = gpu.stream();
    let keys: Vec<Hand> = (0..n as u32).map(|tag| Hand { hand: (rng.next() % 3) as u32, tag }).collect();
    let mut want = keys.clone();
    want.sort();
    let kept = |mut got: Vec<Hand>| {
        got.sort();
        got == want
    };
    let stable = SortOptions { stable: true, ..Default::default() };
    for opts in [SortOptions::default(), stable, SortOptions::algorithm(Algorithm::Bitonic)] {
        let mut d = s.clone_htod(&keys)?;
        gpu.sort_custom(&mut d, &opts)?;
        let vals: Vec<u32> = (0..n as u32).collect();
        let (mut dk, mut dv) = (s.clone_htod(&keys)?, s.clone_htod(&vals)?);
        gpu.sort_custom_pairs(&mut dk, &mut dv, &opts)?;
        let (gk, gv) = (s.clone_dtoh(&dk)?, s.clone_dtoh(&dv)?);
        let paired = gk.iter().zip(&gv).all(|(k, &v)| keys[v as usize] == *k);
        if !kept(s.clone_dtoh(&d)?) || !kept(gk) || !paired {
            return Err(format!("a sort of {n} hands (an order with cycles) lost or changed an item").into());
        }
    }
    Ok(())
}

/// Gkeys/s of the merge and the bitonic sort of `fresh`'s keys by `sort`
/// on `on`'s stream: each of 3 timed runs (after a warm-up) sorts a fresh
/// copy, the copy included.
fn rates<T: DeviceRepr>(
    on: &Gpu,
    fresh: &CudaSlice<T>,
    sort: impl Fn(&mut CudaSlice<T>, &SortOptions) -> Result<(), Error>,
) -> Result<String, Fail> {
    let mut d = fresh.clone();
    let mut out = Vec::new();
    for algo in [Algorithm::MergeSort, Algorithm::Bitonic] {
        let opts = SortOptions::algorithm(algo);
        let mut run = || -> Result<(), Error> {
            on.stream().memcpy_dtod(fresh, &mut d)?;
            sort(&mut d, &opts)
        };
        run()?; // warm-up
        on.stream().synchronize()?;
        let t = Instant::now();
        for _ in 0..3 {
            run()?;
        }
        on.stream().synchronize()?;
        out.push(format!("{algo:?} {:.2}", fresh.len() as f64 / (t.elapsed().as_secs_f64() / 3.0) / 1e9));
    }
    Ok(out.join(", "))
}

fn main() -> Result<(), Fail> {
    let big: usize = std::env::args().nth(1).map_or(Ok(1 << 24), |a| a.parse())?;
    // The largest checked size (smaller under compute-sanitizer).
    let most: usize = std::env::args().nth(2).map_or(Ok(1_000_003), |a| a.parse())?;
    let gpu = Gpu::with_key_kernels(0, TRADE_PTX)?;
    let builtin = Gpu::new()?;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let dists = ["uniform", "sorted", "reverse", "all-equal", "few-unique", "dominating", "special"];
    for (on, how) in [(&gpu, "by less, its kernels"), (&builtin, "as ordered words, warpsort's kernels")] {
        for n in
            [0, 1, 2, 31, 32, 33, 1000, 4095, 4096, 4097, 8193, 100_000, 1_000_003].into_iter().filter(|&n| n <= most)
        {
            for dist in dists {
                check_trades(on, &trades(dist, n, &mut rng), dist)?;
            }
        }
        println!(
            "Trade ({how}): keys, stable keys, pairs (u32 stable, u64), argsort (u32 stable, u64), host slices: every size and distribution checked"
        );
        for n in [33, 4097, 100_000].into_iter().filter(|&n| n <= most) {
            let keys = trades("uniform", n, &mut rng);
            let mut want = keys.clone();
            want.sort_by(Order::order);
            let mut d = on.stream().clone_htod(&keys)?;
            on.sort_custom(&mut d, &SortOptions::algorithm(Algorithm::Bitonic))?;
            if !same(&on.stream().clone_dtoh(&d)?, &want) {
                return Err(format!("the bitonic sort of {n} trades ({how}) differs from the CPU").into());
            }
        }
    }

    // As ordered words every option of the built-in tuples runs: descending
    // (the reverse of `less`, stable) and the sample sort.
    for n in [1000, 100_000].into_iter().filter(|&n| n <= most) {
        let keys = trades("few-unique", n, &mut rng);
        let (mut asc, mut desc) = (keys.clone(), keys.clone());
        asc.sort_by(Order::order);
        desc.sort_by(|a, b| b.order(a)); // stable
        let s = builtin.stream();
        let (mut d, mut e) = (s.clone_htod(&keys)?, s.clone_htod(&keys)?);
        builtin.sort_custom(&mut d, &SortOptions { stable: true, ..SortOptions::descending() })?;
        builtin.sort_custom(&mut e, &SortOptions::algorithm(Algorithm::SampleSort))?;
        // Trades that order equal are the same bits: any sort gives `asc`.
        if !same(&s.clone_dtoh(&d)?, &desc) || !same(&s.clone_dtoh(&e)?, &asc) {
            return Err(
                format!("a descending or sample sort of {n} trades as ordered words differs from the CPU").into()
            );
        }
    }

    // A refused option leaves the keys as they were.
    let keys = trades("uniform", 1000, &mut rng);
    let mut d = gpu.stream().clone_htod(&keys)?;
    let r = gpu.sort_custom(&mut d, &SortOptions::descending());
    if !matches!(r, Err(Error::BadConfig(_))) || !same(&gpu.stream().clone_dtoh(&d)?, &keys) {
        return Err("a descending sort of a user key type was not refused cleanly".into());
    }

    // A hand-written order cannot be encoded: warpsort's own kernels refuse
    // it, and the keys stay as they were.
    let keys: Vec<Hand> = (0..1000).map(|tag| Hand { hand: tag % 3, tag }).collect();
    let mut d = builtin.stream().clone_htod(&keys)?;
    let r = builtin.sort_custom(&mut d, &SortOptions::default());
    if !matches!(r, Err(Error::BadConfig(_))) || builtin.stream().clone_dtoh(&d)? != keys {
        return Err("a hand-written order on warpsort's own kernels was not refused cleanly".into());
    }

    let hands = Gpu::with_key_kernels(0, HAND_PTX)?;
    for n in [1, 33, 4097, 100_000, 1_000_003].into_iter().filter(|&n| n <= most) {
        check_hands(&hands, n, &mut rng)?;
    }
    println!("Hand (an order with cycles): every item kept by keys, stable keys, pairs, stable pairs");

    // Time: the user type beside the built-in tuple with the same fields.
    let keys = trades("uniform", big, &mut rng);
    let user = rates(&gpu, &gpu.stream().clone_htod(&keys)?, |d, o| gpu.sort_custom(d, o))?;
    let words = rates(&builtin, &builtin.stream().clone_htod(&keys)?, |d, o| builtin.sort_custom(d, o))?;
    let tuples: Vec<Tuple<(u32, Reverse<f32>, u32)>> =
        keys.iter().map(|t| Tuple((t.venue, Reverse(t.price), t.id))).collect();
    let tuple = rates(&builtin, &builtin.stream().clone_htod(&tuples)?, |d, o| builtin.sort_with(d, o))?;
    println!(
        "{big} trades, Gkeys/s (each with a copy): user type by less {user}; as ordered words {words}; built-in (u32, Reverse<f32>, u32) {tuple}"
    );
    Ok(())
}
