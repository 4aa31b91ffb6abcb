//! Warp sort (one warp per segment of up to 512 keys) against the CPU reference.

use warpsort::Order;
use warpsort_tests::{Dist, check_segments, gpu};

const SEGMENTS: &[usize] = &[1, 2, 7, 31, 32, 33, 64, 100, 128, 200, 256, 257, 500, 512];
const SIZES: &[usize] = &[0, 1, 31, 32, 33, 1000, 4097, 100_003];

#[test]
fn every_segment_length_and_size_u32() {
    let Some(g) = gpu() else { return };
    for &seg in SEGMENTS {
        for &n in SIZES {
            check_segments::<u32>(g, Dist::Uniform, n, seg, Order::Ascending);
        }
    }
}

#[test]
fn every_distribution_and_key_type() {
    let Some(g) = gpu() else { return };
    for dist in Dist::ALL {
        for seg in [32, 128, 512] {
            check_segments::<u32>(g, dist, 50_000, seg, Order::Ascending);
            check_segments::<i32>(g, dist, 50_000, seg, Order::Descending);
            check_segments::<f32>(g, dist, 50_000, seg, Order::Ascending);
            check_segments::<u64>(g, dist, 20_000, seg, Order::Ascending);
            check_segments::<f64>(g, dist, 20_000, seg, Order::Descending);
        }
    }
}

#[test]
fn millions_of_keys_in_32_key_segments() {
    let Some(g) = gpu() else { return };
    check_segments::<u32>(g, Dist::Uniform, 1 << 22, 32, Order::Ascending);
}
