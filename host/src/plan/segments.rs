//! Plans of the segmented sorts: which kernel sorts each segment (one rule,
//! `SegmentKernel::for_len` through `config::segment_class`, for rows and
//! for segments given by offsets), the launch shapes, and the temporary
//! storage. Segments past a block's tile go to the merge sort, one after
//! another.

use warpsort_kernels::config::{
    KEYS_PER_LANE, SEGMENT_CLASS_CHUNKS, SEGMENT_CLASS_LONG, SEGMENT_CLASSES, SEGMENT_COUNTERS, WARP_SIZE, WARP_TILE,
    segment_class, segment_lists_bound, warp_sort_batch,
};

use super::layout::Layout;
use super::{Launch, Launches, SortPlan, SortShape};
use crate::error::{Error, Result};
use crate::launch::{Family, ItemKind, KernelId, Shape};
use crate::options::{SegmentKernel, SortOptions};
use crate::policy::Policy;

/// One segmented kernel's launch over `count` segments of `kind` items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SegmentLaunch {
    pub kernel: SegmentKernel,
    pub shape: Shape,
    /// The stable kernel: equal keys keep their order in the segment
    /// (ranked items, whose ranks ascend in each segment; the sample sort's
    /// stable buckets).
    pub stable: bool,
    /// The caller knows each segment's span (the sample sort's buckets:
    /// between two splitters), so the kernel takes compact words where the
    /// span allows (`span::Known`: the spans' table and each listed
    /// segment's id).
    pub known_spans: bool,
    /// The block kernel's dual build (`segmented_block_dual`): `u32` keys
    /// alone, the caller's segments, unstable, in tiles of at least
    /// `Policy::dual_block_min_tile`.
    pub dual: bool,
}

impl SegmentLaunch {
    /// The launch over `count` of the caller's segments of `kind` items
    /// (ranked items take the stable kernel).
    pub fn new(kernel: SegmentKernel, count: usize, kind: ItemKind, p: &Policy) -> Self {
        SegmentLaunch::told(kernel, count, kind, false, false, p)
    }

    /// The launch over `count` segments of `kind` items, by the stable
    /// kernel where `stable` (or the items are ranked), told each
    /// segment's span where `known_spans`: every choice of the launch,
    /// made here once.
    pub fn told(
        kernel: SegmentKernel,
        count: usize,
        kind: ItemKind,
        stable: bool,
        known_spans: bool,
        p: &Policy,
    ) -> Self {
        let warps = p.warp_kernel_threads / WARP_SIZE;
        let shape = match kernel {
            SegmentKernel::WarpChunks { chunk } => {
                Shape::covering(count, warps * (WARP_TILE / chunk), p.chunk_kernel_max_blocks())
                    .with_block(p.warp_kernel_threads)
            }
            SegmentKernel::Warp { keys_per_lane } => {
                Shape::covering(count, warps * warp_sort_batch(keys_per_lane), i32::MAX as u32)
                    .with_block(p.warp_kernel_threads)
            }
            SegmentKernel::Block { tile } => Shape::new(count.min(i32::MAX as usize) as u32, tile / KEYS_PER_LANE)
                .with_smem(tile * kind.item_bytes() as u32),
        };
        let stable = stable || kind.is_ranked();
        // The dual build has no stable or `known` kernel.
        let dual = matches!(kernel, SegmentKernel::Block { tile } if tile >= p.dual_block_min_tile)
            && kind == Self::DUAL_ITEMS
            && !stable
            && !known_spans;
        SegmentLaunch { kernel, shape, stable, known_spans, dual }
    }

    /// The items the dual block kernel is built for (`segmented::dual` on
    /// the device).
    const DUAL_ITEMS: ItemKind = ItemKind::U32;

    /// The items the kernel sees: ranks as plain payloads in the stable
    /// kernels, which keep ties in order by place.
    pub fn items(&self, kind: ItemKind) -> ItemKind {
        if self.stable { kind.rank_as_value() } else { kind }
    }

