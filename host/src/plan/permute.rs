//! Plans of the operations that make or apply a permutation: argsort (the
//! keys sorted as a copy beside their positions) and the stable key-value
//! sort (the keys sorted with their positions as ranks, then the values
//! gathered), over a full sort or a segmented one (`Inner`).

use super::SortPlan;
use super::layout::Layout;
use super::segments::{OffsetsPlan, RowsPlan};

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

/// A stable key-value sort's storage: the ranks, the gathered values, then
/// the sort's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StablePlan<P> {
    pub ranks: usize,
    pub moved: usize,
    pub inner_at: usize,
    pub inner: P,
    pub temp_bytes: usize,
}

impl<P: Inner> StablePlan<P> {
    /// `n` items with values of `val_bytes`.
    pub fn new(n: usize, val_bytes: usize, inner: P) -> Self {
        let mut l = Layout::default();
        let ranks = l.region(n * 4);
        let moved = l.region(n * val_bytes);
        let inner_at = l.region(inner.temp_bytes());
        StablePlan { ranks, moved, inner_at, inner, temp_bytes: l.bytes() }
    }
}

impl<P: Inner> Inner for ArgsortPlan<P> {
    fn temp_bytes(&self) -> usize {
        self.temp_bytes
    }
}

impl<P: Inner> Inner for StablePlan<P> {
    fn temp_bytes(&self) -> usize {
        self.temp_bytes
    }
}
