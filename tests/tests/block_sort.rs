//! Block sort (one block per segment of up to 8192 keys) against the CPU reference.

use warpsort::Order;
use warpsort_testkit::{Dist, check_segments, gpu};

#[test]
fn every_tile_and_partial_segments() {
    let Some(g) = gpu() else { return };
    for seg in [513, 1000, 1024, 2048, 3000, 4096, 5000, 8192] {
        for n in [0, 1, 513, 8192, 8193, 100_003] {
            check_segments::<u32>(g, Dist::Uniform, n, seg, Order::Ascending);
        }
    }
}

#[test]
fn distributions_and_types() {
    let Some(g) = gpu() else { return };
    for dist in Dist::ALL {
        check_segments::<u32>(g, dist, 200_000, 4096, Order::Ascending);
        check_segments::<f32>(g, dist, 200_000, 2048, Order::Descending);
        check_segments::<i64>(g, dist, 100_000, 8192, Order::Ascending);
    }
}

#[test]
fn rejects_segments_past_the_limit() {
    let Some(g) = gpu() else { return };
    let mut d = g.stream().clone_htod(&[3u32, 2, 1]).unwrap();
    assert!(matches!(g.sort_segments(&mut d, 0, Order::Ascending), Err(warpsort::Error::BadSegment { .. })));
    assert!(matches!(g.sort_segments(&mut d, 8193, Order::Ascending), Err(warpsort::Error::BadSegment { .. })));
    assert_eq!(g.stream().clone_dtoh(&d).unwrap(), [3, 2, 1], "data unchanged on error");
}
