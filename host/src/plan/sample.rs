//! The sample sort's plan (`Algorithm::SampleSort`, issue 15): two
//! distribution passes (`warpsort_kernels::distribute`) cut the items into
//! `BUCKETS * BUCKETS` buckets, the first from the input into temporary
//! storage, the second back, then the segmented sort of buckets given by
//! offsets sorts each bucket in place (buckets past a block's 8192 items by
//! the merge sort). The second pass's segments are the first pass's buckets,
//! known only once it ran: a kernel makes its tables on the GPU, and the
//! plan sizes them, and the pass's grids, for the most blocks any such cut
//! can make.

use warpsort_kernels::config::compact_words;
use warpsort_kernels::config::distribute::{
    self, BUCKETS, BlockWork, FINAL_BUCKETS, FIRST_PASS_SPLITTERS, MAX_OVERSAMPLE, MIN_OVERSAMPLE, SCAN_PART,
    SCAN_THREADS, SPLITTER_KEYS, SegmentWork, TABLES_THREADS, THREADS, WAYS, count_smem_bytes, sample_smem_bytes,
    sample_threads, scan_smem_bytes, scatter_smem_bytes, tables_smem_bytes,
};

use crate::error::{Error, Result};
use crate::launch::{Family, ItemKind, KernelId, Shape};
use crate::options::{Algorithm, Presorted, SortOptions};
use crate::plan::layout::Layout;
use crate::plan::merge_sort::STABLE_TILE_KINDS;
use crate::plan::segments::OffsetsPlan;
use crate::plan::{Launch, Launches, SortPlan, SortShape};
use crate::policy::{Policy, SAMPLE};

/// Every decision and region of one sample sort of `n` items of `kind`
/// (ordered words: keys of 4 or 8 bytes, plain values or ranks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SamplePlan {
    pub n: usize,
    pub kind: ItemKind,
    /// Keys per block of the first and the second pass.
    pub chunks: [usize; 2],
    /// Samples a way, each pass: more where the final buckets would be
    /// long ([`SamplePlan::oversample`]).
    pub oversample: u32,
    /// The bucket offsets' launch, of each pass (one segment, then
    /// `BUCKETS`): element-wise, as the GPU's table says.
    pub offsets_shapes: [Shape; 2],
    /// The items between the passes: keys, values.
    pub keys: usize,
    pub vals: usize,
    /// A byte a key: its label in the pass (the splitters below it), from
    /// the count to the scatter.
    pub labels: usize,
    /// `WAYS` splitters a segment: the second pass's `BUCKETS` segments',
    /// then the first pass's (`FIRST_PASS_SPLITTERS`).
    pub splitters: usize,
    /// The final buckets' spans from the splitters, two keys a bucket,
    /// where the buckets' kernels take them (items they sort as compact
    /// words: `config::compact_words`).
    pub spans: Option<usize>,
    /// `BUCKETS` counts a block, and their scan: its state (the ticket and
    /// a word a part, [`SamplePlan::scan_parts`]).
    pub counts: usize,
    pub starts: usize,
    pub scan_state: usize,
    /// The pass's `BlockWork` and `SegmentWork` tables.
    pub blocks: usize,
    pub segments: usize,
    /// Bucket offsets (`u32`): the first pass's, then the final buckets'.
    pub offsets: usize,
    /// The most blocks a pass has.
    pub max_blocks: usize,
    /// The segmented sort of the final buckets, and its storage.
    pub buckets: OffsetsPlan,
    pub buckets_at: usize,
    /// The options of that sort: the merge sort for long buckets, each
    /// scanned for its order first.
    pub segment_opts: SortOptions,
    /// The items between the passes and their labels (offset, bytes),
    /// free once the second pass has moved them: the long buckets' merge
    /// sorts' storage where it fits.
    pub long_room: (usize, usize),
    pub temp_bytes: usize,
}

