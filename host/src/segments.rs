//! Batched sorts of many equal-length segments (as `torch.sort` along the last
//! dimension): a warp per segment up to 512 items, a block per segment up to
//! 8192.

use cudarc::driver::CudaSlice;
use warpsort_kernels::config::{
    BLOCK_SORT_MAX_TILE, BLOCK_SORT_MIN_TILE, WARP_KERNEL_THREADS, WARP_SIZE, WARP_SORT_KEYS_PER_LANE,
    WARP_SORT_MAX_SEGMENT, WARP_TILE, warp_sort_batch,
};

use crate::error::{Error, Result};
use crate::gpu::{Arg, Gpu, blocks_for};
use crate::items::RawItems;
use crate::key::{Order, Payload, SortKey};

/// Which kernel sorts segments of a given length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKernel {
    /// Several segments per warp: a warp tile of `32 * KEYS_PER_LANE` (256)
    /// items, one segment per aligned `chunk`, most stages inside registers.
    /// The default up to 256 items.
    WarpChunks {
        /// Items per chunk (a power of two, at least the segment length).
        chunk: u32,
    },
    /// One warp per segment (several segments interleaved for short ones),
    /// `32 * keys_per_lane` items in registers; `keys_per_lane = 1` is the
    /// classic one-key-per-lane `shfl.sync.bfly` warp sort.
    Warp {
        /// Items per lane.
        keys_per_lane: u32,
    },
    /// One block per segment, a power-of-two tile in shared memory and registers.
    Block {
        /// Items in the block's tile.
        tile: u32,
    },
}

impl SegmentKernel {
    /// Whether this kernel sorts segments of `len` items.
    pub fn fits(&self, len: usize) -> bool {
        let max = match *self {
            SegmentKernel::WarpChunks { chunk } => chunk.is_power_of_two() && chunk <= WARP_TILE,
            SegmentKernel::Warp { keys_per_lane } => WARP_SORT_KEYS_PER_LANE.contains(&keys_per_lane),
            SegmentKernel::Block { tile } => {
                tile.is_power_of_two() && (BLOCK_SORT_MIN_TILE..=BLOCK_SORT_MAX_TILE).contains(&tile)
            }
        };
        max && len >= 1 && len <= self.capacity()
    }

    /// The longest segment this kernel sorts.
    pub fn capacity(&self) -> usize {
        match *self {
            SegmentKernel::WarpChunks { chunk } => chunk as usize,
            SegmentKernel::Warp { keys_per_lane } => (WARP_SIZE * keys_per_lane) as usize,
            SegmentKernel::Block { tile } => tile as usize,
        }
    }

    /// The kernel for segments of `len` items, or an error past the block sort's limit.
    pub fn for_len(len: usize) -> Result<Self> {
        if len == 0 || len > BLOCK_SORT_MAX_TILE as usize {
            return Err(Error::BadSegment { len, max: BLOCK_SORT_MAX_TILE as usize });
        }
        if len <= WARP_TILE as usize {
            Ok(SegmentKernel::WarpChunks { chunk: len.next_power_of_two() as u32 })
        } else if len <= WARP_SORT_MAX_SEGMENT as usize {
            let k = WARP_SORT_KEYS_PER_LANE.into_iter().find(|k| (WARP_SIZE * k) as usize >= len).unwrap();
            Ok(SegmentKernel::Warp { keys_per_lane: k })
        } else {
            Ok(SegmentKernel::Block { tile: (len.next_power_of_two() as u32).max(BLOCK_SORT_MIN_TILE) })
        }
    }
}

