//! CUDA graphs: a sort whose temporary storage exists beforehand queues no
//! allocation and no wait, so it can be captured from the `Gpu`'s stream
//! into a graph and replayed on new data. Keys, pairs (stable too), argsort
//! and equal rows (short and long), each replayed three times against the
//! CPU reference; a sort asked to scan its input's order sorts in full
//! when captured, and one the default runs by the sample sort (which waits
//! for its buckets) runs by the merge sort. (Segments given by offsets wait once for their counts:
//! not capturable, as documented.)

use std::sync::Arc;

use warpsort::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use warpsort::cudarc::driver::{CudaStream, DeviceRepr};
use warpsort::{Gpu, Order, Presorted, Scratch, SortKey, SortOptions};
use warpsort_testkit::{Dist, cpu, keys};

warpsort_testkit::tests_main! {
    gpu: [sorts_replay_from_a_graph],
}

/// Records what `op` queues on `s` as a graph (after one call outside the
/// capture, which loads the kernels and sizes the storage), then, for three
/// new inputs, copies the input in, replays the graph and checks the result.
/// Each step gets the case's buffers, `state`.
fn replay<S>(
    s: &Arc<CudaStream>,
    state: &mut S,
    load: impl Fn(&mut S, usize),
    op: impl Fn(&mut S) -> warpsort::Result<()>,
    check: impl Fn(&S, usize),
) {
    load(state, 0);
    op(state).unwrap();
    load(state, 1);
    s.synchronize().unwrap();
    s.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED).unwrap();
    op(state).unwrap();
    let graph = s.end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH).unwrap();
    let graph = graph.expect("the sort queued work into the graph");
    for round in 2..5 {
        load(state, round);
        graph.launch().unwrap();
        s.synchronize().unwrap();
        check(state, round);
    }
}

/// Keys sorted with `opts` in the caller's storage (reserved beforehand: one
/// allocation), replayed from a graph over `inputs[2..5]`.
fn keys_replay<K: SortKey + Ord + DeviceRepr + std::fmt::Debug>(
    g: &Gpu,
    inputs: &[Vec<K>],
    opts: &SortOptions,
    what: &str,
) {
    let s = g.stream().clone();
    let n = inputs[0].len();
    let scratch = Scratch::with_capacity(g, Gpu::sort_temp_bytes(opts, n, size_of::<K>(), 0)).unwrap();
    let mut st = (s.clone_htod(&inputs[0]).unwrap(), scratch);
    replay(
        &s,
        &mut st,
        |(k, _), r| s.memcpy_htod(&inputs[r], k).unwrap(),
        |(k, scratch)| g.sort_with_scratch(k, opts, scratch),
        |(k, _), r| {
            let mut want = inputs[r].clone();
            want.sort_unstable();
            assert_eq!(s.clone_dtoh(k).unwrap(), want, "{what}, round {r}");
        },
    );
    assert_eq!(st.1.allocations(), 1, "{what}");
}

fn sorts_replay_from_a_graph(g: &Gpu) {
    let g = g.with_stream(g.context().new_stream().unwrap()).unwrap();
    let s = g.stream().clone();
    let n = (1 << 20) + 7;
    let inputs: Vec<Vec<u32>> = (0..5).map(|r| keys(Dist::Uniform, n, 100 + r)).collect();
    let few: Vec<Vec<u32>> = (0..5).map(|r| keys(Dist::FewUnique, n, 200 + r)).collect();
    let vals: Vec<u64> = (0..n as u64).collect();

    // Keys, with the caller's storage reserved beforehand.
    let opts = SortOptions::default();
    keys_replay(&g, &inputs, &opts, "keys");

    // A sort that scans its input's order outside a capture sorts in full
    // inside one (the scan's wait cannot be captured): sorted and reversed
    // inputs alternate with uniform ones.
    let scan = SortOptions { presorted: Presorted::Always, ..Default::default() };
    let shaped: Vec<Vec<u32>> = (0..5)
        .map(|r| {
            let mut v = inputs[r].clone();
            match r % 3 {
                0 => v.sort_unstable(),
                1 => v.sort_unstable_by(|a, b| b.cmp(a)),
                _ => {}
            }
            v
        })
        .collect();
    keys_replay(&g, &shaped, &scan, "keys with the scan");

    // Keys the default sorts by the sample sort outside a capture (u64 keys
    // from a few million on), which waits for its buckets: inside one, by
    // its merge sort, in the same storage.
    let wide: Vec<Vec<u64>> = (0..5).map(|r| keys(Dist::Uniform, (1 << 23) + 5, 400 + r)).collect();
    keys_replay(&g, &wide, &opts, "u64 keys");

    // Stable pairs (u64 values), descending, the caller's storage.
    let stable = SortOptions { stable: true, order: Order::Descending, ..Default::default() };
    let scratch = Scratch::with_capacity(&g, Gpu::sort_temp_bytes(&stable, n, 4, 8)).unwrap();
    let mut st = (s.clone_htod(&few[0]).unwrap(), s.clone_htod(&vals).unwrap(), scratch);
    replay(
        &s,
        &mut st,
        |(k, v, _), r| {
            s.memcpy_htod(&few[r], k).unwrap();
            s.memcpy_htod(&vals, v).unwrap();
        },
        |(k, v, scratch)| g.sort_pairs_with_scratch(k, v, &stable, scratch),
        |(k, v, _), r| {
            let (mut wk, mut wv) = (few[r].clone(), vals.clone());
            cpu::sort_pairs(&mut wk, &mut wv, Order::Descending);
            assert_eq!(s.clone_dtoh(k).unwrap(), wk, "stable pairs' keys, round {r}");
            assert_eq!(s.clone_dtoh(v).unwrap(), wv, "stable pairs' values, round {r}");
        },
    );
    assert_eq!(st.2.allocations(), 1);

    // Argsort into a buffer of the caller's (the handle's cached storage, sized by the first call).
    let mut st = (s.clone_htod(&few[0]).unwrap(), s.alloc_zeros::<u32>(n).unwrap());
    replay(
        &s,
        &mut st,
        |(k, _), r| s.memcpy_htod(&few[r], k).unwrap(),
        |(k, p)| g.argsort_into(&*k, p, &stable),
        |(_, p), r| {
            let got: Vec<usize> = s.clone_dtoh(p).unwrap().into_iter().map(|x| x as usize).collect();
            assert_eq!(got, cpu::argsort(&few[r], Order::Descending), "stable argsort, round {r}");
        },
    );

    // Equal rows: short ones (one kernel) and long ones (the merge sort, row after row).
    for len in [32usize, 10_000] {
        let rows: Vec<Vec<f32>> = (0..5).map(|r| keys(Dist::Gaussian, n, 300 + r)).collect();
        let mut st = s.clone_htod(&rows[0]).unwrap();
        replay(
            &s,
            &mut st,
            |d, r| s.memcpy_htod(&rows[r], d).unwrap(),
            |d| g.sort_segments(d, len, Order::Ascending),
            |d, r| {
                let mut want = rows[r].clone();
                cpu::sort_segments(&mut want, len, Order::Ascending);
                let got = s.clone_dtoh(d).unwrap();
                assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "rows of {len}, round {r}");
            },
        );
    }
}
