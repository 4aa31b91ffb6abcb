//! Key types with orders written in Rust, for warpsort's `custom_key`
//! example: built for the GPU by `warpsort-build` (this crate as is) and for
//! the host (feature `host`, which adds what device buffers need).
#![no_std]

use warpsort_key::Order;

/// A trade, sorted by venue ascending, then price descending (IEEE total
/// order: NaN above infinity), then id ascending: a derived order.
#[derive(Clone, Copy, Debug, PartialEq, Order)]
#[repr(C)]
pub struct Trade {
    /// Where it traded.
    pub venue: u32,
    /// At what price.
    #[order(desc)]
    pub price: f32,
    /// Its id.
    pub id: u32,
}

/// Rock, paper, scissors: `hand % 3` beats the hand before it. Not a strict
/// weak order (it has cycles): the sorts give no particular order but must
/// keep every item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(C)]
pub struct Hand {
    /// Rock, paper or scissors (`% 3`).
    pub hand: u32,
    /// Which item this is.
    pub tag: u32,
}

impl Order for Hand {
    fn less(&self, other: &Self) -> bool {
        (other.hand % 3 + 3 - self.hand % 3) % 3 == 1
    }
}

#[cfg(feature = "host")]
mod host {
    // SAFETY: plain `#[repr(C)]` data of 4-byte fields, no padding.
    unsafe impl warpsort::cudarc::driver::DeviceRepr for super::Trade {}
    // SAFETY: as above.
    unsafe impl warpsort::cudarc::driver::DeviceRepr for super::Hand {}
}