impl Gpu {
    /// Sorts every segment `[i * seg_len, (i + 1) * seg_len)` of `keys`
    /// independently (the last may be shorter).
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut rows = gpu.stream().clone_htod(&[3u32, 1, 2, 9, 8, 7])?;
    /// gpu.sort_segments(&mut rows, 3, Order::Ascending)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&rows)?, [1, 2, 3, 7, 8, 9]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments<K: SortKey>(&self, keys: &mut CudaSlice<K>, seg_len: usize, order: Order) -> Result<()> {
        let items = RawItems::keys(self, keys)?;
        self.sort_segment_items::<K>(&items, seg_len, order, SegmentKernel::for_len(seg_len)?)
    }

    /// [`Gpu::sort_segments`] with a chosen kernel (for benchmarks and
    /// tuning); fails with [`Error::BadSegment`] when it cannot sort `seg_len`.
    pub fn sort_segments_with<K: SortKey>(
        &self,
        keys: &mut CudaSlice<K>,
        seg_len: usize,
        order: Order,
        kernel: SegmentKernel,
    ) -> Result<()> {
        if !kernel.fits(seg_len) {
            return Err(Error::BadSegment { len: seg_len, max: kernel.capacity() });
        }
        let items = RawItems::keys(self, keys)?;
        self.sort_segment_items::<K>(&items, seg_len, order, kernel)
    }

    /// Segmented key-value sort (see [`Gpu::sort_segments`]).
    pub fn sort_segments_pairs<K: SortKey, V: Payload>(
        &self,
        keys: &mut CudaSlice<K>,
        vals: &mut CudaSlice<V>,
        seg_len: usize,
        order: Order,
    ) -> Result<()> {
        if keys.len() != vals.len() {
            return Err(Error::LengthMismatch { keys: keys.len(), values: vals.len() });
        }
        let items = RawItems::pairs(self, keys, vals)?;
        self.sort_segment_items::<K>(&items, seg_len, order, SegmentKernel::for_len(seg_len)?)
    }

    fn sort_segment_items<K: SortKey>(
        &self,
        items: &RawItems,
        seg_len: usize,
        order: Order,
        kernel: SegmentKernel,
    ) -> Result<()> {
        if items.n == 0 {
            return Ok(());
        }
        let segments = items.n.div_ceil(seg_len);
        let [k, v] = items.args();
        self.with_ordered_keys::<K>(items, order, || match kernel {
            SegmentKernel::WarpChunks { chunk } => {
                let per_block = WARP_KERNEL_THREADS / WARP_SIZE * (WARP_TILE / chunk);
                let grid = blocks_for(segments, per_block);
                let args = [k, v, Arg::U64(items.n as u64), Arg::U32(seg_len as u32), Arg::U32(chunk)];
                self.launch(&items.kernel("warp_sort_chunks"), grid, WARP_KERNEL_THREADS, 0, &args)
            }
            SegmentKernel::Warp { keys_per_lane } => {
                let name = items.kernel(&format!("warp_sort{}", WARP_SIZE * keys_per_lane));
                let per_block = WARP_KERNEL_THREADS / WARP_SIZE * warp_sort_batch(keys_per_lane);
                let grid = blocks_for(segments, per_block);
                let [k, v] = items.args();
                self.launch(
                    &name,
                    grid,
                    WARP_KERNEL_THREADS,
                    0,
                    &[k, v, Arg::U64(items.n as u64), Arg::U32(seg_len as u32)],
                )
            }
            SegmentKernel::Block { tile } => self.block_sort(items, items, seg_len, tile as usize),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_smallest_kernel_that_fits() {
        assert_eq!(SegmentKernel::for_len(1).unwrap(), SegmentKernel::WarpChunks { chunk: 1 });
        assert_eq!(SegmentKernel::for_len(33).unwrap(), SegmentKernel::WarpChunks { chunk: 64 });
        assert_eq!(SegmentKernel::for_len(256).unwrap(), SegmentKernel::WarpChunks { chunk: 256 });
        assert!(SegmentKernel::Warp { keys_per_lane: 1 }.fits(32));
        assert!(!SegmentKernel::Warp { keys_per_lane: 1 }.fits(33));
        assert!(!SegmentKernel::WarpChunks { chunk: 48 }.fits(40));
        assert_eq!(SegmentKernel::for_len(512).unwrap(), SegmentKernel::Warp { keys_per_lane: 16 });
        assert_eq!(SegmentKernel::for_len(513).unwrap(), SegmentKernel::Block { tile: 1024 });
        assert_eq!(SegmentKernel::for_len(8192).unwrap(), SegmentKernel::Block { tile: 8192 });
        assert!(matches!(SegmentKernel::for_len(0), Err(Error::BadSegment { .. })));
        assert!(matches!(SegmentKernel::for_len(8193), Err(Error::BadSegment { len: 8193, max: 8192 })));
    }
}
