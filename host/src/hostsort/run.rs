//! The host sorts' pipelines, on the GPU (`in_core`: the items fit twice;
//! `resident`: once) and beyond it (`out_of_core`), and what they share: the items' device
//! buffers, encoding the keys onto ordered patterns and back, progress.

use std::cell::RefCell;
use std::mem::size_of;
use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaSlice, DeviceRepr};
use warpsort_kernels::ordered::Fields;
use warpsort_kernels::ordered::mode::DECODE;

use super::plan::{self, Route, StreamPlan, Work};
use super::{HostOptions, Phase, Progress};
use crate::api::same_len;
use crate::error::{Error, Result};
use crate::exec::wide::WideItems;
use crate::gpu::Gpu;
use crate::gpu::scratch::{Scratch, alloc_bytes};
use crate::gpu::staging::{Down, Lanes, Up};
use crate::key::{Bits, Order, Payload, SortIndex, SortKey};
use crate::launch::{DevPtr, ItemKind, Items};
use crate::options::SortOptions;
use crate::plan::SortShape;
use crate::plan::merge_runs::MergeRunsPlan;
use crate::policy::STREAMING;
use crate::trace;

/// Device room for `cap` items: ordered keys, values, and (keys stored as
/// fields, with `raw`) the keys as the host holds them.
struct DevItems {
    keys: CudaSlice<u8>,
    vals: Option<CudaSlice<u8>>,
    raw: Option<(CudaSlice<u8>, Fields)>,
    kind: ItemKind,
}

impl DevItems {
    fn new(gpu: &Gpu, cap: usize, w: &Work, raw: bool) -> Result<Self> {
        let (kb, vb) = (w.kind.key_bytes(), w.kind.val_bytes());
        let s = gpu.stream();
        let vals = if vb > 0 { Some(alloc_bytes(s, cap * vb)?) } else { None };
        let raw = match w.fields {
            Some(f) if raw => Some((alloc_bytes(s, cap * f.stride() as usize)?, f)),
            _ => None,
        };
        Ok(DevItems { keys: alloc_bytes(s, cap * kb)?, vals, raw, kind: w.kind })
    }

    fn items(&self, gpu: &Gpu, n: usize) -> Items {
        Items::new(gpu.ptr(&self.keys), self.vals.as_ref().map_or(0, |v| gpu.ptr(v)), n, self.kind)
    }

    /// Where item `at`'s key is as the host holds it (`host_key_bytes` wide).
    fn host_keys(&self, gpu: &Gpu, at: usize) -> DevPtr {
        match &self.raw {
            Some((r, f)) => gpu.ptr(r) + (at * f.stride() as usize) as u64,
            None => gpu.ptr(&self.keys) + (at * self.kind.key_bytes()) as u64,
        }
    }

    fn vals_at(&self, gpu: &Gpu, at: usize) -> DevPtr {
        self.vals.as_ref().map_or(0, |v| gpu.ptr(v) + (at * self.kind.val_bytes()) as u64)
    }

    /// Maps items `at..at + len` onto ordered patterns under `m` (encoded
    /// from the raw copy for keys stored as fields), or back (`m` with
    /// `DECODE`; into the raw copy).
    fn code(&self, gpu: &Gpu, at: usize, len: usize, m: u32) -> Result<()> {
        match &self.raw {
            Some((_, f)) => {
                let words = self.items(gpu, at + len).range(at, len).keys;
                gpu.encode_keys(self.kind.keys_only(), *f, self.host_keys(gpu, at), words, len, m)
            }
            None => gpu.map_keys(&self.items(gpu, at + len).range(at, len), m),
        }
    }
}

/// What every step of one host sort shares.
struct Ctx<'a> {
    gpu: &'a Gpu,
    opts: &'a HostOptions<'a>,
    w: Work,
    /// `K::MODE` and the order.
    mode: u32,
    /// Bytes per item on the host (key and value).
    host_bytes: usize,
    out_of_core: bool,
    /// The last report (the transfer loops ask at every turn; the caller
    /// hears of each change once).
    last: std::cell::Cell<Option<(Phase, usize)>>,
}

impl Ctx<'_> {
    /// Tells the caller `items` items went through `phase`; fails there if
    /// a fault is injected there.
    fn report(&self, phase: Phase, items: usize) -> Result<()> {
        if self.last.replace(Some((phase, items))) == Some((phase, items)) {
            return Ok(());
        }
        let done = (items * self.host_bytes) as u64;
        if let Some(p) = self.opts.progress {
            p(Progress { phase, done, total: (self.w.n * self.host_bytes) as u64, out_of_core: self.out_of_core });
        }
        match self.opts.fault {
            Some(f) if f.phase == phase && done >= f.after => Err(Error::Injected(phase.name())),
            _ => Ok(()),
        }
    }

    /// The runs' sorts: keys already mapped (ascending patterns), the
    /// caller's stability, and no waits (one would stall this thread, which
    /// feeds the uploads).
    fn local(&self) -> SortOptions {
        SortOptions { order: Order::Ascending, ..self.opts.sort }.without_waits()
    }

    fn shape(&self) -> SortShape {
        SortShape::new(self.w.kind.key_bytes(), self.w.kind.val_bytes())
    }
}

