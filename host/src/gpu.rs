//! The GPU handle: context, stream, the loaded PTX module and kernel launches.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use crate::error::{Error, Result};
use crate::scratch::Scratch;

/// PTX compiled for Volta and later (the driver JIT-compiles it for newer GPUs).
pub const PTX_SM70: &str = include_str!("../ptx/warpsort_sm70.ptx");
/// PTX scheduled for Hopper (compute capability 9.0 and later).
pub const PTX_SM90: &str = include_str!("../ptx/warpsort_sm90.ptx");

/// What the benchmark and the docs say about the device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Which embedded PTX was loaded ("sm_70" or "sm_90"; "custom" for
    /// [`Gpu::with_ptx`]).
    pub ptx: &'static str,
    /// Largest dynamic shared memory a block may opt into, bytes.
    pub max_smem: u32,
}

/// A GPU with warpsort's kernels loaded, and the stream its work runs on.
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
    /// The loaded module and its functions, shared with [`Gpu::with_stream`] copies.
    kernels: Arc<Kernels>,
    info: DeviceInfo,
    /// Temporary storage the sorts without a caller's [`Scratch`] reuse (one
    /// per stream: [`Gpu::with_stream`] copies get their own).
    pub(crate) scratch: Mutex<Scratch>,
    /// Device allocations made for temporary storage through this handle.
    pub(crate) scratch_allocations: AtomicU64,
    /// Whether `profile` is recording (read on every launch without locking).
    profiling: AtomicBool,
    /// While profiling: every launch with events around it.
    profile: Mutex<Option<Vec<(String, CudaEvent, CudaEvent)>>>,
}

/// A function of the module and the most threads per block it runs with.
#[derive(Clone)]
pub(crate) struct Kernel {
    f: CudaFunction,
    max_threads: u32,
}

impl Kernel {
    fn check_block(&self, name: &str, block: u32) -> Result<()> {
        let max = self.max_threads;
        if block > max {
            return Err(Error::BadConfig(format!(
                "kernel {name} runs at most {max} threads per block on this GPU (its registers), {block} asked: use a smaller tile or merge_threads"
            )));
        }
        Ok(())
    }
}

/// A loaded module and the functions looked up in it.
struct Kernels {
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<String, Kernel>>,
    /// Whether [`Gpu::launch_chained`] may overlap a launch with the kernel
    /// before it: a GPU from sm_90 on and kernels that wait for their
    /// predecessors (`griddepcontrol.wait`, the sm_90 PTX's merge sort).
    chains: bool,
}

/// Time spent in one kernel while profiling ([`Gpu::profile_end`]).
#[derive(Clone, Debug)]
pub struct KernelTime {
    /// Kernel name.
    pub kernel: String,
    /// Launches.
    pub launches: usize,
    /// Total GPU time, milliseconds.
    pub ms: f64,
}

/// A raw device pointer passed to a kernel (0 for "no payload").
pub(crate) type DevPtr = u64;

/// The crate's short name for [`KernelArg`].
pub(crate) use KernelArg as Arg;

impl Gpu {
    /// Opens GPU 0 on its default stream.
    pub fn new() -> Result<Self> {
        Self::with_device(0)
    }

    /// Opens GPU `ordinal` on its default stream. Fails with [`Error::NoDriver`]
    /// when `libcuda` is missing (cudarc would panic) and [`Error::NoDevice`]
    /// when the driver sees no GPU.
    pub fn with_device(ordinal: usize) -> Result<Self> {
        let ctx = Self::open(ordinal)?;
        Self::load(ctx, None)
    }

    /// Opens GPU `ordinal` with the kernels of `ptx` (PTX text) instead of the
    /// embedded PTX: for kernel authors and for testing load failures, which
    /// come back as [`Error::PtxLoad`].
    ///
    /// ```no_run
    /// let r = warpsort::Gpu::with_ptx(0, "not PTX");
    /// assert!(matches!(r, Err(warpsort::Error::PtxLoad(_))));
    /// ```
    #[doc(hidden)]
    pub fn with_ptx(ordinal: usize, ptx: &str) -> Result<Self> {
        let ctx = Self::open(ordinal)?;
        Self::load(ctx, Some(ptx))
    }

