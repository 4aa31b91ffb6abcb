//! The distributed sort, phase by phase, over the GPUs this process drives
//! (all of them in a [`Cluster`](super::Cluster), one in a
//! [`Peer`](super::Peer)): every phase runs on each local GPU before the
//! next starts, and every NCCL call of a phase goes out in one group.
//!
//! 1. **local sort**: each GPU copies its keys (and values), maps the keys
//!    onto ordered patterns, and sorts them ascending (stably when asked);
//! 2. **splitters**: sizes and regular samples all-gathered, splitters
//!    chosen on the CPU (`plan::splitters`), bucket ends found on the GPU
//!    (`search_bounds`), counts all-gathered;
//! 3. **exchange**: bucket `q` of every GPU goes to GPU `q` (grouped
//!    `ncclSend`/`ncclRecv`; a GPU's own bucket by copy);
//! 4. **merge**: the received runs merged in GPU order (`merge_runs`);
//! 5. **rebalance** (exact input sizes only): the overlaps moved;
//! 6. **decode**: the keys mapped back into the caller's type.
//!
//! The caller's buffers are only read: on any error they are as they were.

use std::mem::size_of;
use std::time::Instant;

use cudarc::driver::{CudaEvent, CudaSlice, DeviceRepr};
use cudarc::nccl::Comm;

use super::nccl::{all_gather, grouped, recv, send};
use super::plan::{self, Exchange, Splitter};
use super::{Balance, DistOptions, DistReport};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::key::{Order, Payload, SortKey};
use crate::launch::{DevPtr, ItemKind, Items};
use crate::options::SortOptions;
use crate::plan::SortShape;
use crate::plan::merge_runs::MergeRunsPlan;

/// One GPU this process drives, with its communicator.
pub(crate) struct Member<'a> {
    pub gpu: &'a Gpu,
    pub comm: &'a Comm,
}

/// A caller's input on one GPU: keys (and values) at device addresses.
#[derive(Clone, Copy)]
pub(crate) struct Input {
    pub keys: DevPtr,
    pub vals: DevPtr,
    pub n: usize,
}

/// A GPU's sorted share.
pub(crate) struct Share<K, V> {
    pub keys: CudaSlice<K>,
    pub vals: Option<CudaSlice<V>>,
}

/// Phase names, in order (the report's rows).
const PHASES: [&str; 5] = ["local sort", "splitters", "exchange", "merge", "rebalance + decode"];

/// Owned device memory holding `n` items of `kind` (keys, then values), as
/// bytes, or typed as the caller's keys and values (the shares handed back:
/// 16-bit keys' buffer has room for their 32-bit patterns).
struct Buf<KT = u8, VT = u8> {
    keys: CudaSlice<KT>,
    vals: Option<CudaSlice<VT>>,
    n: usize,
    kind: ItemKind,
}

impl<KT: DeviceRepr, VT: DeviceRepr> Buf<KT, VT> {
    fn new(gpu: &Gpu, n: usize, kind: ItemKind) -> Result<Self> {
        // SAFETY: every byte is written (copy, sort, receive or merge) before it is read.
        let keys = unsafe { gpu.stream().alloc::<KT>((n * kind.key_bytes()).div_ceil(size_of::<KT>())) }?;
        let vals = if kind.pairs() {
            // SAFETY: as above.
            Some(unsafe { gpu.stream().alloc::<VT>((n * kind.val_bytes()).div_ceil(size_of::<VT>())) }?)
        } else {
            None
        };
        Ok(Buf { keys, vals, n, kind })
    }

    fn items(&self, gpu: &Gpu) -> Items {
        let vals = self.vals.as_ref().map_or(0, |v| gpu.ptr(v));
        Items::new(gpu.ptr(&self.keys), vals, self.n, self.kind)
    }
}

