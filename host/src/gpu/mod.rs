//! The GPU handle: a context, a stream, the loaded kernels, the device's
//! properties and tuning table, the temporary storage it caches; launches
//! (`launch`), kernel loading (`module`) and temporary storage (`scratch`).

pub(crate) mod crew;
mod launch;
mod module;
mod readback;
pub(crate) mod scratch;
pub(crate) mod staging;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, TryLockError};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::sys::CUstreamCaptureStatus;
use cudarc::driver::{CudaContext, CudaStream, DeviceRepr, DeviceSlice};

pub use launch::{KernelArg, KernelTime};
pub(crate) use module::Module;

use crate::error::{Error, Result};
use crate::launch::DevPtr;
use crate::policy::STREAMING;
use crate::policy::{self, Policy};
use readback::{READBACK_BYTES, Readback};
use scratch::Scratch;
use staging::Lanes;

/// [`DeviceInfo::ptx`] of a handle made by [`Gpu::with_key_kernels`].
const USER_KERNELS: &str = "custom";

/// [`DeviceInfo::ptx`] of a handle made by [`Gpu::with_ptx`]: warpsort's
/// own kernels, from PTX the caller gave.
const GIVEN_PTX: &str = "given PTX";

/// What the benchmark and the docs say about the device.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DeviceInfo {
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Which kernels were loaded: "sm_90 cubin", "sm_80 cubin", "sm_70 PTX
    /// (JIT)" or "sm_90 PTX (JIT)" (the PTX also where the cubin did not
    /// load: then it says so); "given PTX" for [`Gpu::with_ptx`], "custom" for
    /// [`Gpu::with_key_kernels`].
    /// `WARPSORT_IMAGE=ptx` forces the PTX (see the crate's README).
    pub ptx: &'static str,
    /// Largest dynamic shared memory a block may opt into, bytes.
    pub max_smem: u32,
}

/// A GPU with warpsort's kernels loaded, and the stream its work runs on.
///
/// Each `Gpu` opened with [`Gpu::new`] or [`Gpu::with_device`] runs its work
/// on a stream of its own (non-blocking: it never waits for the legacy
/// default stream, and work on it can be captured into a CUDA graph);
/// [`Gpu::with_stream`] runs on the caller's. Allocate buffers through
/// [`Gpu::stream`] or synchronise with it.
///
/// ```no_run
/// let gpu = warpsort::Gpu::new()?;
/// let mut keys = vec![3u32, 1, 2];
/// gpu.sort_slice(&mut keys)?;
/// assert_eq!(keys, [1, 2, 3]);
/// # Ok::<(), warpsort::Error>(())
/// ```
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The loaded kernels, shared with [`Gpu::with_stream`] copies.
    module: Arc<Module>,
    info: DeviceInfo,
    policy: Policy,
    /// Temporary storage the operations without a caller's [`Scratch`]
    /// reuse (one per stream: [`Gpu::with_stream`] copies get their own).
    pub(crate) scratch: Mutex<Scratch>,
    /// Device allocations made for temporary storage through this handle.
    pub(crate) scratch_allocations: AtomicU64,
    /// Pinned staging buffers of the host sorts, made by the first one.
    staging: Mutex<Option<Lanes>>,
    /// Pinned memory the small reads land in, made by the first
    /// (`readback.rs`); `Some(None)`: it could not be allocated.
    readback: Mutex<Option<Option<Readback>>>,
    profiler: launch::Profiler,
    /// A handle on a second stream of this one's context, made by the
    /// first use ([`Gpu::beside`]): launches that may run beside this
    /// stream's.
    side: OnceLock<Box<Gpu>>,
}

impl Gpu {
    /// Opens GPU 0.
    pub fn new() -> Result<Self> {
        Self::with_device(0)
    }

    /// Opens GPU `ordinal`. Fails with [`Error::NoDriver`] when `libcuda` is
    /// missing and [`Error::NoDevice`] when the driver sees no such GPU.
    pub fn with_device(ordinal: usize) -> Result<Self> {
        let ctx = Self::open(ordinal)?;
        let (module, ptx) = Module::load_embedded(&ctx)?;
        Self::assemble(ctx, module, ptx)
    }