impl Gpu {
    /// A host sort of keys wider than a word: in the GPU's memory when the
    /// copies and the sort fit the limit (the keys and values copied up,
    /// sorted by [`Gpu::sort_wide`], copied back), else beyond it
    /// ([`Gpu::wide_permutation_host`], then keys and values permuted on the
    /// host). The host slices change only once the sort has succeeded.
    fn host_sort_wide<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: Option<&mut [V]>,
        opts: &HostOptions,
        fields: Fields,
    ) -> Result<()> {
        let n = keys.len();
        opts.sort.validate()?;
        let vb = if vals.is_some() { size_of::<V>() } else { 0 };
        // The copies, the sort's records and values, its positions and two
        // words of each key, and a stable (u64, u32) pass's own storage.
        let pass = SortOptions { stable: true, ..opts.sort };
        let needed = n * (2 * size_of::<K>() + 2 * vb + 4 + 16) + Gpu::sort_temp_bytes(&pass, n, 8, 4);
        let limit = match opts.memory_limit {
            Some(l) => l,
            None => self.context().mem_get_info()?.0,
        };
        if n < 2 {
            return Ok(());
        }
        if needed > limit || crate::exec::wide::check_wide(n, &opts.sort).is_err() {
            let perm = self.wide_permutation_host(keys, opts)?;
            permute(keys, &perm);
            if let Some(v) = vals {
                permute(v, &perm);
            }
            return Ok(());
        }
        let s = self.stream();
        let dk = s.clone_htod(&*keys)?;
        let dv = match &vals {
            Some(v) => Some(s.clone_htod(&**v)?),
            None => None,
        };
        let vp = dv.as_ref().map_or(0, |d| self.ptr(d));
        let w = WideItems { raw: self.ptr(&dk), vals: vp, val_bytes: vb, n, fields };
        self.sort_wide(w, &opts.sort, &|it, o| self.full_pass(it, o))?;
        s.memcpy_dtoh(&dk, keys)?;
        if let (Some(v), Some(dv)) = (vals, &dv) {
            s.memcpy_dtoh(dv, v)?;
        }
        Ok(())
    }

    /// The positions that sort host keys wider than a word (left
    /// unchanged), of any length, under any memory limit: the words of the
    /// keys, least significant first, each gathered in the order so far (on
    /// all cores) and host-sorted with the positions ([`Gpu::host_sort`]:
    /// on the GPU or beyond it), every pass after the first stable (a radix
    /// sort whose digits are words, as [`Gpu::sort_wide`] on the GPU). A
    /// descending order sorts the words' complements.
    pub(crate) fn wide_permutation_host<K: SortKey>(&self, keys: &[K], opts: &HostOptions) -> Result<Vec<u64>> {
        permutation_by_words(keys, &opts.sort, |word, perm, sort| {
            self.host_sort(word, Some(perm), &HostOptions { sort, ..*opts })
        })
    }

    /// Plans and runs a host sort of `keys` (and `vals`).
    pub(crate) fn host_sort<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: Option<&mut [V]>,
        opts: &HostOptions,
    ) -> Result<()> {
        trace::mark("host sort: start");
        crate::gpu::crew::wake();
        let n = keys.len();
        if let Some(v) = &vals {
            same_len(n, v.len())?;
        }
        let vb = if vals.is_some() { size_of::<V>() } else { 0 };
        if let Some(fields) = crate::api::wide::<K>() {
            return self.host_sort_wide(keys, vals, opts, fields);
        }
        let w = Work { n, kind: ItemKind::new(size_of::<K::Bits>(), vb), fields: K::FIELDS };
        // The memory this sort frees stays mapped in the device's pool for
        // the next one. The plan counts only what the driver has free (the
        // pool's spare may be cut in pieces too small for this sort's
        // buffers); a sort that would not fit on the GPU twice first hands
        // the spare back, to count it.
        self.keep_freed_memory()?;
        let mut plan = StreamPlan::new(&opts.sort, w, self.host_memory_limit(opts)?, self.policy())?;
        if n < 2 {
            return Ok(());
        }
        if !matches!(plan.route, Route::InCore { .. }) && opts.memory_limit.is_none() && self.pool_spare()? > 0 {
            self.trim_pool()?;
            plan = StreamPlan::new(&opts.sort, w, self.host_memory_limit(opts)?, self.policy())?;
        }
        let mut staging = self.staging(opts.staging_bytes)?;
        let Some(lanes) = staging.as_mut() else { unreachable!("staging() fills the slot") };
        trace::mark("host sort: planned, staging held");
        let c = Ctx {
            gpu: self,
            opts,
            w,
            mode: K::MODE | opts.sort.order.mode(),
            host_bytes: size_of::<K>() + vb,
            out_of_core: matches!(plan.route, Route::OutOfCore { .. }),
            last: std::cell::Cell::new(None),
        };
        let r = match &plan.route {
            Route::InCore { runs, merge, run_temp } => c.in_core(lanes, runs, merge.as_ref(), *run_temp, keys, vals),
            Route::Resident { runs, bucket, run_temp } => c.resident(lanes, runs, *bucket, *run_temp, keys, vals),
            Route::OutOfCore { runs, run, bucket, run_temp } => {
                c.out_of_core(lanes, runs, *run, *bucket, *run_temp, keys, vals)
            }
        };
        if r.is_err() {
            lanes.quiesce();
        }
        trace::mark("host sort: end");
        r
    }

    /// The device memory a host sort may use: the caller's limit, or what
    /// the device has free less a margin.
    fn host_memory_limit(&self, opts: &HostOptions) -> Result<usize> {
        Ok(match opts.memory_limit {
            Some(l) => l,
            None => {
                let free = self.context().mem_get_info()?.0;
                free - STREAMING.margin_bytes.min(free / 8)
            }
        })
    }

    /// [`Gpu::argsort_host`]: streamed when the GPU argsort fits the limit
    /// (and its length limits), else a host sort of a copy of the keys with
    /// their positions (keys wider than a word: their words one at a time,
    /// [`Gpu::wide_permutation_host`]).
    pub(crate) fn host_argsort<K: SortKey, I: SortIndex>(&self, keys: &[K], opts: &HostOptions) -> Result<Vec<I>> {
        let n = keys.len();
        if n > I::MAX_LEN {
            return Err(Error::TooLong { len: n, max: I::MAX_LEN });
        }
        opts.sort.validate()?;
        let ib = size_of::<I>();
        let wide = crate::api::wide::<K>().is_some();
        // The GPU's argsort of wide keys ranks them by `u32` positions.
        let streamed = if crate::api::argsort::check_len(n, if wide { 4 } else { ib }, &opts.sort).is_err() {
            false
        } else if wide {
            // The keys up, the positions; two words, the permutation and its
            // `u64` form, and a stable (u64, u32) pass's storage.
            let pass = SortOptions { stable: true, ..opts.sort };
            n * (size_of::<K>() + ib + 16 + 12) + Gpu::sort_temp_bytes(&pass, n, 8, 4)
                <= self.host_memory_limit(opts)?
        } else {
            // The keys up, the positions, the argsort's storage.
            let temp = crate::api::argsort::argsort_plan::<K>(self, &opts.sort, n, ib)?.temp_bytes;
            n * (size_of::<K>() + ib) + temp <= self.host_memory_limit(opts)?
        };
        if streamed {
            return self.argsort_streamed(keys, &opts.sort);
        }
        if wide {
            let perm = self.wide_permutation_host(keys, opts)?;
            return Ok(perm.into_iter().map(|p| I::position(p as usize)).collect());
        }
        let mut copy = keys.to_vec();
        let mut positions: Vec<I> = (0..n).map(I::position).collect();
        self.host_sort(&mut copy, Some(&mut positions), opts)?;
        Ok(positions)
    }

    /// The keys streamed up, argsorted on the GPU, the positions streamed
    /// down ([`Gpu::host_argsort`] checked the options and the length).
    fn argsort_streamed<K: SortKey, I: SortIndex>(&self, keys: &[K], opts: &SortOptions) -> Result<Vec<I>> {
        let n = keys.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let dk = self.upload_staged(keys)?;
        // SAFETY: argsort_into writes every element before it returns Ok.
        let mut p = unsafe { crate::gpu::scratch::alloc_items::<I>(self.stream(), n) }?;
        self.argsort_into(&dk, &mut p, opts)?;
        let mut out = vec![I::position(0); n];
        self.download_staged(&p, &mut out)?;
        Ok(out)
    }

    /// Host items copied into a new device buffer through the handle's
    /// pinned staging (pageable memory on all cores, pinned memory
    /// directly), after the work on the handle's stream; returns once the
    /// copy has landed (a pinned `host` is read by the DMAs themselves), and
    /// the handle's stream waits for it too.
    pub(crate) fn upload_staged<T: DeviceRepr + Copy>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        crate::gpu::crew::wake();
        let mut staging = self.staging(0)?;
        let Some(lanes) = staging.as_mut() else { unreachable!("staging() fills the slot") };
        let r = (|| {
            // SAFETY: the upload below writes every element before the
            // handle's stream, which waits for it, reads any.
            let d = unsafe { crate::gpu::scratch::alloc_items::<T>(self.stream(), host.len()) }?;
            lanes.up_after_stream(self.stream())?;
            trace::mark("upload: start");
            lanes.run(&mut [Up::new(host, self.ptr(&d))], &mut [])?;
            let landed = lanes.up_done()?;
            self.stream().wait(&landed)?;
            landed.synchronize()?;
            trace::mark("upload: landed");
            Ok(d)
        })();
        if r.is_err() {
            lanes.quiesce();
        }
        r
    }

    /// A device buffer copied into host items (as long) through the
    /// handle's pinned staging, after the work queued on its stream.
    pub(crate) fn download_staged<T: DeviceRepr + Copy>(&self, dev: &CudaSlice<T>, host: &mut [T]) -> Result<()> {
        if dev.len() != host.len() {
            return Err(Error::CopyLength { device: dev.len(), host: host.len() });
        }
        crate::gpu::crew::wake();
        let mut staging = self.staging(0)?;
        let Some(lanes) = staging.as_mut() else { unreachable!("staging() fills the slot") };
        let r = (|| {
            lanes.down_after(&self.stream().record_event(None)?)?;
            trace::mark("download: start");
            let mut down = Down::new(self.ptr(dev), host);
            while lanes.step_down(&mut down)? {}
            trace::mark("download: end");
            Ok(())
        })();
        if r.is_err() {
            lanes.quiesce();
        }
        r
    }
}