    /// The primary context of GPU `ordinal`.
    fn open(ordinal: usize) -> Result<Arc<CudaContext>> {
        // SAFETY: only probes whether libcuda can be opened.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoDriver);
        }
        let count = CudaContext::device_count().map_err(|_| Error::NoDevice)?;
        if count <= ordinal as i32 {
            return Err(Error::NoDevice);
        }
        let ctx = CudaContext::new(ordinal)?;
        // One stream orders all of warpsort's work; per-buffer events are not needed.
        // SAFETY: warpsort never shares its buffers across streams without the
        // caller's own synchronisation.
        unsafe { ctx.disable_event_tracking() };
        Ok(ctx)
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
        Ok(Self::assemble(self.ctx.clone(), stream, self.kernels.clone(), self.info.clone()))
    }

    fn load(ctx: Arc<CudaContext>, custom: Option<&str>) -> Result<Self> {
        let cc = ctx.compute_capability()?;
        let (src, ptx) = match custom {
            Some(src) => (src, "custom"),
            None if cc.0 >= 9 => (PTX_SM90, "sm_90"),
            None => (PTX_SM70, "sm_70"),
        };
        if src.contains('\0') {
            return Err(Error::PtxLoad("the PTX text contains a NUL byte".into()));
        }
        let module = ctx.load_module(Ptx::from_src(src)).map_err(|e| Error::PtxLoad(e.to_string()))?;
        let info = DeviceInfo {
            name: ctx.name()?,
            compute_capability: cc,
            sms: ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            ptx,
            max_smem: ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32,
        };
        let chains = cc.0 >= 9 && src.contains("griddepcontrol.wait");
        let kernels = Arc::new(Kernels { module, functions: Mutex::new(HashMap::new()), chains });
        let stream = ctx.default_stream();
        Ok(Self::assemble(ctx, stream, kernels, info))
    }

    fn assemble(ctx: Arc<CudaContext>, stream: Arc<CudaStream>, kernels: Arc<Kernels>, info: DeviceInfo) -> Self {
        Gpu {
            ctx,
            stream,
            kernels,
            info,
            scratch: Mutex::new(Scratch::new()),
            scratch_allocations: AtomicU64::new(0),
            profiling: AtomicBool::new(false),
            profile: Mutex::new(None),
        }
    }

    /// The device's name and properties.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The stream warpsort's work runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Starts recording the GPU time of every kernel warpsort launches (CUDA
    /// events around each launch; for breakdowns, not for headline timings).
    pub fn profile_begin(&self) {
        *self.profile.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
        self.profiling.store(true, Ordering::Release);
    }

    /// Stops recording and returns the time per kernel, in launch order of first use.
    pub fn profile_end(&self) -> Result<Vec<KernelTime>> {
        self.profiling.store(false, Ordering::Release);
        let recorded = self.profile.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default();
        self.stream.synchronize()?;
        let mut out: Vec<KernelTime> = Vec::new();
        for (name, start, stop) in recorded {
            let ms = start.elapsed_ms(&stop)? as f64;
            match out.iter_mut().find(|t| t.kernel == name) {
                Some(t) => {
                    t.launches += 1;
                    t.ms += ms;
                }
                None => out.push(KernelTime { kernel: name, launches: 1, ms }),
            }
        }
        Ok(out)
    }

    /// Waits for all of warpsort's queued work.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    /// A kernel by name, loaded once (and allowed the device's full shared
    /// memory), with the most threads per block its registers allow here.
    pub(crate) fn kernel_fn(&self, name: &str) -> Result<Kernel> {
        let mut map = self.kernels.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = map.get(name) {
            return Ok(k.clone());
        }
        let f = self.kernels.module.load_function(name).map_err(|e| Error::PtxLoad(format!("kernel {name}: {e}")))?;
        f.set_attribute(FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, self.info.max_smem as i32)?;
        let max_threads = f.get_attribute(FnAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32;
        let k = Kernel { f, max_threads };
        map.insert(name.to_string(), k.clone());
        Ok(k)
    }

    /// Refuses `block` threads per block for `name` where its registers
    /// allow fewer on this GPU (before anything is launched).
    pub(crate) fn check_block(&self, name: &str, block: u32) -> Result<()> {
        self.kernel_fn(name)?.check_block(name, block)
    }

    /// Launches `name` with `grid` blocks of `block` threads, `smem` bytes of
    /// dynamic shared memory, and `args` (device pointers and scalars).
    pub(crate) fn launch(&self, name: &str, grid: u32, block: u32, smem: u32, args: &[Arg]) -> Result<()> {
        self.launch_as(name, grid, block, smem, args, false)
    }

    /// [`Gpu::launch`] for a kernel that starts with
    /// `arch::chain_launch` (the merge sort's partitions and block merges):
    /// with `overlap`, from sm_90 on, it goes out with programmatic stream
    /// serialization, so that its blocks are placed while the kernel before
    /// it finishes and start the moment that one's writes are visible.
    pub(crate) fn launch_chained(
        &self,
        overlap: bool,
        name: &str,
        grid: u32,
        block: u32,
        smem: u32,
        args: &[Arg],
    ) -> Result<()> {
        self.launch_as(name, grid, block, smem, args, overlap && self.kernels.chains)
    }

    fn launch_as(&self, name: &str, grid: u32, block: u32, smem: u32, args: &[Arg], chained: bool) -> Result<()> {
        if grid == 0 {
            return Ok(());
        }
        let kernel = self.kernel_fn(name)?;
        kernel.check_block(name, block)?;
        let f = kernel.f;
        // Profiling puts events between launches: no overlap to keep.
        if chained && !self.profiling.load(Ordering::Acquire) {
            return self.launch_overlapped(&f, grid, block, smem, args);
        }
        let mut b = self.stream.launch_builder(&f);
        for a in args {
            match a {
                Arg::U32(v) => b.arg(v),
                Arg::U64(v) => b.arg(v),
            };
        }
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: smem };
        // Only while profiling: the lock and events around the launch.
        let mut profile = match self.profiling.load(Ordering::Acquire) {
            true => Some(self.profile.lock().unwrap_or_else(|e| e.into_inner())),
            false => None,
        };
        let events = match profile.as_deref() {
            Some(Some(_)) => {
                let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
                let (start, stop) = (self.ctx.new_event(flags)?, self.ctx.new_event(flags)?);
                start.record(&self.stream)?;
                Some((start, stop))
            }
            _ => None,
        };
        // SAFETY: every kernel of warpsort's PTX takes exactly the pointer and
        // scalar arguments its host launcher passes, in order; pointers come from
        // live allocations of at least the lengths passed beside them.
        unsafe { b.launch(cfg) }?;
        if let (Some((start, stop)), Some(Some(list))) = (events, profile.as_deref_mut()) {
            stop.record(&self.stream)?;
            list.push((name.to_string(), start, stop));
        }
        Ok(())
    }

    /// `cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`
    /// (cudarc's launch builder sets no launch attributes).
    fn launch_overlapped(&self, f: &CudaFunction, grid: u32, block: u32, smem: u32, args: &[Arg]) -> Result<()> {
        use cudarc::driver::sys;
        let mut params: Vec<*mut std::ffi::c_void> = args
            .iter()
            .map(|a| match a {
                Arg::U32(v) => v as *const u32 as *mut std::ffi::c_void,
                Arg::U64(v) => v as *const u64 as *mut std::ffi::c_void,
            })
            .collect();
        let mut attr = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value: sys::CUlaunchAttributeValue { programmaticStreamSerializationAllowed: 1 },
        };
        let cfg = sys::CUlaunchConfig {
            gridDimX: grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: smem,
            hStream: self.stream.cu_stream(),
            attrs: &mut attr,
            numAttrs: 1,
        };
        // SAFETY: as for `launch_as`: the kernel takes exactly these
        // arguments, in order; `params` points at `args`, which outlive the
        // call (the driver copies them before returning); the function and
        // stream belong to this context.
        unsafe { sys::cuLaunchKernelEx(&cfg, f.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) }.result()?;
        Ok(())
    }

    /// Launches any kernel of the embedded PTX by name: for tests and for
    /// authors adding kernels (`args` are 64-bit pointers/scalars or 32-bit scalars).
    ///
    /// # Safety
    /// `args` must match the kernel's parameters in number, order and size, and
    /// every pointer must address a live allocation large enough for what the
    /// kernel touches with this launch shape.
    #[doc(hidden)]
    pub unsafe fn launch_kernel(&self, name: &str, grid: u32, block: u32, smem: u32, args: &[KernelArg]) -> Result<()> {
        self.launch(name, grid, block, smem, args)
    }

    /// The device address of a buffer (for [`Gpu::launch_kernel`]).
    pub fn ptr<T, S: DevicePtr<T>>(&self, s: &S) -> DevPtr {
        let (p, _sync) = s.device_ptr(&self.stream);
        p
    }

    /// Fails with [`Error::ForeignContext`] unless `s` lives in this GPU's
    /// context (a pointer comparison: cheap enough for every call).
    pub(crate) fn check_context<T>(&self, s: &CudaSlice<T>, what: &'static str) -> Result<()> {
        if s.context().cu_ctx() == self.ctx.cu_ctx() { Ok(()) } else { Err(Error::ForeignContext { what }) }
    }

    /// `bytes` of device memory on this GPU's stream, contents unset; running
    /// out is [`Error::OutOfMemory`] with the size asked for.
    pub(crate) fn alloc_bytes(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        // SAFETY: callers write temporary storage before reading it.
        unsafe { self.stream.alloc::<u8>(bytes) }.map_err(|e| match Error::from(e) {
            Error::OutOfMemory { free, .. } => Error::OutOfMemory { requested: bytes, free },
            other => other,
        })
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
    /// queued work, and waits for the copy.
    pub(crate) fn download<T: DeviceRepr>(&self, src: DevPtr, dst: &mut [T]) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.ctx.bind_to_thread()?;
        // SAFETY: callers pass `src` inside a live allocation of this context
        // holding at least `dst.len()` items; `T: DeviceRepr` is plain data.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(dst, src, self.stream.cu_stream()) }?;
        Ok(self.stream.synchronize()?)
    }
}

/// A kernel argument for [`Gpu::launch_kernel`].
#[derive(Clone, Copy, Debug)]
pub enum KernelArg {
    /// A 32-bit scalar.
    U32(u32),
    /// A 64-bit scalar or a device pointer.
    U64(u64),
}

/// Blocks of `threads` covering `work` threads' worth of work, capped for
/// grid-stride kernels.
pub(crate) fn blocks_for(work: usize, threads: u32) -> u32 {
    work.div_ceil(threads as usize).clamp(1, i32::MAX as usize) as u32
}