impl SamplePlan {
    /// The plan of `n` items of `kind` (words, ascending) sorted with `opts`.
    pub fn new(opts: &SortOptions, kind: ItemKind, n: usize, p: &Policy) -> Result<Self> {
        if kind.is_custom() {
            return Err(Error::BadConfig("the sample sort is not built for user key types".into()));
        }
        if n > u32::MAX as usize {
            return Err(Error::TooLong { len: n, max: u32::MAX as usize });
        }
        let stable = SortPlan::ties_in_order(opts, kind);
        if stable && !STABLE_TILE_KINDS.contains(&kind.rank_as_value()) {
            return Err(Error::BadConfig(format!("the sample sort keeps ties of {kind:?} items only by ranks")));
        }
        let cfg = opts.sample_sort;
        cfg.validate()?;
        let per_block = n.div_ceil(SAMPLE.first_blocks);
        let tuned = [per_block.clamp(SAMPLE.min_chunk, SAMPLE.max_chunk), SAMPLE.second_chunk];
        let or_tuned = |asked: usize, tuned: usize| if asked == 0 { tuned } else { asked };
        let chunks = [or_tuned(cfg.chunk, tuned[0]), or_tuned(cfg.second_chunk, tuned[1])];
        let oversample = match cfg.oversample {
            0 => SamplePlan::oversample(n, kind.key_bytes()),
            asked => asked,
        };
        // The second pass: every segment adds at most one partial chunk.
        let max_blocks = n.div_ceil(chunks[0]).max(n.div_ceil(chunks[1]) + BUCKETS as usize).max(1);
        let (kb, segs) = (kind.key_bytes(), SamplePlan::segments_of(1));
        let mut l = Layout::default();
        let (keys, vals) = l.items(n, kind);
        let labels = l.region(n);
        let splitters = l.region(SPLITTER_KEYS as usize * kb);
        let words = compact_words(kind.rank_as_value().item_bytes() as u32);
        let spans = words.then(|| l.region(2 * FINAL_BUCKETS as usize * kb));
        let counts = l.region(max_blocks * BUCKETS as usize * 4);
        let starts = l.region((max_blocks * BUCKETS as usize + 1) * 8);
        let scan_state = l.region(SamplePlan::scan_state_bytes(max_blocks * BUCKETS as usize));
        let blocks = l.region(max_blocks * size_of::<BlockWork>());
        let segments = l.region(segs * size_of::<SegmentWork>());
        let offsets = l.region((segs * BUCKETS as usize + 1) * 4);
        // Odd buckets hold keys equal to a splitter, in input order. With
        // values (ranks too) both passes keep input order, so a stable sort
        // of the buckets keeps the whole sort stable. Each bucket's span
        // is known from the splitters.
        let shape = SortShape { kind, fields: None };
        let (final_buckets, known) = (segs * BUCKETS as usize, spans.is_some());
        let offsets_plan = if known {
            OffsetsPlan::with_known_spans(shape, n, final_buckets)
        } else {
            OffsetsPlan::new(shape, n, final_buckets)
        };
        let buckets = OffsetsPlan { odd_equal: true, stable, ..offsets_plan };
        let buckets_at = l.region(buckets.temp_bytes);
        // Long buckets by the merge sort, which first scans their order (a
        // bucket between splitters may hold few distinct keys). Equality
        // buckets are sorted already: nothing sorts them.
        let segment_opts = SortOptions { algorithm: Algorithm::MergeSort, presorted: Presorted::Always, ..*opts };
        let offsets_shapes = [0, 1].map(|pass| p.elementwise(SamplePlan::segments_of(pass) * BUCKETS as usize + 1));
        Ok(SamplePlan {
            n,
            kind,
            chunks,
            oversample,
            offsets_shapes,
            keys,
            vals,
            labels,
            splitters,
            spans,
            counts,
            starts,
            scan_state,
            blocks,
            segments,
            offsets,
            max_blocks,
            buckets,
            buckets_at,
            segment_opts,
            long_room: (keys, labels + n - keys),
            temp_bytes: l.bytes(),
        })
    }
}

/// The launch shapes of one pass: every kernel's, the one place they are
/// made.
impl SamplePlan {
    /// Samples a way for `n` keys of `key_bytes`, both passes: one for
    /// every `SAMPLE.keys_per_sample` keys of the final buckets' average
    /// (`n / WAYS^2`), a power of two from `MIN_OVERSAMPLE` to
    /// `MAX_OVERSAMPLE` whose sort fits `SAMPLE.max_sample_bytes`. Either
    /// pass's buckets differ by about `1 / sqrt(oversample)` of their
    /// share, and the two errors multiply.
    pub fn oversample(n: usize, key_bytes: usize) -> u32 {
        let bucket = n / (WAYS * WAYS) as usize;
        let wanted = (bucket / SAMPLE.keys_per_sample).next_power_of_two();
        let mut o = wanted.clamp(MIN_OVERSAMPLE as usize, MAX_OVERSAMPLE as usize) as u32;
        while o > MIN_OVERSAMPLE && sample_smem_bytes(key_bytes as u32, o) > SAMPLE.max_sample_bytes {
            o /= 2;
        }
        o
    }

    /// Into how many parts the scan of `m` counts cuts them: a block each.
    pub fn scan_parts(m: usize) -> usize {
        m.div_ceil(SCAN_PART as usize).max(1)
    }

    /// Bytes of the scan's state for `m` counts: the ticket and a word a
    /// part, zeroed before each scan.
    pub fn scan_state_bytes(m: usize) -> usize {
        8 * (SamplePlan::scan_parts(m) + 1)
    }

