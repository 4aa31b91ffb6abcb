//! Launching a kernel: its typed arguments ([`Kernel`]) and shape, checked
//! against what the GPU allows the kernel; overlapped with the kernel before
//! it where asked (programmatic dependent launch); timed while profiling.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::driver::{CudaEvent, CudaFunction, DevicePtr};

use super::Gpu;
use crate::error::{Error, Result};
use crate::launch::{DevPtr, Kernel, KernelId, Overlap, Param, Shape};

/// Time spent in one kernel while profiling ([`Gpu::profile_end`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct KernelTime {
    /// Kernel name.
    pub kernel: String,
    /// Launches.
    pub launches: usize,
    /// Total GPU time, milliseconds.
    pub ms: f64,
}

/// Events around every launch while profiling.
#[derive(Default)]
pub(super) struct Profiler {
    /// Whether recording (read on every launch without locking).
    on: AtomicBool,
    launches: Mutex<Option<Vec<(String, CudaEvent, CudaEvent)>>>,
}

/// A kernel argument for [`Gpu::launch_kernel`].
#[derive(Clone, Copy, Debug)]
pub enum KernelArg {
    /// A 32-bit scalar.
    U32(u32),
    /// A 64-bit scalar or a device pointer.
    U64(u64),
}

impl Gpu {
    /// Refuses, before anything runs, `block` threads and `smem` bytes of
    /// shared memory per block of `id` where the GPU allows that kernel fewer
    /// (its registers, the device's shared memory). Looking the kernel up
    /// also reports a kernel missing from the module.
    pub(crate) fn check_launch(&self, id: KernelId, block: u32, smem: u32) -> Result<()> {
        let max = self.module.function(id)?.max_threads;
        if block > max {
            return Err(Error::BadConfig(format!(
                "kernel {id} runs at most {max} threads per block on this GPU (its registers), {block} asked: \
                 use a smaller tile or merge_threads"
            )));
        }
        let max_smem = self.info.max_smem;
        if smem > max_smem {
            return Err(Error::BadConfig(format!(
                "kernel {id} needs {smem} bytes of shared memory per block; this GPU allows {max_smem}: use a \
                 smaller tile, merge_threads or outputs_per_thread"
            )));
        }
        Ok(())
    }

    /// Whether launches are being timed ([`Gpu::profile_begin`]).
    pub(super) fn profiling(&self) -> bool {
        self.profiler.on.load(Ordering::Acquire)
    }

    /// Launches `kernel` with `shape` (nothing for an empty grid).
    pub(crate) fn launch(&self, kernel: &impl Kernel, shape: Shape) -> Result<()> {
        self.launch_with(kernel, shape, Overlap::No)
    }

    /// [`Gpu::launch`] that may overlap the kernel before it, where the
    /// kernel chains ([`Kernel::chains`]: it starts with
    /// `arch::chain_launch`, as the merge sort's tile sort, partitions and
    /// block merges, the sample sort's distribution kernels, the segment
    /// classes' count and list and the segmented kernels do; any other
    /// launches plainly). From sm_90 on, with [`Overlap::WithPrevious`], it
    /// goes out with programmatic stream serialization: its blocks are
    /// placed while the kernel before it finishes and start the moment that
    /// one's writes are visible.
    pub(crate) fn launch_with(&self, kernel: &impl Kernel, shape: Shape, overlap: Overlap) -> Result<()> {
        if shape.grid == 0 {
            return Ok(());
        }
        let id = kernel.id();
        debug_assert!(overlap == Overlap::No || kernel.chains(), "{id} is launched overlapped but does not chain");
        let f = self.module.function(id)?;
        self.check_launch(id, shape.block, shape.smem)?;
        let params = kernel.params();
        let profiling = self.profiler.on.load(Ordering::Acquire);
        // Profiling puts events between launches: no overlap to keep.
        // A kernel that does not wait for the one before it never overlaps it.
        if overlap == Overlap::WithPrevious && kernel.chains() && self.module.chains() && !profiling {
            return self.launch_overlapped(&f.f, shape, &params);
        }
        if profiling {
            return self.launch_profiled(id, &f.f, shape, &params);
        }
        self.launch_plain(&f.f, shape, &params)
    }

    fn launch_plain(&self, f: &CudaFunction, shape: Shape, params: &[Param]) -> Result<()> {
        self.launch_raw(f, shape, params, false)
    }

