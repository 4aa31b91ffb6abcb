//! Full-array sorts: GPU-Warpsort (the default) and the bitonic sorts.

use cudarc::driver::CudaSlice;
use warpsort_kernels::config::{
    BLOCK_MERGE_KEYS_PER_THREAD, BLOCK_THREADS, BLOCK_TILE, DEFAULT_BLOCK_MERGE_KEYS_PER_THREAD,
    DEFAULT_BLOCK_MERGE_KEYS_PER_THREAD_WIDE, DEFAULT_MERGE_KEYS_PER_LANE, DEFAULT_MERGE_KEYS_PER_LANE_PAIRS,
    DEFAULT_TILE, DEFAULT_TILE_KEYS, DEFAULT_TILE_WIDE, ELEMENTWISE_THREADS, GLOBAL_STAGE_THREADS, KEYS_PER_LANE,
    LARGE_TILE_MIN_TILES, MERGE_BLOCK_THREADS, MERGE_BLOCK_THREADS_SMALL, MERGE_KEYS_PER_LANE, PAPER_TILE,
    PARTITION_THREADS, SAMPLE_STRIDE, SMALL_SORT_ITEMS, TILE_MERGE_KEYS_PER_LANE, WARP_KERNEL_THREADS, WARP_SIZE,
    merge_pass_smem_slots, tile_merge_smem_slots,
};
use warpsort_kernels::ordered::mode;

use crate::error::{Error, Result};
use crate::gpu::{Arg, DevPtr, Gpu, blocks_for};
use crate::items::RawItems;
use crate::key::{Order, Payload, SortKey};
use crate::paper::{PaperConfig, PaperLayout};
use crate::scratch::Scratch;

/// Which sorting algorithm a full sort runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// GPU-Warpsort, tuned: block tiles of `BLOCK_TILE` keys sorted by warp
    /// bitonic networks in registers, then merge passes in which every warp
    /// bitonic-merges one merge-path window (see `docs` of `merge_path`).
    #[default]
    WarpSort,
    /// Full-array bitonic sort: fused shared-memory/register stages for strides
    /// below `BLOCK_TILE`, one launch per larger stride.
    Bitonic,
    /// The naive bitonic sort: one launch per stage (the reference the fused
    /// sort is measured against).
    BitonicNaive,
    /// GPU-Warpsort as published (its four steps and parameters,
    /// [`PaperConfig`]): the reference the tuned [`Algorithm::WarpSort`] is
    /// measured against.
    WarpsortPaper,
}

impl Algorithm {
    /// Every algorithm, for benchmarks and tests.
    pub const ALL: [Algorithm; 4] =
        [Algorithm::WarpSort, Algorithm::Bitonic, Algorithm::BitonicNaive, Algorithm::WarpsortPaper];

    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::WarpSort => "warpsort",
            Algorithm::Bitonic => "bitonic",
            Algorithm::BitonicNaive => "bitonic-naive",
            Algorithm::WarpsortPaper => "warpsort-paper",
        }
    }
}

/// How GPU-Warpsort's merge passes merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MergeKernel {
    /// A block per merge-path tile: both inputs staged in shared memory with
    /// coalesced loads, a serial merge of `k` outputs per thread, stores
    /// coalesced through shared memory (`block_merge{k}_*`).
    #[default]
    Block,
    /// A warp per merge-path window, loaded coalesced with B reversed and
    /// bitonic-merged in registers (the paper's step-2 network,
    /// `merge_pass{32k}_*`).
    WarpBitonic,
}

/// How GPU-Warpsort's step 1 sorts its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TileSort {
    /// Block-based bitonic sort: the warps' networks in registers, the
    /// strides that cross warps through shared memory with block barriers
    /// (`block_sort_*`, 8 keys per thread).
    BlockBitonic,
    /// Warp-based, the default: every warp sorts `32 * 16` items with the
    /// barrier-free bitonic network in registers, then the block merges the
    /// warps' runs in shared memory (`merge_tile_sort_*`). On an H200 it
    /// beat `BlockBitonic` by 10-15% (tiles of 8192 against 4096).
    #[default]
    WarpMerge,
}

impl TileSort {
    /// The smallest and the largest tile (a power of two) this step 1 sorts:
    /// from one warp's tile to 1024 threads' worth.
    pub fn tile_range(self) -> (usize, usize) {
        let per_thread = self.per_thread() as usize;
        (WARP_SIZE as usize * per_thread, 1024 * per_thread)
    }

