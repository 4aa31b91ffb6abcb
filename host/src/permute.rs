//! Sorts that make or apply a permutation: argsort, and the stable key-value
//! sort (keys sorted with their input positions as ranks, compared key then
//! rank, then the payload gathered by the sorted positions).

use cudarc::driver::CudaSlice;
use warpsort_kernels::config::ELEMENTWISE_THREADS;

use crate::error::{Error, Result};
use crate::gpu::{Arg, DevPtr, Gpu, blocks_for};
use crate::items::RawItems;
use crate::key::{Payload, SortIndex, SortKey};
use crate::scratch::Scratch;
use crate::sort::SortOptions;

/// The most items a stable sort ranks: positions `0..u32::MAX - 1` are
/// ranks, `u32::MAX` is the pads' rank.
pub const STABLE_MAX_LEN: usize = u32::MAX as usize;

/// Offsets of consecutive regions of `sizes` bytes (each 256-byte aligned)
/// in one piece of temporary storage, and its total size.
fn layout<const N: usize>(sizes: [usize; N]) -> ([usize; N], usize) {
    let mut at = [0; N];
    let mut end = 0;
    for (a, s) in at.iter_mut().zip(sizes) {
        *a = end;
        end += s.next_multiple_of(256);
    }
    (at, end)
}

