//! The presorted suite: u32 keys already in order, reversed, made of a few
//! ascending runs, or sorted but for one swap, at 2^24, 2^26 and 2^28,
//! beside uniform keys, with and without the merge sort's scan of the
//! input's order, and beside CUB.

use warpsort::{Order, Presorted, SortOptions};
use warpsort_testkit::data::{Dist, sorted_runs};

use crate::bench::{Bench, Result, input, progress};

/// The suite's inputs: a name and how it is made from uniform keys.
const CASES: [(&str, Option<Dist>, usize); 6] = [
    ("uniform", Some(Dist::Uniform), 0),
    ("sorted", Some(Dist::Sorted), 0),
    ("reverse", Some(Dist::Reverse), 0),
    ("runs8", None, 8),
    ("runs32", None, 32),
    ("one-swap", None, 1),
];

pub fn presorted(b: &mut Bench) -> Result<()> {
    let sizes: &[usize] = if b.opts.quick { &[1 << 22, 1 << 24] } else { &[1 << 24, 1 << 26, 1 << 28] };
    for &n in sizes {
        for (case, dist, runs) in CASES {
            progress(&format!("presorted input: {case}, n = 2^{}", n.trailing_zeros()));
            let keys_in: Vec<u32> = match dist {
                Some(d) => input(d, n),
                None => {
                    let mut v: Vec<u32> = input(Dist::Uniform, n);
                    if runs == 1 {
                        v.sort_unstable();
                        v.swap(n / 3, 2 * n / 3);
                    } else {
                        sorted_runs(&mut v, runs, Order::Ascending, n as u64);
                    }
                    v
                }
            };
            for pairs in [false, true] {
                let scan = SortOptions::default();
                b.sort_row_case::<u32, u32>("presorted", "warpsort".into(), scan, case, pairs, &keys_in)?;
                let never = SortOptions { presorted: Presorted::Never, ..scan };
                b.sort_row_case::<u32, u32>("presorted", "warpsort-noscan".into(), never, case, pairs, &keys_in)?;
                b.cub_rows_case(
                    "presorted",
                    case,
                    crate::bench::cub::CubMode::keys_or_pairs::<u32>(pairs),
                    &keys_in,
                    None,
                    "",
                );
            }
        }
    }
    Ok(())
}
