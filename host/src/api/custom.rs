//! Sorts of a user's key type, ordered by its own `warpsort_key::Order`.
//! Which way is decided once per call ([`Route`]):
//!
//! - On a handle with warpsort's own kernels ([`Gpu::new`]), a derived
//!   order (its fields in `Order::FIELDS`) sorts as ordered words, the way
//!   of the built-in tuples (`crate::derived`): every algorithm and option
//!   of theirs, no kernels built for the type.
//! - On a handle with the kernels `warpsort-build` compiled for the type
//!   ([`Gpu::with_key_kernels`]), `less` itself orders: the merge sort (or,
//!   asked for, the bitonic sort) built from parts that permute the items
//!   whatever `less` answers: bitonic tiles, warp bitonic merges, and
//!   merge-path splits checked each pass and repaired where they do not
//!   chain (`kernels-gpu/src/splits.rs`). An order that is not a strict
//!   weak order gives an unspecified order but never loses or duplicates
//!   an item.

use cudarc::driver::{DevicePtr, DevicePtrMut, DeviceRepr};
use warpsort_key::{MAX_KEY_BYTES, Order, fits};

use super::argsort::{argsort_plan_of, check_len};
use super::{same_len, val_bytes};
use crate::error::{Error, Result};
use crate::exec::permute::Positions;
use crate::gpu::Gpu;
use crate::key::Order as Direction;
#[cfg(doc)]
use crate::key::Tuple;
use crate::key::{Payload, SortIndex};
use crate::launch::{ItemKind, Items};
use crate::options::{Algorithm, MergeKernel, MergeSortConfig, Presorted, SortOptions, TileSort};
use crate::plan::permute::GatherPlan;
use crate::plan::{SortPlan, SortShape};
use warpsort_kernels::config::BLOCK_TILE;

use super::check::Segments;
use super::sort::STABLE_MAX_LEN;
use crate::HostOptions;
use crate::derived::{Encoded, Retyped, RetypedRef, Word, fields_of, with_word};

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

/// How a sort of a user's key type runs on a handle.
enum Route {
    /// As ordered words of this width (a derived order, warpsort's kernels).
    Encoded(Word),
    /// By `less`, in the user's kernels, with these options.
    Compiled(SortOptions),
}

impl Gpu {
    /// How this handle sorts keys of `T` under `opts`; a hand-written order
    /// on a handle without its kernels, and what the user's kernels cannot
    /// run ([`custom_options`]), are refused before anything moves.
    fn route<T: Order>(&self, opts: &SortOptions) -> Result<Route> {
        if self.runs_user_kernels() {
            return Ok(Route::Compiled(custom_options::<T>(opts)?));
        }
        match fields_of::<T>() {
            Some(fields) => Ok(Route::Encoded(Word::of(fields))),
            None => Err(Error::BadConfig(format!(
                "key type {}: its order is not field by field (a hand-written `less`, or fields the sorts cannot \
                 encode): sort it on a handle with its kernels (`Gpu::with_key_kernels`)",
                std::any::type_name::<T>()
            ))),
        }
    }

