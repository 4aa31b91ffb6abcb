//! The segmented sorts' launches: rows by one kernel of the segmented family
//! (or row after row by the merge sort); segments given by offsets checked
//! and listed by size class on the GPU, then a kernel per class present and
//! the merge sort for each long segment.

use warpsort_kernels::config::{SEGMENT_CLASSES, SEGMENT_CLASSES_SMEM, SEGMENT_COUNTERS, SEGMENT_FIRST, SEGMENT_LAST};

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::launch::families::{
    KnownSpans, SegmentClassesCount, SegmentClassesList, SegmentedBlock, SegmentedChunks, SegmentedWarp, Segments,
};
use crate::launch::{DevPtr, Items, Overlap};
use crate::options::{SegmentKernel, SortOptions};
use crate::plan::SortPlan;
use crate::plan::segments::{OffsetsLaunches, OffsetsPlan, RowsPlan, RowsSort, SegmentLaunch};

impl Gpu {
    /// One launch of a segmented kernel over `segments` of `items`, told
    /// their spans where the launch takes them (`known`).
    pub(crate) fn sort_segments_kernel(
        &self,
        items: &Items,
        segments: Segments,
        k: &SegmentLaunch,
        known: Option<KnownSpans>,
    ) -> Result<()> {
        debug_assert_eq!(k.known_spans, known.is_some(), "the plan's spans, and the spans given");
        let (items, stable) = (&Items { kind: k.items(items.kind), ..*items }, k.stable);
        match k.kernel {
            SegmentKernel::WarpChunks { chunk } => self.launch_with(
                &SegmentedChunks { items, segments, chunk, stable, known },
                k.shape,
                Overlap::WithPrevious,
            ),
            SegmentKernel::Warp { keys_per_lane } => {
                let width = warpsort_kernels::config::WARP_SIZE * keys_per_lane;
                self.launch_with(
                    &SegmentedWarp { width, items, segments, stable, known },
                    k.shape,
                    Overlap::WithPrevious,
                )
            }
            SegmentKernel::Block { .. } => self.launch_with(
                &SegmentedBlock { items, segments, stable, known, dual: k.dual },
                k.shape,
                Overlap::WithPrevious,
            ),
        }
    }

    /// Sorts the rows of `items` as `plan` says (keys mapped under `mode`
    /// around it), with `temp` pointing at its storage.
    pub(crate) fn run_rows(&self, items: &Items, plan: &RowsPlan, mode: u32, temp: DevPtr) -> Result<()> {
        self.check_plan(plan)?;
        if plan.sort == RowsSort::Nothing {
            return Ok(());
        }
        let body = |items: &Items| match &plan.sort {
            RowsSort::Nothing => Ok(()),
            RowsSort::Kernel(k) => {
                self.sort_segments_kernel(items, Segments::Rows { n: items.n, len: plan.len }, k, None)
            }
            RowsSort::Long { full, last, at } => {
                let long_temp = temp + *at as u64;
                for start in (0..items.n).step_by(plan.len) {
                    let len = plan.len.min(items.n - start);
                    let row_plan =
                        if len == full.n { full } else { last.as_ref().expect("a shorter last row has a plan") };
                    // Keys are already in their ordered patterns: no mapping per row.
                    self.run_sort(&items.range(start, len), row_plan, 0, long_temp)?;
                }
                Ok(())
            }
        };
        self.on_words(items, plan.shape, plan.widened.map(|at| temp + at as u64), mode, body)
    }

