//! The threads that copy staged pieces between pageable and pinned memory
//! ([`copy`]). A transfer copies one slot at a time, thousands of times
//! a second: a rayon fork-join per slot sleeps and wakes the pool's threads
//! (and the caller) every time. The crew's threads stay awake, spinning,
//! for [`SPIN`] after each piece, so that the next piece starts at once,
//! and park when a transfer is over. One piece at a time: a caller that
//! finds the crew busy (another GPU's transfer) copies on rayon instead.
//!
//! A piece is cut into [`GRAIN`] chunks that every thread (the caller
//! too) claims one by one. `claim` holds the piece's number, its chunk
//! count and its next chunk in one word ([`Claim`]): a thread claims by
//! compare-and-swap, so a thread late for a piece can never claim a chunk
//! of the next one, nor one past the end.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Bytes a thread copies at a time.
const GRAIN: usize = 256 << 10;

/// How long an idle crew thread keeps spinning for the next piece.
const SPIN: Duration = Duration::from_millis(2);

/// A piece's number (24 bits), its chunks (20 bits) and its next
/// unclaimed chunk (20 bits), in one `u64`.
#[derive(Clone, Copy)]
struct Claim(u64);

impl Claim {
    const BITS: u32 = 20;
    const MASK: u64 = (1 << Self::BITS) - 1;
    fn new(piece: u64, chunks: usize) -> Self {
        Claim((piece & 0xff_ffff) << (2 * Self::BITS) | (chunks as u64) << Self::BITS)
    }
    fn piece(self) -> u64 {
        self.0 >> (2 * Self::BITS)
    }
    fn chunks(self) -> usize {
        ((self.0 >> Self::BITS) & Self::MASK) as usize
    }
    fn next(self) -> usize {
        (self.0 & Self::MASK) as usize
    }
}

/// The largest piece the crew takes (larger ones go to rayon).
const MAX_PIECE: usize = (Claim::MASK as usize) * GRAIN;

struct Crew {
    /// Serialises callers: one piece at a time.
    busy: Mutex<()>,
    /// The current piece's [`Claim`].
    claim: AtomicU64,
    /// Chunks of the current piece copied.
    done: AtomicUsize,
    src: AtomicUsize,
    dst: AtomicUsize,
    len: AtomicUsize,
    /// Threads parked, and where they park.
    sleepers: AtomicUsize,
    park: Mutex<()>,
    wake: Condvar,
}

static CREW: OnceLock<&'static Crew> = OnceLock::new();

fn crew() -> &'static Crew {
    CREW.get_or_init(|| {
        let crew: &'static Crew = Box::leak(Box::new(Crew {
            busy: Mutex::new(()),
            claim: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            src: AtomicUsize::new(0),
            dst: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            park: Mutex::new(()),
            wake: Condvar::new(),
        }));
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).saturating_sub(1);
        for i in 0..threads {
            // A crew thread that cannot start leaves the work to the others.
            let _ = std::thread::Builder::new().name(format!("warpsort-copy-{i}")).spawn(move || crew.work());
        }
        crew
    })
}

/// Copies `len` bytes from `src` to `dst` on all cores, with non-temporal
/// stores where the CPU has them.
///
/// # Safety
/// `src` and `dst` hold `len` bytes each and do not overlap.
pub(crate) unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    let crew = crew();
    if len == 0 {
        return;
    }
    if len > MAX_PIECE {
        // SAFETY: the caller's contract.
        return unsafe { rayon_copy(src, dst, len) };
    }
    match crew.busy.try_lock() {
        // SAFETY: the caller's contract.
        Ok(_one) => unsafe { crew.run(src, dst, len) },
        // SAFETY: the caller's contract.
        Err(_) => unsafe { rayon_copy(src, dst, len) },
    }
}

impl Crew {
    /// Publishes a piece, copies chunks of it with the crew, and returns
    /// once every chunk is copied.
    ///
    /// # Safety
    /// As [`copy`]; the caller holds `busy`.
    unsafe fn run(&self, src: *const u8, dst: *mut u8, len: usize) {
        let chunks = len.div_ceil(GRAIN);
        self.src.store(src as usize, Relaxed);
        self.dst.store(dst as usize, Relaxed);
        self.len.store(len, Relaxed);
        self.done.store(0, Relaxed);
        // The previous piece is finished (every chunk done), so no thread
        // holds a claim on it: a new number starts this one.
        let claim = Claim::new(Claim(self.claim.load(Relaxed)).piece() + 1, chunks);
        self.claim.store(claim.0, SeqCst);
        if self.sleepers.load(SeqCst) > 0 {
            let _p = self.park.lock().unwrap_or_else(|e| e.into_inner());
            self.wake.notify_all();
        }
        self.help(claim.piece());
        while self.done.load(Acquire) < chunks {
            std::hint::spin_loop();
        }
    }