    /// A block per part of `m` counts.
    pub fn scan_shape(m: usize) -> Shape {
        Shape::new(SamplePlan::scan_parts(m) as u32, SCAN_THREADS).with_smem(scan_smem_bytes(SCAN_THREADS))
    }

    /// A block per segment.
    pub fn sample_shape(&self, segs: usize) -> Shape {
        let kb = self.kind.key_bytes() as u32;
        Shape::new(segs as u32, sample_threads(self.oversample)).with_smem(sample_smem_bytes(kb, self.oversample))
    }

    /// A block per chunk.
    pub fn count_shape(&self, blocks: usize) -> Shape {
        Shape::new(blocks as u32, THREADS).with_smem(count_smem_bytes(self.kind.key_bytes() as u32))
    }

    /// A thread a final bucket: their spans.
    pub fn spans_shape(&self) -> Shape {
        self.offsets_shapes[1]
    }

    /// Where the splitters of pass `pass` (0 or 1) lie: the first pass's
    /// past the second's, so that both stay.
    pub fn splitters_of(&self, pass: usize) -> usize {
        match pass {
            0 => self.splitters + FIRST_PASS_SPLITTERS as usize * self.kind.key_bytes(),
            _ => self.splitters,
        }
    }

    /// The segments of pass `pass` (0 or 1): the whole input, then the
    /// first pass's buckets.
    pub fn segments_of(pass: usize) -> usize {
        match pass {
            0 => 1,
            _ => BUCKETS as usize,
        }
    }

    /// The first pass's blocks, a chunk each: as many as its sampling
    /// writes tables for (`distribute::first_tables`, as
    /// `config::distribute::blocks` makes them).
    pub fn first_blocks(&self) -> usize {
        distribute::segments(&[(0, self.n as u64)], self.chunks[0] as u64).map(|s| s.count as usize).sum()
    }

    /// One block: the second pass's tables.
    pub fn tables_shape(&self) -> Shape {
        Shape::new(1, TABLES_THREADS).with_smem(tables_smem_bytes(TABLES_THREADS))
    }

    /// A block per chunk.
    pub fn scatter_shape(&self, blocks: usize) -> Shape {
        Shape::new(blocks as u32, THREADS)
            .with_smem(scatter_smem_bytes(self.kind.key_bytes() as u32, self.kind.val_bytes() as u32))
    }
}

impl Launches for SamplePlan {
    fn launches(&self, out: &mut Vec<Launch>) {
        let (word, segs) = (self.kind.keys_only(), SamplePlan::segments_of(1));
        let scatter = KernelId::new(Family::DistributeScatter, self.kind.rank_as_value());
        // The first pass's kernels of keys read through a view as well.
        for viewed in [false, true] {
            let family = |f: Family| if viewed { f.viewed() } else { f };
            out.push((KernelId::new(family(Family::DistributeSample), word), self.sample_shape(segs)));
            out.push((KernelId::new(family(Family::DistributeCount), word), self.count_shape(self.max_blocks)));
            let scatter = KernelId { family: family(Family::DistributeScatter), ..scatter };
            out.push((scatter, self.scatter_shape(self.max_blocks)));
        }
        out.push((KernelId::plain(Family::DistributeScan), SamplePlan::scan_shape(self.max_blocks * BUCKETS as usize)));
        out.push((KernelId::plain(Family::DistributeOffsets), self.offsets_shapes[1]));
        out.push((KernelId::plain(Family::DistributeTables), self.tables_shape()));
        if self.spans.is_some() {
            out.push((KernelId::new(Family::DistributeSpans, word), self.spans_shape()));
        }
    }
}

#[cfg(test)]
mod tests {
    use warpsort_kernels::config::distribute::{MAX_SAMPLE_THREADS, blocks};

    use super::*;

    #[test]
    fn more_samples_where_buckets_would_be_long() {
        assert_eq!(SamplePlan::oversample(1 << 24, 4), MIN_OVERSAMPLE, "buckets of 256 on average");
        assert_eq!(SamplePlan::oversample(1 << 26, 4), 16, "buckets of 1024");
        assert_eq!(SamplePlan::oversample(1 << 28, 4), MAX_OVERSAMPLE, "buckets of 4096");
        assert_eq!(SamplePlan::oversample(1 << 28, 8), MAX_OVERSAMPLE / 2, "64 KiB of u64 samples");
        for n in [0usize, 1, 1 << 20, (1 << 26) + (1 << 16), 1 << 28, u32::MAX as usize] {
            for kb in [4, 8] {
                let o = SamplePlan::oversample(n, kb);
                assert!(o.is_power_of_two() && (MIN_OVERSAMPLE..=MAX_OVERSAMPLE).contains(&o), "n={n}");
                assert!(sample_smem_bytes(kb as u32, o) <= SAMPLE.max_sample_bytes, "n={n}");
                let threads = sample_threads(o);
                assert!(threads.is_multiple_of(32) && threads <= MAX_SAMPLE_THREADS, "n={n}: {threads} threads");
            }
        }
    }