    /// Opens GPU `ordinal` with the kernels of `ptx` (PTX text) instead of the
    /// embedded ones: for kernel authors and for testing load failures, which
    /// come back as [`Error::PtxLoad`].
    ///
    /// ```no_run
    /// let r = warpsort::Gpu::with_ptx(0, "not PTX");
    /// assert!(matches!(r, Err(warpsort::Error::PtxLoad(_))));
    /// ```
    #[doc(hidden)]
    pub fn with_ptx(ordinal: usize, ptx: &str) -> Result<Self> {
        Self::with_module(ordinal, ptx, GIVEN_PTX)
    }

    /// Opens GPU `ordinal` with the kernels of `ptx`, which `kind` names
    /// ([`DeviceInfo::ptx`]: warpsort's own, or a user key type's).
    fn with_module(ordinal: usize, ptx: &str, kind: &'static str) -> Result<Self> {
        let ctx = Self::open(ordinal)?;
        let module = Module::load_ptx(&ctx, ptx)?;
        Self::assemble(ctx, module, kind)
    }

    /// Opens GPU `ordinal` with a user key type's kernels (see
    /// [`Gpu::with_key_kernels`]).
    pub(crate) fn with_user_kernels(ordinal: usize, ptx: &str) -> Result<Self> {
        Self::with_module(ordinal, ptx, USER_KERNELS)
    }

