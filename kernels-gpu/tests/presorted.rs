//! The order scan (`presorted::order_scan`) run on the CPU under the
//! emulator (`arch::launch`), against a reference: every pair's order where
//! the input has few descents or no ascent, and past that "unordered" (an
//! ascent and more descents than listed: warps stop once they know).
#![cfg(feature = "emulate")]

mod common;

use common::{Ptr, random};
use warpsort_kernels::arch::launch;
use warpsort_kernels::config::{ORDER_SCAN_DESCENTS, ORDER_SCAN_WARP_ITEMS, order_scan};
use warpsort_kernels::encode::Plain;
use warpsort_kernels::presorted::order_scan as scan;

type Words = [u64; order_scan::WORDS];

/// The scan's words for `keys` from `blocks` emulated blocks of 64 threads.
fn run(keys: &[u32], blocks: u32) -> Words {
    let out = vec![0u64; order_scan::WORDS];
    let (k, o, n) = (Ptr::of(keys), Ptr::of(&out), keys.len() as u64);
    // SAFETY: `keys` holds `n` keys; `out` holds the zeroed words.
    launch(blocks, 64, 0, || unsafe { scan(k.get().cast_const(), n, o.get(), Plain) });
    out.try_into().unwrap()
}

/// The scan's words against the reference: every pair's flags and, while
/// within the list, every descent; past the list with no ascent, every flag;
/// past the list with an ascent, only "unordered" (warps stop once they
/// know).
fn check(keys: &[u32], blocks: u32, what: &str) {
    let got = run(keys, blocks);
    let (f, c, s) = (order_scan::FLAGS, order_scan::COUNT, order_scan::STARTS);
    let listed = ORDER_SCAN_DESCENTS as u64;
    let want = order_scan::reference(keys);
    let (flags, descents) = (want[f], want[c]);
    if descents <= listed {
        assert_eq!((got[f], got[c]), (flags, descents), "{what}: flags and descents");
        let mut listed_starts = got[s..s + descents as usize].to_vec();
        listed_starts.sort_unstable();
        assert_eq!(listed_starts, want[s..s + descents as usize], "{what}: run starts");
    } else if flags & order_scan::ASCENT as u64 == 0 {
        assert_eq!(got[f], flags, "{what}: no ascent: every flag seen");
        assert!(got[c] > listed && got[c] <= descents, "{what}: descents {}", got[c]);
    } else {
        assert!(got[c] > listed && got[c] <= descents, "{what}: descents {} of {descents}", got[c]);
        assert!(got[f] & order_scan::ASCENT as u64 != 0 && got[f] & !flags == 0, "{what}: flags {}", got[f]);
    }
}

/// Sizes around the warps' chunks.
fn sizes() -> Vec<usize> {
    let w = ORDER_SCAN_WARP_ITEMS as usize;
    vec![0, 1, 2, 31, 32, 33, 255, 256, 257, w - 1, w, w + 1, 3 * w + 17, 8 * w, 8 * w + 5]
}

#[test]
fn unordered_input_is_found_unordered() {
    for n in sizes() {
        let keys: Vec<u32> = random(n, n as u64).iter().map(|&x| x as u32).collect();
        for blocks in [1, 3] {
            check(&keys, blocks, &format!("uniform n={n} blocks={blocks}"));
        }
    }
}

#[test]
fn ordered_input_is_scanned_whole() {
    for n in sizes() {
        let sorted: Vec<u32> = (0..n as u32).map(|i| i / 3).collect();
        let reversed: Vec<u32> = sorted.iter().rev().copied().collect();
        // Few ascending runs.
        let runs: Vec<u32> = (0..n as u32).map(|i| i % (n as u32 / 7).max(2)).collect();
        // One value nine keys in ten.
        let dominating: Vec<u32> =
            random(n, 7).iter().map(|&x| if x % 10 == 0 { (x >> 32) as u32 } else { 42 }).collect();
        for (keys, what) in [(sorted, "sorted"), (reversed, "reversed"), (runs, "runs"), (dominating, "dominating")] {
            for blocks in [1, 3] {
                check(&keys, blocks, &format!("{what} n={n} blocks={blocks}"));
            }
        }
    }
}
