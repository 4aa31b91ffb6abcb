//! Merging sorted runs of any lengths, laid one after another, into one run
//! (the distributed sort's last local step: one run from each GPU): rounds
//! of two-run merges, neighbours paired in order so that ties keep the
//! runs' order (a stable merge), each a merge-path partition and a block
//! merge of one pair split where the second run starts; or, batched, each
//! round one partition and one block merge over all its pairs, which a
//! table of the round's pairs describes (`config::pair_table`).

use std::ops::Range;

use super::{Launch, Launches};
use crate::launch::{Family, ItemKind, KernelId, Shape};
use crate::options::{MergeKernel, MergeSortConfig};
use crate::policy::Policy;
use warpsort_kernels::config::{merge_pass_smem_slots, pair_table};

/// One step of a round: runs `[at, at + a)` and `[at + a, at + a + b)`
/// merged into the same place of the round's destination, or (`b == 0`) a
/// run without a partner copied there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunStep {
    pub at: usize,
    pub a: usize,
    pub b: usize,
}

impl RunStep {
    /// Items the step writes.
    pub fn len(&self) -> usize {
        self.a + self.b
    }

    /// Whether it merges (two non-empty runs) rather than copies.
    pub fn merges(&self) -> bool {
        self.a > 0 && self.b > 0
    }
}

/// Every decision of merging runs: the rounds, the merge kernel and its
/// shapes, the partition slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MergeRunsPlan {
    pub kind: ItemKind,
    /// Runs merged.
    pub runs: usize,
    pub rounds: Vec<Vec<RunStep>>,
    /// Outputs per thread, threads per block, outputs per block (window).
    pub outputs: u32,
    pub threads: u32,
    pub window: usize,
    pub smem: u32,
    pub partition_threads: u32,
    /// Each round one partition and one block merge over all its merges, by
    /// the round's table ([`MergeRunsPlan::round_table`]), rather than two
    /// launches a step: a round of many short merges fills the GPU at once.
    pub batched: bool,
    /// Bytes of the partition slots (one `u64` per window of the largest
    /// merge, and one more); a batched plan's: the rounds' tables, then one
    /// slot per window of the round of most windows, and one more.
    pub parts_bytes: usize,
}

impl MergeRunsPlan {
    /// The plan for runs of `lens` items of `kind`, in order, a round a
    /// launch ([`MergeRunsPlan::batched`]): a merge of runs all in place
    /// before it starts.
    pub fn batched(kind: ItemKind, lens: &[usize], p: &Policy) -> Self {
        let mut plan = Self::new(kind, lens, p);
        plan.batched = true;
        let windows = (0..plan.rounds.len()).map(|r| plan.round_windows(r)).max().unwrap_or(0);
        plan.parts_bytes = plan.slots_at() + (windows + 1) * 8;
        plan
    }

    /// The plan for runs of `lens` items of `kind`, in order, a step at a
    /// time (the steps of a round may be queued as their runs arrive).
    pub fn new(kind: ItemKind, lens: &[usize], p: &Policy) -> Self {
        let n: usize = lens.iter().sum();
        let cfg = MergeSortConfig { merge: MergeKernel::Block, ..Default::default() };
        let r = cfg.resolve(kind, n, p);
        let window = r.window();
        let bytes = kind.item_bytes() as u32;
        let mut rounds = Vec::new();
        let mut runs: Vec<usize> = lens.to_vec();
        while runs.len() > 1 {
            let mut at = 0;
            let mut round = Vec::new();
            for pair in runs.chunks(2) {
                let step = RunStep { at, a: pair[0], b: pair.get(1).copied().unwrap_or(0) };
                at += step.len();
                round.push(step);
            }
            runs = round.iter().map(RunStep::len).collect();
            rounds.push(round);
        }
        let largest = rounds.iter().flatten().filter(|s| s.merges()).map(RunStep::len).max().unwrap_or(0);
        MergeRunsPlan {
            kind,
            runs: lens.len(),
            rounds,
            outputs: r.outputs,
            threads: r.threads,
            window,
            smem: merge_pass_smem_slots(window as u32, r.outputs, bytes) * bytes,
            partition_threads: p.partition_threads,
            batched: false,
            parts_bytes: (largest.div_ceil(window) + 1) * 8,
        }
    }