    /// Claims and copies chunks of piece `piece` until none is left.
    fn help(&self, piece: u64) {
        loop {
            let c = Claim(self.claim.load(Acquire));
            if c.piece() != piece || c.next() >= c.chunks() {
                return;
            }
            if self.claim.compare_exchange_weak(c.0, c.0 + 1, AcqRel, Relaxed).is_err() {
                continue;
            }
            // Claimed chunk `next` of the piece: it is not finished until
            // this chunk is done, so its fields stay as they are (read now).
            let (src, dst, len) = (self.src.load(Relaxed), self.dst.load(Relaxed), self.len.load(Relaxed));
            let at = c.next() * GRAIN;
            let n = GRAIN.min(len - at);
            // SAFETY: `at + n <= len` bytes of the caller's ranges (`copy`'s
            // contract), which live until every chunk is done; chunks do not
            // overlap, so each byte has one writer.
            let (s, d) = unsafe {
                (
                    std::slice::from_raw_parts((src + at) as *const u8, n),
                    std::slice::from_raw_parts_mut((dst + at) as *mut u8, n),
                )
            };
            super::staging::copy_streaming(s, d);
            self.done.fetch_add(1, Release);
        }
    }

    /// A crew thread: helps with each new piece; spins for [`SPIN`] after
    /// one, then parks until the next.
    fn work(&self) {
        let mut seen = 0;
        loop {
            let mut idle = Instant::now();
            loop {
                let piece = Claim(self.claim.load(Acquire)).piece();
                if piece != seen {
                    seen = piece;
                    self.help(piece);
                    idle = Instant::now();
                } else if idle.elapsed() > SPIN {
                    break;
                } else {
                    std::hint::spin_loop();
                }
            }
            let mut p = self.park.lock().unwrap_or_else(|e| e.into_inner());
            self.sleepers.fetch_add(1, SeqCst);
            while Claim(self.claim.load(SeqCst)).piece() == seen {
                p = self.wake.wait(p).unwrap_or_else(|e| e.into_inner());
            }
            self.sleepers.fetch_sub(1, SeqCst);
        }
    }
}

/// [`copy`] on rayon's threads.
///
/// # Safety
/// As [`copy`].
unsafe fn rayon_copy(src: *const u8, dst: *mut u8, len: usize) {
    use rayon::prelude::*;
    // SAFETY: the caller's contract.
    let (s, d) = unsafe { (std::slice::from_raw_parts(src, len), std::slice::from_raw_parts_mut(dst, len)) };
    d.par_chunks_mut(GRAIN).zip(s.par_chunks(GRAIN)).for_each(|(d, s)| super::staging::copy_streaming(s, d));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_byte_of_every_piece() {
        for len in [0, 1, GRAIN - 1, GRAIN, GRAIN + 1, 5 * GRAIN + 77, 16 << 20] {
            let src: Vec<u8> = (0..len).map(|i| (i * 131 + len) as u8).collect();
            let mut dst = vec![0u8; len];
            // SAFETY: two vectors of `len` bytes.
            unsafe { copy(src.as_ptr(), dst.as_mut_ptr(), len) };
            assert!(dst == src, "{len}");
        }
    }

    #[test]
    fn callers_on_many_threads_each_get_their_bytes() {
        std::thread::scope(|s| {
            for t in 0..4usize {
                s.spawn(move || {
                    for round in 0..50usize {
                        let len = (t + 1) * GRAIN + round * 4099;
                        let src: Vec<u8> = (0..len).map(|i| (i ^ t ^ round) as u8).collect();
                        let mut dst = vec![0u8; len];
                        // SAFETY: two vectors of `len` bytes.
                        unsafe { copy(src.as_ptr(), dst.as_mut_ptr(), len) };
                        assert!(dst == src);
                    }
                });
            }
        });
        // Parked threads wake for the next piece.
        std::thread::sleep(SPIN * 3);
        let src = vec![7u8; 3 * GRAIN];
        let mut dst = vec![0u8; 3 * GRAIN];
        // SAFETY: as above.
        unsafe { copy(src.as_ptr(), dst.as_mut_ptr(), src.len()) };
        assert_eq!(dst, src);
    }
}
