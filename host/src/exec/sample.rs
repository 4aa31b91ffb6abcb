//! The sample sort's launches (`Algorithm::SampleSort`; the plan is
//! `plan::sample`): the first distribution pass (its tables made by its
//! sampling) from the items into
//! temporary storage, the second pass's tables made on the GPU from its
//! bucket offsets (no wait), the second pass over those buckets back into
//! the items, each final bucket's span from both passes' splitters, then
//! the segmented sort of the final buckets. Each pass is placed (keys
//! counted, counts scanned, offsets written) before it scatters; the
//! second scatter runs behind the copy of the final buckets' size classes,
//! while the host waits for them.

use warpsort_kernels::config::distribute::BUCKETS;
use warpsort_kernels::ordered::View;

use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::families::{
    DistributeCount, DistributeOffsets, DistributeSample, DistributeScan, DistributeScatter, DistributeSpans,
    DistributeTables, FirstTables,
};
use crate::launch::{DevPtr, Items, Overlap};
use crate::plan::sample::SamplePlan;

impl Gpu {
    /// Sorts `items` as `plan` says, `temp` pointing at its storage: keys
    /// read through `view` (the identity: ordered words), sorted ascending
    /// as ordered words. The first pass reads them through it, so that the
    /// items hold ordered words afterwards. `src` is where the first pass
    /// reads the items (`items` themselves, or their keys elsewhere and
    /// left as they are: [`Gpu::run_sort_from`]); the second pass writes
    /// `items`.
    pub(crate) fn sample_sort(
        &self,
        src: &Items,
        items: &Items,
        plan: &SamplePlan,
        temp: DevPtr,
        view: View,
    ) -> Result<()> {
        self.sample_first(src, plan, temp, view, 0)?;
        self.sample_rest(src, items, plan, temp, view)
    }

    /// The start of [`Gpu::sample_sort`]: the first pass's sampling, which
    /// reads the keys, writes only `temp` and makes the pass's tables
    /// itself (one segment: its blocks follow from `n` and the chunk). With
    /// `scan` (the order scan's words, not 0) it runs only where they prove
    /// the input unordered (`config::order_scan::unordered`): queued behind
    /// the scan before the host reads its words, it keeps the GPU busy
    /// while the host wakes.
    pub(crate) fn sample_first(
        &self,
        items: &Items,
        plan: &SamplePlan,
        temp: DevPtr,
        view: View,
        scan: DevPtr,
    ) -> Result<()> {
        debug_assert!(items.n == plan.n && plan.first_blocks() <= plan.max_blocks);
        let first = FirstTables { blocks: temp + plan.blocks as u64, n: items.n as u64, chunk: plan.chunks[0] as u64 };
        self.sample_pass(items, 0, plan, temp, view, scan, Some(first))
    }

    /// The rest of [`Gpu::sample_sort`] after [`Gpu::sample_first`] (whose
    /// sampling ran over `src`).
    pub(crate) fn sample_rest(
        &self,
        src: &Items,
        items: &Items,
        plan: &SamplePlan,
        temp: DevPtr,
        view: View,
    ) -> Result<()> {
        debug_assert!(src.n == items.n && src.kind == items.kind);
        let at = |offset: usize| temp + offset as u64;
        let n = items.n;
        let vals = if plan.kind.pairs() { at(plan.vals) } else { 0 };
        let between = Items::new(at(plan.keys), vals, n, items.kind);
        let first = Pass { src, blocks: plan.first_blocks(), pass: 0, view };
        self.place(&first, plan, temp)?;
        self.scatter(&first, &between, plan, temp)?;
        // The second: the first's buckets, its tables from their offsets on
        // the GPU, a grid for the most blocks any such cut makes.
        let tables = DistributeTables {
            offsets: at(plan.offsets),
            chunk: plan.chunks[1],
            segments: at(plan.segments),
            blocks: at(plan.blocks),
            max_blocks: plan.max_blocks,
        };
        self.launch_with(&tables, plan.tables_shape(), Overlap::WithPrevious)?;
        self.sample_pass(&between, 1, plan, temp, View::IDENTITY, 0, None)?;
        let second = Pass { src: &between, blocks: plan.max_blocks, pass: 1, view: View::IDENTITY };
        self.place(&second, plan, temp)?;
        let spans = plan.spans.map(at);
        if let Some(spans) = spans {
            let word = items.kind.keys_only();
            self.launch_with(
                &DistributeSpans { word, splitters: at(plan.splitters), spans },
                plan.spans_shape(),
                Overlap::WithPrevious,
            )?;
        }
        let (offsets, buckets_at) = (at(plan.offsets), at(plan.buckets_at));
        let long_room = Some((at(plan.long_room.0), plan.long_room.1));
        // The final buckets' offsets are known before the second scatter
        // moves a key: their size classes are counted first, and the
        // scatter is queued behind the counts' copy, so that the GPU runs
        // it while the host waits for them and plans the buckets' launches.
        let scatter = || self.scatter(&second, items, plan, temp);
        self.run_offsets(items, offsets, &plan.buckets, &plan.segment_opts, 0, buckets_at, spans, long_room, scatter)
    }