    /// Windows of `step`'s merge (the last one short).
    fn windows(&self, step: &RunStep) -> usize {
        step.len().div_ceil(self.window)
    }

    /// The steps of round `r` that merge (a batched round's pairs; its
    /// copies are copies, a copy engine's work faster than a merge's).
    fn round_steps(&self, r: usize) -> impl Iterator<Item = &RunStep> {
        self.rounds[r].iter().filter(|s| s.merges())
    }

    /// Windows of round `r`, its steps' together (each step whole windows).
    pub fn round_windows(&self, r: usize) -> usize {
        self.round_steps(r).map(|s| self.windows(s)).sum()
    }

    /// Round `r`'s table, as the partition and the block merge read it
    /// (`config::pair_table`): its windows, its pairs, then each pair's
    /// first window, where its runs begin and where its second run ends.
    /// Steps that copy a run are not in it.
    pub fn round_table(&self, r: usize) -> Vec<u64> {
        let mut t = vec![0; pair_table::FIRST];
        let mut windows = 0;
        for s in self.round_steps(r) {
            t.extend([windows, s.at, s.at + s.a, s.at + s.len()].map(|w| w as u64));
            windows += self.windows(s);
        }
        t[pair_table::WINDOWS] = windows as u64;
        t[pair_table::PAIRS] = ((t.len() - pair_table::FIRST) / pair_table::ENTRY) as u64;
        t
    }

    /// Where round `r`'s table lies in a batched plan's partition storage
    /// (bytes; the rounds' tables one after another, from 0).
    pub fn table_at(&self, r: usize) -> usize {
        (0..r).map(|q| pair_table::words(self.round_steps(q).count()) * 8).sum()
    }

    /// Where a batched plan's partition slots start (bytes): after the
    /// tables.
    pub fn slots_at(&self) -> usize {
        self.table_at(self.rounds.len())
    }

    /// Bytes of partition slots enough for the plan of any runs of up to
    /// `items` items in all: windows shrink with the items (smaller sorts
    /// merge with fewer threads a block), so a merge of fewer items may
    /// need more slots than one of `items`.
    pub fn parts_bytes_up_to(kind: ItemKind, items: usize, p: &Policy) -> usize {
        let cfg = MergeSortConfig { merge: MergeKernel::Block, ..Default::default() };
        let smallest = cfg.resolve(kind, 0, p).window();
        (items.div_ceil(smallest) + 1) * 8
    }

    /// The last input run step `step` of round `round` covers: it can run
    /// once runs `..=` that one are in place (a host sort's runs, sorted as
    /// they arrive, merge while the later ones copy up). Round `r`'s step
    /// `i` covers runs `i * 2^(r+1)..(i + 1) * 2^(r+1)`.
    pub fn last_run(&self, round: usize, step: usize) -> usize {
        ((step + 1) << (round + 1)).min(self.runs) - 1
    }

    /// Which of two buffers the merged run ends in when rounds alternate
    /// between them, the runs starting in the first (0) or the second (1).
    pub fn ends_in(&self) -> usize {
        self.rounds.len() % 2
    }

    /// The merge of one step: its windows' partition and block merge.
    pub fn shapes(&self, step: &RunStep) -> (Shape, Shape) {
        self.shapes_of(self.windows(step))
    }

    /// The merge of round `r` of a batched plan: the partition and block
    /// merge of all its windows.
    pub fn round_shapes(&self, r: usize) -> (Shape, Shape) {
        self.shapes_of(self.round_windows(r))
    }

