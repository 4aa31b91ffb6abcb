//! Keys around every sort: mapped in place onto their ordered words through
//! their view (`warpsort_kernels::ordered::View`: signed and float keys,
//! the descending order, tuples and byte strings that fill their word) and
//! back; other keys stored as fields (16-bit keys, tuples with padding)
//! encoded into ordered words in temporary storage and decoded back.

use cudarc::driver::{CudaSlice, DeviceRepr};
use warpsort_kernels::ordered::{Fields, View, mode};

use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::families::{EncodeKeys, MapKeys};
use crate::launch::{DevPtr, ItemKind, Items};
use crate::plan::SortShape;

impl Gpu {
    /// Maps `items`' keys onto (or, with `mode::DECODE`, back from) their
    /// ordered patterns; nothing when `m` asks for no change.
    pub(crate) fn map_keys(&self, items: &Items, m: u32) -> Result<()> {
        let view = View::of_mode(m, word_bits(items));
        self.map_through(items, view, m & mode::DECODE != 0)
    }

    /// Maps `items`' keys in place onto their ordered words through `view`
    /// (`decode`: back); nothing for the identity.
    pub(crate) fn map_through(&self, items: &Items, view: View, decode: bool) -> Result<()> {
        if view.is_identity() || items.n == 0 {
            return Ok(());
        }
        let (word, keys, n) = (items.kind.keys_only(), items.keys, items.n);
        self.launch(&MapKeys { word, keys, n, view, decode }, self.policy().elementwise(n))
    }

    /// Runs `body` on keys mapped in place onto their ordered words through
    /// `view`, and maps them back, also when `body` fails.
    pub(crate) fn with_view(&self, items: &Items, view: View, body: impl FnOnce() -> Result<()>) -> Result<()> {
        self.map_through(items, view, false)?;
        let r = body();
        let back = self.map_through(items, view, true);
        r.and(back)
    }

    /// How `items`' keys, of `shape`, under `m`, become their ordered words
    /// in place: primitive keys by their mapping, keys stored as fields
    /// that fill their word exactly (no padding; the word aligned) by their
    /// [`View`]; `None` for other keys stored as fields (encoded into a
    /// copy).
    pub(crate) fn key_view(items: &Items, shape: SortShape, m: u32) -> Option<View> {
        let bits = word_bits(items);
        match shape.fields {
            None => Some(View::of_mode(m, bits)),
            Some(f) => View::of_fields(f, bits, m).filter(|_| items.keys.is_multiple_of(bits as u64 / 8)),
        }
    }

    /// Runs `body` on `items`' keys as their ordered words under `m`: in
    /// place through their view ([`Gpu::key_view`]) and back afterwards
    /// (also when `body` fails), or, for other keys stored as fields
    /// (`shape.fields`), encoded into the words at `wide` (the plan's copy)
    /// and decoded back.
    pub(crate) fn on_words(
        &self,
        items: &Items,
        shape: SortShape,
        wide: Option<DevPtr>,
        m: u32,
        body: impl FnOnce(&Items) -> Result<()>,
    ) -> Result<()> {
        match (Self::key_view(items, shape, m), shape.fields, wide) {
            (Some(view), ..) => self.with_view(items, view, || body(items)),
            (None, Some(fields), Some(wide)) => self.on_wide_keys(items, fields, m, wide, body),
            // No copy planned: fewer than two keys, nothing to order.
            (None, ..) => body(items),
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

/// Bits of the words `items`' keys sort as (32 or 64).
fn word_bits(items: &Items) -> u32 {
    items.kind.key_bytes() as u32 * 8
}

/// The word kind of `bytes`-byte values (4 or 8) for element-wise kernels.
pub(crate) fn word(bytes: usize) -> ItemKind {
    if bytes == 4 { ItemKind::U32 } else { ItemKind::U64 }
}
