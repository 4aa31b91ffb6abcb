//! Every warp primitive against its CPU reference, through the probe kernels.

use warpsort::kernels::config::WARP_SIZE;
use warpsort::{Gpu, KernelArg as A};
use warpsort_testkit::cpu::warp as cref;

warpsort_testkit::tests_main! {
    gpu: [shuffles_u32_and_u64, votes_ballot_and_ids, reductions_and_scans, ballot_compaction, compare_exchange],
}

const WARPS: usize = 8;
const N: usize = WARPS * WARP_SIZE as usize;

fn run<T: warpsort::cudarc::driver::DeviceRepr + warpsort::cudarc::driver::ValidAsZeroBits + Clone + Default>(
    g: &Gpu,
    name: &str,
    inp: &[u32],
    out_len: usize,
    extra: &[A],
) -> Vec<T> {
    let s = g.stream();
    let din = s.clone_htod(inp).unwrap();
    let dout = s.alloc_zeros::<T>(out_len).unwrap();
    let mut args = vec![A::U64(g.ptr(&din)), A::U64(g.ptr(&dout))];
    args.extend_from_slice(extra);
    // SAFETY: probe kernels take (in, out, extra…) and touch one input and
    // `out_len / N` outputs per thread of this one-block, one-thread-per-input launch.
    unsafe { g.launch_kernel(name, 1, N as u32, 0, &args) }.unwrap();
    s.clone_dtoh(&dout).unwrap()
}

fn input(seed: u64) -> Vec<u32> {
    let mut r = warpsort_testkit::data::Rng::new(seed);
    (0..N).map(|_| r.next_u64() as u32).collect()
}

fn shuffles_u32_and_u64(g: &Gpu) {
    let x = input(1);
    for (op, f) in [
        (0, cref::shfl_idx::<u32> as fn(&[u32], u32) -> Vec<u32>),
        (1, cref::shfl_up),
        (2, cref::shfl_down),
        (3, cref::shfl_bfly),
    ] {
        for arg in [0u32, 1, 5, 16, 31] {
            let got: Vec<u32> = run(g, "probe_shfl_u32", &x, N, &[A::U32(op), A::U32(arg)]);
            assert_eq!(got, f(&x, arg), "u32 op {op} arg {arg}");
        }
    }
    // 64-bit: the probe reads pairs of input words as one u64.
    let x64: Vec<u64> = (0..N).map(|i| ((x[i] as u64) << 32) | x[(i * 7) % N] as u64).collect();
    let words: Vec<u32> = x64.iter().flat_map(|v| [*v as u32, (*v >> 32) as u32]).collect();
    for (op, f) in [
        (0, cref::shfl_idx::<u64> as fn(&[u64], u32) -> Vec<u64>),
        (1, cref::shfl_up),
        (2, cref::shfl_down),
        (3, cref::shfl_bfly),
    ] {
        for arg in [1u32, 3, 16] {
            let g64 = {
                let s = g.stream();
                let din = s.clone_htod(&words).unwrap();
                let dout = s.alloc_zeros::<u64>(N).unwrap();
                // SAFETY: probe_shfl_u64 reads and writes one u64 per thread.
                unsafe {
                    g.launch_kernel(
                        "probe_shfl_u64",
                        WARPS as u32,
                        WARP_SIZE,
                        0,
                        &[A::U64(g.ptr(&din)), A::U64(g.ptr(&dout)), A::U32(op), A::U32(arg)],
                    )
                }
                .unwrap();
                s.clone_dtoh(&dout).unwrap()
            };
            assert_eq!(g64, f(&x64, arg), "u64 op {op} arg {arg}");
        }
    }
}