    pub fn id(&self, kind: ItemKind) -> KernelId {
        let family = |f: Family| f.segmented(self.stable, self.known_spans, self.dual);
        let kind = self.items(kind);
        match self.kernel {
            SegmentKernel::WarpChunks { .. } => KernelId::new(family(Family::SegmentedChunks), kind),
            SegmentKernel::Warp { keys_per_lane } => {
                KernelId::with_width(family(Family::SegmentedWarp), WARP_SIZE * keys_per_lane, kind)
            }
            SegmentKernel::Block { .. } => KernelId::new(family(Family::SegmentedBlock), kind),
        }
    }
}

/// How rows are sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[expect(clippy::large_enum_variant, reason = "a plan lives for one call, on the stack")]
pub(crate) enum RowsSort {
    /// Rows of 0 or 1 items (or fewer than two items in all).
    Nothing,
    /// One launch of a segmented kernel.
    Kernel(SegmentLaunch),
    /// Rows past a block's tile: the merge sort, row after row (`last` for
    /// a shorter last row), in storage at `at`.
    Long { full: SortPlan, last: Option<SortPlan>, at: usize },
}

/// Every decision of a sort of equal rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowsPlan {
    pub n: usize,
    /// The rows' length (the last may be shorter).
    pub len: usize,
    pub shape: SortShape,
    /// 16-bit keys: the offset of their widened copy.
    pub widened: Option<usize>,
    pub sort: RowsSort,
    pub temp_bytes: usize,
}

impl RowsPlan {
    /// Rows of `len` items (`BadSegment` for 0), by the kernel their length
    /// needs, or by `kernel` when given (`BadSegment` when it cannot sort
    /// them). `opts` chooses the order (elsewhere) and the long rows' merge
    /// sort's parameters.
    pub fn new(
        opts: &SortOptions,
        shape: SortShape,
        n: usize,
        len: usize,
        kernel: Option<SegmentKernel>,
        p: &Policy,
    ) -> Result<Self> {
        opts.validate()?;
        if len == 0 {
            return Err(Error::BadSegment { len, max: usize::MAX });
        }
        let rows = n.div_ceil(len);
        let longest = len.min(n);
        let sort = match kernel {
            Some(k) if !k.fits(len) => return Err(Error::BadSegment { len, max: k.capacity() }),
            _ if longest < 2 => RowsSort::Nothing,
            Some(k) => RowsSort::Kernel(SegmentLaunch::new(k, rows, shape.kind, p)),
            None => match SegmentKernel::for_class(segment_class(longest.min(u32::MAX as usize) as u32)) {
                Some(k) => RowsSort::Kernel(SegmentLaunch::new(k, rows, shape.kind, p)),
                None => {
                    let inner = shape.words();
                    let full = SortPlan::new(opts, inner, longest, p)?;
                    let tail = n % len;
                    let last = (n > len && tail > 0).then(|| SortPlan::new(opts, inner, tail, p)).transpose()?;
                    RowsSort::Long { full, last, at: 0 }
                }
            },
        };
        let mut l = Layout::default();
        let widened =
            (shape.fields.is_some() && !matches!(sort, RowsSort::Nothing)).then(|| l.region(shape.encoded_bytes(n)));
        let sort = match sort {
            RowsSort::Long { full, last, .. } => RowsSort::Long { full, last, at: l.region(full.temp_bytes) },
            s => s,
        };
        Ok(RowsPlan { n, len, shape, widened, sort, temp_bytes: l.bytes() })
    }
}

impl Launches for RowsPlan {
    fn launches(&self, out: &mut Vec<Launch>) {
        match &self.sort {
            RowsSort::Nothing => {}
            RowsSort::Kernel(k) => out.push((k.id(self.shape.kind), k.shape)),
            RowsSort::Long { full, .. } => full.launches(out),
        }
    }
}

