//! The small reads a sort makes between its launches (the order scan's
//! result words, the segment classes' counters), through pinned memory of
//! the handle's own: the copy lands there and the host copies it out, the
//! driver's own staging of a pageable copy left out.
//!
//! Copies the other way stay pageable: through pinned memory they made the
//! sample sort slower (`docs/PERFORMANCE.md`, "Small copies through pinned
//! memory").

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream, PinnedHostSlice};

use crate::error::{Error, Result};
use crate::launch::DevPtr;

/// Bytes a read may bring back through the handle's pinned memory; larger
/// ones go straight into the caller's memory.
pub(crate) const READBACK_BYTES: usize = 4 << 10;

/// The pinned landing area, the stream its copies run on, and the event
/// that marks where a copy ends when work is queued behind it.
pub(crate) struct Readback {
    stream: Arc<CudaStream>,
    landed: CudaEvent,
    /// Owns the allocation `ptr` points into.
    _buf: PinnedHostSlice<u8>,
    ptr: *mut u8,
}

// SAFETY: `ptr` is the area's own pinned allocation, touched only by the
// thread holding the handle's mutex around it.
unsafe impl Send for Readback {}

impl Readback {
    pub(crate) fn new(stream: &Arc<CudaStream>) -> Result<Self> {
        // SAFETY: read by the host only after a copy into it has finished.
        // Flags 0: cached, so that the copy out runs at the CPU's speed.
        let mut buf = unsafe { stream.context().alloc_pinned_with_flags::<u8>(READBACK_BYTES, 0) }
            .map_err(|_| Error::OutOfPinnedMemory { requested: READBACK_BYTES })?;
        let ptr = buf.as_mut_ptr()?;
        let landed = stream.context().new_event(None)?;
        Ok(Readback { stream: stream.clone(), landed, _buf: buf, ptr })
    }

    /// Copies `dst.len()` bytes (at most [`READBACK_BYTES`]) from `src`
    /// once everything queued on the stream has run, and waits for them.
    pub(crate) fn read(&mut self, src: DevPtr, dst: &mut [u8]) -> Result<()> {
        self.queue_copy(src, dst.len())?;
        self.stream.synchronize()?;
        dst.copy_from_slice(self.landing(dst.len()));
        Ok(())
    }

    /// [`Readback::read`], with `ahead` queued behind the copy before the
    /// host waits, for the copy alone: the GPU runs `ahead`'s work while
    /// the host wakes. `ahead` must not read back (this area is taken);
    /// its error, if any, comes back once the copy has landed.
    pub(crate) fn read_behind(
        &mut self,
        src: DevPtr,
        dst: &mut [u8],
        ahead: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        self.queue_copy(src, dst.len())?;
        self.landed.record(&self.stream)?;
        let queued = ahead();
        self.landed.synchronize()?;
        dst.copy_from_slice(self.landing(dst.len()));
        queued
    }

    /// Queues the copy of `len` bytes from `src` into the area.
    fn queue_copy(&mut self, src: DevPtr, len: usize) -> Result<()> {
        debug_assert!(len <= READBACK_BYTES);
        let stream = self.stream.cu_stream();
        let landing = self.landing(len);
        // SAFETY: callers pass `src` inside a live allocation of the stream's
        // context holding `len` bytes; the area holds them.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(landing, src, stream) }?;
        Ok(())
    }

    /// The area's first `len` bytes.
    fn landing(&mut self, len: usize) -> &mut [u8] {
        // SAFETY: the area holds READBACK_BYTES >= len bytes; the stream's
        // earlier copies into it have finished (each read waits for its own).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, len) }
    }
}
