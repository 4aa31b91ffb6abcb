//! Argsort and the key-value sorts that move their values once, over any
//! sort (`sort`: a full sort, rows, segments given by offsets): the keys
//! sorted with positions as payloads (or ranks, compared after the key when
//! stable), then for the key-value sorts the values gathered by the sorted
//! positions.

use crate::error::Result;
use crate::exec::Pending;
use crate::exec::keys::word;
use crate::gpu::Gpu;
use crate::launch::families::{Gather, Iota, IotaRows};
use crate::launch::{DevPtr, ItemKind, Items};
use crate::plan::permute::{ArgsortPlan, GatherPlan};

/// Which positions an argsort writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Positions {
    /// Positions in the whole array.
    Global,
    /// Positions within rows of this length (`torch.sort(x, dim=-1)`'s indices).
    InRows(usize),
}

impl Gpu {
    /// Writes `0, 1, ..., n - 1` as `word` (`U32` or `U64`) at `out`.
    pub(crate) fn iota(&self, word: ItemKind, out: DevPtr, n: usize) -> Result<()> {
        self.launch(&Iota { word, out, n }, self.policy().elementwise(n))
    }

    /// Writes `positions` as `u32` at `out`.
    pub(crate) fn positions(&self, positions: Positions, out: DevPtr, n: usize) -> Result<()> {
        match positions {
            Positions::Global => self.iota(ItemKind::U32, out, n),
            Positions::InRows(row) => self.launch(&IotaRows { out, n, row }, self.policy().elementwise(n)),
        }
    }

    /// `dst[i] = src[idx[i]]` for `n` values of `bytes` (4 or 8) bytes.
    pub(crate) fn gather_values(&self, bytes: usize, src: DevPtr, idx: DevPtr, dst: DevPtr, n: usize) -> Result<()> {
        self.launch(&Gather { word: word(bytes), src, idx, dst, n }, self.policy().elementwise(n))
    }

    /// The argsort of `keys` (`key_bytes` each, 2 for 16-bit keys; left
    /// unchanged) into `out` (`out_bytes` per position): the keys sorted
    /// into the plan's storage at `temp` by `sort` with the positions as
    /// payloads, or as ranks when `stable`. `sort` is given the items (their
    /// keys at that storage, their values at `out`), what they lack yet
    /// (the keys where they lie, the positions where positions in the whole
    /// array: [`Pending`], which it writes by [`Gpu::settle`] or
    /// [`Gpu::run_sort_from`] reads and makes as it goes), and its own
    /// storage.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_argsort<P>(
        &self,
        keys: &Items,
        key_bytes: usize,
        out: DevPtr,
        out_bytes: usize,
        stable: bool,
        positions: Positions,
        plan: &ArgsortPlan<P>,
        temp: DevPtr,
        sort: impl FnOnce(&Items, Pending, DevPtr) -> Result<()>,
    ) -> Result<()> {
        let n = keys.n;
        let at = |offset: usize| temp + offset as u64;
        // The keys are sorted into a copy, beside the positions; keys of
        // another width than the items say are copied here.
        let copy = Items::new(at(plan.copy), 0, n, keys.kind.keys_only());
        let keys_at = match key_bytes == copy.kind.key_bytes() {
            true => Some(keys.keys),
            false => {
                self.copy_dtod(copy.keys, keys.keys, n * key_bytes)?;
                None
            }
        };
        // Positions in the whole array are made where the sort makes them;
        // positions in rows are written here.
        let pending = Pending { keys: keys_at, positions: positions == Positions::Global };
        debug_assert!(pending.positions || (out_bytes == 4 && plan.widen.is_none()), "positions in rows are u32");
        if !pending.positions {
            self.positions(positions, out, n)?;
        }
        let inner = at(plan.inner_at);
        match (stable, plan.widen) {
            (false, _) => sort(&copy.with_vals(out, out_bytes), pending, inner),
            // u32 positions are the ranks themselves.
            (true, None) => sort(&copy.with_ranks(out), pending, inner),
            // Stable u64 positions are ranked as u32, then widened by a gather from 0..n.
            (true, Some((ranks, iota))) => {
                self.iota(ItemKind::U64, at(iota), n)?;
                sort(&copy.with_ranks(at(ranks)), pending, inner)?;
                self.gather_values(8, at(iota), at(ranks), out, n)
            }
        }
    }

    /// The key-value sort of `items` (values of `val_bytes`) that moves the
    /// values once: the keys sorted by `sort` (given the items, their
    /// positions still to make, as in [`Gpu::run_argsort`], and its own
    /// storage) with their positions as payloads (as ranks when the plan is
    /// stable), then the values gathered by the sorted positions.
    pub(crate) fn run_gathered<P>(
        &self,
        items: &Items,
        val_bytes: usize,
        plan: &GatherPlan<P>,
        temp: DevPtr,
        sort: impl FnOnce(&Items, Pending, DevPtr) -> Result<()>,
    ) -> Result<()> {
        let n = items.n;
        let at = |offset: usize| temp + offset as u64;
        let (positions, moved) = (at(plan.positions), at(plan.moved));
        let keyed = if plan.stable { items.with_ranks(positions) } else { items.with_vals(positions, 4) };
        sort(&keyed, Pending { keys: None, positions: true }, at(plan.inner_at))?;
        // The sort is over: `moved` may reuse its storage.
        self.gather_values(val_bytes, items.vals, positions, moved, n)?;
        self.copy_dtod(items.vals, moved, n * val_bytes)
    }
}
