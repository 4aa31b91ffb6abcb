//! The PTX instructions of [`crate::arch`], emulated on the host (feature
//! `emulate`): kernels written against `arch` run on the CPU, each GPU
//! thread an OS thread, so their logic is tested against a CPU reference
//! without a GPU.
//!
//! [`launch`] runs a grid block after block; a block's threads run at once,
//! with the block's dynamic shared memory, a block barrier
//! ([`sync_block`]) and, per warp of 32 threads, a warp barrier and an
//! exchange through which the shuffles and votes pass their values: each
//! lane writes, the warp meets, each lane reads, the warp meets again. A
//! thread that returns leaves both barriers (as on the GPU, where exited
//! threads no longer hold a `bar.sync` back). What this cannot show:
//! timing, memory coalescing, bank conflicts, and races that a lock-step
//! warp would hide; a warp's lanes here run apart between its barriers, as
//! on Volta and later.

extern crate std;

use core::cell::Cell;
use std::sync::atomic::{
    AtomicU32, AtomicU64, Ordering::AcqRel, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::vec::Vec;

/// Every lane of the warp takes part.
pub const FULL_MASK: u32 = u32::MAX;

const WARP: usize = crate::config::WARP_SIZE as usize;

/// A barrier for a group whose threads may leave it (return) early. The
/// emulated threads far outnumber the cores: a waiter sleeps on the
/// generation word (a futex on Linux) and the thread that completes the
/// group wakes them all at once; none takes a lock on its way out (a lock
/// and condition variable made every woken thread take the lock again in
/// turn, and the system's time was most of a test's).
struct Barrier {
    /// Threads still in the group (high half) and threads waiting (low half).
    state: AtomicU64,
    /// Bumped each time the group meets.
    generation: AtomicU32,
}

impl Barrier {
    fn new(threads: usize) -> Self {
        Barrier { state: AtomicU64::new((threads as u64) << 32), generation: AtomicU32::new(0) }
    }

    /// Opens the barrier: every thread still in the group waits (the
    /// caller saw them all), so none arrives again before the generation
    /// moves, and the count resets alone.
    fn open(&self) {
        self.state.fetch_and(!0xFFFF_FFFF, AcqRel);
        self.generation.fetch_add(1, Release);
        wake_all(&self.generation);
    }

    fn wait(&self) {
        // Read before arriving: the generation cannot move before then.
        let generation = self.generation.load(Acquire);
        let s = self.state.fetch_add(1, AcqRel) + 1;
        if s & 0xFFFF_FFFF == s >> 32 {
            return self.open();
        }
        while self.generation.load(Acquire) == generation {
            sleep_while(&self.generation, generation);
        }
    }

    fn leave(&self) {
        let s = self.state.fetch_sub(1 << 32, AcqRel) - (1 << 32);
        let waiting = s & 0xFFFF_FFFF;
        if waiting > 0 && waiting == s >> 32 {
            self.open();
        }
    }
}

/// Sleeps while `word` holds `value` (or until woken, or spuriously).
#[cfg(target_os = "linux")]
fn sleep_while(word: &AtomicU32, value: u32) {
    // SAFETY: FUTEX_WAIT reads the live word it is given and sleeps while
    // it holds `value`; no timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            value,
            core::ptr::null::<libc::timespec>(),
        )
    };
}

/// Wakes every thread asleep on `word`.
#[cfg(target_os = "linux")]
fn wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only wakes the threads waiting on the word.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX) };
}

#[cfg(not(target_os = "linux"))]
fn sleep_while(_: &AtomicU32, _: u32) {
    std::thread::yield_now();
}

#[cfg(not(target_os = "linux"))]
fn wake_all(_: &AtomicU32) {}

/// A warp's meeting place: its barrier and two sets of one word a lane,
/// taken in turn by its exchanges.
struct Warp {
    barrier: Barrier,
    words: [[AtomicU32; WARP]; 2],
}

/// One block being run.
struct Block {
    idx: u32,
    dim: u32,
    grid: u32,
    /// Dynamic shared memory (8-byte aligned).
    smem: *mut u64,
    barrier: Barrier,
    warps: Vec<Warp>,
    /// The votes of [`sync_block_or`]: call `k` (each thread counts its
    /// own) ORs into slot `k % 3` and, past the barrier, clears slot
    /// `(k + 2) % 3`, which every thread read before this barrier and none
    /// writes before the next.
    votes: [AtomicU32; 3],
}

