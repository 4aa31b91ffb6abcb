//! Full sorts of device buffers: keys, key-value pairs (stable or not), with
//! the handle's cached temporary storage or the caller's [`Scratch`].

use cudarc::driver::DevicePtrMut;

use super::{Pairs, items, shape, wide};
use crate::error::Result;
use crate::exec::wide::WideItems;
use crate::gpu::Gpu;
use crate::gpu::scratch::Scratch;
use crate::key::{Payload, SortKey};
use crate::launch::Items;
use crate::options::SortOptions;
use crate::plan::permute::PairsPlan;
use crate::plan::{SortPlan, SortShape};

/// The most items a stable sort ranks: positions `0..u32::MAX - 1` are
/// ranks, `u32::MAX` is the pads' rank.
pub const STABLE_MAX_LEN: usize = u32::MAX as usize;

impl Gpu {
    /// Sorts device keys ascending ([`Algorithm::Auto`](crate::Algorithm::Auto):
    /// the merge sort or the sample sort, whichever is faster for them).
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3.0f32, -1.0, 2.5])?;
    /// gpu.sort(&mut keys)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&keys)?, [-1.0, 2.5, 3.0]);
    /// // A view sorts part of a buffer.
    /// let mut big = gpu.stream().clone_htod(&[9u32, 8, 7, 6, 5])?;
    /// gpu.sort(&mut big.slice_mut(1..4))?;
    /// assert_eq!(gpu.stream().clone_dtoh(&big)?, [9, 6, 7, 8, 5]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort<K: SortKey>(&self, keys: &mut impl DevicePtrMut<K>) -> Result<()> {
        self.sort_with(keys, &SortOptions::default())
    }

    /// Sorts device keys with the given options.
    ///
    /// ```no_run
    /// use warpsort::{Algorithm, SortOptions};
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[1i64, -5, 3])?;
    /// gpu.sort_with(&mut keys, &SortOptions::descending())?;
    /// gpu.sort_with(&mut keys, &SortOptions::algorithm(Algorithm::Bitonic))?;
    /// assert_eq!(gpu.stream().clone_dtoh(&keys)?, [-5, 1, 3]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_with<K: SortKey>(&self, keys: &mut impl DevicePtrMut<K>, opts: &SortOptions) -> Result<()> {
        self.sort_keys(keys, opts, None)
    }

    /// [`Gpu::sort_with`] using the caller's temporary storage, which grows
    /// only when too small (see [`Scratch`]).
    ///
    /// ```no_run
    /// use warpsort::{Gpu, Scratch};
    /// let gpu = Gpu::new()?;
    /// let mut scratch = Scratch::new();
    /// for n in [100_000, 50_000, 100_000] {
    ///     let mut keys = gpu.stream().clone_htod(&vec![1.5f64; n])?;
    ///     gpu.sort_with_scratch(&mut keys, &Default::default(), &mut scratch)?;
    /// }
    /// assert_eq!(scratch.allocations(), 1); // the first sort's storage served all three
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_with_scratch<K: SortKey>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        opts: &SortOptions,
        scratch: &mut Scratch,
    ) -> Result<()> {
        self.sort_keys(keys, opts, Some(scratch))
    }

    fn sort_keys<K: SortKey>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        opts: &SortOptions,
        scratch: Option<&mut Scratch>,
    ) -> Result<()> {
        let n = keys.len();
        let (k, _k) = self.addr_mut(keys, "keys")?;
        if let Some(fields) = wide::<K>() {
            return self.sort_wide(WideItems::keys(k, n, fields), opts, &|it, o| self.full_pass(it, o));
        }
        self.sort_items(&items::<K>(k, 0, 0, n), shape::<K>(0), K::MODE | opts.order.mode(), opts, scratch)
    }

    /// Sorts device keys and moves each value with its key. Values are any
    /// [`Payload`] of 32 or 64 bits; with `opts.stable` equal keys keep their
    /// values' input order.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[30u32, 10, 20])?;
    /// let mut vals = gpu.stream().clone_htod(&[0u32, 1, 2])?;
    /// gpu.sort_pairs(&mut keys, &mut vals, &Default::default())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&vals)?, [1, 2, 0]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_pairs<K: SortKey, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        vals: &mut impl DevicePtrMut<V>,
        opts: &SortOptions,
    ) -> Result<()> {
        self.sort_pairs_in(keys, vals, opts, None)
    }

    /// [`Gpu::sort_pairs`] using the caller's temporary storage (see [`Scratch`]).
    ///
    /// ```no_run
    /// use warpsort::{Gpu, Scratch, SortOptions};
    /// let gpu = Gpu::new()?;
    /// let stable = SortOptions { stable: true, ..Default::default() };
    /// let n = 1 << 20;
    /// let mut scratch = Scratch::with_capacity(&gpu, Gpu::sort_temp_bytes(&stable, n, 4, 8))?;
    /// let mut keys = gpu.stream().clone_htod(&vec![3u32; n])?;
    /// let mut vals = gpu.stream().clone_htod(&vec![0.5f64; n])?;
    /// gpu.sort_pairs_with_scratch(&mut keys, &mut vals, &stable, &mut scratch)?;
    /// assert_eq!(scratch.allocations(), 1);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_pairs_with_scratch<K: SortKey, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        vals: &mut impl DevicePtrMut<V>,
        opts: &SortOptions,
        scratch: &mut Scratch,
    ) -> Result<()> {
        self.sort_pairs_in(keys, vals, opts, Some(scratch))
    }

    fn sort_pairs_in<K: SortKey, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<K>,
        vals: &mut impl DevicePtrMut<V>,
        opts: &SortOptions,
        scratch: Option<&mut Scratch>,
    ) -> Result<()> {
        let Pairs { items, shape, mode, val_bytes, .. } = self.pairs(keys, vals, opts)?;
        if let Some(fields) = wide::<K>() {
            let pass = |it: &Items, o: &SortOptions| self.full_pass(it, o);
            return self.sort_wide(
                WideItems { raw: items.keys, vals: items.vals, val_bytes, n: items.n, fields },
                opts,
                &pass,
            );
        }
        self.sort_pair_items(&items, shape, mode, opts, scratch)
    }

    /// Sorts key-value `items` (keys mapped under `mode` around the sort),
    /// stably when `opts.stable`, the values moved as the plan says (with
    /// the keys, or gathered once by positions sorted with them); key-only
    /// items as any sort.
    pub(crate) fn sort_pair_items(
        &self,
        items: &Items,
        shape: SortShape,
        mode: u32,
        opts: &SortOptions,
        scratch: Option<&mut Scratch>,
    ) -> Result<()> {
        let (n, vb) = (items.n, shape.kind.val_bytes());
        match PairsPlan::new(opts, shape, n, self.policy())? {
            PairsPlan::WithKeys { plan, temp_bytes } => {
                self.with_scratch(scratch, temp_bytes, |temp| self.run_sort(items, &plan, mode, temp))
            }
            PairsPlan::Gathered { .. } if n < 2 => Ok(()),
            PairsPlan::Gathered { plan, temp_bytes } => self.with_scratch(scratch, temp_bytes, |temp| {
                self.run_gathered(items, vb, &plan, temp, |keyed, pending, inner| {
                    self.run_sort_from(keyed, pending, &plan.inner, mode, inner)
                })
            }),
        }
    }

    /// Plans and runs a sort of `items`, its storage asked for before any
    /// item moves (so that running out of memory leaves them as they were).
    pub(crate) fn sort_items(
        &self,
        items: &Items,
        shape: SortShape,
        mode: u32,
        opts: &SortOptions,
        scratch: Option<&mut Scratch>,
    ) -> Result<()> {
        let plan = SortPlan::new(opts, shape, items.n, self.policy())?;
        self.with_scratch(scratch, plan.temp_bytes, |temp| self.run_sort(items, &plan, mode, temp))
    }

    /// Bytes of temporary storage a full sort of `n` items on device
    /// buffers needs besides its input (`key_bytes` and `val_bytes` per item;
    /// 0 value bytes for key-only), on any GPU: for the merge sort `n + c` of
    /// the paper's `2n + c` (nothing up to one tile), where `c` is the merge
    /// samples (`n / 32` items) and partitions (8 bytes per merge window);
    /// for a key-value sort that moves its values once at the end (a stable
    /// one; 4-byte keys with 8-byte values) also the positions sorted with
    /// the keys (4 bytes an item; the values are gathered into the sort's
    /// storage, or beside it up to one tile); for the sample sort (and the
    /// default where it picks the sample sort, or past such sizes) the items
    /// between its passes, a byte a key alone for its labels, and its tables;
    /// for the bitonic sorts nothing. Ask before sorting, e.g. to reserve a
    /// [`Scratch`] or to split work that would not fit; the host-slice sorts
    /// need the items' own size on top.
    ///
    /// ```
    /// use warpsort::{Algorithm, Gpu, SortOptions};
    /// let opts = SortOptions::default();
    /// // Up to one tile (8192 4-byte keys by default) sorts in place.
    /// assert_eq!(Gpu::sort_temp_bytes(&opts, 8192, 4, 0), 0);
    /// // More: a second copy of the keys (and values), samples, partitions.
    /// let n = 1 << 20;
    /// let keys_only = Gpu::sort_temp_bytes(&opts, n, 4, 0);
    /// assert!(keys_only >= n * 4 && keys_only < n * 4 + n / 4);
    /// assert!(Gpu::sort_temp_bytes(&opts, n, 8, 4) >= n * 12);
    /// // The bitonic sorts work in place.
    /// assert_eq!(Gpu::sort_temp_bytes(&SortOptions::algorithm(Algorithm::Bitonic), n, 4, 4), 0);
    /// ```
    ///
    /// ```no_run
    /// use warpsort::{Gpu, Scratch, SortOptions};
    /// let gpu = Gpu::new()?;
    /// let (opts, n) = (SortOptions::default(), 50_000_000);
    /// let (free, _) = gpu.context().mem_get_info()?;
    /// let need = n * 8 + Gpu::sort_temp_bytes(&opts, n, 4, 4); // keys, values, scratch
    /// if need > free {
    ///     eprintln!("sort in pieces: {need} bytes needed, {free} free");
    /// }
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_temp_bytes(opts: &SortOptions, n: usize, key_bytes: usize, val_bytes: usize) -> usize {
        PairsPlan::temp_bytes_any_gpu(opts, SortShape::new(key_bytes, val_bytes), n)
    }
}