    fn shapes_of(&self, windows: usize) -> (Shape, Shape) {
        let partition = Shape::covering(windows, self.partition_threads, i32::MAX as u32);
        (partition, self.merge_shape(windows))
    }

    /// A block merge of `windows` windows (a block each).
    pub fn merge_shape(&self, windows: usize) -> Shape {
        Shape::new(windows as u32, self.threads).with_smem(self.smem)
    }

    /// `step`'s windows cut into `k` ranges of whole windows (fewer where
    /// it has fewer windows), each with the items it writes (from the
    /// step's start): a merge launched a range at a time (a host sort's
    /// root, copied back as each range is merged).
    pub fn ranges(&self, step: &RunStep, k: usize) -> Vec<(Range<usize>, Range<usize>)> {
        let (n, windows) = (step.len(), self.windows(step));
        let k = k.clamp(1, windows.max(1));
        let cut = |i: usize| i * windows / k;
        (0..k).map(|i| (cut(i)..cut(i + 1), (cut(i) * self.window).min(n)..(cut(i + 1) * self.window).min(n))).collect()
    }

    pub fn merge_kernel(&self) -> KernelId {
        KernelId::with_width(Family::BlockMerge, self.outputs, self.kind)
    }

    /// The merge over a range of its windows ([`MergeRunsPlan::ranges`]).
    pub fn range_merge_kernel(&self) -> KernelId {
        KernelId::with_width(Family::BlockMergeFrom, self.outputs, self.kind)
    }
}

