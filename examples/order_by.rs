//! ORDER BY on a table of device columns.
//!
//! ```text
//! cargo run --release -p warpsort-examples --bin order_by -- [ROWS]
//! ```
//!
//! A sales table with a region (`u16`), a revenue (`f64`), an id (`u64`)
//! and a 64-byte record per row is sorted by region, then revenue from the
//! largest, then id: `order_by` gives the stable permutation, `gather`
//! moves every column by it. The program checks the result against a sort
//! on the CPU and exits with an error if they differ.

use std::time::Instant;

use warpsort::{Column, Gpu};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(1 << 22), |a| a.parse())?;
    let gpu = Gpu::new()?;
    let s = gpu.stream();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let region: Vec<u16> = (0..n).map(|_| (next() % 50) as u16).collect();
    let revenue: Vec<f64> = (0..n).map(|_| (next() % 100_000) as f64 / 100.0).collect();
    let id: Vec<u64> = (0..n).map(|_| next() % 1_000).collect();
    let record: Vec<[u8; 64]> = (0..n).map(|i| [(i % 251) as u8; 64]).collect();
    let (d_region, d_revenue, d_id, d_record) =
        (s.clone_htod(&region)?, s.clone_htod(&revenue)?, s.clone_htod(&id)?, s.clone_htod(&record)?);

    let start = Instant::now();
    let p = gpu.order_by(&[Column::asc(&d_region), Column::desc(&d_revenue), Column::asc(&d_id)])?;
    let sorted_record = gpu.gather(&d_record, &p)?;
    s.synchronize()?;
    let took = start.elapsed();

    let mut want: Vec<usize> = (0..n).collect();
    want.sort_by(|&a, &b| region[a].cmp(&region[b]).then(revenue[b].total_cmp(&revenue[a])).then(id[a].cmp(&id[b])));
    let got: Vec<usize> = s.clone_dtoh(&p)?.into_iter().map(|i| i as usize).collect();
    if got != want {
        return Err("the permutation differs from the CPU's ORDER BY".into());
    }
    if s.clone_dtoh(&sorted_record)?.iter().zip(&want).any(|(r, &i)| *r != record[i]) {
        return Err("a record was not gathered by the permutation".into());
    }
    println!("ORDER BY region, revenue DESC, id over {n} rows (and a 64-byte record each): {took:?}, checked");
    Ok(())
}
