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

use crate::error::Result;
use crate::gpu::Gpu;
use crate::gpu::scratch::alloc_bytes;
use crate::key::Order;
use crate::launch::families::GatherRecords;
use crate::launch::{DevPtr, ItemKind, Items};
use crate::options::SortOptions;
use crate::plan::SortShape;

/// One pass: sorts `(u64 word, u32 position)` items with the options given.
pub(crate) type Pass<'a> = &'a dyn Fn(&Items, &SortOptions) -> Result<()>;

impl Gpu {
    /// A pass of a full sort.
    pub(crate) fn full_pass(&self, items: &Items, opts: &SortOptions) -> Result<()> {
        self.sort_pair_items(items, SortShape::new(8, 4), 0, opts, None)
    }

    /// Writes at `out` the `u32` positions that sort the `n` keys stored as
    /// `fields` at `raw` (left unchanged) with `opts` (stable when
    /// `opts.stable`), each word sorted by `pass`.
    pub(crate) fn wide_permutation(
        &self,
        raw: DevPtr,
        n: usize,
        fields: Fields,
        opts: &SortOptions,
        out: DevPtr,
        pass: Pass,
    ) -> Result<()> {
        let words = fields.words(64);
        let s = self.stream();
        // The word being sorted, and (after the first pass) the word in
        // input order that it is gathered from.
        let (word, input): (CudaSlice<u8>, CudaSlice<u8>) = (alloc_bytes(s, n * 8)?, alloc_bytes(s, n * 8)?);
        let (word, input) = (self.ptr(&word), self.ptr(&input));
        self.iota(ItemKind::U32, out, n)?;
        for j in (0..words.words).rev() {
            let first = j + 1 == words.words;
            let f = fields.word(&words, j);
            if first {
                self.encode_keys(ItemKind::U64, f, raw, word, n, opts.order.mode())?;
            } else {
                self.encode_keys(ItemKind::U64, f, raw, input, n, opts.order.mode())?;
                self.gather(8, input, out, word, n)?;
            }
            let o = SortOptions { order: Order::Ascending, stable: opts.stable || !first, ..*opts };
            pass(&Items::new(word, out, n, ItemKind::U64U32), &o)?;
        }
        Ok(())
    }

    /// Sorts the `n` keys stored as `fields` at `raw` in place with `opts`,
    /// moving the values of `val_bytes` at `vals` (0 bytes: none) with them.
    /// Everything it needs is allocated first and the caller's buffers are
    /// written only by the last copies: on error they are as they were.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sort_wide(
        &self,
        raw: DevPtr,
        vals: DevPtr,
        val_bytes: usize,
        n: usize,
        fields: Fields,
        opts: &SortOptions,
        pass: Pass,
    ) -> Result<()> {
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
        self.wide_permutation(raw, n, fields, opts, p, pass)?;
        self.gather_records(raw, p, r, n, stride)?;
        if val_bytes > 0 {
            self.gather(val_bytes, vals, p, m, n)?;
            self.copy_dtod(vals, m, n * val_bytes)?;
        }
        self.copy_dtod(raw, r, n * stride)
    }

    /// The positions that sort the `n` keys stored as `fields` at `raw`, as
    /// `out_bytes` (4 or 8) each at `out`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn argsort_wide(
        &self,
        raw: DevPtr,
        n: usize,
        fields: Fields,
        opts: &SortOptions,
        out: DevPtr,
        out_bytes: usize,
        pass: Pass,
    ) -> Result<()> {
        if out_bytes == 4 {
            return self.wide_permutation(raw, n, fields, opts, out, pass);
        }
        let s = self.stream();
        let (positions, iota) = (alloc_bytes(s, n * 4)?, alloc_bytes(s, n * 8)?);
        let (p, i) = (self.ptr(&positions), self.ptr(&iota));
        self.wide_permutation(raw, n, fields, opts, p, pass)?;
        self.iota(ItemKind::U64, i, n)?;
        self.gather(8, i, p, out, n)
    }

    /// `dst[i] = src[idx[i]]` for `n` records of `bytes` (a multiple of 4).
    pub(crate) fn gather_records(&self, src: DevPtr, idx: DevPtr, dst: DevPtr, n: usize, bytes: usize) -> Result<()> {
        let words = (bytes / 4) as u32;
        self.launch(&GatherRecords { src, idx, dst, n, words }, self.policy().elementwise(n * words as usize))
    }
}
