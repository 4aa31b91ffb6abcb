//! The emulator of the PTX instructions (feature `emulate`): thread and
//! block numbers, shared memory, the block barrier, shuffles and votes
//! against what the GPU defines, and barriers that threads which returned
//! early no longer hold back.
#![cfg(feature = "emulate")]

use std::sync::Mutex;

use warpsort_kernels::arch::{
    all, any, ballot, block_dim, block_idx, dynamic_smem, grid_dim, lane_id, launch, shfl_bfly, shfl_down, shfl_idx,
    shfl_up, sync_block, thread_idx,
};

#[test]
fn lanes_exchange_as_the_gpu_defines() {
    // Per thread of 2 blocks of 64: (block, thread, bfly, up, down, idx, ballot, any, all).
    let seen = Mutex::new(Vec::new());
    launch(2, 64, 0, || {
        let (t, l) = (thread_idx(), lane_id());
        let v = 1000 * block_idx() + t;
        let row = [
            block_idx(),
            t,
            shfl_bfly(v, 5),
            shfl_up(v, 3),
            shfl_down(v, 4),
            shfl_idx(v, 7),
            ballot(l % 3 == 0),
            any(l == 31) as u32,
            all(l < 32) as u32,
            (grid_dim() * block_dim()),
        ];
        seen.lock().unwrap().push(row);
    });
    let rows = seen.into_inner().unwrap();
    assert_eq!(rows.len(), 128);
    let thirds = (0..32).filter(|l| l % 3 == 0).fold(0u32, |m, l| m | 1 << l);
    for r in rows {
        let [b, t, bfly, up, down, idx, votes, some, every, threads] = r;
        let (l, warp) = (t % 32, 1000 * b + t / 32 * 32);
        assert_eq!(bfly, warp + (l ^ 5), "bfly of thread {t}");
        assert_eq!(up, if l >= 3 { warp + l - 3 } else { warp + l }, "up of thread {t}");
        assert_eq!(down, if l + 4 < 32 { warp + l + 4 } else { warp + l }, "down of thread {t}");
        assert_eq!(idx, warp + 7, "idx of thread {t}");
        assert_eq!((votes, some, every, threads), (thirds, 1, 1, 128), "votes of thread {t}");
    }
}

#[test]
fn shared_memory_and_the_block_barrier() {
    // Each thread writes its slot, meets the block, reads its neighbour's;
    // half the threads then return, and the others still meet twice.
    let sums = Mutex::new(0u64);
    launch(3, 96, 96 * 4, || {
        let s = dynamic_smem::<u32>();
        let t = thread_idx();
        // SAFETY: 96 slots, one a thread.
        unsafe { *s.add(t as usize) = t + 1 };
        sync_block();
        // SAFETY: as above.
        let next = unsafe { *s.add(((t + 1) % 96) as usize) };
        assert_eq!(next, (t + 1) % 96 + 1);
        if t.is_multiple_of(2) {
            return;
        }
        sync_block();
        sync_block();
        *sums.lock().unwrap() += next as u64;
    });
    let odd: u64 = (0..96u64).filter(|t| !t.is_multiple_of(2)).map(|t| (t + 1) % 96 + 1).sum();
    assert_eq!(sums.into_inner().unwrap(), 3 * odd);
}
