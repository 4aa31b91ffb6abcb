//! Faults and bad input, each caused for real: a typed error whose message
//! says what to do, and the caller's data exactly as it was. The tests of this
//! binary run one at a time (the out-of-memory test holds nearly all device
//! memory while it runs).

use std::sync::{Mutex, MutexGuard};

use warpsort::cudarc::driver::{CudaContext, sys};
use warpsort::{Error, Gpu, HostOptions, MergeKernel, MergeSortConfig, Order, Scratch, SegmentKernel, SortOptions};
use warpsort_testkit::{Dist, REQUIRE_GPU, keys};

warpsort_testkit::tests_main! {
    gpu: [
        a_missing_device_is_no_device,
        foreign_context_buffers_are_refused_untouched,
        out_of_memory_is_typed_and_loses_nothing,
        ptx_load_failure_is_typed,
        bad_input_is_refused_untouched,
    ],
    cpu: [no_driver_is_typed_and_only_without_a_driver],
}

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn input(n: usize) -> Vec<u32> {
    keys(Dist::Uniform, n, 0xfa17 + n as u64)
}

fn positions(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

fn no_driver_is_typed_and_only_without_a_driver() {
    let _s = serial();
    // SAFETY: only probes whether libcuda can be opened.
    let driver = unsafe { sys::is_culib_present() };
    let r = Gpu::new();
    if std::env::var(REQUIRE_GPU).as_deref() == Ok("1") {
        assert!(driver, "{REQUIRE_GPU}=1 but libcuda cannot be loaded");
        assert!(r.is_ok(), "a GPU machine must open its GPU: {:?}", r.err());
    }
    match r {
        Ok(_) => assert!(driver),
        Err(Error::NoDriver) => {
            assert!(!driver, "NoDriver returned although libcuda loads");
            let m = Error::NoDriver.to_string();
            assert!(m.contains("Install the NVIDIA driver"), "{m}");
            // Every way of opening a GPU says the same, none panics.
            assert!(matches!(Gpu::with_device(1), Err(Error::NoDriver)));
            assert!(matches!(Gpu::with_ptx(0, EMPTY_PTX), Err(Error::NoDriver)));
        }
        // A driver without a usable GPU (e.g. a CPU machine with the driver installed).
        Err(Error::NoDevice) => assert!(driver),
        Err(e) => panic!("opening a GPU failed with an unexpected error: {e}"),
    }
}

fn a_missing_device_is_no_device(_: &Gpu) {
    let _s = serial();
    let count = CudaContext::device_count().unwrap() as usize;
    let e = Gpu::with_device(count).err().expect("a GPU past the last one opened");
    assert!(matches!(e, Error::NoDevice), "{e}");
    assert!(e.to_string().contains("nvidia-smi"), "{e}");
}

fn foreign_context_buffers_are_refused_untouched(g: &Gpu) {
    let _s = serial();
    let n = 10_000;
    let (keys, vals) = (input(n), positions(n));
    // `CudaContext::new` retains the device's primary context, which every Gpu
    // on this device shares; a non-primary context is a real foreign one.
    let other = CudaContext::new_non_primary(g.context().ordinal(), 0).unwrap();
    let os = other.default_stream();
    let mut fk = os.clone_htod(&keys).unwrap();
    let mut fv = os.clone_htod(&vals).unwrap();
    let mut k = g.stream().clone_htod(&keys).unwrap();
    let mut v = g.stream().clone_htod(&vals).unwrap();
    let opts = SortOptions::default();
    let foreign = |r: warpsort::Result<()>, what: &str| match r {
        Err(e @ Error::ForeignContext { what: w }) if w == what => {
            assert!(e.to_string().contains("another CUDA context"), "{e}");
        }
        r => panic!("expected ForeignContext({what}), got {r:?}"),
    };
    foreign(g.sort(&mut fk), "keys");
    foreign(g.sort_with(&mut fk, &SortOptions::algorithm(warpsort::Algorithm::Bitonic)), "keys");
    foreign(g.sort_with_scratch(&mut fk, &opts, &mut Scratch::new()), "keys");
    foreign(g.sort_pairs(&mut fk, &mut v, &opts), "keys");
    foreign(g.sort_pairs(&mut k, &mut fv, &opts), "values");
    foreign(g.sort_segments(&mut fk, 32, Order::Ascending), "keys");
    foreign(g.sort_segments_pairs(&mut k, &mut fv, 32, Order::Ascending), "values");
    foreign(g.check::<u32, u32>(&fk, None, Order::Ascending).map(|_| ()), "keys");
    let cut: Vec<u32> = (0..=n / 100).map(|i| (i * 100) as u32).collect();
    let off = g.stream().clone_htod(&cut).unwrap();
    let foff = os.clone_htod(&cut).unwrap();
    foreign(g.sort_segments_by_offsets(&mut fk, &off, Order::Ascending), "keys");
    foreign(g.sort_segments_by_offsets_pairs(&mut k, &mut fv, &off, Order::Ascending), "values");
    foreign(g.sort_segments_by_offsets(&mut k, &foff, Order::Ascending), "segment offsets");
    let rows = warpsort::Segments::Rows(32);
    foreign(g.check_segments::<u32, u32>(&fk, None, rows, Order::Ascending).map(|_| ()), "keys");
    let cut_foreign = warpsort::Segments::Offsets(&foff);
    foreign(g.check_segments::<u32, u32>(&k, None, cut_foreign, Order::Ascending).map(|_| ()), "segment offsets");
    foreign(g.with_stream(os.clone()).map(|_| ()), "stream");
    // A second GPU, when there is one: its buffers and its scratch are foreign too.
    if CudaContext::device_count().unwrap() >= 2 {
        let ordinal = if g.context().ordinal() == 0 { 1 } else { 0 };
        let g2 = Gpu::with_device(ordinal).unwrap();
        let mut k2 = g2.stream().clone_htod(&keys).unwrap();
        foreign(g.sort(&mut k2), "keys");
        let mut s2 = Scratch::with_capacity(&g2, 1 << 20).unwrap();
        foreign(g.sort_with_scratch(&mut k, &opts, &mut s2), "scratch");
        assert_eq!(g2.stream().clone_dtoh(&k2).unwrap(), keys);
        drop(s2);
        g2.context().bind_to_thread().unwrap(); // cudarc frees in the current context
        drop(k2);
    }
    assert_eq!(g.stream().clone_dtoh(&k).unwrap(), keys, "own keys unchanged");
    assert_eq!(g.stream().clone_dtoh(&v).unwrap(), vals, "own values unchanged");
    assert_eq!(os.clone_dtoh(&fk).unwrap(), keys, "foreign keys unchanged");
    assert_eq!(os.clone_dtoh(&fv).unwrap(), vals, "foreign values unchanged");
    // cudarc frees without binding the buffer's context: bind it first.
    other.bind_to_thread().unwrap();
    drop((fk, fv, foff));
    other.synchronize().unwrap();
}

/// Device memory taken straight from the driver (not from the stream-ordered
/// pool the sorts allocate from), freed on drop even when the test fails.
struct Filler<'a> {
    gpu: &'a Gpu,
    ptrs: Vec<sys::CUdeviceptr>,
}

