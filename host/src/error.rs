//! Typed errors. Every error is raised before the caller's data is touched,
//! or the data is restored before it is returned: on `Err`, the input is
//! exactly as it was.

use std::fmt;

/// What went wrong, with what to do about it.
#[derive(Debug)]
pub enum Error {
    /// `libcuda` could not be loaded: no NVIDIA driver on this machine.
    NoDriver,
    /// The driver loaded but reports no GPU.
    NoDevice,
    /// The embedded PTX did not load (driver too old for the PTX version, or JIT failure).
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
    /// More items than this operation handles.
    TooLong {
        /// The length asked for.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Sort parameters the kernels do not support.
    BadConfig(String),
    /// A CUDA driver call failed (out of memory, launch failure, …).
    Driver(cudarc::driver::DriverError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver => write!(
                f,
                "no NVIDIA driver: libcuda could not be loaded. Install the NVIDIA driver, or run on a machine with a GPU"
            ),
            Error::NoDevice => {
                write!(f, "the NVIDIA driver reports no GPU (check CUDA_VISIBLE_DEVICES and nvidia-smi)")
            }
            Error::PtxLoad(e) => write!(
                f,
                "the GPU could not load warpsort's PTX ({e}); update the NVIDIA driver (PTX needs a driver of CUDA 12 or newer)"
            ),
            Error::LengthMismatch { keys, values } => {
                write!(f, "{keys} keys but {values} values: pass one value per key")
            }
            Error::BadSegment { len, max } => {
                write!(f, "segment length {len} is not supported: use 1 to {max}, or a full sort")
            }
            Error::TooLong { len, max } => {
                write!(f, "{len} items is more than this operation sorts ({max}); split the input")
            }
            Error::BadConfig(m) => write!(f, "unsupported sort parameters {m}"),
            Error::Driver(e) => write!(f, "CUDA driver error: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Self {
        Error::Driver(e)
    }
}

/// `Result` with warpsort's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