    /// The words of `T`'s keys for an operation (`what`) only the encoded
    /// way runs: refused on the user's kernels.
    fn encoded_route<T: Order>(&self, opts: &SortOptions, what: &str) -> Result<Word> {
        match self.route::<T>(opts)? {
            Route::Encoded(w) => Ok(w),
            Route::Compiled(_) => Err(Error::BadConfig(format!(
                "{what} of a user key type run on warpsort's own kernels (`Gpu::new`), for a derived order: \
                 none is built into a key type's kernels"
            ))),
        }
    }
}

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
        Self::with_user_kernels(ordinal, ptx)
    }

    /// Sorts device keys of a user's type by its order; `opts.stable` keeps
    /// equal keys in input order. On error the keys are as they were.
    ///
    /// On a handle with warpsort's own kernels ([`Gpu::new`]) a derived
    /// order (`#[derive(Order)]`) sorts as ordered words, as a [`Tuple`]
    /// of the same fields does, with any of its options (a descending sort
    /// is the reverse of `less`); a hand-written order is refused there
    /// ([`Error::BadConfig`]). On a handle with the type's kernels
    /// ([`Gpu::with_key_kernels`]) `less` itself orders.
    ///
    /// ```no_run
    /// use warpsort_key::Order;
    /// #[derive(Clone, Copy, Debug, PartialEq, Order)]
    /// #[repr(C)]
    /// struct Trade { venue: u32, #[order(desc)] price: f32, id: u32 }
    /// # unsafe impl warpsort::cudarc::driver::DeviceRepr for Trade {}
    /// let gpu = warpsort::Gpu::new()?; // no kernels to build
    /// let mut keys = gpu.stream().clone_htod(&[Trade { venue: 2, price: 1.0, id: 7 }, Trade { venue: 1, price: 9.0, id: 8 }])?;
    /// gpu.sort_custom(&mut keys, &Default::default())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&keys)?[0].id, 8);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    ///
    /// A hand-written order, on its kernels:
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
    pub fn sort_custom<T: Order + DeviceRepr + Send + Sync>(
        &self,
        keys: &mut impl DevicePtrMut<T>,
        opts: &SortOptions,
    ) -> Result<()> {
        let opts = match self.route::<T>(opts)? {
            Route::Encoded(w) => {
                return with_word!(w, B => self.sort_with(&mut Retyped::<_, T, Encoded<T, B>>::new(keys), opts));
            }
            Route::Compiled(opts) => opts,
        };
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

    /// Sorts device keys of a user's type and moves each value with its
    /// key (any [`Payload`]; 32 or 64 bits on the type's kernels);
    /// `opts.stable` keeps the values of equal keys in input order. Which
    /// way, as in [`Gpu::sort_custom`].
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
    pub fn sort_custom_pairs<T: Order + DeviceRepr + Send + Sync, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<T>,
        vals: &mut impl DevicePtrMut<V>,
        opts: &SortOptions,
    ) -> Result<()> {
        let opts = match self.route::<T>(opts)? {
            Route::Encoded(w) => {
                return with_word!(w, B => self.sort_pairs(&mut Retyped::<_, T, Encoded<T, B>>::new(keys), vals, opts));
            }
            Route::Compiled(opts) => opts,
        };
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
    /// them); `opts.stable` makes it unique. Which way, as in
    /// [`Gpu::sort_custom`].
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
    pub fn argsort_custom<T: Order + DeviceRepr + Send + Sync, I: SortIndex>(
        &self,
        keys: &impl DevicePtr<T>,
        out: &mut impl DevicePtrMut<I>,
        opts: &SortOptions,
    ) -> Result<()> {
        let opts = match self.route::<T>(opts)? {
            Route::Encoded(w) => {
                return with_word!(w, B => self.argsort_into(&RetypedRef::<_, T, Encoded<T, B>>::new(keys), out, opts));
            }
            Route::Compiled(opts) => opts,
        };
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
            self.run_argsort(
                &keys,
                size_of::<T>(),
                o,
                ib,
                opts.stable,
                Positions::Global,
                &plan,
                temp,
                |it, pending, t| self.run_sort_from(it, pending, &plan.inner, 0, t),
            )
        })
    }

    /// Sorts device keys of a user's type within each segment (rows of a
    /// length, or segments by offsets), as [`Gpu::sort_segments`] and
    /// [`Gpu::sort_segments_by_offsets_with`] sort built-in keys, `opts`
    /// the same. Derived orders on warpsort's own kernels (see
    /// [`Gpu::sort_custom`]); by `less` no segmented sort is built
    /// ([`Error::BadConfig`], the keys unchanged).
    ///
    /// ```no_run
    /// use warpsort::Segments;
    /// use warpsort_key::Order;
    /// #[derive(Clone, Copy, Debug, PartialEq, Order)]
    /// #[repr(C)]
    /// struct P { y: u32, x: u32 }
    /// # unsafe impl warpsort::cudarc::driver::DeviceRepr for P {}
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[P { y: 2, x: 0 }, P { y: 1, x: 1 }, P { y: 9, x: 2 }, P { y: 3, x: 3 }])?;
    /// gpu.sort_custom_segments(&mut keys, Segments::Rows(2), &Default::default())?;
    /// let x: Vec<u32> = gpu.stream().clone_dtoh(&keys)?.iter().map(|p| p.x).collect();
    /// assert_eq!(x, [1, 0, 3, 2]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_custom_segments<T: Order + DeviceRepr + Send + Sync>(
        &self,
        keys: &mut impl DevicePtrMut<T>,
        segments: Segments,
        opts: &SortOptions,
    ) -> Result<()> {
        let w = self.encoded_route::<T>(opts, "segmented sorts")?;
        with_word!(w, B => self.sort_cut(&mut Retyped::<_, T, Encoded<T, B>>::new(keys), segments, opts))
    }

    /// Key-value [`Gpu::sort_custom_segments`]: each value (any
    /// [`Payload`]) moves with its key inside its segment; `opts.stable`
    /// keeps equal keys' values in input order.
    ///
    /// ```no_run
    /// use warpsort::{Segments, SortOptions};
    /// use warpsort_key::Order;
    /// #[derive(Clone, Copy, Debug, PartialEq, Order)]
    /// #[repr(C)]
    /// struct P { y: u32, x: u32 }
    /// # unsafe impl warpsort::cudarc::driver::DeviceRepr for P {}
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[P { y: 2, x: 0 }, P { y: 1, x: 1 }, P { y: 9, x: 2 }])?;
    /// let mut vals = gpu.stream().clone_htod(&[10u32, 11, 12])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 2, 3])?;
    /// gpu.sort_custom_segments_pairs(&mut keys, &mut vals, Segments::Offsets(&offsets), &SortOptions::default())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&vals)?, [11, 10, 12]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_custom_segments_pairs<T: Order + DeviceRepr + Send + Sync, V: Payload>(
        &self,
        keys: &mut impl DevicePtrMut<T>,
        vals: &mut impl DevicePtrMut<V>,
        segments: Segments,
        opts: &SortOptions,
    ) -> Result<()> {
        let w = self.encoded_route::<T>(opts, "segmented sorts")?;
        with_word!(w, B => self.sort_cut_pairs(&mut Retyped::<_, T, Encoded<T, B>>::new(keys), vals, segments, opts))
    }

    /// Sorts a host slice of a user's key type. As ordered words (see
    /// [`Gpu::sort_custom`]) it takes [`Gpu::sort_host`]'s way: streamed
    /// through pinned buffers, beyond the GPU's memory when it must. By
    /// `less`: copied to the GPU, sorted, copied back. Either way the slice
    /// changes only once the sort has succeeded.
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
    pub fn sort_custom_slice<T: Order + DeviceRepr + Send + Sync>(
        &self,
        keys: &mut [T],
        opts: &SortOptions,
    ) -> Result<()> {
        if let Route::Encoded(w) = self.route::<T>(opts)? {
            return with_word!(w, B => self.sort_host(Encoded::<T, B>::slice(keys), &HostOptions::from(*opts)));
        }
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
