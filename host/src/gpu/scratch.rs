//! Temporary device storage, reused between calls: a [`Scratch`] the caller
//! owns, or the one each [`Gpu`](crate::Gpu) caches for calls that pass none
//! (`Gpu::with_scratch` hands either out).

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr};

use crate::error::{Error, Result};
use crate::launch::DevPtr;

/// Temporary device storage for sorts, owned by the caller and reused: it
/// grows (to exactly what a call needs, in 256-byte steps) only when a call
/// needs more than it holds, and is freed when dropped.
///
/// Plain calls ([`Gpu::sort`](crate::Gpu::sort), [`Gpu::sort_slice`](crate::Gpu::sort_slice), …) reuse storage cached
/// inside the [`Gpu`](crate::Gpu) instead; a `Scratch` of your own makes the memory use
/// explicit: reserve the largest size up front with
/// [`Gpu::sort_temp_bytes`](crate::Gpu::sort_temp_bytes), then no sort allocates.
///
/// ```no_run
/// use warpsort::{Gpu, Scratch, SortOptions};
/// let gpu = Gpu::new()?;
/// let opts = SortOptions::default();
/// let n = 1 << 20;
/// let mut scratch = Scratch::with_capacity(&gpu, Gpu::sort_temp_bytes(&opts, n, 4, 0))?;
/// let mut keys = gpu.stream().clone_htod(&vec![7u32; n])?;
/// for _ in 0..3 {
///     gpu.sort_with_scratch(&mut keys, &opts, &mut scratch)?; // allocates nothing
/// }
/// assert_eq!(scratch.allocations(), 1);
/// # Ok::<(), warpsort::Error>(())
/// ```
///
/// A `Scratch` may serve several [`Gpu`](crate::Gpu) handles of one context (for example
/// [`Gpu::with_stream`](crate::Gpu::with_stream) copies): a call on another stream than the last one
/// first makes its stream wait for the last one's work. A `Scratch` of another
/// context is refused with [`Error::ForeignContext`](crate::Error::ForeignContext).
#[derive(Debug, Default)]
pub struct Scratch {
    buf: Option<CudaSlice<u8>>,
    /// The device address of `buf` (0 when empty).
    ptr: DevPtr,
    /// The stream of the last call that used `buf`.
    last: Option<Arc<CudaStream>>,
    allocations: u64,
}

impl Scratch {
    /// Empty storage: the first call that needs some allocates it.
    pub const fn new() -> Self {
        Scratch { buf: None, ptr: 0, last: None, allocations: 0 }
    }

    /// Bytes held.
    pub fn capacity(&self) -> usize {
        self.buf.as_ref().map_or(0, |b| b.len())
    }

    /// How many device allocations this storage has made.
    pub fn allocations(&self) -> u64 {
        self.allocations
    }

    /// The device address of the storage (0 when empty): tests compare it to
    /// show reuse.
    #[doc(hidden)]
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// Frees the storage (after the work queued on it); the next call that
    /// needs some allocates again.
    pub fn release(&mut self) -> Result<()> {
        self.ptr = 0;
        let last = self.last.take();
        if let Some(buf) = self.buf.take() {
            // cudarc frees in the current context: make it the buffer's.
            buf.context().bind_to_thread()?;
            // The buffer is freed on the stream it was allocated on: order the
            // free after the last user's work.
            if let Some(last) = last
                && *last != **buf.stream()
            {
                buf.stream().join(&last)?;
            }
        }
        Ok(())
    }

    /// The device address of at least `bytes`, usable on `stream` (ordered
    /// after the previous user's work), growing first if needed.
    pub(crate) fn get(&mut self, stream: &Arc<CudaStream>, bytes: usize) -> Result<DevPtr> {
        if let Some(buf) = &self.buf
            && buf.context().cu_ctx() != stream.context().cu_ctx()
        {
            return Err(Error::ForeignContext { what: "scratch" });
        }
        if let Some(last) = &self.last
            && **last != **stream
        {
            stream.join(last)?;
        }
        if self.capacity() < bytes {
            // Free first: the old storage's memory may serve the new one.
            self.release()?;
            let buf = alloc_bytes(stream, bytes.next_multiple_of(256))?;
            self.ptr = buf.device_ptr(stream).0;
            self.buf = Some(buf);
            self.allocations += 1;
        }
        self.last = Some(stream.clone());
        Ok(self.ptr)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Errors of the ordering are recorded in the context by cudarc's drop.
        let _ = self.release();
    }
}

/// `bytes` of device memory on `stream`, contents unset; running out is
/// [`Error::OutOfMemory`] with the size asked for.
pub(crate) fn alloc_bytes(stream: &Arc<CudaStream>, bytes: usize) -> Result<CudaSlice<u8>> {
    // SAFETY: callers write temporary storage before reading it.
    unsafe { alloc_items::<u8>(stream, bytes) }
}

/// Room for `n` items of `T` on `stream`'s pool; out of memory says how
/// many bytes were asked for.
///
/// # Safety
/// The items are uninitialised: the caller writes each before reading it.
pub(crate) unsafe fn alloc_items<T: DeviceRepr>(stream: &Arc<CudaStream>, n: usize) -> Result<CudaSlice<T>> {
    // SAFETY: the caller's contract.
    unsafe { stream.alloc::<T>(n) }.map_err(|e| match Error::from(e) {
        Error::OutOfMemory { free, .. } => Error::OutOfMemory { requested: n * size_of::<T>(), free },
        other => other,
    })
}