/// Every decision of a sort of segments given by offsets that can be made
/// before the offsets are read: the storage for the counts and the lists.
/// What each class needs comes with the counts ([`OffsetsLaunches`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OffsetsPlan {
    pub n: usize,
    pub segments: usize,
    pub shape: SortShape,
    pub widened: Option<usize>,
    /// `SEGMENT_COUNTERS` words: the check's result and the class counts.
    pub counters: usize,
    /// The lists of every class, `room` entries.
    pub lists: usize,
    pub room: usize,
    /// Whether the odd segments are runs of equal keys in input order (the
    /// sample sort's equality buckets): sorted already, so no kernel and no
    /// merge sort touches them, however long.
    pub odd_equal: bool,
    /// Whether equal keys keep their input order (the sample sort's stable
    /// buckets): the stable kernels (the long segments' merge sorts keep
    /// ties as the options' `stable` says).
    pub stable: bool,
    /// Where each listed entry's segment goes (`room` of them), when the
    /// caller knows each segment's span (the sample sort's buckets: between
    /// two splitters; the kernels read it by the segment's id,
    /// `span::Known`).
    pub ids: Option<usize>,
    pub temp_bytes: usize,
}

impl OffsetsPlan {
    pub fn new(shape: SortShape, n: usize, segments: usize) -> Self {
        OffsetsPlan::laid_out(shape, n, segments, false)
    }

    /// [`OffsetsPlan::new`] of segments whose spans the caller knows: each
    /// listed entry's segment id beside it.
    pub fn with_known_spans(shape: SortShape, n: usize, segments: usize) -> Self {
        OffsetsPlan::laid_out(shape, n, segments, true)
    }

    fn laid_out(shape: SortShape, n: usize, segments: usize, known_spans: bool) -> Self {
        let room = segment_lists_bound(n as u64, segments as u64) as usize;
        let mut l = Layout::default();
        let widened = (shape.fields.is_some() && n > 0).then(|| l.region(shape.encoded_bytes(n)));
        let counters = l.region(SEGMENT_COUNTERS * 4);
        let lists = l.region(room * 8);
        let ids = known_spans.then(|| l.region(room * 4));
        OffsetsPlan {
            n,
            segments,
            shape,
            widened,
            counters,
            lists,
            room,
            odd_equal: false,
            stable: false,
            ids,
            temp_bytes: l.bytes(),
        }
    }

    /// The storage of the check alone ([`crate::Gpu::check_segments`]).
    pub fn counters_only() -> usize {
        SEGMENT_COUNTERS * 4
    }
}

/// What the counts of a sort of segments given by offsets call for: a launch
/// per class present, and the long segments' merge sorts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OffsetsLaunches {
    /// `(launch, first entry of the class's list, count)` per class present:
    /// first the `beside` launches, then the others.
    pub classes: Vec<(SegmentLaunch, usize, usize)>,
    /// How many of the first `classes` are launches of a few blocks, which
    /// alone would leave the GPU nearly idle (at most
    /// `Policy::beside_max_blocks`: a class of a few long segments, or of
    /// a few chunks), to run on a second stream beside the others (the
    /// classes' segments are disjoint).
    pub beside: usize,
    /// The first entry of the long class's list and its count.
    pub long: (usize, usize),
    /// The items' kind.
    pub kind: ItemKind,
}

impl OffsetsLaunches {
    /// The launches of segments counted by class, by the stable kernels
    /// when `stable`, of segments whose spans the caller knows when
    /// `known_spans`.
    ///
    /// A class with fewer segments than `Policy::own_launch_min_segments`
    /// joins the next class's launch (its list comes just before that
    /// class's, and the larger chunk or tile holds its segments), since
    /// each launch costs its start and a tail of its last blocks: a block
    /// class between two powers of two joins the power above it (a third
    /// more tile), a class of the chunk kernel the next one, and so on up
    /// to the largest chunk (segments of at most 256 items, whose sort is
    /// short beside a launch, even where the chunk is far larger). Every
    /// other class keeps its own launch, so that no segment's network is
    /// more than twice its class's. The launches of a few blocks come first
    /// ([`OffsetsLaunches::beside`]).
    pub fn new(counts: &[usize; SEGMENT_CLASSES], kind: ItemKind, stable: bool, known_spans: bool, p: &Policy) -> Self {
        let mut classes = Vec::new();
        let mut start = 0;
        // A class's entries not launched yet: its first entry and count.
        let mut joining: Option<(usize, usize)> = None;
        for (c, &count) in counts.iter().enumerate().skip(1) {
            if let Some(k) = SegmentKernel::for_class(c as u32) {
                let (first, total) = joining.take().map_or((start, count), |(first, n)| (first, n + count));
                let joins = match k {
                    SegmentKernel::Block { tile } => !tile.is_power_of_two(),
                    SegmentKernel::WarpChunks { .. } => c < SEGMENT_CLASS_CHUNKS as usize,
                    SegmentKernel::Warp { .. } => false,
                };
                if joins && total < p.own_launch_min_segments() {
                    joining = (total > 0).then_some((first, total));
                } else if total > 0 {
                    classes.push((SegmentLaunch::told(k, total, kind, stable, known_spans, p), first, total));
                }
            }
            if c == SEGMENT_CLASS_LONG as usize {
                debug_assert!(joining.is_none(), "the class before the long one is a power of two");
                // A stable partition: the few blocks' launches first.
                classes.sort_by_key(|(k, ..)| k.shape.grid > p.beside_max_blocks());
                let beside = classes.iter().take_while(|(k, ..)| k.shape.grid <= p.beside_max_blocks()).count();
                return OffsetsLaunches { classes, beside, long: (start, count), kind };
            }
            start += count;
        }
        unreachable!("the long class is the last")
    }
}

