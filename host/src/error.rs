//! Typed errors. Every error is raised before the caller's data is touched,
//! or the data is restored before it is returned: on `Err`, the input is
//! exactly as it was.

use std::fmt;

use cudarc::driver::sys::CUresult;

/// What went wrong, with what to do about it.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// `libcuda` could not be loaded: no NVIDIA driver on this machine.
    NoDriver,
    /// The driver loaded but reports no GPU (or none with the ordinal asked for).
    NoDevice,
    /// PTX did not load (driver too old for the PTX version, JIT failure, corrupt
    /// PTX, or a kernel missing from it).
    PtxLoad(String),
    /// Keys and values differ in length.
    LengthMismatch {
        /// Number of keys.
        keys: usize,
        /// Number of values.
        values: usize,
    },
    /// A segment length the kernel cannot sort.
    BadSegment {
        /// The segment length asked for.
        len: usize,
        /// The longest segment this operation sorts.
        max: usize,
    },
    /// Segment offsets that do not cut the keys into segments: they must
    /// start at 0, never decrease, and end at the number of keys.
    BadOffsets {
        /// What is wrong with them, e.g. `offsets[3] = 9 > offsets[4] = 7`.
        problem: String,
    },
    /// More items than this operation handles.
    TooLong {
        /// The length asked for.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Sort parameters the kernels do not support.
    BadConfig(String),
    /// A buffer (or stream, or [`Scratch`](crate::Scratch)) belongs to another
    /// CUDA context than the [`Gpu`](crate::Gpu)'s: another device, or a
    /// context other code created.
    ForeignContext {
        /// Which argument: "keys", "values", "scratch" or "stream".
        what: &'static str,
    },
    /// The device has not enough free memory for what the operation allocates.
    OutOfMemory {
        /// Bytes the failed allocation asked for (0 when not known).
        requested: usize,
        /// Bytes the device reported free just after the failure.
        free: usize,
    },
    /// A CUDA driver call failed (launch failure, lost device, …).
    Driver(cudarc::driver::DriverError),
    /// `libnccl` could not be loaded (the distributed sorts need it).
    NoNccl,
    /// An NCCL call failed (its result code).
    Nccl(String),
    /// A host sort's memory limit is below what its smallest pieces need.
    MemoryLimit {
        /// The limit, bytes of device memory.
        limit: usize,
        /// The least it needs, bytes.
        needed: usize,
    },
    /// Page-locked (pinned) host memory for staging buffers could not be had.
    OutOfPinnedMemory {
        /// Bytes asked for.
        requested: usize,
    },
    /// A copy between a device buffer and host items of different lengths
    /// ([`Gpu::copy_to_host`](crate::Gpu::copy_to_host)).
    CopyLength {
        /// Items in the device buffer.
        device: usize,
        /// Items in the host slice.
        host: usize,
    },
    /// A fault injected by a test (`HostOptions::fault`), in this phase.
    #[doc(hidden)]
    Injected(&'static str),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MIB: usize = 1 << 20;
        match self {
            Error::NoDriver => write!(
                f,
                "no NVIDIA driver: libcuda could not be loaded. Install the NVIDIA driver (or add the directory \
                 holding libcuda.so to LD_LIBRARY_PATH), or run on a machine with an NVIDIA GPU"
            ),
            Error::NoDevice => write!(
                f,
                "the NVIDIA driver reports no GPU with that ordinal: check `nvidia-smi` and CUDA_VISIBLE_DEVICES, \
                 or open GPU 0 with Gpu::new()"
            ),
            Error::PtxLoad(e) => write!(
                f,
                "the GPU could not load warpsort's PTX ({e}): update the NVIDIA driver (the PTX needs a CUDA 12 \
                 driver or newer); if the driver is current, the PTX is stale or corrupt: rebuild it with \
                 `cargo xtask build-ptx`"
            ),
            Error::LengthMismatch { keys, values } => {
                write!(f, "{keys} keys but {values} values: pass exactly one value per key")
            }
            Error::BadSegment { len, max } => {
                write!(f, "segment length {len} is not supported: use 1 to {max}, or a full sort")
            }
            Error::BadOffsets { problem } => write!(
                f,
                "bad segment offsets: {problem}. Pass segments + 1 offsets (u32) that start at 0, never decrease and end at the number of keys; segment s is keys[offsets[s]..offsets[s + 1]]"
            ),
            Error::TooLong { len, max } => {
                write!(f, "{len} items is more than this operation handles ({max}): split the input")
            }
            Error::BadConfig(m) => write!(f, "unsupported sort parameters: {m}"),
            Error::ForeignContext { what } => write!(
                f,
                "the {what} belong(s) to another CUDA context than this Gpu's (another device, or a context \
                 created elsewhere): allocate it through gpu.stream() (or any stream of gpu.context()), or sort \
                 it with a Gpu opened on its own device"
            ),
            Error::OutOfMemory { requested, free } => {
                if *requested > 0 {
                    write!(f, "out of device memory: {} MiB asked for, ", requested.div_ceil(MIB))?;
                } else {
                    write!(f, "out of device memory: ")?;
                }
                write!(
                    f,
                    "{} MiB free. Free device buffers (and Gpu::release_scratch), sort fewer items per call, \
                     or reserve a Scratch of Gpu::sort_temp_bytes while memory is free",
                    free / MIB
                )
            }
            Error::NoNccl => write!(
                f,
                "NCCL could not be loaded: the distributed sorts load libnccl.so at run time. Install NCCL \
                 (e.g. the libnccl2 and libnccl-dev packages, or the nvidia-nccl-cu12 wheel, whose lib/ holds \
                 libnccl.so.2: link it as libnccl.so) and add its directory to LD_LIBRARY_PATH"
            ),
            Error::Nccl(code) => write!(
                f,
                "an NCCL call failed ({code}): every rank must make the same calls in the same order; \
                 NCCL_DEBUG=WARN says more. The inputs are unchanged"
            ),
            Error::MemoryLimit { limit, needed } => write!(
                f,
                "a memory limit of {} KiB is below the {} KiB this sort needs for its smallest runs and buckets: \
                 raise HostOptions::memory_limit (or leave it unset to use the device's free memory)",
                limit / 1024,
                needed.div_ceil(1024)
            ),
            Error::OutOfPinnedMemory { requested } => write!(
                f,
                "{} MiB of page-locked host memory for staging buffers could not be had: lower \
                 HostOptions::staging_bytes, free pinned memory, or raise the locked-memory limit (ulimit -l)",
                requested.div_ceil(MIB)
            ),
            Error::CopyLength { device, host } => write!(
                f,
                "a copy between {device} device items and {host} host items: pass a host slice as long as the \
                 device buffer"
            ),
            Error::Injected(phase) => write!(f, "fault injected by a test in the {phase} phase"),
            Error::Driver(e) => write!(
                f,
                "CUDA driver call failed ({:?}). After a launch failure the context is unusable: open a new Gpu \
                 (or restart the process), check `nvidia-smi`, and report it with the input size and options",
                e.0
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver(e) => Some(e),
            _ => None,
        }
    }
}

impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Self {
        if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            return Error::OutOfMemory { requested: 0, free: free_bytes() };
        }
        Error::Driver(e)
    }
}