// SAFETY: the shared memory pointer is used as the GPU uses it: by the
// block's threads, ordered by the barriers (or atomics) the kernel uses.
unsafe impl Sync for Block {}

std::thread_local! {
    /// The block and thread index this OS thread emulates.
    static THREAD: Cell<Option<(*const Block, u32)>> = const { Cell::new(None) };
    /// This thread's calls of [`sync_block_or`] so far.
    static VOTES: Cell<usize> = const { Cell::new(0) };
    /// This thread's exchanges with its warp so far.
    static EXCHANGES: Cell<usize> = const { Cell::new(0) };
}

fn current() -> (&'static Block, u32) {
    let (b, t) = THREAD.with(|c| c.get()).expect("an arch instruction outside an emulated launch");
    // SAFETY: the block outlives every thread `launch` runs for it.
    (unsafe { &*b }, t)
}

/// Leaves the block's and the warp's barriers when the thread returns (or
/// panics), so the others do not wait for it.
struct Leave(*const Block, u32);

impl Drop for Leave {
    fn drop(&mut self) {
        // SAFETY: as in `current`.
        let b = unsafe { &*self.0 };
        b.barrier.leave();
        b.warps[self.1 as usize / WARP].barrier.leave();
        THREAD.with(|c| c.set(None));
    }
}

/// Runs `kernel` on a grid of `grid` blocks of `block` threads, each block
/// with `smem_bytes` of dynamic shared memory (zeroed), as a launch would;
/// returns when every thread has returned. A panic in a thread (a trap)
/// comes back as a panic here.
pub fn launch(grid: u32, block: u32, smem_bytes: usize, kernel: impl Fn() + Sync) {
    assert!((1..=1024).contains(&block), "1 to 1024 threads a block");
    for idx in 0..grid {
        let mut smem = std::vec![0u64; smem_bytes.div_ceil(8).max(1)];
        let warps = (0..block as usize).step_by(WARP).map(|w| (block as usize - w).min(WARP)).collect::<Vec<_>>();
        let b = Block {
            idx,
            dim: block,
            grid,
            smem: smem.as_mut_ptr(),
            barrier: Barrier::new(block as usize),
            warps: warps.into_iter().map(|n| Warp { barrier: Barrier::new(n), words: Default::default() }).collect(),
            votes: Default::default(),
        };
        let (b, kernel) = (&b, &kernel);
        std::thread::scope(|s| {
            for t in 0..block {
                let at = BlockRef(b as *const Block);
                std::thread::Builder::new()
                    .stack_size(1 << 20)
                    .spawn_scoped(s, move || {
                        let at = at;
                        THREAD.with(|c| c.set(Some((at.0, t))));
                        VOTES.with(|c| c.set(0));
                        EXCHANGES.with(|c| c.set(0));
                        let _leave = Leave(at.0, t);
                        kernel();
                    })
                    .expect("an OS thread for an emulated GPU thread");
            }
        });
        drop(smem);
    }
}

/// A block's address, sent to its threads.
#[derive(Clone, Copy)]
struct BlockRef(*const Block);
// SAFETY: see `Block`.
unsafe impl Send for BlockRef {}

/// The lanes' words after each lane gave `word`: every lane of the warp
/// calls it at the same point. Exchange `k` writes and reads set `k % 2`
/// around one meeting: a lane that goes on to exchange `k + 1` writes the
/// other set, and cannot reach `k + 2` (this set again) before every lane
/// has met at `k + 1`, after its read of `k`.
fn exchange(word: u32) -> [u32; WARP] {
    let (b, t) = current();
    let w = &b.warps[t as usize / WARP];
    let set = &w.words[EXCHANGES.with(|c| c.replace(c.get() + 1)) % 2];
    set[t as usize % WARP].store(word, Relaxed);
    w.barrier.wait();
    core::array::from_fn(|i| set[i].load(Relaxed))
}

/// `shfl.sync.bfly`: the value of lane `lane ^ lane_mask`.
pub fn shfl_bfly(val: u32, lane_mask: u32) -> u32 {
    let lane = lane_id();
    exchange(val)[((lane ^ lane_mask) & 31) as usize]
}

/// `shfl.sync.idx`: the value of lane `src`.
pub fn shfl_idx(val: u32, src: u32) -> u32 {
    exchange(val)[(src & 31) as usize]
}

