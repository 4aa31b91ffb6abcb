//! Plans of the operations that make or apply a permutation: argsort (the
//! keys sorted as a copy beside their positions) and the stable key-value
//! sort (the keys sorted with their positions as ranks, then the values
//! gathered), over a full sort or a segmented one (`Inner`); and how a
//! full key-value sort moves its values (`PairsPlan`).

use super::layout::Layout;
use super::segments::{OffsetsPlan, RowsPlan};
use super::{Algo, SortPlan, SortShape};
use crate::error::Result;
use crate::options::SortOptions;
use crate::policy::{self, Policy};

/// A sort an argsort or a stable sort runs inside its own storage.
pub(crate) trait Inner {
    fn temp_bytes(&self) -> usize;
}

impl Inner for SortPlan {
    fn temp_bytes(&self) -> usize {
        self.temp_bytes
    }
}

impl Inner for RowsPlan {
    fn temp_bytes(&self) -> usize {
        self.temp_bytes
    }
}

impl Inner for OffsetsPlan {
    fn temp_bytes(&self) -> usize {
        self.temp_bytes
    }
}

/// An argsort's storage: the copy of the keys that is sorted; for stable
/// `u64` positions, the `u32` ranks and the `u64` sequence they are
/// widened from; then the sort's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArgsortPlan<P> {
    pub copy: usize,
    /// Stable `u64` positions: `(u32 ranks, u64 iota)`.
    pub widen: Option<(usize, usize)>,
    pub inner_at: usize,
    pub inner: P,
    pub temp_bytes: usize,
}

impl<P: Inner> ArgsortPlan<P> {
    /// `n` keys of `key_bytes`; `widen` for stable `u64` positions.
    pub fn new(n: usize, key_bytes: usize, widen: bool, inner: P) -> Self {
        let mut l = Layout::default();
        let copy = l.region(n * key_bytes);
        let widen = widen.then(|| (l.region(n * 4), l.region(n * 8)));
        let inner_at = l.region(inner.temp_bytes());
        ArgsortPlan { copy, widen, inner_at, inner, temp_bytes: l.bytes() }
    }
}

/// The storage of a key-value sort whose values move once, at the end: the
/// keys sorted with their `u32` positions as payloads (as ranks when
/// stable), then the values gathered by the sorted positions into `moved`
/// and copied back. `moved` lies in the sort's own storage when that is
/// large enough (the sort is over by the gather), else in a region of its
/// own: such a sort needs about the storage of one that moves its values
/// with the keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GatherPlan<P> {
    /// Ranks when stable, plain payloads otherwise.
    pub stable: bool,
    pub positions: usize,
    pub moved: usize,
    pub inner_at: usize,
    pub inner: P,
    pub temp_bytes: usize,
}

impl<P: Inner> GatherPlan<P> {
    /// `n` items with values of `val_bytes`, `inner` sorting the keys with
    /// the positions.
    pub fn new(n: usize, val_bytes: usize, stable: bool, inner: P) -> Self {
        let mut l = Layout::default();
        let positions = l.region(n * 4);
        let inner_at = l.region(inner.temp_bytes());
        let moved = if inner.temp_bytes() >= n * val_bytes { inner_at } else { l.region(n * val_bytes) };
        GatherPlan { stable, positions, moved, inner_at, inner, temp_bytes: l.bytes() }
    }
}

/// How a full key-value sort moves its values: with their keys through
/// every pass, or once at the end (`GatherPlan`). The values are gathered
/// when the sort is stable (the positions rank equal keys), and when the
/// positions make the merge sort's items narrower than the values do (4-byte
/// keys with 8-byte values: 8-byte items instead of 16, so twice the tile
/// and a third fewer bytes each pass) in sorts of at least
/// `policy.gather_values_min_items` (below, the gather's own launches cost
/// what the narrower passes save).
///
/// A stable sort moves 4-byte values with their keys where the merge sort
/// keeps ties in input order by itself (`SortPlan::keeps_ties_itself`), and
/// gathers them otherwise: the keys sorted with their positions as ranks
/// (their merge sort, too, keeps ties by its stable step 1 rather than by
/// comparing ranks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PairsPlan {
    WithKeys {
        plan: SortPlan,
        /// At least what the sort of the same items by another way needs
        /// at the sizes below (the stable sort by the sample sort, which
        /// ranks), so that storage grows with `n`.
        temp_bytes: usize,
    },
    Gathered {
        plan: GatherPlan<SortPlan>,
        /// At least what moving the values with the keys needs, so that
        /// storage grows with `n` across the switch.
        temp_bytes: usize,
    },
}

impl PairsPlan {
    /// The plan of a sort of `n` items of `shape` (key-only items: always
    /// `WithKeys`).
    pub fn new(opts: &SortOptions, shape: SortShape, n: usize, p: &Policy) -> Result<Self> {
        let vb = shape.kind.val_bytes();
        let gathered = |stable, at_least| -> Result<Self> {
            let inner = SortPlan::new(opts, shape.positioned(stable), n, p)?;
            let plan = GatherPlan::new(n, vb, stable, inner);
            Ok(PairsPlan::Gathered { plan, temp_bytes: plan.temp_bytes.max(at_least) })
        };
        if vb > 0 && opts.stable {
            if vb != 4 || !SortPlan::keeps_ties_itself(opts, shape.kind, n, p) {
                return gathered(true, 0);
            }
            // Past the sizes `Auto` sorts these stably by the sample sort, keep its storage.
            let at_least = match p.past_sample_range(opts.algorithm, shape.ranked().kind, n) {
                Some(top) => PairsPlan::new(opts, shape, top, p)?.temp_bytes(),
                None => 0,
            };
            let plan = SortPlan::new(opts, shape, n, p)?;
            return Ok(PairsPlan::WithKeys { plan, temp_bytes: plan.temp_bytes.max(at_least) });
        }
        let with_keys = SortPlan::new(opts, shape, n, p)?;
        let merges = matches!(with_keys.algo, Algo::MergeSort(m) if m.passes > 0);
        let narrower = shape.positioned(false).kind.item_bytes() < shape.kind.item_bytes();
        if vb > 0 && merges && narrower && n >= p.gather_values_min_items {
            gathered(false, with_keys.temp_bytes)
        } else {
            Ok(PairsPlan::WithKeys { plan: with_keys, temp_bytes: with_keys.temp_bytes })
        }
    }

    pub fn temp_bytes(&self) -> usize {
        match self {
            PairsPlan::WithKeys { temp_bytes, .. } => *temp_bytes,
            PairsPlan::Gathered { temp_bytes, .. } => *temp_bytes,
        }
    }

    /// The most temporary storage this sort needs on any GPU.
    pub fn temp_bytes_any_gpu(opts: &SortOptions, shape: SortShape, n: usize) -> usize {
        policy::ALL
            .iter()
            .filter_map(|p| PairsPlan::new(opts, shape, n, p).ok())
            .map(|p| p.temp_bytes())
            .max()
            .unwrap_or(0)
    }
}

impl<P: Inner> Inner for ArgsortPlan<P> {
    fn temp_bytes(&self) -> usize {
        self.temp_bytes
    }
}

impl<P: Inner> Inner for GatherPlan<P> {
    fn temp_bytes(&self) -> usize {
        self.temp_bytes
    }
}
