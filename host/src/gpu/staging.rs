//! Copies between host memory and the GPU at the bus's speed: pageable
//! memory goes through rings of pinned staging buffers (the copy crew of
//! `crew.rs` copies pieces into or out of slots while the copy engines move
//! the others), pinned memory is copied directly. One ring uploads on a
//! stream of its own, the other downloads on another, so both directions
//! and the sort on the handle's stream overlap.
//!
//! A transfer is a job ([`Up`], [`Down`]) advanced by [`Lanes::step_ups`] and
//! [`Lanes::step_down`], which never wait: each hands the crew the pieces
//! that have a free slot, and queues the DMA of each piece the crew has
//! finished (uploads), or has the crew copy out each piece whose DMA has
//! landed (downloads). Callers step their jobs in a loop, an upload and a
//! download interleaved on one thread.
//!
//! Uploads are staged with plain stores, so that the slot is still in the
//! CPU's last-level cache when the copy engine reads it; downloads are
//! copied out with non-temporal stores (`docs/HOST.md` has the measurements).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::sys::{CUevent_flags, CUmemorytype, CUpointer_attribute};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, PinnedHostSlice};

use super::crew::{self, Session, Store, Ticket};
use crate::error::{Error, Result};
use crate::launch::DevPtr;
use crate::trace;

/// What a slot holds.
#[derive(Clone, Copy)]
enum Held {
    /// Nothing pending (its last DMA may still run: `Slot::used`).
    Free,
    /// An upload's piece the crew copies in; its DMA to `dst` comes next.
    Filling { job: u64, ticket: Ticket, dst: DevPtr, len: usize },
    /// A download's piece a DMA brings in; the crew copies it to `dst` next.
    Landing { job: u64, dst: usize, len: usize },
    /// A download's piece the crew copies out.
    Emptying { job: u64, ticket: Ticket, len: usize },
}

/// One pinned buffer, the event of the last DMA that used it, and what it
/// holds.
struct Slot {
    buf: PinnedHostSlice<u8>,
    ptr: *mut u8,
    used: CudaEvent,
    held: Held,
}

// SAFETY: `ptr` is the slot's own pinned allocation, used by one thread at
// a time (the `Lanes` owning it sit behind the handle's mutex) and by the
// crew for the pieces that thread hands it.
unsafe impl Send for Slot {}

/// A ring of pinned slots and the stream its copies run on.
pub(crate) struct Ring {
    stream: Arc<CudaStream>,
    slots: Vec<Slot>,
    /// The next slot to fill: the oldest in use, when it is in use.
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
            out.push(Slot { buf, ptr, used, held: Held::Free });
        }
        Ok(Ring { stream, slots: out, next: 0 })
    }

    fn bytes(&self) -> usize {
        self.slots[0].buf.len()
    }

    /// Slot indices, oldest use first.
    fn in_order(&self) -> impl Iterator<Item = usize> + use<> {
        let (k, next) = (self.slots.len(), self.next);
        (0..k).map(move |i| (next + i) % k)
    }

    /// Whether the crew works on a piece of this ring.
    fn crew_busy(&self) -> bool {
        self.slots.iter().any(|s| matches!(s.held, Held::Filling { .. } | Held::Emptying { .. }))
    }
}

/// The handle's staging: an upload ring, a download ring, and the copy
/// crew while it has pieces of theirs.
pub(crate) struct Lanes {
    pub up: Ring,
    pub down: Ring,
    crew: Option<Session>,
}

/// Numbers jobs, so that a slot knows whose piece it holds.
static JOBS: AtomicU64 = AtomicU64::new(0);

