//! The threads that copy staged pieces between pageable and pinned memory.
//!
//! A transfer copies thousands of slot-sized pieces a second, each while
//! the copy engines move the ones before it. A piece copied by every core
//! and waited for before the next one starts (a barrier per piece) leaves
//! the cores idle at the end of every piece, and the copy engines waiting
//! for the caller (`docs/HOST.md` has the measurements). So the crew takes
//! a queue of pieces: the caller ([`Session::submit`]) appends a piece and
//! goes on, each thread claims the next [`GRAIN`] chunk of whatever is
//! queued (moving on to the next piece as soon as one has no chunk left),
//! and the caller asks whether a piece is done ([`Session::is_done`]) to
//! queue its DMA.
//!
//! The queue: `published` counts the chunks appended so far, `next` the
//! chunks claimed (by compare-and-swap: a thread never claims a chunk not
//! yet appended); chunk `c`'s addresses are in ring entry `c % CHUNKS`, and
//! each piece counts its finished chunks in `done[seq % PIECES]`. The caller
//! reuses an entry only once its piece is done. One caller at a time holds
//! the crew (a [`Session`]); another (a second GPU's transfer) copies on
//! rayon instead.
//!
//! The threads stay awake, spinning, for [`SPIN`] after their last chunk,
//! so that a transfer's next pieces start at once, and park when it is over;
//! a transfer wakes them as it starts ([`wake`]), before its first piece.
//! They take most of the cores, not all (`Streaming::crew_percent`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::policy::STREAMING;

/// Bytes a thread copies at a time.
const GRAIN: usize = 256 << 10;

/// Chunks queued at most (the ring of chunk entries): 256 MiB.
const CHUNKS: usize = 1024;

/// Pieces in flight at most.
const PIECES: usize = 64;

/// How long an idle crew thread keeps spinning for the next chunk.
const SPIN: Duration = Duration::from_millis(2);

/// How a copy stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Store {
    /// Plain stores: the destination stays in the CPU's caches (a staging
    /// slot the copy engines read next).
    Cached,
    /// Non-temporal stores: the destination's lines are neither read first
    /// nor kept in the caches (the caller's memory, not read again soon).
    Streaming,
}

impl Store {
    /// Copies `s` into `d` (as long) with these stores.
    fn copy(self, s: &[u8], d: &mut [u8]) {
        match self {
            Store::Cached => d.copy_from_slice(s),
            Store::Streaming => copy_streaming(s, d),
        }
    }
}

/// Copies `s` into `d` (as long) with non-temporal stores where the CPU has
/// them: the destination's lines are not read first nor kept in the caches
/// (a third less memory traffic than a plain copy of data that is not read
/// again soon).
fn copy_streaming(s: &[u8], d: &mut [u8]) {
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

/// Where chunk `c` of the queue copies from and to.
struct Chunk {
    src: AtomicUsize,
    dst: AtomicUsize,
    /// Bytes (32 bits), the piece's `done` entry (16 bits), streaming (1).
    meta: AtomicU64,
}

struct Crew {
    /// Whether a [`Session`] holds the crew.
    held: AtomicBool,
    /// Threads running.
    threads: AtomicUsize,
    chunks: Box<[Chunk]>,
    /// Chunks appended, and chunks claimed (never more than appended).
    published: AtomicU64,
    next: AtomicU64,
    /// Finished chunks of piece `seq`, at `seq % PIECES`.
    done: Box<[AtomicU64]>,
    /// The next piece's number, kept between sessions (so that a ticket
    /// never names two pieces; 0 is [`Ticket::DONE`]).
    seq: AtomicU64,
    /// Threads parked, and where they park; `wakes` counts the calls of
    /// [`wake`] (a parked thread wakes when it changes).
    sleepers: AtomicUsize,
    wakes: AtomicU64,
    park: Mutex<()>,
    wake: Condvar,
}

static CREW: OnceLock<&'static Crew> = OnceLock::new();

fn crew() -> &'static Crew {
    CREW.get_or_init(|| {
        let crew: &'static Crew = Box::leak(Box::new(Crew {
            held: AtomicBool::new(false),
            threads: AtomicUsize::new(0),
            chunks: (0..CHUNKS)
                .map(|_| Chunk { src: AtomicUsize::new(0), dst: AtomicUsize::new(0), meta: AtomicU64::new(0) })
                .collect(),
            published: AtomicU64::new(0),
            next: AtomicU64::new(0),
            done: (0..PIECES).map(|_| AtomicU64::new(0)).collect(),
            seq: AtomicU64::new(1),
            sleepers: AtomicUsize::new(0),
            wakes: AtomicU64::new(0),
            park: Mutex::new(()),
            wake: Condvar::new(),
        }));
        // Most of the cores, not all (`Streaming::crew_percent`).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = (cores * STREAMING.crew_percent / 100).max(1);
        for i in 0..threads {
            // A crew thread that cannot start leaves the work to the others
            // (with none, every copy goes to rayon).
            if std::thread::Builder::new().name(format!("warpsort-copy-{i}")).spawn(move || crew.work()).is_ok() {
                crew.threads.fetch_add(1, SeqCst);
            }
        }
        crew
    })
}

