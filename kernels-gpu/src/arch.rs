//! The PTX instructions warpsort uses, each behind a safe wrapper.
//!
//! Everything here is a thin layer over `llvm.nvvm.*` intrinsics and
//! `core::arch::nvptx`; the rest of the crate never names an intrinsic.

use core::arch::nvptx;

/// Every lane of the warp takes part.
pub const FULL_MASK: u32 = u32::MAX;

#[allow(improper_ctypes)]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_sync_bfly_i32(mask: u32, val: u32, lane_mask: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_sync_idx_i32(mask: u32, val: u32, src_lane: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_sync_up_i32(mask: u32, val: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_sync_down_i32(mask: u32, val: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot_sync(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.vote.any.sync"]
    fn vote_any_sync(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.all.sync"]
    fn vote_all_sync(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
    #[link_name = "llvm.nvvm.barrier0.or"]
    fn barrier0_or(pred: i32) -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.laneid"]
    fn read_laneid() -> u32;
}

// `c` operand of shfl.sync: 0x1f clamps bfly/idx/down at lane 31; up clamps at 0.
const CLAMP_HIGH: u32 = 0x1f;
const CLAMP_LOW: u32 = 0;

/// `shfl.sync.bfly`: the value of lane `lane ^ lane_mask`.
#[inline(always)]
pub fn shfl_bfly(val: u32, lane_mask: u32) -> u32 {
    // SAFETY: all 32 lanes execute every call site of this crate's shuffles
    // convergently (no divergent control flow around them), as FULL_MASK requires.
    unsafe { shfl_sync_bfly_i32(FULL_MASK, val, lane_mask, CLAMP_HIGH) }
}

/// `shfl.sync.idx`: the value of lane `src`.
#[inline(always)]
pub fn shfl_idx(val: u32, src: u32) -> u32 {
    // SAFETY: as for `shfl_bfly`.
    unsafe { shfl_sync_idx_i32(FULL_MASK, val, src, CLAMP_HIGH) }
}

/// `shfl.sync.up`: the value of lane `lane - delta` (own value below `delta`).
#[inline(always)]
pub fn shfl_up(val: u32, delta: u32) -> u32 {
    // SAFETY: as for `shfl_bfly`.
    unsafe { shfl_sync_up_i32(FULL_MASK, val, delta, CLAMP_LOW) }
}

/// `shfl.sync.down`: the value of lane `lane + delta` (own value past lane 31).
#[inline(always)]
pub fn shfl_down(val: u32, delta: u32) -> u32 {
    // SAFETY: as for `shfl_bfly`.
    unsafe { shfl_sync_down_i32(FULL_MASK, val, delta, CLAMP_HIGH) }
}

/// `vote.sync.ballot.b32`: bit `i` set when lane `i`'s predicate holds.
#[inline(always)]
pub fn ballot(pred: bool) -> u32 {
    // SAFETY: called convergently by the full warp.
    unsafe { vote_ballot_sync(FULL_MASK, pred) }
}

/// The lanes that agree with this one on the bit `bit` (a one-bit mask) of
/// `word`: `vote.sync.ballot` of the bit, negated where this lane's bit is
/// clear; one instruction each for the test, the vote and the negation
/// (LLVM's lowering of the same in Rust took twice as many).
#[inline(always)]
pub fn agree(word: u32, bit: u32) -> u32 {
    let lanes: u32;
    // SAFETY: called convergently by the full warp; registers only.
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred p; .reg .b32 t; and.b32 t, {w}, {b}; setp.ne.u32 p, t, 0; vote.sync.ballot.b32 {l}, p, -1; @!p not.b32 {l}, {l}; }}",
            w = in(reg32) word,
            b = in(reg32) bit,
            l = out(reg32) lanes,
            options(nostack, preserves_flags),
        )
    };
    lanes
}

