//! The segments suite: 2^24 keys in segments of 32 to 8192 (equal rows, and
//! the same cut given as offsets; 1024 to 8192 the block kernel's classes at
//! powers of two and three quarters of one, the sample sort's buckets'
//! sizes) and of random lengths, beside CUB's
//! DeviceSegmentedSort (and segmented radix sort) on the same input.

use warpsort_testkit::data::{Dist, random_offsets};

use crate::bench::{Bench, Result, input, progress};

/// Runs the suite.
pub fn segments(b: &mut Bench) -> Result<()> {
    let n = 1usize << 24;
    let keys_in = input::<u32>(Dist::Uniform, n);
    let mut cases: Vec<(String, Vec<u32>, Option<usize>)> = [32usize, 128, 1024, 1536, 2048, 4096, 6144, 8192]
        .into_iter()
        .map(|len| {
            // Rows of `len`, the last shorter where `len` does not divide `n`.
            let offsets = (0..n.div_ceil(len)).map(|i| (i * len) as u32).chain([n as u32]).collect();
            (format!("/seg={len}"), offsets, Some(len))
        })
        .collect();
    cases.push(("/seg=random1-8192".into(), random_offsets(n, 8192, 42), None));
    for (tag, offsets, rows) in &cases {
        progress(&format!("segmented sorts of 2^24 keys, {}", &tag[1..]));
        for pairs in [false, true] {
            if let Some(len) = rows {
                b.segments_row(format!("warpsort_rows{tag}"), &keys_in, offsets, Some(*len), pairs)?;
            }
            b.segments_row(format!("warpsort_offsets{tag}"), &keys_in, offsets, None, pairs)?;
            b.cub_rows("segments", Dist::Uniform, pairs, &keys_in, Some(offsets), tag);
            let ours = b.report.last_ms("segments", &format!("warpsort_offsets{tag}"), pairs);
            let cub = b.report.last_ms("segments", &format!("cub_segmented_sort{tag}"), pairs);
            if let (Some(ours), Some(cub)) = (ours, cub) {
                let what = if pairs { "pairs" } else { "keys" };
                println!(
                    "          {what}{tag}: offsets API at {:.2}x CUB DeviceSegmentedSort's throughput",
                    cub / ours
                );
            }
        }
    }
    Ok(())
}