impl Ctx<'_> {
    /// On the GPU: each run copied up and sorted as it arrives (while the
    /// next one copies), the runs merged as soon as both halves of a merge
    /// are sorted (the last run's sort leaves its path to the root to
    /// merge, not every round), the items copied back.
    fn in_core<K: SortKey, V: Payload>(
        &self,
        lanes: &mut Lanes,
        runs: &[Range<usize>],
        merge: Option<&MergeRunsPlan>,
        run_temp: usize,
        keys: &mut [K],
        vals: Option<&mut [V]>,
    ) -> Result<()> {
        let (gpu, n) = (self.gpu, self.w.n);
        let a = DevItems::new(gpu, n, &self.w, true)?;
        let b = match merge {
            Some(_) => Some(DevItems::new(gpu, n, &self.w, false)?),
            None => None,
        };
        let mut scratch = Scratch::with_capacity(gpu, run_temp)?;
        let parts = alloc_bytes(gpu.stream(), merge.map_or(8, |m| m.parts_bytes))?;
        trace::mark("in core: buffers allocated");
        let fin = match (merge, &b) {
            (Some(m), Some(b)) if m.ends_in() == 1 => b,
            _ => &a,
        };
        // Each range of the sorted items, as the last merge makes it:
        // decoded into `fin` (keys stored as fields into `a`'s raw copy),
        // then an event its copy back waits for.
        let ready: RefCell<Vec<(usize, Arc<CudaEvent>)>> = RefCell::new(Vec::new());
        let decoded = |r: Range<usize>| -> Result<()> {
            let (words, mode) = (fin.items(gpu, n).range(r.start, r.len()), self.mode | DECODE);
            match &a.raw {
                Some((_, f)) => {
                    gpu.encode_keys(words.kind.keys_only(), *f, a.host_keys(gpu, r.start), words.keys, r.len(), mode)?
                }
                None => gpu.map_keys(&words, mode)?,
            }
            ready.borrow_mut().push((r.start, Arc::new(gpu.stream().record_event(None)?)));
            trace::mark("root range: queued");
            trace::watch("gpu: a root range decoded", || Ok(gpu.stream().record_event(None)?));
            Ok(())
        };
        lanes.up_after_stream(self.gpu.stream())?;
        let merge_ready = |r: usize| match (merge, &b) {
            (Some(m), Some(b)) => {
                let bufs = [&a.items(gpu, n), &b.items(gpu, n)];
                gpu.merge_runs_after(bufs, m, r, gpu.ptr(&parts), STREAMING.root_ranges, &decoded)
            }
            _ => Ok(()),
        };
        self.upload_runs(lanes, &a, runs, &mut scratch, keys, vals.as_deref(), merge_ready)?;
        if merge.is_none() {
            decoded(0..n)?;
        }
        let kdown = match &a.raw {
            Some((r, _)) => gpu.ptr(r),
            None => gpu.ptr(&fin.keys),
        };
        let gates = |item_bytes: usize| ready.borrow().iter().map(|(at, e)| (at * item_bytes, e.clone())).collect();
        let mut downs = vec![Down::new(kdown, keys).gated(gates(size_of::<K>()))];
        if let Some(v) = vals {
            downs.push(Down::new(fin.vals_at(gpu, 0), v).gated(gates(size_of::<V>())));
        }
        trace::mark("in core: every run queued, download");
        self.drive_down(lanes, &mut downs, Phase::Download, 0, n)
    }

    /// Copies each run up into its place in `a` and queues its sort as it
    /// arrives, then `sorted_run(run)`: the runs' pieces go to the staging in
    /// one stream (no pause between runs), and a run's sort is queued once
    /// its last piece's DMA is.
    #[allow(clippy::too_many_arguments)]
    fn upload_runs<K: SortKey, V: Payload>(
        &self,
        lanes: &mut Lanes,
        a: &DevItems,
        runs: &[Range<usize>],
        scratch: &mut Scratch,
        keys: &[K],
        vals: Option<&[V]>,
        mut sorted_run: impl FnMut(usize) -> Result<()>,
    ) -> Result<()> {
        let gpu = self.gpu;
        // A run's jobs (its keys, then its values), run after run.
        let per_run = 1 + vals.is_some() as usize;
        let mut jobs: Vec<Up> = Vec::with_capacity(runs.len() * per_run);
        for r in runs {
            jobs.push(Up::new(&keys[r.clone()], a.host_keys(gpu, r.start)));
            if let Some(v) = vals {
                jobs.push(Up::new(&v[r.clone()], a.vals_at(gpu, r.start)));
            }
        }
        // Each run's upload finished (an event after its last DMA, recorded
        // before any later run's DMA is queued: `Lanes::step_ups` queues
        // them in order), and the runs whose sort is queued.
        let mut arrived: Vec<CudaEvent> = Vec::with_capacity(runs.len());
        let mut sorted = 0;
        while sorted < runs.len() {
            lanes.step_ups(&mut jobs[arrived.len() * per_run..])?;
            while arrived.len() < runs.len() && jobs[arrived.len() * per_run..][..per_run].iter().all(Up::done) {
                arrived.push(lanes.up_done()?);
                trace::watch("gpu: a run's upload landed", || lanes.up_done());
            }
            while sorted < arrived.len() {
                trace::mark(trace::step::RUN_QUEUING);
                self.sort_run(a, &runs[sorted], scratch, &arrived[sorted])?;
                trace::watch("gpu: a run sorted", || Ok(gpu.stream().record_event(None)?));
                sorted_run(sorted)?;
                trace::watch("gpu: a run's merges done", || Ok(gpu.stream().record_event(None)?));
                trace::mark(trace::step::RUN_QUEUED);
                sorted += 1;
            }
            let queued: f64 = runs
                .iter()
                .zip(jobs.chunks(per_run))
                .map(|(r, ups)| r.len() as f64 * ups.iter().map(Up::fraction).fold(1.0f64, f64::min))
                .sum();
            self.report(Phase::Upload, queued as usize)?;
        }
        Ok(())
    }

    /// Once on the GPU, not twice: the runs copied up and sorted as they
    /// arrive (as on the GPU) and kept there; then buckets cut by splitters
    /// from the runs' samples (searched on the GPU), each gathered from the
    /// runs, merged, decoded and copied back while the next one merges. A
    /// failed bucket pass is mended from the runs while the device works.
    #[allow(clippy::too_many_arguments)]
    fn resident<K: SortKey, V: Payload>(
        &self,
        lanes: &mut Lanes,
        runs: &[Range<usize>],
        bucket: usize,
        run_temp: usize,
        keys: &mut [K],
        mut vals: Option<&mut [V]>,
    ) -> Result<()> {
        let (gpu, n, w) = (self.gpu, self.w.n, &self.w);
        let kb = w.kind.key_bytes();
        let a = DevItems::new(gpu, n, w, true)?;
        {
            let mut scratch = Scratch::with_capacity(gpu, run_temp)?;
            lanes.up_after_stream(self.gpu.stream())?;
            self.upload_runs(lanes, &a, runs, &mut scratch, keys, vals.as_deref(), |_| Ok(()))?;
        }
        let run_keys = |r: usize| gpu.ptr(&a.keys) + (runs[r].start * kb) as u64;
        let sizes: Vec<usize> = runs.iter().map(|r| r.len()).collect();
        let sampled = alloc_bytes(gpu.stream(), plan::MAX_SAMPLES * kb)?;
        let sample = |r: usize, at: &[usize]| -> Result<Vec<K::Bits>> {
            gpu.take_samples(run_keys(r), kb, at, gpu.ptr(&sampled))?;
            let mut out = vec![K::Bits::default(); at.len()];
            gpu.download(gpu.ptr(&sampled), &mut out)?;
            Ok(out)
        };
        let search = |r: usize, cuts: &[_]| gpu.bucket_ends(r, run_keys(r), runs[r].len(), kb, cuts);
        let ends = plan::buckets(&sizes, bucket, sample, search)?;
        drop(sampled);
        let pieces = Pieces { runs, ends: &ends };
        let (count, starts) = (pieces.count(), pieces.starts());
        let mut complete = 0;
        let r = (|| -> Result<()> {
            let (src, tmp) = (DevItems::new(gpu, bucket, w, false)?, DevItems::new(gpu, bucket, w, false)?);
            let out = [DevItems::new(gpu, bucket, w, true)?, DevItems::new(gpu, bucket, w, true)?];
            let parts = MergeRunsPlan::parts_bytes_up_to(w.kind, bucket, gpu.policy());
            let parts = alloc_bytes(gpu.stream(), parts)?;
            // Each bucket's pieces copied together from the runs, then merged.
            let merge = |b: usize, _: &mut Lanes| {
                let (all, from) = (a.items(gpu, n), src.items(gpu, pieces.len(b)));
                let mut off = 0;
                for g in pieces.global(b) {
                    gpu.copy_items(&all.range(g.start, g.len()), &from.range(off, g.len()), 0, g.len())?;
                    off += g.len();
                }
                self.merge_bucket(&pieces, b, &src, &tmp, &out[b % 2], gpu.ptr(&parts))
            };
            let none = |_: usize| Vec::new();
            self.bucket_pass(lanes, &starts, &out, keys, vals.as_deref_mut(), none, merge, &mut complete)
        })();
        if r.is_err() {
            // Every item once, while the device works: the buckets not yet
            // in place from the runs on the GPU.
            lanes.quiesce();
            let mut at = starts[complete];
            for b in complete..count {
                for g in pieces.global(b) {
                    let mut p = vec![K::Bits::default(); g.len()];
                    gpu.download(gpu.ptr(&a.keys) + (g.start * kb) as u64, &mut p)?;
                    for (k, p) in keys[at..at + g.len()].iter_mut().zip(p) {
                        *k = K::from_bits(p.map(self.mode | DECODE));
                    }
                    if let Some(v) = vals.as_deref_mut() {
                        gpu.download(a.vals_at(gpu, g.start), &mut v[at..at + g.len()])?;
                    }
                    at += g.len();
                }
            }
        }
        r
    }

    /// The pass of both routes that merge buckets into place: while bucket
    /// `b`'s pieces go up (`ups(b)`: none when the runs are on the GPU) and
    /// `merge(b)` queues its merge into `out[b % 2]`, decoded, bucket `b - 1`
    /// copies down into its place (`starts`). `complete` counts the buckets
    /// in place, for the mend after an error.
    #[allow(clippy::too_many_arguments)]
    fn bucket_pass<K: SortKey, V: Payload>(
        &self,
        lanes: &mut Lanes,
        starts: &[usize],
        out: &[DevItems; 2],
        keys: &mut [K],
        mut vals: Option<&mut [V]>,
        mut ups: impl FnMut(usize) -> Vec<Up>,
        mut merge: impl FnMut(usize, &mut Lanes) -> Result<()>,
        complete: &mut usize,
    ) -> Result<()> {
        let (gpu, count) = (self.gpu, starts.len() - 1);
        let mut merged: Vec<CudaEvent> = Vec::with_capacity(count);
        for b in 0..=count {
            let mut up = Vec::new();
            if b < count {
                // Into the slot bucket `b - 2` was merged from.
                if b >= 2 {
                    lanes.up_after(&merged[b - 2])?;
                }
                up = ups(b);
            }
            let mut downs = Vec::new();
            if b > 0 {
                let (o, range) = (&out[(b - 1) % 2], starts[b - 1]..starts[b]);
                lanes.down_after(&merged[b - 1])?;
                downs.push(Down::new(o.host_keys(gpu, 0), &mut keys[range.clone()]));
                if let Some(v) = vals.as_deref_mut() {
                    downs.push(Down::new(o.vals_at(gpu, 0), &mut v[range]));
                }
            }
            let queue = |lanes: &mut Lanes| {
                if b < count {
                    merge(b, lanes)?;
                    merged.push(gpu.stream().record_event(None)?);
                }
                Ok(())
            };
            let report = |frac: f64| {
                if b == 0 {
                    return Ok(());
                }
                let done = starts[b - 1] + ((starts[b] - starts[b - 1]) as f64 * frac) as usize;
                self.report(Phase::Merge, done.min(starts[b].saturating_sub(1)))
            };
            self.interleave(lanes, &mut up, &mut downs, queue, report)?;
            if b > 0 {
                *complete = b;
                self.report(Phase::Merge, starts[b])?;
            }
        }
        Ok(())
    }

    /// Queues the merge of bucket `b`'s pieces, gathered in `from`, into
    /// `to` (through `via`), decoded.
    fn merge_bucket(
        &self,
        pieces: &Pieces,
        b: usize,
        from: &DevItems,
        via: &DevItems,
        to: &DevItems,
        parts: DevPtr,
    ) -> Result<()> {
        let (gpu, len) = (self.gpu, pieces.len(b));
        let lens: Vec<usize> = pieces.global(b).map(|g| g.len()).collect();
        let m = MergeRunsPlan::new(self.w.kind, &lens, gpu.policy());
        gpu.merge_runs(&from.items(gpu, len), &via.items(gpu, len), &to.items(gpu, len), &m, parts)?;
        to.code(gpu, 0, len, self.mode | DECODE)
    }

    /// Copies pieces down until all landed, reporting `phase` from `base`
    /// items up to `base + len`.
    fn drive_down(&self, lanes: &mut Lanes, downs: &mut [Down], phase: Phase, base: usize, len: usize) -> Result<()> {
        loop {
            let mut busy = false;
            for d in downs.iter_mut() {
                busy |= lanes.step_down(d)?;
            }
            let frac = downs.iter().map(Down::fraction).fold(1.0f64, f64::min);
            self.report(phase, base + (len as f64 * frac) as usize)?;
            if !busy {
                return Ok(());
            }
        }
    }

    /// Runs an upload and a download at once, a slot of each in turn:
    /// `uploaded` once every upload is queued (the GPU's work on them),
    /// `report` with the share of the download queued after each step.
    fn interleave(
        &self,
        lanes: &mut Lanes,
        ups: &mut [Up],
        downs: &mut [Down],
        mut uploaded: impl FnMut(&mut Lanes) -> Result<()>,
        mut report: impl FnMut(f64) -> Result<()>,
    ) -> Result<()> {
        let mut queued = false;
        loop {
            let mut busy = lanes.step_ups(ups)?;
            if !queued && ups.iter().all(Up::done) {
                queued = true;
                uploaded(lanes)?;
            }
            for d in downs.iter_mut() {
                busy |= lanes.step_down(d)?;
            }
            report(downs.iter().map(Down::fraction).fold(1.0f64, f64::min))?;
            if !busy {
                return Ok(());
            }
        }
    }

    /// Queues the sort of run `r` (in `d` at the same place) after its
    /// upload (`arrived`): keys mapped onto ordered patterns, sorted
    /// ascending.
    fn sort_run(
        &self,
        d: &DevItems,
        r: &Range<usize>,
        scratch: &mut Scratch,
        arrived: &CudaEvent,
    ) -> Result<CudaEvent> {
        let gpu = self.gpu;
        gpu.stream().wait(arrived)?;
        d.code(gpu, r.start, r.len(), self.mode)?;
        let items = d.items(gpu, r.end).range(r.start, r.len());
        gpu.sort_pair_items(&items, self.shape(), 0, &self.local(), Some(scratch))?;
        Ok(gpu.stream().record_event(None)?)
    }

    /// Beyond the GPU. Pass 1: runs copied up (into two slots in turn),
    /// sorted, copied down as ordered patterns into host memory while the
    /// next run copies up. Pass 2: buckets cut by splitters from the runs'
    /// samples, each gathered from every run, merged on the GPU, decoded and
    /// copied into place while the next bucket copies up.
    #[allow(clippy::too_many_arguments)]
    fn out_of_core<K: SortKey, V: Payload>(
        &self,
        lanes: &mut Lanes,
        runs: &[Range<usize>],
        run: usize,
        bucket: usize,
        run_temp: usize,
        keys: &mut [K],
        mut vals: Option<&mut [V]>,
    ) -> Result<()> {
        let (gpu, n, w) = (self.gpu, self.w.n, &self.w);
        let (kb, vb) = (w.kind.key_bytes(), w.kind.val_bytes());
        // The sorted runs in host memory (zeroed pages, mapped as written: in
        // huge pages where the system allows, a fault per 2 MiB); freed on a
        // thread of their own when the sort ends.
        let mut tk: Vec<K::Bits> = vec![K::Bits::default(); n];
        let mut tv: Vec<u8> = vec![0; n * vb];
        huge_pages(&mut tk);
        huge_pages(&mut tv);
        {
            let slots = [DevItems::new(gpu, run, w, true)?, DevItems::new(gpu, run, w, true)?];
            let mut scratch = Scratch::with_capacity(gpu, run_temp)?;
            lanes.up_after_stream(self.gpu.stream())?;
            let mut sorted: Vec<CudaEvent> = Vec::with_capacity(runs.len());
            for j in 0..=runs.len() {
                let mut ups = Vec::new();
                if let Some(r) = runs.get(j) {
                    let s = &slots[j % 2];
                    ups.push(Up::new(&keys[r.clone()], s.host_keys(gpu, 0)));
                    if let Some(v) = vals.as_deref() {
                        ups.push(Up::new(&v[r.clone()], s.vals_at(gpu, 0)));
                    }
                }
                let mut downs = Vec::new();
                if j > 0 {
                    let (r, s) = (&runs[j - 1], &slots[(j - 1) % 2]);
                    lanes.down_after(&sorted[j - 1])?;
                    downs.push(Down::new(gpu.ptr(&s.keys), &mut tk[r.clone()]));
                    if vb > 0 {
                        downs.push(Down::new(s.vals_at(gpu, 0), &mut tv[r.start * vb..r.end * vb]));
                    }
                }
                let run = runs.get(j).map(|r| 0..r.len());
                let done = runs[..j].last().cloned();
                self.interleave(
                    lanes,
                    &mut ups,
                    &mut downs,
                    |lanes| match &run {
                        Some(r) => {
                            sorted.push(self.sort_run(&slots[j % 2], r, &mut scratch, &lanes.up_done()?)?);
                            Ok(())
                        }
                        None => Ok(()),
                    },
                    |frac| match &done {
                        Some(r) => self.report(Phase::Runs, r.start + (r.len() as f64 * frac) as usize),
                        None => Ok(()),
                    },
                )?;
            }
        }

        // Pass 2.
        let views: Vec<&[K::Bits]> = runs.iter().map(|r| &tk[r.clone()]).collect();
        let ends = plan::host_buckets(&views, bucket);
        let pieces = Pieces { runs, ends: &ends };
        let (count, starts) = (pieces.count(), pieces.starts());
        let mut complete = 0;
        let r = (|| -> Result<()> {
            let src = [DevItems::new(gpu, bucket, w, false)?, DevItems::new(gpu, bucket, w, false)?];
            let out = [DevItems::new(gpu, bucket, w, true)?, DevItems::new(gpu, bucket, w, true)?];
            let tmp = DevItems::new(gpu, bucket, w, false)?;
            let parts = MergeRunsPlan::parts_bytes_up_to(w.kind, bucket, gpu.policy());
            let parts = alloc_bytes(gpu.stream(), parts)?;
            lanes.up_after_stream(self.gpu.stream())?;
            // Each bucket's pieces up from the runs in host memory, then merged.
            let ups = |b: usize| {
                let (s, mut ups, mut off) = (&src[b % 2], Vec::new(), 0);
                for g in pieces.global(b) {
                    ups.push(Up::new(&tk[g.clone()], gpu.ptr(&s.keys) + (off * kb) as u64));
                    if vb > 0 {
                        ups.push(Up::new(&tv[g.start * vb..g.end * vb], s.vals_at(gpu, off)));
                    }
                    off += g.len();
                }
                ups
            };
            let merge = |b: usize, lanes: &mut Lanes| {
                gpu.stream().wait(&lanes.up_done()?)?;
                self.merge_bucket(&pieces, b, &src[b % 2], &tmp, &out[b % 2], gpu.ptr(&parts))
            };
            self.bucket_pass(lanes, &starts, &out, keys, vals.as_deref_mut(), ups, merge, &mut complete)
        })();
        if r.is_err() {
            // Every item once: the buckets not yet in place from the runs.
            lanes.quiesce();
            let mut at = starts[complete];
            for b in complete..count {
                for g in pieces.global(b) {
                    for (i, &p) in g.clone().zip(&tk[g.clone()]) {
                        keys[at] = K::from_bits(p.map(self.mode | DECODE));
                        if let Some(v) = vals.as_deref_mut() {
                            v[at] = unaligned_val(&tv[i * vb..(i + 1) * vb]);
                        }
                        at += 1;
                    }
                }
            }
        }
        drop(views);
        free_later((tk, tv));
        r
    }
}

