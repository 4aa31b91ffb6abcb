//! 16-bit keys: the kernels sort 32-bit patterns, so 16-bit keys are widened
//! into temporary storage (the key in the high half, already mapped onto its
//! ordered pattern), sorted as `u32` with the caller's payloads, and narrowed
//! back.

use cudarc::driver::CudaSlice;
use warpsort_kernels::config::ELEMENTWISE_THREADS;
use warpsort_kernels::ordered::mode;

use crate::error::Result;
use crate::gpu::{Arg, DevPtr, Gpu, blocks_for};
use crate::items::RawItems;

impl Gpu {
    /// Bytes of the widened copy of `n` 16-bit keys (256-byte aligned).
    pub(crate) fn wide_bytes(n: usize) -> usize {
        (n * 4).next_multiple_of(256)
    }

    /// Runs `body` on `items`' 16-bit keys widened under `m` (`ordered::mode`
    /// bits) into `wide` ([`Gpu::wide_bytes`] of temporary storage), then
    /// narrows the result back: the caller's keys change only once `body`
    /// has succeeded.
    pub(crate) fn on_wide_keys(
        &self,
        items: &RawItems,
        m: u32,
        wide: DevPtr,
        body: impl FnOnce(&RawItems) -> Result<()>,
    ) -> Result<()> {
        self.convert16(items.keys, wide, items.n, m)?;
        body(&RawItems { keys: wide, key_bytes: 4, ..items.clone() })?;
        self.convert16(items.keys, wide, items.n, m | mode::DECODE)
    }

    /// For 16-bit keys (none otherwise, or when empty): a `u32` copy of the
    /// keys mapped under `m`, and `items` pointing at it (for the GPU check).
    pub(crate) fn widen_keys(&self, items: &RawItems, m: u32) -> Result<Option<(CudaSlice<u32>, RawItems)>> {
        if items.key_bytes != 2 || items.n == 0 {
            return Ok(None);
        }
        // SAFETY: written by the conversion before anything reads it.
        let wide = unsafe { self.stream().alloc::<u32>(items.n) }?;
        self.convert16(items.keys, self.ptr(&wide), items.n, m)?;
        let w = RawItems { keys: self.ptr(&wide), key_bytes: 4, ..items.clone() };
        Ok(Some((wide, w)))
    }

    fn convert16(&self, narrow: DevPtr, wide: DevPtr, n: usize, m: u32) -> Result<()> {
        let grid = blocks_for(n, ELEMENTWISE_THREADS).min(65_535);
        let args = [Arg::U64(narrow), Arg::U64(wide), Arg::U64(n as u64), Arg::U32(m)];
        self.launch("convert_keys_u16", grid, ELEMENTWISE_THREADS, 0, &args)
    }
}
