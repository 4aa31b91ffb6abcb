//! What the emulator's tests share: a pointer the emulated threads may all
//! hold, and random words.
#![allow(dead_code, reason = "each test binary uses its own part")]

use warpsort_kernels::ordered::mix64;

/// A pointer the emulated threads share (each kernel's own contract orders
/// their accesses).
#[derive(Clone, Copy)]
pub struct Ptr<T>(pub *mut T);
// SAFETY: the kernels' own contracts order the accesses.
unsafe impl<T> Sync for Ptr<T> {}
// SAFETY: as above.
unsafe impl<T> Send for Ptr<T> {}

impl<T> Ptr<T> {
    pub fn of(v: &[T]) -> Self {
        Ptr(v.as_ptr().cast_mut())
    }
    pub fn get(self) -> *mut T {
        self.0
    }
}

/// `len` words of splitmix64 from `seed` (`ordered::mix64`, its finaliser,
/// over the generator's steps).
pub fn random(len: usize, seed: u64) -> Vec<u64> {
    (1..=len as u64).map(|i| mix64(seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))).collect()
}
