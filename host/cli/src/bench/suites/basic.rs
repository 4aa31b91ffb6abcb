//! The copy, warp, sizes, naive and dists suites.

use warpsort::{Algorithm, Order, SegmentKernel};
use warpsort_testkit::data::Dist;

use crate::bench::report::Row;
use crate::bench::{Bench, Result, input, progress};

/// Keys of the copy and warp suites.
const COPY_N: usize = 1 << 26;

/// The sizes of the `sizes` suite.
fn sizes_for(quick: bool) -> Vec<usize> {
    if quick { vec![1 << 20, 1 << 22, 1 << 24] } else { (20..=28).step_by(2).map(|p| 1 << p).collect() }
}

/// Device-to-device copy: the bandwidth ceiling every sort is compared with.
pub fn copy(b: &mut Bench) -> Result<()> {
    progress("device-to-device copy");
    let s = b.gpu.stream().clone();
    let src = s.clone_htod(&input::<u32>(Dist::Uniform, COPY_N))?;
    let mut dst = s.clone_dtod(&src)?;
    let mut scratch = s.clone_dtod(&src)?;
    let ms = b.time(&src, &mut scratch, |_| Ok(s.memcpy_dtod(&src, &mut dst)?))?;
    // The timed region is one copy of `COPY_N` keys: read + write.
    b.copy_gbs = Some((COPY_N * 8) as f64 / (ms / 1e3) / 1e9);
    b.report.push(Row::u32_keys("copy", "memcpy-dtod".into(), COPY_N, ms, true));
    Ok(())
}

/// Warp and block sorts of 2^26 keys in short segments, checked on the host.
pub fn warp(b: &mut Bench) -> Result<()> {
    progress("warp and block sorts of 2^26 keys in segments");
    use SegmentKernel as S;
    let (gpu, s) = (b.gpu, b.gpu.stream().clone());
    let keys_in = input::<u32>(Dist::Uniform, COPY_N);
    let (pristine, mut work) = b.upload(&keys_in)?;
    let cases = [
        (32, S::WarpChunks { chunk: 32 }),
        (32, S::Warp { keys_per_lane: 1 }),
        (128, S::WarpChunks { chunk: 128 }),
        (128, S::Warp { keys_per_lane: 4 }),
        (512, S::Warp { keys_per_lane: 16 }),
        (4096, S::Block { tile: 4096 }),
    ];
    for (seg, kernel) in cases {
        let ms = b.time(&pristine, &mut work, |w| gpu.sort_segments_with(w, seg, Order::Ascending, kernel))?;
        let mut host = s.clone_dtoh(&work)?;
        let mut want = keys_in.clone();
        warpsort_testkit::cpu::sort_segments(&mut want, seg, Order::Ascending);
        let verified = host == want && {
            host.sort_unstable();
            want.sort_unstable();
            host == want
        };
        let algo = format!("{kernel:?} seg={seg}").replace(' ', "");
        b.report.push(Row::u32_keys("warp", algo, COPY_N, ms, verified));
        if let (32, Some(copy_gbs)) = (seg, b.copy_gbs) {
            let gbs = (COPY_N * 8) as f64 / (ms / 1e3) / 1e9;
            println!(
                "          32-key segments at {:.0}% of the device-to-device copy bandwidth ({gbs:.0} of {copy_gbs:.0} GB/s)",
                100.0 * gbs / copy_gbs
            );
        }
    }
    Ok(())
}

/// Full sorts of u32 keys and pairs against n: every algorithm (the
/// default, `warpsort`, and the merge sort and the sample sort it chooses
/// between, each alone) and CUB.
pub fn sizes(b: &mut Bench) -> Result<()> {
    for n in sizes_for(b.opts.quick) {
        progress(&format!("full sorts, n = 2^{}", n.trailing_zeros()));
        let keys_in = input::<u32>(Dist::Uniform, n);
        for pairs in [false, true] {
            for algo in [Algorithm::Auto, Algorithm::MergeSort, Algorithm::Bitonic, Algorithm::WarpsortPaper] {
                b.sort_row("sizes", algo, Dist::Uniform, pairs, &keys_in)?;
            }
            if !b.opts.no_sample {
                b.sort_row("sizes", Algorithm::SampleSort, Dist::Uniform, pairs, &keys_in)?;
            }
            b.cub_rows("sizes", Dist::Uniform, pairs, &keys_in, None, "");
        }
    }
    Ok(())
}

/// Fused against naive (one launch per stage) bitonic sort at 2^24.
pub fn naive(b: &mut Bench) -> Result<()> {
    let n = 1 << 24;
    progress("fused against naive bitonic sort, n = 2^24");
    let keys_in = input::<u32>(Dist::Uniform, n);
    b.sort_row("naive", Algorithm::Bitonic, Dist::Uniform, false, &keys_in)?;
    b.sort_row("naive", Algorithm::BitonicNaive, Dist::Uniform, false, &keys_in)?;
    let rows = &b.report.rows;
    let (fused, naive) = (rows[rows.len() - 2].ms, rows[rows.len() - 1].ms);
    println!("          fused bitonic is {:.1}x the naive one-launch-per-stage sort", naive / fused);
    Ok(())
}

/// Every input distribution ([`Dist::ALL`]) at 2^24, keys and pairs, beside CUB.
pub fn dists(b: &mut Bench) -> Result<()> {
    let n = 1 << 24;
    for dist in Dist::ALL {
        progress(&format!("distribution {}, n = 2^24", dist.name()));
        let keys_in = input::<u32>(dist, n);
        for pairs in [false, true] {
            b.sort_row("dists", Algorithm::Auto, dist, pairs, &keys_in)?;
            b.sort_row("dists", Algorithm::MergeSort, dist, pairs, &keys_in)?;
            b.sort_row("dists", Algorithm::WarpsortPaper, dist, pairs, &keys_in)?;
            if !b.opts.no_sample {
                b.sort_row("dists", Algorithm::SampleSort, dist, pairs, &keys_in)?;
            }
            b.cub_rows("dists", dist, pairs, &keys_in, None, "");
        }
    }
    Ok(())
}
