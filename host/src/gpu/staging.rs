//! Copies between host memory and the GPU at the bus's speed: pageable
//! memory goes through rings of pinned staging buffers (CPU copies into or
//! out of one slot, on all cores by the copy crew of `crew.rs`, while the
//! copy engines move the others),
//! pinned memory is copied directly. One ring uploads on a stream of its
//! own, the other downloads on another, so both directions and the sort on
//! the handle's stream overlap.
//!
//! A transfer is a job ([`Up`], [`Down`]) advanced one slot at a time by
//! [`Lanes::step`]: an upload and a download interleave on one thread.

use std::sync::Arc;

use cudarc::driver::sys::{CUevent_flags, CUmemorytype, CUpointer_attribute};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, PinnedHostSlice};

use super::crew;
use crate::error::{Error, Result};
use crate::launch::DevPtr;

/// One pinned buffer and the event of the last copy engine transfer that
/// used it.
struct Slot {
    buf: PinnedHostSlice<u8>,
    ptr: *mut u8,
    used: CudaEvent,
    /// A download's piece waiting in this slot: `(host address, bytes)`.
    pending: Option<(usize, usize)>,
}

// SAFETY: `ptr` is the slot's own pinned allocation, used by one thread at
// a time (the `Lanes` owning it sit behind the handle's mutex).
unsafe impl Send for Slot {}

/// A ring of pinned slots and the stream its copies run on.
pub(crate) struct Ring {
    stream: Arc<CudaStream>,
    slots: Vec<Slot>,
    next: usize,
}

impl Ring {
    fn new(ctx: &Arc<CudaContext>, slots: usize, bytes: usize) -> Result<Self> {
        let stream = ctx.new_stream()?;
        let mut out = Vec::with_capacity(slots);
        for _ in 0..slots {
            // SAFETY: staging memory is written (by a CPU copy or a download)
            // before it is read; flags 0: cached, readable by the CPU at full
            // speed (not write-combined).
            let mut buf = unsafe { ctx.alloc_pinned_with_flags::<u8>(bytes, 0) }
                .map_err(|_| Error::OutOfPinnedMemory { requested: bytes * slots })?;
            let ptr = buf.as_mut_ptr()?;
            let used = ctx.new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
            out.push(Slot { buf, ptr, used, pending: None });
        }
        Ok(Ring { stream, slots: out, next: 0 })
    }

    fn bytes(&self) -> usize {
        self.slots[0].buf.len()
    }
}

/// The handle's staging: an upload ring and a download ring.
pub(crate) struct Lanes {
    pub up: Ring,
    pub down: Ring,
}

impl Lanes {
    /// Rings of `slots` pinned buffers of `bytes` each, on new streams.
    pub fn new(ctx: &Arc<CudaContext>, slots: usize, bytes: usize) -> Result<Self> {
        Ok(Lanes { up: Ring::new(ctx, slots, bytes)?, down: Ring::new(ctx, slots, bytes)? })
    }

    /// Whether these rings serve a request for `slots` buffers of `bytes`.
    pub fn fits(&self, slots: usize, bytes: usize) -> bool {
        self.up.slots.len() == slots && self.up.bytes() == bytes
    }

    /// Pinned bytes held.
    pub fn pinned_bytes(&self) -> usize {
        (self.up.slots.len() + self.down.slots.len()) * self.up.bytes()
    }

    /// Makes the upload stream wait for `event` (a buffer it overwrites is
    /// free once the event has passed).
    pub fn up_after(&self, event: &CudaEvent) -> Result<()> {
        Ok(self.up.stream.wait(event)?)
    }

    /// Makes the upload stream wait until `stream` has reached what is
    /// queued on it now: device buffers come from `stream`'s stream-ordered
    /// pool, which hands out memory freed by work still queued there (a
    /// failed sort's last kernels, the caller's own), so uploads into a new
    /// buffer wait for that work.
    pub fn up_after_stream(&self, stream: &CudaStream) -> Result<()> {
        self.up_after(&stream.record_event(None)?)
    }

    /// An event on the upload stream after everything queued on it.
    pub fn up_done(&self) -> Result<CudaEvent> {
        Ok(self.up.stream.record_event(None)?)
    }

    /// Makes the download stream wait for `event` (the data is ready).
    pub fn down_after(&self, event: &CudaEvent) -> Result<()> {
        Ok(self.down.stream.wait(event)?)
    }

