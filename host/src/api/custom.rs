//! Sorts of a user's key type, ordered by its own `warpsort_key::Order`,
//! with the kernels `warpsort-build` compiled for it
//! ([`Gpu::with_key_kernels`]).
//!
//! They run the merge sort (or, asked for, the bitonic sort) built from
//! parts that permute the items whatever `less` answers: bitonic tiles,
//! warp bitonic merges, and merge-path splits checked each pass and
//! repaired where they do not chain (`kernels-gpu/src/splits.rs`). An order
//! that is not a strict weak order gives an unspecified order but never
//! loses or duplicates an item.

use cudarc::driver::{DevicePtr, DevicePtrMut, DeviceRepr};
use warpsort_key::{MAX_KEY_BYTES, Order, fits};

use super::argsort::{argsort_plan_of, check_len};
use super::{same_len, val_bytes};
use crate::error::{Error, Result};
use crate::exec::permute::Positions;
use crate::gpu::Gpu;
use crate::key::Order as Direction;
use crate::key::{Payload, SortIndex};
use crate::launch::{ItemKind, Items};
use crate::options::{Algorithm, MergeKernel, MergeSortConfig, Presorted, SortOptions, TileSort};
use crate::plan::permute::GatherPlan;
use crate::plan::{SortPlan, SortShape};
use warpsort_kernels::config::BLOCK_TILE;

use super::sort::STABLE_MAX_LEN;

/// The options a sort of a user's keys runs with: the merge sort's parts
/// that any order keeps a permutation (or the bitonic sorts), stable or
/// not. Its direction is the user's `less`: a descending order is refused
/// (write it in `less`), as are GPU-Warpsort as published (not built for
/// these keys), types the kernels cannot move, a merge-sort configuration
/// other than the default or [`CUSTOM_MERGE_SORT`] itself (those kernels
/// are not built for these keys), and [`Presorted::Always`] (no scan is
/// built for them; `Auto` means none).
fn custom_options<T: Order>(opts: &SortOptions) -> Result<SortOptions> {
    if !fits::<T>() {
        return Err(Error::BadConfig(format!(
            "key type {}: its size ({} bytes) must be a multiple of 4 up to {MAX_KEY_BYTES}, its alignment ({}) at most 8",
            std::any::type_name::<T>(),
            size_of::<T>(),
            align_of::<T>()
        )));
    }
    if opts.order == Direction::Descending {
        return Err(Error::BadConfig("a user key type sorts by its `less`: write the descending order there".into()));
    }
    if matches!(opts.algorithm, Algorithm::WarpsortPaper | Algorithm::SampleSort) {
        return Err(Error::BadConfig(format!("{} is not built for user key types", opts.algorithm.name())));
    }
    if opts.merge_sort != MergeSortConfig::default() && opts.merge_sort != CUSTOM_MERGE_SORT {
        return Err(Error::BadConfig(format!(
            "a user key type's merge sort runs one configuration, {CUSTOM_MERGE_SORT:?}: leave `merge_sort` at its default (asked for {:?})",
            opts.merge_sort
        )));
    }
    if opts.presorted == Presorted::Always {
        return Err(Error::BadConfig(
            "no scan for presorted input is built for user key types: use `Presorted::Auto` or `Never`".into(),
        ));
    }
    Ok(SortOptions { merge_sort: CUSTOM_MERGE_SORT, presorted: Presorted::Never, ..*opts })
}

/// The merge sort of a user's keys, built from the parts a user's order
/// cannot break: bitonic tiles of one block, warp bitonic merges
/// (networks: they permute whatever `less` says) over windows of 256 whose
/// splits are checked and repaired each pass; no scan for presorted input.
const CUSTOM_MERGE_SORT: MergeSortConfig = MergeSortConfig {
    tile: BLOCK_TILE as usize,
    tile_sort: TileSort::BlockBitonic,
    merge: MergeKernel::WarpBitonic,
    outputs_per_thread: 8,
    merge_threads: 0,
};

/// Keys of `T` with payloads of `val_bytes`, as the plans see them.
fn custom_shape<T>(val_bytes: usize) -> SortShape {
    SortShape { kind: ItemKind::custom::<T>(val_bytes), fields: None }
}

impl Gpu {
    /// Opens GPU `ordinal` with the kernels `warpsort-build` compiled for a
    /// user's key type (the PTX it wrote into `OUT_DIR`). The handle runs
    /// the `*_custom` operations for that type, and no others.
    ///
    /// ```no_run
    /// // build.rs: warpsort_build::Kernels::for_key("trade-key", "Trade").build_or_exit();
    /// # const PTX: &str = "";
    /// // const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/warpsort_custom.ptx"));
    /// let gpu = warpsort::Gpu::with_key_kernels(0, PTX)?;
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn with_key_kernels(ordinal: usize, ptx: &str) -> Result<Self> {
        Self::with_ptx(ordinal, ptx)
    }