impl Gpu {
    /// The permutation that sorts `keys` (which stay unchanged): `keys[p[0]]`,
    /// `keys[p[1]]`, … is sorted in `opts.order`. With `opts.stable`, equal
    /// keys keep their input order (the permutation is unique); without it,
    /// their order is unspecified. Up to `u32::MAX` keys ([`Gpu::argsort64`]
    /// for more): [`Error::TooLong`] past that, before any work.
    ///
    /// ```no_run
    /// use warpsort::SortOptions;
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys = gpu.stream().clone_htod(&[2.5f32, -1.0, 2.5, 0.0])?;
    /// let stable = SortOptions { stable: true, ..Default::default() };
    /// let p = gpu.argsort(&keys, &stable)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&p)?, [1, 3, 0, 2]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort<K: SortKey>(&self, keys: &CudaSlice<K>, opts: &SortOptions) -> Result<CudaSlice<u32>> {
        self.argsort_as::<K, u32>(keys, opts)
    }

    /// [`Gpu::argsort`] with `u64` positions, for any length (a stable one
    /// still ranks at most `u32::MAX` keys: [`Error::TooLong`] past that).
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys = gpu.stream().clone_htod(&[30u64, 10, 20])?;
    /// let p = gpu.argsort64(&keys, &Default::default())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&p)?, [1u64, 2, 0]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort64<K: SortKey>(&self, keys: &CudaSlice<K>, opts: &SortOptions) -> Result<CudaSlice<u64>> {
        self.argsort_as::<K, u64>(keys, opts)
    }

    /// [`Gpu::argsort`] of a host slice: the permutation as a `Vec`.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// assert_eq!(gpu.argsort_slice(&[5i32, -3, 0], &Default::default())?, [1, 2, 0]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort_slice<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> Result<Vec<u32>> {
        opts.validate()?;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let d = self.stream().clone_htod(keys)?;
        let p = self.argsort(&d, opts)?;
        Ok(self.stream().clone_dtoh(&p)?)
    }

    /// Argsort with positions of type `I` into a new buffer.
    fn argsort_as<K: SortKey, I: SortIndex>(&self, keys: &CudaSlice<K>, opts: &SortOptions) -> Result<CudaSlice<I>> {
        // SAFETY: argsort_into writes every element before it returns Ok.
        let mut out = unsafe { self.stream().alloc::<I>(keys.len()) }?;
        self.argsort_into(keys, &mut out, opts)?;
        Ok(out)
    }

    /// Argsort into a caller's buffer of `keys.len()` positions (`u32` or
    /// `u64`): see [`Gpu::argsort`]. Its temporary storage (a copy of the
    /// keys, the sort's own) is the storage this handle caches, so a second
    /// call of the same size allocates nothing. On error `out` is unspecified
    /// and `keys` unchanged.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys = gpu.stream().clone_htod(&[3u32, 1, 2])?;
    /// let mut p = gpu.stream().alloc_zeros::<u64>(3)?;
    /// gpu.argsort_into(&keys, &mut p, &Default::default())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&p)?, [1, 2, 0]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn argsort_into<K: SortKey, I: SortIndex>(
        &self,
        keys: &CudaSlice<K>,
        out: &mut CudaSlice<I>,
        opts: &SortOptions,
    ) -> Result<()> {
        opts.validate()?;
        let n = keys.len();
        if out.len() != n {
            return Err(Error::LengthMismatch { keys: n, values: out.len() });
        }
        let max = if opts.stable { STABLE_MAX_LEN.min(I::MAX_LEN) } else { I::MAX_LEN };
        if n > max {
            return Err(Error::TooLong { len: n, max });
        }
        self.check_context(keys, "keys")?;
        self.check_context(out, "positions")?;
        if n == 0 {
            return Ok(());
        }
        let (kb, ib) = (std::mem::size_of::<K>(), std::mem::size_of::<I>());
        // Stable u64 positions are ranked as u32, then widened by a gather
        // from 0..n (two more regions).
        let widen = opts.stable && ib == 8;
        let val_bytes = if opts.stable { 4 } else { ib };
        let temp = Self::sort_temp_bytes(opts, n, kb, val_bytes);
        let ([copy_at, ranks_at, iota_at, temp_at], bytes) =
            layout([n * kb, if widen { n * 4 } else { 0 }, if widen { n * 8 } else { 0 }, temp]);
        let out_ptr = self.ptr(out);
        self.with_scratch(None, bytes, |base| {
            // The keys are sorted as a copy, beside the positions.
            let copy = base + copy_at as u64;
            self.copy_dtod(copy, self.ptr(keys), n * kb)?;
            let keys = RawItems::keys_at::<K>(copy, n);
            let temp = base + temp_at as u64;
            if !opts.stable {
                self.iota(I::IOTA, out_ptr, n)?;
                return self.run_sort::<K>(&keys.with_vals_at::<I>(out_ptr), opts, temp);
            }
            if !widen {
                // u32 positions are the ranks themselves.
                self.iota(I::IOTA, out_ptr, n)?;
                return self.run_sort::<K>(&keys.with_ranks_at(out_ptr), opts, temp);
            }
            let (ranks, iota) = (base + ranks_at as u64, base + iota_at as u64);
            self.iota("iota_u32", ranks, n)?;
            self.iota("iota_u64", iota, n)?;
            self.run_sort::<K>(&keys.with_ranks_at(ranks), opts, temp)?;
            self.gather(8, iota, ranks, out_ptr, n)
        })
    }

    /// The stable key-value sort ([`Gpu::sort_pairs`] with `opts.stable`):
    /// keys sorted with their positions as ranks, then the values gathered.
    /// All temporary storage is asked for at once, before the data is touched.
    pub(crate) fn sort_pairs_stable<K: SortKey, V: Payload>(
        &self,
        keys: &mut CudaSlice<K>,
        vals: &mut CudaSlice<V>,
        opts: &SortOptions,
        scratch: Option<&mut Scratch>,
    ) -> Result<()> {
        opts.validate()?;
        let n = keys.len();
        if n > STABLE_MAX_LEN {
            return Err(Error::TooLong { len: n, max: STABLE_MAX_LEN });
        }
        let items = RawItems::pairs(self, keys, vals)?;
        if n < 2 {
            return Ok(());
        }
        let vb = std::mem::size_of::<V>();
        let temp = Self::sort_temp_bytes(opts, n, items.key_bytes, 4);
        let ([ranks_at, moved_at, temp_at], bytes) = layout([n * 4, n * vb, temp]);
        self.with_scratch(scratch, bytes, |base| {
            let (ranks, moved) = (base + ranks_at as u64, base + moved_at as u64);
            self.iota("iota_u32", ranks, n)?;
            let ranked = RawItems::keys_at::<K>(items.keys, n).with_ranks_at(ranks);
            self.run_sort::<K>(&ranked, opts, base + temp_at as u64)?;
            self.gather(vb, items.vals, ranks, moved, n)?;
            self.copy_dtod(items.vals, moved, n * vb)
        })
    }

    /// Writes `0, 1, …, n - 1` with the kernel `name` (`iota_u32`/`iota_u64`).
    fn iota(&self, name: &str, out: DevPtr, n: usize) -> Result<()> {
        let grid = blocks_for(n, ELEMENTWISE_THREADS).min(65_535);
        self.launch(name, grid, ELEMENTWISE_THREADS, 0, &[Arg::U64(out), Arg::U64(n as u64)])
    }

    /// `dst[i] = src[idx[i]]` for `n` values of `bytes` (4 or 8) bytes.
    fn gather(&self, bytes: usize, src: DevPtr, idx: DevPtr, dst: DevPtr, n: usize) -> Result<()> {
        let name = if bytes == 4 { "gather_u32" } else { "gather_u64" };
        let grid = blocks_for(n, ELEMENTWISE_THREADS).min(65_535);
        let args = [Arg::U64(src), Arg::U64(idx), Arg::U64(dst), Arg::U64(n as u64)];
        self.launch(name, grid, ELEMENTWISE_THREADS, 0, &args)
    }

    /// Queues a copy of `bytes` from device address `src` to `dst`.
    fn copy_dtod(&self, dst: DevPtr, src: DevPtr, bytes: usize) -> Result<()> {
        self.context().bind_to_thread()?;
        // SAFETY: callers pass addresses inside live allocations of this
        // context with `bytes` to read and write, not overlapping.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, self.stream().cu_stream()) }?;
        Ok(())
    }
}