    /// Advances `up` by one slot. False when it has nothing left to queue.
    pub fn step_up(&mut self, up: &mut Up) -> Result<bool> {
        if up.done() {
            return Ok(false);
        }
        let ring = &mut self.up;
        let (at, len) = (up.at, (up.len - up.at).min(ring.bytes()));
        let src = up.src + at;
        if up.pinned {
            // The caller's pinned memory: all of it in one copy.
            let len = up.len - up.at;
            queue_htod(&ring.stream, up.dst + at as u64, src, len)?;
            up.at = up.len;
            return Ok(true);
        }
        let (slot, stream) = ring.advance();
        slot.used.synchronize()?;
        // SAFETY: `src..src + len` lies in the job's source (`Up::new`), and
        // the slot holds `ring.bytes() >= len` bytes no copy engine uses now.
        unsafe { crew::copy(src as *const u8, slot.ptr, len) };
        queue_htod(stream, up.dst + at as u64, slot.ptr as usize, len)?;
        slot.used.record(stream)?;
        up.at += len;
        Ok(true)
    }

    /// Advances `down` by one slot: queues the next piece's copy, and copies
    /// out the oldest piece in the ring once its copy is done. False when it
    /// has finished (every piece landed).
    pub fn step_down(&mut self, down: &mut Down) -> Result<bool> {
        let ring = &mut self.down;
        if down.pinned {
            if down.at < down.len {
                queue_dtoh(&ring.stream, down.dst + down.at, down.src + down.at as u64, down.len - down.at)?;
                down.at = down.len;
                return Ok(true);
            }
            ring.stream.synchronize()?;
            return Ok(false);
        }
        if down.at == down.len {
            // Drain: every piece still in a slot, oldest first.
            return Ok(ring.drain()? > 0);
        }
        let len = (down.len - down.at).min(ring.bytes());
        let (slot, stream) = ring.advance();
        flush(slot)?;
        queue_dtoh(stream, slot.ptr as usize, down.src + down.at as u64, len)?;
        slot.used.record(stream)?;
        slot.pending = Some((down.dst + down.at, len));
        down.at += len;
        Ok(true)
    }

    /// Runs jobs to their end, interleaved slot by slot.
    pub fn run(&mut self, ups: &mut [Up], downs: &mut [Down]) -> Result<()> {
        loop {
            let mut busy = false;
            for u in ups.iter_mut() {
                busy |= self.step_up(u)?;
            }
            for d in downs.iter_mut() {
                busy |= self.step_down(d)?;
            }
            if !busy {
                return Ok(());
            }
        }
    }

    /// After an error: waits for every queued copy (so none touches memory
    /// the caller gets back), errors ignored, and forgets the download
    /// pieces not yet copied out.
    pub fn quiesce(&mut self) {
        let _ = self.up.stream.synchronize();
        let _ = self.down.stream.synchronize();
        for s in self.down.slots.iter_mut() {
            s.pending = None;
        }
    }
}

impl Ring {
    /// The next slot in turn.
    fn advance(&mut self) -> (&mut Slot, &CudaStream) {
        let i = self.next;
        self.next = (i + 1) % self.slots.len();
        (&mut self.slots[i], &self.stream)
    }

    /// Copies out every pending piece, oldest first; how many there were.
    fn drain(&mut self) -> Result<usize> {
        let k = self.slots.len();
        let mut n = 0;
        for i in 0..k {
            let slot = &mut self.slots[(self.next + i) % k];
            if slot.pending.is_some() {
                flush(slot)?;
                n += 1;
            }
        }
        Ok(n)
    }
}

/// Waits for the slot's download and copies its piece out.
fn flush(slot: &mut Slot) -> Result<()> {
    if let Some((dst, len)) = slot.pending.take() {
        slot.used.synchronize()?;
        // SAFETY: `dst..dst + len` lies in the job's destination (`Down::new`)
        // and the finished copy filled the slot's first `len` bytes.
        unsafe { crew::copy(slot.ptr, dst as *mut u8, len) };
    }
    Ok(())
}

/// An upload of `len` host bytes at `src` to device address `dst`.
pub(crate) struct Up {
    src: usize,
    dst: DevPtr,
    len: usize,
    at: usize,
    pinned: bool,
}

impl Up {
    /// Copies `src` to `dst` (room for all of it); `src` must outlive the
    /// job and the copies (the caller waits for the upload stream).
    pub fn new<T: Copy>(src: &[T], dst: DevPtr) -> Self {
        let len = size_of_val(src);
        Up { src: src.as_ptr() as usize, dst, len, at: 0, pinned: is_pinned(src.as_ptr() as usize, len) }
    }