    /// Checks the offsets on the GPU and counts the segments of each class
    /// (the offsets' problem as [`Error::BadOffsets`]); with `lists` (the
    /// address and room of their entries, and where each entry's segment
    /// goes, or 0), also lists them there in the same pass, before the one
    /// wait for the counts. `counters` addresses `SEGMENT_COUNTERS` words.
    /// With `odd_sorted` the odd segments are checked but neither counted
    /// nor listed (runs of equal keys in order). `ahead`'s work is queued
    /// behind the counts' copy, before the host waits for it
    /// ([`Gpu::download_behind`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn count_offsets(
        &self,
        offsets: DevPtr,
        segments: usize,
        n: usize,
        odd_sorted: bool,
        counters: DevPtr,
        lists: Option<(DevPtr, usize, DevPtr)>,
        ahead: impl FnOnce() -> Result<()>,
    ) -> Result<[usize; SEGMENT_CLASSES]> {
        let mut c = [0u32; SEGMENT_COUNTERS];
        c[0] = u32::MAX;
        self.upload(counters, &c)?;
        let shape = self.policy().elementwise(segments.max(1)).with_smem(SEGMENT_CLASSES_SMEM);
        self.launch_with(
            &SegmentClassesCount { offsets, segments, odd_sorted, counters },
            shape,
            Overlap::WithPrevious,
        )?;
        if let Some((lists, room, ids)) = lists {
            self.launch_with(
                &SegmentClassesList { offsets, segments, odd_sorted, n, counters, lists, ids, room },
                shape,
                Overlap::WithPrevious,
            )?;
        }
        self.download_behind(counters, &mut c, ahead)?;
        let descent = match c[0] {
            u32::MAX => None,
            i => {
                let mut pair = [0u32; 2];
                self.download(offsets + 4 * i as u64, &mut pair)?;
                Some((i as usize, pair[0], pair[1]))
            }
        };
        if let Some(problem) = offsets_problem(c[SEGMENT_FIRST], c[SEGMENT_LAST], descent, segments, n) {
            return Err(Error::BadOffsets { problem });
        }
        Ok(std::array::from_fn(|k| c[1 + k] as usize))
    }

    /// Sorts the segments of `items` cut by `offsets` as `plan` says (keys
    /// mapped under `mode`), with `temp` pointing at its storage. The long
    /// segments' sorts (by `opts`' algorithm) get storage of their own once
    /// the counts say how long the longest is, before any segment is sorted: in
    /// `long_room` (address, bytes), storage the caller has free, where
    /// it fits. `spans`: the table of each segment's span, where the plan
    /// says the caller knows them (`OffsetsPlan::with_known_spans`).
    /// `ahead`: launches that neither read back nor change the offsets or
    /// the lists, queued behind the copy of the classes' counts, so that
    /// the GPU runs them while the host waits (the sample sort's second
    /// scatter); the segments' sorts run after them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_offsets(
        &self,
        items: &Items,
        offsets: DevPtr,
        plan: &OffsetsPlan,
        opts: &SortOptions,
        mode: u32,
        temp: DevPtr,
        spans: Option<DevPtr>,
        long_room: Option<(DevPtr, usize)>,
        ahead: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        debug_assert_eq!(plan.ids.is_some(), spans.is_some(), "the plan's spans, and the spans given");
        let at = |offset: usize| temp + offset as u64;
        let lists = at(plan.lists);
        let ids = plan.ids.map(at);
        let room = (plan.room > 0).then_some((lists, plan.room, ids.unwrap_or(0)));
        let counts =
            self.count_offsets(offsets, plan.segments, plan.n, plan.odd_equal, at(plan.counters), room, ahead)?;
        let p = self.policy();
        let kind = plan.shape.kind;
        let classes = OffsetsLaunches::new(&counts, kind, plan.stable, ids.is_some(), p);
        let (long_start, long_count) = classes.long;
        let mut long = vec![0u64; long_count];
        self.download(lists + 8 * long_start as u64, &mut long)?;
        let long: Vec<(usize, usize)> =
            long.iter().map(|&e| (e as u32 as usize, ((e >> 32) - (e & 0xffff_ffff)) as usize)).collect();
        // The merge sort's plan for the longest segment: its storage serves every shorter one.
        let inner = plan.shape.words();
        let longest = long.iter().map(|l| l.1).max().unwrap_or(0);
        let long_plan = SortPlan::new(opts, inner, longest, p)?;
        self.check_plan(&classes)?;
        self.check_plan(&long_plan)?;
        let sort = |long_temp| {
            let body = |items: &Items| {
                // The launches of a few blocks run on a second stream
                // beside the others (none while profiling).
                let side = if classes.beside > 0 { self.beside()? } else { None };
                if let Some(side) = side {
                    self.fork(side)?;
                }
                let sorted = classes.classes.iter().enumerate().try_for_each(|(i, (k, start, count))| {
                    let on = side.filter(|_| i < classes.beside).unwrap_or(self);
                    let segments = Segments::Listed { list: lists + 8 * *start as u64, count: *count };
                    let known = spans.zip(ids).map(|(spans, ids)| KnownSpans { spans, ids: ids + 4 * *start as u64 });
                    on.sort_segments_kernel(items, segments, k, known)
                });
                // Joined whether or not a launch failed: the storage is freed
                // only after the side stream's launches.
                if let Some(side) = side {
                    self.join(side)?;
                }
                sorted?;
                for &(start, len) in &long {
                    let plan = SortPlan::new(opts, inner, len, p)?;
                    self.run_sort(&items.range(start, len), &plan, 0, long_temp)?;
                }
                Ok(())
            };
            self.on_words(items, plan.shape, plan.widened.map(at), mode, body)
        };
        match long_room.filter(|&(_, bytes)| long_plan.temp_bytes <= bytes) {
            Some((room, _)) => sort(room),
            // A nested request: the cached storage holds the lists, so this
            // is a one-off allocation.
            None => self.with_scratch(None, long_plan.temp_bytes, sort),
        }
    }
}

/// What is wrong with offsets (`None`: nothing), from their first and last
/// values, the first descent `(i, offsets[i], offsets[i + 1])` if any, and `n`.
pub(crate) fn offsets_problem(
    first: u32,
    last: u32,
    descent: Option<(usize, u32, u32)>,
    segs: usize,
    n: usize,
) -> Option<String> {
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