/// Wakes the crew's parked threads ahead of a transfer, so that its first
/// pieces do not wait for them to wake (they spin for [`SPIN`] again, then
/// park).
pub(crate) fn wake() {
    let crew = crew();
    if crew.sleepers.load(SeqCst) > 0 {
        let _p = crew.park.lock().unwrap_or_else(|e| e.into_inner());
        crew.wakes.fetch_add(1, SeqCst);
        crew.wake.notify_all();
    }
}

/// A piece in flight: its number, first chunk and chunk count.
struct Piece {
    seq: u64,
    first: u64,
    chunks: u64,
}

/// A piece handed to the crew: ask [`Session::is_done`] before using its
/// destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ticket(u64);

impl Ticket {
    /// A copy already made (on the caller's thread or rayon's).
    pub(crate) const DONE: Ticket = Ticket(0);
}

/// The crew, held by one caller: pieces it queued and not yet seen done.
/// Dropping it waits for every piece (no copy outlives it).
pub(crate) struct Session {
    crew: &'static Crew,
    flight: VecDeque<Piece>,
    /// The next piece's number.
    seq: u64,
}

impl Session {
    /// The crew, unless another caller holds it (or it has no thread).
    pub fn try_new() -> Option<Session> {
        let crew = crew();
        if crew.threads.load(SeqCst) == 0 || crew.held.compare_exchange(false, true, Acquire, Relaxed).is_err() {
            return None;
        }
        Some(Session { crew, flight: VecDeque::new(), seq: crew.seq.load(Relaxed) })
    }

    /// Queues a copy of `len` bytes from `src` to `dst` and returns at
    /// once (after waiting for room in the queue, if it is full). Pieces of
    /// more than half the queue are copied now, on rayon.
    ///
    /// # Safety
    /// `src` and `dst` hold `len` bytes each, do not overlap, and stay
    /// valid (neither read nor written by others) until the ticket is done
    /// or the session dropped.
    pub unsafe fn submit(&mut self, src: *const u8, dst: *mut u8, len: usize, store: Store) -> Ticket {
        let chunks = len.div_ceil(GRAIN);
        if chunks == 0 {
            return Ticket::DONE;
        }
        if chunks > CHUNKS / 2 {
            // SAFETY: the caller's contract.
            unsafe { copy_now(src, dst, len, store) };
            return Ticket::DONE;
        }
        let crew = self.crew;
        // Only this session appends: `published` is ours to read.
        let first = crew.published.load(Relaxed);
        while self.flight.len() == PIECES
            || self.flight.front().is_some_and(|p| first + chunks as u64 - p.first > CHUNKS as u64)
        {
            self.retire_front();
        }
        let seq = self.seq;
        self.seq += 1;
        let entry = (seq % PIECES as u64) as usize;
        // The piece that used this entry before is retired (at most PIECES
        // in flight): no thread counts into it any more.
        crew.done[entry].store(0, Relaxed);
        for i in 0..chunks {
            let c = &crew.chunks[(first as usize + i) % CHUNKS];
            let n = GRAIN.min(len - i * GRAIN);
            c.src.store(src as usize + i * GRAIN, Relaxed);
            c.dst.store(dst as usize + i * GRAIN, Relaxed);
            c.meta.store(n as u64 | (entry as u64) << 32 | ((store == Store::Streaming) as u64) << 48, Relaxed);
        }
        // Publishes the entries above (threads read them after an acquiring
        // load of `published` that covers their chunk).
        crew.published.store(first + chunks as u64, SeqCst);
        if crew.sleepers.load(SeqCst) > 0 {
            let _p = crew.park.lock().unwrap_or_else(|e| e.into_inner());
            crew.wake.notify_all();
        }
        self.flight.push_back(Piece { seq, first, chunks: chunks as u64 });
        Ticket(seq)
    }