    /// Items each thread of this step 1 holds.
    fn per_thread(self) -> u32 {
        match self {
            TileSort::BlockBitonic => KEYS_PER_LANE,
            TileSort::WarpMerge => TILE_MERGE_KEYS_PER_LANE,
        }
    }

    /// Threads per block that sort a tile of `tile` items.
    pub(crate) fn threads(self, tile: usize) -> u32 {
        (tile / self.per_thread() as usize) as u32
    }
}

/// Sorts of more bytes of items than this launch their merge passes without
/// overlap (see `Gpu::merge_pass`).
const OVERLAP_MAX_BYTES: usize = 32 << 20;

/// GPU-Warpsort's tuning parameters. Zero picks the tuned default for the
/// items being sorted.
///
/// ```
/// let c = warpsort::WarpsortConfig::default();
/// assert!(c.validate().is_ok());
/// assert_eq!((c.tile_for(4, 1 << 20), c.tile_for(4, 1 << 24), c.tile_for(16, 1 << 24)), (8192, 16384, 4096));
/// assert!(warpsort::WarpsortConfig { tile: 1000, ..c }.validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpsortConfig {
    /// Step 1: items per tile, a power of two in [`TileSort::tile_range`]
    /// and at least a merge window; 0 picks `DEFAULT_TILE` (8192) for items
    /// of up to 8 bytes (`DEFAULT_TILE_KEYS`, 16384, for 4-byte items in
    /// sorts of 2^21 and more) and `DEFAULT_TILE_WIDE` (4096) for 16-byte items
    /// with `TileSort::WarpMerge`, `BLOCK_TILE` (4096) with `BlockBitonic`.
    pub tile: usize,
    /// Step 1: how tiles are sorted.
    pub tile_sort: TileSort,
    /// Steps 2-4: which merge kernel runs the merge passes.
    pub merge: MergeKernel,
    /// Outputs per lane of a merge: for [`MergeKernel::WarpBitonic`] 4, 8 or
    /// 16 (windows of 128, 256 or 512, one warp each; 0 picks 8 for key-only,
    /// 4 for key-value), for [`MergeKernel::Block`] 8 or 16 (tiles of
    /// `merge_threads * k`; 0 picks 16 for 4-byte items, 8 for wider ones).
    pub merge_keys_per_lane: u32,
    /// Threads per block of [`MergeKernel::Block`] (a power of two, 64 to
    /// 1024; 0 picks `MERGE_BLOCK_THREADS`, 128, or
    /// `MERGE_BLOCK_THREADS_SMALL`, 64, in sorts of up to `SMALL_SORT_ITEMS`).
    pub merge_threads: u32,
}

/// The item shapes a configuration must suit: (key-value, bytes per item).
const ITEM_SHAPES: [(bool, usize); 4] = [(false, 4), (false, 8), (true, 8), (true, 16)];

impl WarpsortConfig {
    /// Step 1's tile for a sort of `n` `item_bytes`-byte items (see
    /// [`WarpsortConfig::tile`]).
    pub fn tile_for(&self, item_bytes: usize, n: usize) -> usize {
        let large = n / DEFAULT_TILE_KEYS as usize >= LARGE_TILE_MIN_TILES;
        match (self.tile, self.tile_sort) {
            (0, TileSort::WarpMerge) if item_bytes > 8 => DEFAULT_TILE_WIDE as usize,
            (0, TileSort::WarpMerge) if item_bytes <= 4 && large => DEFAULT_TILE_KEYS as usize,
            (0, TileSort::WarpMerge) => DEFAULT_TILE as usize,
            (0, TileSort::BlockBitonic) => BLOCK_TILE as usize,
            (tile, _) => tile,
        }
    }

    /// Outputs per lane of the merge, for key-only or key-value sorts of
    /// `item_bytes`-byte items (key and payload, padded to the key's
    /// alignment).
    pub fn merge_keys(&self, pairs: bool, item_bytes: usize) -> u32 {
        match (self.merge, self.merge_keys_per_lane, pairs) {
            (MergeKernel::Block, 0, _) if item_bytes == 8 => DEFAULT_BLOCK_MERGE_KEYS_PER_THREAD_WIDE,
            (MergeKernel::Block, 0, _) => DEFAULT_BLOCK_MERGE_KEYS_PER_THREAD,
            (MergeKernel::WarpBitonic, 0, false) => DEFAULT_MERGE_KEYS_PER_LANE,
            (MergeKernel::WarpBitonic, 0, true) => DEFAULT_MERGE_KEYS_PER_LANE_PAIRS,
            (_, k, _) => k,
        }
    }

