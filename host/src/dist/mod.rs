//! Sorting across GPUs through NCCL: keys spread over `p` GPUs sorted
//! globally, each GPU holding its share afterwards (GPU 0 the smallest
//! keys), by a sample sort: local sorts, splitters from regular samples,
//! one all-to-all exchange, a local merge of the received runs (`run`).
//!
//! Two ways to run it, one code path:
//! - [`Cluster`]: one process driving several GPUs of a machine;
//! - [`Peer`]: one process (or thread) per GPU, bootstrapped by an
//!   [`NcclId`] that the caller's launcher hands to every rank (MPI, an
//!   environment variable, a file): across machines where NCCL reaches.
//!
//! `libnccl` is loaded at run time (as `libcuda` is); without it the
//! constructors fail with [`Error::NoNccl`]. NVLink multicast (NVLS) stays
//! off unless `NCCL_NVLS_ENABLE` says otherwise.

mod nccl;
pub(crate) mod plan;
mod run;

use std::sync::Mutex;

use cudarc::driver::{CudaSlice, DevicePtr};
use cudarc::nccl::{Comm, Id};

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::key::{Payload, SortKey};
use crate::options::SortOptions;
use nccl::{nccl_error, require_nccl};
use run::{Input, Member, Share};

/// How the sorted keys are shared out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Balance {
    /// Each GPU holds about `n / p` keys (within 2% for any input: ties
    /// are cut anywhere).
    #[default]
    Even,
    /// Each GPU holds exactly as many keys as it gave.
    InputSizes,
}

/// Options of a distributed sort: the sort's own (`order`, `stable`, the
/// local algorithm) and how the result is shared out.
///
/// ```
/// use warpsort::{Balance, DistOptions, SortOptions};
/// let opts = DistOptions { sort: SortOptions::descending(), balance: Balance::InputSizes };
/// assert!(DistOptions::default().balance == Balance::Even);
/// # let _ = opts;
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DistOptions {
    pub sort: SortOptions,
    pub balance: Balance,
}

/// What the last distributed sort did, from this process's GPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct DistReport {
    /// GPUs in the communicator.
    pub gpus: usize,
    /// Keys on all of them.
    pub keys: usize,
    /// Keys that moved from one GPU to another in the exchange.
    pub crossing: usize,
    /// Bytes of one item (the key's ordered pattern and its value).
    pub item_bytes: usize,
    /// Keys each GPU holds afterwards.
    pub shares: Vec<usize>,
    /// GPU time of each phase (`local sort`, `splitters`, `exchange`,
    /// `merge`, `rebalance + decode`), the slowest of this process's GPUs,
    /// in milliseconds.
    pub phases: Vec<(&'static str, f64)>,
    /// Host time of the whole call, in milliseconds.
    pub wall_ms: f64,
}

impl DistReport {
    /// The GPU time of a phase by name (0 when absent).
    pub fn phase_ms(&self, name: &str) -> f64 {
        self.phases.iter().find(|(n, _)| *n == name).map_or(0.0, |p| p.1)
    }
}

/// The id that bootstraps a [`Peer`] group: made once (by rank 0), handed
/// to every rank as text.
///
/// ```no_run
/// let id = warpsort::NcclId::new()?;
/// let text = id.to_hex(); // e.g. into an environment variable or a file
/// assert_eq!(warpsort::NcclId::from_hex(&text)?, id);
/// # Ok::<(), warpsort::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct NcclId(Id);

impl NcclId {
    /// A new id (loads `libnccl`).
    pub fn new() -> Result<Self> {
        nccl::new_id().map(NcclId)
    }

    /// The id as 256 hexadecimal digits.
    pub fn to_hex(&self) -> String {
        self.0.internal().iter().map(|&c| format!("{:02x}", c as u8)).collect()
    }

    /// The id from [`NcclId::to_hex`]'s text.
    pub fn from_hex(text: &str) -> Result<Self> {
        let text = text.trim();
        let bad = || Error::BadConfig(format!("not an NCCL id (256 hexadecimal digits): {text:?}"));
        if text.len() != 256 || !text.is_ascii() {
            return Err(bad());
        }
        let mut internal = [0 as std::ffi::c_char; 128];
        for (i, c) in internal.iter_mut().enumerate() {
            *c = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())? as std::ffi::c_char;
        }
        Ok(NcclId(Id::uninit(internal)))
    }
}