    /// How many GPUs the driver lists ([`Error::NoDriver`] without one).
    ///
    /// ```no_run
    /// let gpus = warpsort::Gpu::device_count()?;
    /// println!("{gpus} GPUs");
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn device_count() -> Result<usize> {
        // SAFETY: only probes whether libcuda can be opened (cudarc panics
        // calling into a missing library).
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoDriver);
        }
        Ok(CudaContext::device_count().map_err(|_| Error::NoDevice)? as usize)
    }

    /// The primary context of GPU `ordinal`.
    fn open(ordinal: usize) -> Result<Arc<CudaContext>> {
        let count = Self::device_count()? as i32;
        if count <= ordinal as i32 {
            return Err(Error::NoDevice);
        }
        let ctx = CudaContext::new(ordinal)?;
        // One stream orders each handle's work; per-buffer events are not needed.
        // SAFETY: warpsort never shares its buffers across streams without the
        // caller's own synchronisation.
        unsafe { ctx.disable_event_tracking() };
        Ok(ctx)
    }

    fn assemble(ctx: Arc<CudaContext>, module: Module, ptx: &'static str) -> Result<Self> {
        let cc = ctx.compute_capability()?;
        let info = DeviceInfo {
            name: ctx.name()?,
            compute_capability: cc,
            sms: ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            ptx,
            max_smem: module.max_smem(),
        };
        let stream = ctx.new_stream()?;
        Ok(Self::on_stream(ctx, stream, Arc::new(module), info))
    }

    fn on_stream(ctx: Arc<CudaContext>, stream: Arc<CudaStream>, module: Arc<Module>, info: DeviceInfo) -> Self {
        let policy = policy::for_device(info.compute_capability, info.sms);
        Gpu {
            ctx,
            stream,
            module,
            info,
            policy,
            scratch: Mutex::new(Scratch::new()),
            scratch_allocations: AtomicU64::new(0),
            staging: Mutex::new(None),
            readback: Mutex::new(None),
            profiler: launch::Profiler::default(),
            side: OnceLock::new(),
        }
    }

    /// A handle on a second stream, whose work runs beside this stream's
    /// (the caller orders the two by [`Gpu::fork`] and [`Gpu::join`]);
    /// `None` while profiling (the profile times one stream).
    pub(crate) fn beside(&self) -> Result<Option<&Gpu>> {
        if self.profiling() {
            return Ok(None);
        }
        if self.side.get().is_none() {
            let stream = self.ctx.new_stream()?;
            let side = Self::on_stream(self.ctx.clone(), stream, self.module.clone(), self.info.clone());
            let _ = self.side.set(Box::new(side));
        }
        Ok(self.side.get().map(|b| &**b))
    }

    /// Makes `other`'s stream wait for the work queued on this one so far.
    pub(crate) fn fork(&self, other: &Gpu) -> Result<()> {
        Ok(other.stream.join(&self.stream)?)
    }

    /// Makes this stream wait for the work queued on `other`'s so far.
    pub(crate) fn join(&self, other: &Gpu) -> Result<()> {
        Ok(self.stream.join(&other.stream)?)
    }

    /// Runs on the caller's stream (for asynchronous use beside other work).
    /// Every call then is ordered on that stream; results read back through
    /// host slices synchronise it. The copy shares the loaded kernels and has
    /// its own cached temporary storage. Fails with [`Error::ForeignContext`]
    /// for a stream of another context.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let side = gpu.with_stream(gpu.context().new_stream()?)?;
    /// let mut keys = side.stream().clone_htod(&[2u32, 1])?;
    /// side.sort(&mut keys)?; // queued on the new stream
    /// side.synchronize()?;
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn with_stream(&self, stream: Arc<CudaStream>) -> Result<Self> {
        if stream.context().cu_ctx() != self.ctx.cu_ctx() {
            return Err(Error::ForeignContext { what: "stream" });
        }
        Ok(Self::on_stream(self.ctx.clone(), stream, self.module.clone(), self.info.clone()))
    }

    /// The device's name and properties.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Whether this handle runs kernels built for a user's key type
    /// ([`Gpu::with_key_kernels`]), not warpsort's own.
    pub(crate) fn runs_user_kernels(&self) -> bool {
        self.info.ptx == USER_KERNELS
    }

    /// The stream warpsort's work runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Whether the handle's stream is being captured into a graph (or its
    /// status cannot be read: then as if it were): no waits for the GPU then.
    pub(crate) fn capturing(&self) -> bool {
        !matches!(self.stream.capture_status(), Ok(CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE))
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Which tuning table this GPU uses (for reports).
    pub fn policy_name(&self) -> &'static str {
        self.policy.name
    }

    /// This GPU's launch choices: its class's table, with its own
    /// multiprocessor count.
    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Waits for all of warpsort's queued work.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    /// Fails with [`Error::ForeignContext`] unless `buf` lives in this GPU's
    /// context (a pointer comparison: cheap enough for every call).
    pub(crate) fn check_context<T>(&self, buf: &impl DeviceSlice<T>, what: &'static str) -> Result<()> {
        if buf.stream().context().cu_ctx() == self.ctx.cu_ctx() { Ok(()) } else { Err(Error::ForeignContext { what }) }
    }

    /// Queues a copy of `src` to device address `dst` on this GPU's stream
    /// (`src` may be reused when this returns: pageable memory is staged).
    pub(crate) fn upload<T: DeviceRepr>(&self, dst: DevPtr, src: &[T]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.ctx.bind_to_thread()?;
        // SAFETY: callers pass `dst` inside a live allocation of this context with
        // room for `src` (a region of temporary storage they hold).
        unsafe { cudarc::driver::result::memcpy_htod_async(dst, src, self.stream.cu_stream()) }?;
        Ok(())
    }

    /// Copies `dst.len()` items from device address `src` after this GPU's
    /// queued work, and waits for the copy: up to [`READBACK_BYTES`] through
    /// the handle's pinned memory (`readback.rs`), more (or without that
    /// memory) straight into `dst`.
    pub(crate) fn download<T: DeviceRepr>(&self, src: DevPtr, dst: &mut [T]) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.ctx.bind_to_thread()?;
        if size_of_val(dst) <= READBACK_BYTES
            && let Some(Some(r)) = self.readback().as_mut()
        {
            return r.read(src, as_bytes_mut(dst));
        }
        // SAFETY: callers pass `src` inside a live allocation of this context
        // holding at least `dst.len()` items; `T: DeviceRepr` is plain data.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(dst, src, self.stream.cu_stream()) }?;
        Ok(self.stream.synchronize()?)
    }

    /// [`Gpu::download`] of at most [`READBACK_BYTES`], with the work
    /// `ahead` queues put behind the copy before the host waits (for the
    /// copy alone, where the handle has its pinned memory; else after the
    /// wait). `ahead` must not read back; its error comes back after the
    /// copy.
    pub(crate) fn download_behind<T: DeviceRepr>(
        &self,
        src: DevPtr,
        dst: &mut [T],
        ahead: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        debug_assert!(size_of_val(dst) <= READBACK_BYTES);
        self.ctx.bind_to_thread()?;
        if let Some(Some(r)) = self.readback().as_mut() {
            return r.read_behind(src, as_bytes_mut(dst), ahead);
        }
        self.download(src, dst)?;
        ahead()
    }

    /// The handle's pinned memory for small reads, made on first use
    /// (`None` inside: it could not be allocated, and reads go without).
    fn readback(&self) -> MutexGuard<'_, Option<Option<Readback>>> {
        let mut slot = self.readback.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(Readback::new(&self.stream).ok());
        }
        slot
    }

    /// Queues the zeroing of `bytes` at device address `dst`.
    pub(crate) fn zero(&self, dst: DevPtr, bytes: usize) -> Result<()> {
        self.ctx.bind_to_thread()?;
        // SAFETY: callers pass `dst` inside a live allocation of this context
        // with `bytes` to write.
        unsafe { cudarc::driver::result::memset_d8_async(dst, 0, bytes, self.stream.cu_stream()) }?;
        Ok(())
    }

    /// Queues a copy of `bytes` from device address `src` to `dst`.
    pub(crate) fn copy_dtod(&self, dst: DevPtr, src: DevPtr, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.ctx.bind_to_thread()?;
        // SAFETY: callers pass addresses inside live allocations of this
        // context with `bytes` to read and write, not overlapping.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, self.stream.cu_stream()) }?;
        Ok(())
    }
}

