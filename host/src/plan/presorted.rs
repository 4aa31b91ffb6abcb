//! Input already in order: whether a merge sort scans its input first, the
//! scan's launch, and what its result makes of the sort (nothing, one
//! reversal, a merge of a few runs, or the full sort).

use warpsort_kernels::config::{ORDER_SCAN_DESCENTS, ORDER_SCAN_WARP_ITEMS, REVERSE_SWAPS, WARP_SIZE, order_scan};

use super::{Launch, Launches};
use crate::launch::{Family, ItemKind, KernelId, Shape};
use crate::policy::Policy;

/// The scan of a merge sort's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PresortedPlan {
    /// The items' kind (the scan reads their keys).
    pub kind: ItemKind,
    /// The order scan's launch.
    pub scan: Shape,
    /// The reversal's launch (each of keys and payloads).
    pub reverse: Shape,
    /// Where the scan's result words are, from the start of the sort's
    /// temporary storage.
    pub words_at: usize,
}

impl PresortedPlan {
    /// Bytes of the scan's result words.
    pub const WORDS_BYTES: usize = order_scan::WORDS * 8;

    /// The scan of `n` items of `kind`, its words at `words_at`.
    pub fn new(kind: ItemKind, n: usize, words_at: usize, p: &Policy) -> Self {
        let warps = n.div_ceil(ORDER_SCAN_WARP_ITEMS as usize);
        PresortedPlan {
            kind,
            scan: Shape::covering(warps * WARP_SIZE as usize, p.order_scan_threads, p.order_scan_max_blocks),
            reverse: p.elementwise((n / 2).div_ceil(REVERSE_SWAPS as usize)),
            words_at,
        }
    }
}

impl Launches for PresortedPlan {
    fn launches(&self, out: &mut Vec<Launch>) {
        out.push((KernelId::new(Family::OrderScan, self.kind.keys_only()), self.scan));
        out.push((KernelId::new(Family::Reverse, self.kind.keys_only()), self.reverse));
    }
}

/// What the scan found the input to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Every key at most the next: nothing to do.
    Sorted,
    /// Every key at least the next, and reversing keeps the order the sort
    /// promises: one reversal.
    Reversed,
    /// Ascending runs of these lengths (2 to `ORDER_SCAN_DESCENTS + 1` of
    /// them): a merge of the runs.
    Runs(Vec<usize>),
    /// Anything else: the full sort.
    Unsorted,
}

impl Found {
    /// Reads the scan's result `words` over `n` items. `ties_in_order`: equal
    /// keys must keep their input order (ranked items, the stable sorts), so
    /// a descending input with equal neighbours is not reversed.
    pub fn from_words(words: &[u64; order_scan::WORDS], n: usize, ties_in_order: bool) -> Found {
        let flags = words[order_scan::FLAGS] as u32;
        let descents = words[order_scan::COUNT] as usize;
        if descents == 0 {
            return Found::Sorted;
        }
        let equal_ties = ties_in_order && flags & order_scan::EQUAL != 0;
        if flags & order_scan::ASCENT == 0 && !equal_ties {
            return Found::Reversed;
        }
        if descents > ORDER_SCAN_DESCENTS {
            return Found::Unsorted;
        }
        let mut starts: Vec<usize> =
            words[order_scan::STARTS..order_scan::STARTS + descents].iter().map(|&s| s as usize).collect();
        starts.sort_unstable();
        starts.push(n);
        let mut at = 0;
        Found::Runs(
            starts
                .into_iter()
                .map(|s| {
                    let len = s - at;
                    at = s;
                    len
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(keys: &[u32], ties_in_order: bool) -> Found {
        Found::from_words(&order_scan::reference(keys), keys.len(), ties_in_order)
    }

    #[test]
    fn sorted_reversed_runs_or_unsorted() {
        assert_eq!(found(&[], false), Found::Sorted);
        assert_eq!(found(&[1, 1, 2, 2, 9], true), Found::Sorted);
        assert_eq!(found(&[5, 5, 5], true), Found::Sorted);
        assert_eq!(found(&[9, 4, 1], true), Found::Reversed);
        assert_eq!(found(&[9, 4, 4, 1], false), Found::Reversed);
        // Reversing equal neighbours would swap their order: merged as runs.
        assert_eq!(found(&[9, 4, 4, 1], true), Found::Runs(vec![1, 2, 1]));
        assert_eq!(found(&[1, 5, 2, 3, 0], false), Found::Runs(vec![2, 2, 1]));
        let many: Vec<u32> = (0..100).map(|i| (i % 3) as u32).collect();
        assert_eq!(found(&many, false), Found::Unsorted);
        let runs: Vec<u32> = (0..(ORDER_SCAN_DESCENTS as u32 + 1) * 4).map(|i| i % 4).collect();
        assert_eq!(found(&runs, false), Found::Runs(vec![4; ORDER_SCAN_DESCENTS + 1]));
    }

    /// Words that let the sample sort's first sampling run behind the scan
    /// (`order_scan::unordered`) always mean the full sort, whatever ties
    /// must keep; words that do not may still mean it (reversed ties that
    /// must keep their order: sampled again).
    #[test]
    fn words_proven_unordered_mean_the_full_sort() {
        let listed = ORDER_SCAN_DESCENTS as u64;
        let words = |flags: u64, count: u64| {
            let mut w = [0u64; order_scan::WORDS];
            (w[order_scan::FLAGS], w[order_scan::COUNT]) = (flags, count);
            for (i, s) in w[order_scan::STARTS..].iter_mut().enumerate().take(count.min(listed) as usize) {
                *s = i as u64 + 1;
            }
            w
        };
        for flags in 0..8u64 {
            for count in [0, 1, listed, listed + 1, 1000] {
                for ties_in_order in [false, true] {
                    if order_scan::unordered(flags, count) {
                        let found = Found::from_words(&words(flags, count), 10_000, ties_in_order);
                        assert_eq!(found, Found::Unsorted, "flags {flags} count {count}");
                    }
                }
            }
        }
        // Descending with ties a stable sort keeps: not proven, yet unsorted.
        let (d, e) = (order_scan::DESCENT as u64, order_scan::EQUAL as u64);
        assert!(!order_scan::unordered(d | e, listed + 1));
        assert_eq!(Found::from_words(&words(d | e, listed + 1), 10_000, true), Found::Unsorted);
    }

    #[test]
    fn runs_come_back_in_order_whatever_order_they_were_listed_in() {
        let mut w = order_scan::reference(&[3u32, 4, 1, 2, 0, 7]);
        w.swap(order_scan::STARTS, order_scan::STARTS + 1);
        assert_eq!(Found::from_words(&w, 6, false), Found::Runs(vec![2, 2, 2]));
    }
}
