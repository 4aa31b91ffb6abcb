//! Keys around every sort: mapped in place onto their ordered bit patterns
//! (`warpsort_kernels::ordered`: signed and float keys, the descending
//! order) and back; 16-bit keys widened into 32-bit patterns in temporary
//! storage (the key in the high half, already mapped) and narrowed back.

use cudarc::driver::CudaSlice;
use warpsort_kernels::ordered::mode;

use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::families::{ConvertKeys16, MapKeys};
use crate::launch::{DevPtr, ItemKind, Items};

impl Gpu {
    /// Maps `items`' keys onto (or, with `mode::DECODE`, back from) their
    /// ordered patterns; nothing when `m` asks for no change.
    pub(crate) fn map_keys(&self, items: &Items, m: u32) -> Result<()> {
        if m & !mode::DECODE == 0 || items.n == 0 {
            return Ok(());
        }
        let word = items.kind.keys_only();
        self.launch(&MapKeys { word, keys: items.keys, n: items.n, mode: m }, self.policy().elementwise(items.n))
    }

    /// Runs `body` on keys mapped to their ordered patterns under `m`, and
    /// maps them back, also when `body` fails.
    pub(crate) fn with_ordered_keys(&self, items: &Items, m: u32, body: impl FnOnce() -> Result<()>) -> Result<()> {
        self.map_keys(items, m)?;
        let r = body();
        let back = self.map_keys(items, m | mode::DECODE);
        r.and(back)
    }

    /// Runs `body` on `items`' 16-bit keys widened under `m` into `wide`
    /// (`n` words of temporary storage), then narrows the result back: the
    /// caller's keys change only once `body` has succeeded.
    pub(crate) fn on_wide_keys(
        &self,
        items: &Items,
        m: u32,
        wide: DevPtr,
        body: impl FnOnce(&Items) -> Result<()>,
    ) -> Result<()> {
        self.convert16(items.keys, wide, items.n, m)?;
        body(&Items { keys: wide, ..*items })?;
        self.convert16(items.keys, wide, items.n, m | mode::DECODE)
    }

    /// For 16-bit keys (none otherwise, or when empty): a `u32` copy of the
    /// keys mapped under `m`, and `items` pointing at it (for the GPU checks).
    pub(crate) fn widen_keys(&self, items: &Items, narrow: bool, m: u32) -> Result<Option<(CudaSlice<u32>, Items)>> {
        if !narrow || items.n == 0 {
            return Ok(None);
        }
        // SAFETY: written by the conversion before anything reads it.
        let wide = unsafe { self.stream().alloc::<u32>(items.n) }?;
        let at = self.ptr(&wide);
        self.convert16(items.keys, at, items.n, m)?;
        Ok(Some((wide, Items { keys: at, ..*items })))
    }

    /// 16-bit keys at `narrow` widened into ordered patterns at `wide` under
    /// `m`, or (with `mode::DECODE`) narrowed back.
    pub(crate) fn convert16(&self, narrow: DevPtr, wide: DevPtr, n: usize, m: u32) -> Result<()> {
        self.launch(&ConvertKeys16 { narrow, wide, n, mode: m }, self.policy().elementwise(n))
    }
}

/// The word kind of `bytes`-byte values (4 or 8) for element-wise kernels.
pub(crate) fn word(bytes: usize) -> ItemKind {
    if bytes == 4 { ItemKind::U32 } else { ItemKind::U64 }
}