/// `prmt.b32`: byte `j` of the result is byte `(sel >> 4 j) & 7` of the
/// eight bytes of `b:a` (`a` the low four), for `j` below 4.
#[inline(always)]
pub fn prmt(a: u32, b: u32, sel: u32) -> u32 {
    let d: u32;
    // SAFETY: registers only.
    unsafe {
        core::arch::asm!(
            "prmt.b32 {d}, {a}, {b}, {s};",
            d = out(reg32) d,
            a = in(reg32) a,
            b = in(reg32) b,
            s = in(reg32) sel,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    d
}

/// `a > b` for 64-bit words, as one `setp.gt.u64` that LLVM cannot see
/// through. Written as `a > b`, a choice on it becomes `umin`/`umax`, and
/// Hopper has no 64-bit `IMNMX`: each of the pair is a compare and two
/// selects again, so a compare-exchange compared twice.
#[inline(always)]
pub fn gt_u64(a: u64, b: u64) -> bool {
    let r: u32;
    // SAFETY: registers only.
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred p; setp.gt.u64 p, {a}, {b}; selp.u32 {r}, 1, 0, p; }}",
            r = out(reg32) r,
            a = in(reg64) a,
            b = in(reg64) b,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    r != 0
}

/// `vote.sync.any.pred`.
#[inline(always)]
pub fn any(pred: bool) -> bool {
    // SAFETY: called convergently by the full warp.
    unsafe { vote_any_sync(FULL_MASK, pred) }
}

/// `vote.sync.all.pred`.
#[inline(always)]
pub fn all(pred: bool) -> bool {
    // SAFETY: called convergently by the full warp.
    unsafe { vote_all_sync(FULL_MASK, pred) }
}

/// `bar.warp.sync`: orders shared-memory accesses among the lanes of a warp.
/// Since Volta a warp's lanes may run apart, so the paper's "no barrier inside a
/// warp" becomes this one-instruction warp barrier instead of `bar.sync`.
#[inline(always)]
pub fn sync_warp() {
    // SAFETY: called convergently by the full warp.
    unsafe { bar_warp_sync(FULL_MASK) }
}

/// `bar.sync 0`: the block barrier.
#[inline(always)]
pub fn sync_block() {
    // SAFETY: every call site is reached by all threads of the block.
    unsafe { nvptx::_syncthreads() }
}

/// `bar.red.or.pred`: the block barrier, and whether any thread's `pred`
/// holds, in every thread.
#[inline(always)]
pub fn sync_block_or(pred: bool) -> bool {
    // SAFETY: as for `sync_block`.
    unsafe { barrier0_or(pred as i32) != 0 }
}

/// `%laneid`.
#[inline(always)]
pub fn lane_id() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { read_laneid() }
}

/// `%tid.x`.
#[inline(always)]
pub fn thread_idx() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_thread_idx_x() as u32 }
}

/// `%ntid.x`.
#[inline(always)]
pub fn block_dim() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_block_dim_x() as u32 }
}

/// `%ctaid.x`.
#[inline(always)]
pub fn block_idx() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_block_idx_x() as u32 }
}

/// `%nctaid.x`.
#[inline(always)]
pub fn grid_dim() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

/// Global thread index over a 1-D grid, 64-bit.
#[inline(always)]
pub fn global_thread() -> usize {
    block_idx() as usize * block_dim() as usize + thread_idx() as usize
}

/// Threads in the whole 1-D grid, for grid-stride loops.
#[inline(always)]
pub fn grid_threads() -> usize {
    grid_dim() as usize * block_dim() as usize
}

/// Global warp index over a 1-D grid.
#[inline(always)]
pub fn global_warp() -> usize {
    global_thread() / crate::config::WARP_SIZE as usize
}

/// The block's dynamic shared memory (`extern .shared` array sized at launch).
#[inline(always)]
pub fn dynamic_smem<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}

/// Stops the kernel: the launch fails with an illegal-instruction error.
#[inline(always)]
pub fn trap() -> ! {
    core::intrinsics::abort()
}

/// `ld.global.v4.u32`: the four words at `p`, one 16-byte load. Written as
/// inline PTX because LLVM, given an aligned vector path beside a scalar
/// fallback, hoisted the scalar loads the two shared and lowered the vector
/// path to scalars too.
///
/// # Safety
/// `p` is a 16-byte-aligned address of four readable words in global memory.
#[inline(always)]
pub unsafe fn ld_global_v4_u32(p: *const u32) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller's contract; the load reads memory only.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {p}; ld.global.v4.u32 {{{a}, {b}, {c}, {d}}}, [g]; }}",
            p = in(reg64) p,
            a = out(reg32) a,
            b = out(reg32) b,
            c = out(reg32) c,
            d = out(reg32) d,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    [a, b, c, d]
}

