//! Keys around every sort: mapped in place onto their ordered bit patterns
//! (`warpsort_kernels::ordered`: signed and float keys, the descending
//! order) and back; keys stored as fields (16-bit keys, tuples, byte
//! strings) encoded into ordered words in temporary storage and decoded back.

use cudarc::driver::{CudaSlice, DeviceRepr};
use warpsort_kernels::ordered::{Fields, mode};

use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::families::{EncodeKeys, MapKeys};
use crate::launch::{DevPtr, ItemKind, Items};
use crate::plan::SortShape;

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

    /// Runs `body` on `items`' keys as their ordered words under `m`: for
    /// keys stored as fields (`shape.fields`) encoded into the words at
    /// `wide` (the plan's copy), else mapped in place; back afterwards (in
    /// place: also when `body` fails).
    pub(crate) fn on_words(
        &self,
        items: &Items,
        shape: SortShape,
        wide: Option<DevPtr>,
        m: u32,
        body: impl FnOnce(&Items) -> Result<()>,
    ) -> Result<()> {
        match (shape.fields, wide) {
            (Some(fields), Some(wide)) => self.on_wide_keys(items, fields, m, wide, body),
            _ => self.with_ordered_keys(items, m, || body(items)),
        }
    }

    /// Runs `body` on `items`' keys stored as `fields` encoded under `m`
    /// into their words at `wide` (`n` words of temporary storage), then
    /// decodes the result back: the caller's keys change only once `body`
    /// has succeeded.
    pub(crate) fn on_wide_keys(
        &self,
        items: &Items,
        fields: Fields,
        m: u32,
        wide: DevPtr,
        body: impl FnOnce(&Items) -> Result<()>,
    ) -> Result<()> {
        let word = items.kind.keys_only();
        self.encode_keys(word, fields, items.keys, wide, items.n, m)?;
        body(&Items { keys: wide, ..*items })?;
        self.encode_keys(word, fields, items.keys, wide, items.n, m | mode::DECODE)
    }

    /// For keys stored as `fields` (none otherwise, or when empty): a copy
    /// of their words encoded under `m`, and `items` pointing at it (for the
    /// GPU checks).
    pub(crate) fn widen_keys<W: DeviceRepr>(
        &self,
        items: &Items,
        fields: Option<Fields>,
        m: u32,
    ) -> Result<Option<(CudaSlice<W>, Items)>> {
        let Some(fields) = fields.filter(|_| items.n > 0) else { return Ok(None) };
        // SAFETY: written by the encoding before anything reads it.
        let wide = unsafe { self.stream().alloc::<W>(items.n) }?;
        let at = self.ptr(&wide);
        self.encode_keys(items.kind.keys_only(), fields, items.keys, at, items.n, m)?;
        Ok(Some((wide, Items { keys: at, ..*items })))
    }

    /// Keys stored as `fields` at `raw` encoded into their ordered words
    /// (`word`: `U32` or `U64`) at `words` under `m`, or (with
    /// `mode::DECODE`) decoded back.
    pub(crate) fn encode_keys(
        &self,
        word: ItemKind,
        fields: Fields,
        raw: DevPtr,
        words: DevPtr,
        n: usize,
        m: u32,
    ) -> Result<()> {
        self.launch(&EncodeKeys { word, raw, words, n, fields, mode: m }, self.policy().elementwise(n))
    }
}

/// The word kind of `bytes`-byte values (4 or 8) for element-wise kernels.
pub(crate) fn word(bytes: usize) -> ItemKind {
    if bytes == 4 { ItemKind::U32 } else { ItemKind::U64 }
}