impl PartialEq for NcclId {
    fn eq(&self, other: &Self) -> bool {
        self.0.internal() == other.0.internal()
    }
}

/// Several GPUs of this machine driven by this process, one NCCL
/// communicator over them: rank `i` is `gpus()[i]`.
///
/// ```no_run
/// use warpsort::{Cluster, DistOptions};
/// let cluster = Cluster::all()?;
/// // Each GPU starts with its own keys...
/// let keys: Vec<_> = cluster.gpus().iter().enumerate()
///     .map(|(i, g)| g.stream().clone_htod(&[9u32 - i as u32, 3, 7]))
///     .collect::<Result<_, _>>()?;
/// // ...and ends with its share of the global order.
/// let shares = cluster.sort(&keys, &DistOptions::default())?;
/// let first = cluster.gpus()[0].stream().clone_dtoh(&shares[0])?;
/// assert!(first.windows(2).all(|w| w[0] <= w[1]));
/// # Ok::<(), warpsort::Error>(())
/// ```
pub struct Cluster {
    gpus: Vec<Gpu>,
    comms: Vec<Comm>,
    report: Mutex<Option<DistReport>>,
}

impl Cluster {
    /// A cluster of the GPUs with these ordinals (distinct). Open it before
    /// other threads of the process read the environment (it may set
    /// `NCCL_NVLS_ENABLE=0`).
    pub fn new(ordinals: &[usize]) -> Result<Self> {
        if ordinals.is_empty() {
            return Err(Error::BadConfig("a cluster needs at least one GPU".into()));
        }
        let gpus = ordinals.iter().map(|&o| Gpu::with_device(o)).collect::<Result<Vec<_>>>()?;
        require_nccl()?;
        gpus.iter().try_for_each(Gpu::keep_freed_memory)?;
        let comms = Comm::from_devices(gpus.iter().map(|g| g.stream().clone()).collect()).map_err(nccl_error)?;
        Ok(Cluster { gpus, comms, report: Mutex::new(None) })
    }

    /// A cluster of every GPU the driver lists.
    pub fn all() -> Result<Self> {
        let count = Gpu::device_count()?;
        Cluster::new(&(0..count).collect::<Vec<_>>())
    }

    /// The GPUs, in rank order.
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// What the last sort did.
    pub fn last_report(&self) -> Option<DistReport> {
        self.report.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn members(&self) -> Vec<Member<'_>> {
        self.gpus.iter().zip(&self.comms).map(|(gpu, comm)| Member { gpu, comm }).collect()
    }

    /// Sorts keys spread over the GPUs (`keys[i]` on `gpus()[i]`, any
    /// lengths, empty ones included) into new buffers, share `i` on GPU
    /// `i`, shares in global order. The inputs are only read.
    pub fn sort<K: SortKey>(&self, keys: &[impl DevicePtr<K>], opts: &DistOptions) -> Result<Vec<CudaSlice<K>>> {
        let shares = self.run::<K, u32>(keys, None::<&[CudaSlice<u32>]>, opts)?;
        Ok(shares.into_iter().map(|s| s.keys).collect())
    }

    /// [`Cluster::sort`] of keys with values (`vals[i]` beside `keys[i]`).
    pub fn sort_pairs<K: SortKey, V: Payload>(
        &self,
        keys: &[impl DevicePtr<K>],
        vals: &[impl DevicePtr<V>],
        opts: &DistOptions,
    ) -> Result<Vec<(CudaSlice<K>, CudaSlice<V>)>> {
        let shares = self.run::<K, V>(keys, Some(vals), opts)?;
        Ok(shares.into_iter().map(|s| (s.keys, s.vals.expect("pairs carry values"))).collect())
    }