/// The two doublewords at `p`, one 16-byte load: [`ld_global_v4_u32`]'s
/// words joined in pairs (little-endian halves).
///
/// # Safety
/// `p` is a 16-byte-aligned address of two readable doublewords in global memory.
#[inline(always)]
pub unsafe fn ld_global_v2_u64(p: *const u64) -> [u64; 2] {
    // SAFETY: the same 16 bytes, the caller's contract.
    let [a, b, c, d] = unsafe { ld_global_v4_u32(p.cast()) };
    [a as u64 | (b as u64) << 32, c as u64 | (d as u64) << 32]
}

/// The shared-state-space address of `p`, a generic pointer into the
/// block's shared memory (`cvta.to.shared`): 32 bits, so that a run of
/// addresses costs one 32-bit add each, not a 64-bit generic pointer and a
/// conversion per access.
#[inline(always)]
#[allow(clippy::pointers_in_nomem_asm_block, reason = "converts the address; reads and writes nothing")]
pub fn shared_addr<T>(p: *mut T) -> u32 {
    let a: u32;
    // SAFETY: an address conversion only; nothing is accessed.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; cvt.u32.u64 {a}, s; }}",
            a = out(reg32) a,
            p = in(reg64) p,
            options(pure, nomem, nostack),
        )
    };
    a
}

/// `cp.async.ca.shared.global` (sm_80 on): starts copying the `T` at global
/// `src` to shared address `dst` ([`shared_addr`]) without passing through
/// registers, so a thread can keep all of a tile's loads in flight at no
/// register cost. `T` is 0 (no copy), 4 or 8 bytes. [`cp_async_wait_all`]
/// waits for this thread's copies.
///
/// # Safety
/// `src` is a readable, aligned `T` in global memory and `dst` a writable,
/// aligned `T` in shared memory that nothing else touches until the wait.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn cp_async<T: Copy>(dst: u32, src: *const T) {
    macro_rules! copy {
        ($bytes:literal) => {
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    concat!(
                        "{{ .reg .u64 g; cvta.to.global.u64 g, {p}; ",
                        "cp.async.ca.shared.global [{d}], [g], ", $bytes, "; }}"
                    ),
                    d = in(reg32) dst,
                    p = in(reg64) src,
                    options(nostack, preserves_flags),
                )
            }
        };
    }
    const { assert!(matches!(core::mem::size_of::<T>(), 0 | 4 | 8), "cp.async copies 4 or 8 bytes here") };
    match core::mem::size_of::<T>() {
        4 => copy!(4),
        8 => copy!(8),
        _ => {}
    }
}

/// `cp.async.wait_all`: this thread's [`cp_async`] copies have landed in
/// shared memory (a barrier then shows them to the block).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub fn cp_async_wait_all() {
    // SAFETY: waits only; no memory is touched.
    unsafe { core::arch::asm!("cp.async.wait_all;", options(nostack, preserves_flags)) }
}

/// Programmatic dependent launch (sm_90 on; nothing before): lets the next
/// kernel of the stream, when the host launched it with programmatic stream
/// serialization, place its blocks from now on
/// (`griddepcontrol.launch_dependents`), then waits until the kernels this
/// one depends on have completed and their writes are visible
/// (`griddepcontrol.wait`; at once for a kernel launched without it). The
/// merge sort's kernels call it first thing, so that each launch's latency
/// hides behind the previous kernel's last blocks.
#[inline(always)]
pub fn chain_launch() {
    #[cfg(target_feature = "sm_90")]
    // SAFETY: control of the launch order only; the wait orders this
    // thread's later memory accesses after the previous grids' writes (no
    // `nomem`: the compiler moves no access across it).
    unsafe {
        core::arch::asm!("griddepcontrol.launch_dependents;", "griddepcontrol.wait;", options(nostack, preserves_flags))
    }
}
