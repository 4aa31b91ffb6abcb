//! Kernels that expose each warp primitive to the GPU tests, one warp per 32
//! inputs, so that every primitive is checked against a CPU reference.

use crate::arch::{global_thread, thread_idx};
use crate::item::Pair;
use crate::network::cmpx;
use crate::warp;

/// Shuffle op codes of `probe_shfl_*` (host and device share them).
pub mod op {
    /// `shfl.sync.idx` from lane `arg`.
    pub const IDX: u32 = 0;
    /// `shfl.sync.up` by `arg`.
    pub const UP: u32 = 1;
    /// `shfl.sync.down` by `arg`.
    pub const DOWN: u32 = 2;
    /// `shfl.sync.bfly` with mask `arg`.
    pub const XOR: u32 = 3;
}

#[inline(always)]
fn shuffle<T: crate::item::Word>(x: T, op: u32, arg: u32) -> T {
    match op {
        op::IDX => warp::shfl_idx(x, arg),
        op::UP => warp::shfl_up(x, arg),
        op::DOWN => warp::shfl_down(x, arg),
        _ => warp::shfl_bfly(x, arg),
    }
}

/// `out[i] = shuffle(inp[i])` for 32-bit words.
#[unsafe(export_name = concat!(crate::kernel_name!(probe_shfl), "_u32"))]
pub unsafe extern "ptx-kernel" fn probe_shfl_u32(inp: *const u32, out: *mut u32, op: u32, arg: u32) {
    let i = global_thread();
    // SAFETY: the host launches one thread per element.
    unsafe { *out.add(i) = shuffle(*inp.add(i), op, arg) };
}

/// `out[i] = shuffle(inp[i])` for 64-bit words.
#[unsafe(export_name = concat!(crate::kernel_name!(probe_shfl), "_u64"))]
pub unsafe extern "ptx-kernel" fn probe_shfl_u64(inp: *const u64, out: *mut u64, op: u32, arg: u32) {
    let i = global_thread();
    // SAFETY: the host launches one thread per element.
    unsafe { *out.add(i) = shuffle(*inp.add(i), op, arg) };
}

/// Per lane, for `pred = inp[i] != 0`: `[any, all, ballot, popc, lane, warp]`.
#[unsafe(export_name = crate::kernel_name!(probe_vote))]
pub unsafe extern "ptx-kernel" fn probe_vote(inp: *const u32, out: *mut u32) {
    let i = global_thread();
    // SAFETY: one thread per input, six outputs each.
    unsafe {
        let pred = *inp.add(i) != 0;
        let o = out.add(6 * i);
        *o = warp::any(pred) as u32;
        *o.add(1) = warp::all(pred) as u32;
        *o.add(2) = warp::ballot(pred);
        *o.add(3) = warp::popc(pred);
        *o.add(4) = warp::lane_id();
        *o.add(5) = warp::warp_id();
    }
    let _ = thread_idx();
}

/// Per lane: `[sum, min, max, inclusive scan, exclusive scan, u64 sum low, high]`.
#[unsafe(export_name = crate::kernel_name!(probe_reduce_scan))]
pub unsafe extern "ptx-kernel" fn probe_reduce_scan(inp: *const u32, out: *mut u32) {
    let i = global_thread();
    // SAFETY: one thread per input, seven outputs each.
    unsafe {
        let x = *inp.add(i);
        let o = out.add(7 * i);
        *o = warp::reduce_sum(x);
        *o.add(1) = warp::reduce_min(x);
        *o.add(2) = warp::reduce_max(x);
        *o.add(3) = warp::inclusive_scan(x);
        *o.add(4) = warp::exclusive_scan(x);
        let wide = warp::reduce_sum_u64((x as u64) << 20);
        *o.add(5) = wide as u32;
        *o.add(6) = (wide >> 32) as u32;
    }
}

/// Ballot compaction of the odd inputs of each warp into `out[warp * 32 ..]`,
/// their count into `counts[warp]`.
#[unsafe(export_name = crate::kernel_name!(probe_compact))]
pub unsafe extern "ptx-kernel" fn probe_compact(inp: *const u32, out: *mut u32, counts: *mut u32) {
    let i = global_thread();
    let w = i / 32;
    // SAFETY: one thread per input; slots stay inside the warp's 32 outputs.
    unsafe {
        let x = *inp.add(i);
        let keep = x & 1 == 1;
        let (slot, count) = warp::compact_slot(keep);
        if keep {
            *out.add(w * 32 + slot as usize) = x;
        }
        if warp::lane_id() == 0 {
            *counts.add(w) = count;
        }
    }
}

/// Compare-exchange of `(a[i], av[i])` and `(b[i], bv[i])` key-value pairs.
#[unsafe(export_name = crate::kernel_name!(probe_cmpx))]
pub unsafe extern "ptx-kernel" fn probe_cmpx(a: *mut u32, av: *mut u32, b: *mut u32, bv: *mut u32) {
    let i = global_thread();
    // SAFETY: one thread per pair.
    unsafe {
        let mut x = Pair { k: *a.add(i), v: *av.add(i) };
        let mut y = Pair { k: *b.add(i), v: *bv.add(i) };
        cmpx(&mut x, &mut y);
        (*a.add(i), *av.add(i), *b.add(i), *bv.add(i)) = (x.k, x.v, y.k, y.v);
    }
}