/// The buckets' pieces of the sorted runs (`ends[r][b]`: where bucket `b`
/// ends in run `r`).
struct Pieces<'a> {
    runs: &'a [Range<usize>],
    ends: &'a [Vec<usize>],
}

impl Pieces<'_> {
    fn count(&self) -> usize {
        self.ends.first().map_or(0, Vec::len)
    }

    /// Bucket `b`'s pieces as ranges of the whole host buffer, in run order.
    fn global(&self, b: usize) -> impl Iterator<Item = Range<usize>> + '_ {
        self.runs.iter().zip(self.ends).map(move |(r, e)| {
            let lo = if b == 0 { 0 } else { e[b - 1] };
            r.start + lo..r.start + e[b]
        })
    }

    fn len(&self, b: usize) -> usize {
        self.global(b).map(|g| g.len()).sum()
    }

    /// Where each bucket starts in the sorted order, and the end.
    fn starts(&self) -> Vec<usize> {
        let mut starts = vec![0];
        for b in 0..self.count() {
            starts.push(starts[b] + self.len(b));
        }
        starts
    }
}

/// Drops `t` on a thread of its own (unmapping tens of GiB takes seconds
/// the caller need not wait for).
fn free_later<T: Send + 'static>(t: T) {
    std::thread::spawn(move || drop(t));
}