/// Sorts the inputs of `members` (rank order inside the communicator) as
/// `opts` says; `pairs` when the inputs carry values of `V`.
pub(crate) fn sort<K: SortKey, V: Payload>(
    members: &[Member],
    inputs: &[Input],
    pairs: bool,
    opts: &DistOptions,
) -> Result<(Vec<Share<K, V>>, DistReport)> {
    if crate::api::wide::<K>().is_some() {
        return Err(Error::BadConfig(format!(
            "{} keys are wider than 64 bits: they do not sort across GPUs yet",
            K::NAME
        )));
    }
    let start = Instant::now();
    let p = members[0].comm.world_size();
    let kb = size_of::<K::Bits>();
    let vb = if pairs { size_of::<V>() } else { 0 };
    let kind = ItemKind::new(kb, vb);
    let mode = K::MODE | opts.sort.order.mode();
    let mut events: Vec<Vec<CudaEvent>> = members.iter().map(|_| Vec::new()).collect();
    let mark = |events: &mut Vec<Vec<CudaEvent>>| -> Result<()> {
        for (m, ev) in members.iter().zip(events.iter_mut()) {
            let e = m.gpu.context().new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
            e.record(m.gpu.stream())?;
            ev.push(e);
        }
        Ok(())
    };
    mark(&mut events)?;

    // 1. Local sort of ordered patterns.
    // No waits (a scan of the order, the sample sort's): one would hold up
    // the other GPUs' launches.
    let local = SortOptions { order: Order::Ascending, ..opts.sort }.without_waits();
    let mut work = Vec::with_capacity(members.len());
    for (m, inp) in members.iter().zip(inputs) {
        let (gpu, n) = (m.gpu, inp.n);
        let buf = Buf::<u8, u8>::new(gpu, n, kind)?;
        let items = buf.items(gpu);
        if let Some(fields) = K::FIELDS {
            gpu.encode_keys(kind.keys_only(), fields, inp.keys, items.keys, n, mode)?;
        } else {
            gpu.copy_dtod(items.keys, inp.keys, n * kb)?;
            gpu.map_keys(&items, mode)?;
        }
        if pairs {
            gpu.copy_dtod(items.vals, inp.vals, n * vb)?;
        }
        gpu.sort_pair_items(&items, SortShape::new(kb, vb), 0, &local, None)?;
        work.push(buf);
    }
    mark(&mut events)?;

    // 2. Sizes and samples to every GPU; splitters; bucket ends; counts.
    let s = plan::samples_per_gpu(p);
    let sizes: Vec<usize>;
    let samples: Vec<Vec<K::Bits>>;
    {
        let mut bufs = Vec::new();
        for (m, (inp, w)) in members.iter().zip(inputs.iter().zip(&work)) {
            let gpu = m.gpu;
            let size = gpu.stream().clone_htod(&(inp.n as u64).to_ne_bytes())?;
            let mine = gpu.stream().alloc_zeros::<u8>(s * kb)?;
            gpu.take_samples(gpu.ptr(&w.keys), kb, &plan::sample_positions(inp.n, s), gpu.ptr(&mine))?;
            let all_sizes = gpu.stream().alloc_zeros::<u8>(8 * p)?;
            let all_samples = gpu.stream().alloc_zeros::<u8>(s * kb * p)?;
            bufs.push((size, mine, all_sizes, all_samples));
        }
        grouped(|| {
            for (m, (size, mine, all_sizes, all_samples)) in members.iter().zip(bufs.iter_mut()) {
                all_gather(m.comm, size, all_sizes)?;
                all_gather(m.comm, mine, all_samples)?;
            }
            Ok(())
        })?;
        // Every GPU got the same: read the first's.
        let (gpu, (_, _, all_sizes, all_samples)) = (members[0].gpu, &bufs[0]);
        sizes = download::<u64>(gpu, all_sizes, p)?.into_iter().map(|x| x as usize).collect();
        let flat = download::<K::Bits>(gpu, all_samples, s * p)?;
        samples = (0..p).map(|q| flat[q * s..q * s + s.min(sizes[q])].to_vec()).collect();
    }
    let targets = plan::targets(&sizes, opts.balance == Balance::Even);
    let cuts = plan::splitters(&sizes, &samples, &targets);
    let mut rows = Vec::new();
    for (m, w) in members.iter().zip(&work) {
        let row = bucket_counts(m.gpu, m.comm.rank(), w, &cuts)?;
        let bytes: Vec<u8> = row.iter().flat_map(|&c| (c as u64).to_ne_bytes()).collect();
        rows.push((m.gpu.stream().clone_htod(&bytes)?, m.gpu.stream().alloc_zeros::<u8>(8 * p * p)?));
    }
    grouped(|| members.iter().zip(rows.iter_mut()).try_for_each(|(m, (mine, all))| all_gather(m.comm, mine, all)))?;
    let flat = download::<u64>(members[0].gpu, &rows[0].1, p * p)?;
    let exchange =
        Exchange { counts: (0..p).map(|q| flat[q * p..q * p + p].iter().map(|&c| c as usize).collect()).collect() };
    mark(&mut events)?;

    // 3. The exchange.
    let mut got: Vec<Buf> = Vec::with_capacity(members.len());
    for m in members {
        got.push(Buf::<u8, u8>::new(m.gpu, exchange.received(m.comm.rank()), kind)?);
    }
    for (m, (w, g)) in members.iter().zip(work.iter().zip(&got)) {
        let me = m.comm.rank();
        let len = exchange.counts[me][me];
        let from = w.items(m.gpu).range(exchange.send_at(me, me), len);
        m.gpu.copy_items(&from, &g.items(m.gpu).range(exchange.recv_at(me, me), len), 0, len)?;
    }
    grouped(|| {
        for (m, (w, g)) in members.iter().zip(work.iter().zip(got.iter_mut())) {
            let me = m.comm.rank();
            for q in (0..p).filter(|&q| q != me) {
                let (out, at) = (exchange.counts[me][q], exchange.send_at(me, q));
                let (inn, to) = (exchange.counts[q][me], exchange.recv_at(q, me));
                send(m.comm, &w.keys, at * kb, out * kb, q)?;
                recv(m.comm, &mut g.keys, to * kb, inn * kb, q)?;
                if let (Some(wv), Some(gv)) = (&w.vals, &mut g.vals) {
                    send(m.comm, wv, at * vb, out * vb, q)?;
                    recv(m.comm, gv, to * vb, inn * vb, q)?;
                }
            }
        }
        Ok(())
    })?;
    drop(work);
    mark(&mut events)?;

    // 4. Merge the runs; 5. rebalance; 6. decode.
    let received: Vec<usize> = (0..p).map(|q| exchange.received(q)).collect();
    let moves = (opts.balance == Balance::InputSizes).then(|| plan::rebalance(&received, &sizes));
    let mut merged = Vec::with_capacity(members.len());
    for (m, g) in members.iter().zip(&got) {
        let gpu = m.gpu;
        let plan = MergeRunsPlan::batched(kind, &exchange.runs(m.comm.rank()), gpu.policy());
        let out = Buf::<K, V>::new(gpu, g.n, kind)?;
        let tmp = if plan.rounds.len() > 1 { Some(Buf::<u8, u8>::new(gpu, g.n, kind)?) } else { None };
        let parts = gpu.stream().alloc_zeros::<u8>(plan.parts_bytes)?;
        let src = g.items(gpu);
        let tmp_items = tmp.as_ref().map_or(src, |t| t.items(gpu));
        gpu.merge_runs(&src, &tmp_items, &out.items(gpu), &plan, gpu.ptr(&parts))?;
        merged.push(out);
    }
    drop(got);
    mark(&mut events)?;
    let mut finals = Vec::with_capacity(members.len());
    match &moves {
        None => finals = merged,
        Some(moves) => {
            for m in members {
                finals.push(Buf::<K, V>::new(m.gpu, sizes[m.comm.rank()], kind)?);
            }
            for (m, (src, dst)) in members.iter().zip(merged.iter().zip(&finals)) {
                let me = m.comm.rank();
                for mv in moves[me].iter().filter(|mv| mv.to == me) {
                    m.gpu.copy_items(
                        &src.items(m.gpu).range(mv.from_at, mv.len),
                        &dst.items(m.gpu).range(mv.to_at, mv.len),
                        0,
                        mv.len,
                    )?;
                }
            }
            grouped(|| {
                for (m, (src, dst)) in members.iter().zip(merged.iter().zip(finals.iter_mut())) {
                    let me = m.comm.rank();
                    for mv in moves[me].iter().filter(|mv| mv.to != me) {
                        send(m.comm, &src.keys, mv.from_at * kb, mv.len * kb, mv.to)?;
                        if let Some(v) = &src.vals {
                            send(m.comm, v, mv.from_at * vb, mv.len * vb, mv.to)?;
                        }
                    }
                    let incoming = moves.iter().enumerate().filter(|&(q, _)| q != me);
                    for (q, mv) in incoming.flat_map(|(q, l)| l.iter().filter(|mv| mv.to == me).map(move |mv| (q, mv)))
                    {
                        recv(m.comm, &mut dst.keys, mv.to_at * kb, mv.len * kb, q)?;
                        if let Some(v) = &mut dst.vals {
                            recv(m.comm, v, mv.to_at * vb, mv.len * vb, q)?;
                        }
                    }
                }
                Ok(())
            })?;
            drop(merged);
        }
    }
    let mut shares = Vec::with_capacity(members.len());
    for (m, f) in members.iter().zip(finals) {
        shares.push(decode::<K, V>(m.gpu, f, mode)?);
    }
    mark(&mut events)?;

    for m in members {
        m.gpu.synchronize()?;
    }
    let mut phases = Vec::new();
    for (i, name) in PHASES.iter().enumerate() {
        let mut ms = 0f64;
        for ev in &events {
            ms = ms.max(ev[i].elapsed_ms(&ev[i + 1])? as f64);
        }
        phases.push((*name, ms));
    }
    let shares_after = match &moves {
        None => received,
        Some(_) => sizes.clone(),
    };
    let report = DistReport {
        gpus: p,
        keys: sizes.iter().sum(),
        crossing: exchange.crossing(),
        item_bytes: kb + vb,
        shares: shares_after,
        phases,
        wall_ms: start.elapsed().as_secs_f64() * 1e3,
    };
    Ok((shares, report))
}