impl Lanes {
    /// Rings of `slots` pinned buffers of `bytes` each, on new streams.
    pub fn new(ctx: &Arc<CudaContext>, slots: usize, bytes: usize) -> Result<Self> {
        Ok(Lanes { up: Ring::new(ctx, slots, bytes)?, down: Ring::new(ctx, slots, bytes)?, crew: None })
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

    /// Advances uploads without waiting, in order: each job takes slots
    /// only once every piece of the jobs before it has one, so that pieces
    /// and their DMAs go in the jobs' order (a job's upload ends before the
    /// next one's, as its consumer, a run's sort, wants; stepped side by
    /// side, jobs would share the slots and all end together). Returns as
    /// soon as a job's last DMA is queued, so that an event the caller
    /// records then marks that job's end alone. False once every piece's
    /// DMA is queued.
    pub fn step_ups(&mut self, ups: &mut [Up]) -> Result<bool> {
        trace::poll();
        let mut before_done = true;
        for u in ups.iter_mut() {
            if u.pinned && !before_done {
                // Its one DMA goes after every DMA before it.
                break;
            }
            let was_done = u.done();
            self.step_up(u)?;
            // The jobs after one not handed out have no piece in flight.
            if !u.handed() || (u.done() && !was_done) {
                break;
            }
            before_done &= u.done();
        }
        Ok(ups.iter().any(|u| !u.done()))
    }

    /// Advances `up` without waiting: queues the DMA of each of its pieces
    /// the crew has copied, and hands the crew the next pieces that have a
    /// free slot.
    fn step_up(&mut self, up: &mut Up) -> Result<()> {
        let ring = &mut self.up;
        if up.pinned {
            // The caller's pinned memory: all of it in one copy.
            if up.queued < up.len {
                queue_htod(&ring.stream, up.dst, up.src, up.len)?;
                (up.at, up.queued) = (up.len, up.len);
            }
            return Ok(());
        }
        // The DMAs go in the order the pieces were handed out, whichever job
        // they belong to: an event recorded after a job's last DMA then
        // follows no piece of a later job.
        for i in ring.in_order() {
            let slot = &mut ring.slots[i];
            let Held::Filling { job, ticket, dst, len } = slot.held else { continue };
            if job != up.id || !crew_done(&mut self.crew, ticket) {
                break;
            }
            queue_htod(&ring.stream, dst, slot.ptr as usize, len)?;
            trace::mark(trace::step::UP_DMA_QUEUED);
            slot.used.record(&ring.stream)?;
            slot.held = Held::Free;
            up.queued += len;
        }
        while up.at < up.len {
            let bytes = ring.bytes();
            let slot = &mut ring.slots[ring.next];
            if !matches!(slot.held, Held::Free) || !slot.used.try_is_complete()? {
                break;
            }
            let len = (up.len - up.at).min(bytes);
            // SAFETY: `up.src + at..+len` lies in the job's source
            // (`Up::new`: it outlives the job), and the slot holds `bytes >=
            // len` bytes that no copy engine uses now (its last DMA is done)
            // and nothing else until the piece is done.
            let ticket = unsafe { submit(&mut self.crew, (up.src + up.at) as *const u8, slot.ptr, len, Store::Cached) };
            trace::mark("up: piece to the crew");
            slot.held = Held::Filling { job: up.id, ticket, dst: up.dst + up.at as u64, len };
            up.at += len;
            ring.next = (ring.next + 1) % ring.slots.len();
        }
        self.settle();
        Ok(())
    }

    /// Advances `down` without waiting: has the crew copy out each of its
    /// pieces whose DMA has landed, frees the slots it has finished, and
    /// queues the DMAs of the next pieces that have a free slot. False once
    /// every piece is in place.
    pub fn step_down(&mut self, down: &mut Down) -> Result<bool> {
        trace::poll();
        let ring = &mut self.down;
        if down.pinned {
            if down.at < down.len {
                down.wait_gates(&ring.stream, down.len)?;
                queue_dtoh(&ring.stream, down.dst, down.src, down.len)?;
                down.at = down.len;
            }
            if down.landed < down.len {
                ring.stream.synchronize()?;
                down.landed = down.len;
            }
            return Ok(false);
        }
        for i in ring.in_order() {
            let slot = &mut ring.slots[i];
            match slot.held {
                Held::Landing { job, dst, len } if job == down.id && slot.used.try_is_complete()? => {
                    // SAFETY: the finished DMA filled the slot's first `len`
                    // bytes; `dst..dst + len` lies in the job's destination
                    // (`Down::new`), which outlives the job; neither is
                    // touched until the piece is done.
                    let ticket = unsafe { submit(&mut self.crew, slot.ptr, dst as *mut u8, len, Store::Streaming) };
                    trace::mark("down: landed, to the crew");
                    slot.held = Held::Emptying { job, ticket, len };
                }
                Held::Emptying { job, ticket, len } if job == down.id && crew_done(&mut self.crew, ticket) => {
                    slot.held = Held::Free;
                    trace::mark("down: piece out");
                    down.landed += len;
                }
                _ => {}
            }
        }
        while down.at < down.len {
            let bytes = ring.bytes();
            let slot = &mut ring.slots[ring.next];
            if !matches!(slot.held, Held::Free) {
                break;
            }
            let len = (down.len - down.at).min(bytes);
            down.wait_gates(&ring.stream, down.at + len)?;
            queue_dtoh(&ring.stream, slot.ptr as usize, down.src + down.at as u64, len)?;
            trace::mark(trace::step::DOWN_DMA_QUEUED);
            slot.used.record(&ring.stream)?;
            slot.held = Held::Landing { job: down.id, dst: down.dst + down.at, len };
            down.at += len;
            ring.next = (ring.next + 1) % ring.slots.len();
        }
        self.settle();
        Ok(down.landed < down.len)
    }

    /// Runs jobs to their end, interleaved.
    pub fn run(&mut self, ups: &mut [Up], downs: &mut [Down]) -> Result<()> {
        loop {
            let mut busy = self.step_ups(ups)?;
            for d in downs.iter_mut() {
                busy |= self.step_down(d)?;
            }
            if !busy {
                return Ok(());
            }
        }
    }

    /// After an error: waits for every queued copy, the crew's and the copy
    /// engines' (so none touches memory the caller gets back), errors
    /// ignored, and forgets the pieces in the slots.
    pub fn quiesce(&mut self) {
        let _ = self.up.stream.synchronize();
        let _ = self.down.stream.synchronize();
        self.crew = None;
        for s in self.up.slots.iter_mut().chain(self.down.slots.iter_mut()) {
            s.held = Held::Free;
        }
    }

    /// Lets the crew go when it has no piece of ours (another GPU's
    /// transfer may take it).
    fn settle(&mut self) {
        if self.crew.is_some() && !self.up.crew_busy() && !self.down.crew_busy() {
            self.crew = None;
        }
    }
}

/// Hands a piece to the crew (taking it first if it is free), or copies it
/// now on rayon when another transfer holds it.
///
/// # Safety
/// As [`Session::submit`].
unsafe fn submit(crew: &mut Option<Session>, src: *const u8, dst: *mut u8, len: usize, store: Store) -> Ticket {
    if crew.is_none() {
        *crew = Session::try_new();
    }
    match crew {
        // SAFETY: the caller's contract.
        Some(s) => unsafe { s.submit(src, dst, len, store) },
        None => {
            // SAFETY: the caller's contract.
            unsafe { crew::copy_now(src, dst, len, store) };
            Ticket::DONE
        }
    }
}

/// Whether the crew has finished the piece of `ticket`.
fn crew_done(crew: &mut Option<Session>, ticket: Ticket) -> bool {
    crew.as_mut().is_none_or(|s| s.is_done(ticket))
}

/// An upload of `len` host bytes at `src` to device address `dst`.
pub(crate) struct Up {
    id: u64,
    src: usize,
    dst: DevPtr,
    len: usize,
    /// Bytes handed to the crew, and bytes whose DMA is queued.
    at: usize,
    queued: usize,
    pinned: bool,
}

impl Up {
    /// Copies `src` to `dst` (room for all of it); `src` must outlive the
    /// job and the copies (the caller waits for the upload stream).
    pub fn new<T: Copy>(src: &[T], dst: DevPtr) -> Self {
        let len = size_of_val(src);
        let (id, src) = (JOBS.fetch_add(1, Ordering::Relaxed), src.as_ptr() as usize);
        Up { id, src, dst, len, at: 0, queued: 0, pinned: is_pinned(src, len) }
    }