    /// Whether the piece of `t` is copied (its destination complete and
    /// visible to this thread, and to the copy engines).
    pub fn is_done(&mut self, t: Ticket) -> bool {
        while self.flight.front().is_some_and(|p| self.finished(p)) {
            self.flight.pop_front();
        }
        match self.flight.front() {
            None => true,
            Some(front) if t.0 < front.seq => true,
            Some(front) => self.finished(&self.flight[(t.0 - front.seq) as usize]),
        }
    }

    /// Pieces in flight.
    #[cfg(test)]
    pub fn pending(&mut self) -> usize {
        self.is_done(Ticket::DONE);
        self.flight.len()
    }

    fn finished(&self, p: &Piece) -> bool {
        self.crew.done[(p.seq % PIECES as u64) as usize].load(Acquire) == p.chunks
    }

    /// Waits for the oldest piece in flight and forgets it.
    fn retire_front(&mut self) {
        if let Some(p) = self.flight.front() {
            while !self.finished(p) {
                std::hint::spin_loop();
            }
            self.flight.pop_front();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        while !self.flight.is_empty() {
            self.retire_front();
        }
        self.crew.seq.store(self.seq, Relaxed);
        self.crew.held.store(false, Release);
    }
}

impl Crew {
    /// Claims and copies the next chunk queued, if any.
    fn help_one(&self) -> bool {
        loop {
            let n = self.next.load(Acquire);
            if n >= self.published.load(Acquire) {
                return false;
            }
            if self.next.compare_exchange_weak(n, n + 1, AcqRel, Relaxed).is_ok() {
                self.copy_chunk(n);
                return true;
            }
        }
    }

    /// Copies chunk `c` (claimed, so appended: its entry was published
    /// before the `published` this thread loaded) and counts it done.
    fn copy_chunk(&self, c: u64) {
        let e = &self.chunks[c as usize % CHUNKS];
        let (src, dst, meta) = (e.src.load(Relaxed), e.dst.load(Relaxed), e.meta.load(Relaxed));
        let len = meta as u32 as usize;
        // SAFETY: `submit`'s contract: the piece's ranges stay valid until
        // it is done, which needs this chunk; chunks do not overlap, so each
        // byte has one writer.
        let (s, d) = unsafe {
            (std::slice::from_raw_parts(src as *const u8, len), std::slice::from_raw_parts_mut(dst as *mut u8, len))
        };
        let store = if meta >> 48 & 1 == 1 { Store::Streaming } else { Store::Cached };
        #[cfg(feature = "trace")]
        let t = Instant::now();
        store.copy(s, d);
        #[cfg(feature = "trace")]
        if t.elapsed() > Duration::from_micros(400) {
            crate::trace::mark("crew: a chunk took over 0.4 ms");
        }
        self.done[(meta >> 32 & 0xffff) as usize].fetch_add(1, Release);
    }

