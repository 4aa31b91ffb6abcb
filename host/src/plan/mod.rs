//! Plans: every decision of an operation resolved once, before anything
//! runs, from the options, what is sorted, `n` and the GPU's tuning table
//! (`policy`). A plan holds the kernels, their launch shapes and the layout
//! of the temporary storage; the storage query (`Gpu::sort_temp_bytes`)
//! reads its layout, the launch check validates its launches, the launchers
//! (`exec`) take it.

pub(crate) mod layout;
pub(crate) mod merge_runs;
pub(crate) mod merge_sort;
pub(crate) mod paper;
pub(crate) mod permute;
pub(crate) mod presorted;
pub(crate) mod sample;
pub(crate) mod segments;
pub(crate) mod splitters;

use warpsort_kernels::config::{BLOCK_THREADS, BLOCK_TILE};
use warpsort_kernels::ordered::Fields;

use crate::error::{Error, Result};
use crate::launch::{Family, ItemKind, KernelId, Shape};
use crate::options::{Algorithm, SortOptions};
use crate::policy::Policy;
use layout::Layout;
use merge_sort::MergeSortPlan;
use paper::PaperPlan;
use presorted::PresortedPlan;
use sample::SamplePlan;

/// A kernel a plan launches and the shape it launches it with.
pub(crate) type Launch = (KernelId, Shape);

/// A plan that knows its launches, for the check before anything runs.
pub(crate) trait Launches {
    /// Every kernel the plan launches with a block or shared memory that
    /// the GPU may refuse.
    fn launches(&self, out: &mut Vec<Launch>);
}

/// What a sort sorts: the items as the kernels see them, and for keys
/// stored as fields (16-bit keys, tuples, byte strings) where those lie:
/// those that fill an aligned word are read through their view
/// (`Gpu::key_view`), the others encoded into a copy of ordered words
/// around the sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SortShape {
    pub kind: ItemKind,
    pub fields: Option<Fields>,
}

impl SortShape {
    /// Keys of `key_bytes` (4 or 8; 2: 16-bit keys, encoded) with payloads
    /// of `val_bytes` (0, 4, 8).
    pub fn new(key_bytes: usize, val_bytes: usize) -> Self {
        let fields = (key_bytes == 2).then(|| Fields::new(2).with(0, 2, 0));
        SortShape { kind: ItemKind::new(key_bytes.max(4), val_bytes), fields }
    }

    /// The same items with keys already in their words (nothing to encode).
    pub fn words(self) -> Self {
        SortShape { fields: None, ..self }
    }

    /// Bytes of the encoded copy of `n` keys (0 for keys that are their
    /// own words).
    pub fn encoded_bytes(self, n: usize) -> usize {
        if self.fields.is_some() { n * self.kind.key_bytes() } else { 0 }
    }

    /// The same keys ranked by their positions (stable sorts).
    pub fn ranked(self) -> Self {
        SortShape { kind: self.kind.ranked(), ..self }
    }

    /// The same keys with their `u32` positions as payloads: ranks when
    /// `stable`, plain payloads otherwise (values gathered after the sort).
    pub fn positioned(self, stable: bool) -> Self {
        let kind = self.kind.with_vals(4);
        SortShape { kind: if stable { kind.ranked() } else { kind }, ..self }
    }
}

/// The bitonic sorts' shapes: no temporary storage, a block tile, global
/// stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BitonicPlan {
    pub fused: bool,
    /// Block sort and fused stages: a tile per block.
    pub tile: usize,
    pub block: Shape,
    /// Threads per block of the global stages.
    pub stage_threads: u32,
}

/// How the items are sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[expect(clippy::large_enum_variant, reason = "a plan lives for one call, on the stack")]
pub(crate) enum Algo {
    /// Fewer than two items: nothing to do.
    Nothing,
    MergeSort(MergeSortPlan),
    Bitonic(BitonicPlan),
    Paper(PaperPlan),
    /// The sample sort, and the merge sort of the same items in the same
    /// storage: what runs instead while the stream is captured into a graph
    /// (the sample sort waits once), and whose regions merge the runs a
    /// scan of the order finds.
    Sample {
        sample: SamplePlan,
        merge: MergeSortPlan,
    },
}