impl<'a> Filler<'a> {
    /// Takes device memory until at most `leave` bytes are free (or as close
    /// as the driver allows).
    fn leave(gpu: &'a Gpu, leave: usize) -> Self {
        const STEP: usize = 2 << 20;
        let mut f = Filler { gpu, ptrs: Vec::new() };
        for _ in 0..64 {
            let (free, _) = gpu.context().mem_get_info().unwrap();
            if free <= leave {
                break;
            }
            let mut size = (free - leave / 2) / STEP * STEP;
            let ptr = loop {
                if size < STEP {
                    return f;
                }
                // SAFETY: a plain device allocation in the bound context,
                // freed by `drop` below.
                match unsafe { warpsort::cudarc::driver::result::malloc_sync(size) } {
                    Ok(p) => break p,
                    Err(_) => size /= 2,
                }
            };
            f.ptrs.push(ptr);
        }
        f
    }
}

impl Drop for Filler<'_> {
    fn drop(&mut self) {
        self.gpu.context().bind_to_thread().unwrap();
        for p in self.ptrs.drain(..) {
            // SAFETY: `p` came from `malloc_sync` above and is freed once.
            unsafe { warpsort::cudarc::driver::result::free_sync(p) }.unwrap();
        }
    }
}

fn out_of_memory_is_typed_and_loses_nothing(g: &Gpu) {
    let _s = serial();
    let n = 1 << 23;
    let (keys, vals) = (input(n), positions(n));
    let mut k = g.stream().clone_htod(&keys).unwrap();
    let mut v = g.stream().clone_htod(&vals).unwrap();
    let opts = SortOptions::default();
    let need = Gpu::sort_temp_bytes(&opts, n, 4, 0);
    // Nothing cached, nothing held back in the stream-ordered pool: the sort
    // must ask the driver for fresh memory.
    g.release_scratch().unwrap();
    g.synchronize().unwrap();
    let mut pool = std::ptr::null_mut();
    // SAFETY: plain driver queries on the device of the bound context.
    unsafe {
        g.context().bind_to_thread().unwrap();
        sys::cuDeviceGetDefaultMemPool(&mut pool, g.context().cu_device()).result().unwrap();
        sys::cuMemPoolTrimTo(pool, 0).result().unwrap();
    }
    // One segment of all the keys: its merge scratch is the sort's.
    let whole = g.stream().clone_htod(&[0, n as u32]).unwrap();
    let filler = Filler::leave(g, need / 2);
    let (free, _) = g.context().mem_get_info().unwrap();
    assert!(free < need, "could not fill device memory: {free} bytes free, the sort needs {need}");
    let oom = |r: warpsort::Result<()>, at_least: usize| match r {
        Err(e @ Error::OutOfMemory { requested, .. }) => {
            assert!(requested >= at_least, "{e}");
            assert!(e.to_string().contains("out of device memory"), "{e}");
        }
        r => panic!("expected OutOfMemory, got {r:?}"),
    };
    oom(g.sort(&mut k), need);
    oom(g.sort_pairs(&mut k, &mut v, &opts), need);
    let mut scratch = Scratch::new();
    oom(g.sort_with_scratch(&mut k, &opts, &mut scratch), need);
    assert_eq!((scratch.capacity(), scratch.allocations()), (0, 0));
    // Host slices told they may use more than the device has: the
    // allocation fails, typed, the slices untouched.
    let (mut hk, mut hv) = (keys.clone(), vals.clone());
    let beyond = HostOptions { memory_limit: Some(1 << 40), ..Default::default() };
    oom(g.sort_host(&mut hk, &beyond), n * 4);
    oom(g.sort_pairs_host(&mut hk, &mut hv, &beyond), n * 4);
    oom(g.sort_segments_by_offsets(&mut k, &whole, Order::Ascending), need);
    oom(g.sort_segments_by_offsets_pairs(&mut k, &mut v, &whole, Order::Descending), need);
    assert!(hk == keys && hv == vals, "host slices unchanged");
    // Left to the free memory, host slices sort beyond the GPU.
    g.sort_pairs_slice(&mut hk, &mut hv, &SortOptions { stable: true, ..opts }).unwrap();
    let (mut wk, mut wv) = (keys.clone(), vals.clone());
    warpsort_testkit::cpu::sort_pairs(&mut wk, &mut wv, Order::Ascending);
    assert!(hk == wk && hv == wv, "host pairs sorted beyond the GPU's free memory");
    drop(filler);
    assert_eq!(g.stream().clone_dtoh(&k).unwrap(), keys, "device keys unchanged");
    assert_eq!(g.stream().clone_dtoh(&v).unwrap(), vals, "device values unchanged");
    // With memory back, the same calls succeed.
    g.sort_with_scratch(&mut k, &opts, &mut scratch).unwrap();
    assert!(g.is_sorted(&k, Order::Ascending).unwrap());
    g.release_scratch().unwrap();
}