impl Gpu {
    /// Runs `body` with the device address of at least `bytes` of temporary
    /// storage (0 when `bytes` is 0): the caller's `scratch`, or else the one
    /// this handle caches. Everything an operation needs must be asked for in
    /// this one call, before it touches the caller's data, so that running out
    /// of memory leaves the data as it was. When the cached storage is busy (a
    /// call from another thread, or a nested call inside `body`), a one-off
    /// allocation serves instead: never a deadlock.
    pub(crate) fn with_scratch<R>(
        &self,
        scratch: Option<&mut Scratch>,
        bytes: usize,
        body: impl FnOnce(DevPtr) -> Result<R>,
    ) -> Result<R> {
        if bytes == 0 {
            return body(0);
        }
        if let Some(s) = scratch {
            let p = s.get(self.stream(), bytes)?;
            return body(p);
        }
        let mut cached = match self.scratch.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        let mut one_off = Scratch::new();
        let s = match cached.as_deref_mut() {
            Some(s) => s,
            None => &mut one_off,
        };
        let before = s.allocations();
        let p = s.get(self.stream(), bytes);
        self.scratch_allocations.fetch_add(s.allocations() - before, Ordering::Relaxed);
        // `one_off` (if used) is freed after `body`'s work, in stream order.
        body(p?)
    }

