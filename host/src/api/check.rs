//! Checking a result on the GPU without copying it back: sortedness by warp
//! vote, and a multiset fingerprint (sum of hashed key-value pairs) by warp
//! reduction, so that "sorted and same fingerprint as the input" verifies a
//! sort; the same inside segments.

use cudarc::driver::{CudaSlice, DevicePtr};

use super::{items, val_bytes};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use warpsort_kernels::config::order_scan;
use warpsort_kernels::ordered::{View, mix64};

use crate::key::{Bits, Order, Payload, SortKey};
use crate::launch::families::{SegmentBoundaries, Verify};
use crate::launch::{ItemKind, Items, Shape};
use crate::plan::presorted::PresortedPlan;
use crate::plan::segments::OffsetsPlan;

/// What [`Gpu::check`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    /// Adjacent pairs out of order.
    pub descents: u64,
    /// Order-independent fingerprint of the (key, value) multiset.
    pub fingerprint: u64,
}

impl Check {
    /// Sorted, and the same items as `before`.
    ///
    /// ```
    /// use warpsort::Check;
    /// let before = Check { descents: 7, fingerprint: 42 };
    /// assert!(Check { descents: 0, fingerprint: 42 }.confirms(&before));
    /// assert!(!Check { descents: 0, fingerprint: 41 }.confirms(&before));
    /// ```
    pub fn confirms(&self, before: &Check) -> bool {
        self.descents == 0 && self.fingerprint == before.fingerprint
    }
}

/// How a device array is cut into segments, for [`Gpu::check_segments`].
#[derive(Clone, Copy)]
pub enum Segments<'a> {
    /// Rows of this many items (the last may be shorter), as
    /// [`Gpu::sort_segments`] sorts them.
    Rows(usize),
    /// Segment `s` is `[offsets[s], offsets[s + 1])`, as
    /// [`Gpu::sort_segments_by_offsets`] sorts them.
    Offsets(&'a CudaSlice<u32>),
}