/// Device memory free now in the current context (0 when it cannot be asked).
pub(crate) fn free_bytes() -> usize {
    // SAFETY: only probes whether libcuda can be opened (calling into a missing
    // library would panic).
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return 0;
    }
    cudarc::driver::result::mem_get_info().map(|(free, _)| free).unwrap_or(0)
}

/// `Result` with warpsort's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_says_what_to_do() {
        let all = [
            Error::NoDriver,
            Error::NoDevice,
            Error::PtxLoad("x".into()),
            Error::LengthMismatch { keys: 3, values: 2 },
            Error::BadSegment { len: 9000, max: 8192 },
            Error::TooLong { len: 10, max: 5 },
            Error::BadConfig("tile 1000".into()),
            Error::ForeignContext { what: "keys" },
            Error::OutOfMemory { requested: 64 << 20, free: 1 << 20 },
            Error::Driver(cudarc::driver::DriverError(CUresult::CUDA_ERROR_LAUNCH_FAILED)),
            Error::CopyLength { device: 4, host: 3 },
        ];
        let advice =
            ["install", "check", "update", "pass", "use", "split", "unsupported", "allocate", "free", "open", "pass"];
        for (e, word) in all.iter().zip(advice) {
            let m = e.to_string();
            assert!(m.to_lowercase().contains(word), "{e:?}: {m}");
        }
        let oom: Error = cudarc::driver::DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY).into();
        assert!(matches!(oom, Error::OutOfMemory { requested: 0, .. }));
    }
}