    /// The staging rings, with slots of `bytes` (0: the policy's), made
    /// now if this handle has none of that size. Held for one host sort at
    /// a time.
    pub(crate) fn staging(&self, bytes: usize) -> Result<MutexGuard<'_, Option<Lanes>>> {
        let bytes = if bytes == 0 { STREAMING.slot_bytes } else { bytes };
        let mut guard = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        if !guard.as_ref().is_some_and(|l| l.fits(STREAMING.slots, bytes)) {
            *guard = None;
            *guard = Some(Lanes::new(&self.ctx, STREAMING.slots, bytes)?);
        }
        Ok(guard)
    }

    /// Bytes of pinned host memory this handle holds for staging.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// gpu.sort_slice(&mut vec![3u32, 1, 2])?;
    /// assert!(gpu.pinned_bytes() > 0);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn pinned_bytes(&self) -> usize {
        self.staging.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map_or(0, Lanes::pinned_bytes)
    }

    /// Bytes of temporary storage this handle holds for calls without a
    /// [`Scratch`] of their own (kept for reuse until
    /// [`Gpu::release_scratch`] or the handle is dropped).
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&vec![1u32; 1 << 20])?;
    /// gpu.sort(&mut keys)?;
    /// assert!(gpu.scratch_capacity() >= 4 << 20);
    /// gpu.release_scratch()?;
    /// assert_eq!(gpu.scratch_capacity(), 0);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn scratch_capacity(&self) -> usize {
        self.scratch.lock().unwrap_or_else(|e| e.into_inner()).capacity()
    }

    /// Frees the temporary storage this handle caches (after the work queued
    /// on it), and hands back to the driver the device memory that host and
    /// distributed sorts keep in the device's default pool
    /// ([`Gpu::sort_host`] says why).
    pub fn release_scratch(&self) -> Result<()> {
        self.scratch.lock().unwrap_or_else(|e| e.into_inner()).release()?;
        self.trim_pool()
    }

    /// Keeps memory freed into the device's default pool there (no release
    /// threshold) rather than handing it back to the driver at every
    /// synchronisation: host and distributed sorts allocate buffers the size
    /// of their data, and mapping them anew costs milliseconds per gigabyte.
    pub(crate) fn keep_freed_memory(&self) -> Result<()> {
        let mut keep = u64::MAX;
        let attr = cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
        // SAFETY: the pool is the live device's default one; the attribute
        // takes a `u64`, which `keep` is and outlives the call.
        unsafe { cudarc::driver::result::mem_pool::set_attribute(self.default_pool()?, attr, (&raw mut keep).cast()) }?;
        Ok(())
    }

    /// Bytes the device's default pool keeps mapped but unused (memory
    /// earlier sorts freed, with [`Gpu::keep_freed_memory`]).
    pub(crate) fn pool_spare(&self) -> Result<usize> {
        use cudarc::driver::sys::CUmemPool_attribute as A;
        let pool = self.default_pool()?;
        let (mut reserved, mut used) = (0u64, 0u64);
        // SAFETY: the pool is the live device's default one; both attributes
        // are `u64`s, which outlive the calls.
        unsafe {
            let get = cudarc::driver::result::mem_pool::get_attribute;
            get(pool, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, (&raw mut reserved).cast())?;
            get(pool, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT, (&raw mut used).cast())?;
        }
        Ok(reserved.saturating_sub(used) as usize)
    }

    /// Hands the memory the default pool keeps unused back to the driver
    /// (after the work queued on this handle's stream).
    pub(crate) fn trim_pool(&self) -> Result<()> {
        self.stream().synchronize()?;
        // SAFETY: the pool is the live device's default one.
        unsafe { cudarc::driver::result::mem_pool::trim_to(self.default_pool()?, 0) }?;
        Ok(())
    }

    fn default_pool(&self) -> Result<cudarc::driver::sys::CUmemoryPool> {
        self.ctx.bind_to_thread()?;
        // SAFETY: the device comes from a live context.
        Ok(unsafe { cudarc::driver::result::device::get_default_mem_pool(self.ctx.cu_device()) }?)
    }

    /// Device allocations made for temporary storage by calls through this
    /// handle without a [`Scratch`] of their own: tests show reuse with it.
    #[doc(hidden)]
    pub fn scratch_allocations(&self) -> u64 {
        self.scratch_allocations.load(Ordering::Relaxed)
    }
}
impl Scratch {
    /// Storage of at least `bytes` on `gpu`'s device, allocated now.
    ///
    /// ```no_run
    /// use warpsort::{Gpu, Scratch};
    /// let gpu = Gpu::new()?;
    /// let s = Scratch::with_capacity(&gpu, 1 << 20)?;
    /// assert!(s.capacity() >= 1 << 20);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn with_capacity(gpu: &Gpu, bytes: usize) -> Result<Self> {
        let mut s = Scratch::new();
        s.reserve(gpu, bytes)?;
        Ok(s)
    }

    /// Grows to at least `bytes` now (nothing happens when it holds enough).
    pub fn reserve(&mut self, gpu: &Gpu, bytes: usize) -> Result<()> {
        self.get(gpu.stream(), bytes).map(|_| ())
    }
}

/// Items read back as the bytes the device writes.
fn as_bytes_mut<T: DeviceRepr>(dst: &mut [T]) -> &mut [u8] {
    // SAFETY: `T: DeviceRepr` is plain data, which any bytes the device held
    // make; the bytes are `dst`'s own, borrowed as long as it is.
    unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), size_of_val(dst)) }
}
