//! Segmented sorts: many equal-length rows (as `torch.sort` along the last
//! dimension: a warp per segment up to 512 items, a block per segment up to
//! 8192), and variable-length segments given by offsets (as CUB's
//! `DeviceSegmentedSort`: each segment by the kernel its length needs,
//! several short segments per warp, a block per medium one, GPU-Warpsort's
//! merge sort for long ones); and the segmented checks on the GPU.

use cudarc::driver::CudaSlice;
use warpsort_kernels::config::{
    BLOCK_SORT_MAX_TILE, BLOCK_SORT_MIN_TILE, ELEMENTWISE_THREADS, KEYS_PER_LANE, SEGMENT_CLASS_CHUNKS,
    SEGMENT_CLASS_LONG, SEGMENT_CLASS_WARP, SEGMENT_CLASSES, SEGMENT_COUNTERS, SEGMENT_FIRST, SEGMENT_LAST,
    WARP_KERNEL_THREADS, WARP_SIZE, WARP_SORT_KEYS_PER_LANE, WARP_SORT_MAX_SEGMENT, WARP_TILE, segment_class_capacity,
    segment_lists_bound, warp_sort_batch,
};

use crate::error::{Error, Result};
use crate::gpu::{Arg, DevPtr, Gpu, blocks_for};
use crate::items::RawItems;
use crate::key::{Order, Payload, SortKey};
use crate::sort::{NO_SAMPLES, SortOptions};
use crate::verify::Check;

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
        if items.key_bytes == 2 {
            // 16-bit keys sort as 32-bit patterns already in order.
            let m = K::MODE | order.mode();
            return self.with_scratch(None, Self::wide_bytes(items.n), |wide| {
                self.on_wide_keys(items, m, wide, |w| {
                    self.sort_segment_items::<u32>(w, seg_len, Order::Ascending, kernel)
                })
            });
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
            SegmentKernel::Block { tile } => self.block_sort(items, items, seg_len, tile as usize, NO_SAMPLES),
        })
    }
}

/// How a device array is cut into segments, for [`Gpu::check_segments`].
#[derive(Clone, Copy)]
pub enum Segments<'a> {
    /// Rows of this many items (the last may be shorter), as
    /// [`Gpu::sort_segments`] sorts them.
    Rows(usize),
    /// Segment `s` is `[offsets[s], offsets[s + 1])`, as
    /// [`Gpu::sort_segments_by_offsets`] sorts them.
    Offsets(&'a CudaSlice<u32>),
}

/// The segments of an offsets array grouped by size class
/// (`config::segment_class`): how many of each, and their lists on the device.
struct OffsetPlan {
    /// Segments per class (class 0, of 0 or 1 items, is never sorted).
    counts: [usize; SEGMENT_CLASSES],
    /// Where each class's list starts in `lists`.
    starts: [usize; SEGMENT_CLASSES],
    /// The device address of every class's list of segments, as
    /// `start | end << 32` (inside temporary storage).
    lists: DevPtr,
    /// The long segments as (start, length), for the full merge sort.
    long: Vec<(usize, usize)>,
}

/// What is wrong with offsets (`None`: nothing), from their first and last
/// values, the first descent `(i, offsets[i], offsets[i + 1])` if any, and `n`.
fn offsets_problem(first: u32, last: u32, descent: Option<(usize, u32, u32)>, segs: usize, n: usize) -> Option<String> {
    if first != 0 {
        return Some(format!("offsets[0] is {first}, not 0"));
    }
    if let Some((i, a, b)) = descent {
        return Some(format!("they decrease at offsets[{i}] = {a} > offsets[{}] = {b}", i + 1));
    }
    if last as usize != n {
        return Some(format!("the last, offsets[{segs}], is {last} but there are {n} keys"));
    }
    None
}

/// Checks offsets on the host (the contract of [`Gpu::sort_segments_by_offsets`]).
fn check_host_offsets(offsets: &[u32], n: usize) -> Result<()> {
    let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) else {
        return Err(no_offsets());
    };
    if n > u32::MAX as usize {
        return Err(Error::TooLong { len: n, max: u32::MAX as usize });
    }
    let descent = offsets.windows(2).position(|w| w[0] > w[1]).map(|i| (i, offsets[i], offsets[i + 1]));
    match offsets_problem(first, last, descent, offsets.len() - 1, n) {
        Some(problem) => Err(Error::BadOffsets { problem }),
        None => Ok(()),
    }
}