impl Launches for OffsetsLaunches {
    fn launches(&self, out: &mut Vec<Launch>) {
        out.extend(self.classes.iter().map(|(k, _, _)| (k.id(self.kind), k.shape)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::HOPPER;

    #[test]
    fn one_rule_for_rows_and_offsets() {
        let shape = SortShape::new(4, 0);
        let o = SortOptions::default();
        for (len, want) in [
            (2, SegmentKernel::WarpChunks { chunk: 8 }),
            (33, SegmentKernel::WarpChunks { chunk: 64 }),
            (256, SegmentKernel::WarpChunks { chunk: 256 }),
            (257, SegmentKernel::Warp { keys_per_lane: 16 }),
            (512, SegmentKernel::Warp { keys_per_lane: 16 }),
            (513, SegmentKernel::Block { tile: 768 }),
            (768, SegmentKernel::Block { tile: 768 }),
            (769, SegmentKernel::Block { tile: 1024 }),
            (1025, SegmentKernel::Block { tile: 1536 }),
            (2049, SegmentKernel::Block { tile: 3072 }),
            (3073, SegmentKernel::Block { tile: 4096 }),
            (4097, SegmentKernel::Block { tile: 6144 }),
            (6145, SegmentKernel::Block { tile: 8192 }),
            (8192, SegmentKernel::Block { tile: 8192 }),
        ] {
            assert_eq!(SegmentKernel::for_len(len).unwrap(), want, "len {len}");
            let plan = RowsPlan::new(&o, shape, 100 * len, len, None, &HOPPER).unwrap();
            assert!(matches!(plan.sort, RowsSort::Kernel(k) if k.kernel == want), "rows of {len}: {plan:?}");
            let class = segment_class(len as u32);
            assert_eq!(SegmentKernel::for_class(class), Some(want));
            assert!(want.capacity() >= len && warpsort_kernels::config::segment_class_capacity(class) as usize >= len);
        }
        // Each length takes the smallest class that holds it.
        let cap = warpsort_kernels::config::segment_class_capacity;
        for len in 2..=warpsort_kernels::config::BLOCK_SORT_MAX_TILE {
            let c = segment_class(len);
            assert!(cap(c) >= len && (c == 1 || cap(c - 1) < len), "len {len}: class {c}");
        }
        assert!(matches!(RowsPlan::new(&o, shape, 5, 1, None, &HOPPER).unwrap().sort, RowsSort::Nothing));
        assert!(matches!(RowsPlan::new(&o, shape, 0, 10, None, &HOPPER).unwrap().sort, RowsSort::Nothing));
        assert!(matches!(RowsPlan::new(&o, shape, 10, 0, None, &HOPPER), Err(Error::BadSegment { len: 0, .. })));
    }

    #[test]
    fn long_rows_take_the_merge_sort() {
        let (o, shape) = (SortOptions::default(), SortShape::new(4, 4));
        let plan = RowsPlan::new(&o, shape, 3 * 10_000 + 9000, 10_000, None, &HOPPER).unwrap();
        let RowsSort::Long { full, last: Some(last), at } = plan.sort else { panic!("{plan:?}") };
        assert_eq!((full.n, last.n, at), (10_000, 9000, 0));
        assert_eq!(plan.temp_bytes, full.temp_bytes);
        assert!(last.temp_bytes <= full.temp_bytes);
        // One row longer than the keys: the whole array, one merge sort.
        let one = RowsPlan::new(&o, shape, 20_000, usize::MAX, None, &HOPPER).unwrap();
        assert!(matches!(one.sort, RowsSort::Long { full, last: None, .. } if full.n == 20_000));
    }

    #[test]
    fn explicit_kernels_must_fit() {
        let (o, shape) = (SortOptions::default(), SortShape::new(4, 0));
        let warp1 = SegmentKernel::Warp { keys_per_lane: 1 };
        assert!(RowsPlan::new(&o, shape, 1000, 32, Some(warp1), &HOPPER).is_ok());
        assert!(matches!(
            RowsPlan::new(&o, shape, 1000, 33, Some(warp1), &HOPPER),
            Err(Error::BadSegment { len: 33, .. })
        ));
        let bad_chunk = SegmentKernel::WarpChunks { chunk: 96 };
        assert!(RowsPlan::new(&o, shape, 1000, 100, Some(bad_chunk), &HOPPER).is_err());
        assert!(RowsPlan::new(&o, shape, 1000, 4, Some(SegmentKernel::WarpChunks { chunk: 4 }), &HOPPER).is_err());
    }

    #[test]
    fn the_chunk_kernel_strides_past_its_grid_cap() {
        let chunk = SegmentKernel::WarpChunks { chunk: 32 };
        let per_block = (HOPPER.warp_kernel_threads / WARP_SIZE * (WARP_TILE / 32)) as usize;
        // Few segments: a block for each group of them.
        let few = SegmentLaunch::new(chunk, 3 * per_block + 1, ItemKind::U32, &HOPPER);
        assert_eq!((few.shape.grid, few.shape.block), (4, HOPPER.warp_kernel_threads));
        // Many: the cap, and each warp takes several rounds.
        let many = SegmentLaunch::new(chunk, 1 << 22, ItemKind::U32, &HOPPER);
        assert_eq!(many.shape.grid, HOPPER.chunk_kernel_max_blocks());
        assert!(many.shape.grid as usize * per_block < 1 << 22);
        // The other kernels keep a block or a warp a segment's batch.
        let warp = SegmentLaunch::new(SegmentKernel::Warp { keys_per_lane: 16 }, 1 << 22, ItemKind::U32, &HOPPER);
        assert!(warp.shape.grid > HOPPER.chunk_kernel_max_blocks());
    }

    #[test]
    fn offsets_launch_a_kernel_per_class_present() {
        let mut counts = [0usize; SEGMENT_CLASSES];
        counts[1] = 5; // up to 8 items
        counts[7] = 2; // up to 512
        counts[SEGMENT_CLASS_LONG as usize - 1] = 1; // up to 8192
        counts[SEGMENT_CLASS_LONG as usize] = 3;
        let l = OffsetsLaunches::new(&counts, ItemKind::U32, false, false, &HOPPER);
        let kernels: Vec<_> = l.classes.iter().map(|(k, start, count)| (k.kernel, *start, *count)).collect();
        assert_eq!(
            kernels,
            [
                (SegmentKernel::WarpChunks { chunk: 256 }, 0, 5),
                (SegmentKernel::Warp { keys_per_lane: 16 }, 5, 2),
                (SegmentKernel::Block { tile: 8192 }, 7, 1)
            ]
        );
        assert_eq!(l.long, (8, 3));
    }

    /// The launches of a few blocks (here the few chunks and the one long
    /// segment's block) come first, to run beside the others; the rest keep
    /// their order.
    #[test]
    fn launches_of_a_few_blocks_go_first_to_run_beside() {
        let class = |len: u32| segment_class(len) as usize;
        let mut counts = [0usize; SEGMENT_CLASSES];
        counts[class(200)] = 1_000; // chunk 256: 32 segments a block of 8 warps at most
        counts[class(400)] = 100_000; // the warp kernel: a segment a warp
        counts[class(1000)] = 50_000; // tile 1024
        counts[class(8000)] = 10; // tile 8192
        let l = OffsetsLaunches::new(&counts, ItemKind::U32, false, false, &HOPPER);
        let max = HOPPER.beside_max_blocks();
        let kernels: Vec<_> = l.classes.iter().map(|(k, start, count)| (k.kernel, *start, *count)).collect();
        let (warp, block) = (SegmentKernel::Warp { keys_per_lane: 16 }, |tile| SegmentKernel::Block { tile });
        assert_eq!(
            kernels,
            [
                (SegmentKernel::WarpChunks { chunk: 256 }, 0, 1_000),
                (block(8192), 151_000, 10),
                (warp, 1_000, 100_000),
                (block(1024), 101_000, 50_000)
            ]
        );
        assert_eq!(l.beside, 2);
        assert!(l.classes[..2].iter().all(|(k, ..)| k.shape.grid <= max), "{max}");
        assert!(l.classes[2..].iter().all(|(k, ..)| k.shape.grid > max));
    }

    /// Classes of the chunk kernel with few segments join the next chunk's
    /// launch, up to the largest chunk, which keeps its own (it never joins
    /// the warp kernel's); with many, a class has its own.
    #[test]
    fn few_segments_of_the_chunk_kernel_join_the_next_chunk() {
        let class = |len: u32| segment_class(len) as usize;
        let many = HOPPER.own_launch_min_segments();
        let chunks = |c: u32| SegmentKernel::WarpChunks { chunk: c };
        let mut counts = [0usize; SEGMENT_CLASSES];
        counts[class(5)] = 3; // chunk 8
        counts[class(30)] = 20; // chunk 32
        counts[class(60)] = many - 23; // chunk 64: with the two before, many
        counts[class(100)] = 7; // chunk 128
        counts[class(200)] = 1; // chunk 256
        counts[class(400)] = 2; // the warp kernel
        let l = OffsetsLaunches::new(&counts, ItemKind::U32U32, true, true, &HOPPER);
        let kernels: Vec<_> = l.classes.iter().map(|(k, start, count)| (k.kernel, *start, *count)).collect();
        let warp = SegmentKernel::Warp { keys_per_lane: 16 };
        assert_eq!(kernels, [(chunks(64), 0, many), (chunks(256), many, 8), (warp, many + 8, 2)]);
        assert!(l.classes.iter().all(|(k, _, _)| k.stable && k.known_spans), "the variants as asked");
        // Few in the largest chunk: its own launch still.
        let mut counts = [0usize; SEGMENT_CLASSES];
        counts[class(200)] = 1;
        counts[class(300)] = 1;
        let l = OffsetsLaunches::new(&counts, ItemKind::U32, false, false, &HOPPER);
        let kernels: Vec<_> = l.classes.iter().map(|(k, start, count)| (k.kernel, *start, *count)).collect();
        assert_eq!(kernels, [(chunks(256), 0, 1), (warp, 1, 1)]);
    }

    /// A class between two powers of two with few segments joins the next
    /// class's launch; with many, it has its own.
    #[test]
    fn few_segments_between_powers_join_the_next_class() {
        let class = |len: u32| segment_class(len) as usize;
        let many = HOPPER.own_launch_min_segments();
        let mut counts = [0usize; SEGMENT_CLASSES];
        counts[class(600)] = 5; // tile 768
        counts[class(1000)] = 2; // tile 1024
        counts[class(1500)] = many; // tile 1536
        counts[class(5000)] = 4; // tile 6144, and none of 8192
        counts[SEGMENT_CLASS_LONG as usize] = 1;
        let l = OffsetsLaunches::new(&counts, ItemKind::U32, false, false, &HOPPER);
        let kernels: Vec<_> = l.classes.iter().map(|(k, start, count)| (k.kernel, *start, *count)).collect();
        let block = |tile| SegmentKernel::Block { tile };
        // (The launches of a few blocks first, to run beside the other.)
        assert_eq!(kernels, [(block(1024), 0, 7), (block(8192), 7 + many, 4), (block(1536), 7, many)]);
        assert_eq!(l.beside, 2);
        assert_eq!(l.long, (11 + many, 1));
        // The joined entries of `u32` keys in the 8,192 tile take the dual kernel.
        assert!(l.classes[1].0.dual);
    }
}
