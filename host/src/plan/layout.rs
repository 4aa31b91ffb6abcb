//! Temporary storage as named regions of one allocation.

use crate::launch::ItemKind;

/// Regions laid out one after another, each starting 256-byte aligned.
///
/// ```ignore
/// let mut l = Layout::default();
/// let (a, b) = (l.region(100), l.region(8));
/// assert_eq!((a, b, l.bytes()), (0, 256, 264));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    end: usize,
    last: usize,
}

impl Layout {
    /// The offset of a new region of `bytes`.
    pub fn region(&mut self, bytes: usize) -> usize {
        let at = self.end.next_multiple_of(256);
        self.last = at + bytes;
        self.end = at + bytes;
        at
    }

    /// Regions for `n` items of `kind`: their keys, then their payloads
    /// (empty for key-only items).
    pub fn items(&mut self, n: usize, kind: ItemKind) -> (usize, usize) {
        (self.region(n * kind.key_bytes()), self.region(n * kind.val_bytes()))
    }

    /// Bytes from the start of the storage to the end of the last region.
    pub fn bytes(&self) -> usize {
        self.last
    }

    /// Where the next region would start.
    pub fn next(&self) -> usize {
        self.end.next_multiple_of(256)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_aligned_and_follow_each_other() {
        let mut l = Layout::default();
        assert_eq!((l.region(100), l.region(8), l.bytes()), (0, 256, 264));
        assert_eq!(l.next(), 512);
        assert_eq!((l.region(0), l.region(1), l.bytes()), (512, 512, 513));
        assert_eq!(Layout::default().bytes(), 0);
    }
}