    fn launch_profiled(&self, id: KernelId, f: &CudaFunction, shape: Shape, params: &[Param]) -> Result<()> {
        let mut list = self.profiler.launches.lock().unwrap_or_else(|e| e.into_inner());
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let (start, stop) = (self.ctx.new_event(flags)?, self.ctx.new_event(flags)?);
        start.record(&self.stream)?;
        self.launch_plain(f, shape, params)?;
        stop.record(&self.stream)?;
        if let Some(list) = list.as_mut() {
            list.push((id.name(), start, stop));
        }
        Ok(())
    }

    fn launch_overlapped(&self, f: &CudaFunction, shape: Shape, params: &[Param]) -> Result<()> {
        self.launch_raw(f, shape, params, true)
    }

    /// `cuLaunchKernelEx` on this GPU's stream; with `overlapped`, with
    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (which
    /// cudarc's launch builder cannot set).
    fn launch_raw(&self, f: &CudaFunction, shape: Shape, params: &[Param], overlapped: bool) -> Result<()> {
        use cudarc::driver::sys;
        // The values live here until the driver has copied them.
        let values: Vec<ParamValue> = params.iter().map(|&p| ParamValue::from(p)).collect();
        let mut ptrs: Vec<*mut std::ffi::c_void> = values.iter().map(ParamValue::as_ptr).collect();
        let mut attr = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value: sys::CUlaunchAttributeValue { programmaticStreamSerializationAllowed: 1 },
        };
        let cfg = sys::CUlaunchConfig {
            gridDimX: shape.grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: shape.block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: shape.smem,
            hStream: self.stream.cu_stream(),
            attrs: &mut attr,
            numAttrs: overlapped as u32,
        };
        self.ctx.bind_to_thread()?;
        // SAFETY: `params` lists the kernel's parameters in the order and
        // sizes of its device signature (the `launch` module's test holds
        // every family against the PTX), each pointed at by `ptrs` in
        // `values`, which outlive the call (the driver copies them before
        // returning); device pointers among them come from live allocations
        // of at least the lengths passed beside them; the function and the
        // stream belong to this context.
        unsafe { sys::cuLaunchKernelEx(&cfg, f.cu_function(), ptrs.as_mut_ptr(), std::ptr::null_mut()) }.result()?;
        Ok(())
    }

    /// Starts recording the GPU time of every kernel warpsort launches (CUDA
    /// events around each launch; for breakdowns, not for headline timings).
    pub fn profile_begin(&self) {
        *self.profiler.launches.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
        self.profiler.on.store(true, Ordering::Release);
    }

    /// Stops recording and returns the time per kernel, in launch order of first use.
    pub fn profile_end(&self) -> Result<Vec<KernelTime>> {
        self.profiler.on.store(false, Ordering::Release);
        let recorded = self.profiler.launches.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default();
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

    /// Launches any kernel of the loaded module by name: for tests and for
    /// authors adding kernels (`args` are 64-bit pointers/scalars or 32-bit
    /// scalars).
    ///
    /// # Safety
    /// `args` must match the kernel's parameters in number, order and size, and
    /// every pointer must address a live allocation large enough for what the
    /// kernel touches with this launch shape.
    #[doc(hidden)]
    pub unsafe fn launch_kernel(&self, name: &str, grid: u32, block: u32, smem: u32, args: &[KernelArg]) -> Result<()> {
        let f = self.module.by_name(name)?;
        let params: Vec<Param> = args
            .iter()
            .map(|a| match *a {
                KernelArg::U32(v) => Param::U32(v),
                KernelArg::U64(v) => Param::U64(v),
            })
            .collect();
        self.launch_plain(&f.f, Shape { grid, block, smem }, &params)
    }

    /// The device address of a buffer (for [`Gpu::launch_kernel`]).
    pub fn ptr<T, S: DevicePtr<T>>(&self, s: &S) -> DevPtr {
        let (p, _sync) = s.device_ptr(&self.stream);
        p
    }
}

/// A parameter's value in the size the kernel declares it.
enum ParamValue {
    Word(u64),
    Half(u32),
}

impl From<Param> for ParamValue {
    fn from(p: Param) -> Self {
        match p {
            Param::Ptr(x) | Param::U64(x) => ParamValue::Word(x),
            Param::U32(x) => ParamValue::Half(x),
        }
    }
}

impl ParamValue {
    /// Where the driver reads the value from.
    fn as_ptr(&self) -> *mut std::ffi::c_void {
        match self {
            ParamValue::Word(x) => x as *const u64 as *mut std::ffi::c_void,
            ParamValue::Half(x) => x as *const u32 as *mut std::ffi::c_void,
        }
    }
}