impl Gpu {
    /// Counts descents of `keys` in `order` and fingerprints the keys with
    /// their values (if any). `keys` may be a view; values are a whole buffer.
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[2u32, 1])?;
    /// let before = gpu.check::<u32, u32>(&keys, None, Order::Ascending)?;
    /// gpu.sort(&mut keys)?;
    /// assert!(gpu.check::<u32, u32>(&keys, None, Order::Ascending)?.confirms(&before));
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn check<K: SortKey, V: Payload>(
        &self,
        keys: &impl DevicePtr<K>,
        vals: Option<&CudaSlice<V>>,
        order: Order,
    ) -> Result<Check> {
        let n = keys.len();
        if super::wide::<K>().is_some() {
            return self.check_wide(keys, vals, order);
        }
        let (k, _k) = self.addr(keys, "keys")?;
        let (vb, v) = match vals {
            Some(v) => {
                super::same_len(n, v.len())?;
                (val_bytes::<V>(), Some(self.addr(v, "values")?))
            }
            None => (0, None),
        };
        let it = items::<K>(k, v.as_ref().map_or(0, |a| a.0), vb, n);
        // Keys stored as fields are checked as their ordered words.
        let wide = self.widen_keys::<K::Bits>(&it, K::FIELDS, 0)?;
        let it = wide.as_ref().map_or(it, |(_, w)| *w);
        let counters = self.stream().alloc_zeros::<u64>(2)?;
        let c = self.ptr(&counters);
        if n > 0 {
            let p = self.policy();
            let check = Verify { items: &it, mode: words_mode::<K>(order), descents: c, sum: c + 8 };
            self.launch(&check, Shape::covering(n, p.elementwise_threads, p.check_max_blocks))?;
        }
        let host = self.stream().clone_dtoh(&counters)?;
        Ok(Check { descents: host[0] & 0xffff_ffff, fingerprint: host[1] })
    }

    /// [`Gpu::check`] of keys wider than a word, on the CPU: descents by
    /// `key_cmp`, the fingerprint of each key's ordered words and its
    /// value's bits (as the GPU's, but not equal to it).
    fn check_wide<K: SortKey, V: Payload>(
        &self,
        keys: &impl DevicePtr<K>,
        vals: Option<&CudaSlice<V>>,
        order: Order,
    ) -> Result<Check> {
        self.check_context(keys, "keys")?;
        let hk = self.stream().clone_dtoh(keys)?;
        let hv: Vec<u64> = match vals {
            Some(v) => {
                super::same_len(hk.len(), v.len())?;
                self.check_context(v, "values")?;
                let vb = val_bytes::<V>();
                let view = v.as_view();
                // SAFETY: payloads are plain 4- or 8-byte values: their bytes.
                let bytes = unsafe { view.transmute::<u8>(v.len() * vb) }.expect("a payload's bytes");
                let bytes = self.stream().clone_dtoh(&bytes)?;
                bytes.chunks(vb).map(|c| c.iter().rev().fold(0, |a, &b| a << 8 | b as u64)).collect()
            }
            None => vec![0; hk.len()],
        };
        let descents = hk.windows(2).filter(|w| out_of_order(&w[0], &w[1], order)).count() as u64;
        let fingerprint = hk.iter().zip(&hv).fold(0u64, |acc, (k, &v)| {
            let bits = k.to_bits();
            let key = (0..K::Bits::WORDS).fold(0, |h, j| mix64(h ^ bits.word(j)));
            acc.wrapping_add(mix64(key ^ mix64(v)))
        });
        Ok(Check { descents, fingerprint })
    }

    /// Whether `keys` is sorted in `order`, checked on the GPU.
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys = gpu.stream().clone_htod(&[1u32, 3, 2])?;
    /// assert!(!gpu.is_sorted(&keys, warpsort::Order::Ascending)?);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn is_sorted<K: SortKey>(&self, keys: &impl DevicePtr<K>, order: Order) -> Result<bool> {
        Ok(self.check::<K, u32>(keys, None, order)?.descents == 0)
    }

    /// The merge sort's order scan alone over unsigned keys (for the tests:
    /// each step against its CPU reference): the result words of
    /// `warpsort_kernels::config::order_scan`.
    #[doc(hidden)]
    pub fn scan_order<B: Bits>(&self, keys: &impl DevicePtr<B>) -> Result<[u64; order_scan::WORDS]> {
        let n = keys.len();
        let kind = ItemKind::new(std::mem::size_of::<B>(), 0);
        let words = self.stream().alloc_zeros::<u64>(order_scan::WORDS)?;
        let (k, _k) = self.addr(keys, "keys")?;
        let scan = PresortedPlan::new(kind, n, 0, self.policy());
        self.scan_words(&Items::new(k, 0, n, kind), &scan, self.ptr(&words), View::IDENTITY, || Ok(()))
    }

    /// Counts, fingerprint and descents inside segments only: like
    /// [`Gpu::check`], but a descent across a segment boundary does not count.
    /// Runs on the GPU (warp votes and reductions); offsets are checked as
    /// [`Gpu::sort_segments_by_offsets`] checks them.
    ///
    /// ```no_run
    /// use warpsort::{Order, Segments};
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[3u32, 1, 9, 8, 7])?;
    /// let offsets = gpu.stream().clone_htod(&[0u32, 2, 5])?;
    /// let before = gpu.check_segments::<u32, u32>(&keys, None, Segments::Offsets(&offsets), Order::Ascending)?;
    /// gpu.sort_segments_by_offsets(&mut keys, &offsets, Order::Ascending)?;
    /// let after = gpu.check_segments::<u32, u32>(&keys, None, Segments::Offsets(&offsets), Order::Ascending)?;
    /// assert!(after.confirms(&before));
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn check_segments<K: SortKey, V: Payload>(
        &self,
        keys: &impl DevicePtr<K>,
        vals: Option<&CudaSlice<V>>,
        segments: Segments<'_>,
        order: Order,
    ) -> Result<Check> {
        let n = keys.len();
        let (k, _k) = self.addr(keys, "keys")?;
        let (off, count, row) = match segments {
            Segments::Rows(0) => return Err(Error::BadSegment { len: 0, max: usize::MAX }),
            Segments::Rows(len) => (0, n.div_ceil(len), len),
            Segments::Offsets(o) => {
                if o.is_empty() {
                    return Err(Error::BadOffsets {
                        problem: "the offsets array is empty (no segments at all is [0])".into(),
                    });
                }
                if n > u32::MAX as usize {
                    return Err(Error::TooLong { len: n, max: u32::MAX as usize });
                }
                let (p, _o) = self.addr(o, "segment offsets")?;
                self.with_scratch(None, OffsetsPlan::counters_only(), |c| {
                    self.count_offsets(p, o.len() - 1, n, false, c, None, || Ok(()))
                })?;
                (p, o.len(), 0)
            }
        };
        if super::wide::<K>().is_some() {
            // On the CPU, as `check_wide`: the descents at segment starts.
            let all = self.check::<K, V>(keys, vals, order)?;
            let hk = self.stream().clone_dtoh(keys)?;
            let mut starts: Vec<usize> = match segments {
                Segments::Rows(len) => (len..n).step_by(len).collect(),
                Segments::Offsets(o) => self.stream().clone_dtoh(o)?.iter().map(|&b| b as usize).collect(),
            };
            starts.dedup();
            let across = starts.iter().filter(|&&b| b > 0 && b < n && out_of_order(&hk[b - 1], &hk[b], order)).count();
            return Ok(Check { descents: all.descents - across as u64, ..all });
        }
        let across = self.stream().alloc_zeros::<u32>(1)?;
        if n > 1 && count > 1 {
            // Keys stored as fields are checked as their ordered words.
            let it = items::<K>(k, 0, 0, n);
            let wide = self.widen_keys::<K::Bits>(&it, K::FIELDS, 0)?;
            let keys = wide.as_ref().map_or(k, |(_, w)| w.keys);
            let word = it.kind.keys_only();
            let p = self.policy();
            let boundaries = SegmentBoundaries {
                word: if word == ItemKind::U32 { ItemKind::U32 } else { ItemKind::U64 },
                keys,
                n,
                offsets: off,
                count,
                row,
                mode: words_mode::<K>(order),
                across: self.ptr(&across),
            };
            self.launch(&boundaries, Shape::covering(count, p.elementwise_threads, p.check_max_blocks))?;
        }
        let all = self.check::<K, V>(keys, vals, order)?;
        let across = self.stream().clone_dtoh(&across)?[0] as u64;
        Ok(Check { descents: all.descents.wrapping_sub(across) & 0xffff_ffff, ..all })
    }

    /// Whether every segment of `keys` is sorted in `order`, checked on the GPU.
    ///
    /// ```no_run
    /// use warpsort::{Order, Segments};
    /// let gpu = warpsort::Gpu::new()?;
    /// let keys = gpu.stream().clone_htod(&[1u32, 3, 0, 2])?;
    /// assert!(gpu.is_sorted_segments(&keys, Segments::Rows(2), Order::Ascending)?);
    /// assert!(!gpu.is_sorted(&keys, Order::Ascending)?);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn is_sorted_segments<K: SortKey>(
        &self,
        keys: &impl DevicePtr<K>,
        segments: Segments<'_>,
        order: Order,
    ) -> Result<bool> {
        let none = None;
        Ok(self.check_segments::<K, u32>(keys, none, segments, order)?.descents == 0)
    }
}

/// How the check maps `K`'s device words in `order`: keys stored as fields
/// arrive encoded (ascending), the rest as their own bits.
fn words_mode<K: SortKey>(order: Order) -> u32 {
    if K::FIELDS.is_some() { order.mode() } else { K::MODE | order.mode() }
}

/// Whether `a` then `b` is a descent in `order`.
fn out_of_order<K: SortKey>(a: &K, b: &K, order: Order) -> bool {
    match order {
        Order::Ascending => a.key_cmp(b).is_gt(),
        Order::Descending => a.key_cmp(b).is_lt(),
    }
}