    pub fn done(&self) -> bool {
        self.at == self.len
    }

    /// The share of the bytes whose copies are queued (1 when empty).
    pub fn fraction(&self) -> f64 {
        if self.len == 0 { 1.0 } else { self.at as f64 / self.len as f64 }
    }
}

/// A download of `len` bytes at device address `src` into host memory.
pub(crate) struct Down {
    src: DevPtr,
    dst: usize,
    len: usize,
    at: usize,
    pinned: bool,
}

impl Down {
    /// Copies `dst.len()` items from `src` into `dst`, which must outlive
    /// the job (it is finished when [`Lanes::step_down`] says so).
    pub fn new<T: Copy>(src: DevPtr, dst: &mut [T]) -> Self {
        let len = size_of_val(dst);
        Down { src, dst: dst.as_mut_ptr() as usize, len, at: 0, pinned: is_pinned(dst.as_ptr() as usize, len) }
    }

    /// The share of the bytes whose copies are queued (1 when empty).
    pub fn fraction(&self) -> f64 {
        if self.len == 0 { 1.0 } else { self.at as f64 / self.len as f64 }
    }
}

fn queue_htod(stream: &CudaStream, dst: DevPtr, src: usize, len: usize) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    stream.context().bind_to_thread()?;
    // SAFETY: `src..src + len` is pinned host memory (a slot, or the caller's
    // pinned slice) kept alive until the stream is waited for; `dst` has room.
    let src = unsafe { std::slice::from_raw_parts(src as *const u8, len) };
    // SAFETY: as above.
    unsafe { cudarc::driver::result::memcpy_htod_async(dst, src, stream.cu_stream()) }?;
    Ok(())
}

fn queue_dtoh(stream: &CudaStream, dst: usize, src: DevPtr, len: usize) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    stream.context().bind_to_thread()?;
    // SAFETY: `dst..dst + len` is pinned host memory kept alive (and not
    // read) until the copy's event has passed; `src` holds `len` bytes.
    let dst = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, len) };
    // SAFETY: as above.
    unsafe { cudarc::driver::result::memcpy_dtoh_async(dst, src, stream.cu_stream()) }?;
    Ok(())
}

/// Copies `s` into `d` (as long) with non-temporal stores where the CPU has
/// them: the destination's lines are not read first nor kept in the caches
/// (a third less memory traffic than a plain copy of data that is not read
/// again soon).
pub(super) fn copy_streaming(s: &[u8], d: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let head = d.as_ptr().align_offset(16).min(d.len());
        d[..head].copy_from_slice(&s[..head]);
        let body = (d.len() - head) / 16 * 16;
        let (src, dst) = (s[head..head + body].as_ptr(), d[head..head + body].as_mut_ptr());
        for i in (0..body).step_by(16) {
            // SAFETY: SSE2 is part of x86_64; `i + 16 <= body` bytes of both
            // ranges; `dst + i` is 16-byte aligned (`head` aligned it).
            unsafe { _mm_stream_si128(dst.add(i).cast::<__m128i>(), _mm_loadu_si128(src.add(i).cast::<__m128i>())) };
        }
        // SAFETY: SSE2; orders the streaming stores before what follows.
        unsafe { _mm_sfence() };
        d[head + body..].copy_from_slice(&s[head + body..]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    d.copy_from_slice(s);
}

/// Whether host bytes `at..at + len` lie in one allocation the driver has
/// pinned (cuMemHostAlloc, cudaHostRegister): those are copied directly.
pub(crate) fn is_pinned(at: usize, len: usize) -> bool {
    if len == 0 {
        return false;
    }
    // cuPointerGetAttributes (not ...Attribute) answers for memory CUDA does
    // not know with zeros instead of an error.
    let (mut kind, mut start, mut size) = (0u32, 0u64, 0usize);
    let mut attrs = [
        CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data: [*mut std::ffi::c_void; 3] =
        [(&raw mut kind).cast(), (&raw mut start).cast(), (&raw mut size).cast()];
    // SAFETY: each data pointer has the size of its attribute (an enum, a
    // device pointer, a size); the driver only reads the address.
    let r = unsafe { cudarc::driver::sys::cuPointerGetAttributes(3, attrs.as_mut_ptr(), data.as_mut_ptr(), at as u64) };
    let host = r == cudarc::driver::sys::CUresult::CUDA_SUCCESS && kind == CUmemorytype::CU_MEMORYTYPE_HOST as u32;
    host && start <= at as u64 && at as u64 + len as u64 <= start + size as u64
}