/// PTX with none of warpsort's kernels: it loads, and every sort then misses its kernel.
const EMPTY_PTX: &str = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry nothing()\n{\n\tret;\n}\n";

fn ptx_load_failure_is_typed(g: &Gpu) {
    let _s = serial();
    let ordinal = g.context().ordinal();
    for bad in ["garbage", ".version 99.9\n.target sm_999\n.address_size 64\n", "nul\0byte"] {
        match Gpu::with_ptx(ordinal, bad) {
            Err(e @ Error::PtxLoad(_)) => {
                let m = e.to_string();
                assert!(m.contains("update the NVIDIA driver") && m.contains("cargo xtask build-ptx"), "{m}");
            }
            Err(e) => panic!("{bad:?}: expected PtxLoad, got {e}"),
            Ok(_) => panic!("{bad:?}: loaded"),
        }
    }
    // A module that loads but lacks the kernels: PtxLoad naming the kernel, keys untouched
    // (for i32 the key mapping is the first launch, for u32 the sort itself).
    let empty = Gpu::with_ptx(ordinal, EMPTY_PTX).unwrap();
    assert_eq!(empty.info().ptx, "given PTX");
    for n in [100, 100_000] {
        let keys = input(n);
        let mut k = empty.stream().clone_htod(&keys).unwrap();
        match empty.sort(&mut k) {
            Err(Error::PtxLoad(m)) => assert!(m.contains("kernel merge_tile_sort_u32"), "{m}"),
            r => panic!("expected PtxLoad, got {r:?}"),
        }
        assert_eq!(empty.stream().clone_dtoh(&k).unwrap(), keys);
        let signed: Vec<i32> = keys.iter().map(|&x| x as i32).collect();
        let mut s = empty.stream().clone_htod(&signed).unwrap();
        match empty.sort(&mut s) {
            // The launch-shape check loads the tile sort first, before any key moves.
            Err(Error::PtxLoad(m)) => assert!(m.contains("kernel merge_tile_sort_u32"), "{m}"),
            r => panic!("expected PtxLoad, got {r:?}"),
        }
        assert_eq!(empty.stream().clone_dtoh(&s).unwrap(), signed);
    }
}