    /// Sorts device keys of a user's type by its `less` (see
    /// [`Gpu::with_key_kernels`]); `opts.stable` keeps equal keys in input
    /// order. On error the keys are as they were.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, Default, Debug, PartialEq)] #[repr(C)] struct P { x: u32, y: u32 }
    /// # unsafe impl warpsort::cudarc::driver::DeviceRepr for P {}
    /// # impl warpsort_key::Order for P { fn less(&self, o: &Self) -> bool { (self.y, self.x) < (o.y, o.x) } }
    /// # const PTX: &str = "";
    /// let gpu = warpsort::Gpu::with_key_kernels(0, PTX)?;
    /// let mut keys = gpu.stream().clone_htod(&[P { x: 1, y: 9 }, P { x: 2, y: 3 }])?;
    /// gpu.sort_custom(&mut keys, &Default::default())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&keys)?, [P { x: 2, y: 3 }, P { x: 1, y: 9 }]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_custom<T: Order>(&self, keys: &mut impl DevicePtrMut<T>, opts: &SortOptions) -> Result<()> {
        let opts = custom_options::<T>(opts)?;
        let n = keys.len();
        if opts.stable && n > STABLE_MAX_LEN {
            return Err(Error::TooLong { len: n, max: STABLE_MAX_LEN });
        }
        let (k, _k) = self.addr_mut(keys, "keys")?;
        let shape = custom_shape::<T>(0);
        let items = Items::new(k, 0, n, shape.kind);
        if !opts.stable || n < 2 {
            return self.sort_items(&items, shape, 0, &opts, None);
        }
        // Equal keys may differ: a stable sort of keys alone sorts them with
        // their positions as ranks (in temporary storage) that break ties.
        // (The key-value sorts' `GatherPlan` lays them out; no values move.)
        let inner = SortPlan::new(&opts, shape.positioned(true), n, self.policy())?;
        let plan = GatherPlan::new(n, 0, true, inner);
        self.with_scratch(None, plan.temp_bytes, |temp| {
            let ranks = temp + plan.positions as u64;
            self.iota(ItemKind::U32, ranks, n)?;
            self.run_sort(&items.with_ranks(ranks), &plan.inner, 0, temp + plan.inner_at as u64)
        })
    }

    /// Sorts device keys of a user's type and moves each value (any
    /// [`Payload`] of 32 or 64 bits) with its key; `opts.stable` keeps the
    /// values of equal keys in input order.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, Default, Debug, PartialEq)] #[repr(C)] struct P { x: u32, y: u32 }
    /// # unsafe impl warpsort::cudarc::driver::DeviceRepr for P {}
    /// # impl warpsort_key::Order for P { fn less(&self, o: &Self) -> bool { self.y < o.y } }
    /// # const PTX: &str = "";
    /// let gpu = warpsort::Gpu::with_key_kernels(0, PTX)?;
    /// let mut keys = gpu.stream().clone_htod(&[P { x: 1, y: 9 }, P { x: 2, y: 3 }])?;
    /// let mut vals = gpu.stream().clone_htod(&[10u64, 20])?;
    /// gpu.sort_custom_pairs(&mut keys, &mut vals, &Default::default())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&vals)?, [20, 10]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_custom_pairs<T: Order, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<T>,
        vals: &mut impl DevicePtrMut<V>,
        opts: &SortOptions,
    ) -> Result<()> {
        let opts = custom_options::<T>(opts)?;
        let n = keys.len();
        same_len(n, vals.len())?;
        if opts.stable && n > STABLE_MAX_LEN {
            return Err(Error::TooLong { len: n, max: STABLE_MAX_LEN });
        }
        let vb = val_bytes::<V>();
        let (k, _k) = self.addr_mut(keys, "keys")?;
        let (v, _v) = self.addr_mut(vals, "values")?;
        let shape = custom_shape::<T>(vb);
        self.sort_pair_items(&Items::new(k, v, n, shape.kind), shape, 0, &opts, None)
    }

    /// The permutation that sorts device keys of a user's type (which stay
    /// unchanged), into `out` (`u32` or `u64` positions, `keys.len()` of
    /// them); `opts.stable` makes it unique.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, Default, Debug, PartialEq)] #[repr(C)] struct P { x: u32, y: u32 }
    /// # unsafe impl warpsort::cudarc::driver::DeviceRepr for P {}
    /// # impl warpsort_key::Order for P { fn less(&self, o: &Self) -> bool { self.y < o.y } }
    /// # const PTX: &str = "";
    /// let gpu = warpsort::Gpu::with_key_kernels(0, PTX)?;
    /// let keys = gpu.stream().clone_htod(&[P { x: 1, y: 9 }, P { x: 2, y: 3 }])?;
    /// let mut p = gpu.stream().alloc_zeros::<u32>(2)?;
    /// gpu.argsort_custom(&keys, &mut p, &Default::default())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&p)?, [1, 0]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort_custom<T: Order, I: SortIndex>(
        &self,
        keys: &impl DevicePtr<T>,
        out: &mut impl DevicePtrMut<I>,
        opts: &SortOptions,
    ) -> Result<()> {
        let opts = custom_options::<T>(opts)?;
        let (n, ib) = (keys.len(), size_of::<I>());
        let plan = argsort_plan_of(self, &opts, custom_shape::<T>(0), size_of::<T>(), n, ib)?;
        if out.len() != n {
            return Err(Error::LengthMismatch { keys: n, values: out.len() });
        }
        check_len(n, ib, &opts)?;
        let (k, _k) = self.addr(keys, "keys")?;
        let (o, _o) = self.addr_mut(out, "positions")?;
        if n == 0 {
            return Ok(());
        }
        self.with_scratch(None, plan.temp_bytes, |temp| {
            let keys = Items::new(k, 0, n, custom_shape::<T>(0).kind);
            self.run_argsort(&keys, size_of::<T>(), o, ib, opts.stable, Positions::Global, &plan, temp, |it, t| {
                self.run_sort(it, &plan.inner, 0, t)
            })
        })
    }

    /// Sorts a host slice of a user's key type: copied to the GPU, sorted by
    /// [`Gpu::sort_custom`], copied back (the slice changes only once the
    /// sort has succeeded).
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, Default, Debug, PartialEq)] #[repr(C)] struct P { x: u32, y: u32 }
    /// # unsafe impl warpsort::cudarc::driver::DeviceRepr for P {}
    /// # impl warpsort_key::Order for P { fn less(&self, o: &Self) -> bool { self.y < o.y } }
    /// # const PTX: &str = "";
    /// let gpu = warpsort::Gpu::with_key_kernels(0, PTX)?;
    /// let mut v = vec![P { x: 1, y: 9 }, P { x: 2, y: 3 }];
    /// gpu.sort_custom_slice(&mut v, &Default::default())?;
    /// assert_eq!(v[0].y, 3);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_custom_slice<T: Order + DeviceRepr>(&self, keys: &mut [T], opts: &SortOptions) -> Result<()> {
        custom_options::<T>(opts)?;
        if keys.len() < 2 {
            return Ok(());
        }
        let mut dev = self.stream().clone_htod(keys)?;
        self.sort_custom(&mut dev, opts)?;
        self.stream().memcpy_dtoh(&dev, keys)?;
        self.stream().synchronize()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Key2 {
        a: u32,
        b: u32,
    }
    impl Order for Key2 {
        fn less(&self, o: &Self) -> bool {
            (self.a, self.b) < (o.a, o.b)
        }
    }

    #[test]
    fn user_keys_run_their_merge_sort_or_refuse() {
        // The default and the configuration itself run it, stable or not.
        for asked in [MergeSortConfig::default(), CUSTOM_MERGE_SORT] {
            for stable in [false, true] {
                let opts = SortOptions { merge_sort: asked, stable, ..Default::default() };
                let run = custom_options::<Key2>(&opts).unwrap();
                assert_eq!((run.merge_sort, run.presorted, run.stable), (CUSTOM_MERGE_SORT, Presorted::Never, stable));
            }
        }
        let bitonic = custom_options::<Key2>(&SortOptions::algorithm(Algorithm::Bitonic)).unwrap();
        assert_eq!(bitonic.algorithm, Algorithm::Bitonic);
        // Anything else is refused, never silently replaced.
        let refused = [
            SortOptions { merge_sort: MergeSortConfig { tile: 4096, ..Default::default() }, ..Default::default() },
            SortOptions {
                merge_sort: MergeSortConfig { merge: MergeKernel::WarpBitonic, ..Default::default() },
                ..Default::default()
            },
            SortOptions {
                merge_sort: MergeSortConfig { outputs_per_thread: 16, ..CUSTOM_MERGE_SORT },
                ..Default::default()
            },
            SortOptions { presorted: Presorted::Always, ..Default::default() },
            SortOptions::descending(),
            SortOptions::algorithm(Algorithm::WarpsortPaper),
            SortOptions::algorithm(Algorithm::SampleSort),
        ];
        for opts in refused {
            assert!(matches!(custom_options::<Key2>(&opts), Err(Error::BadConfig(_))), "{opts:?}");
        }
        // A type the kernels cannot move: 6 bytes.
        #[derive(Clone, Copy)]
        struct Odd([u16; 3]);
        impl Order for Odd {
            fn less(&self, o: &Self) -> bool {
                self.0 < o.0
            }
        }
        assert!(matches!(custom_options::<Odd>(&SortOptions::default()), Err(Error::BadConfig(_))));
    }
}