    /// A crew thread: copies chunks as they come; spins for [`SPIN`] after
    /// the last one, then parks until more are queued.
    fn work(&self) {
        loop {
            let mut idle = Instant::now();
            loop {
                if self.help_one() {
                    idle = Instant::now();
                } else if idle.elapsed() > SPIN {
                    break;
                } else {
                    std::hint::spin_loop();
                }
            }
            let mut p = self.park.lock().unwrap_or_else(|e| e.into_inner());
            self.sleepers.fetch_add(1, SeqCst);
            let wakes = self.wakes.load(SeqCst);
            while self.next.load(SeqCst) >= self.published.load(SeqCst) && self.wakes.load(SeqCst) == wakes {
                p = self.wake.wait(p).unwrap_or_else(|e| e.into_inner());
            }
            self.sleepers.fetch_sub(1, SeqCst);
            drop(p);
            crate::trace::mark("crew: a thread woke");
        }
    }
}

/// Copies `len` bytes from `src` to `dst` now, on rayon's threads.
///
/// # Safety
/// `src` and `dst` hold `len` bytes each and do not overlap.
pub(crate) unsafe fn copy_now(src: *const u8, dst: *mut u8, len: usize, store: Store) {
    use rayon::prelude::*;
    if len == 0 {
        return;
    }
    // SAFETY: the caller's contract.
    let (s, d) = unsafe { (std::slice::from_raw_parts(src, len), std::slice::from_raw_parts_mut(dst, len)) };
    d.par_chunks_mut(GRAIN).zip(s.par_chunks(GRAIN)).for_each(|(d, s)| store.copy(s, d));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize, salt: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 131 + salt) as u8).collect()
    }

    /// Runs `f` with the crew held (tests on other threads may hold it:
    /// wait for them).
    fn with_session(f: impl FnOnce(&mut Session)) {
        loop {
            if let Some(mut s) = Session::try_new() {
                return f(&mut s);
            }
            std::thread::yield_now();
        }
    }

    #[test]
    fn copies_every_byte_of_every_piece() {
        with_session(|s| {
            for store in [Store::Cached, Store::Streaming] {
                for len in [0, 1, GRAIN - 1, GRAIN, GRAIN + 1, 5 * GRAIN + 77, 16 << 20] {
                    let src = pattern(len, len);
                    let mut dst = vec![0u8; len];
                    // SAFETY: two vectors of `len` bytes, waited for below.
                    let t = unsafe { s.submit(src.as_ptr(), dst.as_mut_ptr(), len, store) };
                    while !s.is_done(t) {}
                    assert!(dst == src, "{len} {store:?}");
                }
            }
        });
    }

    #[test]
    fn many_pieces_in_flight_wrap_the_queue() {
        // More pieces and chunks than the queue holds, checked in any order.
        let lens: Vec<usize> = (0..300).map(|i| (i % 7) * GRAIN + i * 4099 % GRAIN + 1).collect();
        let srcs: Vec<Vec<u8>> = lens.iter().enumerate().map(|(i, &l)| pattern(l, i)).collect();
        let mut dsts: Vec<Vec<u8>> = lens.iter().map(|&l| vec![0u8; l]).collect();
        with_session(|s| {
            let mut tickets = Vec::new();
            for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
                // SAFETY: each pair of vectors lives until the session waits.
                tickets.push(unsafe { s.submit(src.as_ptr(), dst.as_mut_ptr(), src.len(), Store::Cached) });
            }
            for &t in tickets.iter().rev() {
                while !s.is_done(t) {}
            }
            assert_eq!(s.pending(), 0);
        });
        assert!(srcs == dsts);
    }

    #[test]
    fn a_dropped_session_waits_for_its_pieces() {
        let src = pattern(3 << 20, 9);
        let mut dst = vec![0u8; src.len()];
        with_session(|s| {
            for i in 0..12 {
                let at = i * (256 << 10);
                // SAFETY: disjoint ranges of two vectors that outlive the session.
                unsafe { s.submit(src.as_ptr().add(at), dst.as_mut_ptr().add(at), 256 << 10, Store::Streaming) };
            }
        });
        assert!(src == dst);
    }

    #[test]
    fn one_caller_at_a_time_the_others_copy_on_rayon() {
        std::thread::scope(|sc| {
            for t in 0..4usize {
                sc.spawn(move || {
                    for round in 0..50usize {
                        let len = (t + 1) * GRAIN + round * 4099;
                        let src = pattern(len, t ^ round);
                        let mut dst = vec![0u8; len];
                        match Session::try_new() {
                            Some(mut s) => {
                                // SAFETY: two vectors of `len` bytes, waited for.
                                let k = unsafe { s.submit(src.as_ptr(), dst.as_mut_ptr(), len, Store::Streaming) };
                                while !s.is_done(k) {}
                            }
                            // SAFETY: as above.
                            None => unsafe { copy_now(src.as_ptr(), dst.as_mut_ptr(), len, Store::Cached) },
                        }
                        assert!(dst == src);
                    }
                });
            }
        });
        // Parked threads wake for the next piece.
        std::thread::sleep(SPIN * 3);
        let src = vec![7u8; 3 * GRAIN];
        let mut dst = vec![0u8; 3 * GRAIN];
        with_session(|s| {
            // SAFETY: as above.
            let k = unsafe { s.submit(src.as_ptr(), dst.as_mut_ptr(), src.len(), Store::Cached) };
            while !s.is_done(k) {}
        });
        assert_eq!(dst, src);
    }
}