/// `shfl.sync.up`: the value of lane `lane - delta`, or this lane's own
/// below lane `delta`.
pub fn shfl_up(val: u32, delta: u32) -> u32 {
    let lane = lane_id();
    let all = exchange(val);
    if lane >= delta { all[(lane - delta) as usize] } else { val }
}

/// `shfl.sync.down`: the value of lane `lane + delta`, or this lane's own
/// past lane 31.
pub fn shfl_down(val: u32, delta: u32) -> u32 {
    let lane = lane_id();
    let all = exchange(val);
    if lane + delta < 32 { all[(lane + delta) as usize] } else { val }
}

/// `a > b` for 64-bit words (on the GPU a compare LLVM cannot turn into
/// `umin`/`umax`).
pub fn gt_u64(a: u64, b: u64) -> bool {
    a > b
}

/// `vote.ballot.sync`: bit `i` set where lane `i`'s `pred` holds.
pub fn ballot(pred: bool) -> u32 {
    exchange(pred as u32).iter().enumerate().fold(0, |m, (i, &p)| m | (p << i))
}

/// The lanes that agree with this one on the bit `bit` of `word`.
pub fn agree(word: u32, bit: u32) -> u32 {
    let set = word & bit != 0;
    let lanes = ballot(set);
    if set { lanes } else { !lanes }
}

/// `vote.any.sync`.
pub fn any(pred: bool) -> bool {
    ballot(pred) != 0
}

/// `vote.all.sync` (over the lanes present).
pub fn all(pred: bool) -> bool {
    let (b, t) = current();
    let lanes = (b.dim as usize - t as usize / WARP * WARP).min(WARP);
    ballot(pred).count_ones() as usize == lanes
}

/// `bar.warp.sync`.
pub fn sync_warp() {
    let (b, t) = current();
    b.warps[t as usize / WARP].barrier.wait();
}

/// Programmatic dependent launch (`griddepcontrol`): the emulator runs
/// launches one after another, so there is nothing to wait for.
pub fn chain_launch() {}

/// `bar.sync 0`.
pub fn sync_block() {
    current().0.barrier.wait();
}

/// `bar.red.or.pred`: the block barrier, and whether any thread's `pred`
/// holds.
pub fn sync_block_or(pred: bool) -> bool {
    let b = current().0;
    let k = VOTES.with(|c| c.replace(c.get() + 1));
    b.votes[k % 3].fetch_or(pred as u32, Relaxed);
    b.barrier.wait();
    let any = b.votes[k % 3].load(Relaxed) != 0;
    b.votes[(k + 2) % 3].store(0, Relaxed);
    any
}

/// `%laneid`.
pub fn lane_id() -> u32 {
    current().1 % WARP as u32
}

/// `%tid.x`.
pub fn thread_idx() -> u32 {
    current().1
}

/// `%ntid.x`.
pub fn block_dim() -> u32 {
    current().0.dim
}

/// `%ctaid.x`.
pub fn block_idx() -> u32 {
    current().0.idx
}

/// `%nctaid.x`.
pub fn grid_dim() -> u32 {
    current().0.grid
}

/// Global thread index over a 1-D grid.
pub fn global_thread() -> usize {
    block_idx() as usize * block_dim() as usize + thread_idx() as usize
}

/// Threads in the whole 1-D grid.
pub fn grid_threads() -> usize {
    grid_dim() as usize * block_dim() as usize
}

/// The block's dynamic shared memory.
pub fn dynamic_smem<T>() -> *mut T {
    current().0.smem.cast()
}

/// Stops the kernel: a panic in the emulated thread.
pub fn trap() -> ! {
    panic!("trap")
}

/// Global warp index over a 1-D grid.
pub fn global_warp() -> usize {
    global_thread() / WARP
}

/// The four words at `p` (`ld.global.v4.u32` on the GPU).
///
/// # Safety
/// `p` is a 16-byte-aligned address of four readable words.
pub unsafe fn ld_global_v4_u32(p: *const u32) -> [u32; 4] {
    // SAFETY: the caller's contract.
    unsafe { core::array::from_fn(|i| *p.add(i)) }
}

/// The two doublewords at `p` (one 16-byte load on the GPU).
///
/// # Safety
/// `p` is a 16-byte-aligned address of two readable doublewords.
pub unsafe fn ld_global_v2_u64(p: *const u64) -> [u64; 2] {
    // SAFETY: the caller's contract.
    unsafe { [*p, *p.add(1)] }
}