/// The checks that need no offset's value: at least one, and `n` and the
/// segments within `u32`.
fn offsets_shape(offsets: &CudaSlice<u32>, n: usize) -> Result<()> {
    if offsets.is_empty() {
        return Err(no_offsets());
    }
    let max = u32::MAX as usize;
    match (n > max, offsets.len() > max) {
        (true, _) => Err(Error::TooLong { len: n, max }),
        (_, true) => Err(Error::TooLong { len: offsets.len(), max }),
        _ => Ok(()),
    }
}

fn no_offsets() -> Error {
    Error::BadOffsets { problem: "the offsets array is empty (no segments at all is [0])".into() }
}

impl Gpu {
    /// Sorts every segment `keys[offsets[s]..offsets[s + 1]]` independently,
    /// as CUB's `DeviceSegmentedSort` with `d_begin_offsets = offsets` and
    /// `d_end_offsets = offsets + 1`.
    ///
    /// The offsets (`segments + 1` of them, `u32`) must start at 0, never
    /// decrease, and end at `keys.len()`: the segments tile the keys. Empty
    /// and one-item segments are fine. Otherwise the call fails with
    /// [`Error::BadOffsets`] before touching the keys (the offsets are checked
    /// on the GPU; a few words come back). Each segment is sorted by the
    /// kernel its length needs: up to 256 items several segments per warp in
    /// registers, up to 512 a warp each, up to 8192 a block each in registers
    /// and shared memory, longer
    /// ones by GPU-Warpsort's merge sort (one after another; scratch for the
    /// longest is allocated before the keys are touched). Up to `u32::MAX`
    /// keys ([`Error::TooLong`] past that).
    ///
    /// Temporary storage: the handle's cached scratch holds the lists
    /// (8 bytes for each of up to `min(segments, n / 2)` segments), so a
    /// second call of the same shape allocates nothing unless it has
    /// segments past 8192 items (their merge scratch is a one-off).
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3u32, 1, 2, 7, 9, 8])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 3, 3, 4, 6])?; // [3 1 2] [] [7] [9 8]
    /// gpu.sort_segments_by_offsets(&mut keys, &offsets, Order::Ascending)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&keys)?, [1, 2, 3, 7, 8, 9]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_by_offsets<K: SortKey>(
        &self,
        keys: &mut CudaSlice<K>,
        offsets: &CudaSlice<u32>,
        order: Order,
    ) -> Result<()> {
        let items = RawItems::keys(self, keys)?;
        self.sort_offset_items::<K>(&items, offsets, order)
    }

    /// Key-value [`Gpu::sort_segments_by_offsets`]: each value moves with its
    /// key inside its segment.
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3u32, 1, 9, 8])?;
    /// let mut vals = gpu.stream().clone_htod(&[0u32, 1, 2, 3])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 2, 4])?;
    /// gpu.sort_segments_by_offsets_pairs(&mut keys, &mut vals, &offsets, Order::Descending)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&vals)?, [0, 1, 2, 3]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_by_offsets_pairs<K: SortKey, V: Payload>(
        &self,
        keys: &mut CudaSlice<K>,
        vals: &mut CudaSlice<V>,
        offsets: &CudaSlice<u32>,
        order: Order,
    ) -> Result<()> {
        if keys.len() != vals.len() {
            return Err(Error::LengthMismatch { keys: keys.len(), values: vals.len() });
        }
        let items = RawItems::pairs(self, keys, vals)?;
        self.sort_offset_items::<K>(&items, offsets, order)
    }

    /// [`Gpu::sort_segments_by_offsets`] of host slices (copied to the GPU and
    /// back); the offsets are checked on the host first. On error `keys` is
    /// unchanged.
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut v = vec![2.5f32, -1.0, 4.0, 0.0];
    /// gpu.sort_segments_by_offsets_slice(&mut v, &[0, 2, 4], Order::Ascending)?;
    /// assert_eq!(v, [-1.0, 2.5, 0.0, 4.0]);
    /// assert!(gpu.sort_segments_by_offsets_slice(&mut v, &[0, 3, 2, 4], Order::Ascending).is_err());
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_segments_by_offsets_slice<K: SortKey>(
        &self,
        keys: &mut [K],
        offsets: &[u32],
        order: Order,
    ) -> Result<()> {
        check_host_offsets(offsets, keys.len())?;
        if keys.len() < 2 {
            return Ok(());
        }
        let mut dk = self.stream().clone_htod(keys)?;
        let off = self.stream().clone_htod(offsets)?;
        self.sort_segments_by_offsets(&mut dk, &off, order)?;
        self.stream().memcpy_dtoh(&dk, keys)?;
        Ok(())
    }

    /// [`Gpu::sort_segments_by_offsets_pairs`] of host slices. On error both
    /// are unchanged.
    pub fn sort_segments_by_offsets_pairs_slice<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: &mut [V],
        offsets: &[u32],
        order: Order,
    ) -> Result<()> {
        if keys.len() != vals.len() {
            return Err(Error::LengthMismatch { keys: keys.len(), values: vals.len() });
        }
        check_host_offsets(offsets, keys.len())?;
        if keys.len() < 2 {
            return Ok(());
        }
        let mut dk = self.stream().clone_htod(keys)?;
        let mut dv = self.stream().clone_htod(vals)?;
        let off = self.stream().clone_htod(offsets)?;
        self.sort_segments_by_offsets_pairs(&mut dk, &mut dv, &off, order)?;
        self.stream().memcpy_dtoh(&dk, keys)?;
        self.stream().memcpy_dtoh(&dv, vals)?;
        Ok(())
    }

    /// Counts, fingerprint and descents inside segments only: like
    /// [`Gpu::check`], but a descent across a segment boundary does not count.
    /// Runs on the GPU (warp votes and reductions); offsets are checked as
    /// [`Gpu::sort_segments_by_offsets`] checks them.
    ///
    /// ```no_run
    /// use warpsort::{Order, Segments};
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3u32, 1, 9, 8, 7])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 2, 5])?;
    /// let before = gpu.check_segments::<u32, u32>(&keys, None, Segments::Offsets(&offsets), Order::Ascending)?;
    /// gpu.sort_segments_by_offsets(&mut keys, &offsets, Order::Ascending)?;
    /// let after = gpu.check_segments::<u32, u32>(&keys, None, Segments::Offsets(&offsets), Order::Ascending)?;
    /// assert!(after.confirms(&before));
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn check_segments<K: SortKey, V: Payload>(
        &self,
        keys: &CudaSlice<K>,
        vals: Option<&CudaSlice<V>>,
        segments: Segments<'_>,
        order: Order,
    ) -> Result<Check> {
        let n = keys.len();
        self.check_context(keys, "keys")?;
        let (off, count, seg) = match segments {
            Segments::Rows(0) => return Err(Error::BadSegment { len: 0, max: usize::MAX }),
            Segments::Rows(len) => (0, n.div_ceil(len), len),
            Segments::Offsets(o) => {
                offsets_shape(o, n)?;
                self.with_scratch(None, SEGMENT_COUNTERS * 4, |c| self.count_offsets(o, n, c, None))?;
                (self.ptr(o), o.len(), 0)
            }
        };
        let boundary = self.stream().alloc_zeros::<u32>(1)?;
        if n > 1 && count > 1 {
            // 16-bit keys are checked as their 32-bit patterns.
            let wide = self.widen_keys(&RawItems::keys(self, keys)?, 0)?;
            let key_ptr = wide.as_ref().map_or(self.ptr(keys), |(w, _)| self.ptr(w));
            let name = if std::mem::size_of::<K>() <= 4 { "segment_boundaries_u32" } else { "segment_boundaries_u64" };
            let grid = blocks_for(count, ELEMENTWISE_THREADS).min(8192);
            let args = [
                Arg::U64(key_ptr),
                Arg::U64(n as u64),
                Arg::U64(off),
                Arg::U64(count as u64),
                Arg::U64(seg as u64),
                Arg::U32(K::MODE | order.mode()),
                Arg::U64(self.ptr(&boundary)),
            ];
            self.launch(name, grid, ELEMENTWISE_THREADS, 0, &args)?;
        }
        let all = self.check::<K, V>(keys, vals, order)?;
        let across = self.stream().clone_dtoh(&boundary)?[0] as u64;
        Ok(Check { descents: all.descents.wrapping_sub(across) & 0xffff_ffff, ..all })
    }

    /// Whether every segment of `keys` is sorted in `order`, checked on the GPU.
    ///
    /// ```no_run
    /// use warpsort::{Order, Segments};
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys = gpu.stream().clone_htod(&[1u32, 3, 0, 2])?;
    /// assert!(gpu.is_sorted_segments(&keys, Segments::Rows(2), Order::Ascending)?);
    /// assert!(!gpu.is_sorted(&keys, Order::Ascending)?);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn is_sorted_segments<K: SortKey>(
        &self,
        keys: &CudaSlice<K>,
        segments: Segments<'_>,
        order: Order,
    ) -> Result<bool> {
        Ok(self.check_segments::<K, u32>(keys, None, segments, order)?.descents == 0)
    }

    /// Checks the offsets on the GPU and counts the segments of each class
    /// (the offsets' problem as [`Error::BadOffsets`]); with `lists` (the
    /// address and room of [`segment_lists_bound`] entries), also lists them
    /// there (see `segmented::list_classes`) in the same pass, before the one
    /// wait for the counts. `counters` addresses [`SEGMENT_COUNTERS`] words.
    fn count_offsets(
        &self,
        offsets: &CudaSlice<u32>,
        n: usize,
        counters: DevPtr,
        lists: Option<(DevPtr, usize)>,
    ) -> Result<[usize; SEGMENT_CLASSES]> {
        offsets_shape(offsets, n)?;
        self.check_context(offsets, "segment offsets")?;
        let segs = offsets.len() - 1;
        let mut c = [0u32; SEGMENT_COUNTERS];
        c[0] = u32::MAX;
        self.upload(counters, &c)?;
        let grid = blocks_for(segs.max(1), ELEMENTWISE_THREADS).min(65_535);
        let (off, cnt) = (Arg::U64(self.ptr(offsets)), Arg::U64(counters));
        self.launch("segment_classes_count", grid, ELEMENTWISE_THREADS, 0, &[off, Arg::U64(segs as u64), cnt])?;
        if let Some((lists, room)) = lists {
            let args = [off, Arg::U64(segs as u64), Arg::U64(n as u64), cnt, Arg::U64(lists), Arg::U64(room as u64)];
            self.launch("segment_classes_list", grid, ELEMENTWISE_THREADS, 0, &args)?;
        }
        self.download(counters, &mut c)?;
        let descent = match c[0] {
            u32::MAX => None,
            i => {
                let i = i as usize;
                let pair = self.stream().clone_dtoh(&offsets.slice(i..i + 2))?;
                Some((i, pair[0], pair[1]))
            }
        };
        if let Some(problem) = offsets_problem(c[SEGMENT_FIRST], c[SEGMENT_LAST], descent, segs, n) {
            return Err(Error::BadOffsets { problem });
        }
        Ok(std::array::from_fn(|k| c[1 + k] as usize))
    }

    /// Bytes of temporary storage [`Gpu::plan_offsets`] needs for `segs`
    /// segments of `n` items, and where its lists start in them.
    fn plan_bytes(n: usize, segs: usize) -> (usize, usize) {
        let lists_at = (SEGMENT_COUNTERS * 4).next_multiple_of(256);
        (lists_at + segment_lists_bound(n as u64, segs as u64) as usize * 8, lists_at)
    }

    /// Checks the offsets and lists the segments of each class on the GPU
    /// into temporary storage at `temp` ([`Gpu::plan_bytes`]); brings back
    /// the counts and the long segments' bounds.
    fn plan_offsets(&self, offsets: &CudaSlice<u32>, n: usize, temp: DevPtr) -> Result<OffsetPlan> {
        let segs = offsets.len() - 1;
        let (_, lists_at) = Self::plan_bytes(n, segs);
        let room = segment_lists_bound(n as u64, segs as u64) as usize;
        let lists = temp + lists_at as u64;
        let counts = self.count_offsets(offsets, n, temp, (room > 0).then_some((lists, room)))?;
        let long = SEGMENT_CLASS_LONG as usize;
        let mut starts = [0usize; SEGMENT_CLASSES];
        let mut total = 0;
        for c in 1..SEGMENT_CLASSES {
            starts[c] = total;
            total += counts[c];
        }
        debug_assert!(total <= room, "well-formed offsets list at most {room} segments, not {total}");
        let mut plan = OffsetPlan { counts, starts, lists, long: Vec::new() };
        if counts[long] > 0 {
            let mut bounds = vec![0u64; counts[long]];
            self.download(lists + 8 * starts[long] as u64, &mut bounds)?;
            plan.long = bounds.iter().map(|&e| (e as u32 as usize, ((e >> 32) - (e & 0xffff_ffff)) as usize)).collect();
        }
        Ok(plan)
    }

    fn sort_offset_items<K: SortKey>(&self, items: &RawItems, offsets: &CudaSlice<u32>, order: Order) -> Result<()> {
        offsets_shape(offsets, items.n)?;
        if items.key_bytes == 2 && items.n > 0 {
            // 16-bit keys sort as 32-bit patterns already in order.
            let m = K::MODE | order.mode();
            return self.with_scratch(None, Self::wide_bytes(items.n), |wide| {
                self.on_wide_keys(items, m, wide, |w| self.sort_offset_items::<u32>(w, offsets, Order::Ascending))
            });
        }
        let (bytes, _) = Self::plan_bytes(items.n, offsets.len() - 1);
        self.with_scratch(None, bytes, |temp| {
            let plan = self.plan_offsets(offsets, items.n, temp)?;
            // GPU-Warpsort's scratch for the longest segment, before the keys
            // are touched (a nested request: a one-off allocation).
            let opts = SortOptions::default();
            let longest = plan.long.iter().map(|l| l.1).max().unwrap_or(0);
            let long_bytes = Self::sort_temp_bytes(&opts, longest, items.key_bytes, items.val_bytes);
            self.with_scratch(None, long_bytes, |long_temp| {
                self.with_ordered_keys::<K>(items, order, || self.sort_planned(items, &plan, &opts, long_temp))
            })
        })
    }

    /// Launches the sort of every listed segment (keys already mapped).
    fn sort_planned(&self, items: &RawItems, plan: &OffsetPlan, opts: &SortOptions, long_temp: DevPtr) -> Result<()> {
        let [k, v] = items.args();
        for c in 1..SEGMENT_CLASS_LONG as usize {
            let count = plan.counts[c];
            if count == 0 {
                continue;
            }
            let list = Arg::U64(plan.lists + 8 * plan.starts[c] as u64);
            let cap = segment_class_capacity(c as u32);
            if c as u32 <= SEGMENT_CLASS_CHUNKS {
                let per_block = WARP_KERNEL_THREADS / WARP_SIZE * (WARP_TILE / cap);
                let grid = blocks_for(count, per_block);
                let args = [k, v, list, Arg::U32(count as u32), Arg::U32(cap)];
                self.launch(&items.kernel("segmented_chunks"), grid, WARP_KERNEL_THREADS, 0, &args)?;
            } else if c as u32 == SEGMENT_CLASS_WARP {
                let grid = blocks_for(count, WARP_KERNEL_THREADS / WARP_SIZE);
                let args = [k, v, list, Arg::U32(count as u32)];
                self.launch(&items.kernel("segmented_warp512"), grid, WARP_KERNEL_THREADS, 0, &args)?;
            } else {
                let smem = (cap as usize * items.item_bytes()) as u32;
                let grid = count.min(i32::MAX as usize) as u32;
                let args = [k, v, list, Arg::U32(count as u32)];
                self.launch(&items.kernel("segmented_blocks"), grid, cap / KEYS_PER_LANE, smem, &args)?;
            }
        }
        for &(start, len) in &plan.long {
            self.warpsort(&items.range(start, len), &opts.warpsort, long_temp)?;
        }
        Ok(())
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

    #[test]
    fn host_offsets_contract() {
        assert!(check_host_offsets(&[0], 0).is_ok());
        assert!(check_host_offsets(&[0, 0, 3, 3], 3).is_ok());
        let problem = |o: &[u32], n| match check_host_offsets(o, n) {
            Err(Error::BadOffsets { problem }) => problem,
            r => panic!("{o:?} n={n}: {r:?}"),
        };
        assert!(problem(&[], 0).contains("empty"));
        assert!(problem(&[1, 3], 3).contains("offsets[0] is 1"));
        assert!(problem(&[0, 3, 2, 4], 4).contains("offsets[1] = 3 > offsets[2] = 2"));
        assert!(problem(&[0, 2], 3).contains("offsets[1], is 2 but there are 3 keys"));
        assert!(problem(&[0, 4], 3).contains("is 4 but there are 3"));
    }
}