    /// Whether every piece's DMA is queued.
    pub fn done(&self) -> bool {
        self.queued == self.len
    }

    /// Whether every piece has a slot (handed to the crew, or its DMA
    /// queued): a later job may take slots from then on.
    fn handed(&self) -> bool {
        self.at == self.len
    }

    /// The share of the bytes whose DMAs are queued (1 when empty).
    pub fn fraction(&self) -> f64 {
        if self.len == 0 { 1.0 } else { self.queued as f64 / self.len as f64 }
    }
}

/// A download of `len` bytes at device address `src` into host memory.
pub(crate) struct Down {
    id: u64,
    src: DevPtr,
    dst: usize,
    len: usize,
    /// Bytes whose DMA is queued, and bytes in place.
    at: usize,
    landed: usize,
    pinned: bool,
    /// Events that each guard the bytes from their offset on (ascending),
    /// and how many of them the download stream waits for already.
    gates: Vec<(usize, Arc<CudaEvent>)>,
    waited: usize,
}

impl Down {
    /// Copies `dst.len()` items from `src` into `dst`, which must outlive
    /// the job (it is finished when [`Lanes::step_down`] says so).
    pub fn new<T: Copy>(src: DevPtr, dst: &mut [T]) -> Self {
        let len = size_of_val(dst);
        let (id, dst) = (JOBS.fetch_add(1, Ordering::Relaxed), dst.as_mut_ptr() as usize);
        Down { id, src, dst, len, at: 0, landed: 0, pinned: is_pinned(dst, len), gates: Vec::new(), waited: 0 }
    }

    /// This download, its bytes ready in order: the DMA of byte `at` and
    /// after waits for each event whose offset is at most `at` (sorted by
    /// offset; the first at 0). Data copied back a range at a time as it
    /// is made: the first DMAs wait for the first range alone.
    pub fn gated(self, gates: Vec<(usize, Arc<CudaEvent>)>) -> Self {
        debug_assert!(gates.windows(2).all(|w| w[0].0 <= w[1].0));
        Down { gates, ..self }
    }

    /// Makes `stream` wait for the gates of the bytes before `end`.
    fn wait_gates(&mut self, stream: &CudaStream, end: usize) -> Result<()> {
        while let Some((at, event)) = self.gates.get(self.waited)
            && *at < end
        {
            stream.wait(event)?;
            self.waited += 1;
        }
        Ok(())
    }

    /// The share of the bytes in place (1 when empty).
    pub fn fraction(&self) -> f64 {
        if self.len == 0 { 1.0 } else { self.landed as f64 / self.len as f64 }
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
