//! Argsort: the permutation that sorts keys, which stay unchanged.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::{items, shape};
use crate::error::{Error, Result};
use crate::exec::permute::Positions;
use crate::exec::wide::WideItems;
use crate::gpu::Gpu;
use crate::key::{SortIndex, SortKey};
use crate::options::SortOptions;
use crate::plan::permute::ArgsortPlan;
use crate::plan::{SortPlan, SortShape};

use super::sort::STABLE_MAX_LEN;

/// The plan of an argsort of `n` keys of `K` into positions of
/// `index_bytes`: the keys sorted as a copy with the positions as payloads,
/// or (stable) as ranks; stable `u64` positions ranked as `u32`, then
/// widened.
pub(crate) fn argsort_plan<K: SortKey>(
    gpu: &Gpu,
    opts: &SortOptions,
    n: usize,
    index_bytes: usize,
) -> Result<ArgsortPlan<SortPlan>> {
    argsort_plan_of(gpu, opts, shape::<K>(0), size_of::<K>(), n, index_bytes)
}

/// [`argsort_plan`] of keys of `shape` (key-only), `key_bytes` each as stored.
pub(crate) fn argsort_plan_of(
    gpu: &Gpu,
    opts: &SortOptions,
    keys: SortShape,
    key_bytes: usize,
    n: usize,
    index_bytes: usize,
) -> Result<ArgsortPlan<SortPlan>> {
    let sorted = if opts.stable { keys.ranked() } else { SortShape { kind: keys.kind.with_vals(index_bytes), ..keys } };
    let sort = SortPlan::new(opts, sorted, n, gpu.policy())?;
    Ok(ArgsortPlan::new(n, key_bytes, opts.stable && index_bytes == 8, sort))
}

/// The longest argsort into positions of `index_bytes`.
pub(crate) fn check_len(n: usize, index_bytes: usize, opts: &SortOptions) -> Result<()> {
    let max = if index_bytes == 4 || opts.stable { STABLE_MAX_LEN } else { usize::MAX };
    if n > max { Err(Error::TooLong { len: n, max }) } else { Ok(()) }
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
    pub fn argsort<K: SortKey>(&self, keys: &impl DevicePtr<K>, opts: &SortOptions) -> Result<CudaSlice<u32>> {
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
    pub fn argsort64<K: SortKey>(&self, keys: &impl DevicePtr<K>, opts: &SortOptions) -> Result<CudaSlice<u64>> {
        self.argsort_as::<K, u64>(keys, opts)
    }

    /// Argsort with positions of type `I` into a new buffer.
    fn argsort_as<K: SortKey, I: SortIndex>(
        &self,
        keys: &impl DevicePtr<K>,
        opts: &SortOptions,
    ) -> Result<CudaSlice<I>> {
        check_len(keys.len(), size_of::<I>(), opts)?;
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
        keys: &impl DevicePtr<K>,
        out: &mut impl DevicePtrMut<I>,
        opts: &SortOptions,
    ) -> Result<()> {
        let n = keys.len();
        let ib = size_of::<I>();
        if let Some(fields) = super::wide::<K>() {
            if out.len() != n {
                return Err(Error::LengthMismatch { keys: n, values: out.len() });
            }
            let (k, _k) = self.addr(keys, "keys")?;
            let (o, _o) = self.addr_mut(out, "positions")?;
            let pass = |it: &crate::launch::Items, o: &SortOptions| self.full_pass(it, o);
            return self.argsort_wide(&WideItems::keys(k, n, fields), opts, o, ib, &pass);
        }
        let plan = argsort_plan::<K>(self, opts, n, ib)?;
        if out.len() != n {
            return Err(Error::LengthMismatch { keys: n, values: out.len() });
        }
        check_len(n, ib, opts)?;
        let (k, _k) = self.addr(keys, "keys")?;
        let (o, _o) = self.addr_mut(out, "positions")?;
        if n == 0 {
            return Ok(());
        }
        let mode = K::MODE | opts.order.mode();
        self.with_scratch(None, plan.temp_bytes, |temp| {
            let keys = items::<K>(k, 0, 0, n);
            self.run_argsort(
                &keys,
                size_of::<K>(),
                o,
                ib,
                opts.stable,
                Positions::Global,
                &plan,
                temp,
                |it, pending, t| self.run_sort_from(it, pending, &plan.inner, mode, t),
            )
        })
    }
}