/// Where each bucket ends in GPU `me`'s sorted keys, as counts per bucket.
fn bucket_counts<B: DeviceRepr + Copy>(
    gpu: &Gpu,
    me: usize,
    w: &Buf<u8, u8>,
    cuts: &[Option<Splitter<B>>],
) -> Result<Vec<usize>> {
    let ends = gpu.bucket_ends(me, gpu.ptr(&w.keys), w.n, w.kind.key_bytes(), cuts)?;
    let mut prev = 0;
    Ok(ends.into_iter().map(|e| e - std::mem::replace(&mut prev, e)).collect())
}

/// The first `n` values of type `T` in `buf`, after the GPU's queued work.
fn download<T: DeviceRepr + Default + Clone>(gpu: &Gpu, buf: &CudaSlice<u8>, n: usize) -> Result<Vec<T>> {
    let mut out = vec![T::default(); n];
    gpu.download(gpu.ptr(buf), &mut out)?;
    Ok(out)
}

/// A share in the caller's types: keys mapped back from their ordered
/// patterns in place (keys stored as fields decoded into a buffer of their
/// own), values as they are.
fn decode<K: SortKey, V: Payload>(gpu: &Gpu, f: Buf<K, V>, mode: u32) -> Result<Share<K, V>> {
    let (n, back) = (f.n, mode | warpsort_kernels::ordered::mode::DECODE);
    let keys = if let Some(fields) = K::FIELDS {
        // SAFETY: written by the decoding before anything reads it.
        let keys = unsafe { gpu.stream().alloc::<K>(n) }?;
        gpu.encode_keys(f.kind.keys_only(), fields, gpu.ptr(&keys), gpu.ptr(&f.keys), n, back)?;
        keys
    } else {
        gpu.map_keys(&Items::new(gpu.ptr(&f.keys), 0, n, f.kind.keys_only()), back)?;
        f.keys
    };
    Ok(Share { keys, vals: f.vals })
}
