//! Block sort (one block per segment of up to 8192 keys) against the CPU reference.

use warpsort::{Gpu, Order};
use warpsort_testkit::{Dist, check_segments};

warpsort_testkit::tests_main! {
    gpu: [every_tile_and_partial_segments, distributions_and_types, rejects_empty_rows_and_sorts_long_ones],
}

fn every_tile_and_partial_segments(g: &Gpu) {
    for seg in [513, 1000, 1024, 2048, 3000, 4096, 5000, 8192] {
        for n in [0, 1, 513, 8192, 8193, 100_003] {
            check_segments::<u32>(g, Dist::Uniform, n, seg, Order::Ascending);
        }
    }
}

fn distributions_and_types(g: &Gpu) {
    for dist in Dist::ALL {
        check_segments::<u32>(g, dist, 200_000, 4096, Order::Ascending);
        check_segments::<f32>(g, dist, 200_000, 2048, Order::Descending);
        check_segments::<i64>(g, dist, 100_000, 8192, Order::Ascending);
    }
}

fn rejects_empty_rows_and_sorts_long_ones(g: &Gpu) {
    let mut d = g.stream().clone_htod(&[3u32, 2, 1]).unwrap();
    assert!(matches!(g.sort_segments(&mut d, 0, Order::Ascending), Err(warpsort::Error::BadSegment { .. })));
    assert_eq!(g.stream().clone_dtoh(&d).unwrap(), [3, 2, 1], "data unchanged on error");
    // Past a block's tile, rows go to the merge sort (one row here: longer than the keys).
    g.sort_segments(&mut d, 8193, Order::Ascending).unwrap();
    assert_eq!(g.stream().clone_dtoh(&d).unwrap(), [1, 2, 3]);
    for n in [8193, 3 * 8193 + 5] {
        check_segments::<u32>(g, Dist::Uniform, n, 8193, Order::Descending);
    }
}
