//! Temporary device storage, reused between calls: a [`Scratch`] the caller
//! owns, or the one each [`Gpu`] caches for calls that pass none. Every
//! operation that needs temporary storage gets it through
//! [`Gpu::with_scratch`], so that a second call of the same size allocates
//! nothing.

use std::sync::atomic::Ordering;
use std::sync::{Arc, TryLockError};

use cudarc::driver::{CudaSlice, CudaStream};

use crate::error::Result;
use crate::gpu::{DevPtr, Gpu};

/// Temporary device storage for sorts, owned by the caller and reused: it
/// grows (to exactly what a call needs, in 256-byte steps) only when a call
/// needs more than it holds, and is freed when dropped.
///
/// Plain calls ([`Gpu::sort`], [`Gpu::sort_slice`], …) reuse storage cached
/// inside the [`Gpu`] instead; a `Scratch` of your own makes the memory use
/// explicit: reserve the largest size up front with
/// [`Gpu::sort_temp_bytes`], then no sort allocates.
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
/// A `Scratch` may serve several [`Gpu`] handles of one context (for example
/// [`Gpu::with_stream`] copies): a call on another stream than the last one
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

    /// Storage of at least `bytes` on `gpu`'s device, allocated now.
    pub fn with_capacity(gpu: &Gpu, bytes: usize) -> Result<Self> {
        let mut s = Scratch::new();
        s.reserve(gpu, bytes)?;
        Ok(s)
    }

    /// Grows to at least `bytes` now (nothing happens when it holds enough).
    pub fn reserve(&mut self, gpu: &Gpu, bytes: usize) -> Result<()> {
        self.get(gpu, bytes).map(|_| ())
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

    /// The device address of at least `bytes`, usable on `gpu`'s stream
    /// (ordered after the previous user's work), growing first if needed.
    pub(crate) fn get(&mut self, gpu: &Gpu, bytes: usize) -> Result<DevPtr> {
        if let Some(buf) = &self.buf {
            gpu.check_context(buf, "scratch")?;
        }
        if let Some(last) = &self.last
            && **last != **gpu.stream()
        {
            gpu.stream().join(last)?;
        }
        if self.capacity() < bytes {
            // Free first: the old storage's memory may serve the new one.
            self.release()?;
            let buf = gpu.alloc_bytes(bytes.next_multiple_of(256))?;
            self.ptr = gpu.ptr(&buf);
            self.buf = Some(buf);
            self.allocations += 1;
        }
        self.last = Some(gpu.stream().clone());
        Ok(self.ptr)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Errors of the ordering are recorded in the context by cudarc's drop.
        let _ = self.release();
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
            let p = s.get(self, bytes)?;
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
        let before = s.allocations;
        let p = s.get(self, bytes);
        self.scratch_allocations.fetch_add(s.allocations - before, Ordering::Relaxed);
        // `one_off` (if used) is freed after `body`'s work, in stream order.
        body(p?)
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
    /// on it).
    pub fn release_scratch(&self) -> Result<()> {
        self.scratch.lock().unwrap_or_else(|e| e.into_inner()).release()
    }

    /// Device allocations made for temporary storage by calls through this
    /// handle without a [`Scratch`] of their own: tests show reuse with it.
    #[doc(hidden)]
    pub fn scratch_allocations(&self) -> u64 {
        self.scratch_allocations.load(Ordering::Relaxed)
    }
}
