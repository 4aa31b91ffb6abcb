//! Equal rows by every kernel of the segmented family (several rows a warp,
//! a warp a row, a block a row) against the CPU reference.

use warpsort::{Gpu, Order};
use warpsort_testkit::{Dist, check_segments};

warpsort_testkit::tests_main! {
    gpu: [
        every_segment_length_and_size_u32,
        every_distribution_and_key_type,
        millions_of_keys_in_32_key_segments,
        more_rows_than_the_chunk_grid,
        every_segment_kernel_on_the_lengths_it_fits,
        rows_of_the_largest_block_tile,
        rows_of_the_tiles_between_powers_of_two,
    ],
}

const SEGMENTS: &[usize] = &[1, 2, 7, 31, 32, 33, 64, 100, 128, 200, 256, 257, 500, 512];
const SIZES: &[usize] = &[0, 1, 31, 32, 33, 1000, 4097, 100_003];

fn every_segment_length_and_size_u32(g: &Gpu) {
    for &seg in SEGMENTS {
        for &n in SIZES {
            check_segments::<u32>(g, Dist::Uniform, n, seg, Order::Ascending);
        }
    }
}

fn every_distribution_and_key_type(g: &Gpu) {
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

fn millions_of_keys_in_32_key_segments(g: &Gpu) {
    check_segments::<u32>(g, Dist::Uniform, 1 << 22, 32, Order::Ascending);
}

/// More rows than the chunk kernel's grid covers at once (Hopper caps it
/// at 16 blocks of 8 warps a multiprocessor, 2,112 on an H200): its warps
/// take several rounds.
fn more_rows_than_the_chunk_grid(g: &Gpu) {
    for seg in [8, 32, 200] {
        check_segments::<u32>(g, Dist::Uniform, (1 << 24) + 7, seg, Order::Ascending);
    }
    check_segments::<u64>(g, Dist::Zipf, 1 << 24, 16, Order::Descending);
}

/// Rows of the largest block tiles (4,097 to 8,192 keys: the tiles of
/// 6,144 and 8,192): 4-byte keys alone take the dual block kernel
/// (`segmented_block_dual`, two blocks a multiprocessor), other items the
/// block kernel; every distribution.
fn rows_of_the_largest_block_tile(g: &Gpu) {
    for dist in Dist::ALL {
        for seg in [4097, 6000, 6144, 6145, 8192] {
            check_segments::<u32>(g, dist, 40 * seg + 17, seg, Order::Ascending);
            check_segments::<i32>(g, dist, 3 * seg + 1, seg, Order::Descending);
            check_segments::<f32>(g, dist, 3 * seg, seg, Order::Ascending);
            check_segments::<u64>(g, dist, 3 * seg + 5, seg, Order::Descending);
        }
    }
}

/// Rows of each block tile of three quarters of a power of two (768, 1,536,
/// 3,072: a block of that many warps runs the next power's network, the
/// absent warps' slots as pads), at, below and just past its length, every
/// distribution and key width.
fn rows_of_the_tiles_between_powers_of_two(g: &Gpu) {
    for dist in Dist::ALL {
        for seg in [513, 700, 768, 769, 1025, 1500, 1536, 2049, 3000, 3072] {
            check_segments::<u32>(g, dist, 20 * seg + 17, seg, Order::Ascending);
            check_segments::<i32>(g, dist, 3 * seg + 1, seg, Order::Descending);
            check_segments::<u64>(g, dist, 3 * seg + 5, seg, Order::Ascending);
            check_segments::<f64>(g, dist, 2 * seg, seg, Order::Descending);
        }
    }
}

fn every_segment_kernel_on_the_lengths_it_fits(g: &Gpu) {
    use warpsort::SegmentKernel as S;
    use warpsort_testkit::cpu;
    let kernels = [
        S::WarpChunks { chunk: 8 },
        S::WarpChunks { chunk: 32 },
        S::WarpChunks { chunk: 64 },
        S::WarpChunks { chunk: 256 },
        S::Warp { keys_per_lane: 1 },
        S::Warp { keys_per_lane: 2 },
        S::Warp { keys_per_lane: 4 },
        S::Warp { keys_per_lane: 8 },
        S::Warp { keys_per_lane: 16 },
        S::Block { tile: 256 },
        S::Block { tile: 768 },
        S::Block { tile: 1280 },
        S::Block { tile: 2048 },
        S::Block { tile: 6144 },
        S::Block { tile: 8192 },
    ];
    for kernel in kernels {
        for seg in [1, 5, 31, 32, 33, 64, 100, 256, 300, 512, 700, 1200, 2000, 6000, 8000] {
            if !kernel.fits(seg) {
                continue;
            }
            for n in [0, 1, seg, 10 * seg + 3, 40_000] {
                let input: Vec<u32> = warpsort_testkit::data::keys(Dist::FewUnique, n, n as u64 + seg as u64);
                let mut d = g.stream().clone_htod(&input).unwrap();
                g.sort_segments_with(&mut d, seg, Order::Descending, kernel).unwrap();
                let mut want = input.clone();
                cpu::sort_segments(&mut want, seg, Order::Descending);
                assert_eq!(g.stream().clone_dtoh(&d).unwrap(), want, "{kernel:?} seg={seg} n={n}");
            }
        }
        let mut d = g.stream().clone_htod(&[1u32; 600]).unwrap();
        let too_long = kernel.capacity() + 1;
        assert!(g.sort_segments_with(&mut d, too_long, Order::Ascending, kernel).is_err());
    }
}