    /// Threads (block merge) or lanes (warp merge) that share a window, in
    /// a sort of `n` items.
    fn merge_lanes(&self, n: usize) -> u32 {
        match self.merge {
            MergeKernel::Block => self.block_threads(n),
            MergeKernel::WarpBitonic => WARP_SIZE,
        }
    }

    /// Threads per block of the block merge in a sort of `n` items.
    ///
    /// ```
    /// let c = warpsort::WarpsortConfig::default();
    /// assert_eq!((c.block_threads(1 << 20), c.block_threads(1 << 21)), (64, 128));
    /// ```
    pub fn block_threads(&self, n: usize) -> u32 {
        match self.merge_threads {
            0 if n <= SMALL_SORT_ITEMS => MERGE_BLOCK_THREADS_SMALL,
            0 => MERGE_BLOCK_THREADS,
            t => t,
        }
    }

    /// Outputs of one merge window (a warp's or a block's), for key-only or
    /// key-value sorts of `n` `item_bytes`-byte items.
    pub fn window(&self, pairs: bool, item_bytes: usize, n: usize) -> usize {
        (self.merge_lanes(n) * self.merge_keys(pairs, item_bytes)) as usize
    }

    /// The smallest merge window of any sort size (a small sort's): the
    /// partitions' scratch is sized by it, so that temporary storage grows
    /// with `n` (scratch reserved for `n` items serves every shorter sort).
    fn min_window(&self, pairs: bool, item_bytes: usize) -> usize {
        self.window(pairs, item_bytes, 0)
    }

    /// Checks the parameters against what the kernels support, for every
    /// item shape.
    pub fn validate(&self) -> Result<()> {
        let (min_tile, max_tile) = self.tile_sort.tile_range();
        let tiles_ok = ITEM_SHAPES.iter().all(|&(pairs, bytes)| {
            let tile = self.tile_for(bytes, usize::MAX);
            tile.is_power_of_two()
                && (min_tile..=max_tile).contains(&tile)
                && tile >= self.window(pairs, bytes, usize::MAX)
        });
        let allowed: &[u32] = match self.merge {
            MergeKernel::Block => &BLOCK_MERGE_KEYS_PER_THREAD,
            MergeKernel::WarpBitonic => &MERGE_KEYS_PER_LANE,
        };
        let k_ok = self.merge_keys_per_lane == 0 || allowed.contains(&self.merge_keys_per_lane);
        let t = self.merge_threads;
        let k_ok = k_ok && (t == 0 || (t.is_power_of_two() && (64..=1024).contains(&t)));
        if !tiles_ok || !k_ok {
            return Err(Error::BadConfig(format!(
                "{self:?}: tile must be 0 (automatic) or a power of two from {min_tile} to {max_tile} and at least the merge window; merge_keys_per_lane 0 (automatic) or one of {allowed:?}; merge_threads 0 (automatic) or a power of two from 64 to 1024"
            )));
        }
        Ok(())
    }
}

/// How to sort.
///
/// ```
/// use warpsort::{Order, SortOptions};
/// let o = SortOptions { order: Order::Descending, stable: true, ..Default::default() };
/// assert_eq!(o.algorithm, warpsort::Algorithm::WarpSort);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SortOptions {
    /// The algorithm (GPU-Warpsort by default).
    pub algorithm: Algorithm,
    /// Ascending (default) or descending.
    pub order: Order,
    /// Equal keys keep their input order (default `false`). Key-only sorts
    /// are stable either way: keys equal in the sort order are bit-identical
    /// (floats compare in IEEE total order), so this costs nothing there.
    /// Key-value sorts and [`Gpu::argsort`] then sort `(key, position)`
    /// pairs compared key then position, and gather the values: up to
    /// `u32::MAX` items ([`Error::TooLong`] past that).
    pub stable: bool,
    /// GPU-Warpsort's parameters.
    pub warpsort: WarpsortConfig,
    /// The published GPU-Warpsort's parameters ([`Algorithm::WarpsortPaper`]).
    pub paper: PaperConfig,
}

impl SortOptions {
    /// Options with this algorithm, ascending.
    pub fn algorithm(algorithm: Algorithm) -> Self {
        SortOptions { algorithm, ..Default::default() }
    }

    /// Checks the options against what the kernels support (every sort does
    /// this first, whatever the length).
    pub fn validate(&self) -> Result<()> {
        self.warpsort.validate()?;
        self.paper.validate()
    }
}

fn log2_ceil(x: usize) -> u32 {
    x.next_power_of_two().trailing_zeros()
}