/// Asks the kernel to back `v` with huge pages (Linux; nothing elsewhere).
fn huge_pages<T>(v: &mut [T]) {
    #[cfg(target_os = "linux")]
    if size_of_val(v) >= 1 << 30 {
        let page = 4096usize;
        let start = (v.as_mut_ptr() as usize).next_multiple_of(page);
        let end = (v.as_mut_ptr() as usize + size_of_val(v)) / page * page;
        if end > start {
            // SAFETY: advice only, on whole pages inside `v`'s allocation.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
}

/// A value from its bytes (as the GPU moved them).
fn unaligned_val<V: Payload>(bytes: &[u8]) -> V {
    assert_eq!(bytes.len(), size_of::<V>());
    // SAFETY: `V` is a 4- or 8-byte number (`Payload`): every bit pattern is
    // a value; the read does not assume alignment.
    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<V>()) }
}

/// `items` rearranged so that item `i` is the one at `perm[i]` before.
fn permute<T: Copy + Send + Sync>(items: &mut [T], perm: &[u64]) {
    use rayon::prelude::*;
    let moved: Vec<T> = perm.par_iter().map(|&p| items[p as usize]).collect();
    items.copy_from_slice(&moved);
}

/// The positions that sort `keys` by `opts` (order, stability), one word at
/// a time from the least significant: each word gathered in the order so
/// far and sorted ascending with the positions by `pass` (with the options
/// given: stable after the first word).
fn permutation_by_words<K: SortKey>(
    keys: &[K],
    opts: &SortOptions,
    mut pass: impl FnMut(&mut [u64], &mut [u64], SortOptions) -> Result<()>,
) -> Result<Vec<u64>> {
    use rayon::prelude::*;
    let n = keys.len();
    let words = K::Bits::WORDS;
    let flip = if opts.order == Order::Descending { u64::MAX } else { 0 };
    let mut perm: Vec<u64> = (0..n as u64).collect();
    let mut word = vec![0u64; n];
    for j in (0..words).rev() {
        word.par_iter_mut().zip(&perm).for_each(|(w, &p)| *w = keys[p as usize].to_bits().map(K::MODE).word(j) ^ flip);
        let stable = opts.stable || j + 1 < words;
        pass(&mut word, &mut perm, SortOptions { order: Order::Ascending, stable, ..*opts })?;
    }
    Ok(perm)
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;

    use super::*;
    use crate::key::Tuple;

    /// The word passes with a CPU sort standing in for the host sort (an
    /// unstable pass reverses ties, as a sort may): the permutation sorts
    /// the keys in either order, stably when asked.
    #[test]
    fn word_passes_compose_into_the_order() {
        type K = Tuple<(i16, Reverse<f64>, u64)>;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let keys: Vec<K> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                Tuple(((x % 5) as i16 - 2, Reverse(((x >> 8) % 4) as f64 - 1.5), (x >> 20) % 3))
            })
            .collect();
        let cpu_pass = |w: &mut [u64], p: &mut [u64], o: SortOptions| -> Result<()> {
            let mut items: Vec<(u64, u64)> = w.iter().copied().zip(p.iter().copied()).collect();
            if o.stable {
                items.sort_by_key(|t| t.0);
            } else {
                items.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            }
            for (i, (a, b)) in items.into_iter().enumerate() {
                (w[i], p[i]) = (a, b);
            }
            Ok(())
        };
        for order in [Order::Ascending, Order::Descending] {
            for stable in [false, true] {
                let opts = SortOptions { order, stable, ..Default::default() };
                let perm = permutation_by_words(&keys, &opts, cpu_pass).unwrap();
                let mut want: Vec<u64> = (0..keys.len() as u64).collect();
                want.sort_by(|&a, &b| {
                    let c = keys[a as usize].key_cmp(&keys[b as usize]);
                    if order == Order::Descending { c.reverse() } else { c }
                });
                let got: Vec<K> = perm.iter().map(|&p| keys[p as usize]).collect();
                let sorted: Vec<K> = want.iter().map(|&p| keys[p as usize]).collect();
                assert!(got.iter().zip(&sorted).all(|(a, b)| a.to_bits() == b.to_bits()), "{order:?} stable {stable}");
                if stable {
                    assert_eq!(perm, want, "{order:?}: not stable");
                }
            }
        }
    }
}
