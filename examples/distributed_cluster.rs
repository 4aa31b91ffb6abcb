//! One process sorts keys spread over every GPU of the machine.
//!
//! ```text
//! cargo run --release -p warpsort-examples --bin distributed_cluster -- [KEYS]
//! ```
//!
//! Each GPU starts with its own random `u64` keys; after the sort GPU 0
//! holds the smallest share, GPU 1 the next, and so on, each about
//! `KEYS / GPUs` long. The program checks the result on the host and prints
//! what each phase took.

use warpsort::{Cluster, DistOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(1 << 24), |a| a.parse())?;
    let cluster = Cluster::all()?;
    let p = cluster.gpus().len();
    // Keys made where they live: GPU i gets keys i*n/p..(i+1)*n/p of one sequence.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let input: Vec<u64> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    let cut = |i: usize| i * n / p;
    let keys = (0..p)
        .map(|i| cluster.gpus()[i].stream().clone_htod(&input[cut(i)..cut(i + 1)]))
        .collect::<Result<Vec<_>, _>>()?;

    let shares = cluster.sort(&keys, &DistOptions::default())?;

    let mut got = Vec::with_capacity(n);
    for (gpu, share) in cluster.gpus().iter().zip(&shares) {
        got.extend(gpu.stream().clone_dtoh(share)?);
    }
    let mut want = input;
    want.sort_unstable();
    assert!(got == want, "the shares are not the sorted keys");
    let report = cluster.last_report().expect("a report");
    println!("sorted {n} u64 keys over {p} GPU(s): shares {:?}", report.shares);
    for (phase, ms) in &report.phases {
        println!("  {phase:<20} {ms:8.2} ms");
    }
    println!("  {:<20} {:8.2} ms (host time of the call)", "total", report.wall_ms);
    Ok(())
}