impl Gpu {
    /// Sorts device keys ascending with GPU-Warpsort.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3.0f32, -1.0, 2.5])?;
    /// gpu.sort(&mut keys)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&keys)?, [-1.0, 2.5, 3.0]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort<K: SortKey>(&self, keys: &mut CudaSlice<K>) -> Result<()> {
        self.sort_with(keys, &SortOptions::default())
    }

    /// Sorts device keys with the given options.
    pub fn sort_with<K: SortKey>(&self, keys: &mut CudaSlice<K>, opts: &SortOptions) -> Result<()> {
        let items = RawItems::keys(self, keys)?;
        self.sort_items::<K>(&items, opts, None)
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
        keys: &mut CudaSlice<K>,
        opts: &SortOptions,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let items = RawItems::keys(self, keys)?;
        self.sort_items::<K>(&items, opts, Some(scratch))
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
        keys: &mut CudaSlice<K>,
        vals: &mut CudaSlice<V>,
        opts: &SortOptions,
    ) -> Result<()> {
        self.sort_pairs_in(keys, vals, opts, None)
    }

    /// [`Gpu::sort_pairs`] using the caller's temporary storage (see [`Scratch`]).
    pub fn sort_pairs_with_scratch<K: SortKey, V: Payload>(
        &self,
        keys: &mut CudaSlice<K>,
        vals: &mut CudaSlice<V>,
        opts: &SortOptions,
        scratch: &mut Scratch,
    ) -> Result<()> {
        self.sort_pairs_in(keys, vals, opts, Some(scratch))
    }

    fn sort_pairs_in<K: SortKey, V: Payload>(
        &self,
        keys: &mut CudaSlice<K>,
        vals: &mut CudaSlice<V>,
        opts: &SortOptions,
        scratch: Option<&mut Scratch>,
    ) -> Result<()> {
        if keys.len() != vals.len() {
            return Err(Error::LengthMismatch { keys: keys.len(), values: vals.len() });
        }
        if opts.stable {
            return self.sort_pairs_stable(keys, vals, opts, scratch);
        }
        let items = RawItems::pairs(self, keys, vals)?;
        self.sort_items::<K>(&items, opts, scratch)
    }

    /// Sorts a host slice: copies it to the GPU, sorts, copies it back. On
    /// error the slice is unchanged. The device copy lives in the temporary
    /// storage this handle caches, so a second call of the same size
    /// allocates no device memory.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut v = vec![5i32, -3, 0];
    /// gpu.sort_slice(&mut v)?;
    /// assert_eq!(v, [-3, 0, 5]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn sort_slice<K: SortKey>(&self, keys: &mut [K]) -> Result<()> {
        self.sort_slice_with(keys, &SortOptions::default())
    }

    /// [`Gpu::sort_slice`] with options.
    pub fn sort_slice_with<K: SortKey>(&self, keys: &mut [K], opts: &SortOptions) -> Result<()> {
        opts.validate()?;
        if keys.len() < 2 {
            return Ok(());
        }
        let (n, key_bytes) = (keys.len(), std::mem::size_of::<K>());
        let temp = Self::sort_temp_bytes(opts, n, key_bytes, 0);
        let (_, temp_at, bytes) = Self::slice_layout(n, key_bytes, 0, temp);
        // Keys and the sort's own scratch in one piece of temporary storage.
        self.with_scratch(None, bytes, |base| {
            self.upload(base, keys)?;
            let items = RawItems::keys_at::<K>(base, n);
            self.run_sort::<K>(&items, opts, base + temp_at as u64)?;
            self.download(base, keys)
        })
    }

    /// Sorts host key-value slices (see [`Gpu::sort_pairs`]). On error both are unchanged.
    pub fn sort_pairs_slice<K: SortKey, V: Payload>(
        &self,
        keys: &mut [K],
        vals: &mut [V],
        opts: &SortOptions,
    ) -> Result<()> {
        if keys.len() != vals.len() {
            return Err(Error::LengthMismatch { keys: keys.len(), values: vals.len() });
        }
        opts.validate()?;
        if keys.len() < 2 {
            return Ok(());
        }
        if opts.stable {
            // Through device copies (the stable sort's own storage is separate).
            let (mut dk, mut dv) = (self.stream().clone_htod(keys)?, self.stream().clone_htod(vals)?);
            self.sort_pairs_stable(&mut dk, &mut dv, opts, None)?;
            let mut out_keys = vec![keys[0]; keys.len()];
            self.stream().memcpy_dtoh(&dk, &mut out_keys)?;
            self.stream().memcpy_dtoh(&dv, vals)?;
            keys.copy_from_slice(&out_keys);
            return Ok(());
        }
        let (n, key_bytes, val_bytes) = (keys.len(), std::mem::size_of::<K>(), std::mem::size_of::<V>());
        let temp = Self::sort_temp_bytes(opts, n, key_bytes, val_bytes);
        let (vals_at, temp_at, bytes) = Self::slice_layout(n, key_bytes, val_bytes, temp);
        self.with_scratch(None, bytes, |base| {
            self.upload(base, keys)?;
            self.upload(base + vals_at as u64, vals)?;
            let items = RawItems::keys_at::<K>(base, n).with_vals_at::<V>(base + vals_at as u64);
            self.run_sort::<K>(&items, opts, base + temp_at as u64)?;
            // Keys land in a host copy first: if the values' copy fails, both
            // slices are as they were.
            let mut out_keys = vec![keys[0]; n];
            self.download(base, &mut out_keys)?;
            self.download(base + vals_at as u64, vals)?;
            keys.copy_from_slice(&out_keys);
            Ok(())
        })
    }

    /// Where a host-slice sort puts its values and the sort's scratch after its
    /// keys in one piece of temporary storage (256-byte aligned), and its size.
    fn slice_layout(n: usize, key_bytes: usize, val_bytes: usize, temp: usize) -> (usize, usize, usize) {
        let vals = (n * key_bytes).next_multiple_of(256);
        let temp_at = vals + (n * val_bytes).next_multiple_of(256);
        (vals, temp_at, temp_at + temp)
    }

    /// Device bytes of temporary storage a full sort of `n` items on device
    /// buffers needs besides its input (`key_bytes`/`val_bytes` per item; 0
    /// value bytes for key-only): GPU-Warpsort's `n + c` of the paper's
    /// `2n + c` (nothing up to one tile), the bitonic sorts none. Here `c` is
    /// the merge samples (`n / 32` items) and partitions (8 bytes per merge
    /// window). Ask before sorting, e.g. to reserve a [`Scratch`] or to split
    /// work that would not fit; the host-slice sorts need the items' own size
    /// on top.
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
        if key_bytes == 2 {
            // 16-bit keys: their widened copy, then the sort of that copy.
            return Self::wide_bytes(n) + Self::sort_temp_bytes(opts, n, 4, val_bytes);
        }
        let (cfg, bytes) = (&opts.warpsort, item_bytes(key_bytes, val_bytes));
        match opts.algorithm {
            Algorithm::WarpSort if n > cfg.tile_for(bytes, n) => {
                WarpsortLayout::new(n, key_bytes, val_bytes, cfg.min_window(val_bytes > 0, bytes)).bytes
            }
            Algorithm::WarpsortPaper if n > PAPER_TILE as usize => {
                PaperLayout::new(&opts.paper, n, key_bytes, val_bytes).bytes
            }
            _ => 0,
        }
    }

    /// Maps keys onto (or back from) their ordered bit patterns.
    pub(crate) fn map_keys(&self, items: &RawItems, m: u32) -> Result<()> {
        if m & !mode::DECODE == 0 || items.n == 0 {
            return Ok(());
        }
        let name = if items.key_bytes == 4 { "map_keys_u32" } else { "map_keys_u64" };
        let grid = blocks_for(items.n, ELEMENTWISE_THREADS).min(65_535);
        self.launch(name, grid, ELEMENTWISE_THREADS, 0, &[Arg::U64(items.keys), Arg::U64(items.n as u64), Arg::U32(m)])
    }

    /// Runs `body` on keys mapped to their ordered patterns (order and key
    /// type folded in), and maps them back, also when `body` fails.
    pub(crate) fn with_ordered_keys<K: SortKey>(
        &self,
        items: &RawItems,
        order: Order,
        body: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let m = K::MODE | order.mode();
        self.map_keys(items, m)?;
        let r = body();
        let back = self.map_keys(items, m | mode::DECODE);
        r.and(back)
    }

    fn sort_items<K: SortKey>(
        &self,
        items: &RawItems,
        opts: &SortOptions,
        scratch: Option<&mut Scratch>,
    ) -> Result<()> {
        opts.validate()?;
        if items.n < 2 {
            return Ok(());
        }
        let bytes = Self::sort_temp_bytes(opts, items.n, items.key_bytes, items.val_bytes);
        // Storage before touching the data: an out-of-memory error leaves it as it was.
        self.with_scratch(scratch, bytes, |temp| self.run_sort::<K>(items, opts, temp))
    }

    /// Runs the sort `opts` names, with `temp` pointing at
    /// [`Gpu::sort_temp_bytes`] of temporary storage.
    pub(crate) fn run_sort<K: SortKey>(&self, items: &RawItems, opts: &SortOptions, temp: DevPtr) -> Result<()> {
        if items.key_bytes == 2 {
            // 16-bit keys sort as 32-bit patterns already in order, in the
            // first part of `temp` (see `sort_temp_bytes`).
            let asc = SortOptions { order: Order::Ascending, ..*opts };
            let inner = temp + Self::wide_bytes(items.n) as u64;
            return self
                .on_wide_keys(items, K::MODE | opts.order.mode(), temp, |w| self.run_sort::<u32>(w, &asc, inner));
        }
        if opts.algorithm == Algorithm::WarpSort {
            self.check_launch_shapes(items, &opts.warpsort)?;
        }
        self.with_ordered_keys::<K>(items, opts.order, || match opts.algorithm {
            Algorithm::WarpSort => self.warpsort(items, &opts.warpsort, temp),
            Algorithm::Bitonic => self.bitonic(items, true),
            Algorithm::BitonicNaive => self.bitonic(items, false),
            Algorithm::WarpsortPaper => self.warpsort_paper(items, &opts.paper, temp),
        })
    }

    /// Refuses, before any kernel runs, a configuration whose tile sort or
    /// block merge needs more shared memory, or more threads per block, than
    /// this GPU gives those kernels for these items.
    fn check_launch_shapes(&self, items: &RawItems, cfg: &WarpsortConfig) -> Result<()> {
        let (pairs, bytes) = (items.vals != 0, items.item_bytes());
        let tile = cfg.tile_for(bytes, items.n);
        let (tile_slots, tile_kernel) = match cfg.tile_sort {
            TileSort::BlockBitonic => (tile, "block_sort"),
            TileSort::WarpMerge => (tile_merge_smem_slots(tile as u32) as usize, "merge_tile_sort"),
        };
        self.check_block(&items.kernel(tile_kernel), cfg.tile_sort.threads(tile))?;
        let merge_slots = match cfg.merge {
            MergeKernel::Block if items.n > tile => {
                let k = cfg.merge_keys(pairs, bytes);
                self.check_block(&items.kernel(&format!("block_merge{k}")), cfg.block_threads(items.n))?;
                merge_pass_smem_slots(cfg.window(pairs, bytes, items.n) as u32, k, bytes as u32) as usize
            }
            _ => 0,
        };
        let need = tile_slots.max(merge_slots) * bytes;
        if need > self.info().max_smem as usize {
            return Err(Error::BadConfig(format!(
                "{cfg:?} needs {need} bytes of shared memory per block for {bytes}-byte items; this GPU allows {}: use a smaller tile, merge_threads or merge_keys_per_lane",
                self.info().max_smem
            )));
        }
        Ok(())
    }

    /// Block sort of `src` segments of `seg` items into `dst`, `tile` items
    /// per block, recording `samples` of `dst` (or [`NO_SAMPLES`]).
    pub(crate) fn block_sort(
        &self,
        src: &RawItems,
        dst: &RawItems,
        seg: usize,
        tile: usize,
        samples: [Arg; 2],
    ) -> Result<()> {
        let segments = src.n.div_ceil(seg);
        let threads = TileSort::BlockBitonic.threads(tile);
        let smem = (tile * src.item_bytes()) as u32;
        let [sk, sv] = src.args();
        let [dk, dv] = dst.args();
        let grid = segments.min(i32::MAX as usize) as u32;
        let [ak, av] = samples;
        let args = [sk, sv, dk, dv, Arg::U64(src.n as u64), Arg::U64(seg as u64), ak, av];
        self.launch(&src.kernel("block_sort"), grid, threads, smem, &args)
    }

    /// GPU-Warpsort's step 1: every tile of `tile` items of `src` sorted into
    /// `dst`, recording `samples` of `dst`.
    fn tile_sort(
        &self,
        src: &RawItems,
        dst: &RawItems,
        cfg: &WarpsortConfig,
        tile: usize,
        samples: [Arg; 2],
    ) -> Result<()> {
        match cfg.tile_sort {
            TileSort::BlockBitonic => self.block_sort(src, dst, tile, tile, samples),
            TileSort::WarpMerge => {
                let threads = TileSort::WarpMerge.threads(tile);
                let smem = tile_merge_smem_slots(tile as u32) * src.item_bytes() as u32;
                let [sk, sv] = src.args();
                let [dk, dv] = dst.args();
                let [ak, av] = samples;
                let grid = src.n.div_ceil(tile) as u32;
                let args = [sk, sv, dk, dv, Arg::U64(src.n as u64), Arg::U64(tile as u64), ak, av];
                self.launch(&src.kernel("merge_tile_sort"), grid, threads, smem, &args)
            }
        }
    }

    /// GPU-Warpsort (tuned): step 1 tiles, then merge passes.
    pub(crate) fn warpsort(&self, items: &RawItems, cfg: &WarpsortConfig, temp: DevPtr) -> Result<()> {
        let n = items.n;
        let pairs = items.vals != 0;
        let tile = cfg.tile_for(items.item_bytes(), n);
        if n <= tile {
            return self.tile_sort(items, items, cfg, tile, NO_SAMPLES);
        }
        let layout =
            WarpsortLayout::new(n, items.key_bytes, items.val_bytes, cfg.min_window(pairs, items.item_bytes()));
        let tmp = items.moved_to(temp, temp + layout.vals as u64);
        // The block merge records samples for the next partition; the warp
        // bitonic merge does not, so its partitions search the runs alone.
        let samples = match cfg.merge {
            MergeKernel::Block => {
                [Arg::U64(temp + layout.sample_keys as u64), Arg::U64(temp + layout.sample_vals as u64)]
            }
            MergeKernel::WarpBitonic => NO_SAMPLES,
        };
        let parts = temp + layout.parts as u64;
        let passes = log2_ceil(n.div_ceil(tile));
        // Step 1 writes where an even number of passes later ends in `items`.
        let (mut cur, mut other) = if passes % 2 == 1 { (tmp.clone(), items.clone()) } else { (items.clone(), tmp) };
        self.tile_sort(items, &cur, cfg, tile, samples)?;
        let mut run = tile;
        while run < n {
            self.merge_pass(&cur, &other, run, parts, cfg, samples)?;
            std::mem::swap(&mut cur, &mut other);
            run *= 2;
        }
        Ok(())
    }

    /// One merge pass: merge-path partition into windows (a thread per
    /// window, from the samples of `src` when given), then a block or a warp
    /// per window merges it (a block merge records the samples of `dst`).
    pub(crate) fn merge_pass(
        &self,
        src: &RawItems,
        dst: &RawItems,
        run: usize,
        parts: u64,
        cfg: &WarpsortConfig,
        samples: [Arg; 2],
    ) -> Result<()> {
        let [sk, sv] = src.args();
        let [dk, dv] = dst.args();
        let [ak, av] = samples;
        let (n, run) = (Arg::U64(src.n as u64), Arg::U64(run as u64));
        let window = cfg.window(src.vals != 0, src.item_bytes(), src.n);
        let windows = src.n.div_ceil(window);
        let part_args = [sk, sv, ak, av, n, run, Arg::U64(window as u64), Arg::U64(parts)];
        let part_grid = blocks_for(windows, PARTITION_THREADS);
        // Overlapped launches (`launch_chained`), as measured on an H200
        // (3bcadce's kernels, Gkeys/s with both kernels / only the
        // partitions / neither overlapped): both up to OVERLAP_MAX_BYTES of
        // items (2^22: u32 keys 21.7 / 21.1 / 20.4, u32 pairs 10.9 / 10.6 /
        // 10.6), only the partitions in small sorts (2^20: u32 keys 9.5 /
        // 11.5 / 10.6, pairs 7.9 / 8.6 / 8.1), neither past that (2^24 u32
        // keys 20.4 / 20.6 / 21.9, pairs 11.5 / 11.4 / 12.0; 2^26 keys 21.7
        // / 21.6 / 23.2: a cause not found yet).
        let small = src.n <= SMALL_SORT_ITEMS;
        let within = src.n * src.item_bytes() <= OVERLAP_MAX_BYTES;
        let (chain_partition, chain_merge) = (within, within && !small);
        self.launch_chained(
            chain_partition,
            &src.kernel("merge_partition"),
            part_grid,
            PARTITION_THREADS,
            0,
            &part_args,
        )?;
        match cfg.merge {
            MergeKernel::Block => {
                let k = cfg.merge_keys(src.vals != 0, src.item_bytes());
                let smem = merge_pass_smem_slots(window as u32, k, src.item_bytes() as u32) * src.item_bytes() as u32;
                let pass = src.kernel(&format!("block_merge{k}"));
                let args = [sk, sv, dk, dv, n, run, Arg::U64(parts), ak, av];
                self.launch_chained(chain_merge, &pass, windows as u32, cfg.block_threads(src.n), smem, &args)
            }
            MergeKernel::WarpBitonic => {
                let grid = blocks_for(windows, WARP_KERNEL_THREADS / WARP_SIZE);
                let pass = src.kernel(&format!("merge_pass{window}"));
                let args = [sk, sv, dk, dv, n, run, Arg::U64(parts)];
                self.launch(&pass, grid, WARP_KERNEL_THREADS, 0, &args)
            }
        }
    }

    /// Full-array bitonic sort, fused (register/shared-memory stages for
    /// strides below `BLOCK_TILE`) or naive (one launch per stage).
    fn bitonic(&self, items: &RawItems, fused: bool) -> Result<()> {
        let n = items.n;
        let tile = BLOCK_TILE as usize;
        let log_n = log2_ceil(n);
        let pairs = n.next_power_of_two() / 2;
        let stage_grid = blocks_for(pairs, GLOBAL_STAGE_THREADS);
        let [k, v] = items.args();
        let stage = |log_s: u32, log_j: u32| {
            self.launch(
                &items.kernel("bitonic_stage"),
                stage_grid,
                GLOBAL_STAGE_THREADS,
                0,
                &[k, v, Arg::U64(n as u64), Arg::U32(log_s), Arg::U32(log_j)],
            )
        };
        if !fused {
            for log_s in 1..=log_n {
                for log_j in (0..log_s).rev() {
                    stage(log_s, log_j)?;
                }
            }
            return Ok(());
        }
        self.block_sort(items, items, tile, tile, NO_SAMPLES)?;
        let log_tile = tile.trailing_zeros();
        let fused_grid = n.div_ceil(tile) as u32;
        for log_s in (log_tile + 1)..=log_n {
            // The flip with up to two half-cleaners, then the other global
            // half-cleaners up to three per pass.
            let c = (log_s - log_tile).min(3);
            if c == 1 {
                stage(log_s, log_s - 1)?;
            } else {
                let grid = blocks_for(n.next_power_of_two() >> (c + 1), GLOBAL_STAGE_THREADS);
                let name = items.kernel(&format!("bitonic_flip{c}"));
                self.launch(&name, grid, GLOBAL_STAGE_THREADS, 0, &[k, v, Arg::U64(n as u64), Arg::U32(log_s)])?;
            }
            let mut log_j = log_s as i64 - 1 - c as i64;
            while log_j >= log_tile as i64 {
                let c = (log_j - log_tile as i64 + 1).min(3) as u32;
                let lj = log_j as u32;
                match c {
                    1 => stage(log_s, lj)?,
                    _ => {
                        let grid = blocks_for(n.next_power_of_two() >> c, GLOBAL_STAGE_THREADS);
                        let name = items.kernel(&format!("bitonic_hc{c}"));
                        self.launch(&name, grid, GLOBAL_STAGE_THREADS, 0, &[k, v, Arg::U64(n as u64), Arg::U32(lj)])?;
                    }
                }
                log_j -= c as i64;
            }
            let smem = (tile * items.item_bytes()) as u32;
            self.launch(&items.kernel("bitonic_fused"), fused_grid, BLOCK_THREADS, smem, &[k, v, Arg::U64(n as u64)])?;
        }
        Ok(())
    }
}