impl Algo {
    /// The merge sort the plan runs or falls back on.
    pub fn merge(&self) -> Option<&MergeSortPlan> {
        match self {
            Algo::MergeSort(m) | Algo::Sample { merge: m, .. } => Some(m),
            _ => None,
        }
    }
}

/// Every decision of one full sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SortPlan {
    pub n: usize,
    pub shape: SortShape,
    /// Keys stored as fields: the offset of their encoded copy in temporary
    /// storage (planned for every layout; keys that fill an aligned word
    /// leave it unused: `Gpu::key_view`).
    pub widened: Option<usize>,
    /// Where the algorithm's own regions start in temporary storage.
    pub algo_at: usize,
    pub algo: Algo,
    /// The scan of the input's order a merge sort or a sample sort makes
    /// first, when it makes one.
    pub presorted: Option<PresortedPlan>,
    pub temp_bytes: usize,
}

impl SortPlan {
    /// The plan of a sort of `n` items of `shape` with `opts` on a GPU of
    /// tuning table `p`. Options the kernels do not support are refused
    /// here, whatever `n`.
    pub fn new(opts: &SortOptions, shape: SortShape, n: usize, p: &Policy) -> Result<Self> {
        opts.validate()?;
        let kind = shape.kind;
        // Stable sorts of pairs: ranked items, or (`opts.stable`) pairs whose
        // values move with their keys, which only a merge or sample sort
        // that keeps ties in order can sort (`permute::PairsPlan` asks only
        // there). The table knows them all as ranked items.
        let stable = SortPlan::ties_in_order(opts, kind);
        let table_kind = if stable { kind.ranked() } else { kind };
        let algorithm = p.algorithm(opts.algorithm, table_kind, n);
        if stable && !kind.is_ranked() && !SortPlan::keeps_ties_itself(opts, kind, n, p) {
            return Err(Error::BadConfig(format!(
                "a stable sort of {kind:?} items by {} needs ranks (sort them as ranked items)",
                algorithm.name()
            )));
        }
        let in_order = stable && MergeSortPlan::keeps_ties(&opts.merge_sort, kind);
        let algo = match algorithm {
            // `Auto` is resolved: the arm keeps the match whole.
            Algorithm::Auto | Algorithm::MergeSort => {
                // Resolved (and so checked) whatever `n`.
                let plan = MergeSortPlan::new(&opts.merge_sort, kind, n, p)?;
                let plan = if in_order { plan.in_order() } else { plan };
                if n < 2 { Algo::Nothing } else { Algo::MergeSort(plan) }
            }
            _ if n < 2 => Algo::Nothing,
            Algorithm::Bitonic | Algorithm::BitonicNaive => Algo::Bitonic(BitonicPlan {
                fused: opts.algorithm == Algorithm::Bitonic,
                tile: BLOCK_TILE as usize,
                block: Shape::new(n.div_ceil(BLOCK_TILE as usize) as u32, BLOCK_THREADS)
                    .with_smem(BLOCK_TILE * kind.item_bytes() as u32),
                stage_threads: p.bitonic_stage_threads,
            }),
            Algorithm::WarpsortPaper => Algo::Paper(PaperPlan::new(&opts.paper, kind, n, p)?),
            Algorithm::SampleSort => {
                let merge = MergeSortPlan::new(&opts.merge_sort, kind, n, p)?;
                let merge = if in_order { merge.in_order() } else { merge };
                Algo::Sample { sample: SamplePlan::new(opts, kind, n, p)?, merge }
            }
        };
        // Storage grows with `n`: past the sizes `Auto` sorts by the sample
        // sort, the merge sort keeps the storage the largest of them needs.
        // (Pairs sorted stably in place keep what their ranked sort needs:
        // `permute::PairsPlan`.)
        let kept = match p.past_sample_range(opts.algorithm, table_kind, n) {
            Some(top) if table_kind == kind => SamplePlan::new(opts, kind, top, p)?.temp_bytes,
            _ => 0,
        };
        let algo_bytes = kept.max(match &algo {
            Algo::MergeSort(m) => m.temp_bytes,
            Algo::Paper(pp) => pp.temp_bytes,
            Algo::Sample { sample, merge } => sample.temp_bytes.max(merge.temp_bytes),
            Algo::Nothing | Algo::Bitonic(_) => 0,
        });
        let mut l = Layout::default();
        let widened = (shape.fields.is_some() && n >= 2).then(|| l.region(shape.encoded_bytes(n)));
        let algo_at = if algo_bytes > 0 { l.region(algo_bytes) } else { l.next() };
        let presorted = match algo.merge() {
            Some(m) if m.passes > 0 && opts.presorted.scans(n, p) => {
                Some(PresortedPlan::new(kind, n, l.region(PresortedPlan::WORDS_BYTES), p))
            }
            _ => None,
        };
        Ok(SortPlan { n, shape, widened, algo_at, algo, presorted, temp_bytes: l.bytes() })
    }