    #[test]
    fn the_tables_hold_every_cut_of_the_second_pass() {
        for n in [2usize, 33, 4096, 100_003, 1 << 24] {
            let p = SamplePlan::new(&SortOptions::default(), ItemKind::U32U32, n, &crate::policy::HOPPER).unwrap();
            assert!(p.chunks[0] >= SAMPLE.min_chunk && p.chunks[0] <= SAMPLE.max_chunk);
            assert_eq!(p.n.div_ceil(p.chunks[0]).min(p.max_blocks), n.div_ceil(p.chunks[0]));
            // The worst cut: every bucket one key past a chunk.
            let mut segs = Vec::new();
            let (mut at, per) = (0u64, (n / BUCKETS as usize) as u64);
            for _ in 0..BUCKETS - 1 {
                segs.push((at, at + per));
                at += per;
            }
            segs.push((at, n as u64));
            assert!(blocks(&segs, p.chunks[1] as u64).count() <= p.max_blocks, "n={n}");
            assert!(p.temp_bytes >= n * 9, "n={n}: the items between the passes and their labels");
            let keys = SamplePlan::new(&SortOptions::default(), ItemKind::U32, n, &crate::policy::HOPPER).unwrap();
            assert!(keys.temp_bytes >= n * 5, "n={n}: the keys between the passes and their labels");
            for q in [&p, &keys] {
                let (at, bytes) = q.long_room;
                let item = q.kind.key_bytes() + q.kind.val_bytes();
                assert!(
                    at == q.keys && bytes >= n * (item + 1),
                    "n={n}: the long buckets' room is the items between and their labels"
                );
                assert!(
                    at + bytes <= q.splitters && at + bytes <= q.buckets_at,
                    "n={n}: nothing the buckets' sort reads lies in it"
                );
            }
            assert_eq!(p.segment_opts.algorithm, Algorithm::MergeSort, "long buckets by the merge sort");
            assert_eq!(p.segment_opts.presorted, Presorted::Always, "a long bucket's order scanned first");
            assert!(p.buckets.odd_equal, "equality buckets are left as they are");
            assert!(!p.buckets.stable, "unstable pairs, unstable buckets");
            let stable = SortOptions { stable: true, ..SortOptions::default() };
            let plan = |kind| SamplePlan::new(&stable, kind, n, &crate::policy::HOPPER).unwrap();
            assert!(plan(ItemKind::U32U32).buckets.stable && plan(ItemKind::U64Rank).buckets.stable);
            assert!(plan(ItemKind::U32U32).segment_opts.stable, "long buckets by a stable merge sort");
        }
        assert!(matches!(
            SamplePlan::new(&SortOptions::default(), ItemKind::U32, u32::MAX as usize + 1, &crate::policy::HOPPER),
            Err(Error::TooLong { .. })
        ));
    }
    #[test]
    fn asked_parameters_replace_the_tuned_ones() {
        use crate::options::SampleSortConfig;
        let n = 1 << 24;
        let asked = |cfg| SortOptions { sample_sort: cfg, ..SortOptions::default() };
        let plan = |cfg| SamplePlan::new(&asked(cfg), ItemKind::U32, n, &crate::policy::HOPPER);
        let tuned = plan(SampleSortConfig::default()).unwrap();
        let p = plan(SampleSortConfig { chunk: 1 << 13, second_chunk: 0, oversample: 32 }).unwrap();
        assert_eq!((p.chunks, p.oversample), ([1 << 13, tuned.chunks[1]], 32));
        assert!(p.max_blocks >= n >> 13, "a block per chunk");
        let p = plan(SampleSortConfig { second_chunk: SampleSortConfig::MIN_CHUNK, ..Default::default() }).unwrap();
        assert_eq!((p.chunks, p.oversample), ([tuned.chunks[0], SampleSortConfig::MIN_CHUNK], tuned.oversample));
        assert!(p.max_blocks >= n / SampleSortConfig::MIN_CHUNK + BUCKETS as usize, "each segment a partial chunk");
        for bad in [
            SampleSortConfig { chunk: 1, ..Default::default() },
            SampleSortConfig { oversample: 2 * MAX_OVERSAMPLE, ..Default::default() },
        ] {
            assert!(matches!(plan(bad), Err(Error::BadConfig(_))), "{bad:?}");
        }
    }
}
