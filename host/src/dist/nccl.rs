//! NCCL as the distributed sort uses it (cudarc's bindings, `libnccl`
//! loaded at run time): communicators, the bootstrap id, grouped calls, and
//! byte-wise sends, receives and all-gathers of device buffers.

use std::mem::size_of;

use cudarc::driver::{CudaSlice, DevicePtr};
use cudarc::nccl::{self, Comm, Id};

use crate::error::{Error, Result};

/// An NCCL failure as a typed error.
pub(crate) fn nccl_error(e: nccl::result::NcclError) -> Error {
    Error::Nccl(format!("{:?}", e.0))
}

/// Fails with [`Error::NoNccl`] unless `libnccl` loads, and keeps NVLink
/// multicast (NVLS) off unless the caller chose otherwise: it can take a
/// shared machine's GPUs out of service.
pub(crate) fn require_nccl() -> Result<()> {
    // SAFETY: only tries to load the library.
    if !unsafe { nccl::sys::is_culib_present() } {
        return Err(Error::NoNccl);
    }
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: set once, before the first communicator (NCCL reads it
        // then); documented on `Cluster::new` and `Peer::new`: open them
        // before other threads of the process read the environment.
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
    Ok(())
}

/// The 128-byte id that bootstraps a communicator across processes.
pub(crate) fn new_id() -> Result<Id> {
    require_nccl()?;
    Id::new().map_err(nccl_error)
}

/// Runs `calls` between `ncclGroupStart` and `ncclGroupEnd` (which runs
/// also when `calls` fails): one process's calls on several communicators,
/// or the sends and receives of one exchange, go out together.
pub(crate) fn grouped(calls: impl FnOnce() -> Result<()>) -> Result<()> {
    nccl::group_start().map_err(nccl_error)?;
    let r = calls();
    let end = nccl::group_end().map_err(nccl_error);
    r.and(end.map(drop))
}

/// Sends bytes `at..at + len` of `buf` to `peer` (nothing when empty; the
/// peer receives nothing either, as both know the counts).
pub(crate) fn send<T>(comm: &Comm, buf: &CudaSlice<T>, at: usize, len: usize, peer: usize) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    // SAFETY: the same allocation seen as its bytes (any bytes are valid `u8`s).
    let bytes = unsafe { buf.transmute::<u8>(buf.len() * size_of::<T>()) }.expect("a buffer's bytes fit it");
    comm.send(&bytes.slice(at..at + len), peer as i32).map_err(nccl_error)
}

/// Receives `len` bytes from `peer` into `buf` at byte `at`.
pub(crate) fn recv<T>(comm: &Comm, buf: &mut CudaSlice<T>, at: usize, len: usize, peer: usize) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let total = buf.len() * size_of::<T>();
    // SAFETY: as in `send`; NCCL writes whole items' bytes (the callers' counts).
    let mut bytes = unsafe { buf.transmute_mut::<u8>(total) }.expect("a buffer's bytes fit it");
    comm.recv(&mut bytes.slice_mut(at..at + len), peer as i32).map(drop).map_err(nccl_error)
}

/// Every rank's `send` (the same length on each), rank after rank, in `recv`.
pub(crate) fn all_gather(comm: &Comm, send: &impl DevicePtr<u8>, recv: &mut CudaSlice<u8>) -> Result<()> {
    comm.all_gather(send, recv).map(drop).map_err(nccl_error)
}