    /// Sorts a host slice over the GPUs: split into equal parts, one per
    /// GPU, each copied up through that GPU's pinned staging, sorted across
    /// them, and copied back in order the same way. Until the copies back
    /// the slice is only read: an error before them leaves it as it was;
    /// a failed copy back comes back as an error, the slice not sorted (as
    /// [`Gpu::sort_host`] on one GPU).
    ///
    /// ```no_run
    /// let cluster = warpsort::Cluster::all()?;
    /// let mut keys = vec![5u64, 1, 4, 1, 3];
    /// cluster.sort_slice(&mut keys, &Default::default())?;
    /// assert_eq!(keys, [1, 1, 3, 4, 5]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_slice<K: SortKey>(&self, keys: &mut [K], opts: &DistOptions) -> Result<()> {
        self.slices::<K, u32>(keys, None, opts)
    }

    /// [`Cluster::sort_slice`] of host keys with values (as long), each
    /// value moved with its key.
    ///
    /// ```no_run
    /// use warpsort::{DistOptions, SortOptions};
    /// let cluster = warpsort::Cluster::all()?;
    /// let (mut k, mut v) = (vec![2u32, 1, 2], vec![10u64, 11, 12]);
    /// let stable = DistOptions { sort: SortOptions { stable: true, ..Default::default() }, ..Default::default() };
    /// cluster.sort_pairs_slice(&mut k, &mut v, &stable)?;
    /// assert_eq!((k, v), (vec![1, 2, 2], vec![11, 10, 12]));
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_pairs_slice<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: &mut [V],
        opts: &DistOptions,
    ) -> Result<()> {
        crate::api::same_len(keys.len(), vals.len())?;
        self.slices(keys, Some(vals), opts)
    }

    /// Host slices cut into equal parts, one per GPU, copied up through each
    /// GPU's staging, sorted into shares of the same sizes, copied back; the
    /// GPUs' copies each on a thread of their own, so that they overlap.
    fn slices<K: SortKey, V: Payload>(&self, keys: &mut [K], vals: Option<&mut [V]>, opts: &DistOptions) -> Result<()> {
        let p = self.gpus.len();
        let key_parts = self.per_gpu(parts(keys, p), |g, part| g.upload_staged(part))?;
        let opts = DistOptions { balance: Balance::InputSizes, ..opts.clone() };
        match vals {
            None => {
                let shares = self.sort(&key_parts, &opts)?;
                let work = shares.iter().zip(parts(keys, p)).collect();
                self.per_gpu(work, |g, (share, part)| g.download_staged(share, part))?;
            }
            Some(vals) => {
                let val_parts = self.per_gpu(parts(vals, p), |g, part| g.upload_staged(part))?;
                let shares = self.sort_pairs(&key_parts, &val_parts, &opts)?;
                let work = shares.iter().zip(parts(keys, p).into_iter().zip(parts(vals, p))).collect();
                self.per_gpu(work, |g, ((k, v), (hk, hv))| {
                    g.download_staged(k, hk)?;
                    g.download_staged(v, hv)
                })?;
            }
        }
        Ok(())
    }

    /// `f` of each GPU and its work (`work[i]` for GPU `i`), each on a
    /// thread of its own with the GPU's context bound; the results in GPU
    /// order, or the first GPU's error.
    fn per_gpu<W: Send, R: Send>(&self, work: Vec<W>, f: impl Fn(&Gpu, W) -> Result<R> + Sync) -> Result<Vec<R>> {
        std::thread::scope(|s| {
            let f = &f;
            let threads: Vec<_> = self
                .gpus
                .iter()
                .zip(work)
                .map(|(g, w)| {
                    s.spawn(move || {
                        g.context().bind_to_thread()?;
                        f(g, w)
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        })
    }

    /// Times one plain NCCL all-to-all over the cluster (grouped
    /// `ncclSend`/`ncclRecv`, NCCL's own all-to-all): `bytes` from every GPU
    /// to every other; milliseconds, the median of `reps` after a warm-up.
    /// The yardstick of the sort's exchange.
    pub fn all_to_all_ms(&self, bytes: usize, reps: usize) -> Result<f64> {
        let p = self.gpus.len();
        let mut bufs = Vec::new();
        for g in &self.gpus {
            bufs.push((g.stream().alloc_zeros::<u8>(bytes * p)?, g.stream().alloc_zeros::<u8>(bytes * p)?));
        }
        let mut times = Vec::new();
        for rep in 0..=reps.max(1) {
            for g in &self.gpus {
                g.synchronize()?;
            }
            let start = std::time::Instant::now();
            nccl::grouped(|| {
                for (comm, (send, recv)) in self.comms.iter().zip(bufs.iter_mut()) {
                    let me = comm.rank();
                    for q in (0..p).filter(|&q| q != me) {
                        nccl::send(comm, send, q * bytes, bytes, q)?;
                        nccl::recv(comm, recv, q * bytes, bytes, q)?;
                    }
                }
                Ok(())
            })?;
            for g in &self.gpus {
                g.synchronize()?;
            }
            if rep > 0 {
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }

    fn run<K: SortKey, V: Payload>(
        &self,
        keys: &[impl DevicePtr<K>],
        vals: Option<&[impl DevicePtr<V>]>,
        opts: &DistOptions,
    ) -> Result<Vec<Share<K, V>>> {
        let p = self.gpus.len();
        if keys.len() != p || vals.is_some_and(|v| v.len() != p) {
            return Err(Error::BadConfig(format!("{p} GPUs but {} key buffers: pass one per GPU", keys.len())));
        }
        let mut guards = Vec::new();
        let mut inputs = Vec::with_capacity(p);
        for (i, gpu) in self.gpus.iter().enumerate() {
            let input = checked_input(gpu, &keys[i], vals.map(|v| &v[i]), opts, &mut guards)?;
            inputs.push(input);
        }
        let (shares, report) = run::sort::<K, V>(&self.members(), &inputs, vals.is_some(), opts)?;
        *self.report.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
        Ok(shares)
    }
}

/// One rank of a distributed sort: this process's (or thread's) GPU in a
/// group of `ranks`, joined through an [`NcclId`]. Every rank calls the same
/// operations in the same order; each passes its own keys and gets its
/// share back.
///
/// ```no_run
/// use warpsort::{DistOptions, Gpu, NcclId, Peer};
/// // Rank 0 made the id and handed it out, e.g. as WARPSORT_NCCL_ID.
/// let id = NcclId::from_hex(&std::env::var("WARPSORT_NCCL_ID").unwrap())?;
/// let (rank, ranks) = (0, 1);
/// let peer = Peer::new(Gpu::with_device(rank)?, &id, rank, ranks)?;
/// let keys = peer.gpu().stream().clone_htod(&[3i32, -1, 2])?;
/// let share = peer.sort(&keys, &DistOptions::default())?;
/// # let _ = share;
/// # Ok::<(), warpsort::Error>(())
/// ```
pub struct Peer {
    gpu: Gpu,
    comm: Comm,
    report: Mutex<Option<DistReport>>,
}

impl Peer {
    /// Joins the group of `ranks` bootstrapped by `id` as rank `rank` on
    /// `gpu`: blocks until every rank has joined. Open it before other
    /// threads of the process read the environment (it may set
    /// `NCCL_NVLS_ENABLE=0`).
    pub fn new(gpu: Gpu, id: &NcclId, rank: usize, ranks: usize) -> Result<Self> {
        if rank >= ranks {
            return Err(Error::BadConfig(format!(
                "rank {rank} of {ranks}: ranks are 0 to {}",
                ranks.saturating_sub(1)
            )));
        }
        require_nccl()?;
        gpu.keep_freed_memory()?;
        gpu.context().bind_to_thread()?;
        let comm = Comm::from_rank(gpu.stream().clone(), rank, ranks, id.0).map_err(nccl_error)?;
        Ok(Peer { gpu, comm, report: Mutex::new(None) })
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    pub fn ranks(&self) -> usize {
        self.comm.world_size()
    }

    /// What the last sort did (phase times of this rank's GPU).
    pub fn last_report(&self) -> Option<DistReport> {
        self.report.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Sorts this rank's keys with every other rank's; returns this rank's
    /// share of the global order (rank 0 the smallest keys).
    pub fn sort<K: SortKey>(&self, keys: &impl DevicePtr<K>, opts: &DistOptions) -> Result<CudaSlice<K>> {
        Ok(self.run::<K, u32>(keys, None::<&CudaSlice<u32>>, opts)?.keys)
    }

    /// [`Peer::sort`] of keys with values.
    pub fn sort_pairs<K: SortKey, V: Payload>(
        &self,
        keys: &impl DevicePtr<K>,
        vals: &impl DevicePtr<V>,
        opts: &DistOptions,
    ) -> Result<(CudaSlice<K>, CudaSlice<V>)> {
        let s = self.run::<K, V>(keys, Some(vals), opts)?;
        Ok((s.keys, s.vals.expect("pairs carry values")))
    }

    /// Sorts this rank's host keys with every other rank's, in place: the
    /// slice holds this rank's share of the global order afterwards, as
    /// many keys as it held (copied up and back through the GPU's pinned
    /// staging). Until the copy back the slice is only read.
    ///
    /// ```no_run
    /// use warpsort::{Gpu, NcclId, Peer};
    /// let id = NcclId::from_hex(&std::env::var("WARPSORT_NCCL_ID").unwrap())?;
    /// let peer = Peer::new(Gpu::with_device(0)?, &id, 0, 1)?;
    /// let mut mine = vec![7u64, 1, 5];
    /// peer.sort_slice(&mut mine, &Default::default())?;
    /// assert!(mine.windows(2).all(|w| w[0] <= w[1]));
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_slice<K: SortKey>(&self, keys: &mut [K], opts: &DistOptions) -> Result<()> {
        let opts = DistOptions { balance: Balance::InputSizes, ..opts.clone() };
        let share = self.sort(&self.gpu.upload_staged(keys)?, &opts)?;
        self.gpu.download_staged(&share, keys)
    }

    /// [`Peer::sort_slice`] of host keys with values (as long).
    pub fn sort_pairs_slice<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: &mut [V],
        opts: &DistOptions,
    ) -> Result<()> {
        crate::api::same_len(keys.len(), vals.len())?;
        let opts = DistOptions { balance: Balance::InputSizes, ..opts.clone() };
        let (dk, dv) = (self.gpu.upload_staged(keys)?, self.gpu.upload_staged(vals)?);
        let (k, v) = self.sort_pairs(&dk, &dv, &opts)?;
        self.gpu.download_staged(&k, keys)?;
        self.gpu.download_staged(&v, vals)
    }

    fn run<K: SortKey, V: Payload>(
        &self,
        keys: &impl DevicePtr<K>,
        vals: Option<&impl DevicePtr<V>>,
        opts: &DistOptions,
    ) -> Result<Share<K, V>> {
        let mut guards = Vec::new();
        let input = checked_input(&self.gpu, keys, vals, opts, &mut guards)?;
        let member = Member { gpu: &self.gpu, comm: &self.comm };
        let (mut shares, report) = run::sort::<K, V>(&[member], &[input], vals.is_some(), opts)?;
        *self.report.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
        Ok(shares.remove(0))
    }
}

/// `s` cut into `p` parts as even as can be (`hostsort::plan::cut`'s
/// ranges), in order.
fn parts<T>(mut s: &mut [T], p: usize) -> Vec<&mut [T]> {
    let mut out = Vec::with_capacity(p);
    for r in crate::hostsort::plan::cut(s.len(), p) {
        let (part, rest) = s.split_at_mut(r.len());
        out.push(part);
        s = rest;
    }
    out
}

/// One GPU's input, checked: in the GPU's context, one value per key, at
/// most [`STABLE_MAX_LEN`](crate::STABLE_MAX_LEN) keys on a GPU for a stable
/// key-value sort.
fn checked_input<'a, K: SortKey, V: Payload>(
    gpu: &'a Gpu,
    keys: &'a impl DevicePtr<K>,
    vals: Option<&'a impl DevicePtr<V>>,
    opts: &DistOptions,
    guards: &mut Vec<cudarc::driver::SyncOnDrop<'a>>,
) -> Result<Input> {
    let n = keys.len();
    let max = if opts.sort.stable && vals.is_some() { crate::STABLE_MAX_LEN } else { usize::MAX };
    if n > max {
        return Err(Error::TooLong { len: n, max });
    }
    let (k, gk) = gpu.addr(keys, "keys")?;
    guards.push(gk);
    let mut input = Input { keys: k, vals: 0, n };
    if let Some(v) = vals {
        crate::api::same_len(n, v.len())?;
        let (va, gv) = gpu.addr(v, "values")?;
        guards.push(gv);
        input.vals = va;
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parts_cut_where_the_shares_do() {
        for (len, p) in [(0usize, 1usize), (0, 3), (10, 3), (7, 8), (1 << 20, 4)] {
            let mut v: Vec<usize> = (0..len).collect();
            let parts = super::parts(&mut v, p);
            assert_eq!(parts.len(), p);
            for (i, part) in parts.iter().enumerate() {
                let want: Vec<usize> = (i * len / p..(i + 1) * len / p).collect();
                assert_eq!(part.to_vec(), want, "len {len}, {p} parts, part {i}");
            }
        }
    }
}