    /// The splitters of distribution pass `pass` (0 or 1) of `src`, a block
    /// a segment, its keys read through `view`; `scan` as in
    /// [`Gpu::sample_first`]; `first`, the first pass's tables its block
    /// makes.
    #[allow(clippy::too_many_arguments)]
    fn sample_pass(
        &self,
        src: &Items,
        pass: usize,
        plan: &SamplePlan,
        temp: DevPtr,
        view: View,
        scan: DevPtr,
        first: Option<FirstTables>,
    ) -> Result<()> {
        let at = |offset: usize| temp + offset as u64;
        let sample = DistributeSample {
            word: src.kind.keys_only(),
            keys: src.keys,
            segments: at(plan.segments),
            splitters: at(plan.splitters_of(pass)),
            oversample: plan.oversample,
            scan,
            first,
            view,
        };
        self.launch_with(&sample, plan.sample_shape(SamplePlan::segments_of(pass)), Overlap::WithPrevious)
    }

    /// Places distribution pass `p`: each key's bucket labelled and
    /// counted by the pass's splitters, the counts scanned into each
    /// block's start per bucket, and the buckets' offsets written (the
    /// second pass's tables from the first's, the final buckets' for their
    /// sort). Nothing moves yet: [`Gpu::scatter`] does.
    fn place(&self, p: &Pass, plan: &SamplePlan, temp: DevPtr) -> Result<()> {
        let Pass { src, blocks, pass, view } = *p;
        let at = |offset: usize| temp + offset as u64;
        let splitters = at(plan.splitters_of(pass));
        let (word, starts) = (src.kind.keys_only(), at(plan.starts));
        let (tables, counts) = (at(plan.blocks), at(plan.counts));
        let count =
            DistributeCount { word, keys: src.keys, blocks: tables, splitters, counts, labels: at(plan.labels), view };
        self.launch_with(&count, plan.count_shape(blocks), Overlap::WithPrevious)?;
        self.scan_counts(counts, starts, blocks * BUCKETS as usize, plan, temp)?;
        let segs = SamplePlan::segments_of(pass);
        let offsets =
            DistributeOffsets { segments: at(plan.segments), starts, offsets: at(plan.offsets), segs, n: src.n };
        self.launch_with(&offsets, plan.offsets_shapes[pass], Overlap::WithPrevious)
    }

    /// Moves the items of pass `p`, placed by [`Gpu::place`], from its
    /// `src` to `dst`: each to its block's start in its bucket.
    fn scatter(&self, p: &Pass, dst: &Items, plan: &SamplePlan, temp: DevPtr) -> Result<()> {
        let Pass { src, blocks, pass, view } = *p;
        let at = |offset: usize| temp + offset as u64;
        let (splitters, labels) = (at(plan.splitters_of(pass)), at(plan.labels));
        let scatter =
            DistributeScatter { src, labels, dst, blocks: at(plan.blocks), splitters, starts: at(plan.starts), view };
        self.launch_with(&scatter, plan.scatter_shape(blocks), Overlap::WithPrevious)
    }
}

/// A distribution pass (0 or 1) of `blocks` blocks over `src`, its keys
/// read through `view`.
#[derive(Clone, Copy)]
struct Pass<'a> {
    src: &'a Items,
    blocks: usize,
    pass: usize,
    view: View,
}

impl Gpu {
    /// `starts[i]`, the sum of `counts[..i]`, for every `i <= m`: one
    /// launch, its state zeroed first.
    fn scan_counts(&self, counts: DevPtr, starts: DevPtr, m: usize, plan: &SamplePlan, temp: DevPtr) -> Result<()> {
        let state = temp + plan.scan_state as u64;
        self.zero(state, SamplePlan::scan_state_bytes(m))?;
        self.launch_with(&DistributeScan { counts, starts, m, state }, SamplePlan::scan_shape(m), Overlap::WithPrevious)
    }
}