fn votes_ballot_and_ids(g: &Gpu) {
    // Warp 0 all true, warp 1 all false, the rest random.
    let mut x = input(2);
    for (i, v) in x.iter_mut().enumerate() {
        *v = match i / 32 {
            0 => 1,
            1 => 0,
            _ => *v & 1,
        };
    }
    let got: Vec<u32> = run(g, "probe_vote", &x, 6 * N, &[]);
    for (w, lanes) in x.chunks(32).enumerate() {
        let ballot = lanes.iter().enumerate().fold(0u32, |m, (l, v)| m | ((*v != 0) as u32) << l);
        for l in 0..32 {
            let o = &got[6 * (w * 32 + l)..][..6];
            assert_eq!(o[0], (ballot != 0) as u32, "any");
            assert_eq!(o[1], (ballot == u32::MAX) as u32, "all");
            assert_eq!(o[2], ballot, "ballot");
            assert_eq!(o[3], ballot.count_ones(), "popc");
            assert_eq!(o[4], l as u32, "lane id");
            assert_eq!(o[5], w as u32, "warp id");
        }
    }
}

fn reductions_and_scans(g: &Gpu) {
    let x = input(3);
    let got: Vec<u32> = run(g, "probe_reduce_scan", &x, 7 * N, &[]);
    for (w, lanes) in x.chunks(32).enumerate() {
        let sum = lanes.iter().fold(0u32, |a, b| a.wrapping_add(*b));
        let wide = lanes.iter().fold(0u64, |a, b| a.wrapping_add((*b as u64) << 20));
        let mut run_sum = 0u32;
        for (l, v) in lanes.iter().enumerate() {
            let o = &got[7 * (w * 32 + l)..][..7];
            assert_eq!(o[0], sum);
            assert_eq!(o[1], *lanes.iter().min().unwrap());
            assert_eq!(o[2], *lanes.iter().max().unwrap());
            assert_eq!(o[4], run_sum, "exclusive scan lane {l}");
            run_sum = run_sum.wrapping_add(*v);
            assert_eq!(o[3], run_sum, "inclusive scan lane {l}");
            assert_eq!(((o[6] as u64) << 32) | o[5] as u64, wide);
        }
    }
}

fn ballot_compaction(g: &Gpu) {
    let x = input(4);
    let s = g.stream();
    let din = s.clone_htod(&x).unwrap();
    let dout = s.alloc_zeros::<u32>(N).unwrap();
    let dcount = s.alloc_zeros::<u32>(WARPS).unwrap();
    // SAFETY: probe_compact writes inside each warp's 32 outputs and one count per warp.
    unsafe {
        g.launch_kernel(
            "probe_compact",
            WARPS as u32,
            WARP_SIZE,
            0,
            &[A::U64(g.ptr(&din)), A::U64(g.ptr(&dout)), A::U64(g.ptr(&dcount))],
        )
    }
    .unwrap();
    let (out, counts) = (s.clone_dtoh(&dout).unwrap(), s.clone_dtoh(&dcount).unwrap());
    for (w, lanes) in x.chunks(32).enumerate() {
        let kept: Vec<u32> = lanes.iter().copied().filter(|v| v & 1 == 1).collect();
        assert_eq!(counts[w] as usize, kept.len());
        assert_eq!(&out[w * 32..w * 32 + kept.len()], &kept[..]);
    }
}

fn compare_exchange(g: &Gpu) {
    let a = input(5);
    let mut b = input(6);
    b[..16].copy_from_slice(&a[..16]); // ties: must not swap
    let av: Vec<u32> = (0..N as u32).collect();
    let bv: Vec<u32> = (0..N as u32).map(|i| i + 10_000).collect();
    let s = g.stream();
    let bufs: Vec<_> = [&a, &av, &b, &bv].iter().map(|v| s.clone_htod(&v[..]).unwrap()).collect();
    let args: Vec<A> = bufs.iter().map(|d| A::U64(g.ptr(d))).collect();
    // SAFETY: probe_cmpx reads and writes one element of each array per thread.
    unsafe { g.launch_kernel("probe_cmpx", WARPS as u32, WARP_SIZE, 0, &args) }.unwrap();
    let out: Vec<Vec<u32>> = bufs.iter().map(|d| s.clone_dtoh(d).unwrap()).collect();
    for i in 0..N {
        let swap = a[i] > b[i];
        let (lo, hi) = if swap { ((b[i], bv[i]), (a[i], av[i])) } else { ((a[i], av[i]), (b[i], bv[i])) };
        assert_eq!((out[0][i], out[1][i]), lo, "pair {i}");
        assert_eq!((out[2][i], out[3][i]), hi, "pair {i}");
    }
}
