//! Keys wider than one word (`[u64; N]` patterns: tuples of more than 64
//! bits, byte strings of 16 and 32 bytes). They sort as a permutation: the
//! `u32` positions sorted with each ordered word of the keys in turn, from
//! the least significant, every pass after the first stable (so the passes
//! compose into the lexicographic order: a radix sort whose digits are
//! words, each digit sorted by the merge sort); then the records, and the
//! values, gathered by it. Each pass is a `(u64, u32)` key-value sort: a
//! full one ([`Gpu::full_pass`]), or a segmented one for keys sorted in
//! segments (the positions never leave their segment).

use cudarc::driver::CudaSlice;
use warpsort_kernels::ordered::Fields;

use crate::api::argsort::check_len;
use crate::error::Result;
use crate::gpu::Gpu;
use crate::gpu::scratch::alloc_bytes;
use crate::key::Order;
use crate::launch::families::GatherRecords;
use crate::launch::{DevPtr, ItemKind, Items};
use crate::options::SortOptions;
use crate::plan::SortShape;

/// `n` keys stored as `fields` at `raw` in device memory, with values of
/// `val_bytes` each at `vals` that move with them (0 bytes: none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WideItems {
    pub raw: DevPtr,
    pub vals: DevPtr,
    pub val_bytes: usize,
    pub n: usize,
    pub fields: Fields,
}

impl WideItems {
    /// Keys alone.
    pub fn keys(raw: DevPtr, n: usize, fields: Fields) -> Self {
        WideItems { raw, vals: 0, val_bytes: 0, n, fields }
    }
}

/// One pass: sorts `(u64 word, u32 position)` items with the options given.
pub(crate) type Pass<'a> = &'a dyn Fn(&Items, &SortOptions) -> Result<()>;

/// What every pass sorts: a `u64` word with its `u32` position.
pub(crate) fn pass_shape() -> SortShape {
    SortShape::new(8, 4)
}

/// What every sort of keys wider than a word refuses before anything runs:
/// options the kernels do not support, more keys than `u32` positions count.
pub(crate) fn check_wide(n: usize, opts: &SortOptions) -> Result<()> {
    opts.validate()?;
    check_len(n, 4, opts)
}

impl Gpu {
    /// A pass of a full sort.
    pub(crate) fn full_pass(&self, items: &Items, opts: &SortOptions) -> Result<()> {
        self.sort_pair_items(items, pass_shape(), 0, opts, None)
    }

    /// Writes at `out` the `u32` positions that sort the keys of `w` (left
    /// unchanged) with `opts` (stable when `opts.stable`), each word sorted
    /// by `pass`.
    pub(crate) fn wide_permutation(&self, w: &WideItems, opts: &SortOptions, out: DevPtr, pass: Pass) -> Result<()> {
        let WideItems { raw, n, fields, .. } = *w;
        let words = fields.words(64);
        let m = opts.order.mode();
        let word = |j: usize, dst: DevPtr| self.encode_keys(ItemKind::U64, fields.word(&words, j), raw, dst, n, m);
        self.permutation_by_words(n, words.words, &word, opts, out, pass)
    }

    /// Writes at `out` the `u32` positions that sort `n` keys of `words`
    /// ordered `u64` words, most significant first, `word(j, dst)` writing
    /// word `j` of every key at `dst` in input order (already mapped for
    /// the order); each word sorted by `pass` (stable after the first, and
    /// the first too when `opts.stable`).
    pub(crate) fn permutation_by_words(
        &self,
        n: usize,
        words: usize,
        word: &dyn Fn(usize, DevPtr) -> Result<()>,
        opts: &SortOptions,
        out: DevPtr,
        pass: Pass,
    ) -> Result<()> {
        let s = self.stream();
        // The word being sorted, and (after the first pass) the word in
        // input order that it is gathered from.
        let (sorted, input): (CudaSlice<u8>, CudaSlice<u8>) = (alloc_bytes(s, n * 8)?, alloc_bytes(s, n * 8)?);
        let (sorted, input) = (self.ptr(&sorted), self.ptr(&input));
        self.iota(ItemKind::U32, out, n)?;
        for j in (0..words).rev() {
            let first = j + 1 == words;
            if first {
                word(j, sorted)?;
            } else {
                word(j, input)?;
                self.gather_values(8, input, out, sorted, n)?;
            }
            let o = SortOptions { order: Order::Ascending, stable: opts.stable || !first, ..*opts };
            pass(&Items::new(sorted, out, n, ItemKind::U64U32), &o)?;
        }
        Ok(())
    }

    /// Sorts the keys of `w` in place with `opts`, moving the values with
    /// them. Everything it needs is allocated first and the caller's
    /// buffers are written only by the last copies: on error they are as
    /// they were.
    pub(crate) fn sort_wide(&self, w: WideItems, opts: &SortOptions, pass: Pass) -> Result<()> {
        let WideItems { raw, vals, val_bytes, n, fields } = w;
        check_wide(n, opts)?;
        if n < 2 {
            return Ok(());
        }
        let stride = fields.stride() as usize;
        debug_assert!(stride.is_multiple_of(4), "wide keys hold a field of 4 bytes or more");
        let s = self.stream();
        let positions = alloc_bytes(s, n * 4)?;
        let records = alloc_bytes(s, n * stride)?;
        let moved = alloc_bytes(s, n * val_bytes.max(1))?;
        let (p, r, m) = (self.ptr(&positions), self.ptr(&records), self.ptr(&moved));
        self.wide_permutation(&w, opts, p, pass)?;
        self.gather_records(raw, p, r, n, stride)?;
        if val_bytes > 0 {
            self.gather_values(val_bytes, vals, p, m, n)?;
            self.copy_dtod(vals, m, n * val_bytes)?;
        }
        self.copy_dtod(raw, r, n * stride)
    }

    /// The positions that sort the keys of `w` (its values unused), as
    /// `out_bytes` (4 or 8) each at `out`.
    pub(crate) fn argsort_wide(
        &self,
        w: &WideItems,
        opts: &SortOptions,
        out: DevPtr,
        out_bytes: usize,
        pass: Pass,
    ) -> Result<()> {
        let n = w.n;
        check_wide(n, opts)?;
        if n == 0 {
            return Ok(());
        }
        if out_bytes == 4 {
            return self.wide_permutation(w, opts, out, pass);
        }
        let s = self.stream();
        let (positions, iota) = (alloc_bytes(s, n * 4)?, alloc_bytes(s, n * 8)?);
        let (p, i) = (self.ptr(&positions), self.ptr(&iota));
        self.wide_permutation(w, opts, p, pass)?;
        self.iota(ItemKind::U64, i, n)?;
        self.gather_values(8, i, p, out, n)
    }

    /// `dst[i] = src[idx[i]]` for `n` records of `bytes`, moved in the
    /// widest units (4, 2 or 1 bytes) that divide them.
    pub(crate) fn gather_records(&self, src: DevPtr, idx: DevPtr, dst: DevPtr, n: usize, bytes: usize) -> Result<()> {
        let unit = [4, 2, 1].into_iter().find(|u| bytes.is_multiple_of(*u)).unwrap_or(1);
        let units = (bytes / unit) as u32;
        let g = GatherRecords { src, idx, dst, n, units, unit: unit as u32 };
        self.launch(&g, self.policy().elementwise(n * units as usize))
    }
}