fn bad_input_is_refused_untouched(g: &Gpu) {
    let _s = serial();
    let n = 5000;
    let (keys, vals) = (input(n), positions(n));
    let mut k = g.stream().clone_htod(&keys).unwrap();
    let mut v = g.stream().clone_htod(&vals[..n - 1]).unwrap();
    let opts = SortOptions::default();
    let mismatch = |r: warpsort::Result<()>| match r {
        Err(e @ Error::LengthMismatch { keys: 5000, values: 4999 }) => {
            assert!(e.to_string().contains("one value per key"), "{e}")
        }
        r => panic!("expected LengthMismatch, got {r:?}"),
    };
    mismatch(g.sort_pairs(&mut k, &mut v, &opts));
    mismatch(g.sort_pairs_with_scratch(&mut k, &mut v, &opts, &mut Scratch::new()));
    mismatch(g.sort_segments_pairs(&mut k, &mut v, 100, Order::Descending));
    let (mut hk, mut hv) = (keys.clone(), vals[..n - 1].to_vec());
    mismatch(g.sort_pairs_slice(&mut hk, &mut hv, &opts));
    assert!(hk == keys && hv == vals[..n - 1], "host slices unchanged");

    // Configurations the kernels do not have, whatever the length (also 0 and 1).
    let bad_configs = [
        MergeSortConfig { tile: 1000, ..Default::default() },
        MergeSortConfig { tile: 32_768, ..Default::default() },
        MergeSortConfig { tile: 4096, merge: MergeKernel::WarpBitonic, outputs_per_thread: 5, ..Default::default() },
        MergeSortConfig { tile: 256, merge: MergeKernel::WarpBitonic, outputs_per_thread: 16, ..Default::default() },
        MergeSortConfig { tile: 4096, merge: MergeKernel::Block, outputs_per_thread: 4, ..Default::default() },
        // A block merge tile (256 threads x 8) larger than the sort tile.
        MergeSortConfig { tile: 1024, merge: MergeKernel::Block, outputs_per_thread: 0, ..Default::default() },
    ];
    for cfg in bad_configs {
        let o = SortOptions { merge_sort: cfg, ..Default::default() };
        let bad = |r: warpsort::Result<()>| match r {
            Err(e @ Error::BadConfig(_)) => assert!(e.to_string().contains("must be"), "{e}"),
            r => panic!("{cfg:?}: expected BadConfig, got {r:?}"),
        };
        bad(g.sort_with(&mut k, &o));
        bad(g.sort_with_scratch(&mut k, &o, &mut Scratch::new()));
        let mut full_v = g.stream().clone_htod(&vals).unwrap();
        bad(g.sort_pairs(&mut k, &mut full_v, &o));
        let mut h = keys.clone();
        bad(g.sort_slice_with(&mut h, &o));
        assert_eq!(h, keys);
        bad(g.sort_slice_with(&mut [1u32], &o));
        let mut one = g.stream().clone_htod(&[7u32]).unwrap();
        bad(g.sort_with(&mut one, &o));
        assert_eq!(g.stream().clone_dtoh(&full_v).unwrap(), vals);
    }

    // Segment lengths past the kernels' limits, and kernels that cannot sort the length asked.
    let bad_segment = |r: warpsort::Result<()>, len: usize| match r {
        Err(e @ Error::BadSegment { len: l, .. }) if l == len => {
            assert!(e.to_string().contains("use 1 to"), "{e}")
        }
        r => panic!("segments of {len}: expected BadSegment, got {r:?}"),
    };
    bad_segment(g.sort_segments(&mut k, 0, Order::Ascending), 0);
    let mut full_v = g.stream().clone_htod(&vals).unwrap();
    bad_segment(g.sort_segments_pairs(&mut k, &mut full_v, 0, Order::Ascending), 0);
    bad_segment(g.sort_segments_with(&mut k, 33, Order::Ascending, SegmentKernel::Warp { keys_per_lane: 1 }), 33);
    bad_segment(g.sort_segments_with(&mut k, 100, Order::Ascending, SegmentKernel::WarpChunks { chunk: 96 }), 100);
    bad_segment(g.sort_segments_with(&mut k, 600, Order::Ascending, SegmentKernel::Block { tile: 600 }), 600);
    bad_segment(g.sort_segments_with(&mut k, 40, Order::Ascending, SegmentKernel::Warp { keys_per_lane: 3 }), 40);

    assert_eq!(g.stream().clone_dtoh(&k).unwrap(), keys, "keys unchanged");
    assert_eq!(g.stream().clone_dtoh(&v).unwrap(), vals[..n - 1], "values unchanged");
    assert_eq!(g.stream().clone_dtoh(&full_v).unwrap(), vals, "values unchanged");

    // Rows of any length sort: past a block's tile (and past the keys: one row) by the merge sort.
    for len in [8193, 100_000, usize::MAX] {
        let mut d = g.stream().clone_htod(&keys).unwrap();
        g.sort_segments(&mut d, len, Order::Descending).unwrap();
        let mut want = keys.clone();
        want.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(g.stream().clone_dtoh(&d).unwrap(), want, "one row of {len}");
    }
}