/// Kernel arguments for "no samples" (null pointers).
pub(crate) const NO_SAMPLES: [Arg; 2] = [Arg::U64(0), Arg::U64(0)];

/// Bytes of one item in shared memory (the device's `Pair<K, V>`: key and
/// payload, the size rounded up to the larger alignment).
pub(crate) fn item_bytes(key_bytes: usize, val_bytes: usize) -> usize {
    (key_bytes + val_bytes).next_multiple_of(key_bytes.max(val_bytes))
}

/// GPU-Warpsort's temporary storage for `n` items: byte offsets of its
/// pieces (each 256-byte aligned) after the scratch keys at 0, and its size.
struct WarpsortLayout {
    /// Scratch payloads (`n` of them).
    vals: usize,
    /// Sample keys and payloads (`n / SAMPLE_STRIDE`, rounded up).
    sample_keys: usize,
    sample_vals: usize,
    /// Merge partitions: one `u64` per window (of the smallest size), and one more.
    parts: usize,
    bytes: usize,
}

impl WarpsortLayout {
    fn new(n: usize, key_bytes: usize, val_bytes: usize, window: usize) -> Self {
        let aligned = |b: usize| b.next_multiple_of(256);
        let samples = n.div_ceil(SAMPLE_STRIDE as usize);
        let vals = aligned(n * key_bytes);
        let sample_keys = vals + aligned(n * val_bytes);
        let sample_vals = sample_keys + aligned(samples * key_bytes);
        let parts = sample_vals + aligned(samples * val_bytes);
        let bytes = parts + (n.div_ceil(window) + 1) * 8;
        WarpsortLayout { vals, sample_keys, sample_vals, parts, bytes }
    }
}