    /// Whether a sort of `kind` items with `opts` keeps equal keys in input
    /// order: ranked items, and pairs sorted with `opts.stable` (key-only
    /// sorts need no order among equal keys).
    pub fn ties_in_order(opts: &SortOptions, kind: ItemKind) -> bool {
        kind.is_ranked() || (opts.stable && kind.pairs())
    }

    /// Whether a stable sort of `n` pairs of `kind` (not ranked) with
    /// `opts` keeps equal keys in input order without ranks: where the
    /// table's algorithm for them (as ranked items) is the merge sort with
    /// the stable step 1 ([`MergeSortPlan::keeps_ties`]), or the sample sort
    /// (whose passes keep input order, whose stable kernels sort its buckets
    /// and whose long buckets go to that merge sort). Elsewhere they are
    /// sorted as ranked items.
    pub fn keeps_ties_itself(opts: &SortOptions, kind: ItemKind, n: usize, p: &Policy) -> bool {
        matches!(p.algorithm(opts.algorithm, kind.ranked(), n), Algorithm::MergeSort | Algorithm::SampleSort)
            && MergeSortPlan::keeps_ties(&opts.merge_sort, kind)
    }

    /// The most temporary storage this sort needs on any GPU (the tuning
    /// tables may differ in tiles and windows); for key-value sorts,
    /// `permute::PairsPlan::temp_bytes_any_gpu` is what
    /// [`Gpu::sort_temp_bytes`](crate::Gpu::sort_temp_bytes) answers.
    #[cfg(test)]
    pub fn temp_bytes_any_gpu(opts: &SortOptions, shape: SortShape, n: usize) -> usize {
        crate::policy::ALL
            .iter()
            .filter_map(|p| SortPlan::new(opts, shape, n, p).ok())
            .map(|p| p.temp_bytes)
            .max()
            .unwrap_or(0)
    }
}

impl Launches for SortPlan {
    fn launches(&self, out: &mut Vec<Launch>) {
        let kind = self.shape.kind;
        match &self.algo {
            Algo::Nothing => {}
            Algo::MergeSort(m) => m.launches(kind, out),
            Algo::Bitonic(b) => {
                out.push((KernelId::new(Family::BlockSort, kind), b.block));
                out.push((KernelId::new(Family::BitonicFused, kind), b.block));
            }
            Algo::Paper(pp) => pp.launches(self.n, kind, out),
            Algo::Sample { sample, merge } => {
                sample.launches(out);
                merge.launches(kind, out);
            }
        }
        if let Some(p) = &self.presorted {
            p.launches(out);
        }
    }
}

#[cfg(test)]
mod tests;