impl Launches for MergeRunsPlan {
    fn launches(&self, out: &mut Vec<Launch>) {
        let probe = RunStep { at: 0, a: 1, b: 1 };
        let (partition, merge) = self.shapes(&probe);
        out.push((KernelId::new(Family::MergePartition, self.kind), partition));
        out.push((self.merge_kernel(), merge));
        out.push((self.range_merge_kernel(), merge));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::HOPPER;

    #[test]
    fn neighbours_pair_in_order_until_one_run_is_left() {
        let plan = MergeRunsPlan::new(ItemKind::U32, &[5, 0, 7, 3, 2], &HOPPER);
        let steps = |r: usize| plan.rounds[r].iter().map(|s| (s.at, s.a, s.b)).collect::<Vec<_>>();
        assert_eq!(plan.rounds.len(), 3);
        assert_eq!(steps(0), [(0, 5, 0), (5, 7, 3), (15, 2, 0)]);
        assert_eq!(steps(1), [(0, 5, 10), (15, 2, 0)]);
        assert_eq!(steps(2), [(0, 15, 2)]);
        assert!(!plan.rounds[0][0].merges() && plan.rounds[0][1].merges());
        assert_eq!(plan.parts_bytes, (17usize.div_ceil(plan.window) + 1) * 8);
        let lasts = |r: usize| (0..plan.rounds[r].len()).map(|i| plan.last_run(r, i)).collect::<Vec<_>>();
        assert_eq!((lasts(0), lasts(1), lasts(2)), (vec![1, 3, 4], vec![3, 4], vec![4]));
    }

    /// Every step's inputs are complete once its last run is: the runs it
    /// covers, laid one after another, are exactly its two inputs.
    #[test]
    fn a_step_covers_the_runs_before_its_last() {
        for k in 1..20 {
            let lens: Vec<usize> = (0..k).map(|i| 10 + i).collect();
            let plan = MergeRunsPlan::new(ItemKind::U32, &lens, &HOPPER);
            let starts: Vec<usize> = lens.iter().scan(0, |a, l| Some(std::mem::replace(a, *a + l))).collect();
            for (r, round) in plan.rounds.iter().enumerate() {
                let mut first = 0;
                for (i, step) in round.iter().enumerate() {
                    let last = plan.last_run(r, i);
                    assert_eq!(step.at, starts[first], "k {k} round {r} step {i}");
                    assert_eq!(step.len(), lens[first..=last].iter().sum::<usize>(), "k {k} round {r} step {i}");
                    first = last + 1;
                }
                assert_eq!(first, k);
            }
        }
    }

    /// Storage for the partitions of merges of up to `items` items serves
    /// every smaller merge, across the size where blocks get fewer threads
    /// (the bucket merges of host sorts reuse one such buffer).
    #[test]
    fn partition_slots_serve_every_smaller_merge() {
        for kind in [ItemKind::U32, ItemKind::U32U32, ItemKind::U64U64] {
            for items in [1 << 20, (1 << 20) + 4096, 3 << 20] {
                let room = MergeRunsPlan::parts_bytes_up_to(kind, items, &HOPPER);
                for len in [items, items - 4096, 1 << 20, (1 << 20) - 1, 1000] {
                    let lens = [len / 3, len - len / 3];
                    let need = MergeRunsPlan::new(kind, &lens, &HOPPER).parts_bytes;
                    assert!(need <= room, "{kind:?}: {len} items need {need} bytes, {items} reserve {room}");
                }
            }
        }
        // What the bucket merges reserved before: too little past 2^20.
        let items = (1 << 20) + 4096;
        let old = MergeRunsPlan::new(ItemKind::U32, &[items / 2, items - items / 2], &HOPPER).parts_bytes;
        assert!(MergeRunsPlan::new(ItemKind::U32, &[1 << 19, 1 << 19], &HOPPER).parts_bytes > old);
    }

    /// The root's ranges cover its windows and its items once each, in
    /// order, none empty, whatever the count asked for.
    #[test]
    fn the_root_ranges_cover_the_last_merge_once() {
        for kind in [ItemKind::U32, ItemKind::U64U32] {
            for lens in
                [vec![1, 1], vec![5, 0, 7, 3, 2], vec![1 << 20, 3 << 18, 12345, 1 << 19], vec![6 << 20, 2 << 20]]
            {
                let plan = MergeRunsPlan::new(kind, &lens, &HOPPER);
                let n: usize = lens.iter().sum();
                let root = plan.rounds.last().unwrap()[0];
                assert_eq!((root.at, root.len()), (0, n));
                for k in [1, 3, 8, 1 << 20] {
                    let ranges = plan.ranges(&root, k);
                    let windows = n.div_ceil(plan.window);
                    assert_eq!(ranges.len(), k.min(windows), "{kind:?} {lens:?} k {k}");
                    let (mut w, mut i) = (0, 0);
                    for (tiles, items) in &ranges {
                        assert!(!tiles.is_empty() && !items.is_empty());
                        assert_eq!((tiles.start, items.start), (w, i));
                        assert_eq!(items.start, tiles.start * plan.window);
                        (w, i) = (tiles.end, items.end);
                    }
                    assert_eq!((w, i), (windows, n), "{kind:?} {lens:?} k {k}");
                }
            }
        }
    }

    /// What the kernels do with a round's table (`merge_path::Pass::window`):
    /// the pair of window `w` is the last whose first window is not past it.
    fn window_of(t: &[u64], w: usize, window: usize) -> (usize, usize, usize, usize) {
        let pairs = t[pair_table::PAIRS] as usize;
        let entry = |i: usize, f: usize| t[pair_table::FIRST + pair_table::ENTRY * i + f] as usize;
        let i = (1..pairs).take_while(|&i| entry(i, 0) <= w).last().unwrap_or(0);
        (entry(i, 1) + (w - entry(i, 0)) * window, entry(i, 1), entry(i, 2), entry(i, 3))
    }

    /// A batched round's windows cover each of its merges' items once, each
    /// window inside its own step (its pair's runs the step's), none a
    /// copy's, and the tables and slots fit the plan's partition storage.
    #[test]
    fn a_batched_round_covers_its_steps_window_by_window() {
        for kind in [ItemKind::U32, ItemKind::U64U64] {
            let w = MergeRunsPlan::new(kind, &[1, 1], &HOPPER).window;
            for lens in [
                vec![5, 0, 7, 3, 2],
                vec![w, 1, w + 1, 2 * w - 1, 0, 0, 3 * w, 17],
                vec![1 << 19; 32],
                (0..32).map(|i| (i * 7919) % (3 * w)).collect(),
            ] {
                let plan = MergeRunsPlan::batched(kind, &lens, &HOPPER);
                let n: usize = lens.iter().sum();
                assert!(plan.batched);
                let mut tables = 0;
                for r in 0..plan.rounds.len() {
                    let t = plan.round_table(r);
                    assert_eq!(plan.table_at(r), tables * 8, "{kind:?} {lens:?} round {r}");
                    tables += t.len();
                    assert_eq!(t.len(), pair_table::words(t[pair_table::PAIRS] as usize));
                    let windows = t[pair_table::WINDOWS] as usize;
                    assert_eq!(windows, plan.round_windows(r));
                    let mut covered = vec![0u8; n];
                    for wi in 0..windows {
                        let (o, a, a_end, b_end) = window_of(&t, wi, plan.window);
                        let step = plan.rounds[r].iter().find(|s| s.at == a && s.merges()).unwrap();
                        assert_eq!((a_end, b_end), (step.at + step.a, step.at + step.len()));
                        assert!(o < b_end, "{kind:?} {lens:?} round {r} window {wi}");
                        covered[o..(o + plan.window).min(b_end)].iter_mut().for_each(|c| *c += 1);
                    }
                    for s in &plan.rounds[r] {
                        let want = u8::from(s.merges());
                        assert!(
                            covered[s.at..s.at + s.len()].iter().all(|&c| c == want),
                            "{kind:?} {lens:?} round {r}"
                        );
                    }
                }
                assert_eq!(plan.slots_at(), tables * 8);
                let most = (0..plan.rounds.len()).map(|r| plan.round_windows(r)).max().unwrap_or(0);
                assert_eq!(plan.parts_bytes, plan.slots_at() + (most + 1) * 8);
                assert_eq!(plan.rounds, MergeRunsPlan::new(kind, &lens, &HOPPER).rounds);
            }
        }
    }

    /// The merge of the runs the order scan finds (up to
    /// `ORDER_SCAN_DESCENTS + 1`) fits the partition storage of the merge
    /// sort it replaces, at every size the scan runs from.
    #[test]
    fn the_runs_of_a_scan_fit_the_sorts_partition_storage() {
        use crate::plan::merge_sort::MergeSortPlan;
        use warpsort_kernels::config::ORDER_SCAN_DESCENTS;
        for kind in [ItemKind::U32, ItemKind::U32U32, ItemKind::U64U64] {
            for n in [1 << 24, (1 << 24) + 12345, 1 << 26, 3 << 27] {
                let sort = MergeSortPlan::new(&MergeSortConfig::default(), kind, n, &HOPPER).unwrap();
                for runs in [2, 3, 8, 17, ORDER_SCAN_DESCENTS + 1] {
                    let mut lens = vec![n / runs; runs];
                    lens[0] += n % runs;
                    lens[runs / 2] -= 777;
                    lens[runs - 1] += 777;
                    let plan = MergeRunsPlan::batched(kind, &lens, &HOPPER);
                    assert!(plan.parts_bytes <= sort.regions.parts_bytes, "{kind:?} n {n} runs {runs}");
                }
            }
        }
    }

    #[test]
    fn one_run_needs_no_round() {
        assert!(MergeRunsPlan::new(ItemKind::U64U32, &[10], &HOPPER).rounds.is_empty());
        assert!(MergeRunsPlan::new(ItemKind::U64U32, &[], &HOPPER).rounds.is_empty());
    }
}
